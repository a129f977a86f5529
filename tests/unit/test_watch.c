/* guard (core/jail/guard.h) for missing protected paths: the pure part (which directory to watch
 * for a missing path, what an event concerns), and the live part over a scratch tree: a path
 * that appears is moved aside at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/jail/guard.h"
#include "testutil.h"
#include "util/fs.h"
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

/* fake_dir, counting the questions */
struct counted {
	const char *const *dirs;
	int asked;
};

static bool counted_dir(void *arg, const char *path)
{
	struct counted *c = arg;
	c->asked++;
	return fake_dir((void *)c->dirs, path);
}

/* The arming pass's memo: each directory asked once however many paths share it, asked again
 * once forgotten (a watch began, or the tree changed), with the new answer. */
static void memo(void **state)
{
	(void)state;
	static const char *const before[] = {"/w", NULL};
	static const char *const after[] = {"/w", "/w/.git", NULL};
	struct counted c = {before, 0};
	struct dirmemo m = {.path = STRV_INIT, .ask = counted_dir, .arg = &c};
	char *a = watch_anchor("/w/.git/hooks", dirmemo_isdir, &m);
	assert_string_equal(a, "/w");
	free(a);
	assert_int_equal(c.asked, 2); /* /w, /w/.git */
	a = watch_anchor("/w/.git/config", dirmemo_isdir, &m);
	free(a);
	a = watch_anchor("/w/.envrc", dirmemo_isdir, &m);
	free(a);
	assert_int_equal(c.asked, 2); /* nothing asked twice */
	c.dirs = after; /* .git made: the memo still says what it saw */
	a = watch_anchor("/w/.git/hooks", dirmemo_isdir, &m);
	assert_string_equal(a, "/w");
	free(a);
	dirmemo_forget(&m);
	a = watch_anchor("/w/.git/hooks", dirmemo_isdir, &m);
	assert_string_equal(a, "/w/.git");
	free(a);
	assert_int_equal(c.asked, 4);
	dirmemo_forget(&m);
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

/* A guard over one missing path, root/.envrc, in a scratch directory, armed. */
struct one {
	char tmpl[32];
	char *root, *q, *envrc;
	struct strv paths;
	struct guard *w;
};

static void one_start(struct one *t)
{
	snprintf(t->tmpl, sizeof t->tmpl, "/tmp/aj-watch-XXXXXX");
	t->root = mkdtemp(t->tmpl);
	assert_non_null(t->root);
	t->q = path_join(t->root, "q");
	t->envrc = path_join(t->root, ".envrc");
	t->paths = (struct strv)STRV_INIT;
	strv_push(&t->paths, t->envrc);
	struct guard_opts o = {.live = true}; /* missing paths: moved aside as they appear */
	struct err e = {0};
	assert_int_equal(guard_start(&t->paths, t->q, &o, &t->w, &e, &e), 0);
	struct violations v = {0};
	assert_int_equal(guard_handle(t->w, &v), 0); /* armed on root */
}

/* guard_free'd (NULL: already) */
static void one_end(struct one *t)
{
	guard_free(t->w);
	strv_free(&t->paths);
	assert_int_equal(test_rm_tree(t->root), 0);
	free(t->q), free(t->envrc);
}

/* After guard_disarm (the run is over) nothing is watched, moved or armed again, and the fd
 * has nothing more to read than the kernel's IN_IGNORED. */
static void disarm(void **state)
{
	(void)state;
	struct one t;
	one_start(&t);
	struct violations v = {0};
	guard_disarm(t.w);
	FILE *f = fopen(t.envrc, "we");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(guard_handle(t.w, &v), 0);
	assert_int_equal(v.n, 0);
	struct stat st;
	assert_int_equal(lstat(t.envrc, &st), 0); /* left for the check after the run */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(guard_fd(t.w), buf, sizeof buf)) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			assert_true(ev->mask & IN_IGNORED); /* no IN_CREATE: the watch was gone */
			p += sizeof *ev + ev->len;
		}
	guard_disarm(t.w); /* twice is harmless */
	one_end(&t);
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

/* The state letter of /proc/PID/stat, or 0 when there is no such process. */
static char proc_state(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (fs_read_small(path, buf, sizeof buf) <= 0)
		return 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Our child running `agentjail-init __unwatch`, or 0 (its exec may still be under way: looked
 * for up to 2 s). */
static long find_unwatch(void)
{
	for (int round = 0; round < 200; round++, usleep(10000)) {
		DIR *d = opendir("/proc");
		assert_non_null(d);
		long found = 0;
		for (struct dirent *de; !found && (de = readdir(d));) {
			char path[300], buf[1024], cmd[256];
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			if (*end || pid <= 0)
				continue;
			snprintf(path, sizeof path, "/proc/%ld/stat", pid);
			const char *rp = fs_read_small(path, buf, sizeof buf) > 0 ? strrchr(buf, ')')
										    : NULL;
			long ppid = 0;
			if (!rp || sscanf(rp + 1, " %*c %ld", &ppid) != 1 || ppid != (long)getpid())
				continue;
			snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			ssize_t n = fd >= 0 ? read(fd, cmd, sizeof cmd) : -1;
			if (fd >= 0)
				close(fd);
			static const char want[] = "agentjail-init\0__unwatch";
			if (n == (ssize_t)sizeof want && !memcmp(cmd, want, sizeof want))
				found = pid;
		}
		closedir(d);
		if (found)
			return found;
	}
	return 0;
}

/* The helper that makes the inotify fd's last close (guard_unwatch_start): a process of its own
 * with its own command line, holding the inotify fd and nothing else of ours, until
 * guard_free; then it exits. Needs the build's agentjail-init (beside the unit tests' tree). */
/* The helper is left to init only where init reaps it: else a zombie per run. */
static void reaping_inits(void **state)
{
	(void)state;
	assert_true(guard_reaping_init("systemd"));
	assert_true(guard_reaping_init("tini"));
	assert_true(guard_reaping_init("docker-init"));
	assert_false(guard_reaping_init("sleep"));
	assert_false(guard_reaping_init("bash"));
	assert_false(guard_reaping_init("node"));
	assert_false(guard_reaping_init("systemd-x"));
	assert_false(guard_reaping_init(""));
	assert_false(guard_reaping_init(NULL));
}

static void unwatch(void **state)
{
	(void)state;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(n > 0);
	self[n] = '\0';
	char *d1 = path_dirname(self), *d2 = path_dirname(d1), *d3 = path_dirname(d2);
	char *init = path_join(d3, "agentjail-init"); /* build/rel/tests/unit/test_watch */
	int exe = open(init, O_PATH | O_CLOEXEC);
	if (exe < 0) {
		free(d1), free(d2), free(d3), free(init);
		skip(); /* no agentjail-init built beside this tree */
	}
	struct one t;
	one_start(&t);
	guard_assume_reaped(true); /* whatever this host's init (reaping_inits) */
	guard_unwatch_start(t.w, exe);
	long pid = find_unwatch();
	assert_true(pid > 0);
	/* it holds the inotify fd (its fd 1), its pipe (fd 0), nothing else */
	char path[64], link[128];
	snprintf(path, sizeof path, "/proc/%ld/fd/1", pid);
	n = readlink(path, link, sizeof link - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "anon_inode:inotify");
	snprintf(path, sizeof path, "/proc/%ld/fd", pid);
	DIR *dir = opendir(path);
	assert_non_null(dir);
	int fds = 0;
	for (struct dirent *de; (de = readdir(dir));)
		fds += de->d_name[0] != '.';
	closedir(dir);
	assert_int_equal(fds, 2);
	/* the watch still works beside it; the helper waits */
	struct violations v = {0};
	FILE *f = fopen(t.envrc, "we");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(guard_handle(t.w, &v), 1);
	assert_int_not_equal(proc_state(pid), 'Z');
	guard_disarm(t.w);
	guard_free(t.w);
	t.w = NULL;
	/* our reference gone, the helper closes its own and exits */
	for (int i = 0; i < 500 && proc_state(pid) != 'Z' && proc_state(pid) != 0; i++)
		usleep(10000);
	char st = proc_state(pid);
	assert_true(st == 'Z' || st == 0);
	close(exe);
	violations_free(&v);
	one_end(&t);
	free(d1), free(d2), free(d3), free(init);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(anchors),
		cmocka_unit_test(memo),
		cmocka_unit_test(events),
		cmocka_unit_test(live),
		cmocka_unit_test(disarm),
		cmocka_unit_test(move_fails),
		cmocka_unit_test(reaping_inits), cmocka_unit_test(unwatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
