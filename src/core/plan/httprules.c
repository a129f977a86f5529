/* httprules: request rules and the inspected names (httprules.h, doc/design.md §4d). */
#include "core/plan/httprules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

void http_rule_free(struct http_rule *r)
{
	free(r->method);
	netrule_free(&r->host);
	free(r->path);
	free(r->spec);
	memset(r, 0, sizeof *r);
}

static bool method_ok(const char *m, size_t n)
{
	if (n == 1 && m[0] == '*')
		return true;
	if (n == 0 || n > 15)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(m[i] >= 'A' && m[i] <= 'Z') && m[i] != '-' && m[i] != '_')
			return false;
	return true;
}

int http_rule_parse(const char *spec, struct http_rule *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	const char *sp = strchr(spec, ' ');
	if (!sp)
		return err_set(e, 0, spec, "a request rule is METHOD HOST/PATH (GET github.com/*, "
					   "POST api.example.com/v1/messages*)");
	if (!method_ok(spec, (size_t)(sp - spec)))
		return err_set(e, 0, spec, "a request rule's method is an upper-case HTTP method "
					   "(GET, POST) or * for any");
	const char *hp = sp + 1;
	while (*hp == ' ')
		hp++;
	const char *slash = strchr(hp, '/');
	if (!slash || slash == hp)
		return err_set(e, 0, spec, "a request rule needs a host and a path: METHOD "
					   "HOST/PATH (the path may be /*)");
	for (const char *c = slash; *c; c++)
		if ((unsigned char)*c <= 0x20 || *c == 0x7f)
			return err_set(e, 0, spec, "a request rule's path has a blank or a control "
						   "character");
	char *h = xstrndup(hp, (size_t)(slash - hp));
	struct err he = {0};
	int rc = netrule_parse(h, &out->host, &he);
	free(h);
	if (rc < 0) {
		http_rule_free(out);
		return err_set(e, 0, spec, "a request rule's host: %s", he.what);
	}
	if (out->host.port) {
		http_rule_free(out);
		return err_set(e, 0, spec, "a request rule names no port: it holds for every port "
					   "of its host");
	}
	out->method = xstrndup(spec, (size_t)(sp - spec));
	out->path = xstrdup(slash);
	out->spec = xstrdup(spec);
	return 0;
}

int inspect_build(const struct strv *allow_http, const struct secret_set *secrets,
		  struct inspect *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; allow_http && i < allow_http->n; i++) {
		struct http_rule r;
		if (http_rule_parse(allow_http->v[i], &r, e) < 0) {
			inspect_free(out);
			return -1;
		}
		out->rules = xrealloc(out->rules, (out->n_rules + 1) * sizeof *out->rules);
		out->rules[out->n_rules++] = r;
	}
	for (size_t i = 0; secrets && i < secrets->n; i++) {
		secret_set_put(&out->secrets, &secrets->v[i]);
		strv_push_take(&out->placeholders, secret_placeholder(secrets->v[i].name));
	}
	return 0;
}

void inspect_free(struct inspect *in)
{
	for (size_t i = 0; i < in->n_rules; i++)
		http_rule_free(&in->rules[i]);
	free(in->rules);
	secret_set_free(&in->secrets);
	strv_free(&in->placeholders);
	memset(in, 0, sizeof *in);
}

bool inspect_any(const struct inspect *in)
{
	return in && (in->n_rules || in->secrets.n);
}

static bool ruled(const struct inspect *in, const char *host)
{
	for (size_t i = 0; i < in->n_rules; i++)
		if (netrule_host_matches(&in->rules[i].host, host))
			return true;
	return false;
}

bool inspect_host(const struct inspect *in, const char *host)
{
	if (!in)
		return false;
	if (ruled(in, host))
		return true;
	for (size_t i = 0; i < in->secrets.n; i++)
		if (secret_for_host(&in->secrets.v[i], host))
			return true;
	return false;
}

static bool hexpair_is(const char *p, size_t left, char a, char b)
{
	return left >= 3 && p[0] == '%' && p[1] == a && (p[2] == b || p[2] == (char)(b - 'a' + 'A'));
}

const char *http_target_refusal(const char *t, size_t n)
{
	if (!n || t[0] != '/')
		return "the request target is not a path (origin-form)";
	size_t end = 0; /* the path ends at the query */
	while (end < n && t[end] != '?')
		end++;
	for (size_t i = 0; i < n; i++) {
		if (t[i] == '\\')
			return "the request target has a backslash";
		if (t[i] == '#')
			return "the request target has a fragment ('#')";
		if (t[i] == '%' && (hexpair_is(t + i, n - i, '2', 'e') ||
				    hexpair_is(t + i, n - i, '2', 'f') ||
				    hexpair_is(t + i, n - i, '5', 'c')))
			return "the request target has an encoded '.', '/' or '\\' (%2e, %2f, %5c)";
	}
	for (size_t i = 0; i < end; i++) {
		if (t[i] != '/')
			continue;
		size_t j = i + 1, k = j;
		while (k < end && t[k] != '/')
			k++;
		if ((k - j == 1 && t[j] == '.') || (k - j == 2 && t[j] == '.' && t[j + 1] == '.'))
			return "the request target has a '.' or '..' segment";
	}
	return NULL;
}

bool http_glob_match(const char *g, const char *s, size_t n)
{
	size_t si = 0, star_g = (size_t)-1, star_s = 0, gi = 0;
	size_t gn = strlen(g);
	while (si < n) {
		if (gi < gn && g[gi] == '*') {
			star_g = gi++;
			star_s = si;
		} else if (gi < gn && g[gi] == s[si]) {
			gi++;
			si++;
		} else if (star_g != (size_t)-1) {
			gi = star_g + 1;
			si = ++star_s;
		} else {
			return false;
		}
	}
	while (gi < gn && g[gi] == '*')
		gi++;
	return gi == gn;
}

char *http_request_label(const char *method, const char *host, const char *target, size_t len,
			 size_t max)
{
	struct strbuf b = STRBUF_INIT;
	sb_addf(&b, "%s %s", method, host);
	for (size_t i = 0; i < len && target[i] != '?' && b.len < max; i++) {
		unsigned char c = (unsigned char)target[i];
		sb_addc(&b, c > 0x20 && c < 0x7f && c != '\'' ? (char)c : '?');
	}
	if (b.len > max) {
		b.s[max] = '\0';
		b.len = max;
	}
	return sb_steal(&b);
}

int inspect_request(const struct inspect *in, const char *method, const char *host,
		    const char *target, size_t len, const struct http_rule **rule, char **reason)
{
	if (rule)
		*rule = NULL;
	*reason = NULL;
	if (!in || !ruled(in, host))
		return 0;
	const char *bad = http_target_refusal(target, len);
	if (bad) {
		char *label = http_request_label(method, host, target, len, 200);
		*reason = xasprintf("%s: %s (a host with request rules takes plain paths only)",
				    label, bad);
		free(label);
		return -1;
	}
	for (size_t i = 0; i < in->n_rules; i++) {
		const struct http_rule *r = &in->rules[i];
		if (!netrule_host_matches(&r->host, host))
			continue;
		if (strcmp(r->method, "*") && strcmp(r->method, method))
			continue;
		if (!http_glob_match(r->path, target, len))
			continue;
		if (rule)
			*rule = r;
		return 0;
	}
	char *label = http_request_label(method, host, target, len, 200);
	*reason = xasprintf("%s is not allowed by the request rules for %s (add --allow-http "
			    "'%s')", label, host, label);
	free(label);
	return -1;
}
