/* Tests for core/plan/initpath and core/jail/initbin: where agentjail looks for the jail's init
 * (agentjail-init beside itself, then PREFIX/libexec/agentjail/init for PREFIX/bin/agentjail)
 * and for the remote backend (agentjail-remote, PREFIX/libexec/agentjail/remote),
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

/* agentjail-remote: the same two places, its own names */
static void remote_candidates(void **state)
{
	(void)state;
	struct strv c = STRV_INIT;
	helperpath_candidates(&HELPER_REMOTE, "/usr/local/bin/agentjail", &c);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.v[0], "/usr/local/bin/agentjail-remote");
	assert_string_equal(c.v[1], "/usr/local/libexec/agentjail/remote");
	strv_free(&c);
	helperpath_candidates(&HELPER_REMOTE, "/src/aj/build/rel/agentjail", &c);
	assert_string_equal(c.v[0], "/src/aj/build/rel/agentjail-remote");
	assert_string_equal(c.v[1], "/src/aj/build/libexec/agentjail/remote");
	strv_free(&c);
}

static void remote_missing_is_an_error(void **state)
{
	(void)state;
	struct err e = {0};
	char *path = (char *)"unchanged";
	assert_int_equal(helperbin_open(&HELPER_REMOTE, &path, &e), -1);
	assert_null(path);
	assert_int_equal(e.errnum, ENOENT);
	assert_non_null(
		strstr(e.what, "cannot find the remote backend (agentjail-remote): not at /"));
	assert_non_null(strstr(e.what, "/agentjail-remote nor /"));
	assert_non_null(strstr(e.what, "/libexec/agentjail/remote"));
	assert_non_null(strstr(e.hint, "only --backend opensandbox needs it"));
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
		cmocka_unit_test(remote_candidates),
		cmocka_unit_test(remote_missing_is_an_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
