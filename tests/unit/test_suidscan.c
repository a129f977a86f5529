/* Unit tests for core/jail/suidscan: the writable roots of a plan, and the walk on a scratch tree
 * (new setuid/setgid files stripped and reported, old ones and other kinds left alone, bounds
 * reported). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/jail/suidscan.h"
#include "testutil.h"
#include "util/xalloc.h"

static void add_op(struct bw_plan *p, const char *opt, const char *src)
{
	p->ops = xrealloc(p->ops, (p->nops + 1) * sizeof *p->ops);
	struct bw_op *op = &p->ops[p->nops++];
	memset(op, 0, sizeof *op);
	strv_push(&op->args, opt);
	op->src = src ? xstrdup(src) : NULL;
	op->fd = -1;
}

static void test_roots_from_plan(void **state)
{
	(void)state;
	struct bw_plan p = {0};
	add_op(&p, "--ro-bind-fd", "/usr");
	add_op(&p, "--bind-fd", "/home/u/proj");
	add_op(&p, "--bind-fd", "/home/u/proj/.git"); /* rename guard: inside the workspace */
	add_op(&p, "--bind-fd", "/home/u/data");
	add_op(&p, "--bind-fd", "/home/u/proj2"); /* not below /home/u/proj */
	add_op(&p, "--tmpfs", NULL);
	add_op(&p, "--ro-bind", "/etc");
	add_op(&p, "--bind-fd", "/home/u/.local/state/agentjail/cache/npm"); /* private cache */
	struct strv r = STRV_INIT;
	suidscan_roots(&p, "/home/u/.local/state/agentjail", &r);
	assert_int_equal(r.n, 3);
	assert_string_equal(r.v[0], "/home/u/data");
	assert_string_equal(r.v[1], "/home/u/proj");
	assert_string_equal(r.v[2], "/home/u/proj2");
	strv_free(&r);
	for (size_t i = 0; i < p.nops; i++) {
		strv_free(&p.ops[i].args);
		free(p.ops[i].src);
	}
	free(p.ops);
}

static char dir[] = "/tmp/aj-test-suidscan-XXXXXX";

static char *at(const char *rel)
{
	return xasprintf("%s/%s", dir, rel);
}

static void make_file(const char *rel, mode_t mode)
{
	char *p = at(rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(p, mode), 0);
	free(p);
}

static mode_t mode_of(const char *rel)
{
	char *p = at(rel);
	struct stat st;
	assert_int_equal(lstat(p, &st), 0);
	free(p);
	return st.st_mode & 07777;
}

static const struct suidscan_limits lim = {1000, 16};

static size_t scan(const struct timespec *since, struct violations *v)
{
	struct strv roots = STRV_INIT;
	strv_push(&roots, dir);
	size_t n = suidscan_check(&roots, since, &lim, v);
	strv_free(&roots);
	return n;
}

static int setup(void **state)
{
	(void)state;
	memcpy(dir + sizeof dir - 7, "XXXXXX", 6);
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return test_rm_tree(dir);
}

static void test_new_setid_files_stripped(void **state)
{
	(void)state;
	/* before the run: ctime older than `since` */
	make_file("old-suid", 04755);
	struct timespec since;
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &since), 0);
	since.tv_sec += 1; /* everything made from here on counts as "during the run" */
	struct timespec pause = {1, 100000000};
	(void)nanosleep(&pause, NULL);

	char *sub = at("a"), *sub2 = at("a/b");
	/* a setgid directory: not a file, left alone (mkdir itself drops the bit) */
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(chmod(sub, 02755), 0);
	assert_int_equal(mkdir(sub2, 0755), 0);
	make_file("a/b/suid", 04711);
	make_file("a/sgid", 02755);
	make_file("both", 06755);
	make_file("plain", 0755);
	char *link = at("a/link-to-old"), *target = at("old-suid");
	assert_int_equal(symlink(target, link), 0);

	struct violations v = {0};
	assert_int_equal(scan(&since, &v), 3);
	assert_int_equal(v.n, 3);
	assert_int_equal(mode_of("a/b/suid"), 0711);
	assert_int_equal(mode_of("a/sgid"), 0755);
	assert_int_equal(mode_of("both"), 0755);
	assert_int_equal(mode_of("plain"), 0755);
	assert_int_equal(mode_of("old-suid"), 04755);
	assert_int_equal(mode_of("a"), 02755);
	int seen = 0;
	for (size_t i = 0; i < v.n; i++) {
		assert_null(v.v[i].moved_to);
		assert_non_null(strstr(v.v[i].what, "(now removed)"));
		if (strstr(v.v[i].path, "/both"))
			seen |= 1, assert_non_null(strstr(v.v[i].what, "setuid and setgid bits"));
		if (strstr(v.v[i].path, "/a/b/suid"))
			seen |= 2, assert_non_null(strstr(v.v[i].what, "setuid bit"));
		if (strstr(v.v[i].path, "/a/sgid"))
			seen |= 4, assert_non_null(strstr(v.v[i].what, "setgid bit"));
	}
	assert_int_equal(seen, 7);
	violations_free(&v);
	/* a second scan finds nothing left */
	assert_int_equal(scan(&since, &v), 0);
	violations_free(&v);
	free(sub), free(sub2), free(link), free(target);
}

static void test_bounds_are_violations(void **state)
{
	(void)state;
	struct timespec since = {0, 0};
	/* deeper than the limit */
	char rel[256] = "d";
	for (int i = 0; i < 20; i++) {
		char *p = at(rel);
		assert_int_equal(mkdir(p, 0755), 0);
		free(p);
		strcat(rel, "/d");
	}
	struct violations v = {0};
	assert_int_equal(scan(&since, &v), 1);
	assert_non_null(strstr(v.v[0].what, "deeper than 16 levels"));
	violations_free(&v);
	/* more entries than the limit */
	for (int i = 0; i < 1100; i++) {
		char name[32];
		snprintf(name, sizeof name, "f%d", i);
		make_file(name, 0644);
	}
	assert_true(scan(&since, &v) >= 1);
	bool found = false;
	for (size_t i = 0; i < v.n; i++)
		found |= strstr(v.v[i].what, "more than 1000 entries") != NULL;
	assert_true(found);
	violations_free(&v);
}

static void test_missing_root_is_quiet_unreadable_is_loud(void **state)
{
	(void)state;
	struct timespec since = {0, 0};
	struct strv roots = STRV_INIT;
	strv_push(&roots, "/nonexistent-agentjail-suidscan");
	struct violations v = {0};
	assert_int_equal(suidscan_check(&roots, &since, &lim, &v), 0);
	strv_free(&roots);
	if (geteuid() == 0)
		return; /* root reads everything */
	char *p = at("closed");
	assert_int_equal(mkdir(p, 0), 0);
	assert_int_equal(scan(&since, &v), 1);
	assert_non_null(strstr(v.v[0].what, "could not be scanned"));
	violations_free(&v);
	assert_int_equal(chmod(p, 0700), 0);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roots_from_plan),
		cmocka_unit_test_setup_teardown(test_new_setid_files_stripped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds_are_violations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_root_is_quiet_unreadable_is_loud, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
