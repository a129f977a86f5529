/* The persisted home of --home persist (doc/design.md §3 step 5): where it lives and what a plan
 * makes in it (core/plan/homekeep.h, pure, over tests/data/argv/home-persist.facts), and on disk
 * (core/host/homeprep.h): the way to bwrap's mount points cleared of what an earlier jail left
 * (a symlink out of the home, a file where a directory goes), one jail at a time (the lock), the
 * list and the removal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/host/homeprep.h"
#include "core/plan/bwrap_argv.h"
#include "core/plan/homekeep.h"
#include "core/plan/policy.h"
#include "golden.h"
#include "testutil.h"
#include "util/path.h"
#include "util/xalloc.h"

#define KEY "9c09f8055a26c27736ddcc04b4e693af" /* sha256("/home/u/proj"), 128 bits */

/* The plan of home-persist.facts with `mode`. */
static void plan_of(const char *mode, struct hostfacts *hf, struct bw_plan *plan)
{
	char facts[4200];
	golden_load(golden_dir("argv"), "home-persist", hf, facts);
	const char *args[] = {"--home", mode, "--", "bash", NULL};
	struct parse_ctx ctx = {.cwd = hf->cwd, .home = hf->home};
	struct run_request req;
	struct err e = {0};
	assert_int_equal(run_parse_args(4, (char **)args, &ctx, &req, &e), 0);
	if (bwrap_build(&req.pol, hf, &req.cmd, plan, &e) < 0)
		fail_msg("%s: %s", e.what, e.path);
	run_request_free(&req);
}

static void paths(void **state)
{
	(void)state;
	char *root = homekeep_root("/s", "/home/u/proj");
	char *dir = homekeep_dir("/s", "/home/u/proj");
	assert_string_equal(root, "/s/home/" KEY);
	assert_string_equal(dir, "/s/home/" KEY "/home");
	assert_null(homekeep_root(NULL, "/home/u/proj"));
	/* verify's writable-mount probe: the persisted home at $HOME, nothing else */
	assert_true(homekeep_is_home_mount("/home/u", "/home/u/.local/state/agentjail/home/" KEY
						       "/home",
					   "/home/u"));
	assert_false(homekeep_is_home_mount("/home/u", "/home/u/x/home/" KEY "/home", "/home/u/y"));
	assert_false(homekeep_is_home_mount("/home/u", "/tmp/home/notakey/home", "/home/u"));
	assert_false(homekeep_is_home_mount("/home/u", "/tmp/cache/" KEY "/home", "/home/u"));
	free(root);
	free(dir);
}

/* Every place the plan has bwrap make inside the persisted home, and nothing else. */
static void points(void **state)
{
	(void)state;
	struct hostfacts hf;
	struct bw_plan plan;
	plan_of("persist", &hf, &plan);
	char *dir = homekeep_dir(hf.state_dir, "/home/u/proj");
	struct homekeep_points pts;
	homekeep_points(&plan, &hf, hf.home, dir, &pts);
	/* the PATH directory, the workspace (inside $HOME here) */
	assert_int_equal(pts.dirs.n, 2);
	assert_true(strv_contains(&pts.dirs, ".local/bin"));
	assert_true(strv_contains(&pts.dirs, "proj"));
	/* ~/.gitconfig, the filtered pip.conf */
	assert_int_equal(pts.files.n, 2);
	assert_true(strv_contains(&pts.files, ".gitconfig"));
	assert_true(strv_contains(&pts.files, ".config/pip/pip.conf"));
	assert_int_equal(pts.links.n, 0);
	homekeep_points_free(&pts);
	bw_plan_free(&plan);
	hostfacts_free(&hf);
	/* a tmpfs home: bwrap makes its places there, nothing on the host */
	plan_of("tmp", &hf, &plan);
	homekeep_points(&plan, &hf, hf.home, dir, &pts);
	assert_int_equal(pts.dirs.n + pts.files.n + pts.links.n, 0);
	homekeep_points_free(&pts);
	bw_plan_free(&plan);
	hostfacts_free(&hf);
	free(dir);
}

/* ---- on disk ---- */

static char tmp[] = "/tmp/aj-test-homekeep-XXXXXX";

static char *at(const char *rel)
{
	return xasprintf("%s/%s", tmp, rel);
}

static int setup(void **state)
{
	(void)state;
	strcpy(tmp + strlen(tmp) - 6, "XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char *cmd = xasprintf("chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", tmp, tmp);
	int rc = system(cmd);
	free(cmd);
	return rc == 0 ? 0 : -1;
}

static mode_t type_at(const char *rel)
{
	char *p = at(rel);
	struct stat st;
	mode_t m = lstat(p, &st) == 0 ? st.st_mode & S_IFMT : 0;
	free(p);
	return m;
}

/* What an earlier jail left where this plan's places go is renamed aside, never followed: a
 * symlink on the way (to outside the home), a file where a directory goes, a directory where a
 * file goes, a link to elsewhere where the plan makes a link; what fits stays. */
static void clear_the_way(void **state)
{
	(void)state;
	char *root = at("state/home/" KEY);
	char *outside = at("outside");
	int lock = -1;
	struct err e = {0};
	assert_int_equal(homeprep_prepare(root, "/home/u/proj", "sess", &lock, &e), 0);
	test_put(tmp, "outside/keep", "host");
	test_put(tmp, "state/home/" KEY "/home/.local/bin/tool", "mine");  /* fits: stays */
	test_put(tmp, "state/home/" KEY "/home/.gitconfig/x", "a dir");    /* a file goes there */
	test_put(tmp, "state/home/" KEY "/home/proj", "a file");           /* a dir goes there */
	test_put(tmp, "state/home/" KEY "/home/closed/inner", NULL);
	char *l1 = at("state/home/" KEY "/home/.config");
	assert_int_equal(symlink(outside, l1), 0); /* on the way to .config/pip/pip.conf */
	char *l2 = at("state/home/" KEY "/home/link");
	assert_int_equal(symlink("elsewhere", l2), 0);
	char *l3 = at("state/home/" KEY "/home/same");
	assert_int_equal(symlink("target", l3), 0);
	char *closed = at("state/home/" KEY "/home/closed");
	assert_int_equal(chmod(closed, 0), 0);
	struct homekeep_points pts = {STRV_INIT, STRV_INIT, STRV_INIT};
	strv_push(&pts.dirs, ".local/bin");
	strv_push(&pts.dirs, "proj");
	strv_push(&pts.dirs, "closed/inner/deeper");
	strv_push(&pts.files, ".gitconfig");
	strv_push(&pts.files, ".config/pip/pip.conf");
	strv_push(&pts.links, "link");
	strv_push(&pts.links, "target");
	strv_push(&pts.links, "same");
	strv_push(&pts.links, "target");
	char *dir = at("state/home/" KEY "/home");
	struct strv moved = STRV_INIT;
	if (homeprep_clear(dir, &pts, &moved, &e) < 0)
		fail_msg("%s: %s", e.what, e.path);
	assert_int_equal(moved.n, 4);
	assert_string_equal(moved.v[0], "~/proj (a file): renamed to proj.agentjail-moved");
	assert_string_equal(moved.v[1], "~/.gitconfig (a directory): renamed to "
					".gitconfig.agentjail-moved");
	assert_string_equal(moved.v[2], "~/.config (a symlink): renamed to .config.agentjail-moved");
	assert_string_equal(moved.v[3], "~/link (a symlink): renamed to link.agentjail-moved");
	assert_int_equal(type_at("state/home/" KEY "/home/.local/bin/tool"), S_IFREG);
	assert_int_equal(type_at("state/home/" KEY "/home/.config"), 0); /* bwrap makes it */
	assert_int_equal(type_at("state/home/" KEY "/home/.config.agentjail-moved"), S_IFLNK);
	assert_int_equal(type_at("state/home/" KEY "/home/same"), S_IFLNK);
	assert_int_equal(type_at("outside/keep"), S_IFREG);
	assert_int_equal(type_at("outside/pip"), 0); /* nothing made through the link */
	/* the same again: nothing left in the way, nothing renamed */
	strv_free(&moved);
	assert_int_equal(homeprep_clear(dir, &pts, &moved, &e), 0);
	assert_int_equal(moved.n, 0);
	/* a second rename of the same name takes the next free one */
	test_put(tmp, "state/home/" KEY "/home/proj", "again");
	assert_int_equal(homeprep_clear(dir, &pts, &moved, &e), 0);
	assert_int_equal(moved.n, 1);
	assert_string_equal(moved.v[0], "~/proj (a file): renamed to proj.agentjail-moved-2");
	strv_free(&moved);
	homekeep_points_free(&pts);
	close(lock);
	free(dir);
	free(closed);
	free(l1);
	free(l2);
	free(l3);
	free(outside);
	free(root);
}

/* One jail at a time: a second prepare (another agentjail: another open file description) is
 * refused naming the first, and so is clean; list says it is in use, without taking the lock. */
static void one_at_a_time(void **state)
{
	(void)state;
	char *root = at("state/home/" KEY);
	char *state_dir = at("state");
	int lock = -1, other = -1;
	struct err e = {0};
	assert_int_equal(homeprep_prepare(root, "/home/u/proj", "0123abcd-ffff", &lock, &e), 0);
	test_put(tmp, "state/home/" KEY "/home/.bashrc", "echo hi\n");
	assert_int_equal(homeprep_prepare(root, "/home/u/proj", "other", &other, &e), -1);
	assert_int_equal(e.errnum, EBUSY);
	assert_int_equal(other, -1);
	char *want = xasprintf("(agentjail pid %ld, session 0123abcd)", (long)getpid());
	if (!strstr(e.what, want))
		fail_msg("%s", e.what);
	free(want);
	struct home_entry *v = NULL;
	size_t n = 0;
	assert_int_equal(homeprep_list(state_dir, &v, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_true(v[0].in_use);
	assert_string_equal(v[0].workspace, "/home/u/proj");
	assert_true(v[0].bytes > 0 && v[0].used > 0);
	uint64_t freed = 0;
	assert_int_equal(homeprep_remove(&v[0], &freed, &e), -1);
	assert_int_equal(e.errnum, EBUSY);
	assert_int_equal(type_at("state/home/" KEY "/home/.bashrc"), S_IFREG);
	homeprep_list_free(v, n);
	/* the run ends: the home is free, listed so, and removed whole */
	close(lock);
	assert_int_equal(homeprep_list(state_dir, &v, &n, &e), 0);
	assert_false(v[0].in_use);
	assert_int_equal(homeprep_remove(&v[0], &freed, &e), 0);
	assert_int_equal(freed, v[0].bytes);
	assert_int_equal(type_at("state/home/" KEY), 0);
	homeprep_list_free(v, n);
	assert_int_equal(homeprep_list(state_dir, &v, &n, &e), 0);
	assert_int_equal(n, 0);
	free(state_dir);
	free(root);
}

/* What a jail may do to its own home does not stop the next run or the removal: $HOME made
 * 0000, a symlink where the home's record would be read is never followed. */
static void hostile_home(void **state)
{
	(void)state;
	char *root = at("state/home/" KEY);
	char *state_dir = at("state");
	char *home = at("state/home/" KEY "/home");
	int lock = -1;
	struct err e = {0};
	assert_int_equal(homeprep_prepare(root, "/home/u/proj", "s", &lock, &e), 0);
	test_put(tmp, "outside/keep", "host");
	test_put(tmp, "state/home/" KEY "/home/sub/f", "x");
	char *out = at("outside");
	char *l = at("state/home/" KEY "/home/sub/out");
	assert_int_equal(symlink(out, l), 0);
	assert_int_equal(chmod(home, 0), 0);
	close(lock);
	/* the next run opens it again */
	assert_int_equal(homeprep_prepare(root, "/home/u/proj", "s", &lock, &e), 0);
	struct stat st;
	assert_int_equal(stat(home, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	close(lock);
	assert_int_equal(chmod(home, 0), 0);
	struct home_entry *v = NULL;
	size_t n = 0;
	assert_int_equal(homeprep_list(state_dir, &v, &n, &e), 0);
	assert_int_equal(n, 1);
	uint64_t freed = 0;
	if (homeprep_remove(&v[0], &freed, &e) < 0)
		fail_msg("%s: %s", e.what, e.path);
	assert_int_equal(type_at("state/home/" KEY), 0);
	assert_int_equal(type_at("outside/keep"), S_IFREG);
	homeprep_list_free(v, n);
	free(l);
	free(out);
	free(home);
	free(state_dir);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paths),
		cmocka_unit_test(points),
		cmocka_unit_test_setup_teardown(clear_the_way, setup, teardown),
		cmocka_unit_test_setup_teardown(one_at_a_time, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_home, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
