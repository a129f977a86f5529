/* doctor's pure parts: the report, its aggregation, its text and JSON renderings, and the
 * helpers the checks rely on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag/doctor.h"
#include "core/plan/dirs.h"
#include "core/plan/profile.h"

static void aggregation(void **state)
{
	(void)state;
	struct doctor_report r = {0};
	assert_true(doctor_report_ok(&r)); /* nothing checked, nothing failed */
	doctor_add(&r, "a", DOCTOR_OK, NULL, "fine");
	assert_true(doctor_report_ok(&r));
	doctor_add(&r, "b", DOCTOR_WARN, "do this", "meh");
	assert_true(doctor_report_ok(&r)); /* a warning does not stop a run */
	doctor_add(&r, "c", DOCTOR_FAIL, "do that", "broken");
	assert_false(doctor_report_ok(&r));
	doctor_add(&r, "d", DOCTOR_OK, NULL, "fine again");
	assert_false(doctor_report_ok(&r)); /* one failure is enough */
	assert_int_equal(r.n, 4);
	assert_string_equal(doctor_status_name(DOCTOR_OK), "ok");
	assert_string_equal(doctor_status_name(DOCTOR_WARN), "warn");
	assert_string_equal(doctor_status_name(DOCTOR_FAIL), "fail");
	doctor_report_free(&r);
	assert_int_equal(r.n, 0);
}

static void add_normalizes(void **state)
{
	(void)state;
	struct doctor_report r = {0};
	doctor_add(&r, "ok-with-fix", DOCTOR_OK, "ignored", "x");
	assert_null(r.v[0].fix); /* an ok check never carries a fix */
	doctor_add(&r, "warn-without-fix", DOCTOR_WARN, NULL, "x");
	assert_non_null(r.v[1].fix); /* a warn or fail always does */
	assert_true(strlen(r.v[1].fix) > 0);
	doctor_add(&r, "fail-empty-fix", DOCTOR_FAIL, "", "x");
	assert_true(strlen(r.v[2].fix) > 0);
	/* line breaks and tabs read as spaces; ESC, C1 (CSI as U+009B) and a bidirectional
	 * override are fmt_clean's '?' */
	doctor_add(&r, "ctl", DOCTOR_FAIL, "line1\nline2", "a\nb\tc\033[1md\xc2\x9b" "2J\xe2\x80\xae" "R");
	assert_string_equal(r.v[3].detail, "a b c?[1md?2J?R");
	assert_string_equal(r.v[3].fix, "line1 line2");
	/* invalid UTF-8 is replaced, valid multibyte text kept */
	doctor_add(&r, "utf8", DOCTOR_OK, NULL, "caf\xc3\xa9 \xff\xfe \xc3 \xed\xa0\x80.");
	assert_string_equal(r.v[4].detail, "caf\xc3\xa9 ?? ? ???.");
	doctor_add(&r, "fmt", DOCTOR_OK, NULL, "%d %s", 42, "x");
	assert_string_equal(r.v[5].detail, "42 x");
	doctor_report_free(&r);
}

static struct doctor_report sample(void)
{
	struct doctor_report r = {0};
	doctor_add(&r, "bwrap", DOCTOR_OK, NULL, "/usr/bin/bwrap: trusted");
	doctor_add(&r, "landlock", DOCTOR_WARN, "upgrade the kernel", "ABI 3: \"quoted\"");
	doctor_add(&r, "agent.claude", DOCTOR_OK, NULL, "not installed");
	return r;
}

static void json_shape(void **state)
{
	(void)state;
	struct doctor_report r = sample();
	char *s = doctor_render_json(&r);
	json_error_t je;
	json_t *root = json_loads(s, 0, &je);
	assert_non_null(root);
	assert_int_equal(json_object_size(root), 3);
	assert_int_equal(json_integer_value(json_object_get(root, "version")), 1);
	assert_true(json_is_true(json_object_get(root, "ok")));
	json_t *checks = json_object_get(root, "checks");
	assert_true(json_is_array(checks));
	assert_int_equal(json_array_size(checks), 3);
	static const char *const keys[] = {"id", "status", "detail", "fix"};
	for (size_t i = 0; i < 3; i++) {
		json_t *c = json_array_get(checks, i);
		assert_int_equal(json_object_size(c), 4);
		/* documented key order */
		size_t k = 0;
		const char *key;
		json_t *v;
		json_object_foreach(c, key, v)
		{
			assert_string_equal(key, keys[k]);
			k++;
		}
		assert_string_equal(json_string_value(json_object_get(c, "id")), r.v[i].id);
		assert_string_equal(json_string_value(json_object_get(c, "detail")), r.v[i].detail);
	}
	json_t *lw = json_array_get(checks, 1);
	assert_string_equal(json_string_value(json_object_get(lw, "status")), "warn");
	assert_string_equal(json_string_value(json_object_get(lw, "fix")), "upgrade the kernel");
	assert_string_equal(json_string_value(json_object_get(lw, "detail")), "ABI 3: \"quoted\"");
	assert_true(json_is_null(json_object_get(json_array_get(checks, 0), "fix")));
	json_decref(root);
	free(s);

	doctor_add(&r, "jail", DOCTOR_FAIL, "fix it", "no");
	s = doctor_render_json(&r);
	root = json_loads(s, 0, &je);
	assert_non_null(root);
	assert_true(json_is_false(json_object_get(root, "ok")));
	json_decref(root);
	free(s);
	doctor_report_free(&r);

	/* an empty report is still a complete document */
	struct doctor_report empty = {0};
	s = doctor_render_json(&empty);
	root = json_loads(s, 0, &je);
	assert_non_null(root);
	assert_int_equal(json_array_size(json_object_get(root, "checks")), 0);
	assert_true(json_is_true(json_object_get(root, "ok")));
	json_decref(root);
	free(s);
}

static void text_shape(void **state)
{
	(void)state;
	struct doctor_report r = sample();
	char *s = doctor_render_text(&r, false);
	assert_string_equal(s, "ok    bwrap         /usr/bin/bwrap: trusted\n"
	                       "warn  landlock      ABI 3: \"quoted\"\n"
	                       "                    fix: upgrade the kernel\n"
	                       "ok    agent.claude  not installed\n"
	                       "a sandboxed run works here (2 ok, 1 warn)\n");
	free(s);
	doctor_add(&r, "jail", DOCTOR_FAIL, "the fix", "it failed");
	doctor_add(&r, "userns", DOCTOR_FAIL, "other fix", "disabled");
	s = doctor_render_text(&r, false);
	assert_non_null(strstr(s, "fail  jail          it failed\n"
	                          "                    fix: the fix\n"));
	assert_non_null(strstr(s, "\na sandboxed run cannot work here; failed: jail userns\n"));
	free(s);
	/* for a terminal: warn and fail in colour, the columns as wide as without */
	s = doctor_render_text(&r, true);
	assert_non_null(strstr(s, "ok    bwrap         /usr/bin/bwrap: trusted\n"));
	assert_non_null(strstr(s, "\033[33mwarn\033[0m  landlock      ABI 3"));
	assert_non_null(strstr(s, "\033[1;31mfail\033[0m  jail          it failed\n"));
	free(s);
	doctor_report_free(&r);
}

static void bwrap_versions(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int rc, v[3];
	} cases[] = {
	        {"bubblewrap 0.8.0", 0, {0, 8, 0}},
	        {"bubblewrap 0.8.0\n", 0, {0, 8, 0}},
	        {"bubblewrap 0.11.1", 0, {0, 11, 1}},
	        {"bubblewrap 0.4", 0, {0, 4, 0}},
	        {"bubblewrap 1.2.3.4", 0, {1, 2, 3}},
	        {"bubblewrap 10", -1, {0}},
	        {"bubblewrap", -1, {0}},
	        {"bubblewrap x.y", -1, {0}},
	        {"bwrap 0.8.0", -1, {0}},
	        {"", -1, {0}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int v[3] = {-1, -1, -1};
		int rc = doctor_bwrap_version_parse(cases[i].text, v);
		if (rc != cases[i].rc)
			fail_msg("`%s`: rc %d, expected %d", cases[i].text, rc, cases[i].rc);
		if (rc == 0 && memcmp(v, cases[i].v, sizeof v))
			fail_msg("`%s`: %d.%d.%d", cases[i].text, v[0], v[1], v[2]);
	}
	int v[3];
	assert_int_equal(doctor_bwrap_version_parse(NULL, v), -1);
	const int a[3] = {0, 8, 0}, b[3] = {0, 10, 0}, c[3] = {0, 7, 9}, d[3] = {1, 0, 0};
	assert_true(doctor_version_cmp(a, a) == 0);
	assert_true(doctor_version_cmp(a, b) < 0); /* numeric, not lexical: 10 > 8 */
	assert_true(doctor_version_cmp(c, a) < 0);
	assert_true(doctor_version_cmp(d, b) > 0);
}

static void landlock_features(void **state)
{
	(void)state;
	char *s = doctor_landlock_features(0);
	assert_string_equal(s, "not available");
	free(s);
	s = doctor_landlock_features(1);
	assert_string_equal(s, "ABI 1: filesystem (1)");
	free(s);
	s = doctor_landlock_features(5);
	assert_string_equal(s, "ABI 5: filesystem (1), refer (2), truncate (3), network (4), "
	                       "ioctl on devices (5)");
	free(s);
	s = doctor_landlock_features(7);
	assert_non_null(strstr(s, "scoping of abstract Unix sockets and signals (6)"));
	assert_non_null(strstr(s, "audit logging (7)"));
	free(s);
	s = doctor_landlock_features(9);
	assert_non_null(strstr(s, "audit logging (7), and what ABI 8-9 add"));
	free(s);
}

static void dirs(void **state)
{
	(void)state;
	static const struct {
		const char *sd, *xdg, *home, *want;
	} st[] = {
	        {"/srv/aj/", "/x", "/home/u", "/srv/aj"},
	        {"relative", NULL, "/home/u", "/home/u/.local/state/agentjail"},
	        {"", "/var/st//", "/home/u", "/var/st/agentjail"},
	        {NULL, "rel", "/home/u", "/home/u/.local/state/agentjail"},
	        {NULL, NULL, "/home/u/", "/home/u/.local/state/agentjail"},
	        {NULL, NULL, NULL, "/.local/state/agentjail"},
	};
	for (size_t i = 0; i < sizeof st / sizeof *st; i++) {
		char *got = dirs_state_dir(st[i].sd, st[i].xdg, st[i].home);
		if (strcmp(got, st[i].want))
			fail_msg("state %zu: %s, expected %s", i, got, st[i].want);
		free(got);
	}
	char *c = dirs_config_dir("/cfg", "/home/u");
	assert_string_equal(c, "/cfg/agentjail");
	free(c);
	c = dirs_config_dir("cfg", "/home/u");
	assert_string_equal(c, "/home/u/.config/agentjail");
	free(c);
	c = dirs_config_dir(NULL, "/root");
	assert_string_equal(c, "/root/.config/agentjail");
	free(c);
}

static void clean_line(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t max;
		const char *want;
	} cases[] = {
	        {"2.0.14 (Claude Code)\n", 100, "2.0.14 (Claude Code)"},
	        {"\n  \n\tcodex-cli 0.40.0  \nmore\n", 100, "codex-cli 0.40.0"},
	        {"\033[1m\033[32maider 0.86.1\033[0m\r\n", 100, "aider 0.86.1"},
	        {"\033]0;title\007v1\n", 100, "v1"},
	        {"\033]0;title\033\\v2", 100, "v2"},
	        {"abcdef", 3, "abc"},
	        {"ab\xc3\xa9", 3, "ab"}, /* not cut inside a UTF-8 sequence */
	        {"", 10, ""},
	        {"\n\n", 10, ""},
	        {"\033[", 10, ""},
	        {NULL, 10, ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *got = doctor_clean_line(cases[i].in, cases[i].max);
		if (strcmp(got, cases[i].want))
			fail_msg("case %zu: `%s`, expected `%s`", i, got, cases[i].want);
		free(got);
	}
}

static void agent_table(void **state)
{
	(void)state;
	static const char *const want[] = {"claude", "codex",    "gemini", "kiro-cli",
	                                   "pi",     "opencode", "aider"};
	/* doctor reports every profile's executable, in the profile table's order */
	const struct profile *const *all = profile_all();
	size_t i = 0;
	for (; all[i]; i++)
		assert_string_equal(all[i]->exe[0], want[i]);
	assert_int_equal(i, sizeof want / sizeof *want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(aggregation),    cmocka_unit_test(add_normalizes),
	        cmocka_unit_test(json_shape),     cmocka_unit_test(text_shape),
	        cmocka_unit_test(bwrap_versions), cmocka_unit_test(landlock_features),
	        cmocka_unit_test(dirs),           cmocka_unit_test(clean_line),
	        cmocka_unit_test(agent_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
