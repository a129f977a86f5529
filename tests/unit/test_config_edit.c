/* Adding entries to a list of a configuration file's text (`agentjail log --suggest --apply`):
 * every other byte kept, each shape of list and table, duplicates left out, what cannot be
 * edited safely refused; and the suggestions built from a session's denials. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config/config_edit.h"
#include "core/net/netsuggest.h"
#include "core/config/toml.h"

static const char *const agent_claude[] = {"agent", "claude"};

/* Add a and b (and what else is given) to [agent.claude] allow_domains of text: the result. */
static char *add_to(const char *text, int want_added, const char *x, const char *y)
{
	struct strv add = STRV_INIT;
	strv_push(&add, x);
	if (y)
		strv_push(&add, y);
	char *out = NULL;
	size_t len = 0, added = 0;
	struct err e = {0};
	if (config_add_to_list(text, strlen(text), "config.toml", agent_claude, 2, "[agent.claude]",
			       "allow_domains", &add, &out, &len, &added, &e) < 0)
		fail_msg("%s: %s", e.path, e.what);
	strv_free(&add);
	assert_int_equal(added, want_added);
	assert_int_equal(len, strlen(out));
	return out;
}

static void expect(const char *text, const char *want)
{
	char *out = add_to(text, 2, "a.example", "b.example:8443");
	if (strcmp(out, want))
		fail_msg("got:\n%s\nwant:\n%s", out, want);
	free(out);
}

static void shapes(void **state)
{
	(void)state;
	/* a new file; a file without the table (its comments and other tables kept) */
	expect("", "[agent.claude]\nallow_domains = [\"a.example\", \"b.example:8443\"]\n");
	expect("# mine\n[policy]\nnet = \"off\" # keep\n",
	       "# mine\n[policy]\nnet = \"off\" # keep\n\n[agent.claude]\n"
	       "allow_domains = [\"a.example\", \"b.example:8443\"]\n");
	expect("[policy]\nnet = \"off\"", /* no newline at the end */
	       "[policy]\nnet = \"off\"\n\n[agent.claude]\n"
	       "allow_domains = [\"a.example\", \"b.example:8443\"]\n");
	/* the table without the key: right under its header */
	expect("[agent.claude] # the agent\nrw = [\"~/notes\"]\n\n[policy]\nnet = \"allow\"\n",
	       "[agent.claude] # the agent\nallow_domains = [\"a.example\", \"b.example:8443\"]\n"
	       "rw = [\"~/notes\"]\n\n[policy]\nnet = \"allow\"\n");
	/* a list on one line, empty, with a trailing comma, a comment after it */
	expect("[agent.claude]\nallow_domains = [\"x.example\"] # why\n",
	       "[agent.claude]\nallow_domains = [\"x.example\", \"a.example\", \"b.example:8443\"] # why\n");
	expect("[agent.claude]\nallow_domains = []\n",
	       "[agent.claude]\nallow_domains = [\"a.example\", \"b.example:8443\"]\n");
	expect("[agent.claude]\nallow_domains = [ 'x.example', ]\n",
	       "[agent.claude]\nallow_domains = [ 'x.example', \"a.example\", \"b.example:8443\" ]\n");
	/* over lines: the new entries on lines of their own, indented alike */
	expect("[agent.claude]\nallow_domains = [\n\t\"x.example\", # why ] \"\n\t\"y.example\"\n]\nnet = \"allow\"\n",
	       "[agent.claude]\nallow_domains = [\n\t\"x.example\", # why ] \"\n\t\"y.example\",\n"
	       "\t\"a.example\",\n\t\"b.example:8443\",\n]\nnet = \"allow\"\n");
	expect("[agent.claude]\nallow_domains = [\n  \"x.example\",\n  \"y]\\\"\"]\n",
	       "[agent.claude]\nallow_domains = [\n  \"x.example\",\n  \"y]\\\"\", \"a.example\", "
	       "\"b.example:8443\"]\n");
	/* written with dotted keys, or the table made implicit by a deeper one */
	expect("[agent]\nclaude.allow_domains = [\"x.example\"]\n",
	       "[agent]\nclaude.allow_domains = [\"x.example\", \"a.example\", \"b.example:8443\"]\n");
	expect("[agent.claude.sub]\n",
	       "[agent.claude.sub]\n\n[agent.claude]\nallow_domains = [\"a.example\", \"b.example:8443\"]\n");
}

static void duplicates_and_refusals(void **state)
{
	(void)state;
	char *out = add_to("[agent.claude]\nallow_domains = [\"a.example\"]\n", 1, "a.example",
			   "c.example");
	assert_string_equal(out, "[agent.claude]\nallow_domains = [\"a.example\", \"c.example\"]\n");
	free(out);
	static const char same[] = "[agent.claude] # x\nallow_domains = [\"a.example\", \"c.example\"]\n";
	out = add_to(same, 0, "c.example", "a.example");
	assert_string_equal(out, same);
	free(out);

	static const char *const bad[] = {
		"[agent.claude]\nallow_domains = \"a.example\"\n",   /* not a list */
		"agent = \"x\"\n",                                   /* not a table */
		"agent.claude.net = \"allow\"\n",                    /* a [header] cannot follow */
		"[agent.claude\n",                                   /* does not parse */
	};
	const char *why[] = {"is not a list", "is not a table", "would not parse", "expected"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct strv add = STRV_INIT;
		strv_push(&add, "a.example");
		char *o = NULL;
		size_t len = 0, added = 0;
		struct err e = {0};
		int rc = config_add_to_list(bad[i], strlen(bad[i]), "config.toml", agent_claude, 2,
					    "[agent.claude]", "allow_domains", &add, &o, &len, &added,
					    &e);
		strv_free(&add);
		if (rc != -1 || o || !strstr(e.what, why[i]))
			fail_msg("case %zu: rc %d, %s", i, rc, e.what);
	}
}

/* ---- the suggestions */

static void suggestions(void **state)
{
	(void)state;
	struct strv allow = STRV_INIT, deny = STRV_INIT, map = STRV_INIT;
	strv_push(&allow, "api.example.com");
	strv_push(&allow, "git.example.com:22");
	strv_push(&deny, "bad.example");
	strv_push(&map, "local.test=127.0.0.1");
	struct netrules r;
	struct err e = {0};
	assert_int_equal(netrules_build(&allow, &deny, &map, &r, &e), 0);
	const struct net_denial d[] = {
		{"evil.example", 443, 3},    {"evil.example", 80, 1},    {"evil.example", 0, 2},
		{"other.example", 8443, 1},  {"git.example.com", 443, 4}, {"2001:db8::1", 8080, 1},
		{"bad.example", 443, 2},     {"api.example.com", 443, 5}, {"x\x1b[31m?", 443, 1},
	};
	struct net_suggest s;
	net_suggest_build(d, sizeof d / sizeof *d, &r, &s);
	assert_int_equal(s.n_add, 4);
	assert_string_equal(s.add[0].entry, "evil.example");
	assert_int_equal(s.add[0].n, 6);
	assert_string_equal(s.add[0].detail, ":443 ×3, :80, lookup ×2");
	assert_string_equal(s.add[1].entry, "git.example.com"); /* 22 is allowed, 443 not */
	assert_string_equal(s.add[2].entry, "[2001:db8::1]:8080");
	assert_string_equal(s.add[3].entry, "other.example:8443");
	assert_int_equal(s.n_skip, 3);
	char *text = net_suggest_render(&s, "claude");
	static const char want[] =
		"[agent.claude]\n"
		"allow_domains = [\n"
		"  \"evil.example\", # denied 6 times (:443 ×3, :80, lookup ×2)\n"
		"  \"git.example.com\", # denied 4 times (:443 ×4)\n"
		"  \"[2001:db8::1]:8080\", # denied once (:8080)\n"
		"  \"other.example:8443\", # denied once (:8443)\n"
		"]\n"
		"# not suggested:\n"
		"#   bad.example:443, denied 2 times: refused by the deny entry bad.example (a deny "
		"entry wins over any allow)\n"
		"#   api.example.com:443, denied 5 times: its name was allowed; something else "
		"refused it (its address, the name inside the connection, the request: agentjail "
		"log says what)\n"
		"#   x?[31m?:443, denied once: not a valid host name\n";
	if (strcmp(text, want))
		fail_msg("got:\n%s", text);
	/* what it prints is TOML the configuration's parser takes, and its entries are rules */
	struct toml_value root;
	assert_int_equal(toml_parse(text, strlen(text), "suggest", &root, &e), 0);
	const struct toml_value *l = toml_get(toml_get(toml_get(&root, "agent"), "claude"),
					      "allow_domains");
	assert_non_null(l);
	assert_int_equal(l->n, 4);
	for (size_t i = 0; i < l->n; i++) {
		struct netrule nr;
		assert_int_equal(netrule_parse(l->items[i].s, &nr, &e), 0);
		netrule_free(&nr);
	}
	toml_free(&root);
	free(text);
	char *t = net_suggest_table(NULL);
	assert_string_equal(t, "[policy]");
	free(t);
	t = net_suggest_table("my \"agent\"");
	assert_string_equal(t, "[agent.\"my \\\"agent\\\"\"]");
	free(t);
	net_suggest_free(&s);
	netrules_free(&r);
	strv_free(&allow);
	strv_free(&deny);
	strv_free(&map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shapes),
		cmocka_unit_test(duplicates_and_refusals),
		cmocka_unit_test(suggestions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
