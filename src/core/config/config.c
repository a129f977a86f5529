#include "core/config/config.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/httprules.h"
#include "core/plan/limits.h"
#include "core/plan/netask.h"
#include "core/plan/netrules.h"
#include "core/plan/profile.h"
#include "core/plan/publish.h"
#include "core/plan/suggest.h"
#include "core/config/toml.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* where launch looks for bwrap when nothing names it (launch_find_bwrap) */
#define BWRAP_DEFAULT "/usr/bin/bwrap or /usr/local/bin/bwrap (root-owned)"

static const char *const pol_keys[] = {
	"fs", "net", "memory", "pids", "home", "ask", "ask_timeout", "ssh_agent", "gpg_agent", "rw",
	"ro", "hide", "devices", "env", "allow_domains", "deny_domains", "hosts", "publish",
	"allow_http", NULL};
static const char *const top_keys[] = {"bwrap",	      "state_dir", "policy", "agent", "profile",
				       "backend",     "opensandbox", "cache", "secret", NULL};
static const char *const secret_keys[] = {"hosts", "header", "env", "command", NULL};

const char *cfg_key_name(enum cfg_key k)
{
	return k < CK__N ? pol_keys[k] : "?";
}

static void val_free(struct cfg_val *v)
{
	free(v->v);
	free(v->origin);
	v->v = v->origin = NULL;
}

static void val_set(struct cfg_val *v, const char *val, const char *origin)
{
	val_free(v);
	v->v = xstrdup(val);
	v->origin = xstrdup(origin);
}

static void pol_free(struct cfg_pol *p)
{
	for (int i = 0; i < CFG_NSCALAR; i++)
		val_free(&p->s[i]);
	for (int i = 0; i < CFG_NLIST; i++) {
		strv_free(&p->l[i].v);
		strv_free(&p->l[i].origin);
	}
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof *c);
}

void config_free(struct config *c)
{
	val_free(&c->bwrap);
	val_free(&c->state_dir);
	val_free(&c->backend);
	val_free(&c->cache);
	for (int k = 0; k < OK__N; k++)
		val_free(&c->osb[k]);
	pol_free(&c->policy);
	secret_set_free(&c->secrets);
	for (size_t i = 0; i < c->n_agents; i++) {
		free(c->agents[i].name);
		free(c->agents[i].origin);
		pol_free(&c->agents[i].pol);
	}
	free(c->agents);
	for (size_t i = 0; i < c->n_profiles; i++)
		profile_free_user(c->profiles[i]);
	free(c->profiles);
	strv_free(&c->files);
	memset(c, 0, sizeof *c);
}

/* ---- errors at FILE:LINE:COL ---- */

static int at_err(struct err *e, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int at_err(struct err *e, const char *file, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = toml_verr_at(e, file, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

static int unknown_key(struct err *e, const char *file, const struct toml_value *t, size_t k,
		       const char *table, const char *const *cands)
{
	at_err(e, file, t->key_line[k], t->key_col[k], "unknown key `%s` in %s", t->keys[k],
	       table);
	const char *s = closest_word(t->keys[k], cands);
	if (s)
		err_hint(e, "did you mean `%s`?", s);
	else
		err_hint(e, "`man 5 agentjail.toml` lists the keys");
	return -1;
}

static int type_err(struct err *e, const char *file, const struct toml_value *v, const char *key,
		    const char *want)
{
	return at_err(e, file, v->line, v->col, "`%s` needs %s, not a %s", key, want,
		      toml_type_name(v->type));
}

static bool env_name_ok(const char *s)
{
	return env_name_valid(s, strlen(s));
}

/* One list entry, checked for its key: 0 or -1 with e. */
static int check_entry(enum cfg_key k, const char *s, const char *file,
		       const struct toml_value *at, struct err *e)
{
	if (!*s)
		return at_err(e, file, at->line, at->col, "`%s` has an empty entry",
			      cfg_key_name(k));
	if (k == CK_ENV && (!env_name_ok(s) || env_name_forbidden(s)))
		return at_err(e, file, at->line, at->col,
			      "`env` entry `%s` is not a variable name agentjail passes (letters, "
			      "digits, _; never LD_*, BASH_ENV, agent sockets, …)",
			      s);
	if (k == CK_ALLOW_DOMAINS || k == CK_DENY_DOMAINS) {
		struct netrule r;
		struct err ne = {0};
		if ((k == CK_DENY_DOMAINS ? netrule_parse_deny(s, &r, &ne)
					  : netrule_parse(s, &r, &ne)) < 0)
			return at_err(e, file, at->line, at->col, "`%s` entry `%s`: %s",
				      cfg_key_name(k), s, ne.what);
		netrule_free(&r);
	}
	if (k == CK_ALLOW_HTTP) {
		struct http_rule r;
		struct err ne = {0};
		if (http_rule_parse(s, &r, &ne) < 0)
			return at_err(e, file, at->line, at->col, "`allow_http` entry `%s`: %s", s,
				      ne.what);
		http_rule_free(&r);
	}
	if (k == CK_PUBLISH) {
		struct publish pub;
		struct err pe = {0};
		if (publish_parse(s, &pub, &pe) < 0)
			return at_err(e, file, at->line, at->col,
				      "`publish` entry `%s`: expected \"[HOSTPORT:]PORT\", each a port "
				      "from 1 to 65535",
				      s);
	}
	if (k == CK_HOSTS) {
		struct netmap m;
		struct err ne = {0};
		if (netmap_parse(s, &m, &ne) < 0)
			return at_err(e, file, at->line, at->col, "`hosts` entry `%s`: %s", s,
				      ne.what);
		netmap_free(&m);
	}
	return 0;
}

static int scalar_of(enum cfg_key k, const struct toml_value *v, const char *file, char **out,
		     struct err *e)
{
	const char *key = cfg_key_name(k);
	if (k == CK_HOME) {
		enum home_mode hm;
		if (v->type != TOML_STRING)
			return type_err(e, file, v, key, "a string (tmp or persist)");
		if (home_mode_parse(v->s, &hm) < 0)
			return at_err(e, file, v->line, v->col, "`home` = \"%s\": expected tmp or "
								"persist", v->s);
		*out = xstrdup(home_mode_name(hm));
		return 0;
	}
	if (k == CK_SSH_AGENT || k == CK_GPG_AGENT) {
		if (v->type != TOML_BOOL)
			return type_err(e, file, v, key, "true or false");
		*out = xstrdup(v->b ? "true" : "false");
		return 0;
	}
	if (k == CK_FS || k == CK_NET) {
		if (v->type != TOML_STRING)
			return type_err(e, file, v, key, "a string");
		enum fs_mode fm;
		enum net_mode nm;
		if (k == CK_FS ? fs_mode_parse(v->s, &fm) < 0 : net_mode_parse(v->s, &nm) < 0)
			return at_err(e, file, v->line, v->col, "`%s` = \"%s\": expected %s", key,
				      v->s,
				      k == CK_FS ? "read-only, workspace-write, review or "
						   "danger-full-access"
						 : "off, on or allow");
		*out = xstrdup(k == CK_FS ? fs_mode_name(fm) : net_mode_name(nm));
		return 0;
	}
	if (k == CK_ASK) {
		if (v->type != TOML_BOOL)
			return type_err(e, file, v, key, "true or false");
		*out = xstrdup(v->b ? "true" : "false");
		return 0;
	}
	if (k == CK_ASK_TIMEOUT) {
		if (v->type != TOML_INT || v->i < 1 || v->i > NETASK_TIMEOUT_MAX)
			return at_err(e, file, v->line, v->col,
				      "`ask_timeout` needs a number of seconds from 1 to %d",
				      NETASK_TIMEOUT_MAX);
		*out = xasprintf("%lld", (long long)v->i);
		return 0;
	}
	char num[32];
	const char *s = v->s;
	if (v->type == TOML_INT) {
		snprintf(num, sizeof num, "%lld", (long long)v->i);
		s = num;
	} else if (v->type != TOML_STRING) {
		return type_err(e, file, v, key, "a string or an integer");
	}
	uint64_t n;
	if (k == CK_MEMORY ? limits_parse_size(s, &n) < 0 || n < LIMITS_MIN_MEM
			   : limits_parse_count(s, &n) < 0 || n < LIMITS_MIN_PIDS)
		return at_err(e, file, v->line, v->col, "`%s` = %s: expected %s", key, s,
			      k == CK_MEMORY ? "a size of at least 32M (512M, 4G) or \"unlimited\""
					     : "a number of processes (at least 8) or \"unlimited\"");
	*out = xstrdup(s);
	return 0;
}

/* A [policy] or [agent.NAME] table into out (origins "FILE:LINE"). */
static int read_pol(const struct toml_value *t, const char *file, const char *table,
		    struct cfg_pol *out, struct err *e)
{
	for (size_t k = 0; k < t->n; k++) {
		int id = 0;
		while (pol_keys[id] && strcmp(pol_keys[id], t->keys[k]))
			id++;
		if (!pol_keys[id])
			return unknown_key(e, file, t, k, table, pol_keys);
		const struct toml_value *v = &t->items[k];
		_cleanup_free_ char *origin = xasprintf("%s:%d", file, t->key_line[k]);
		if (id < CFG_NSCALAR) {
			char *s = NULL;
			if (scalar_of((enum cfg_key)id, v, file, &s, e) < 0)
				return -1;
			val_free(&out->s[id]);
			out->s[id].v = s;
			out->s[id].origin = xstrdup(origin);
			continue;
		}
		struct cfg_list *l = &out->l[id - CFG_NSCALAR];
		if (id == CK_HOSTS) {
			if (v->type != TOML_TABLE)
				return type_err(e, file, v, "hosts",
						"an inline table { \"NAME\" = \"ADDR\" }");
			for (size_t j = 0; j < v->n; j++) {
				const struct toml_value *a = &v->items[j];
				if (a->type != TOML_STRING)
					return type_err(e, file, a, "hosts", "string addresses");
				_cleanup_free_ char *m = xasprintf("%s=%s", v->keys[j], a->s);
				if (check_entry(CK_HOSTS, m, file, a, e) < 0)
					return -1;
				strv_push(&l->v, m);
				strv_pushf(&l->origin, "%s:%d", file, a->line);
			}
			continue;
		}
		if (v->type != TOML_ARRAY)
			return type_err(e, file, v, t->keys[k], "an array of strings");
		for (size_t j = 0; j < v->n; j++) {
			const struct toml_value *a = &v->items[j];
			if (a->type != TOML_STRING)
				return type_err(e, file, a, t->keys[k], "strings");
			if (check_entry((enum cfg_key)id, a->s, file, a, e) < 0)
				return -1;
			strv_push(&l->v, a->s);
			strv_pushf(&l->origin, "%s:%d", file, a->line);
		}
	}
	return 0;
}

static struct cfg_agent *agent_get(struct config *c, const char *name, const char *origin)
{
	for (size_t i = 0; i < c->n_agents; i++)
		if (!strcmp(c->agents[i].name, name))
			return &c->agents[i];
	c->agents = xrealloc(c->agents, (c->n_agents + 1) * sizeof *c->agents);
	struct cfg_agent *a = &c->agents[c->n_agents++];
	memset(a, 0, sizeof *a);
	a->name = xstrdup(name);
	a->origin = xstrdup(origin);
	return a;
}

static const struct cfg_agent *agent_find(const struct config *c, const char *name)
{
	for (size_t i = 0; name && i < c->n_agents; i++)
		if (!strcmp(c->agents[i].name, name))
			return &c->agents[i];
	return NULL;
}

/* a onto into: scalars replace, lists grow (an entry already there is not repeated) */
static void pol_merge(struct cfg_pol *into, const struct cfg_pol *a)
{
	for (int i = 0; i < CFG_NSCALAR; i++)
		if (a->s[i].v)
			val_set(&into->s[i], a->s[i].v, a->s[i].origin);
	for (int i = 0; i < CFG_NLIST; i++)
		for (size_t j = 0; j < a->l[i].v.n; j++) {
			if (strv_contains(&into->l[i].v, a->l[i].v.v[j]))
				continue;
			strv_push(&into->l[i].v, a->l[i].v.v[j]);
			strv_push(&into->l[i].origin, a->l[i].origin.v[j]);
		}
}

/* ---- project narrowing ---- */

static int fs_rank(const char *v)
{
	enum fs_mode m = FS_WORKSPACE_WRITE;
	if (v && fs_mode_parse(v, &m) < 0)
		return 4;
	/* review writes nothing of the host's until `apply`: between read-only and
	 * workspace-write */
	return m == FS_READ_ONLY ? 0 : m == FS_REVIEW ? 1 : m == FS_WORKSPACE_WRITE ? 2 : 3;
}

static int net_rank(const char *v, enum net_mode def)
{
	enum net_mode m = def;
	if (v && net_mode_parse(v, &m) < 0)
		return 3;
	return m == NET_OFF ? 0 : m == NET_ALLOW ? 1 : 2;
}

/* limit a no larger than limit b (b unset: not comparable, so not narrower) */
static bool limit_le(enum cfg_key k, const char *a, const char *b)
{
	uint64_t x, y;
	if (!b)
		return false;
	int ra = k == CK_MEMORY ? limits_parse_size(a, &x) : limits_parse_count(a, &x);
	int rb = k == CK_MEMORY ? limits_parse_size(b, &y) : limits_parse_count(b, &y);
	return ra == 0 && rb == 0 && x <= y;
}

static const char *why_list(enum cfg_key k)
{
	switch (k) {
	case CK_RW:
		return "adds a writable path";
	case CK_RO:
		return "adds a readable path";
	case CK_ENV:
		return "passes a variable into the jail";
	case CK_ALLOW_DOMAINS:
		return "allows a domain your own configuration does not";
	case CK_HOSTS:
		return "maps a host name to an address (reachable then)";
	case CK_ALLOW_HTTP:
		return "allows a request your own request rules for that host do not";
	case CK_PUBLISH:
		return "opens a port of your host's 127.0.0.1 to the jail (a program of yours "
		       "connecting there talks to the jail)";
	default:
		return "widens the sandbox";
	}
}

/* Whether a request rule of `rules` names the host of rule `spec` (the same host pattern): a
 * project's rule for a host with no rules below narrows it, one for a host with rules widens
 * those rules. */
static bool rules_for_host(const struct strv *rules, const char *spec)
{
	struct http_rule a;
	struct err e = {0};
	if (http_rule_parse(spec, &a, &e) < 0)
		return true; /* cannot tell: treat as widening */
	bool found = false;
	for (size_t i = 0; i < rules->n && !found; i++) {
		struct http_rule b;
		if (http_rule_parse(rules->v[i], &b, &e) < 0)
			continue;
		found = a.host.kind == b.host.kind && !strcmp(a.host.host, b.host.host);
		http_rule_free(&b);
	}
	http_rule_free(&a);
	return found;
}

/* Drop from p (a project's table) what widens it beyond lower, naming each in widening. */
static void narrow(struct cfg_pol *p, const struct cfg_pol *lower, const char *table,
		   enum net_mode net_default, struct strv *widening)
{
	for (int i = 0; i < CFG_NSCALAR; i++) {
		struct cfg_val *v = &p->s[i];
		if (!v->v)
			continue;
		const char *lo = lower->s[i].v;
		bool wide = false;
		const char *why = "";
		if (i == CK_FS) {
			wide = fs_rank(v->v) > fs_rank(lo);
			why = "gives more filesystem access";
		} else if (i == CK_NET) {
			wide = net_rank(v->v, net_default) > net_rank(lo, net_default);
			why = "gives more network access";
		} else if (i == CK_SSH_AGENT || i == CK_GPG_AGENT) {
			wide = !strcmp(v->v, "true") && !(lo && !strcmp(lo, "true"));
			why = i == CK_SSH_AGENT ? "lets the jail sign with your ssh keys"
						: "lets the jail sign with your gpg keys";
		} else if (i == CK_HOME) {
			/* a persisted home shows a jail what this workspace's earlier jails left
			 * in theirs (a shell history with a token typed into it): the user's choice */
			wide = !strcmp(v->v, "persist") && !(lo && !strcmp(lo, "persist"));
			why = "keeps the jail's home between runs (what earlier jails of this "
			      "workspace left there)";
		} else if (i == CK_ASK) {
			wide = !strcmp(v->v, "true") && !(lo && !strcmp(lo, "true"));
			why = "asks you to allow hosts the lists do not";
		} else if (i == CK_ASK_TIMEOUT) {
			continue; /* how long a question waits allows nothing */
		} else {
			wide = !limit_le((enum cfg_key)i, v->v, lo);
			why = lo ? "raises a limit" : "sets a limit your own configuration does not";
		}
		if (!wide)
			continue;
		strv_pushf(widening, "%s: `%s = %s` in %s %s (yours: %s)", v->origin,
			   cfg_key_name((enum cfg_key)i), v->v, table, why,
			   lo ? lo
			      : i == CK_FS    ? "workspace-write"
			      : i == CK_NET ? net_mode_name(net_default)
			      : i == CK_HOME ? "tmp"
			      : i == CK_ASK ? "false"
					    : "the default");
		val_free(v);
	}
	bool lower_net_on = net_rank(lower->s[CK_NET].v, net_default) == 2;
	for (int i = 0; i < CFG_NLIST; i++) {
		enum cfg_key k = (enum cfg_key)(i + CFG_NSCALAR);
		if (k == CK_HIDE || k == CK_DENY_DOMAINS)
			continue; /* always narrower */
		struct cfg_list *l = &p->l[i];
		struct cfg_list keep = {STRV_INIT, STRV_INIT};
		for (size_t j = 0; j < l->v.n; j++) {
			const char *s = l->v.v[j];
			bool ok = strv_contains(&lower->l[i].v, s) ||
				  (k == CK_ALLOW_DOMAINS && lower_net_on) ||
				  (k == CK_ALLOW_HTTP && !rules_for_host(&lower->l[i].v, s));
			if (ok) {
				strv_push(&keep.v, s);
				strv_push(&keep.origin, l->origin.v[j]);
			} else {
				strv_pushf(widening, "%s: `%s` entry \"%s\" in %s %s", l->origin.v[j],
					   cfg_key_name(k), s, table, why_list(k));
			}
		}
		strv_free(&l->v);
		strv_free(&l->origin);
		*l = keep;
	}
}

/* ---- one file ---- */

/* [opensandbox]: strings, timeout an integer too (checked by osb_key_check). */
static int read_osb(struct config *f, const struct toml_value *t, const char *file, struct err *e)
{
	for (size_t j = 0; j < t->n; j++) {
		const struct toml_value *v = &t->items[j];
		int k = 0;
		while (k < OK__N && strcmp(osb_key_name(k), t->keys[j]))
			k++;
		if (k == OK__N)
			return unknown_key(e, file, t, j, "[opensandbox]", osb_key_names());
		_cleanup_free_ char *num = v->type == TOML_INT ? xasprintf("%lld", (long long)v->i)
							       : NULL;
		if (v->type != TOML_STRING && !(num && (k == OK_TIMEOUT || k == OK_SYNC_MAX)))
			return type_err(e, file, v, t->keys[j], "a string");
		const char *val = num ? num : v->s;
		struct err e2 = {0};
		if (osb_key_check(k, val, &e2) < 0)
			return at_err(e, file, v->line, v->col, "%s", e2.what);
		_cleanup_free_ char *origin = xasprintf("%s:%d", file, t->key_line[j]);
		val_set(&f->osb[k], val, origin);
	}
	return 0;
}

static bool backend_ok(const char *s)
{
	enum backend_id b;
	return backend_parse(s, &b) == 0;
}

static bool cache_ok(const char *s)
{
	enum cache_mode m;
	return cache_mode_parse(s, &m) == 0;
}

/* A top-level string with a fixed set of values (`choices` in words, `ok` the check). */
static int read_choice(struct cfg_val *dst, const struct toml_value *v, const char *key,
		       const char *choices, bool (*ok)(const char *), const char *file,
		       const char *origin, struct err *e)
{
	if (v->type != TOML_STRING) {
		_cleanup_free_ char *want = xasprintf("a string (%s)", choices);
		return type_err(e, file, v, key, want);
	}
	if (!ok(v->s))
		return at_err(e, file, v->line, v->col, "`%s` must be %s, not `%s`", key, choices,
			      v->s);
	val_set(dst, v->s, origin);
	return 0;
}

/* One [secret.NAME] table (the j-th of [secret]) into f->secrets. */
static int read_secret(struct config *f, const struct toml_value *sec, size_t j, const char *file,
		       struct err *e)
{
	const char *name = sec->keys[j];
	const struct toml_value *t = &sec->items[j];
	_cleanup_free_ char *tn = xasprintf("[secret.%s]", name);
	if (t->type != TOML_TABLE || t->inline_table)
		return type_err(e, file, t, tn, "a table");
	_cleanup_strv_ struct strv hosts = STRV_INIT;
	_cleanup_strv_ struct strv cmd = STRV_INIT;
	const char *header = NULL, *env = NULL;
	for (size_t k = 0; k < t->n; k++) {
		const struct toml_value *v = &t->items[k];
		const char *key = t->keys[k];
		if (!strcmp(key, "header") || !strcmp(key, "env")) {
			if (v->type != TOML_STRING)
				return type_err(e, file, v, key, "a string");
			*(!strcmp(key, "header") ? &header : &env) = v->s;
		} else if (!strcmp(key, "hosts") || !strcmp(key, "command")) {
			if (v->type != TOML_ARRAY)
				return type_err(e, file, v, key, "an array of strings");
			for (size_t i = 0; i < v->n; i++)
				strv_push(!strcmp(key, "hosts") ? &hosts : &cmd, v->items[i].s);
			if (!strcmp(key, "command") && !v->n)
				return at_err(e, file, v->line, v->col, "`command` is empty");
		} else {
			return unknown_key(e, file, t, k, tn, secret_keys);
		}
	}
	_cleanup_free_ char *origin = xasprintf("%s:%d", file, sec->key_line[j]);
	struct secret_def d;
	struct err e2 = {0};
	if (secret_def_make(name, &hosts, header, env, &cmd, origin, &d, &e2) < 0)
		return at_err(e, file, sec->key_line[j], sec->key_col[j], "%s: %s", tn, e2.what);
	secret_set_put(&f->secrets, &d);
	secret_def_free(&d);
	return 0;
}

static int read_file_tables(struct config *f, const struct toml_value *root, const char *file,
			    enum cfg_layer layer, struct err *e)
{
	for (size_t k = 0; k < root->n; k++) {
		const char *key = root->keys[k];
		const struct toml_value *v = &root->items[k];
		int kl = root->key_line[k], kc = root->key_col[k];
		_cleanup_free_ char *origin = xasprintf("%s:%d", file, kl);
		/* backend and [opensandbox] too: a project must not choose the weaker sandbox, nor
		 * send the workspace to a service of its choosing; nor cache: a project that chose
		 * the shared caches would write where every other project's jails read */
		bool never = !strcmp(key, "bwrap") || !strcmp(key, "state_dir") ||
			     !strcmp(key, "profile") || !strcmp(key, "backend") ||
			     !strcmp(key, "opensandbox") || !strcmp(key, "cache") ||
			     !strcmp(key, "secret");
		if (layer == CFG_PROJECT && never) {
			at_err(e, file, kl, kc, "`%s` may never be set in a project's .agentjail.toml",
			       key);
			err_hint(e, "set it in ~/.config/agentjail/config.toml (trust does not "
				    "change this)");
			return -1;
		}
		if (!strcmp(key, "bwrap") || !strcmp(key, "state_dir")) {
			if (v->type != TOML_STRING)
				return type_err(e, file, v, key, "a string (a path)");
			if (!v->s[0])
				return at_err(e, file, v->line, v->col, "`%s` is empty", key);
			val_set(!strcmp(key, "bwrap") ? &f->bwrap : &f->state_dir, v->s, origin);
		} else if (!strcmp(key, "backend")) {
			if (read_choice(&f->backend, v, key, "local, landlock or opensandbox",
					backend_ok, file, origin, e) < 0)
				return -1;
		} else if (!strcmp(key, "cache")) {
			if (read_choice(&f->cache, v, key, "workspace or shared", cache_ok, file,
					origin, e) < 0)
				return -1;
		} else if (!strcmp(key, "opensandbox")) {
			if (v->type != TOML_TABLE || v->inline_table)
				return type_err(e, file, v, key, "an [opensandbox] table");
			if (read_osb(f, v, file, e) < 0)
				return -1;
		} else if (!strcmp(key, "secret")) {
			if (v->type != TOML_TABLE || v->inline_table)
				return type_err(e, file, v, key, "[secret.NAME] tables");
			for (size_t j = 0; j < v->n; j++)
				if (read_secret(f, v, j, file, e) < 0)
					return -1;
		} else if (!strcmp(key, "policy")) {
			if (v->type != TOML_TABLE || v->inline_table)
				return type_err(e, file, v, key, "a [policy] table");
			if (read_pol(v, file, "[policy]", &f->policy, e) < 0)
				return -1;
		} else if (!strcmp(key, "agent")) {
			if (v->type != TOML_TABLE)
				return type_err(e, file, v, key, "[agent.NAME] tables");
			for (size_t j = 0; j < v->n; j++) {
				const struct toml_value *a = &v->items[j];
				_cleanup_free_ char *tn = xasprintf("[agent.%s]", v->keys[j]);
				if (a->type != TOML_TABLE)
					return type_err(e, file, a, tn, "a table");
				_cleanup_free_ char *ao = xasprintf("%s:%d:%d", file,
								    v->key_line[j], v->key_col[j]);
				struct cfg_agent *ag = agent_get(f, v->keys[j], ao);
				if (read_pol(a, file, tn, &ag->pol, e) < 0)
					return -1;
			}
		} else if (!strcmp(key, "profile")) {
			if (v->type != TOML_TABLE)
				return type_err(e, file, v, key, "[profile.NAME] tables");
			for (size_t j = 0; j < v->n; j++) {
				const struct toml_value *a = &v->items[j];
				if (a->type != TOML_TABLE) {
					_cleanup_free_ char *tn = xasprintf("[profile.%s]", v->keys[j]);
					return type_err(e, file, a, tn, "a table");
				}
				const struct profile *base = profile_find(v->keys[j]);
				if (base && strcmp(base->name, v->keys[j]))
					base = NULL; /* an alias, not the profile itself */
				struct profile *pr = NULL;
				if (profile_from_toml(v->keys[j], a, file, base, &pr, e) < 0)
					return -1;
				f->profiles = xrealloc(f->profiles,
						       (f->n_profiles + 1) * sizeof *f->profiles);
				f->profiles[f->n_profiles++] = pr;
			}
		} else {
			return unknown_key(e, file, root, k, "the top level", top_keys);
		}
	}
	return 0;
}

static void devices_refused(const struct config *f, const char *file, struct err *e)
{
	const struct cfg_list *l = &f->policy.l[CK_DEVICES - CFG_NSCALAR];
	const char *where = l->v.n ? l->origin.v[0] : NULL;
	for (size_t i = 0; !where && i < f->n_agents; i++)
		if (f->agents[i].pol.l[CK_DEVICES - CFG_NSCALAR].v.n)
			where = f->agents[i].pol.l[CK_DEVICES - CFG_NSCALAR].origin.v[0];
	if (!where)
		return;
	err_set(e, 0, where, "`devices` may never be set in a project's .agentjail.toml");
	err_hint(e, "give the device with --dev, or in ~/.config/agentjail/config.toml");
}

int config_apply(struct config *c, const struct toml_value *root, const char *file,
		 enum cfg_layer layer, bool trusted, enum net_mode net_default,
		 struct strv *widening, struct err *e)
{
	struct config f;
	config_init(&f);
	if (root->type != TOML_TABLE || read_file_tables(&f, root, file, layer, e) < 0) {
		if (root->type != TOML_TABLE)
			err_set(e, 0, file, "not a TOML document");
		config_free(&f);
		return -1;
	}
	if (layer == CFG_PROJECT) {
		devices_refused(&f, file, e);
		if (e->what[0]) {
			config_free(&f);
			return -1;
		}
	}
	if (layer == CFG_PROJECT && !trusted) {
		narrow(&f.policy, &c->policy, "[policy]", net_default, widening);
		for (size_t i = 0; i < f.n_agents; i++) {
			struct cfg_pol lower = {0};
			pol_merge(&lower, &c->policy);
			const struct cfg_agent *la = agent_find(c, f.agents[i].name);
			if (la)
				pol_merge(&lower, &la->pol);
			_cleanup_free_ char *tn = xasprintf("[agent.%s]", f.agents[i].name);
			narrow(&f.agents[i].pol, &lower, tn, net_default, widening);
			pol_free(&lower);
		}
	}
	if (f.bwrap.v)
		val_set(&c->bwrap, f.bwrap.v, f.bwrap.origin);
	if (f.state_dir.v)
		val_set(&c->state_dir, f.state_dir.v, f.state_dir.origin);
	if (f.backend.v)
		val_set(&c->backend, f.backend.v, f.backend.origin);
	if (f.cache.v)
		val_set(&c->cache, f.cache.v, f.cache.origin);
	for (int k = 0; k < OK__N; k++)
		if (f.osb[k].v)
			val_set(&c->osb[k], f.osb[k].v, f.osb[k].origin);
	pol_merge(&c->policy, &f.policy);
	for (size_t i = 0; i < f.secrets.n; i++) /* a later file's secret of a name replaces it */
		secret_set_put(&c->secrets, &f.secrets.v[i]);
	for (size_t i = 0; i < f.n_agents; i++)
		pol_merge(&agent_get(c, f.agents[i].name, f.agents[i].origin)->pol,
			  &f.agents[i].pol);
	for (size_t i = 0; i < f.n_profiles; i++) {
		size_t j = 0; /* a later file's profile of the same name replaces it */
		while (j < c->n_profiles && strcmp(c->profiles[j]->name, f.profiles[i]->name))
			j++;
		if (j == c->n_profiles)
			c->profiles = xrealloc(c->profiles, ++c->n_profiles * sizeof *c->profiles);
		else
			profile_free_user(c->profiles[j]);
		c->profiles[j] = f.profiles[i];
	}
	f.n_profiles = 0;
	strv_push(&c->files, file);
	config_free(&f);
	return 0;
}

void config_apply_env(struct config *c, const char *fs, const char *net, const char *memory,
		      const char *pids, const char *bwrap, const char *state_dir)
{
	const char *vals[] = {fs, net, memory, pids};
	const char *names[] = {"AGENTJAIL_FS", "AGENTJAIL_NET", "AGENTJAIL_MEMORY",
			       "AGENTJAIL_PIDS"};
	for (int i = 0; i < 4; i++)
		if (vals[i] && *vals[i]) {
			_cleanup_free_ char *o = xasprintf("env %s", names[i]);
			val_set(&c->policy.s[i], vals[i], o);
		}
	if (bwrap && *bwrap)
		val_set(&c->bwrap, bwrap, "env AGENTJAIL_BWRAP");
	if (state_dir && *state_dir)
		val_set(&c->state_dir, state_dir, "env AGENTJAIL_STATE_DIR");
}

static void push_paths(struct strv *dst, const struct strv *src, const char *cwd,
		       const char *home)
{
	for (size_t i = 0; i < src->n; i++) {
		_cleanup_free_ char *x = path_expand_home(home, src->v[i]);
		strv_push_take(dst, path_normalize(cwd, x));
	}
}

int config_base_policy(const struct config *c, const char *agent, const char *cwd,
		       const char *home, struct policy *out, bool *fs_set, bool *net_set,
		       struct err *e)
{
	struct cfg_pol m = {0};
	pol_merge(&m, &c->policy);
	const struct cfg_agent *a = agent_find(c, agent);
	if (a)
		pol_merge(&m, &a->pol);
	policy_init(out);
	int rc = 0;
	if (c->cache.v && cache_mode_parse(c->cache.v, &out->cache) < 0)
		rc = err_set(e, 0, c->cache.origin, "cache: unknown mode %s", c->cache.v);
	*fs_set = m.s[CK_FS].v != NULL;
	*net_set = m.s[CK_NET].v != NULL;
	if (*fs_set && fs_mode_parse(m.s[CK_FS].v, &out->fs) < 0)
		rc = err_set(e, 0, m.s[CK_FS].origin, "fs: unknown mode %s", m.s[CK_FS].v);
	if (*net_set && net_mode_parse(m.s[CK_NET].v, &out->net) < 0)
		rc = err_set(e, 0, m.s[CK_NET].origin, "net: unknown mode %s", m.s[CK_NET].v);
	if (m.s[CK_MEMORY].v && limits_parse_size(m.s[CK_MEMORY].v, &out->memory) < 0)
		rc = err_set(e, 0, m.s[CK_MEMORY].origin, "memory: not a size");
	if (m.s[CK_PIDS].v && limits_parse_count(m.s[CK_PIDS].v, &out->pids) < 0)
		rc = err_set(e, 0, m.s[CK_PIDS].origin, "pids: not a count");
	if (m.s[CK_HOME].v && home_mode_parse(m.s[CK_HOME].v, &out->home) < 0)
		rc = err_set(e, 0, m.s[CK_HOME].origin, "home: unknown mode %s", m.s[CK_HOME].v);
	out->ask = m.s[CK_ASK].v && !strcmp(m.s[CK_ASK].v, "true");
	if (m.s[CK_ASK_TIMEOUT].v)
		out->ask_timeout = atoi(m.s[CK_ASK_TIMEOUT].v);
	const char *h = home && home[0] == '/' ? home : "/";
	push_paths(&out->rw, &m.l[CK_RW - CFG_NSCALAR].v, cwd, h);
	push_paths(&out->ro, &m.l[CK_RO - CFG_NSCALAR].v, cwd, h);
	push_paths(&out->hide, &m.l[CK_HIDE - CFG_NSCALAR].v, cwd, h);
	push_paths(&out->dev, &m.l[CK_DEVICES - CFG_NSCALAR].v, cwd, h);
	strv_copy(&out->env, &m.l[CK_ENV - CFG_NSCALAR].v);
	strv_copy(&out->allow_domains, &m.l[CK_ALLOW_DOMAINS - CFG_NSCALAR].v);
	strv_copy(&out->deny_domains, &m.l[CK_DENY_DOMAINS - CFG_NSCALAR].v);
	strv_copy(&out->map_hosts, &m.l[CK_HOSTS - CFG_NSCALAR].v);
	strv_copy(&out->allow_http, &m.l[CK_ALLOW_HTTP - CFG_NSCALAR].v);
	out->ssh_agent = m.s[CK_SSH_AGENT].v && !strcmp(m.s[CK_SSH_AGENT].v, "true");
	out->gpg_agent = m.s[CK_GPG_AGENT].v && !strcmp(m.s[CK_GPG_AGENT].v, "true");
	for (size_t i = 0; i < c->secrets.n; i++) /* definitions: which are used is decided later */
		secret_set_put(&out->secrets, &c->secrets.v[i]);
	strv_copy(&out->publish, &m.l[CK_PUBLISH - CFG_NSCALAR].v);
	pol_free(&m);
	return rc;
}

int config_check_agents(const struct config *c, const char *const *names, struct err *e)
{
	for (size_t i = 0; i < c->n_agents; i++) {
		bool known = false;
		for (size_t j = 0; names && names[j]; j++)
			known |= !strcmp(names[j], c->agents[i].name);
		if (known)
			continue;
		err_set(e, 0, c->agents[i].origin, "[agent.%s] names no agent", c->agents[i].name);
		const char *s = closest_word(c->agents[i].name, names);
		if (s)
			err_hint(e, "did you mean [agent.%s]?", s);
		else
			err_hint(e, "see `agentjail profiles`, or define it with [profile.%s]",
				 c->agents[i].name);
		return -1;
	}
	return 0;
}

/* ---- rendering ---- */

static const char *scalar_default(int i)
{
	static const char *const d[] = {"workspace-write", "off (agents: allow)",
					"half the RAM, at most 16G", "4096", "tmp", "false", "60",
					"false", "false"};
	return d[i];
}

static void render_pol_text(struct strbuf *b, const char *prefix, const struct cfg_pol *p,
			    bool defaults)
{
	for (int i = 0; i < CFG_NSCALAR; i++) {
		if (p->s[i].v)
			sb_addf(b, "%s.%s = %s\t# %s\n", prefix, pol_keys[i], p->s[i].v,
				p->s[i].origin);
		else if (defaults)
			sb_addf(b, "%s.%s = %s\t# default\n", prefix, pol_keys[i],
				scalar_default(i));
	}
	for (int i = 0; i < CFG_NLIST; i++)
		for (size_t j = 0; j < p->l[i].v.n; j++)
			sb_addf(b, "%s.%s += %s\t# %s\n", prefix, pol_keys[i + CFG_NSCALAR],
				p->l[i].v.v[j], p->l[i].origin.v[j]);
}

static json_t *val_json(const char *v, const char *origin)
{
	return json_pack("{s:s, s:s}", "value", v, "origin", origin);
}

static json_t *pol_json(const struct cfg_pol *p, bool defaults)
{
	json_t *o = json_object();
	for (int i = 0; i < CFG_NSCALAR; i++) {
		if (p->s[i].v)
			json_object_set_new(o, pol_keys[i], val_json(p->s[i].v, p->s[i].origin));
		else if (defaults)
			json_object_set_new(o, pol_keys[i], val_json(scalar_default(i), "default"));
	}
	for (int i = 0; i < CFG_NLIST; i++) {
		json_t *a = json_array();
		for (size_t j = 0; j < p->l[i].v.n; j++)
			json_array_append_new(a, val_json(p->l[i].v.v[j], p->l[i].origin.v[j]));
		json_object_set_new(o, pol_keys[i + CFG_NSCALAR], a);
	}
	return o;
}

char *config_render(const struct config *c, bool json)
{
	if (json) {
		json_t *o = json_object();
		json_t *files = json_array();
		for (size_t i = 0; i < c->files.n; i++)
			json_array_append_new(files, json_string(c->files.v[i]));
		json_object_set_new(o, "files", files);
		json_object_set_new(o, "bwrap",
				    c->bwrap.v ? val_json(c->bwrap.v, c->bwrap.origin)
					       : val_json(BWRAP_DEFAULT, "default"));
		json_object_set_new(o, "state_dir",
				    c->state_dir.v ? val_json(c->state_dir.v, c->state_dir.origin)
						   : json_null());
		json_object_set_new(o, "backend", c->backend.v ? val_json(c->backend.v, c->backend.origin)
							       : val_json("local", "default"));
		json_object_set_new(o, "cache", c->cache.v ? val_json(c->cache.v, c->cache.origin)
							   : val_json("workspace", "default"));
		json_t *os = json_object();
		for (int k = 0; k < OK__N; k++)
			if (c->osb[k].v)
				json_object_set_new(os, osb_key_name(k),
						    val_json(c->osb[k].v, c->osb[k].origin));
		json_object_set_new(o, "opensandbox", os);
		json_t *sec = json_object();
		for (size_t i = 0; i < c->secrets.n; i++) {
			_cleanup_free_ char *line = secret_describe(&c->secrets.v[i]);
			json_object_set_new(sec, c->secrets.v[i].name,
					    val_json(line, c->secrets.v[i].origin));
		}
		json_object_set_new(o, "secret", sec);
		json_object_set_new(o, "policy", pol_json(&c->policy, true));
		json_t *ag = json_object();
		for (size_t i = 0; i < c->n_agents; i++)
			json_object_set_new(ag, c->agents[i].name, pol_json(&c->agents[i].pol, false));
		json_object_set_new(o, "agent", ag);
		json_t *pr = json_array();
		for (size_t i = 0; i < c->n_profiles; i++)
			json_array_append_new(pr, json_string(c->profiles[i]->name));
		json_object_set_new(o, "profiles", pr);
		char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		json_decref(o);
		char *r = xasprintf("%s\n", s ? s : "{}");
		free(s);
		return r;
	}
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, "# files read, lowest first:");
	for (size_t i = 0; i < c->files.n; i++)
		sb_addf(&b, " %s", c->files.v[i]);
	sb_add(&b, c->files.n ? "\n" : " (none)\n");
	if (c->bwrap.v)
		sb_addf(&b, "bwrap = %s\t# %s\n", c->bwrap.v, c->bwrap.origin);
	else
		sb_addf(&b, "bwrap = %s\t# default\n", BWRAP_DEFAULT);
	if (c->state_dir.v)
		sb_addf(&b, "state_dir = %s\t# %s\n", c->state_dir.v, c->state_dir.origin);
	sb_addf(&b, "backend = %s\t# %s\n", c->backend.v ? c->backend.v : "local",
		c->backend.v ? c->backend.origin : "default");
	sb_addf(&b, "cache = %s\t# %s\n", c->cache.v ? c->cache.v : "workspace",
		c->cache.v ? c->cache.origin : "default");
	for (int k = 0; k < OK__N; k++)
		if (c->osb[k].v)
			sb_addf(&b, "opensandbox.%s = %s\t# %s\n", osb_key_name(k), c->osb[k].v,
				c->osb[k].origin);
	for (size_t i = 0; i < c->secrets.n; i++) {
		_cleanup_free_ char *line = secret_describe(&c->secrets.v[i]);
		sb_addf(&b, "secret.%s\n", line);
	}
	render_pol_text(&b, "policy", &c->policy, true);
	for (size_t i = 0; i < c->n_agents; i++) {
		_cleanup_free_ char *pre = xasprintf("agent.%s", c->agents[i].name);
		render_pol_text(&b, pre, &c->agents[i].pol, false);
	}
	for (size_t i = 0; i < c->n_profiles; i++)
		sb_addf(&b, "profile.%s\t# agentjail profiles %s\n", c->profiles[i]->name,
			c->profiles[i]->name);
	return sb_steal(&b);
}
