/* secrets: definitions, built-ins, placeholders and which secrets a run uses (secrets.h). */
#include "core/plan/secrets.h"

#include <jansson.h>
#include <string.h>

#include "core/plan/netrules.h"
#include "core/plan/policy.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

void secret_def_free(struct secret_def *d)
{
	free(d->name);
	strv_free(&d->hosts);
	free(d->header);
	free(d->env);
	strv_free(&d->command);
	free(d->origin);
	memset(d, 0, sizeof *d);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void secret_def_copy(struct secret_def *dst, const struct secret_def *src)
{
	memset(dst, 0, sizeof *dst);
	dst->name = dup_or_null(src->name);
	strv_copy(&dst->hosts, &src->hosts);
	dst->header = dup_or_null(src->header);
	dst->src = src->src;
	dst->env = dup_or_null(src->env);
	strv_copy(&dst->command, &src->command);
	dst->origin = dup_or_null(src->origin);
}

void secret_set_free(struct secret_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		secret_def_free(&s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

const struct secret_def *secret_set_find(const struct secret_set *s, const char *name)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

void secret_set_put(struct secret_set *s, const struct secret_def *d)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, d->name)) {
			secret_def_free(&s->v[i]);
			secret_def_copy(&s->v[i], d);
			return;
		}
	s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
	secret_def_copy(&s->v[s->n++], d);
}

/* ---- checks ---- */

static bool name_ok(const char *s)
{
	return env_name_valid(s, strlen(s));
}

/* RFC 9110 token characters */
static bool token_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *s)))
			return false;
	return true;
}

int secret_def_make(const char *name, const struct strv *hosts, const char *header,
		    const char *env, const struct strv *command, const char *origin,
		    struct secret_def *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (!name_ok(name))
		return err_set(e, 0, name, "a secret's name is the variable inside the jail: "
					   "letters, digits and _, not starting with a digit");
	if (!hosts || !hosts->n)
		return err_set(e, 0, name, "secret %s names no host (`hosts = [\"api.example.com\"]`)",
			       name);
	if (!header || !token_ok(header))
		return err_set(e, 0, name, "secret %s needs `header`: the name of the header that "
					   "carries it (x-api-key, Authorization)", name);
	if (env && command && command->n)
		return err_set(e, 0, name, "secret %s gives both `env` and `command`: its value "
					   "comes from one of them", name);
	if (env && !name_ok(env))
		return err_set(e, 0, env, "secret %s: `env` must be a variable name", name);
	if (command && command->n && !command->v[0][0])
		return err_set(e, 0, name, "secret %s: `command` starts with an empty word", name);
	struct secret_def d = {0};
	d.name = xstrdup(name);
	for (size_t i = 0; i < hosts->n; i++) {
		struct netrule r;
		struct err he = {0};
		if (netrule_parse(hosts->v[i], &r, &he) < 0 || r.port) {
			if (!he.what[0])
				err_set(&he, 0, hosts->v[i], "a port (a secret is for every port of "
							     "its hosts)");
			netrule_free(&r);
			secret_def_free(&d);
			return err_set(e, 0, hosts->v[i], "secret %s: host `%s`: %s", name,
				       hosts->v[i], he.what);
		}
		char *h = r.kind == NR_WILDCARD ? xasprintf("*.%s", r.host) : xstrdup(r.host);
		if (!strv_contains(&d.hosts, h))
			strv_push(&d.hosts, h);
		free(h);
		netrule_free(&r);
	}
	d.header = xstrdup(header);
	for (char *c = d.header; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	if (command && command->n) {
		d.src = SS_COMMAND;
		strv_copy(&d.command, command);
	} else {
		d.src = SS_ENV;
		d.env = xstrdup(env ? env : name);
	}
	d.origin = xstrdup(origin ? origin : "built-in");
	*out = d;
	return 0;
}

/* ---- built-ins ---- */

static struct secret_set builtins;

/* The variable naming where each agent sends its key when the user points it elsewhere (a
 * gateway, a stand-in): the built-in secret then goes to that URL's host instead. */
static const struct {
	const char *name, *base_env;
} base_urls[] = {{"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"},
		 {"OPENAI_API_KEY", "OPENAI_BASE_URL"},
		 {"GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"},
		 {"GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"}};

static void builtin(const char *name, const char *host, const char *header)
{
	struct strv hosts = STRV_INIT;
	strv_push(&hosts, host);
	struct secret_def d;
	struct err e = {0};
	if (secret_def_make(name, &hosts, header, NULL, NULL, "built-in", &d, &e) < 0)
		abort(); /* the table below is ours */
	secret_set_put(&builtins, &d);
	secret_def_free(&d);
	strv_free(&hosts);
}

const struct secret_set *secret_builtins(void)
{
	if (!builtins.n) {
		builtin("ANTHROPIC_API_KEY", "api.anthropic.com", "x-api-key");
		builtin("OPENAI_API_KEY", "api.openai.com", "Authorization");
		builtin("GEMINI_API_KEY", "generativelanguage.googleapis.com", "x-goog-api-key");
		builtin("GOOGLE_API_KEY", "generativelanguage.googleapis.com", "x-goog-api-key");
	}
	return &builtins;
}

/* ---- use ---- */

char *secret_placeholder(const char *name)
{
	return xasprintf(SECRET_PLACEHOLDER_PREFIX "%s", name);
}

bool secret_for_host(const struct secret_def *d, const char *host)
{
	for (size_t i = 0; i < d->hosts.n; i++) {
		const char *h = d->hosts.v[i];
		if (!strncmp(h, "*.", 2)) {
			size_t hn = strlen(host), sn = strlen(h + 2);
			if (hn > sn + 1 && host[hn - sn - 1] == '.' && !strcmp(host + hn - sn, h + 2))
				return true;
		} else if (!strcmp(h, host)) {
			return true;
		}
	}
	return false;
}

static const char *env_get(const struct strv *env, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; env && i < env->n; i++)
		if (!strncmp(env->v[i], name, n) && env->v[i][n] == '=')
			return env->v[i] + n + 1;
	return NULL;
}

/* The normalized host of "scheme://HOST[:PORT][/…]", or NULL. */
static char *url_host(const char *url)
{
	const char *p = url ? strstr(url, "://") : NULL;
	if (!p)
		return NULL;
	p += 3;
	size_t n = p[0] == '[' ? strcspn(p, "]") + 1 : strcspn(p, ":/?#");
	if (!n || memchr(p, '@', strcspn(p, "/?#")))
		return NULL; /* no host, or credentials in the URL: not guessed at */
	char *raw = xstrndup(p, n), *host = NULL;
	struct err e = {0};
	if (net_host_normalize(raw, &host, &e) < 0)
		host = NULL;
	free(raw);
	return host;
}

/* A built-in whose agent the user pointed at another base URL: for that URL's host. */
static void builtin_for_base(struct secret_def *d, const struct strv *host_env)
{
	for (size_t i = 0; i < sizeof base_urls / sizeof *base_urls; i++) {
		if (strcmp(base_urls[i].name, d->name))
			continue;
		char *host = url_host(env_get(host_env, base_urls[i].base_env));
		if (!host)
			return;
		strv_free(&d->hosts);
		strv_push_take(&d->hosts, host);
		free(d->origin);
		d->origin = xasprintf("built-in, for $%s", base_urls[i].base_env);
	}
}

void secrets_active(const struct secret_set *defined, const struct strv *pol_env,
		    const struct strv *host_env, struct secret_set *out)
{
	const struct secret_set *sets[2] = {defined, secret_builtins()};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; sets[k] && i < sets[k]->n; i++) {
			const struct secret_def *d = &sets[k]->v[i];
			if (secret_set_find(out, d->name))
				continue; /* defined in a file: the built-in is not used */
			if (k == 1 && secret_set_find(defined, d->name))
				continue;
			if (!strv_contains(pol_env, d->name))
				continue; /* not passed by name (or passed with a value of its own) */
			if (d->src == SS_ENV && !env_get(host_env, d->env))
				continue;
			if (k == 0) {
				secret_set_put(out, d);
				continue;
			}
			struct secret_def b;
			secret_def_copy(&b, d);
			builtin_for_base(&b, host_env);
			secret_set_put(out, &b);
			secret_def_free(&b);
		}
}

int secret_value_check(const char *name, const char *value, size_t len, struct err *e)
{
	if (!len)
		return err_set(e, 0, name, "secret %s: the value is empty", name);
	if (len > SECRET_VALUE_MAX)
		return err_set(e, 0, name, "secret %s: the value is longer than %d bytes", name,
			       SECRET_VALUE_MAX);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)value[i];
		if (c < 0x20 || c == 0x7f)
			return err_set(e, 0, name, "secret %s: the value holds a control byte at "
						   "offset %zu (a header cannot carry it)", name, i);
	}
	if (value[0] == ' ' || value[len - 1] == ' ')
		return err_set(e, 0, name, "secret %s: the value begins or ends with a blank",
			       name);
	return 0;
}

/* ---- JSON ---- */

static json_t *strv_to_json(const struct strv *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(a, json_string(v->v[i]));
	return a;
}

json_t *secrets_to_json(const struct secret_set *s)
{
	json_t *a = json_array();
	for (size_t i = 0; i < s->n; i++) {
		const struct secret_def *d = &s->v[i];
		json_t *o = json_pack("{s:s, s:o, s:s}", "name", d->name, "hosts",
				      strv_to_json(&d->hosts), "header", d->header);
		if (d->src == SS_COMMAND)
			json_object_set_new(o, "command", strv_to_json(&d->command));
		else
			json_object_set_new(o, "env", json_string(d->env));
		json_array_append_new(a, o);
	}
	return a;
}

static int json_strings(const json_t *a, struct strv *out)
{
	if (!json_is_array(a))
		return -1;
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		if (!json_is_string(v))
			return -1;
		strv_push(out, json_string_value(v));
	}
	return 0;
}

int secrets_from_json(const json_t *a, struct secret_set *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (!a)
		return 0;
	if (!json_is_array(a))
		return err_set(e, 0, "secrets", "the stored policy's secrets are not a list");
	size_t i;
	json_t *o;
	json_array_foreach(a, i, o)
	{
		const char *name = json_string_value(json_object_get(o, "name"));
		const char *header = json_string_value(json_object_get(o, "header"));
		const char *env = json_string_value(json_object_get(o, "env"));
		struct strv hosts = STRV_INIT, cmd = STRV_INIT;
		json_t *c = json_object_get(o, "command");
		struct secret_def d;
		int rc = !name || json_strings(json_object_get(o, "hosts"), &hosts) < 0 ||
				 (c && json_strings(c, &cmd) < 0)
			 ? err_set(e, 0, "secrets", "a stored secret is malformed")
			 : secret_def_make(name, &hosts, header, env, &cmd, "stored", &d, e);
		strv_free(&hosts);
		strv_free(&cmd);
		if (rc < 0) {
			secret_set_free(out);
			return -1;
		}
		secret_set_put(out, &d);
		secret_def_free(&d);
	}
	return 0;
}

char *secret_describe(const struct secret_def *d)
{
	struct strbuf b = STRBUF_INIT;
	sb_addf(&b, "%s → ", d->name);
	for (size_t i = 0; i < d->hosts.n; i++)
		sb_addf(&b, "%s%s", i ? ", " : "", d->hosts.v[i]);
	sb_addf(&b, " in %s, value from ", d->header);
	if (d->src == SS_ENV) {
		sb_addf(&b, "$%s", d->env);
	} else {
		sb_add(&b, "the command `");
		for (size_t i = 0; i < d->command.n; i++) {
			if (i)
				sb_add(&b, " ");
			sb_add_shquoted(&b, d->command.v[i]);
		}
		sb_add(&b, "`");
	}
	sb_addf(&b, " (%s)", d->origin);
	return sb_steal(&b);
}
