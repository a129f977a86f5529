/* Tests for core/plan/secrets (definitions, built-ins, which secrets a run uses, values, JSON)
 * and core/plan/httprules (request rules, the inspected names, targets) — doc/design.md §4d. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/httprules.h"
#include "core/plan/secrets.h"

static struct strv sv(const char *a, const char *b)
{
	struct strv v = STRV_INIT;
	if (a)
		strv_push(&v, a);
	if (b)
		strv_push(&v, b);
	return v;
}

static void defs(void **state)
{
	(void)state;
	struct strv hosts = sv("API.Example.COM.", "*.svc.example.org");
	struct secret_def d;
	struct err e = {0};
	assert_int_equal(secret_def_make("MY_TOKEN", &hosts, "Authorization", NULL, NULL,
					 "/c.toml:3", &d, &e), 0);
	assert_string_equal(d.hosts.v[0], "api.example.com");
	assert_string_equal(d.hosts.v[1], "*.svc.example.org");
	assert_string_equal(d.header, "authorization");
	assert_int_equal(d.src, SS_ENV);
	assert_string_equal(d.env, "MY_TOKEN");
	assert_true(secret_for_host(&d, "api.example.com"));
	assert_true(secret_for_host(&d, "a.svc.example.org"));
	assert_false(secret_for_host(&d, "svc.example.org"));
	assert_false(secret_for_host(&d, "evil.example.com"));
	assert_false(secret_for_host(&d, "xapi.example.com"));
	char *line = secret_describe(&d);
	assert_non_null(strstr(line, "MY_TOKEN → api.example.com, *.svc.example.org in "
				     "authorization, value from $MY_TOKEN (/c.toml:3)"));
	free(line);
	secret_def_free(&d);

	struct strv cmd = sv("pass", "show x");
	assert_int_equal(secret_def_make("T", &hosts, "x-api-key", NULL, &cmd, NULL, &d, &e), 0);
	assert_int_equal(d.src, SS_COMMAND);
	line = secret_describe(&d);
	assert_non_null(strstr(line, "the command `pass 'show x'`"));
	free(line);
	secret_def_free(&d);

	/* refusals, each naming what is wrong */
	struct strv port = sv("api.example.com:443", NULL), star = sv("*.com", NULL),
		    none = STRV_INIT;
	assert_int_equal(secret_def_make("T", &port, "x", NULL, NULL, NULL, &d, &e), -1);
	assert_non_null(strstr(e.what, "a port"));
	assert_int_equal(secret_def_make("T", &star, "x", NULL, NULL, NULL, &d, &e), -1);
	assert_non_null(strstr(e.what, "*.com"));
	assert_int_equal(secret_def_make("T", &none, "x", NULL, NULL, NULL, &d, &e), -1);
	assert_non_null(strstr(e.what, "names no host"));
	assert_int_equal(secret_def_make("T", &hosts, "x y", NULL, NULL, NULL, &d, &e), -1);
	assert_non_null(strstr(e.what, "header"));
	assert_int_equal(secret_def_make("T", &hosts, "x", "E", &cmd, NULL, &d, &e), -1);
	assert_non_null(strstr(e.what, "both"));
	assert_int_equal(secret_def_make("1T", &hosts, "x", NULL, NULL, NULL, &d, &e), -1);
	strv_free(&hosts);
	strv_free(&cmd);
	strv_free(&port);
	strv_free(&star);
}

static void builtins_and_active(void **state)
{
	(void)state;
	const struct secret_set *b = secret_builtins();
	const struct secret_def *a = secret_set_find(b, "ANTHROPIC_API_KEY");
	assert_non_null(a);
	assert_string_equal(a->hosts.v[0], "api.anthropic.com");
	assert_string_equal(a->header, "x-api-key");
	assert_string_equal(secret_set_find(b, "OPENAI_API_KEY")->header, "authorization");
	assert_string_equal(secret_set_find(b, "GEMINI_API_KEY")->header, "x-goog-api-key");
	assert_non_null(secret_set_find(b, "GOOGLE_API_KEY"));

	struct strv host_env = sv("ANTHROPIC_API_KEY=sk-real", "OPENAI_API_KEY=sk-o");
	/* passed by name and set on the host: active */
	struct strv pol_env = sv("ANTHROPIC_API_KEY", "GEMINI_API_KEY");
	struct secret_set act = {0};
	secrets_active(NULL, &pol_env, &host_env, &act);
	assert_int_equal(act.n, 1); /* GEMINI_API_KEY is not set on the host; OPENAI not passed */
	assert_string_equal(act.v[0].name, "ANTHROPIC_API_KEY");
	secret_set_free(&act);
	/* the agent pointed at a gateway by the host's environment: the key goes there instead */
	strv_push(&host_env, "ANTHROPIC_BASE_URL=https://LLM-Gateway.corp.example:8443/anthropic");
	secrets_active(NULL, &pol_env, &host_env, &act);
	assert_string_equal(act.v[0].hosts.v[0], "llm-gateway.corp.example");
	assert_int_equal(act.v[0].hosts.n, 1);
	assert_string_equal(act.v[0].origin, "built-in, for $ANTHROPIC_BASE_URL");
	secret_set_free(&act);
	free(host_env.v[--host_env.n]);
	host_env.v[host_env.n] = NULL;
	strv_push(&host_env, "ANTHROPIC_BASE_URL=https://user:pw@evil.example/");
	secrets_active(NULL, &pol_env, &host_env, &act);
	assert_string_equal(act.v[0].hosts.v[0], "api.anthropic.com"); /* not guessed at */
	secret_set_free(&act);
	free(host_env.v[--host_env.n]);
	host_env.v[host_env.n] = NULL;
	/* passed with a value of its own: that value, no secret */
	strv_free(&pol_env);
	pol_env = sv("ANTHROPIC_API_KEY=explicit", NULL);
	secrets_active(NULL, &pol_env, &host_env, &act);
	assert_int_equal(act.n, 0);
	/* a file's definition replaces the built-in of that name; a command needs no variable */
	strv_free(&pol_env);
	pol_env = sv("ANTHROPIC_API_KEY", "GH_TOKEN");
	struct secret_set mine = {0};
	struct strv hosts = sv("api.anthropic.test", NULL), cmd = sv("/bin/echo", "k");
	struct secret_def d;
	struct err e = {0};
	assert_int_equal(secret_def_make("ANTHROPIC_API_KEY", &hosts, "x-api-key", NULL, NULL,
					 "f:1", &d, &e), 0);
	secret_set_put(&mine, &d);
	secret_def_free(&d);
	assert_int_equal(secret_def_make("GH_TOKEN", &hosts, "authorization", NULL, &cmd, "f:5",
					 &d, &e), 0);
	secret_set_put(&mine, &d);
	secret_def_free(&d);
	secrets_active(&mine, &pol_env, &host_env, &act);
	assert_int_equal(act.n, 2);
	assert_string_equal(secret_set_find(&act, "ANTHROPIC_API_KEY")->hosts.v[0],
			    "api.anthropic.test");
	assert_int_equal(secret_set_find(&act, "GH_TOKEN")->src, SS_COMMAND);

	/* stored and read back (no value anywhere) */
	json_t *j = secrets_to_json(&act);
	char *txt = json_dumps(j, JSON_COMPACT);
	assert_null(strstr(txt, "sk-real"));
	struct secret_set back;
	assert_int_equal(secrets_from_json(j, &back, &e), 0);
	assert_int_equal(back.n, 2);
	assert_string_equal(secret_set_find(&back, "GH_TOKEN")->command.v[1], "k");
	assert_string_equal(secret_set_find(&back, "ANTHROPIC_API_KEY")->env, "ANTHROPIC_API_KEY");
	secret_set_free(&back);
	json_decref(j);
	free(txt);
	j = json_loads("[{\"name\":\"X\"}]", 0, NULL);
	assert_int_equal(secrets_from_json(j, &back, &e), -1);
	json_decref(j);

	char *ph = secret_placeholder("ANTHROPIC_API_KEY");
	assert_string_equal(ph, "agentjail-placeholder-ANTHROPIC_API_KEY");
	free(ph);
	secret_set_free(&act);
	secret_set_free(&mine);
	strv_free(&pol_env);
	strv_free(&host_env);
	strv_free(&hosts);
	strv_free(&cmd);
}

static void values(void **state)
{
	(void)state;
	struct err e = {0};
	assert_int_equal(secret_value_check("K", "sk-ant-123", 10, &e), 0);
	assert_int_equal(secret_value_check("K", "", 0, &e), -1);
	assert_int_equal(secret_value_check("K", "ab\r\nX-Evil: 1", 14, &e), -1);
	assert_non_null(strstr(e.what, "control byte at offset 2"));
	assert_null(strstr(e.what, "ab")); /* never a byte of the value */
	assert_int_equal(secret_value_check("K", "a\0b", 3, &e), -1);
	assert_int_equal(secret_value_check("K", " abc", 4, &e), -1);
}

static void rules(void **state)
{
	(void)state;
	struct http_rule r;
	struct err e = {0};
	assert_int_equal(http_rule_parse("GET GitHub.com/*", &r, &e), 0);
	assert_string_equal(r.method, "GET");
	assert_string_equal(r.host.host, "github.com");
	assert_string_equal(r.path, "/*");
	http_rule_free(&r);
	assert_int_equal(http_rule_parse("* *.example.com/v1/*", &r, &e), 0);
	assert_int_equal(r.host.kind, NR_WILDCARD);
	http_rule_free(&r);
	static const char *const bad[] = {"GET", "get github.com/*", "GET github.com",
					  "GET /x", "GET github.com:443/x", "GET *.com/x",
					  "GET github.com/a b", NULL};
	for (int i = 0; bad[i]; i++)
		if (http_rule_parse(bad[i], &r, &e) == 0)
			fail_msg("accepted %s", bad[i]);

	assert_true(http_glob_match("/v1/messages*", "/v1/messages?beta=true", 22));
	assert_true(http_glob_match("/v1/messages*", "/v1/messages", 12));
	assert_false(http_glob_match("/v1/messages", "/v1/messages?x", 14));
	assert_true(http_glob_match("/repos/*/issues", "/repos/a/b/issues", 17));
	assert_false(http_glob_match("/repos/*/issues", "/repos/a/issues/1", 17));
	assert_true(http_glob_match("*", "", 0));
	assert_true(http_glob_match("/a*b*c", "/aXXbYYc", 8));
	assert_false(http_glob_match("/a*b*c", "/aXXbYY", 7));

	struct strv allow = sv("GET github.com/*", "POST api.anthropic.com/v1/messages*");
	struct secret_set none = {0};
	struct inspect in;
	assert_int_equal(inspect_build(&allow, &none, &in, &e), 0);
	assert_true(inspect_any(&in));
	assert_true(inspect_host(&in, "github.com"));
	assert_false(inspect_host(&in, "gist.github.com")); /* not a wildcard */
	assert_false(inspect_host(&in, "pypi.org"));
	const struct http_rule *m = NULL;
	char *why = NULL;
	assert_int_equal(inspect_request(&in, "GET", "github.com", "/a/b?x=1", 8, &m, &why), 0);
	assert_string_equal(m->spec, "GET github.com/*");
	assert_int_equal(inspect_request(&in, "POST", "api.anthropic.com",
					 "/v1/messages?beta=true", 22, &m, &why), 0);
	assert_int_equal(inspect_request(&in, "POST", "pypi.org", "/x", 2, &m, &why), 0);
	assert_null(m); /* no rule names that host: not ours to judge */
	assert_int_equal(inspect_request(&in, "POST", "github.com", "/gists?token=zzz", 16, &m,
					 &why), -1);
	assert_string_equal(why, "POST github.com/gists is not allowed by the request rules for "
				 "github.com (add --allow-http 'POST github.com/gists')");
	assert_null(strstr(why, "zzz")); /* the query never */
	free(why);
	static const char *const targets[] = {"/a/../b", "/a/./b", "/a/..", "/%2e%2e/x", "/a%2Fb",
					      "/a%5cb", "/a\\b", "/a#b", "http://github.com/", "*",
					      NULL};
	for (int i = 0; targets[i]; i++) {
		if (inspect_request(&in, "GET", "github.com", targets[i], strlen(targets[i]), &m,
				    &why) == 0)
			fail_msg("target %s passed", targets[i]);
		assert_non_null(strstr(why, "plain paths"));
		free(why);
	}
	assert_null(http_target_refusal("/a..b/.c/..d", 12));
	assert_null(http_target_refusal("/a?x=../..", 10)); /* the query is not a path */
	inspect_free(&in);
	strv_free(&allow);

	/* a secret's hosts are inspected, with no rule for them */
	struct strv hosts = sv("api.anthropic.com", NULL);
	struct secret_def d;
	struct secret_set ss = {0};
	assert_int_equal(secret_def_make("ANTHROPIC_API_KEY", &hosts, "x-api-key", NULL, NULL, NULL,
					 &d, &e), 0);
	secret_set_put(&ss, &d);
	secret_def_free(&d);
	assert_int_equal(inspect_build(NULL, &ss, &in, &e), 0);
	assert_true(inspect_host(&in, "api.anthropic.com"));
	assert_string_equal(in.placeholders.v[0], "agentjail-placeholder-ANTHROPIC_API_KEY");
	assert_int_equal(inspect_request(&in, "DELETE", "api.anthropic.com", "/x", 2, &m, &why), 0);
	inspect_free(&in);
	secret_set_free(&ss);
	strv_free(&hosts);
	assert_false(inspect_any(NULL));

	char *label = http_request_label("GET", "h", "/a'b\x01?q", 7, 100);
	assert_string_equal(label, "GET h/a?b?");
	free(label);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defs),
		cmocka_unit_test(builtins_and_active),
		cmocka_unit_test(values),
		cmocka_unit_test(rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
