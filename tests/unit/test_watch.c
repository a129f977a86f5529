/* guard (core/jail/guard.h) for missing protected paths: the pure part (which directory to watch
 * for a missing path, what an event concerns), and the live part over a scratch tree: a path
 * that appears is moved aside at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/jail/guard.h"
#include "testutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/xalloc.h"

/* A fake filesystem: the listed paths are directories; anything else is not. */
static bool fake_dir(void *arg, const char *path)
{
	const char *const *dirs = arg;
	for (size_t i = 0; dirs[i]; i++)
		if (!strcmp(dirs[i], path))
			return true;
	return false;
}

static void anchor_is(const char *path, const char *const *dirs, const char *want)
{
	char *a = watch_anchor(path, fake_dir, (void *)dirs);
	assert_string_equal(a, want);
	free(a);
}

static void anchors(void **state)
{
	(void)state;
	static const char *const repo[] = {"/w", "/w/.git", NULL};
	/* the parent exists: watch it */
	anchor_is("/w/.git/hooks", repo, "/w/.git");
	/* .git/hooks missing too: the deepest existing one */
	anchor_is("/w/.git/hooks/pre-commit", repo, "/w/.git");
	static const char *const bare[] = {"/w", NULL};
	anchor_is("/w/.git/hooks/pre-commit", bare, "/w");
	anchor_is("/w/.vscode", bare, "/w");
	/* the path itself existing as a directory is never its own anchor */
	static const char *const all[] = {"/w", "/w/.vscode", NULL};
	anchor_is("/w/.vscode", all, "/w");
	/* a hole on the way stops the walk even when something deeper "exists" (it would be
	 * reached through whatever is there instead, e.g. a symlink) */
	static const char *const hole[] = {"/w", "/w/.claude/x", NULL};
	anchor_is("/w/.claude/x/settings.json", hole, "/w");
	static const char *const none[] = {NULL};
	anchor_is("/w/.envrc", none, "/");
	anchor_is("/top", none, "/");
}

static void events(void **state)
{
	(void)state;
	assert_true(watch_event_concerns("/w/.git", "hooks", "/w/.git/hooks"));
	assert_true(watch_event_concerns("/w/.git", "hooks", "/w/.git/hooks/pre-commit"));
	assert_true(watch_event_concerns("/w", ".git", "/w/.git/hooks/pre-commit"));
	assert_false(watch_event_concerns("/w", "README.md", "/w/.git/hooks"));
	assert_false(watch_event_concerns("/w", ".gitx", "/w/.git/hooks"));
	assert_false(watch_event_concerns("/w/.git", "hooks2", "/w/.git/hooks"));
	assert_false(watch_event_concerns("/w", "..", "/w/.git"));
	assert_false(watch_event_concerns("/w", "", "/w/.git"));
	assert_true(watch_event_concerns("/", "w", "/w/.envrc"));
}

static void live(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/aj-watch-XXXXXX";
	char *root = mkdtemp(tmpl);
	assert_non_null(root);
	char *ws = path_join(root, "ws"), *q = path_join(root, "q");
	char *git = path_join(ws, ".git"), *hooks = path_join(git, "hooks");
	char *envrc = path_join(ws, ".envrc");
	assert_int_equal(mkdir(ws, 0755), 0);
	struct strv paths = STRV_INIT;
	strv_push(&paths, hooks); /* .git missing too */
	strv_push(&paths, envrc);
	struct guard *w = NULL;
	struct guard_opts o = {.live = true}; /* missing paths: moved aside as they appear */
	struct err e = {0};
	assert_int_equal(guard_start(&paths, q, &o, &w, &e, &e), 0);
	assert_true(guard_fd(w) >= 0);
	struct violations v = {0};
	assert_int_equal(guard_handle(w, &v), 0); /* arms; nothing there yet */
	/* .git appears, then .git/hooks inside it: re-armed on .git, and moved aside */
	assert_int_equal(mkdir(git, 0755), 0);
	(void)guard_handle(w, &v);
	assert_int_equal(v.n, 0);
	assert_int_equal(mkdir(hooks, 0555), 0);
	assert_int_equal(guard_handle(w, &v), 1);
	assert_string_equal(v.v[0].path, hooks);
	assert_non_null(v.v[0].moved_to);
	assert_false(v.v[0].move_failed);
	struct stat st;
	assert_int_equal(lstat(hooks, &st), -1);
	assert_int_equal(lstat(v.v[0].moved_to, &st), 0);
	/* an unrelated file: no event worth a rescan, nothing reported */
	char *readme = path_join(ws, "README");
	FILE *f = fopen(readme, "we");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(guard_handle(w, &v), 0);
	/* a symlink at a protected name is moved too (never followed) */
	assert_int_equal(symlink("/etc/passwd", envrc), 0);
	assert_int_equal(guard_handle(w, &v), 1);
	assert_string_equal(v.v[1].what, "appeared (a symlink)");
	assert_int_equal(lstat(envrc, &st), -1);
	assert_int_equal(lstat("/etc/passwd", &st), 0);
	violations_free(&v);
	guard_free(w);
	strv_free(&paths);
	assert_int_equal(test_rm_tree(root), 0);
	free(readme), free(ws), free(q), free(git), free(hooks), free(envrc);
}

/* After guard_disarm (the run is over) nothing is watched, moved or armed again, and the fd
 * has nothing more to read than the kernel's IN_IGNORED. */
static void disarm(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/aj-watch-XXXXXX";
	char *root = mkdtemp(tmpl);
	assert_non_null(root);
	char *q = path_join(root, "q"), *envrc = path_join(root, ".envrc");
	struct strv paths = STRV_INIT;
	strv_push(&paths, envrc);
	struct guard *w = NULL;
	struct guard_opts o = {.live = true}; /* missing paths: moved aside as they appear */
	struct err e = {0};
	assert_int_equal(guard_start(&paths, q, &o, &w, &e, &e), 0);
	struct violations v = {0};
	assert_int_equal(guard_handle(w, &v), 0); /* armed on root */
	guard_disarm(w);
	FILE *f = fopen(envrc, "we");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(guard_handle(w, &v), 0);
	assert_int_equal(v.n, 0);
	struct stat st;
	assert_int_equal(lstat(envrc, &st), 0); /* left for the check after the run */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(guard_fd(w), buf, sizeof buf)) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			assert_true(ev->mask & IN_IGNORED); /* no IN_CREATE: the watch was gone */
			p += sizeof *ev + ev->len;
		}
	guard_disarm(w); /* twice is harmless */
	guard_free(w);
	strv_free(&paths);
	assert_int_equal(test_rm_tree(root), 0);
	free(q), free(envrc);
}

/* A move aside that cannot be done is marked, and the path is left where it was. */
static void move_fails(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/aj-watch-XXXXXX";
	char *root = mkdtemp(tmpl);
	assert_non_null(root);
	char *q = path_join(root, "q"), *envrc = path_join(root, ".envrc");
	FILE *f = fopen(q, "we"); /* the quarantine is a file: nothing can go into it */
	assert_non_null(f);
	fclose(f);
	f = fopen(envrc, "we");
	assert_non_null(f);
	fclose(f);
	struct violations v = {0};
	snapshot_move_now(envrc, q, &v);
	assert_int_equal(v.n, 1);
	assert_true(v.v[0].move_failed);
	assert_null(v.v[0].moved_to);
	assert_non_null(strstr(v.v[0].what, "could not move"));
	struct stat st;
	assert_int_equal(lstat(envrc, &st), 0);
	violations_free(&v);
	assert_int_equal(test_rm_tree(root), 0);
	free(q), free(envrc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(anchors),
		cmocka_unit_test(events),
		cmocka_unit_test(live),
		cmocka_unit_test(disarm),
		cmocka_unit_test(move_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
