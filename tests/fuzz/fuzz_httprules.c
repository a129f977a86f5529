/* Fuzz target: request rules and secrets' definitions (core/plan/httprules, core/plan/secrets,
 * doc/design.md §4d). A project's .agentjail.toml may hold allow_http rules, and the jail writes
 * the requests they judge. The input is lines: a rule, a method, a host, a request target (its
 * bytes), then a secret's name, header and hosts (blank-separated).
 * Invariants: a rule is accepted whole (method, a path from '/', no port) or refused with a
 * reason; the glob matches exactly when a plain dynamic-programming reference does; a request is
 * allowed only by a rule of its host whose method and path match, and a refusal is one printable
 * line; a path the target check refuses is never allowed; the label is printable and cut; a
 * secret accepted is normalized (a lower-case header, hosts), survives its JSON and is described
 * on one printable line. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/httprules.h"
#include "core/plan/secrets.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next '\n'-terminated piece of [*p, end) (the last runs to end), as a C string. */
static char *next_line(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *s = *p;
	const uint8_t *nl = memchr(s, '\n', (size_t)(end - s));
	const uint8_t *e = nl ? nl : end;
	*len = (size_t)(e - s);
	*p = nl ? nl + 1 : end;
	return fuzz_cstr(s, *len);
}

/* '*' matches any run of bytes: the reference, by dynamic programming over prefixes. */
static bool glob_ref(const char *g, const char *s, size_t n)
{
	size_t gn = strlen(g);
	bool *row = calloc(n + 1, sizeof *row), *nrow = calloc(n + 1, sizeof *nrow);
	FUZZ_CHECK(row && nrow);
	row[0] = true; /* the empty glob matches the empty prefix */
	for (size_t i = 0; i < gn; i++) {
		memset(nrow, 0, (n + 1) * sizeof *nrow);
		for (size_t j = 0; j <= n; j++) {
			if (g[i] == '*')
				nrow[j] = row[j] || (j && nrow[j - 1]);
			else
				nrow[j] = j && row[j - 1] && s[j - 1] == g[i];
		}
		bool *t = row;
		row = nrow;
		nrow = t;
	}
	bool r = row[n];
	free(row);
	free(nrow);
	return r;
}

static bool printable_line(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static void check_rules(const char *spec, const char *method, const char *host, const char *t,
			size_t tn)
{
	struct http_rule r;
	struct err e = {0};
	if (http_rule_parse(spec, &r, &e) < 0) {
		FUZZ_CHECK(e.what[0]);
		return;
	}
	FUZZ_CHECK(r.method && r.path && r.path[0] == '/' && !strcmp(r.spec, spec));
	FUZZ_CHECK(r.host.port == 0);
	http_rule_free(&r);

	struct strv rules = STRV_INIT;
	strv_push(&rules, spec);
	struct inspect in;
	FUZZ_CHECK(inspect_build(&rules, NULL, &in, &e) == 0);
	FUZZ_CHECK(in.n_rules == 1 && inspect_any(&in));
	const struct http_rule *by = NULL;
	char *reason = NULL;
	int rc = inspect_request(&in, method, host, t, tn, &by, &reason);
	bool ruled = netrule_host_matches(&in.rules[0].host, host);
	FUZZ_CHECK(inspect_host(&in, host) == ruled);
	if (rc == 0) {
		FUZZ_CHECK(!reason);
		if (ruled) { /* allowed by the rule, which matches */
			FUZZ_CHECK(by == &in.rules[0]);
			FUZZ_CHECK(!strcmp(by->method, "*") || !strcmp(by->method, method));
			FUZZ_CHECK(glob_ref(by->path, t, tn));
			FUZZ_CHECK(!http_target_refusal(t, tn));
		} else {
			FUZZ_CHECK(!by);
		}
	} else {
		FUZZ_CHECK(rc == -1 && ruled && reason && !by);
		if (printable_line(method) && printable_line(host))
			FUZZ_CHECK(printable_line(reason));
	}
	free(reason);
	inspect_free(&in);
	strv_free(&rules);
}

static void check_secret(const char *name, const char *header, const char *hosts)
{
	struct strv h = STRV_INIT;
	char *copy = strdup(hosts);
	FUZZ_CHECK(copy);
	for (char *save = NULL, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		strv_push(&h, w);
	free(copy);
	struct secret_def d;
	struct err e = {0};
	if (secret_def_make(name, &h, header, NULL, NULL, "fuzz:1", &d, &e) < 0) {
		FUZZ_CHECK(e.what[0]);
		strv_free(&h);
		return;
	}
	FUZZ_CHECK(d.hosts.n > 0 && d.src == SS_ENV && !strcmp(d.env, name));
	for (const char *c = d.header; *c; c++)
		FUZZ_CHECK(!(*c >= 'A' && *c <= 'Z'));
	for (size_t i = 0; i < d.hosts.n; i++)
		FUZZ_CHECK(d.hosts.v[i][0] == '*' || secret_for_host(&d, d.hosts.v[i]));
	char *line = secret_describe(&d);
	FUZZ_CHECK(line && printable_line(line));
	free(line);
	char *ph = secret_placeholder(name);
	FUZZ_CHECK(!strncmp(ph, SECRET_PLACEHOLDER_PREFIX, strlen(SECRET_PLACEHOLDER_PREFIX)));
	free(ph);

	struct secret_set s = {0}, back = {0};
	secret_set_put(&s, &d);
	json_t *j = secrets_to_json(&s);
	FUZZ_CHECK(j);
	FUZZ_CHECK(secrets_from_json(j, &back, &e) == 0);
	FUZZ_CHECK(back.n == 1);
	const struct secret_def *b = &back.v[0];
	FUZZ_CHECK(!strcmp(b->name, d.name) && !strcmp(b->header, d.header) &&
		   b->hosts.n == d.hosts.n && b->src == d.src && !strcmp(b->env, d.env));
	for (size_t i = 0; i < d.hosts.n; i++)
		FUZZ_CHECK(!strcmp(b->hosts.v[i], d.hosts.v[i]));
	json_decref(j);
	secret_set_free(&back);
	secret_set_free(&s);
	secret_def_free(&d);
	strv_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	size_t n, tn;
	char *spec = next_line(&p, end, &n);
	char *method = next_line(&p, end, &n);
	char *host = next_line(&p, end, &n);
	char *target = next_line(&p, end, &tn);
	char *name = next_line(&p, end, &n);
	char *header = next_line(&p, end, &n);
	char *hosts = next_line(&p, end, &n);
	/* the target's bytes as the flow holds them: exactly tn, a NUL inside included */
	char *t = fuzz_dup(target, tn);

	FUZZ_CHECK(http_glob_match(spec, t, tn) == glob_ref(spec, t, tn));
	char *label = http_request_label(method, host, t, tn, 64);
	FUZZ_CHECK(label && strlen(label) <= 64);
	if (printable_line(method) && printable_line(host))
		FUZZ_CHECK(printable_line(label));
	free(label);
	check_rules(spec, method, host, t, tn);
	check_secret(name, header, hosts);

	free(t);
	free(spec);
	free(method);
	free(host);
	free(target);
	free(name);
	free(header);
	free(hosts);
	return 0;
}
