/* Unit tests for the prebuilt seccomp programs (core/confine/seccomp.c, generated at build time by
 * tools/seccomp_gen.c): for every option set a run can ask for, the program the binary loads is,
 * instruction for instruction, the one libseccomp generates from the rules
 * (core/confine/seccomp_rules.c) here and now. A rule changed without regenerating, a generator
 * that skipped an option set, or a wrong errno rewrite fails here. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "core/confine/seccomp.h"
#include "core/confine/seccomp_prebuilt.h"
#include "core/confine/seccomp_rules.h"

static void assert_same(bool ptrace, int errnum)
{
	struct err e = {0};
	struct sock_filter *got = NULL, *want = NULL;
	size_t ngot = 0, nwant = 0;
	const struct sc_rules_opts o = {.allow_ptrace = ptrace, .errno_override = errnum};
	if (seccomp_program(ptrace, errnum, &got, &ngot, &e) < 0)
		fail_msg("seccomp_program(ptrace=%d, errno=%d): %s", ptrace, errnum, e.what);
	if (seccomp_rules_program(&o, &want, &nwant, &e) < 0)
		fail_msg("seccomp_rules_program(ptrace=%d, errno=%d): %s", ptrace, errnum, e.what);
	if (ngot != nwant)
		fail_msg("ptrace=%d errno=%d: prebuilt program has %zu instructions, libseccomp %zu",
			 ptrace, errnum, ngot, nwant);
	for (size_t i = 0; i < ngot; i++)
		if (memcmp(&got[i], &want[i], sizeof got[i]) != 0)
			fail_msg("ptrace=%d errno=%d: instruction %zu differs: prebuilt {0x%x %u %u 0x%x}, "
				 "libseccomp {0x%x %u %u 0x%x}",
				 ptrace, errnum, i, got[i].code, got[i].jt, got[i].jf, got[i].k,
				 want[i].code, want[i].jt, want[i].jf, want[i].k);
	free(got);
	free(want);
}

/* The options a normal run has: allow_ptrace off or on, the filter's own errnos. */
static void test_equal_normal_option_sets(void **state)
{
	assert_same(false, 0);
	assert_same(true, 0);
}

/* A test build's distinctive errno: every errno Linux has (among them the filter's own EPERM and
 * EAFNOSUPPORT, where libseccomp could merge refusals that are then equal), the top of the range
 * with the sentinel, and a spread between (all 4094 values take ~15 s). ENOSYS is refused. */
static void test_equal_test_errnos(void **state)
{
	for (int n = 1; n <= 4094; n += n < 140 || n > 3990 ? 1 : 97) {
		if (n == ENOSYS)
			continue;
		assert_same(false, n);
		assert_same(true, n);
	}
}

static void test_generated_for_this_arch(void **state)
{
	assert_int_equal(seccomp_prebuilt_arch, seccomp_arch_native());
	for (size_t i = 0; i < SECCOMP_PREBUILT_N; i++) {
		assert_non_null(seccomp_prebuilt[i].insns);
		assert_true(seccomp_prebuilt[i].len > 0 && seccomp_prebuilt[i].len <= BPF_MAXINSNS);
	}
}

static void test_errno_out_of_range(void **state)
{
	struct err e = {0};
	struct sock_filter *p = NULL;
	size_t n = 0;
	assert_int_equal(seccomp_program(false, 4095, &p, &n, &e), -1);
	assert_int_equal(e.errnum, EINVAL);
	assert_int_equal(seccomp_program(false, -1, &p, &n, &e), -1);
	assert_int_equal(seccomp_program(false, ENOSYS, &p, &n, &e), -1);
	assert_int_equal(e.errnum, EINVAL);
	assert_null(p);
}

/* The normal build's fd holds the default program whatever test_errno says. */
static void test_build_fd_is_prebuilt(void **state)
{
	struct err e = {0};
	int fd = -1;
	assert_int_equal(seccomp_build_fd(&(struct seccomp_opts){.allow_ptrace = true}, &fd, &e), 0);
	struct sock_filter *want = NULL;
	size_t n = 0;
	assert_int_equal(seccomp_program(true, 0, &want, &n, &e), 0);
	struct sock_filter *got = calloc(n + 1, sizeof *got);
	assert_int_equal(read(fd, got, (n + 1) * sizeof *got), (ssize_t)(n * sizeof *got));
	assert_memory_equal(got, want, n * sizeof *got);
	close(fd);
	free(got);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal_normal_option_sets),
		cmocka_unit_test(test_equal_test_errnos),
		cmocka_unit_test(test_generated_for_this_arch),
		cmocka_unit_test(test_errno_out_of_range),
		cmocka_unit_test(test_build_fd_is_prebuilt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
