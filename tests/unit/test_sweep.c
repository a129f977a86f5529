/* sweep: the agent's own directories on the Landlock backend. What a run made or changed there
 * (a file, a directory whole, a symlink: never followed) is moved into the quarantine and
 * reported; what it left alone stays; a directory made during the run goes whole; the pure
 * comparison (a directory's ctime moves with its entries, a file's does not). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/jail/sweep.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"
#include "testutil.h"

struct fx {
	char dir[64];
	char *quarantine;
};

static char *at(const struct fx *f, const char *rel) { return path_join(f->dir, rel); }

static bool exists(const struct fx *f, const char *rel)
{
	_cleanup_free_ char *p = at(f, rel);
	struct stat st;
	return lstat(p, &st) == 0;
}

/* the quarantine holds a directory made 000: opened again so that teardown removes it */
static int open_up(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	if (flag == FTW_D || flag == FTW_DNR)
		return chmod(path, 0700) < 0 && !S_ISLNK(st->st_mode) ? -1 : 0;
	return 0;
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/aj-sweep-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->quarantine = at(f, "quarantine");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (nftw(f->dir, open_up, 16, FTW_PHYS) < 0)
		return -1;
	int rc = test_rm_tree(f->dir);
	free(f->quarantine);
	free(f);
	return rc;
}

static void test_changed(void **state)
{
	(void)state;
	struct sweep_ent b = {.rel = "x", .type = S_IFREG, .dev = 1, .ino = 2, .ctime = {10, 5}};
	struct stat st = {.st_mode = S_IFREG | 0644, .st_dev = 1, .st_ino = 2};
	st.st_ctim = (struct timespec){10, 5};
	assert_false(sweep_ent_changed(&b, &st));
	st.st_ctim.tv_nsec = 6; /* written, chmod'ed, linked */
	assert_true(sweep_ent_changed(&b, &st));
	st.st_ctim.tv_nsec = 5;
	st.st_ino = 3; /* replaced */
	assert_true(sweep_ent_changed(&b, &st));
	st.st_ino = 2;
	st.st_mode = S_IFLNK | 0777;
	assert_true(sweep_ent_changed(&b, &st));
	b.type = S_IFDIR; /* a directory: its ctime moves with its entries, which are looked at */
	b.perm = 0755;
	st.st_mode = S_IFDIR | 0755;
	st.st_ctim.tv_sec = 99;
	assert_false(sweep_ent_changed(&b, &st));
	st.st_mode = S_IFDIR | 0000; /* but a chmod would hide them */
	assert_true(sweep_ent_changed(&b, &st));
}

static void test_check(void **state)
{
	struct fx *f = *state;
	test_put(f->dir, "snap/old.sh", "# old\n");
	test_put(f->dir, "snap/host.sh", "# host\n");
	test_put(f->dir, "snap/keep/deep.sh", "# deep\n");
	test_put(f->dir, "snap/hidden/ok.sh", "# hidden\n");
	_cleanup_free_ char *snap = at(f, "snap");
	_cleanup_free_ char *made = at(f, "made");
	_cleanup_free_ char *missing = at(f, "never");
	struct strv dirs = STRV_INIT;
	strv_push(&dirs, snap);
	strv_push(&dirs, made);
	strv_push(&dirs, missing);
	struct sweep sw;
	sweep_take(&dirs, &sw);
	assert_int_equal(sw.n, 3);
	assert_null(sw.d[0].unswept);
	assert_true(sw.d[0].exists);
	assert_false(sw.d[1].exists);
	/* ctime granularity (the kernel's tick): the writes below are later than the take */
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	/* the run: a new file, a changed one, a new directory with a file, a symlink out, a
	 * directory made where none was */
	test_put(f->dir, "snap/planted.sh", "touch /tmp/x\n");
	_cleanup_free_ char *host = at(f, "snap/host.sh");
	FILE *fp = fopen(host, "a");
	assert_non_null(fp);
	fputs("touch /tmp/x\n", fp);
	fclose(fp);
	test_put(f->dir, "snap/newdir/inner.sh", "touch /tmp/x\n");
	test_put(f->dir, "outside/kept", "mine\n");
	_cleanup_free_ char *link = at(f, "snap/link");
	_cleanup_free_ char *outside = at(f, "outside");
	assert_int_equal(symlink(outside, link), 0);
	test_put(f->dir, "made/x.sh", "touch /tmp/x\n");
	test_put(f->dir, "snap/hidden/plant.sh", "touch /tmp/x\n"); /* then hidden by a chmod */
	_cleanup_free_ char *hidden = at(f, "snap/hidden");
	assert_int_equal(chmod(hidden, 0), 0);
	struct violations v = {0};
	struct err e = {0};
	assert_int_equal(sweep_check(&sw, f->quarantine, &v, &e), 0);
	assert_false(exists(f, "snap/planted.sh"));
	assert_false(exists(f, "snap/host.sh"));
	assert_false(exists(f, "snap/newdir"));
	assert_false(exists(f, "snap/link"));
	assert_false(exists(f, "made"));
	assert_false(exists(f, "snap/hidden"));
	assert_true(exists(f, "snap/old.sh"));
	assert_true(exists(f, "snap/keep/deep.sh"));
	assert_true(exists(f, "outside/kept")); /* the symlink went, not what it pointed at */
	assert_int_equal(v.n, 6);
	size_t moved = 0, whole = 0;
	for (size_t i = 0; i < v.n; i++) {
		assert_true(v.v[i].own_words);
		moved += v.v[i].moved_to != NULL;
		whole += strstr(v.v[i].what, "made, replaced or filled") != NULL;
		if (strstr(v.v[i].path, "/snap/"))
			assert_non_null(strstr(v.v[i].what, "written during the run"));
	}
	assert_int_equal(moved, 6);
	assert_int_equal(whole, 1); /* made/ */
	violations_free(&v);
	sweep_free(&sw);
	strv_free(&dirs);
}

/* Left alone, nothing moves; a directory that does not exist and is not made is no violation. */
static void test_untouched(void **state)
{
	struct fx *f = *state;
	test_put(f->dir, "snap/a", "a\n");
	test_put(f->dir, "snap/b/c", "c\n");
	_cleanup_free_ char *snap = at(f, "snap");
	_cleanup_free_ char *missing = at(f, "never");
	struct strv dirs = STRV_INIT;
	strv_push(&dirs, snap);
	strv_push(&dirs, missing);
	struct sweep sw;
	sweep_take(&dirs, &sw);
	struct violations v = {0};
	struct err e = {0};
	assert_int_equal(sweep_check(&sw, f->quarantine, &v, &e), 0);
	assert_int_equal(v.n, 0);
	assert_true(exists(f, "snap/b/c"));
	sweep_free(&sw);
	strv_free(&dirs);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_changed),
		T(test_check),
		T(test_untouched),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
