/* Tests for core/plan/initargs: the `__init` command line built by the argv builder is the one
 * init parses (a round trip), and init refuses what it does not know. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "core/plan/initargs.h"
#include "util/strv.h"

/* argv0, the built options, then the command */
static void build_argv(const struct init_args *in, const char *const *cmd, struct strv *out)
{
	strv_push(out, "/run/agentjail/init");
	initargs_build(in, out);
	for (size_t i = 0; cmd[i]; i++)
		strv_push(out, cmd[i]);
}

static void round_trip(void **state)
{
	(void)state;
	static const char *const cmd[] = {"sh", "-c", "--writable", NULL};
	struct init_args in = {.ctl = 5, .scope = true, .rlimit_data = 1ULL << 33,
			       .rlimit_nproc = 4096, .note_lock = (char *)"/home/u/.gitconfig",
			       .capture = true};
	strv_push(&in.writable, "/work space");
	strv_push(&in.writable, "/tmp");
	strv_push(&in.deny_read, "/etc/shadow");
	struct strv argv = STRV_INIT;
	build_argv(&in, cmd, &argv);
	assert_string_equal(argv.v[1], INIT_VERB);

	struct init_args out;
	assert_int_equal(initargs_parse((int)argv.n, argv.v, &out), 0);
	assert_int_equal(out.ctl, 5);
	assert_true(out.scope);
	assert_true(out.rlimit_data == 1ULL << 33);
	assert_true(out.rlimit_nproc == 4096);
	assert_string_equal(out.note_lock, "/home/u/.gitconfig");
	assert_true(out.capture);
	assert_int_equal(out.writable.n, 2);
	assert_string_equal(out.writable.v[0], "/work space");
	assert_string_equal(out.writable.v[1], "/tmp");
	assert_int_equal(out.deny_read.n, 1);
	assert_string_equal(out.deny_read.v[0], "/etc/shadow");
	/* the command is everything after "--", even when it looks like an option */
	assert_string_equal(out.cmd[0], "sh");
	assert_string_equal(out.cmd[2], "--writable");
	assert_null(out.cmd[3]);
	initargs_free(&out);
	initargs_free(&in);
	strv_free(&argv);
}

static void defaults_round_trip(void **state)
{
	(void)state;
	static const char *const cmd[] = {"true", NULL};
	struct init_args in = {.ctl = -1};
	struct strv argv = STRV_INIT;
	build_argv(&in, cmd, &argv);
	assert_int_equal(argv.n, 4); /* init __init -- true: nothing unset is written */
	struct init_args out;
	assert_int_equal(initargs_parse((int)argv.n, argv.v, &out), 0);
	assert_int_equal(out.ctl, -1);
	assert_false(out.scope);
	assert_false(out.capture);
	assert_true(out.rlimit_data == 0 && out.rlimit_nproc == 0);
	assert_null(out.note_lock);
	assert_int_equal(out.writable.n + out.deny_read.n, 0);
	assert_string_equal(out.cmd[0], "true");
	initargs_free(&out);
	strv_free(&argv);
}

static void refused(void **state)
{
	(void)state;
	static const char *const bad[][6] = {
		{"init", INIT_VERB, "--bogus", "--", "true", NULL},   /* unknown option */
		{"init", INIT_VERB, INIT_OPT_WRITABLE, NULL},          /* missing value */
		{"init", INIT_VERB, INIT_OPT_SCOPE, "--", NULL},       /* no command */
		{"init", INIT_VERB, INIT_OPT_SCOPE, "true", NULL},     /* no "--" */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int n = 0;
		while (bad[i][n])
			n++;
		struct init_args out;
		assert_int_equal(initargs_parse(n, (char **)bad[i], &out), -1);
		initargs_free(&out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(defaults_round_trip),
		cmocka_unit_test(refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
