/* gitinfo: the config parser and .git file parser (table-driven), then git_resolve on fixture
 * repositories: a plain repository, a linked worktree, a submodule, global and included configs,
 * a symlinked .git, and the files it must refuse. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/host/gitinfo.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"
#include "testutil.h"

/* ---- pure parsers ---- */

struct get_case {
	const char *text, *section, *key, *want; /* want NULL: not set */
};

static const struct get_case get_cases[] = {
	{"[core]\n\thooksPath = .husky\n", "core", "hooksPath", ".husky"},
	{"[Core]\n\tHOOKSPATH = x\n", "core", "hookspath", "x"},
	{"[core]\n\thookspath = x\n", "CORE", "HooksPath", "x"},
	{"[core]\nhooksPath = a\n[user]\nname = n\n[core]\nhooksPath = b\n", "core", "hooksPath",
	 "b"},
	{"[core]\nhooksPath = a\nhooksPath = b\n", "core", "hooksPath", "b"},
	/* subsections are other sections */
	{"[core \"sub\"]\n\thooksPath = a\n", "core", "hooksPath", NULL},
	{"[core]\nhooksPath = b\n[core \"x\"]\nhooksPath = c\n", "core", "hooksPath", "b"},
	{"[core \"\"]\nhooksPath = c\n", "core", "hooksPath", NULL},
	{"[core.sub]\nhooksPath = c\n", "core", "hooksPath", NULL},
	{"[core \"a\\\"]b\"]\nhooksPath = c\n[core]\nx = 1\n", "core", "hooksPath", NULL},
	/* quoting and escapes */
	{"[core]\nhooksPath = \"my hooks\"\n", "core", "hooksPath", "my hooks"},
	{"[core]\nhooksPath = \"  padded  \"  \n", "core", "hooksPath", "  padded  "},
	{"[core]\nhooksPath = a\"b c\"d\n", "core", "hooksPath", "ab cd"},
	{"[core]\nhooksPath = \"a\\\"b\"\n", "core", "hooksPath", "a\"b"},
	{"[core]\nhooksPath = a\\\\b\n", "core", "hooksPath", "a\\b"},
	{"[core]\nhooksPath = \"x\\ty\\nz\\bw\"\n", "core", "hooksPath", "x\ty\nz\bw"},
	{"[core]\nhooksPath = a\\\nb\n", "core", "hooksPath", "ab"},
	/* comments */
	{"# top\n; also\n[core] # c\n  ; inside\nhooksPath = .husky # trailing\n", "core",
	 "hooksPath", ".husky"},
	{"[core]\nhooksPath = a;b\n", "core", "hooksPath", "a"},
	{"[core]\nhooksPath = \"a#b;c\"\n", "core", "hooksPath", "a#b;c"},
	/* blanks */
	{"[core]\n  hooksPath   =   a  b\t\n", "core", "hooksPath", "a  b"},
	{"[core]\nhooksPath = a\t\tb\n", "core", "hooksPath", "a  b"},
	{"[core]\nhooksPath =\n", "core", "hooksPath", ""},
	{"[core]\nhooksPath = \"\"\n", "core", "hooksPath", ""},
	/* a key without '=' is true */
	{"[core]\n\tbare\n", "core", "bare", "true"},
	{"[core]\n\tbare", "core", "bare", "true"},
	{"[core]\n\tbare  \n", "core", "bare", "true"},
	/* layout */
	{"[core] hooksPath = x\n", "core", "hooksPath", "x"},
	{"[core]\r\nhooksPath = x\r\n", "core", "hooksPath", "x"},
	{"[core]\nhooksPath=x", "core", "hooksPath", "x"},
	{"\xef\xbb\xbf[core]\nhooksPath = x\n", "core", "hooksPath", "x"},
	{"[x]\nfoo-bar2 = v\n", "x", "foo-bar2", "v"},
	{"[core]\nhooksPath = x\n", "core", "other", NULL},
	{"", "core", "hooksPath", NULL},
	/* like git, a variable before any header belongs to no section */
	{"hooksPath = a\n[core]\nhooksPath = b\n", "core", "hooksPath", "b"},
	{"hooksPath = a\n", "core", "hooksPath", NULL},
	/* syntax errors end the walk; what came before counts */
	{"[core]\nhooksPath = a\n[bad\nhooksPath = b\n", "core", "hooksPath", "a"},
	{"[core]\nhooksPath = a\nhooksPath = \"b\n", "core", "hooksPath", "a"},
	{"[core]\nhooksPath = a\nhooksPath = \\q\n", "core", "hooksPath", "a"},
	{"[core]\nhooksPath = a\nhooksPath x\n", "core", "hooksPath", "a"},
	{"[core]\nhooksPath = a\n2key = b\n[core]\nhooksPath = c\n", "core", "hooksPath", "a"},
	{"[core ]\nhooksPath = a\n", "core", "hooksPath", NULL},
	{"[]\nhooksPath = a\n", "core", "hooksPath", NULL},
	{"[core \"x\" ]\nhooksPath = a\n", "core", "hooksPath", NULL},
};

static void test_config_get(void **state)
{
	for (size_t i = 0; i < sizeof get_cases / sizeof get_cases[0]; i++) {
		const struct get_case *c = &get_cases[i];
		_cleanup_free_ char *got = git_config_get(c->text, c->section, c->key);
		if (!c->want != !got || (got && strcmp(got, c->want) != 0))
			fail_msg("case %zu: %s.%s in \"%s\": got \"%s\", want \"%s\"", i,
				 c->section, c->key, c->text, got ? got : "(null)",
				 c->want ? c->want : "(null)");
	}
}

struct seen {
	char buf[512];
};

static int record(const char *section, const char *sub, const char *key, const char *value,
		  void *ctx)
{
	struct seen *s = ctx;
	size_t n = strlen(s->buf);
	snprintf(s->buf + n, sizeof s->buf - n, "%s|%s|%s|%s\n", section, sub ? sub : "-", key,
		 value ? value : "-");
	return strcmp(key, "stop") == 0 ? 7 : 0;
}

static void test_config_each(void **state)
{
	struct seen s = {{0}};
	const char *text = "[Sec \"Sub\\\\x\"]\nKey\n[a.B]\nk = v\n[s]\nstop = 1\nlater = 2\n";
	assert_int_equal(git_config_each(text, record, &s), 7);
	assert_string_equal(s.buf, "sec|Sub\\x|key|-\na|b|k|v\ns|-|stop|1\n");
	struct seen t = {{0}};
	assert_int_equal(git_config_each("[a]\nx = 1\n[b\n", record, &t), -1);
	assert_string_equal(t.buf, "a|-|x|1\n");
}

static void test_parse_gitfile(void **state)
{
	static const char *const cases[][2] = {
		{"gitdir: /x/.git/worktrees/w\n", "/x/.git/worktrees/w"},
		{"gitdir: ../.git/modules/sub\r\n", "../.git/modules/sub"},
		{"gitdir: ../.git/modules/sub", "../.git/modules/sub"},
		{"gitdir: a b\n", "a b"},
		{"gitdir: \n", NULL},
		{"gitdir:/x\n", NULL},
		{"GITDIR: /x\n", NULL},
		{"", NULL},
		{"ref: refs/heads/main\n", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		_cleanup_free_ char *got = git_parse_gitfile(cases[i][0]);
		if (!cases[i][1])
			assert_null(got);
		else
			assert_string_equal(got, cases[i][1]);
	}
}

/* ---- fixtures ---- */

struct fx {
	char dir[64];
	char *home;
	char *ws;
	bool system_hooks; /* this machine's /etc/gitconfig sets core.hooksPath */
};

static char *fx_path(const struct fx *f, const char *rel) { return path_join(f->dir, rel); }

/* Write `content` at dir/rel, creating the parents. */
static void put(const struct fx *f, const char *rel, const char *content)
{
	test_put(f->dir, rel, content);
}

static void mkdirs(const struct fx *f, const char *rel)
{
	_cleanup_free_ char *marker = xasprintf("%s/.keep", rel);
	put(f, marker, "");
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/aj-gitinfo-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->home = fx_path(f, "home");
	f->ws = fx_path(f, "ws");
	if (mkdir(f->home, 0700) < 0 || mkdir(f->ws, 0755) < 0)
		return -1;
	FILE *fp = fopen("/etc/gitconfig", "re");
	if (fp) {
		char buf[65536];
		size_t n = fread(buf, 1, sizeof buf - 1, fp);
		buf[n] = '\0';
		fclose(fp);
		_cleanup_free_ char *v = git_config_get(buf, "core", "hooksPath");
		f->system_hooks = v != NULL;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = test_rm_tree(f->dir);
	free(f->home);
	free(f->ws);
	free(f);
	return rc;
}

/* Resolve `ws_rel` and compare; expected paths are relative to the fixture dir, NULL = unset. */
static void expect(const struct fx *f, const char *ws_rel, const char *kind, const char *gitdir,
		   const char *commondir, const char *hooks)
{
	_cleanup_free_ char *ws = fx_path(f, ws_rel);
	struct git_info gi;
	struct err e = {0};
	assert_int_equal(git_resolve(ws, f->home, &gi, &e), 0);
	const char *want[] = {kind, gitdir, commondir, hooks};
	const char *got[] = {gi.dotgit_kind, gi.gitdir, gi.commondir, gi.hooks_path};
	for (size_t i = 0; i < 4; i++) {
		if (i == 3 && f->system_hooks)
			break; /* this machine decides the hooks itself */
		_cleanup_free_ char *w = want[i] && i > 0 ? fx_path(f, want[i])
							  : want[i] ? xstrdup(want[i]) : NULL;
		if (!w != !got[i] || (w && strcmp(w, got[i]) != 0))
			fail_msg("field %zu: got \"%s\", want \"%s\"", i,
				 got[i] ? got[i] : "(null)", w ? w : "(null)");
	}
	git_info_free(&gi);
	assert_null(gi.gitdir);
}

static void expect_error(const struct fx *f, const char *ws_rel, int errnum, const char *path_rel)
{
	_cleanup_free_ char *ws = fx_path(f, ws_rel);
	struct git_info gi;
	struct err e = {0};
	assert_int_equal(git_resolve(ws, f->home, &gi, &e), -1);
	assert_int_equal(e.errnum, errnum);
	_cleanup_free_ char *p = fx_path(f, path_rel);
	assert_string_equal(e.path, p);
	assert_null(gi.dotgit_kind);
	assert_null(gi.hooks_path);
}

static void test_plain_repo(void **state)
{
	struct fx *f = *state;
	put(f, "ws/.git/config", "[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky\n");
	expect(f, "ws", "dir", "ws/.git", NULL, "ws/.husky");
	/* an absolute hooksPath stays, ~/ expands */
	put(f, "ws/.git/config", "[core]\n\thooksPath = /opt/../srv/hooks/\n");
	_cleanup_free_ char *ws = fx_path(f, "ws");
	struct git_info gi;
	struct err e = {0};
	assert_int_equal(git_resolve(ws, f->home, &gi, &e), 0);
	if (!f->system_hooks)
		assert_string_equal(gi.hooks_path, "/srv/hooks");
	git_info_free(&gi);
	put(f, "ws/.git/config", "[core]\n\thooksPath = ~/hooks\n");
	expect(f, "ws", "dir", "ws/.git", NULL, "home/hooks");
}

static void test_no_hooks_path(void **state)
{
	struct fx *f = *state;
	mkdirs(f, "ws/.git");
	expect(f, "ws", "dir", "ws/.git", NULL, NULL);
}

static void test_no_dotgit(void **state)
{
	struct fx *f = *state;
	expect(f, "ws", NULL, NULL, NULL, NULL);
	/* the user's global hooksPath still names a place a `git init` in the jail would use */
	put(f, "home/.gitconfig", "[core]\n\thooksPath = .githooks\n");
	expect(f, "ws", NULL, NULL, NULL, "ws/.githooks");
}

static void test_worktree(void **state)
{
	struct fx *f = *state;
	put(f, "main/.git/config", "[core]\n\thooksPath = hooks-dir\n");
	put(f, "main/.git/worktrees/w/commondir", "../..\n");
	put(f, "main/.git/worktrees/w/HEAD", "ref: refs/heads/w\n");
	_cleanup_free_ char *gitfile = xasprintf("gitdir: %s/main/.git/worktrees/w\n", f->dir);
	put(f, "wt/.git", gitfile);
	/* a relative hooksPath is relative to the work tree being used, not the main one */
	expect(f, "wt", "file", "main/.git/worktrees/w", "main/.git", "wt/hooks-dir");
	expect(f, "main", "dir", "main/.git", NULL, "main/hooks-dir");

	/* config.worktree counts only with extensions.worktreeConfig */
	put(f, "main/.git/worktrees/w/config.worktree", "[core]\n\thooksPath = wt-hooks\n");
	expect(f, "wt", "file", "main/.git/worktrees/w", "main/.git", "wt/hooks-dir");
	put(f, "main/.git/config",
	    "[core]\n\thooksPath = hooks-dir\n[extensions]\n\tworktreeConfig = true\n");
	expect(f, "wt", "file", "main/.git/worktrees/w", "main/.git", "wt/wt-hooks");
}

static void test_submodule(void **state)
{
	struct fx *f = *state;
	put(f, "super/.git/config", "[core]\n\tbare = false\n");
	put(f, "super/.git/modules/sub/config",
	    "[core]\n\tworktree = ../../../sub\n\thooksPath = .sub-hooks\n");
	put(f, "super/sub/.git", "gitdir: ../.git/modules/sub\n");
	expect(f, "super/sub", "file", "super/.git/modules/sub", NULL, "super/sub/.sub-hooks");
}

static void test_global_configs(void **state)
{
	struct fx *f = *state;
	mkdirs(f, "ws/.git");
	put(f, "home/.config/git/config", "[core]\n\thooksPath = ~/xdg-hooks\n");
	expect(f, "ws", "dir", "ws/.git", NULL, "home/xdg-hooks");
	put(f, "home/.gitconfig", "[core]\n\thooksPath = ~/global-hooks\n");
	expect(f, "ws", "dir", "ws/.git", NULL, "home/global-hooks");
	put(f, "ws/.git/config", "[core]\n\thooksPath = .husky\n");
	expect(f, "ws", "dir", "ws/.git", NULL, "ws/.husky");
	/* an empty hooksPath in the repository turns hooks off */
	put(f, "ws/.git/config", "[core]\n\thooksPath =\n");
	expect(f, "ws", "dir", "ws/.git", NULL, NULL);
	/* a bare key is an error for git: the earlier value stands */
	put(f, "ws/.git/config", "[core]\n\thooksPath\n");
	expect(f, "ws", "dir", "ws/.git", NULL, "home/global-hooks");
}

static void test_global_config_symlink_followed(void **state)
{
	struct fx *f = *state;
	mkdirs(f, "ws/.git");
	put(f, "dotfiles/gitconfig", "[core]\n\thooksPath = /managed/hooks\n");
	_cleanup_free_ char *link = fx_path(f, "home/.gitconfig");
	assert_int_equal(symlink("../dotfiles/gitconfig", link), 0);
	_cleanup_free_ char *ws = fx_path(f, "ws");
	struct git_info gi;
	struct err e = {0};
	assert_int_equal(git_resolve(ws, f->home, &gi, &e), 0);
	if (!f->system_hooks)
		assert_string_equal(gi.hooks_path, "/managed/hooks");
	git_info_free(&gi);
}

static void test_includes(void **state)
{
	struct fx *f = *state;
	mkdirs(f, "ws/.git");
	put(f, "home/.gitconfig", "[include]\n\tpath = inc/extra\n\tpath = missing-is-fine\n");
	put(f, "home/inc/extra", "[include]\n\tpath = more\n");
	put(f, "home/inc/more", "[core]\n\thooksPath = included\n");
	expect(f, "ws", "dir", "ws/.git", NULL, "ws/included");
	/* an include is read where it appears: a later value wins over it */
	put(f, "home/.gitconfig",
	    "[include]\n\tpath = ~/inc/more\n[core]\n\thooksPath = after\n");
	expect(f, "ws", "dir", "ws/.git", NULL, "ws/after");
	/* includeIf is followed as if its condition held */
	put(f, "ws/.git/config", "[includeIf \"gitdir:/elsewhere/\"]\n\tpath = ../cond\n");
	put(f, "ws/cond", "[core]\n\thooksPath = conditional\n");
	expect(f, "ws", "dir", "ws/.git", NULL, "ws/conditional");
}

static void test_include_cycle_fails(void **state)
{
	struct fx *f = *state;
	put(f, "home/.gitconfig", "[include]\n\tpath = .gitconfig\n");
	_cleanup_free_ char *ws = fx_path(f, "ws");
	struct git_info gi;
	struct err e = {0};
	assert_int_equal(git_resolve(ws, f->home, &gi, &e), -1);
	assert_int_equal(e.errnum, ELOOP);
	assert_null(gi.dotgit_kind);
}

static void test_dotgit_symlink(void **state)
{
	struct fx *f = *state;
	put(f, "real.git/config", "[core]\n\thooksPath = .linked-hooks\n");
	_cleanup_free_ char *link = fx_path(f, "ws/.git");
	assert_int_equal(symlink("../real.git", link), 0);
	/* not protected through the link, but what git reads through it still counts */
	expect(f, "ws", "symlink", NULL, NULL, "ws/.linked-hooks");
}

static void test_malformed_gitfile(void **state)
{
	struct fx *f = *state;
	put(f, "ws/.git", "this is not a gitfile\n");
	expect(f, "ws", "file", NULL, NULL, NULL);
}

static void test_dotgit_other(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *fifo = fx_path(f, "ws/.git");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	expect(f, "ws", "other", NULL, NULL, NULL);
}

static void test_refuses_planted_symlinks(void **state)
{
	struct fx *f = *state;
	put(f, "elsewhere/config", "[core]\n\thooksPath = x\n");
	put(f, "ws/.git/HEAD", "ref: refs/heads/main\n");
	_cleanup_free_ char *cfg = fx_path(f, "ws/.git/config");
	assert_int_equal(symlink("../../elsewhere/config", cfg), 0);
	expect_error(f, "ws", ELOOP, "ws/.git/config");
	assert_int_equal(unlink(cfg), 0);

	_cleanup_free_ char *common = fx_path(f, "ws/.git/commondir");
	put(f, "elsewhere/commondir", "..\n");
	assert_int_equal(symlink("../../elsewhere/commondir", common), 0);
	expect_error(f, "ws", ELOOP, "ws/.git/commondir");
	assert_int_equal(unlink(common), 0);

	_cleanup_free_ char *dotgit = fx_path(f, "wt/.git");
	put(f, "elsewhere/gitfile", "gitdir: /x\n");
	mkdirs(f, "wt");
	assert_int_equal(symlink("../elsewhere/gitfile", dotgit), 0);
	expect(f, "wt", "symlink", NULL, NULL, NULL);
}

static void test_refuses_odd_files(void **state)
{
	struct fx *f = *state;
	mkdirs(f, "ws/.git");
	/* a FIFO must not hang the launcher */
	_cleanup_free_ char *cfg = fx_path(f, "ws/.git/config");
	assert_int_equal(mkfifo(cfg, 0600), 0);
	expect_error(f, "ws", 0, "ws/.git/config");
	assert_int_equal(unlink(cfg), 0);
	/* size-bounded */
	int fd = open(cfg, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (2 << 20)), 0);
	close(fd);
	expect_error(f, "ws", EFBIG, "ws/.git/config");
	assert_int_equal(unlink(cfg), 0);
	put(f, "ws/.git/config", "[core]\n\thooksPath = a\n");
	assert_int_equal(truncate(cfg, 100), 0); /* NUL bytes after the text */
	expect_error(f, "ws", 0, "ws/.git/config");
}

static void test_workspace_normalized(void **state)
{
	struct fx *f = *state;
	put(f, "ws/.git/config", "[core]\n\thooksPath = .husky\n");
	expect(f, "ws/./sub/..//", "dir", "ws/.git", NULL, "ws/.husky");
}

static void test_relative_workspace_fails(void **state)
{
	struct git_info gi;
	struct err e = {0};
	assert_int_equal(git_resolve("relative/ws", "/nonexistent", &gi, &e), -1);
	assert_int_equal(e.errnum, EINVAL);
	assert_null(gi.gitdir);
}

static void test_no_home(void **state)
{
	struct fx *f = *state;
	put(f, "ws/.git/config", "[core]\n\thooksPath = ~/h\n");
	_cleanup_free_ char *ws = fx_path(f, "ws");
	struct git_info gi;
	struct err e = {0};
	assert_int_equal(git_resolve(ws, NULL, &gi, &e), 0);
	assert_string_equal(gi.dotgit_kind, "dir");
	if (!f->system_hooks) /* no home to expand with: taken literally, inside the workspace */
		assert_non_null(strstr(gi.hooks_path, "/ws/~/h"));
	git_info_free(&gi);
}

/* every included file is listed: one inside the workspace is config the jail could write */
static void test_includes_listed(void **state)
{
	struct fx *f = *state;
	put(f, "ws/.git/config", "[include]\n\tpath = ../team.gitconfig\n"
				 "[includeIf \"onbranch:main\"]\n\tpath = ~/inc\n");
	put(f, "ws/team.gitconfig", "[include]\n\tpath = more.gitconfig\n");
	_cleanup_free_ char *ws = fx_path(f, "ws");
	struct git_info gi;
	struct err e = {0};
	assert_int_equal(git_resolve(ws, f->home, &gi, &e), 0);
	_cleanup_free_ char *team = fx_path(f, "ws/team.gitconfig");
	_cleanup_free_ char *more = fx_path(f, "ws/more.gitconfig");
	_cleanup_free_ char *inc = fx_path(f, "home/inc");
	assert_true(strv_contains(&gi.includes, team));
	assert_true(strv_contains(&gi.includes, more)); /* missing: still watched */
	assert_true(strv_contains(&gi.includes, inc));
	git_info_free(&gi);
}

/* ---- git_check_pointers ---- */

/* Resolve, then validate with $HOME and `state_rel` (fixture-relative, may be NULL) forbidden.
 * want_file_rel NULL: accepted; else refused naming that pointer file. */
static void expect_pointers(const struct fx *f, const char *ws_rel, const char *state_rel,
			    const char *want_file_rel)
{
	_cleanup_free_ char *ws = fx_path(f, ws_rel);
	_cleanup_free_ char *state = state_rel ? fx_path(f, state_rel) : NULL;
	const char *forbidden[] = {f->home, state, NULL};
	struct git_info gi;
	struct err e = {0};
	assert_int_equal(git_resolve(ws, f->home, &gi, &e), 0);
	int rc = git_check_pointers(ws, forbidden, &gi, &e);
	if (!want_file_rel) {
		if (rc != 0)
			fail_msg("refused: %s: %s", e.what, e.path);
	} else {
		assert_int_equal(rc, -1);
		_cleanup_free_ char *want = fx_path(f, want_file_rel);
		assert_string_equal(e.path, want);
		assert_non_null(strstr(e.what, "names"));
		assert_true(e.hint[0] != '\0');
	}
	git_info_free(&gi);
}

static void git_dir_shape(const struct fx *f, const char *rel)
{
	_cleanup_free_ char *o = xasprintf("%s/objects", rel);
	_cleanup_free_ char *r = xasprintf("%s/refs", rel);
	mkdirs(f, o);
	mkdirs(f, r);
}

static void test_pointers_plain(void **state)
{
	struct fx *f = *state;
	git_dir_shape(f, "ws/.git");
	expect_pointers(f, "ws", NULL, NULL);
	/* the attack: the next jail would bind $HOME writable as "the common git dir" */
	_cleanup_free_ char *home = xasprintf("%s\n", f->home);
	put(f, "ws/.git/commondir", home);
	expect_pointers(f, "ws", NULL, "ws/.git/commondir");
	put(f, "ws/.git/commondir", "/\n");
	expect_pointers(f, "ws", NULL, "ws/.git/commondir");
	/* a directory holding agentjail's state */
	git_dir_shape(f, "var");
	put(f, "ws/.git/commondir", "../../var\n");
	expect_pointers(f, "ws", "var/state/agentjail", "ws/.git/commondir");
	/* outside the workspace, even shaped like a repository */
	expect_pointers(f, "ws", NULL, "ws/.git/commondir");
	/* inside the workspace: only a git dir */
	mkdirs(f, "ws/.git/x");
	put(f, "ws/.git/commondir", "x\n");
	expect_pointers(f, "ws", NULL, "ws/.git/commondir");
	git_dir_shape(f, "ws/.git/x");
	expect_pointers(f, "ws", NULL, NULL);
	/* a missing target */
	put(f, "ws/.git/commondir", "nowhere\n");
	expect_pointers(f, "ws", NULL, "ws/.git/commondir");
	/* judged where a symlink on the way leads */
	_cleanup_free_ char *link = fx_path(f, "ws/.git/link");
	assert_int_equal(symlink(f->home, link), 0);
	git_dir_shape(f, "home");
	put(f, "ws/.git/commondir", "link\n");
	expect_pointers(f, "ws", NULL, "ws/.git/commondir");
}

static void test_pointers_worktree(void **state)
{
	struct fx *f = *state;
	git_dir_shape(f, "main/.git");
	put(f, "main/.git/worktrees/w/commondir", "../..\n");
	put(f, "main/.git/worktrees/w/HEAD", "ref: refs/heads/w\n");
	_cleanup_free_ char *gitfile = xasprintf("gitdir: %s/main/.git/worktrees/w\n", f->dir);
	put(f, "wt/.git", gitfile);
	/* no way back from the git dir to this worktree: anyone's git dir */
	expect_pointers(f, "wt", NULL, "wt/.git");
	_cleanup_free_ char *back = xasprintf("%s/wt/.git\n", f->dir);
	put(f, "main/.git/worktrees/w/gitdir", back);
	expect_pointers(f, "wt", NULL, NULL);
	/* the commondir rewritten from inside (the common dir is writable there) */
	_cleanup_free_ char *home = xasprintf("%s\n", f->home);
	put(f, "main/.git/worktrees/w/commondir", home);
	expect_pointers(f, "wt", NULL, "main/.git/worktrees/w/commondir");
	git_dir_shape(f, "other/.git");
	put(f, "main/.git/worktrees/w/commondir", "../../../other/.git\n");
	expect_pointers(f, "wt", NULL, "main/.git/worktrees/w/commondir");
	put(f, "main/.git/worktrees/w/commondir", "../..\n");
	expect_pointers(f, "wt", NULL, NULL);
	/* a main repository holding the state dir */
	expect_pointers(f, "wt", "main/.git/agentjail-state", "main/.git/worktrees/w/commondir");
	/* a .git file naming $HOME itself */
	_cleanup_free_ char *tohome = xasprintf("gitdir: %s\n", f->home);
	put(f, "wt/.git", tohome);
	expect_pointers(f, "wt", NULL, "wt/.git");
	/* a .git file naming some other directory outside the workspace */
	put(f, "wt/.git", "gitdir: ../other/.git\n");
	expect_pointers(f, "wt", NULL, "wt/.git");
}

static void test_pointers_submodule(void **state)
{
	struct fx *f = *state;
	git_dir_shape(f, "super/.git/modules/sub");
	put(f, "super/.git/modules/sub/config", "[core]\n\tworktree = ../../../sub\n");
	put(f, "super/sub/.git", "gitdir: ../.git/modules/sub\n");
	expect_pointers(f, "super/sub", NULL, NULL);
	/* elsewhere, a submodule git dir is accepted only with core.worktree naming us */
	git_dir_shape(f, "x/.git/modules/s");
	_cleanup_free_ char *gitfile = xasprintf("gitdir: %s/x/.git/modules/s\n", f->dir);
	put(f, "ws/.git", gitfile);
	expect_pointers(f, "ws", NULL, "ws/.git");
	_cleanup_free_ char *cfg = xasprintf("[core]\n\tworktree = %s/ws\n", f->dir);
	put(f, "x/.git/modules/s/config", cfg);
	expect_pointers(f, "ws", NULL, NULL);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_get),
		cmocka_unit_test(test_config_each),
		cmocka_unit_test(test_parse_gitfile),
		T(test_plain_repo),
		T(test_no_hooks_path),
		T(test_no_dotgit),
		T(test_worktree),
		T(test_submodule),
		T(test_global_configs),
		T(test_global_config_symlink_followed),
		T(test_includes),
		T(test_include_cycle_fails),
		T(test_dotgit_symlink),
		T(test_malformed_gitfile),
		T(test_dotgit_other),
		T(test_refuses_planted_symlinks),
		T(test_refuses_odd_files),
		T(test_workspace_normalized),
		cmocka_unit_test(test_relative_workspace_fails),
		T(test_no_home),
		T(test_includes_listed),
		T(test_pointers_plain),
		T(test_pointers_worktree),
		T(test_pointers_submodule),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
