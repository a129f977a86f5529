/* jsonmerge: only allowlisted keys the jail changed come back into the host file; hostile
 * inputs merge nothing. A table of cases on claude's rules, then hostile inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/jsonmerge.h"

struct mcase {
	const char *name;
	const char *base, *jail, *host;
	int rc;
	const char *expect;  /* the merged document (compared as JSON), when rc == 1 */
	const char *dropped; /* the dropped keys, comma-joined, or NULL for none */
};

static const struct mcase cases[] = {
	{"nothing changed", "{\"numStartups\":1}", "{\"numStartups\":1}", "{\"numStartups\":1}",
	 0, NULL, NULL},
	{"a counter comes back", "{\"numStartups\":1}", "{\"numStartups\":2}",
	 "{\"numStartups\":1,\"theme\":\"dark\"}", 1, "{\"numStartups\":2,\"theme\":\"dark\"}",
	 NULL},
	{"top-level mcpServers stays behind", "{}",
	 "{\"mcpServers\":{\"e\":{\"command\":\"sh\"}},\"numStartups\":3}", "{}", 1,
	 "{\"numStartups\":3}", "mcpServers"},
	{"only hostile keys: nothing merged", "{}",
	 "{\"mcpServers\":{},\"enabledMcpjsonServers\":[\"e\"],\"customApiKeyResponses\":{},"
	 "\"apiKeyHelper\":\"sh\",\"env\":{\"NODE_OPTIONS\":\"x\"},\"hooks\":{}}",
	 "{}", 0, NULL,
	 "mcpServers,enabledMcpjsonServers,customApiKeyResponses,apiKeyHelper,env,hooks"},
	{"an unknown key stays behind", "{}", "{\"someNewKey\":1}", "{}", 0, NULL, "someNewKey"},
	{"per-project: safe sub-keys only", "{\"projects\":{}}",
	 "{\"projects\":{\"/w\":{\"hasTrustDialogAccepted\":true,\"allowedTools\":[\"Bash(*)\"],"
	 "\"mcpServers\":{\"e\":{}},\"lastCost\":1.5}}}",
	 "{\"projects\":{}}", 1, "{\"projects\":{\"/w\":{\"lastCost\":1.5}}}",
	 "projects[/w].hasTrustDialogAccepted,projects[/w].allowedTools,projects[/w].mcpServers"},
	{"per-project: the host's own trust stays", "{\"projects\":{\"/w\":{\"lastCost\":1}}}",
	 "{\"projects\":{\"/w\":{\"lastCost\":2,\"hasTrustDialogAccepted\":false}}}",
	 "{\"projects\":{\"/w\":{\"lastCost\":1,\"hasTrustDialogAccepted\":true}}}", 1,
	 "{\"projects\":{\"/w\":{\"lastCost\":2,\"hasTrustDialogAccepted\":true}}}",
	 "projects[/w].hasTrustDialogAccepted"},
	{"a project with only hostile keys is not created", "{}",
	 "{\"projects\":{\"/w\":{\"allowedTools\":[\"Bash(*)\"]}}}", "{}", 0, NULL,
	 "projects[/w].allowedTools"},
	{"projects not an object stays behind", "{}", "{\"projects\":[1]}", "{}", 0, NULL,
	 "projects"},
	{"a project entry not an object", "{}", "{\"projects\":{\"/w\":5}}", "{}", 0, NULL,
	 "projects[/w].*"},
	{"wrong type for a safe key stays behind", "{}",
	 "{\"numStartups\":\"x\",\"tipsHistory\":[1]}", "{}", 0, NULL, "numStartups,tipsHistory"},
	{"a concurrent host change is kept", "{\"numStartups\":1,\"theme\":\"dark\"}",
	 "{\"numStartups\":2,\"theme\":\"dark\"}",
	 "{\"numStartups\":1,\"theme\":\"light\",\"mcpServers\":{\"mine\":{}}}", 1,
	 "{\"numStartups\":2,\"theme\":\"light\",\"mcpServers\":{\"mine\":{}}}", NULL},
	{"the host's mcpServers are not removed by the jail", "{\"mcpServers\":{\"mine\":{}}}",
	 "{}", "{\"mcpServers\":{\"mine\":{}}}", 0, NULL, "mcpServers"},
	{"a safe key removed in the jail is removed", "{\"cachedChangelog\":\"x\"}", "{}",
	 "{\"cachedChangelog\":\"x\"}", 1, "{}", NULL},
};

static char *join(const struct strv *v)
{
	size_t n = 1;
	for (size_t i = 0; i < v->n; i++)
		n += strlen(v->v[i]) + 1;
	char *s = calloc(1, n);
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, v->v[i]);
	}
	return s;
}

static int run(const char *base, const char *jail, const char *host, char **out,
	       struct strv *dropped, struct err *e)
{
	return jsonmerge(&jm_claude_json, base, strlen(base), jail, strlen(jail), host,
			 strlen(host), "/h/.claude.json", out, dropped, e);
}

static void table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct mcase *c = &cases[i];
		char *out = NULL;
		struct strv dropped = STRV_INIT;
		struct err e = {0};
		int rc = run(c->base, c->jail, c->host, &out, &dropped, &e);
		if (rc != c->rc)
			fail_msg("%s: rc %d, expected %d (%s)", c->name, rc, c->rc, e.what);
		if (rc == 1) {
			json_t *got = json_loads(out, 0, NULL), *want = json_loads(c->expect, 0, NULL);
			assert_non_null(got);
			assert_non_null(want);
			if (!json_equal(got, want))
				fail_msg("%s: merged %s, expected %s", c->name, out, c->expect);
			json_decref(got);
			json_decref(want);
		} else {
			assert_null(out);
		}
		char *d = join(&dropped);
		if (strcmp(d, c->dropped ? c->dropped : ""))
			fail_msg("%s: dropped '%s', expected '%s'", c->name, d,
				 c->dropped ? c->dropped : "");
		free(d);
		free(out);
		strv_free(&dropped);
	}
}

static void hostile(void **state)
{
	(void)state;
	struct {
		const char *name, *base, *jail, *host, *msg;
	} bad[] = {
		{"invalid jail", "{}", "{\"numStartups\":", "{}", "not valid JSON"},
		{"jail an array", "{}", "[1,2]", "{}", "not a JSON object"},
		{"jail a string", "{}", "\"x\"", "{}", "not valid JSON"},
		{"duplicate keys in the jail", "{}",
		 "{\"numStartups\":1,\"numStartups\":2}", "{}", "not valid JSON"},
		{"empty jail file", "{}", "", "{}", "not valid JSON"},
		{"invalid host file", "{}", "{\"numStartups\":2}", "{oops", "not valid JSON"},
		{"host not an object", "{}", "{\"numStartups\":2}", "[]", "not a JSON object"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char *out = (char *)"untouched";
		struct err e = {0};
		int rc = run(bad[i].base, bad[i].jail, bad[i].host, &out, NULL, &e);
		if (rc != -1 || out != NULL)
			fail_msg("%s: rc %d", bad[i].name, rc);
		assert_string_equal(e.path, "/h/.claude.json"); /* the warning names the file */
		if (!strstr(e.what, bad[i].msg) || !strstr(e.what, "nothing merged"))
			fail_msg("%s: '%s'", bad[i].name, e.what);
	}
	/* a huge file is refused before it is parsed */
	size_t n = JM_MAX_BYTES + 2;
	char *huge = malloc(n + 1);
	assert_non_null(huge);
	memset(huge, ' ', n);
	huge[0] = '{';
	huge[n - 1] = '}';
	huge[n] = '\0';
	char *out = NULL;
	struct err e = {0};
	int rc = jsonmerge(&jm_claude_json, "{}", 2, huge, n, "{}", 2, "/h/.claude.json", &out,
			   NULL, &e);
	assert_int_equal(rc, -1);
	assert_null(out);
	assert_non_null(strstr(e.what, "more than"));
	free(huge);
	/* deep nesting in a safe key's value: jansson's depth limit, nothing merged */
	size_t depth = 100000;
	char *deep = malloc(2 * depth + 64);
	assert_non_null(deep);
	char *p = deep + sprintf(deep, "{\"tipsHistory\":");
	for (size_t i = 0; i < depth; i++)
		*p++ = '[';
	for (size_t i = 0; i < depth; i++)
		*p++ = ']';
	strcpy(p, "}");
	rc = jsonmerge(&jm_claude_json, "{}", 2, deep, strlen(deep), "{}", 2, "/h/.claude.json",
		       &out, NULL, &e);
	assert_int_equal(rc, -1);
	free(deep);
}

/* pi's auth.json: provider entries; an API key "!cmd" never comes back, a login does. */
static void pi_auth(void **state)
{
	(void)state;
	static const char base[] = "{\"anthropic\":{\"type\":\"api_key\",\"key\":\"sk-1\"}}";
	static const char jail[] =
		"{\"anthropic\":{\"type\":\"api_key\",\"key\":\"!touch /tmp/x\"},"
		"\"openai\":{\"type\":\"oauth\",\"access\":\"a\",\"refresh\":\"r\","
		"\"expires\":5,\"enterpriseUrl\":\"https://evil\"},\"x\":\"!sh\"}";
	char *out = NULL;
	struct strv dropped = STRV_INIT;
	struct err e = {0};
	int rc = jsonmerge(&jm_pi_auth, base, strlen(base), jail, strlen(jail), base,
			   strlen(base), "/h/.pi/agent/auth.json", &out, &dropped, &e);
	assert_int_equal(rc, 1);
	json_t *got = json_loads(out, 0, NULL);
	json_t *want = json_loads("{\"anthropic\":{\"type\":\"api_key\",\"key\":\"sk-1\"},"
				  "\"openai\":{\"type\":\"oauth\",\"access\":\"a\","
				  "\"refresh\":\"r\",\"expires\":5}}",
				  0, NULL);
	if (!json_equal(got, want))
		fail_msg("merged %s", out);
	json_decref(got);
	json_decref(want);
	char *d = join(&dropped);
	assert_string_equal(d, "[anthropic].*,[openai].enterpriseUrl,[x].*");
	free(d);
	free(out);
	strv_free(&dropped);
}

/* The rules never name a key that starts commands, trusts or widens permissions. */
static void allowlist_has_no_hostile_key(void **state)
{
	(void)state;
	static const char *const never[] = {
		"mcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
		"hasTrustDialogAccepted", "allowedTools", "customApiKeyResponses", "hooks", "env",
		"apiKeyHelper", "primaryApiKey", "mcpContextUris", "hasClaudeMdExternalIncludesApproved",
		"bypassPermissionsModeAccepted", "autoConnectIde", "autoInstallIdeExtension",
		"diffTool", "oauthAccount", "cachedGrowthBookFeatures", "cachedDynamicConfigs", NULL};
	const struct jm_rules *r = &jm_claude_json;
	for (size_t i = 0; never[i]; i++) {
		for (size_t k = 0; r->top[k].name; k++)
			assert_string_not_equal(r->top[k].name, never[i]);
		for (size_t k = 0; r->map_keys[k].name; k++)
			assert_string_not_equal(r->map_keys[k].name, never[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(hostile),
		cmocka_unit_test(allowlist_has_no_hostile_key),
		cmocka_unit_test(pi_auth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
