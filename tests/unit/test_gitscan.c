/* gitscan: the walk for nested repositories (what it finds, where it does not go, its bound),
 * the submodule git dirs under modules/, and the check after a run: a new repository is
 * reported and what in it would run a command moved into the quarantine; one known before is
 * left alone. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/host/gitscan.h"
#include "core/jail/gitscan_check.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"
#include "testutil.h"

struct fx {
	char dir[64];
	char *ws, *quarantine;
};

static char *fx_path(const struct fx *f, const char *rel) { return path_join(f->dir, rel); }

/* Write `content` at dir/rel (NULL: make a directory), creating the parents. */
static void put(const struct fx *f, const char *rel, const char *content)
{
	test_put(f->dir, rel, content);
}

/* a git dir as git makes it: HEAD, objects/, refs/, config, hooks/ */
static void repo(const struct fx *f, const char *gitdir_rel)
{
	_cleanup_free_ char *head = xasprintf("%s/HEAD", gitdir_rel);
	_cleanup_free_ char *objects = xasprintf("%s/objects", gitdir_rel);
	_cleanup_free_ char *refs = xasprintf("%s/refs", gitdir_rel);
	_cleanup_free_ char *config = xasprintf("%s/config", gitdir_rel);
	_cleanup_free_ char *hooks = xasprintf("%s/hooks", gitdir_rel);
	_cleanup_free_ char *hook = xasprintf("%s/hooks/post-checkout", gitdir_rel);
	put(f, head, "ref: refs/heads/main\n");
	put(f, objects, NULL);
	put(f, refs, NULL);
	put(f, config, "[core]\n\tfsmonitor = \"touch /tmp/x #\"\n");
	put(f, hooks, NULL);
	put(f, hook, "#!/bin/sh\ntouch /tmp/x\n");
}

/* What `git init` makes, and an identity set after it: all of it may stay (issue 26). */
static void harmless_repo(const struct fx *f, const char *g)
{
	static const char *const files[][2] = {
		{"HEAD", "ref: refs/heads/main\n"},
		{"objects", NULL},
		{"refs", NULL},
		{"config", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
			   "\tbare = false\n\tlogallrefupdates = true\n[user]\n\tname = J\n"},
		{"hooks", NULL},
		{"hooks/pre-commit.sample", "#!/bin/sh\nexit 0\n"},
		{"info", NULL},
		{"info/exclude", "# git ls-files --others --exclude-from=.git/info/exclude\n\n"},
		{"description", "Unnamed repository\n"},
	};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", g, files[i][0]);
		put(f, p, files[i][1]);
	}
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/aj-gitscan-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->ws = fx_path(f, "ws");
	f->quarantine = fx_path(f, "quarantine");
	if (mkdir(f->ws, 0755) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = test_rm_tree(f->dir);
	free(f->ws);
	free(f->quarantine);
	free(f);
	return rc;
}

static void assert_has(const struct strv *v, const struct fx *f, const char *rel)
{
	_cleanup_free_ char *p = fx_path(f, rel);
	if (!strv_contains(v, p))
		fail_msg("%s not found", p);
}

static void test_walk(void **state)
{
	struct fx *f = *state;
	repo(f, "ws/.git");
	repo(f, "ws/vendor/lib/.git");
	repo(f, "ws/.git/inner/.git"); /* inside a .git: never looked at */
	put(f, "ws/sub/.git", "gitdir: ../.git/modules/sub\n");
	put(f, "ws/deep/a/b/c/d/e/f/g/h", NULL);
	put(f, "ws/deep/a/b/c/d/e/f/g/h/.git", "gitdir: x\n");
	_cleanup_free_ char *target = fx_path(f, "ws/vendor");
	_cleanup_free_ char *link = fx_path(f, "ws/link");
	assert_int_equal(symlink(target, link), 0); /* not followed: lib/.git is found once */
	_cleanup_free_ char *gl = fx_path(f, "ws/linked/.git");
	put(f, "ws/linked", NULL);
	assert_int_equal(symlink("/tmp", gl), 0);
	repo(f, "ws/fixtures/bare.git"); /* a bare repository: git uses it when run inside */
	put(f, "ws/almost/HEAD", "");
	put(f, "ws/almost/objects", NULL); /* no refs/: not a repository */
	struct strv found = STRV_INIT;
	bool truncated = true;
	struct err e = {0};
	assert_int_equal(gitscan_walk(f->ws, 1000, &found, &truncated, &e), 0);
	assert_false(truncated);
	assert_int_equal(found.n, 5);
	assert_has(&found, f, "ws/fixtures/bare.git");
	assert_has(&found, f, "ws/vendor/lib/.git");
	assert_has(&found, f, "ws/sub/.git");
	assert_has(&found, f, "ws/deep/a/b/c/d/e/f/g/h/.git");
	assert_has(&found, f, "ws/linked/.git");
	strv_free(&found);
	/* the bound: stops, says so */
	assert_int_equal(gitscan_walk(f->ws, 3, &found, &truncated, &e), 0);
	assert_true(truncated);
	strv_free(&found);
	assert_int_equal(gitscan_walk("rel", 3, &found, &truncated, &e), -1);
}

static void test_modules(void **state)
{
	struct fx *f = *state;
	repo(f, "ws/.git");
	repo(f, "ws/.git/modules/a");
	repo(f, "ws/.git/modules/x/y/b");       /* submodule named "x/y/b" */
	repo(f, "ws/.git/modules/a/modules/c"); /* a submodule of a submodule */
	put(f, "ws/.git/modules/notrepo/file", "");
	struct strv found = STRV_INIT;
	_cleanup_free_ char *gd = fx_path(f, "ws/.git");
	gitscan_modules(gd, &found);
	assert_int_equal(found.n, 3);
	assert_has(&found, f, "ws/.git/modules/a");
	assert_has(&found, f, "ws/.git/modules/x/y/b");
	assert_has(&found, f, "ws/.git/modules/a/modules/c");
	strv_free(&found);
}

static bool exists(const struct fx *f, const char *rel)
{
	_cleanup_free_ char *p = fx_path(f, rel);
	struct stat st;
	return lstat(p, &st) == 0;
}

static void test_check(void **state)
{
	struct fx *f = *state;
	repo(f, "ws/.git");
	repo(f, "ws/old/.git");
	struct strv roots = STRV_INIT, gitdirs = STRV_INIT, known = STRV_INIT;
	strv_push(&roots, f->ws);
	strv_push_take(&gitdirs, fx_path(f, "ws/.git"));
	bool truncated = false;
	struct err e = {0};
	assert_int_equal(gitscan_walk(f->ws, 1000, &known, &truncated, &e), 0);
	gitscan_modules(gitdirs.v[0], &known);
	/* the workspace's own .git, known as the argv builder records it (add_git_scan) */
	strv_push_take(&known, fx_path(f, "ws/.git"));
	struct gitscan_before b = {.roots = &roots,
				   .gitdirs = &gitdirs,
				   .known = &known,
				   .since = (long long)time(NULL)};
	/* what a run could make: a nested repository, a gitlink pointer, a submodule git dir */
	repo(f, "ws/new/.git");
	put(f, "ws/ptr/.git", "gitdir: ../new/.git\n");
	repo(f, "ws/.git/modules/evil");
	repo(f, "ws/bare");
	struct violations v = {0};
	assert_int_equal(gitscan_check(&b, f->quarantine, &v, &e), 0);
	assert_false(exists(f, "ws/new/.git/config"));
	assert_false(exists(f, "ws/new/.git/hooks"));
	assert_true(exists(f, "ws/new/.git/HEAD")); /* the agent's work stays */
	assert_false(exists(f, "ws/ptr/.git"));
	assert_false(exists(f, "ws/.git/modules/evil/config"));
	assert_false(exists(f, "ws/bare/config"));
	assert_true(exists(f, "ws/old/.git/config")); /* known before: left alone */
	size_t moved = 0, reported_new = 0;
	for (size_t i = 0; i < v.n; i++) {
		assert_null(strstr(v.v[i].path, "/old/"));
		moved += v.v[i].moved_to != NULL;
		reported_new += strstr(v.v[i].what, "created during the run") != NULL;
		if (v.v[i].moved_to)
			assert_true(path_is_under(v.v[i].moved_to, f->quarantine));
	}
	/* new/.git: config, hooks; ptr/.git; modules/evil: config, hooks; bare: config, hooks */
	assert_int_equal(moved, 7);
	assert_int_equal(reported_new, v.n);
	violations_free(&v);
	/* a second check finds nothing more to move */
	assert_int_equal(gitscan_check(&b, f->quarantine, &v, &e), 0);
	for (size_t i = 0; i < v.n; i++)
		assert_null(v.v[i].moved_to);
	violations_free(&v);
	strv_free(&roots);
	strv_free(&gitdirs);
	strv_free(&known);
}

/* The workspace walked before a run that found nothing: no known repository. */
struct scan {
	struct strv roots, gitdirs, known;
	struct gitscan_before b;
};

static void scan_init(struct scan *sc, const struct fx *f)
{
	*sc = (struct scan){.roots = STRV_INIT, .gitdirs = STRV_INIT, .known = STRV_INIT};
	strv_push(&sc->roots, f->ws);
	sc->b = (struct gitscan_before){.roots = &sc->roots,
					.gitdirs = &sc->gitdirs,
					.known = &sc->known,
					.since = (long long)time(NULL)};
}

static void scan_free(struct scan *sc)
{
	strv_free(&sc->roots);
	strv_free(&sc->gitdirs);
	strv_free(&sc->known);
}

/* `git init` in a workspace that had no repository: its own .git is new like a nested one */
static void test_check_new_own_repo(void **state)
{
	struct fx *f = *state;
	struct scan sc;
	scan_init(&sc, f);
	struct gitscan_before b = sc.b;
	repo(f, "ws/.git");
	struct violations v = {0};
	struct err e = {0};
	assert_int_equal(gitscan_check(&b, f->quarantine, &v, &e), 0);
	assert_false(exists(f, "ws/.git/config"));
	assert_false(exists(f, "ws/.git/hooks"));
	assert_true(exists(f, "ws/.git/HEAD")); /* the repository stays */
	assert_true(v.n >= 3);
	for (size_t i = 0; i < v.n; i++)
		assert_true(v.v[i].own_words);
	violations_free(&v);
	scan_free(&sc);
}

/* A new repository whose config runs nothing and whose hooks and info are git's template is
 * kept whole and not reported; each way of making it dangerous moves that part aside, saying
 * why. */
static void test_check_keeps_harmless(void **state)
{
	struct fx *f = *state;
	struct scan sc;
	scan_init(&sc, f);
	struct gitscan_before b = sc.b;
	struct strv *known = &sc.known;
	harmless_repo(f, "ws/.git");
	struct violations v = {0};
	struct err e = {0};
	assert_int_equal(gitscan_check(&b, f->quarantine, &v, &e), 0);
	assert_int_equal(v.n, 0);
	assert_true(exists(f, "ws/.git/config"));
	assert_true(exists(f, "ws/.git/hooks/pre-commit.sample"));
	assert_true(exists(f, "ws/.git/info/exclude"));
	violations_free(&v);

	static const struct {
		const char *repo, *file, *content; /* content NULL: a second link to the config */
		const char *gone, *why;
	} bad[] = {
		{"a", "config", "[alias]\n\tx = !sh\n", "config", "it sets alias.x, which"},
		{"b", "hooks/pre-push", "#!/bin/sh\n", "hooks", "it holds pre-push, which git runs"},
		{"c", "info/attributes", "* filter=x\n", "info", "it holds attributes"},
		{"d", "info/exclude", "secret\n", "info", "its exclude file has rules"},
		{"e", "config.worktree", "[core]\n", "config.worktree", "git reads it as config"},
		{"f", "cfg-link", NULL, "config", "it has another link"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		_cleanup_free_ char *g = xasprintf("ws/%s/.git", bad[i].repo);
		harmless_repo(f, g);
		_cleanup_free_ char *p = xasprintf("%s/%s", g, bad[i].file);
		if (bad[i].content) {
			put(f, p, bad[i].content);
		} else {
			_cleanup_free_ char *cfg = fx_path(f, g);
			_cleanup_free_ char *from = xasprintf("%s/config", cfg);
			_cleanup_free_ char *to = fx_path(f, p);
			assert_int_equal(link(from, to), 0);
		}
		assert_int_equal(gitscan_check(&b, f->quarantine, &v, &e), 0);
		_cleanup_free_ char *gone = xasprintf("%s/%s", g, bad[i].gone);
		assert_false(exists(f, gone));
		_cleanup_free_ char *head = xasprintf("%s/HEAD", g);
		assert_true(exists(f, head));
		bool said = false;
		for (size_t k = 0; k < v.n; k++)
			said |= v.v[k].moved_to && strstr(v.v[k].what, bad[i].why) != NULL;
		if (!said)
			fail_msg("%s: no violation saying '%s'", gone, bad[i].why);
		violations_free(&v);
		_cleanup_free_ char *abs = fx_path(f, g);
		strv_push(known, abs); /* the next round: this one is known */
	}
	scan_free(&sc);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_walk),
		T(test_modules),
		T(test_check),
		T(test_check_new_own_repo),
		T(test_check_keeps_harmless),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
