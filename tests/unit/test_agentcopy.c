/* agentcopy: the private copy of an agent's state file and the merge back, on real files: an
 * allowlisted key comes back into the host file; a host file that leads elsewhere after the run
 * than before it (a link planted in a directory the jail could write) gets nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/host/agentcopy.h"
#include "core/plan/jsonmerge.h"
#include "util/path.h"
#include "util/xalloc.h"
#include "testutil.h"

static char dir[] = "/tmp/aj-test-agentcopy-XXXXXX";

static char *at(const char *rel) { return path_join(dir, rel); }

static void put(const char *rel, const char *text)
{
	char *p = at(rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	free(p);
}

static char *get(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *buf = xcalloc(1, 4096);
	size_t n = fread(buf, 1, 4095, f);
	buf[n] = '\0';
	(void)fclose(f);
	return buf;
}

static void test_merge_back(void **state)
{
	(void)state;
	put("claude.json", "{\"numStartups\": 1}\n");
	char *host = at("claude.json"), *st = at("state");
	struct agentcopy c;
	struct err e = {0};
	assert_int_equal(agentcopy_make(host, st, &jm_claude_json, &c, &e), 0);
	FILE *f = fopen(c.copy, "w");
	assert_non_null(f);
	fputs("{\"numStartups\": 2, \"mcpServers\": {\"x\": {\"command\": \"sh\"}}}", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(agentcopy_finish(&c, NULL, &e), 1);
	char *got = get(host);
	assert_non_null(strstr(got, "\"numStartups\": 2"));
	assert_null(strstr(got, "mcpServers"));
	free(got);
	agentcopy_free(&c);
	free(host);
	free(st);
}

static void test_link_planted_after_the_copy(void **state)
{
	(void)state;
	put("cfg.json", "{\"numStartups\": 1}\n");
	put("other.json", "{\"editor\": \"mine\"}\n");
	char *host = at("cfg.json"), *other = at("other.json"), *st = at("state");
	struct agentcopy c;
	struct err e = {0};
	assert_int_equal(agentcopy_make(host, st, &jm_claude_json, &c, &e), 0);
	FILE *f = fopen(c.copy, "w");
	assert_non_null(f);
	fputs("{\"numStartups\": 7}", f);
	assert_int_equal(fclose(f), 0);
	/* the state file is now a link to another of the user's JSON files */
	assert_int_equal(unlink(host), 0);
	assert_int_equal(symlink(other, host), 0);
	assert_int_equal(agentcopy_finish(&c, NULL, &e), -1);
	assert_non_null(strstr(e.what, "nothing merged"));
	char *got = get(other);
	assert_string_equal(got, "{\"editor\": \"mine\"}\n");
	free(got);
	assert_int_equal(access(c.copy ? c.copy : "/nonexistent", F_OK), -1); /* copy removed */
	agentcopy_free(&c);
	free(host);
	free(other);
	free(st);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return test_rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_back),
		cmocka_unit_test(test_link_planted_after_the_copy),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
