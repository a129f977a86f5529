/* Tests for core/plan/initpath and core/jail/initbin: where agentjail looks for the jail's init
 * (agentjail-init beside itself, then PREFIX/libexec/agentjail/init for PREFIX/bin/agentjail),
 * and that a missing one is an error naming both places (this test binary has no init beside
 * it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/jail/initbin.h"
#include "core/plan/initpath.h"
#include "util/strv.h"

static void candidates_are(const char *self, const char *a, const char *b)
{
	struct strv c = STRV_INIT;
	initpath_candidates(self, &c);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.v[0], a);
	assert_string_equal(c.v[1], b);
	strv_free(&c);
}

static void candidates(void **state)
{
	(void)state;
	/* installed: PREFIX/bin/agentjail */
	candidates_are("/usr/local/bin/agentjail", "/usr/local/bin/agentjail-init",
		       "/usr/local/libexec/agentjail/init");
	candidates_are("/usr/bin/agentjail", "/usr/bin/agentjail-init",
		       "/usr/libexec/agentjail/init");
	/* the build tree */
	candidates_are("/src/aj/build/rel/agentjail", "/src/aj/build/rel/agentjail-init",
		       "/src/aj/build/libexec/agentjail/init");
	/* whatever the binary is called (the test build, a shim's target) */
	candidates_are("/opt/x/agentjail-testbuild", "/opt/x/agentjail-init",
		       "/opt/libexec/agentjail/init");
	/* at the root, ".." stays at "/" */
	candidates_are("/agentjail", "/agentjail-init", "/libexec/agentjail/init");
}

static void missing_is_an_error(void **state)
{
	(void)state;
	struct err e = {0};
	char *path = (char *)"unchanged";
	assert_int_equal(initbin_open(&path, &e), -1);
	assert_null(path);
	assert_int_equal(e.errnum, ENOENT);
	assert_non_null(strstr(e.what, "cannot find the jail's init (agentjail-init): not at /"));
	assert_non_null(strstr(e.what, "/agentjail-init nor /"));
	assert_non_null(strstr(e.what, "/libexec/agentjail/init"));
	assert_non_null(strstr(e.hint, "runs no jail without it"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(candidates),
		cmocka_unit_test(missing_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
