/* gitcfg: git's config syntax and the judge of a new repository's config (gitcfg.h). Pure.
 * The syntax follows git's own reader (config.c) as documented in git-config(1): where git would
 * reject a file, the walk stops. */
#include "core/plan/gitcfg.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- the syntax ---- */

struct cfg_cursor {
	const char *s;
	bool eof;
};

/* The next character, CRLF folded to '\n'; at the end '\n' with eof set, so that the last line
 * needs no newline. */
static int cfg_next(struct cfg_cursor *c)
{
	if (*c->s == '\0') {
		c->eof = true;
		return '\n';
	}
	if (c->s[0] == '\r' && c->s[1] == '\n') {
		c->s += 2;
		return '\n';
	}
	return (unsigned char)*c->s++;
}

static void buf_reset(struct strbuf *b)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
}

/* After `[name` and a blank: ` "sub"]`. In the subsection, a backslash keeps the next
 * character, whatever it is. */
static int cfg_subsection(struct cfg_cursor *c, struct strbuf *sub)
{
	int ch;
	do
		ch = cfg_next(c);
	while (ch != '\n' && isspace(ch));
	if (ch != '"')
		return -1;
	sb_add(sub, "");
	for (;;) {
		ch = cfg_next(c);
		if (ch == '"')
			break;
		if (ch == '\\')
			ch = cfg_next(c);
		if (ch == '\n')
			return -1;
		sb_addc(sub, (char)ch);
	}
	return cfg_next(c) == ']' ? 0 : -1;
}

/* After '[': `name]`, `name "sub"]`, or the old `name.sub]` (whose subsection is lowercased,
 * as git does). *has_sub tells a missing subsection from an empty one. */
static int cfg_header(struct cfg_cursor *c, struct strbuf *sec, struct strbuf *sub, bool *has_sub)
{
	for (;;) {
		int ch = cfg_next(c);
		if (ch == ']')
			break;
		if (ch != '\n' && isspace(ch)) {
			*has_sub = true;
			return sec->len && cfg_subsection(c, sub) == 0 ? 0 : -1;
		}
		if (!isalnum(ch) && ch != '-' && ch != '.')
			return -1;
		sb_addc(sec, (char)tolower(ch));
	}
	if (sec->len == 0)
		return -1;
	char *dot = strchr(sec->s, '.');
	if (dot) {
		*has_sub = true;
		sb_add(sub, dot + 1);
		sec->len = (size_t)(dot - sec->s);
		*dot = '\0';
	}
	return sec->len ? 0 : -1;
}

/* The escape after a backslash in a value; -1 for one git rejects. */
static int cfg_escape(int ch)
{
	switch (ch) {
	case 't':
		return '\t';
	case 'b':
		return '\b';
	case 'n':
		return '\n';
	case '\\':
	case '"':
		return ch;
	default:
		return -1;
	}
}

/* The value after '=' up to the end of its logical line. Outside quotes, blanks are trimmed at
 * both ends, inner runs of blanks become that many spaces, and # or ; starts a comment. NULL on
 * an unknown escape or an unclosed quote. */
static char *cfg_value(struct cfg_cursor *c)
{
	struct strbuf v = STRBUF_INIT;
	bool quoted = false, comment = false;
	size_t spaces = 0;
	sb_add(&v, "");
	for (;;) {
		int ch = cfg_next(c);
		if (ch == '\n') {
			if (!quoted)
				return sb_steal(&v);
			break;
		}
		if (comment)
			continue;
		if (!quoted && isspace(ch)) {
			spaces += v.len > 0;
			continue;
		}
		if (!quoted && (ch == '#' || ch == ';')) {
			comment = true;
			continue;
		}
		for (; spaces; spaces--)
			sb_addc(&v, ' ');
		if (ch == '"') {
			quoted = !quoted;
			continue;
		}
		if (ch == '\\') {
			ch = cfg_next(c);
			if (ch == '\n')
				continue; /* a continuation line */
			ch = cfg_escape(ch);
			if (ch < 0)
				break;
		}
		sb_addc(&v, (char)ch);
	}
	sb_free(&v);
	return NULL;
}

/* A variable line starting with `first` (a letter): `name`, `name = value`. */
static int cfg_variable(struct cfg_cursor *c, int first, struct strbuf *key, char **value)
{
	sb_addc(key, (char)tolower(first));
	int ch;
	for (;;) {
		ch = cfg_next(c);
		if (!isalnum(ch) && ch != '-')
			break;
		sb_addc(key, (char)tolower(ch));
	}
	while (ch == ' ' || ch == '\t')
		ch = cfg_next(c);
	*value = NULL;
	if (ch == '\n')
		return 0;
	if (ch != '=')
		return -1;
	*value = cfg_value(c);
	return *value ? 0 : -1;
}

int git_config_each(const char *text, git_config_fn fn, void *ctx)
{
	struct cfg_cursor c = {.s = text};
	if (strncmp(c.s, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte order mark, as git allows */
		c.s += 3;
	struct strbuf sec = STRBUF_INIT, sub = STRBUF_INIT, key = STRBUF_INIT;
	bool has_sub = false;
	int rc = 0;
	for (;;) {
		int ch = cfg_next(&c);
		if (c.eof)
			break;
		if (isspace(ch))
			continue;
		if (ch == '#' || ch == ';') {
			while (cfg_next(&c) != '\n')
				;
			continue;
		}
		if (ch == '[') {
			buf_reset(&sec);
			buf_reset(&sub);
			has_sub = false;
			rc = cfg_header(&c, &sec, &sub, &has_sub);
			if (rc < 0)
				break;
			continue; /* git allows a variable on the header's line */
		}
		char *value = NULL;
		buf_reset(&key);
		if (!isalpha(ch) || cfg_variable(&c, ch, &key, &value) < 0) {
			rc = -1;
			break;
		}
		/* before any header, git files the variable under an empty section */
		rc = fn(sb_str(&sec), has_sub ? sb_str(&sub) : NULL, key.s, value, ctx);
		free(value);
		if (rc)
			break;
	}
	sb_free(&sec);
	sb_free(&sub);
	sb_free(&key);
	return rc;
}

/* ---- the judge ---- */

/* The kinds of value a harmless key may have. */
enum vkind {
	V_BOOL,      /* true/false/yes/no/on/off, an integer, empty, or no "=" at all */
	V_INT,       /* [-]digits[kmg] */
	V_VERSION,   /* core.repositoryformatversion: 0 or 1 */
	V_TEXT,      /* any text (a name, an e-mail, a description) */
	V_NAME,      /* a branch, remote or ref name: letters, digits, . _ / + - ; not "-…" */
	V_URL,       /* a remote's URL: no transport helper ("X::…"), no option ("-…") */
	V_ENUM,      /* one of `words` ("|"-separated), case-insensitive */
	V_BOOL_ENUM, /* a boolean or one of `words` */
};

/* A key known to run nothing. sub: whether the section takes a subsection ([remote "o"]). */
struct harmless {
	const char *section;
	bool sub;
	const char *key;
	enum vkind kind;
	const char *words;
};

static const struct harmless harmless[] = {
	{"core", false, "repositoryformatversion", V_VERSION, NULL},
	{"core", false, "filemode", V_BOOL, NULL},
	{"core", false, "bare", V_BOOL, NULL},
	{"core", false, "logallrefupdates", V_BOOL_ENUM, "always"},
	{"core", false, "ignorecase", V_BOOL, NULL},
	{"core", false, "precomposeunicode", V_BOOL, NULL},
	{"core", false, "symlinks", V_BOOL, NULL},
	{"core", false, "autocrlf", V_BOOL_ENUM, "input"},
	{"core", false, "eol", V_ENUM, "lf|crlf|native"},
	{"core", false, "safecrlf", V_BOOL_ENUM, "warn"},
	{"core", false, "quotepath", V_BOOL, NULL},
	{"core", false, "checkstat", V_ENUM, "default|minimal"},
	{"core", false, "trustctime", V_BOOL, NULL},
	{"core", false, "abbrev", V_INT, NULL},
	{"core", false, "compression", V_INT, NULL},
	{"core", false, "loosecompression", V_INT, NULL},
	{"extensions", false, "objectformat", V_ENUM, "sha1|sha256"},
	{"extensions", false, "refstorage", V_ENUM, "files|reftable"},
	{"user", false, "name", V_TEXT, NULL},
	{"user", false, "email", V_TEXT, NULL},
	{"user", false, "useconfigonly", V_BOOL, NULL},
	{"author", false, "name", V_TEXT, NULL},
	{"author", false, "email", V_TEXT, NULL},
	{"committer", false, "name", V_TEXT, NULL},
	{"committer", false, "email", V_TEXT, NULL},
	{"init", false, "defaultbranch", V_NAME, NULL},
	{"branch", true, "remote", V_NAME, NULL},
	{"branch", true, "pushremote", V_NAME, NULL},
	{"branch", true, "merge", V_NAME, NULL},
	{"branch", true, "rebase", V_BOOL_ENUM, "merges"},
	{"branch", true, "description", V_TEXT, NULL},
	{"remote", true, "url", V_URL, NULL},
	{"remote", true, "pushurl", V_URL, NULL},
	{"remote", true, "fetch", V_TEXT, NULL},
	{"remote", true, "push", V_TEXT, NULL},
	{"remote", true, "tagopt", V_ENUM, "--tags|--no-tags"},
	{"remote", true, "prune", V_BOOL, NULL},
	{"remote", true, "prunetags", V_BOOL, NULL},
	{"remote", true, "mirror", V_BOOL, NULL},
	{"remote", true, "skipdefaultupdate", V_BOOL, NULL},
	{"remote", true, "promisor", V_BOOL, NULL},
	{"remote", true, "partialclonefilter", V_TEXT, NULL},
	{"submodule", true, "url", V_URL, NULL},
	{"submodule", true, "active", V_BOOL, NULL},
	{"submodule", true, "branch", V_NAME, NULL},
	{"submodule", true, "update", V_ENUM, "checkout|rebase|merge|none"},
	{"pull", false, "rebase", V_BOOL_ENUM, "merges"},
	{"pull", false, "ff", V_BOOL_ENUM, "only"},
	{"push", false, "default", V_ENUM, "nothing|current|upstream|simple|matching"},
	{"push", false, "autosetupremote", V_BOOL, NULL},
	{"fetch", false, "prune", V_BOOL, NULL},
};

/* Keys known to make git run a command, connect elsewhere or look elsewhere: the words for
 * the line. key NULL: every key of the section; sub: only with a subsection. */
static const struct {
	const char *section;
	const char *key;
	const char *why;
} runs[] = {
	{"core", "fsmonitor", "which runs a command"},
	{"core", "hookspath", "which runs hooks from another directory"},
	{"core", "pager", "which runs a command"},
	{"core", "editor", "which runs a command"},
	{"core", "sshcommand", "which runs a command"},
	{"core", "askpass", "which runs a command"},
	{"core", "gitproxy", "which runs a command"},
	{"core", "worktree", "which points git at another directory"},
	{"core", "alternaterefscommand", "which runs a command"},
	{"core", "attributesfile", "which reads attributes (filter drivers) from another file"},
	{"core", "excludesfile", "which reads another file"},
	{"core", "sharedrepository", "which changes who may write the repository"},
	{"sequence", "editor", "which runs a command"},
	{"diff", "external", "which runs a command"},
	{"diff", "command", "which runs a command"},
	{"diff", "textconv", "which runs a command"},
	{"merge", "driver", "which runs a command"},
	{"filter", NULL, "which runs a command (a filter driver)"},
	{"credential", NULL, "which runs a command (a credential helper)"},
	{"gpg", NULL, "which runs a command"},
	{"alias", NULL, "which can run a command"},
	{"pager", NULL, "which runs a command"},
	{"interactive", "difffilter", "which runs a command"},
	{"uploadpack", "packobjectshook", "which runs a command"},
	{"remote", "uploadpack", "which runs a command"},
	{"remote", "receivepack", "which runs a command"},
	{"remote", "vcs", "which runs a remote helper"},
	{"url", NULL, "which rewrites where git connects"},
	{"protocol", NULL, "which allows other transports"},
	{"difftool", NULL, "which runs a command"},
	{"mergetool", NULL, "which runs a command"},
	{"sendemail", NULL, "which runs a command"},
	{"web", "browser", "which runs a command"},
	{"browser", NULL, "which runs a command"},
	{"man", NULL, "which runs a command"},
	{"guitool", NULL, "which runs a command"},
	{"tar", NULL, "which runs a command"},
	{"ssh", "variant", "which changes how git runs ssh"},
	{"imap", "tunnel", "which runs a command"},
	{"extensions", "worktreeconfig", "which makes git read config.worktree"},
	{"submodule", "update", "which can run a command"},
	{"http", NULL, "which changes how git connects"},
};

static bool is_bool(const char *v)
{
	static const char *const words[] = {"true", "false", "yes", "no", "on", "off", NULL};
	if (!v || !*v)
		return true; /* no "=" is true; an empty value is false */
	for (size_t i = 0; words[i]; i++)
		if (!strcasecmp(v, words[i]))
			return true;
	const char *p = v + (*v == '-');
	if (!*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static bool is_int(const char *v)
{
	const char *p = v + (*v == '-');
	size_t digits = strspn(p, "0123456789");
	if (!digits || digits > 10)
		return false;
	p += digits;
	if (*p && strchr("kKmMgG", *p))
		p++;
	return *p == '\0';
}

static bool in_words(const char *v, const char *words)
{
	size_t n = strlen(v);
	for (const char *w = words; *w;) {
		size_t k = strcspn(w, "|");
		if (k == n && !strncasecmp(w, v, n))
			return true;
		w += k + (w[k] == '|');
	}
	return false;
}

static bool is_name(const char *v)
{
	if (!*v || *v == '-')
		return false;
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._/+-", *p))
			return false;
	return true;
}

/* A URL git fetches from without running anything of the repository's: no "TRANSPORT::" (a
 * remote helper, "ext::" runs a command), nothing that an ssh command line would take as an
 * option, no blank or control character. */
static bool is_url(const char *v)
{
	if (!*v || *v == '-' || strstr(v, "::") || strstr(v, "://-") || strstr(v, "@-"))
		return false;
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return false;
	const char *sep = strstr(v, "://");
	if (!sep)
		return true; /* a path, or host:path (scp-like): git's own transports */
	static const char *const schemes[] = {"https", "http", "ssh", "git", "file", "git+ssh",
					      "ssh+git", NULL};
	for (size_t i = 0; schemes[i]; i++)
		if ((size_t)(sep - v) == strlen(schemes[i]) &&
		    !strncasecmp(v, schemes[i], strlen(schemes[i])))
			return true;
	return false;
}

static bool value_ok(const struct harmless *h, const char *v)
{
	if (!v)
		return h->kind == V_BOOL || h->kind == V_BOOL_ENUM;
	switch (h->kind) {
	case V_BOOL:
		return is_bool(v);
	case V_INT:
		return is_int(v);
	case V_VERSION:
		return !strcmp(v, "0") || !strcmp(v, "1");
	case V_TEXT:
		return true;
	case V_NAME:
		return is_name(v);
	case V_URL:
		return is_url(v);
	case V_ENUM:
		return in_words(v, h->words);
	case V_BOOL_ENUM:
		return is_bool(v) || in_words(v, h->words);
	}
	return false;
}

struct judging {
	struct gitcfg_judgement *j;
	const char *why; /* the runs[] words of the first key not harmless, or NULL */
};

static void set_key(struct gitcfg_judgement *j, const char *section, const char *sub,
		    const char *key)
{
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, section);
	if (sub) {
		sb_addc(&b, '.');
		/* the jail chose it: letters, digits and a few marks, the rest '?', at most 40 */
		size_t n = 0;
		for (const char *p = sub; *p && n < 40; p++, n++)
			sb_addc(&b, isalnum((unsigned char)*p) || strchr("._-/", *p) ? *p : '?');
		if (strlen(sub) > 40)
			sb_add(&b, "…");
	}
	sb_addf(&b, ".%s", key);
	snprintf(j->key, sizeof j->key, "%s", sb_str(&b));
	sb_free(&b);
}

static int judge_one(const char *section, const char *sub, const char *key, const char *value,
		     void *ctx)
{
	struct judging *g = ctx;
	struct gitcfg_judgement *j = g->j;
	enum gitcfg_verdict v = GITCFG_UNKNOWN;
	const char *why = NULL;
	bool bad_value = false;
	bool include = (!strcmp(section, "include") && !sub) || !strcmp(section, "includeif");
	if (include && !strcmp(key, "path")) {
		v = GITCFG_INCLUDES;
	} else {
		for (size_t i = 0; i < sizeof harmless / sizeof *harmless; i++) {
			const struct harmless *h = &harmless[i];
			if (!strcmp(h->section, section) && h->sub == (sub != NULL) &&
			    !strcmp(h->key, key)) {
				if (value_ok(h, value))
					return 0;
				/* a known key with a value not of its kind */
				bad_value = true;
				if (h->kind == V_URL) {
					v = GITCFG_RUNS;
					why = "whose URL names a remote helper or an option (ext:: "
					      "runs a command)";
				}
				break;
			}
		}
		for (size_t i = 0; !why && i < sizeof runs / sizeof *runs; i++)
			if (!strcmp(runs[i].section, section) &&
			    (!runs[i].key || !strcmp(runs[i].key, key))) {
				v = GITCFG_RUNS;
				why = runs[i].why;
				break;
			}
		if (!why && bad_value)
			why = "with a value agentjail does not know to be harmless";
	}
	if (j->verdict != GITCFG_HARMLESS) {
		j->others++;
		return 0;
	}
	j->verdict = v;
	g->why = why;
	set_key(j, section, sub, key);
	return 0;
}

/* Strictness before the syntax: what git itself never writes into a config it creates. */
static const char *not_plain(const char *text, size_t len)
{
	if (len > GITCFG_MAX)
		return "larger than agentjail reads";
	if (strlen(text) != len)
		return "a NUL byte";
	if (!strncmp(text, "\xef\xbb\xbf", 3))
		return "a byte order mark";
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\r')
			return "a carriage return";
		if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
			return "a control character";
	}
	return NULL;
}

void gitcfg_judge(const char *text, size_t len, struct gitcfg_judgement *out)
{
	memset(out, 0, sizeof *out);
	out->what = not_plain(text, len);
	if (out->what) {
		out->verdict = GITCFG_UNPARSABLE;
		return;
	}
	struct judging g = {.j = out};
	if (git_config_each(text, judge_one, &g) < 0) {
		/* what came before the error was judged; the error itself decides */
		out->verdict = GITCFG_UNPARSABLE;
		out->what = "a line git would refuse";
		out->key[0] = '\0';
		out->others = 0;
		return;
	}
	out->why = g.why;
}

char *gitcfg_explain(const struct gitcfg_judgement *j)
{
	_cleanup_free_ char *more =
		j->others ? xasprintf(" (and %zu more key%s not known to be harmless)", j->others,
				     j->others == 1 ? "" : "s")
			  : xstrdup("");
	switch (j->verdict) {
	case GITCFG_HARMLESS:
		return NULL;
	case GITCFG_RUNS:
		return xasprintf("it sets %s, %s%s", j->key, j->why ? j->why : "which runs a command",
				 more);
	case GITCFG_INCLUDES:
		return xasprintf("it sets %s, which includes another file%s", j->key, more);
	case GITCFG_UNKNOWN:
		return xasprintf("it sets %s, %s%s", j->key,
				 j->why ? j->why : "which agentjail does not know to be harmless", more);
	case GITCFG_UNPARSABLE:
		return xasprintf("it is not plain git config (%s)", j->what ? j->what : "?");
	}
	return NULL;
}
