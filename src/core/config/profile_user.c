/* profile_user: agent profiles defined in the configuration ([profile.NAME] tables, documented
 * in doc/agentjail.toml.5.scd). Pure: a TOML table in, a checked struct profile out.
 *
 * A table named like a built-in extends it field by field: a list adds its entries after the
 * built-in's (duplicates dropped), a single value replaces the built-in's; the two argv forms
 * `resume_id` and `resume_last` are replaced whole (they are one command line each). */
#include "core/plan/profile.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/netrules.h"
#include "core/plan/suggest.h"
#include "core/config/toml.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

/* What each string of a key must look like. */
enum check {
	C_TEXT,      /* printable text (shown to the user) */
	C_EXE,       /* an executable name: no '/', not agentjail */
	C_FLAG,      /* an option: starts with '-' */
	C_WORD,      /* a subcommand: a word not starting with '-' */
	C_ARG,       /* any non-empty argument */
	C_PATH,      /* "~/..." or absolute, no "..", not the whole home or / */
	C_RW,        /* C_PATH in the home ("~/..."), not holding agentjail's own directories */
	C_INSIDE,    /* C_PATH, and inside one of the profile's rw paths */
	C_HIDE,      /* C_INSIDE, a directory (ends in '/') */
	C_PRIVATE,   /* a directory in the home (starts "~/", ends '/'), not agentjail's own */
	C_VAR,       /* a variable name, not one agentjail refuses */
	C_ENV,       /* a variable name or "PREFIX*" */
	C_SETENV,    /* NAME=VALUE */
	C_DOMAIN,    /* an --allow-domain entry */
	C_RESUME_ID, /* an argv form holding "{id}" once */
	C_RESUME,    /* an argv form */
};

enum shape {
	S_STR,       /* a string ("" unsets an optional value) */
	S_LIST,      /* an array of strings, added to the built-in's */
	S_STR_LIST,  /* a string or an array of strings, added */
	S_FORM,      /* an array of strings replacing the built-in's */
};

struct key {
	const char *name;
	enum shape shape;
	enum check check;
	size_t off; /* in struct profile */
};

#define F(field) offsetof(struct profile, field)
static const struct key keys[] = {
	{"title", S_STR, C_TEXT, F(title)},
	{"command", S_STR_LIST, C_EXE, F(exe)},
	{"install", S_STR, C_TEXT, F(install)},
	{"skip_permission_flags", S_LIST, C_FLAG, F(skip_flags)},
	{"skip_permission_note", S_STR, C_TEXT, F(skip_note)},
	{"skip_after", S_LIST, C_WORD, F(skip_after)},
	{"skip_default_subcommand", S_STR, C_WORD, F(skip_default_sub)},
	{"no_skip_subcommands", S_LIST, C_WORD, F(no_skip_subs)},
	{"rw", S_LIST, C_RW, F(rw)},
	{"home_env", S_STR, C_VAR, F(home_env)},
	{"protect", S_LIST, C_INSIDE, F(protect)},
	{"instructions", S_LIST, C_INSIDE, F(instructions)},
	{"hide", S_LIST, C_HIDE, F(hide)},
	{"private", S_LIST, C_PRIVATE, F(private_dirs)},
	{"ro", S_LIST, C_PATH, F(ro)},
	{"env", S_LIST, C_ENV, F(env)},
	{"setenv", S_LIST, C_SETENV, F(setenv)},
	{"allow_domains", S_LIST, C_DOMAIN, F(domains)},
	{"session_id_flag", S_STR, C_FLAG, F(session_flag)},
	{"resume_id", S_FORM, C_RESUME_ID, F(resume_id)},
	{"resume_last", S_FORM, C_RESUME, F(resume_last)},
	{"subcommands", S_LIST, C_ARG, F(subcommands)},
};
#undef F
#define NKEYS (sizeof keys / sizeof *keys)

/* agentjail's own commands: a profile of that name could never be run as `agentjail NAME` */
static const char *const reserved[] = {"run",	  "verify", "doctor", "profiles", "shim",
				       "sessions", "show",  "rm",     "log",	  "resume",
				       "cache",	  "config", "trust",  "help",	  "version",
				       "init",	  "untrust", "agentjail", NULL};

/* A user profile owns everything it points to, except what it inherits from a built-in that
 * is not a string or a list (copy_rules: static). */
struct uprof {
	struct profile p;
	struct strv strs;          /* every owned scalar string */
	struct strv lists[NKEYS];  /* the owned lists, by key */
};

static const char *const **list_at(struct profile *p, const struct key *k)
{
	return (const char *const **)(void *)((char *)p + k->off);
}

static const char **str_at(struct profile *p, const struct key *k)
{
	return (const char **)(void *)((char *)p + k->off);
}

static const char *type_name(enum toml_type t)
{
	switch (t) {
	case TOML_TABLE: return "a table";
	case TOML_STRING: return "a string";
	case TOML_INT: return "an integer";
	case TOML_BOOL: return "a boolean";
	case TOML_ARRAY: return "an array";
	}
	return "a value";
}

/* err with path "FILE:LINE:COL" (toml_err_at, under a short name for the many checks below) */
__attribute__((format(printf, 5, 6))) static int at(struct err *e, const char *file, int line,
						     int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = toml_verr_at(e, file, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

static bool printable(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

static bool var_name(const char *s, size_t n)
{
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* never set or passed by a profile: what env_name_forbidden refuses, and agentjail's own */
static bool var_refused(const char *s, size_t n)
{
	_cleanup_free_ char *name = xstrndup(s, n);
	return env_name_forbidden(name) || !strncmp(name, "AGENTJAIL_", 10);
}

static bool has_dotdot(const char *p)
{
	for (const char *c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
			return true;
	return false;
}

/* Whether a "~/..." path is, holds or lies inside agentjail's configuration or state
 * directory at their default places (a jail able to write them could widen the next one). */
static bool own_dir(const char *p)
{
	static const char *const own[] = {"~/.config/agentjail/", "~/.local/state/agentjail/",
					  NULL};
	size_t n = strlen(p);
	for (size_t i = 0; own[i]; i++) {
		size_t m = strlen(own[i]);
		/* p is inside own (or own itself, with or without its '/') */
		if (!strncmp(p, own[i], n < m ? n : m) && (n >= m || p[n - 1] == '/' ||
							   own[i][n] == '/'))
			return true;
	}
	return false;
}

static bool inside_rw(const char *p, const struct profile *pr)
{
	for (size_t i = 0; pr->rw && pr->rw[i]; i++) {
		const char *r = pr->rw[i];
		size_t n = strlen(r);
		if (n && r[n - 1] == '/' ? !strncmp(p, r, n) && p[n]
					 : !strncmp(p, r, n) && (p[n] == '/' || !p[n]))
			return true;
	}
	return false;
}

/* Check one string of key k; 0 or -1 with e at v. */
static int check_one(const struct key *k, const struct toml_value *v, const char *file,
		     const struct profile *pr, struct err *e)
{
	const char *s = v->s;
	int l = v->line, c = v->col;
	if (!printable(s))
		return at(e, file, l, c, "`%s`: a control character in \"%s\"", k->name, s);
	if (!*s && k->check != C_TEXT)
		return at(e, file, l, c, "`%s`: an empty string", k->name);
	switch (k->check) {
	case C_TEXT:
		return 0;
	case C_EXE:
		if (strchr(s, '/') || !strcmp(s, ".") || !strcmp(s, "..") || s[0] == '-' ||
		    strchr(s, ' ') || !strcmp(s, "agentjail"))
			return at(e, file, l, c,
				  "`command`: \"%s\" is not an executable name (a name found on "
				  "PATH, without '/', not agentjail)",
				  s);
		return 0;
	case C_FLAG:
		if (s[0] != '-' || strchr(s, ' '))
			return at(e, file, l, c, "`%s`: \"%s\" is not an option (it must start "
				  "with '-' and hold no space)", k->name, s);
		return 0;
	case C_WORD:
		if (s[0] == '-' || strchr(s, ' '))
			return at(e, file, l, c, "`%s`: \"%s\" is not a subcommand (a word not "
				  "starting with '-')", k->name, s);
		return 0;
	case C_ARG:
	case C_RESUME:
		return 0;
	case C_PATH:
	case C_RW:
	case C_INSIDE:
	case C_HIDE:
	case C_PRIVATE: {
		if (strncmp(s, "~/", 2) && s[0] != '/')
			return at(e, file, l, c, "`%s`: \"%s\" must start with \"~/\" (in your "
				  "home) or '/'", k->name, s);
		if (has_dotdot(s))
			return at(e, file, l, c, "`%s`: \"%s\" holds a \"..\" component",
				  k->name, s);
		if (strspn(s + (s[0] == '~'), "/") == strlen(s + (s[0] == '~')))
			return at(e, file, l, c, "`%s`: \"%s\" is the whole %s; a profile names "
				  "its own directories", k->name, s, s[0] == '~' ? "home" : "tree");
		bool home = k->check == C_RW || k->check == C_PRIVATE;
		if (home && strncmp(s, "~/", 2))
			return at(e, file, l, c, "`%s`: \"%s\" must start with \"~/\": an agent "
				  "keeps its files in the home", k->name, s);
		if (home && own_dir(s))
			return at(e, file, l, c, "`%s`: \"%s\" would make agentjail's own "
				  "configuration or state writable in the jail", k->name, s);
		if (k->check == C_PRIVATE && s[strlen(s) - 1] != '/')
			return at(e, file, l, c, "`private`: \"%s\" must be a directory, written "
				  "with a trailing '/'", s);
		if (k->check != C_PATH && !home && !inside_rw(s, pr))
			return at(e, file, l, c, "`%s`: \"%s\" is not inside one of the profile's "
				  "`rw` paths", k->name, s);
		if (k->check == C_HIDE && s[strlen(s) - 1] != '/')
			return at(e, file, l, c, "`hide`: \"%s\" must be a directory, written with "
				  "a trailing '/'", s);
		return 0;
	}
	case C_VAR:
		if (!var_name(s, strlen(s)))
			return at(e, file, l, c, "`%s`: \"%s\" is not a variable name", k->name,
				  s);
		if (var_refused(s, strlen(s)))
			return at(e, file, l, c, "`%s`: agentjail never passes %s into a jail",
				  k->name, s);
		return 0;
	case C_ENV: {
		size_t n = strlen(s);
		bool pattern = s[n - 1] == '*';
		if (!var_name(s, n - pattern))
			return at(e, file, l, c, "`env`: \"%s\" is not a variable name or "
				  "\"PREFIX*\"", s);
		if (!pattern && var_refused(s, n))
			return at(e, file, l, c, "`env`: agentjail never passes %s into a jail",
				  s);
		return 0;
	}
	case C_SETENV: {
		const char *eq = strchr(s, '=');
		if (!eq || !var_name(s, (size_t)(eq - s)))
			return at(e, file, l, c, "`setenv`: \"%s\" is not NAME=VALUE", s);
		if (var_refused(s, (size_t)(eq - s)))
			return at(e, file, l, c, "`setenv`: agentjail never sets %.*s in a jail",
				  (int)(eq - s), s);
		return 0;
	}
	case C_DOMAIN: {
		struct netrule r;
		struct err ne = {0};
		if (netrule_parse(s, &r, &ne) < 0)
			return at(e, file, l, c, "`allow_domains`: \"%s\": %s", s, ne.what);
		netrule_free(&r);
		return 0;
	}
	case C_RESUME_ID:
		return 0; /* the whole form is checked by the caller */
	}
	return 0;
}

static const struct toml_value *key_value(const struct toml_value *tbl, const char *name,
					  size_t *idx)
{
	for (size_t i = 0; i < tbl->n; i++)
		if (!strcmp(tbl->keys[i], name)) {
			*idx = i;
			return &tbl->items[i];
		}
	return NULL;
}

/* Apply one key's value to the profile being built. */
static int apply_key(struct uprof *u, const struct key *k, const struct toml_value *v,
		     const char *file, struct err *e)
{
	struct profile *p = &u->p;
	bool str_ok = k->shape == S_STR || k->shape == S_STR_LIST;
	bool arr_ok = k->shape != S_STR;
	if (!((v->type == TOML_STRING && str_ok) || (v->type == TOML_ARRAY && arr_ok))) {
		const char *want = k->shape == S_STR	    ? "a string"
				   : k->shape == S_STR_LIST ? "a string or an array of strings"
							    : "an array of strings";
		return at(e, file, v->line, v->col, "`%s` must be %s, not %s", k->name, want,
			  type_name(v->type));
	}
	if (k->shape == S_STR) {
		/* "" unsets an optional value (a built-in's session flag, say) */
		bool unset = !*v->s && k->check != C_TEXT;
		if (!unset && check_one(k, v, file, p, e) < 0)
			return -1;
		if (unset) {
			*str_at(p, k) = NULL;
		} else {
			strv_push(&u->strs, v->s);
			*str_at(p, k) = u->strs.v[u->strs.n - 1];
		}
		return 0;
	}
	struct strv *l = &u->lists[k - keys];
	size_t n = v->type == TOML_STRING ? 1 : v->n;
	const struct toml_value *items = v->type == TOML_STRING ? v : v->items;
	if (k->shape == S_FORM) {
		strv_free(l);
		if (n == 0)
			return at(e, file, v->line, v->col, "`%s`: an empty command line", k->name);
	}
	size_t ids = 0;
	for (size_t i = 0; i < n; i++) {
		if (items[i].type != TOML_STRING)
			return at(e, file, items[i].line, items[i].col,
				  "`%s` must be an array of strings, not of %s", k->name,
				  type_name(items[i].type));
		if (check_one(k, &items[i], file, p, e) < 0)
			return -1;
		ids += !strcmp(items[i].s, "{id}");
		if (k->shape == S_FORM || !strv_contains(l, items[i].s))
			strv_push(l, items[i].s);
	}
	if (k->check == C_RESUME_ID && ids != 1)
		return at(e, file, v->line, v->col,
			  "`resume_id` must hold \"{id}\" once, where the session id goes (it "
			  "holds it %zu times)", ids);
	*list_at(p, k) = l->n ? (const char *const *)l->v : NULL;
	return 0;
}

static bool name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 32 || name[0] == '-' || name[0] == '_')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '-' || name[i] == '_'))
			return false;
	return true;
}

static void copy_list(struct strv *dst, const char *const *src)
{
	for (size_t i = 0; src && src[i]; i++)
		strv_push(dst, src[i]);
}

int profile_from_toml(const char *name, const struct toml_value *tbl, const char *file,
		      const struct profile *base, struct profile **out, struct err *e)
{
	*out = NULL;
	if (!name_ok(name))
		return at(e, file, tbl->line, tbl->col,
			  "[profile.%s]: a profile name is 1 to 32 of a-z, 0-9, '-', '_' (not "
			  "first)", name);
	for (size_t i = 0; reserved[i]; i++)
		if (!strcmp(name, reserved[i])) {
			at(e, file, tbl->line, tbl->col,
			   "[profile.%s]: `%s` is a command of agentjail, not a profile name", name,
			   name);
			err_hint(e, "name the profile otherwise (`agentjail %s` stays the command)",
				 name);
			return -1;
		}
	if (tbl->type != TOML_TABLE)
		return at(e, file, tbl->line, tbl->col, "`profile.%s` must be a table, not %s",
			  name, type_name(tbl->type));
	/* unknown keys first: a typo is reported as such, not as a missing `command` */
	const char *names[NKEYS + 1] = {NULL};
	for (size_t i = 0; i < NKEYS; i++)
		names[i] = keys[i].name;
	for (size_t i = 0; i < tbl->n; i++) {
		bool known = false;
		for (size_t k = 0; k < NKEYS; k++)
			known |= !strcmp(tbl->keys[i], keys[k].name);
		if (known)
			continue;
		at(e, file, tbl->key_line[i], tbl->key_col[i], "unknown key `%s` in [profile.%s]",
		   tbl->keys[i], name);
		const char *near = closest_word(tbl->keys[i], names);
		if (near)
			err_hint(e, "did you mean `%s`?", near);
		else
			err_hint(e, "`man 5 agentjail.toml` lists the keys of a profile");
		return -1;
	}

	struct uprof *u = xcalloc(1, sizeof *u);
	struct profile *p = &u->p;
	strv_push(&u->strs, name);
	p->name = u->strs.v[0];
	if (base) {
		/* start from the built-in: its lists copied (so the user's add to them), its
		 * strings and rules shared (static) */
		p->title = base->title;
		p->install = base->install;
		p->skip_note = base->skip_note;
		p->skip_default_sub = base->skip_default_sub;
		p->home_env = base->home_env;
		p->file_init = base->file_init;
		p->private_copy = base->private_copy;
		p->private_copy_moved = base->private_copy_moved;
		p->copy_rules = base->copy_rules;
		p->session_flag = base->session_flag;
		p->oneshot = base->oneshot; /* the built-in's (static); not a configuration key yet */
		for (size_t k = 0; k < NKEYS; k++) {
			if (keys[k].shape == S_STR)
				continue;
			copy_list(&u->lists[k], *list_at((struct profile *)base, &keys[k]));
			*list_at(p, &keys[k]) =
				u->lists[k].n ? (const char *const *)u->lists[k].v : NULL;
		}
	}
	/* the paths inside rw are checked against the whole rw list: rw first */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < NKEYS; k++) {
			bool inside = keys[k].check == C_INSIDE || keys[k].check == C_HIDE;
			if (inside != (pass == 1))
				continue;
			size_t idx;
			const struct toml_value *v = key_value(tbl, keys[k].name, &idx);
			if (v && apply_key(u, &keys[k], v, file, e) < 0) {
				profile_free_user(p);
				return -1;
			}
		}
	}
	if (!p->exe || !p->rw) {
		at(e, file, tbl->line, tbl->col, "[profile.%s]: a new profile needs `%s`", name,
		   !p->exe ? "command" : "rw");
		err_hint(e, !p->exe ? "command = \"%s\" (the executable's name on PATH)"
				    : "rw = [\"~/.%s/\"] (where the agent keeps its settings and "
				      "login)",
			 name);
		profile_free_user(p);
		return -1;
	}
	if (p->home_env && p->rw[0][strlen(p->rw[0]) - 1] != '/') {
		size_t idx = 0;
		const struct toml_value *v = key_value(tbl, "home_env", &idx);
		at(e, file, v ? v->line : tbl->line, v ? v->col : tbl->col,
		   "`home_env` moves the first `rw` path, which must then be a directory (\"%s\" "
		   "does not end in '/')", p->rw[0]);
		profile_free_user(p);
		return -1;
	}
	if (!p->title) {
		strv_push(&u->strs, name);
		p->title = u->strs.v[u->strs.n - 1];
	}
	if (!p->install) {
		strv_pushf(&u->strs, "install %s and put it on PATH", p->exe[0]);
		p->install = u->strs.v[u->strs.n - 1];
	}
	if (!p->skip_flags && !p->skip_note) {
		strv_push(&u->strs, "the profile names no skip-permission flags: the agent asks "
				    "as it would outside a jail");
		p->skip_note = u->strs.v[u->strs.n - 1];
	}
	*out = p;
	return 0;
}

void profile_free_user(struct profile *p)
{
	if (!p)
		return;
	struct uprof *u = (struct uprof *)(void *)((char *)p - offsetof(struct uprof, p));
	strv_free(&u->strs);
	for (size_t k = 0; k < NKEYS; k++)
		strv_free(&u->lists[k]);
	free(u);
}
