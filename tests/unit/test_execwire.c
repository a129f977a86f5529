/* Tests for `agentjail exec`'s wire (core/plan/execwire) and the control socket's reply to ps
 * (core/plan/ctlproto: ctlproto_jail_parse). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/ctlproto.h"
#include "core/plan/execwire.h"

static void roundtrip(void **state)
{
	(void)state;
	const char *argv[] = {"sh", "-c", "echo 'a b'; exit 3", "ünïcode"};
	char buf[EXECWIRE_MAX];
	size_t n = execwire_pack(EXW_TTY, argv, 4, buf, sizeof buf);
	assert_true(n > 0);
	char *back[8];
	unsigned flags = 99;
	size_t argc = 0;
	assert_int_equal(execwire_unpack(buf, n, &flags, back, 7, &argc), 0);
	assert_int_equal(flags, EXW_TTY);
	assert_int_equal(argc, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(back[i], argv[i]);
	assert_null(back[4]);
	/* no arguments: the jail's shell */
	n = execwire_pack(0, NULL, 0, buf, sizeof buf);
	assert_int_equal(n, 5);
	assert_int_equal(execwire_unpack(buf, n, &flags, back, 7, &argc), 0);
	assert_int_equal(argc, 0);
	assert_int_equal(flags, 0);
	assert_null(back[0]);
}

static void pack_refuses(void **state)
{
	(void)state;
	char buf[64];
	const char *empty[] = {"sh", ""};
	assert_int_equal(execwire_pack(0, empty, 2, buf, sizeof buf), 0);
	const char *big[] = {"0123456789012345678901234567890123456789012345678901234567890"};
	assert_int_equal(execwire_pack(0, big, 1, buf, sizeof buf), 0); /* does not fit */
	assert_int_equal(execwire_pack(0x80, NULL, 0, buf, sizeof buf), 0); /* unknown flag */
	static const char *many[EXECWIRE_ARGS_MAX + 1];
	for (size_t i = 0; i <= EXECWIRE_ARGS_MAX; i++)
		many[i] = "x";
	char *large = malloc(EXECWIRE_MAX);
	assert_int_equal(execwire_pack(0, many, EXECWIRE_ARGS_MAX + 1, large, EXECWIRE_MAX), 0);
	assert_true(execwire_pack(0, many, EXECWIRE_ARGS_MAX, large, EXECWIRE_MAX) > 0);
	free(large);
}

static void unpack_refuses(void **state)
{
	(void)state;
	struct {
		const char *b;
		size_t n;
	} bad[] = {
		{"", 0},
		{"AJX1", 4},                /* no flags byte */
		{"AJX2\0sh\0", 8},          /* another version */
		{"AJX1\x02sh\0", 8},        /* an unknown flag */
		{"AJX1\0sh", 7},            /* the last argument without its NUL */
		{"AJX1\0sh\0\0", 9},        /* an empty argument */
		{"XJX1\0sh\0", 8},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char buf[32];
		memcpy(buf, bad[i].b, bad[i].n);
		char *argv[4];
		unsigned flags;
		size_t argc;
		if (execwire_unpack(buf, bad[i].n, &flags, argv, 3, &argc) == 0)
			fail_msg("accepted #%zu", i);
	}
	/* more than max */
	char buf[] = "AJX1\0a\0b\0c\0d";
	char *argv[4];
	unsigned flags;
	size_t argc;
	assert_int_equal(execwire_unpack(buf, sizeof buf, &flags, argv, 3, &argc), -1);
	assert_int_equal(execwire_unpack(buf, sizeof buf - 0, &flags, (char *[6]){0}, 5, &argc), 0);
	assert_int_equal(argc, 4);
}

static void jail_reply(void **state)
{
	(void)state;
	long pid = -1;
	bool stopping = true;
	assert_int_equal(ctlproto_jail_parse("jail 4242 running", &pid, &stopping), 0);
	assert_int_equal(pid, 4242);
	assert_false(stopping);
	assert_int_equal(ctlproto_jail_parse("jail 0 stopping", &pid, &stopping), 0);
	assert_int_equal(pid, 0);
	assert_true(stopping);
	const char *bad[] = {"jail", "jail 12", "jail  12 running", "jail 12 running ",
			     "jail -1 running", "jail 99999999 running", "jail 12 dead",
			     "jails 12 running", "jail 1x running", "jail 99999999999999999999 running"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (ctlproto_jail_parse(bad[i], &pid, &stopping) == 0)
			fail_msg("accepted: \"%s\"", bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roundtrip),
		cmocka_unit_test(pack_refuses),
		cmocka_unit_test(unpack_refuses),
		cmocka_unit_test(jail_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
