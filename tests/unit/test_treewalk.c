/* The walk that measures and removes what jails wrote in agentjail's state (core/host/treewalk.h),
 * through the caches' own entry points (core/host/toolprep.h): a tree thousands of directories
 * deep is measured and removed with a handful of descriptors, a directory a jail closed (chmod
 * 000) goes too, a symlink is removed and never followed, a shared cache keeps its
 * directories. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/host/toolprep.h"
#include "testutil.h"
#include "util/xalloc.h"

#define KEY "0123456789abcdef0123456789abcdef"
#define DEPTH 3000

static char dir[] = "/tmp/aj-test-treewalk-XXXXXX";

static char *at(const char *rel)
{
	return xasprintf("%s/%s", dir, rel);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir + strlen(dir) - 6, "XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
	int rc = system(cmd);
	free(cmd);
	return rc == 0 ? 0 : -1;
}

/* DEPTH directories under rel, one inside the other, a file at the bottom */
static void make_deep(const char *rel)
{
	char *top = at(rel);
	test_put(dir, rel, NULL);
	int fd = open(top, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	for (int i = 0; i < DEPTH; i++) {
		assert_int_equal(mkdirat(fd, "d", 0755), 0);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	int f = openat(fd, "bottom", O_WRONLY | O_CREAT, 0644);
	assert_true(f >= 0 && write(f, "x", 1) == 1);
	close(f);
	close(fd);
	free(top);
}

/* what the walks may use: a jail makes the tree, the host's limit is the user's */
static void few_fds(void)
{
	struct rlimit rl = {64, 64};
	struct rlimit now;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &now), 0);
	if (now.rlim_max < rl.rlim_max)
		rl.rlim_max = rl.rlim_cur = now.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
}

static void test_deep_tree(void **state)
{
	(void)state;
	make_deep("state/cache/ws/" KEY "/npm");
	few_fds();
	char *state_dir = at("state");
	struct cache_entry *v = NULL;
	size_t n = 0;
	struct err e = {0};
	int rc = toolprep_cache_list(state_dir, &v, &n, &e);
	if (rc < 0)
		fail_msg("cache size of a tree %d deep: %s: %s", DEPTH, e.what, e.path);
	assert_int_equal(n, 1);
	assert_true(v[0].bytes >= (uint64_t)DEPTH * 512);
	uint64_t freed = 0;
	rc = toolprep_cache_remove(&v[0], &freed, &e);
	if (rc < 0)
		fail_msg("cache clean of a tree %d deep: %s: %s", DEPTH, e.what, e.path);
	assert_int_equal(freed, v[0].bytes);
	char *gone = at("state/cache/ws/" KEY);
	struct stat st;
	assert_int_equal(lstat(gone, &st), -1);
	toolprep_cache_list_free(v, n);
	free(gone);
	free(state_dir);
}

static void test_closed_dir_and_links(void **state)
{
	(void)state;
	test_put(dir, "outside/keep", "host file");
	test_put(dir, "state/cache/ws/" KEY "/pip/closed/inner/f", "x");
	char *closed = at("state/cache/ws/" KEY "/pip/closed");
	char *inner = at("state/cache/ws/" KEY "/pip/closed/inner");
	char *link = at("state/cache/ws/" KEY "/pip/out");
	char *outside = at("outside");
	assert_int_equal(chmod(inner, 0), 0);
	assert_int_equal(chmod(closed, 0), 0);
	assert_int_equal(symlink(outside, link), 0);
	char *state_dir = at("state");
	struct cache_entry *v = NULL;
	size_t n = 0;
	struct err e = {0};
	assert_int_equal(toolprep_cache_list(state_dir, &v, &n, &e), 0);
	assert_int_equal(n, 1);
	uint64_t freed = 0;
	int rc = toolprep_cache_remove(&v[0], &freed, &e);
	if (rc < 0)
		fail_msg("cache clean with a closed directory: %s: %s", e.what, e.path);
	struct stat st;
	assert_int_equal(lstat(link, &st), -1);
	char *keep = at("outside/keep");
	assert_int_equal(lstat(keep, &st), 0); /* the link went, not what it pointed at */
	toolprep_cache_list_free(v, n);
	free(keep);
	free(state_dir);
	free(outside);
	free(link);
	free(inner);
	free(closed);
}

static void test_shared_keeps_dirs(void **state)
{
	(void)state;
	test_put(dir, "state/cache/shared/npm/_npx/a/b", "x");
	test_put(dir, "state/cache/shared/npm/top", "y");
	test_put(dir, "state/cache/shared/pip/w", "z");
	char *state_dir = at("state");
	struct cache_entry *v = NULL;
	size_t n = 0;
	struct err e = {0};
	assert_int_equal(toolprep_cache_list(state_dir, &v, &n, &e), 0);
	assert_int_equal(n, 1);
	uint64_t freed = 0;
	assert_int_equal(toolprep_cache_remove(&v[0], &freed, &e), 0);
	assert_true(freed > 0);
	char *npm = at("state/cache/shared/npm");
	char *npx = at("state/cache/shared/npm/_npx");
	char *w = at("state/cache/shared/pip/w");
	struct stat st;
	assert_int_equal(lstat(npm, &st), 0); /* the tools' directories stay */
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(lstat(npx, &st), -1); /* what was in them goes */
	assert_int_equal(lstat(w, &st), -1);
	toolprep_cache_list_free(v, n);
	free(npm);
	free(npx);
	free(w);
	free(state_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_closed_dir_and_links, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shared_keeps_dirs, setup, teardown),
		/* last: it lowers the descriptor limit for good */
		cmocka_unit_test_setup_teardown(test_deep_tree, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
