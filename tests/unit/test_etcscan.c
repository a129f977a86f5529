/* etcscan: which entries of a tree are masked, and when the cache may answer instead of a scan.
 *
 * A cache hit cannot be told from a scan by its result, so tests that need to know plant a
 * marker: they rewrite one cached entry into a name that does not exist on disk. Seeing the
 * marker means the cache answered; not seeing it means a scan did. */
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
#include <time.h>
#include <unistd.h>

#include "core/host/etcscan.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "testutil.h"

struct fx {
	char dir[64];
	char *root;  /* the fake /etc */
	char *cache; /* below directories that do not exist yet */
};

static void mkfile(const struct fx *f, const char *rel, mode_t mode)
{
	_cleanup_free_ char *p = path_join(f->root, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	close(fd);
	assert_int_equal(chmod(p, mode), 0);
}

static void mkdirm(const struct fx *f, const char *rel, mode_t mode)
{
	_cleanup_free_ char *p = path_join(f->root, rel);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chmod(p, mode), 0);
}

static int backdate_one(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
	if (type == FTW_SL || type == FTW_SLN)
		return 0;
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 100;
	t[1] = t[0];
	return utimensat(AT_FDCWD, p, t, AT_SYMLINK_NOFOLLOW);
}

/* A fixture built a moment ago is "racy" (see etcscan.h) and would not be cached: age the
 * entries' mtimes (their ctimes stay recent, which is the realistic case after a chmod). */
static void backdate(const struct fx *f)
{
	assert_int_equal(nftw(f->root, backdate_one, 16, FTW_PHYS), 0);
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/aj-etcscan-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->root = path_join(f->dir, "etc");
	f->cache = path_join(f->dir, "state/agentjail/etc-unreadable.cache");
	if (mkdir(f->root, 0755) < 0 || chmod(f->root, 0755) < 0)
		return -1;
	mkfile(f, "secret600", 0600);
	mkfile(f, "group640", 0640);
	mkfile(f, "public644", 0644);
	mkfile(f, "with space", 0600);
	mkfile(f, "new\nline", 0600);
	mkfile(f, "back\\slash", 0600);
	mkdirm(f, "private", 0755);
	mkfile(f, "private/inside600", 0600);
	mkdirm(f, "private/sub", 0755);
	mkfile(f, "private/sub/deeper600", 0600);
	assert_int_equal(chmod(f->root, 0755), 0);
	_cleanup_free_ char *priv = path_join(f->root, "private");
	assert_int_equal(chmod(priv, 0700), 0);
	mkdirm(f, "noexec", 0754); /* others may list it but not enter it */
	mkfile(f, "noexec/file644", 0644);
	_cleanup_free_ char *noexec = path_join(f->root, "noexec");
	assert_int_equal(chmod(noexec, 0754), 0);
	mkdirm(f, "pub", 0755);
	mkfile(f, "pub/deep600", 0600);
	mkfile(f, "pub/ok644", 0644);
	mkdirm(f, "dir\nnl", 0755);
	mkfile(f, "dir\nnl/f600", 0600);
	_cleanup_free_ char *lnk = path_join(f->root, "link600");
	assert_int_equal(symlink("secret600", lnk), 0);
	_cleanup_free_ char *fifo = path_join(f->root, "fifo600");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	backdate(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = test_rm_tree(f->dir);
	free(f->root);
	free(f->cache);
	free(f);
	return rc;
}

/* The expected list: root-relative names, made absolute and sorted like etcscan does. */
static void expect_list(const struct fx *f, const struct strv *got, const char *const *rel)
{
	struct strv want = STRV_INIT;
	for (size_t i = 0; rel[i]; i++)
		strv_push_take(&want, path_join(f->root, rel[i]));
	for (size_t i = 1; i < want.n; i++)
		for (size_t j = i; j > 0 && strcmp(want.v[j - 1], want.v[j]) > 0; j--) {
			char *t = want.v[j];
			want.v[j] = want.v[j - 1];
			want.v[j - 1] = t;
		}
	for (size_t i = 0; i < want.n && i < got->n; i++)
		assert_string_equal(got->v[i], want.v[i]);
	assert_int_equal(got->n, want.n);
	strv_free(&want);
}

static const char *const base_list[] = {
	"back\\slash", "dir\nnl/f600", "group640", "new\nline", "noexec", "private",
	"pub/deep600", "secret600", "with space", NULL,
};
/* base_list with group640 replaced by the marker planted in the cache */
static const char *const marked_list[] = {
	"back\\slash", "dir\nnl/f600", "group640-MARK", "new\nline", "noexec", "private",
	"pub/deep600", "secret600", "with space", NULL,
};

static void get(const struct fx *f, bool refresh, const char *const *want)
{
	struct strv got = STRV_INIT;
	struct err e = {0};
	assert_int_equal(etcscan_get(f->root, f->cache, refresh, &got, &e), 0);
	expect_list(f, &got, want);
	strv_free(&got);
}

static char *slurp(const char *p)
{
	FILE *fp = fopen(p, "re");
	assert_non_null(fp);
	struct strbuf b = STRBUF_INIT;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, fp)) > 0)
		sb_addn(&b, buf, n);
	fclose(fp);
	return sb_steal(&b);
}

/* Rewrite the cache in place (keeping its owner and mode) with `from` replaced by `to`. */
static void edit_cache(const struct fx *f, const char *from, const char *to)
{
	_cleanup_free_ char *text = slurp(f->cache);
	char *at = strstr(text, from);
	assert_non_null(at);
	struct strbuf b = STRBUF_INIT;
	sb_addn(&b, text, (size_t)(at - text));
	sb_add(&b, to);
	sb_add(&b, at + strlen(from));
	int fd = open(f->cache, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.s, b.len), (ssize_t)b.len);
	close(fd);
	sb_free(&b);
}

/* Scan, cache, and plant the marker: a following non-refresh call is a hit iff it sees it. */
static void cache_with_marker(const struct fx *f)
{
	get(f, true, base_list);
	_cleanup_free_ char *from = xasprintf("\nm %s/group640\n", f->root);
	_cleanup_free_ char *to = xasprintf("\nm %s/group640-MARK\n", f->root);
	edit_cache(f, from, to);
	get(f, false, marked_list);
}

static void test_scan_rules(void **state)
{
	struct fx *f = *state;
	get(f, false, base_list);
}

static void test_cache_file_created_private(void **state)
{
	struct fx *f = *state;
	get(f, false, base_list);
	struct stat st;
	assert_int_equal(stat(f->cache, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	_cleanup_free_ char *dir = path_dirname(f->cache);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	_cleanup_free_ char *text = slurp(f->cache);
	assert_true(strncmp(text, "agentjail-treescan 1\n", 21) == 0);
	assert_non_null(strstr(text, "\ncheck 1 ")); /* small: checked entry by entry */
	/* the newline in a name is escaped, so every record stays on one line */
	assert_non_null(strstr(text, "/new\\nline\n"));
	assert_non_null(strstr(text, "/back\\\\slash\n"));
}

static void test_cache_hit(void **state)
{
	struct fx *f = *state;
	cache_with_marker(f);
	get(f, false, marked_list); /* still a hit */
	get(f, true, base_list);    /* refresh scans and rewrites */
	get(f, false, base_list);
}

static const char *const chmodded_list[] = {
	"back\\slash", "dir\nnl/f600", "group640", "new\nline", "noexec", "private",
	"pub/deep600", "public644", "secret600", "with space", NULL,
};

/* A small tree is checked entry by entry: a file's chmod (which touches no directory) moves the
 * file's own ctime, and the next call scans. */
static void test_file_chmod_invalidates_small_tree(void **state)
{
	struct fx *f = *state;
	cache_with_marker(f);
	_cleanup_free_ char *p = path_join(f->root, "public644");
	assert_int_equal(chmod(p, 0600), 0);
	get(f, false, chmodded_list);
}

static void get_opts(const struct fx *f, bool refresh, const struct scan_opts *o,
		     const char *const *want, struct scan_info *info)
{
	struct strv got = STRV_INIT;
	struct err e = {0};
	assert_int_equal(treescan_get(f->root, f->cache, refresh, o, &got, info, &e), 0);
	expect_list(f, &got, want);
	strv_free(&got);
}

static void mark(const struct fx *f, const struct scan_opts *o)
{
	get_opts(f, true, o, base_list, NULL);
	_cleanup_free_ char *from = xasprintf("\nm %s/group640\n", f->root);
	_cleanup_free_ char *to = xasprintf("\nm %s/group640-MARK\n", f->root);
	edit_cache(f, from, to);
	struct scan_info info;
	get_opts(f, false, o, marked_list, &info);
	assert_true(info.from_cache);
}

/* The accepted limit of a tree past the entry budget: a file's chmod does not touch its
 * directory, so the cache still answers until a refresh (doctor) rescans. */
static void test_file_chmod_needs_refresh_large_tree(void **state)
{
	struct fx *f = *state;
	const struct scan_opts o = {.entry_budget = 3};
	mark(f, &o);
	_cleanup_free_ char *text = slurp(f->cache);
	assert_non_null(strstr(text, "\ncheck 2 "));
	assert_null(strstr(text, "\nf "));
	_cleanup_free_ char *p = path_join(f->root, "public644");
	assert_int_equal(chmod(p, 0600), 0);
	get_opts(f, false, &o, marked_list, NULL);
	get_opts(f, true, &o, chmodded_list, NULL);
}

static void test_dir_chmod_invalidates(void **state)
{
	struct fx *f = *state;
	cache_with_marker(f);
	_cleanup_free_ char *p = path_join(f->root, "pub");
	assert_int_equal(chmod(p, 0700), 0);
	static const char *const want[] = {
		"back\\slash", "dir\nnl/f600", "group640", "new\nline", "noexec", "private",
		"pub", "secret600", "with space", NULL,
	};
	get(f, false, want);
}

static void test_added_file_invalidates(void **state)
{
	struct fx *f = *state;
	cache_with_marker(f);
	mkfile(f, "pub/added600", 0600);
	static const char *const want[] = {
		"back\\slash", "dir\nnl/f600", "group640", "new\nline", "noexec", "private",
		"pub/added600", "pub/deep600", "secret600", "with space", NULL,
	};
	get(f, false, want);
}

static void test_added_dir_invalidates(void **state)
{
	struct fx *f = *state;
	cache_with_marker(f);
	mkdirm(f, "newdir", 0700);
	static const char *const want[] = {
		"back\\slash", "dir\nnl/f600", "group640", "new\nline", "newdir", "noexec",
		"private", "pub/deep600", "secret600", "with space", NULL,
	};
	get(f, false, want);
}

static void test_removed_file_invalidates(void **state)
{
	struct fx *f = *state;
	cache_with_marker(f);
	_cleanup_free_ char *p = path_join(f->root, "pub/deep600");
	assert_int_equal(unlink(p), 0);
	static const char *const want[] = {
		"back\\slash", "dir\nnl/f600", "group640", "new\nline", "noexec", "private",
		"secret600", "with space", NULL,
	};
	get(f, false, want);
}

/* Each edit, applied to a marked cache, makes it malformed: the result must be a scan (no
 * marker) and the cache must be rewritten valid (a following call is a hit on a fresh cache). */
static void test_malformed_cache_ignored(void **state)
{
	struct fx *f = *state;
	static const char *const edits[][2] = {
		{"agentjail-treescan 1\n", "agentjail-treescan 2\n"},
		{"agentjail-treescan 1\n", "agentjail-etcscan 1\n"},
		{"agentjail-treescan 1\n", ""},
		{"\ncheck 1 ", "\ncheck 4 "},
		{"\ncheck 1 ", "\ncheck 0 "},
		{"\ncheck 1 ", "\ncheck 3 "}, /* stamps, which /etc's options do not allow */
		{"\ncheck 1 ", "\ncheck 1 x"},
		{"\ncheck ", "\nchek "},
		{"\nf ", "\np "},  /* a package stamp in a cache checked entry by entry */
		{"\nf ", "\nd "},  /* a file recorded as a directory */
		{"\nd ", "\nf "},  /* the root recorded as a file */
		{"\nend ", "\nfin "},
		{"\nm ", "\nx "},
		{"\nm ", "\nm relative/"},
		{"/group640-MARK\n", "/../group640-MARK\n"},
		{"/group640-MARK\n", "//group640-MARK\n"},
		{"/group640-MARK\n", "/./group640-MARK\n"},
		{"/group640-MARK\n", "/group640-MARK/\n"},
		{"/group640-MARK\n", "/group640-MARK/.\n"},
		{"/group640-MARK\n", "/\\qgroup640-MARK\n"},
		{"/group640-MARK\n", "/group640-MARK\nm /outside\n"},
		{"\nd ", "\nd x"},
		{"\nd ", "\nd 1"},
		{"\nd ", "\nd 99999999999999999999"}, /* the device number overflows */
		{"\nroot ", "\nroot /other"},
		{"\nend ", "\nm /extra\nend "},
		{"\nend ", "\nend 9"},
	};
	for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
		cache_with_marker(f);
		edit_cache(f, edits[i][0], edits[i][1]);
		get(f, false, base_list);
		_cleanup_free_ char *text = slurp(f->cache);
		assert_null(strstr(text, "MARK"));
	}
}

static void test_truncated_cache_ignored(void **state)
{
	struct fx *f = *state;
	cache_with_marker(f);
	struct stat st;
	assert_int_equal(stat(f->cache, &st), 0);
	for (off_t len = st.st_size - 1; len >= 0; len -= 7) {
		cache_with_marker(f);
		assert_int_equal(truncate(f->cache, len), 0);
		get(f, false, base_list);
	}
	cache_with_marker(f);
	edit_cache(f, "\nend ", "\nend\n\nend "); /* trailing garbage after a record */
	get(f, false, base_list);
}

static void test_untrusted_cache_ignored(void **state)
{
	struct fx *f = *state;
	static const mode_t modes[] = {0620, 0602, 0666};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		cache_with_marker(f);
		assert_int_equal(chmod(f->cache, modes[i]), 0);
		get(f, false, base_list);
		struct stat st;
		assert_int_equal(stat(f->cache, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600); /* replaced by a fresh one */
	}
	if (geteuid() == 0) {
		cache_with_marker(f);
		assert_int_equal(chown(f->cache, 4242, 4242), 0);
		get(f, false, base_list);
	}
	/* a symlink to a good cache is not opened */
	cache_with_marker(f);
	_cleanup_free_ char *real = xasprintf("%s.real", f->cache);
	assert_int_equal(rename(f->cache, real), 0);
	assert_int_equal(symlink(real, f->cache), 0);
	get(f, false, base_list);
	struct stat st;
	assert_int_equal(lstat(f->cache, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void test_cache_for_other_root_ignored(void **state)
{
	struct fx *f = *state;
	cache_with_marker(f);
	/* the same cache file asked about another tree: a scan of that tree */
	_cleanup_free_ char *pub = path_join(f->root, "pub");
	struct strv got = STRV_INIT;
	struct err e = {0};
	assert_int_equal(etcscan_get(pub, f->cache, false, &got, &e), 0);
	assert_int_equal(got.n, 1);
	_cleanup_free_ char *want = path_join(f->root, "pub/deep600");
	assert_string_equal(got.v[0], want);
	strv_free(&got);
}

static void test_racy_scan_not_cached(void **state)
{
	struct fx *f = *state;
	mkfile(f, "pub/fresh644", 0644); /* pub's mtime and ctime are now */
	get(f, false, base_list);
	struct stat st;
	assert_int_equal(stat(f->cache, &st), -1);
	backdate(f);
	get(f, false, base_list);
	assert_int_equal(stat(f->cache, &st), 0);
}

static void test_unwritable_cache_is_not_an_error(void **state)
{
	struct fx *f = *state;
	/* the cache's parent is a regular file: nothing can be written there */
	_cleanup_free_ char *blocker = path_join(f->dir, "blocker");
	int fd = open(blocker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	free(f->cache);
	f->cache = path_join(blocker, "sub/cache");
	get(f, false, base_list);
	get(f, true, base_list);
	get(f, false, base_list);
}

static void test_no_cache_file(void **state)
{
	struct fx *f = *state;
	struct strv got = STRV_INIT;
	struct err e = {0};
	assert_int_equal(etcscan_get(f->root, NULL, false, &got, &e), 0);
	expect_list(f, &got, base_list);
	strv_free(&got);
}

static void test_root_not_world_readable(void **state)
{
	struct fx *f = *state;
	assert_int_equal(chmod(f->root, 0711), 0);
	struct strv got = STRV_INIT;
	struct err e = {0};
	assert_int_equal(etcscan_get(f->root, f->cache, false, &got, &e), 0);
	assert_int_equal(got.n, 1);
	assert_string_equal(got.v[0], f->root);
	strv_free(&got);
	assert_int_equal(chmod(f->root, 0755), 0);
}

/* A file bound on its own is judged as a file. */
static void test_file_root(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *secret = path_join(f->root, "secret600");
	_cleanup_free_ char *pub = path_join(f->root, "public644");
	struct strv got = STRV_INIT;
	struct err e = {0};
	assert_int_equal(treescan_get(secret, f->cache, false, NULL, &got, NULL, &e), 0);
	assert_int_equal(got.n, 1);
	assert_string_equal(got.v[0], secret);
	strv_free(&got);
	assert_int_equal(treescan_get(pub, f->cache, false, NULL, &got, NULL, &e), 0);
	assert_int_equal(got.n, 0);
	struct stat st;
	assert_int_equal(stat(f->cache, &st), -1); /* no cache for a file */
}

static void test_missing_root_fails(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *missing = path_join(f->dir, "nope");
	struct strv got = STRV_INIT;
	struct err e = {0};
	assert_int_equal(etcscan_get(missing, f->cache, false, &got, &e), -1);
	assert_int_equal(e.errnum, ENOENT);
	assert_string_equal(e.path, missing);
	assert_int_equal(got.n, 0);
}

static void test_root_normalized(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *odd = xasprintf("%s//./pub/../", f->root);
	struct strv got = STRV_INIT;
	struct err e = {0};
	assert_int_equal(etcscan_get(odd, NULL, false, &got, &e), 0);
	expect_list(f, &got, base_list);
	strv_free(&got);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static double timed_get(const char *cache, bool refresh, struct strv *got)
{
	struct err e = {0};
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(etcscan_get("/etc", cache, refresh, got, &e), 0);
	return ms_since(&t0);
}

/* What any answer for the real /etc must satisfy. Two answers are not compared: /etc may change
 * between them (useradd's lock files come and go while other tests run). */
static void check_real_list(const struct strv *got)
{
	struct stat sh;
	if (geteuid() == 0 && lstat("/etc/shadow", &sh) == 0 && !(sh.st_mode & S_IROTH))
		assert_true(strv_contains(got, "/etc/shadow"));
	for (size_t j = 0; j < got->n; j++) {
		assert_non_null(path_below(got->v[j], "/etc"));
		if (j > 0)
			assert_true(strcmp(got->v[j - 1], got->v[j]) < 0);
	}
}

/* The real /etc: as root, /etc/shadow (0640 or 0000 on Debian) must be masked. Timings are
 * reported, not asserted: they depend on the machine. */
static void test_real_etc(void **state)
{
	struct fx *f = *state;
	double cold = 1e9, warm = 1e9;
	size_t n = 0;
	bool hit = false;
	for (int i = 0; i < 20; i++) {
		struct strv got = STRV_INIT;
		double t = timed_get(f->cache, true, &got);
		cold = t < cold ? t : cold;
		n = got.n;
		struct stat st;
		hit = stat(f->cache, &st) == 0;
		check_real_list(&got);
		strv_free(&got);
		t = timed_get(f->cache, false, &got);
		warm = t < warm ? t : warm;
		check_real_list(&got);
		strv_free(&got);
	}
	printf("# /etc: %zu masked entries; cold scan %.3f ms, cached call %.3f ms%s"
	       " (best of 20)\n",
	       n, cold, warm, hit ? "" : " (cache not written: /etc changed in the last seconds)");
}

/* The pure rule: what others cannot read and the jail's uid could. */
static void test_hidden_rules(void **state)
{
	const uid_t me = 0, other = 4242;
	static const struct {
		mode_t mode;
		bool mine, hidden;
	} cases[] = {
		{S_IFREG | 0644, true, false},  {S_IFREG | 0600, true, true},
		{S_IFREG | 0640, true, true},   {S_IFREG | 0400, true, true},
		{S_IFREG | 0200, true, false},  /* nobody reads it: nothing to hide */
		{S_IFREG | 0044, true, false},  /* others read it (the owner cannot) */
		{S_IFREG | 0040, true, false},  /* the owner class alone applies to the owner */
		{S_IFREG | 0600, false, false}, /* another user's: the jail cannot read it either */
		{S_IFREG | 0640, false, true},  /* its group (or an ACL entry) may include the jail */
		{S_IFREG | 0604, false, false}, {S_IFCHR | 0600, true, true},
		{S_IFDIR | 0755, true, false},  {S_IFDIR | 0700, true, true},
		{S_IFDIR | 0711, true, true},   /* others may enter but not list: masked whole */
		{S_IFDIR | 0754, true, true},   {S_IFDIR | 0100, true, true},
		{S_IFDIR | 0000, true, false},  {S_IFDIR | 0700, false, false},
		{S_IFDIR | 0750, false, true},  {S_IFDIR | 0701, false, true},
		{S_IFDIR | 0755, false, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		bool got = scan_hidden(cases[i].mode, cases[i].mine ? me : other, me);
		if (got != cases[i].hidden)
			fail_msg("case %zu: mode %o %s: got %d", i, (unsigned)cases[i].mode,
				 cases[i].mine ? "mine" : "another's", got);
	}
}

static void test_choose_check(void **state)
{
	assert_int_equal(scan_choose_check(0, 0, NULL), SCAN_CHECK_ENTRIES);
	assert_int_equal(scan_choose_check(SCAN_ENTRY_BUDGET, 10, NULL), SCAN_CHECK_ENTRIES);
	assert_int_equal(scan_choose_check(SCAN_ENTRY_BUDGET + 1, 10, NULL), SCAN_CHECK_DIRS);
	/* without stamps allowed (/etc), never weaker than every directory */
	assert_int_equal(scan_choose_check(1000000, 100000, NULL), SCAN_CHECK_DIRS);
	const struct scan_opts o = {.allow_stamps = true, .entry_budget = 10, .dir_budget = 5};
	assert_int_equal(scan_choose_check(10, 10, &o), SCAN_CHECK_ENTRIES);
	assert_int_equal(scan_choose_check(11, 5, &o), SCAN_CHECK_DIRS);
	assert_int_equal(scan_choose_check(11, 6, &o), SCAN_CHECK_STAMPS);
	const struct scan_opts d = {.allow_stamps = true};
	assert_int_equal(scan_choose_check(156367, 16905, &d), SCAN_CHECK_STAMPS);
	assert_int_equal(scan_choose_check(2482, SCAN_DIR_BUDGET, &d), SCAN_CHECK_DIRS);
	assert_int_equal(scan_choose_check(2482, SCAN_DIR_BUDGET + 1, &d), SCAN_CHECK_STAMPS);
}

static void test_cache_path(void **state)
{
	_cleanup_free_ char *a = treescan_cache_path("/s", "/usr");
	assert_string_equal(a, "/s/treescan-%2Fusr.cache");
	_cleanup_free_ char *b = treescan_cache_path("/s", "/root/a%b/c");
	assert_string_equal(b, "/s/treescan-%2Froot%2Fa%25b%2Fc.cache");
	/* two roots never share a file: "/a/b" and "/a%2Fb" differ */
	_cleanup_free_ char *c = treescan_cache_path("/s", "/a%2Fb");
	_cleanup_free_ char *d = treescan_cache_path("/s", "/a/b");
	assert_string_not_equal(c, d);
	char long_root[300];
	memset(long_root, 'x', sizeof long_root - 1);
	long_root[0] = '/';
	long_root[sizeof long_root - 1] = '\0';
	assert_null(treescan_cache_path("/s", long_root));
}

/* As root: a 0600 file or 0700 directory of another user is out of the jail's reach (no
 * capabilities): no mask. A group-readable one may be in reach: masked. */
static void test_owner_decides(void **state)
{
	struct fx *f = *state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	mkfile(f, "theirs600", 0600);
	mkfile(f, "theirs640", 0640);
	mkdirm(f, "theirdir", 0700);
	mkfile(f, "theirdir/x", 0644);
	const char *names[] = {"theirs600", "theirs640", "theirdir"};
	for (size_t i = 0; i < 3; i++) {
		_cleanup_free_ char *p = path_join(f->root, names[i]);
		assert_int_equal(chown(p, 4242, 4242), 0);
	}
	static const char *const want[] = {
		"back\\slash", "dir\nnl/f600", "group640", "new\nline", "noexec", "private",
		"pub/deep600", "secret600", "theirs640", "with space", NULL,
	};
	get(f, true, want);
}

static void test_skip_subtree(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *pub = path_join(f->root, "pub");
	_cleanup_free_ char *priv = path_join(f->root, "private");
	const char *const skip_list[] = {pub, priv, NULL};
	const struct scan_opts o = {.skip = skip_list};
	static const char *const want[] = {
		"back\\slash", "dir\nnl/f600", "group640", "new\nline", "noexec", "secret600",
		"with space", NULL,
	};
	get_opts(f, true, &o, want, NULL);
}

/* STAMPS: the root, its direct subdirectories and the package stamps are checked; a change
 * deeper down is not (the documented residual risk) until the age limit. */
static void test_stamps(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *db = path_join(f->dir, "pkgdb");
	assert_int_equal(mkdir(db, 0755), 0);
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 100;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, db, t, 0), 0);
	const char *const stamps[] = {db, NULL};
	const struct scan_opts o = {
		.allow_stamps = true, .stamps = stamps, .entry_budget = 2, .dir_budget = 2};
	mkdirm(f, "pub/deeper", 0755);
	backdate(f);
	mark(f, &o);
	_cleanup_free_ char *text = slurp(f->cache);
	assert_non_null(strstr(text, "\ncheck 3 "));
	assert_non_null(strstr(text, "\np "));
	assert_non_null(strstr(text, db));
	assert_null(strstr(text, "/private/sub\n")); /* not a direct subdirectory */

	/* a file created two levels down: not noticed (residual risk) */
	mkfile(f, "pub/deeper/late600", 0600);
	get_opts(f, false, &o, marked_list, NULL);
	/* a package transaction: the stamp moves, the next call scans */
	_cleanup_free_ char *inst = path_join(db, "status-new");
	int fd = open(inst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	static const char *const want[] = {
		"back\\slash", "dir\nnl/f600", "group640", "new\nline", "noexec",
		"private", "pub/deep600", "pub/deeper/late600", "secret600", "with space", NULL,
	};
	struct scan_info info;
	get_opts(f, false, &o, want, &info);
	assert_false(info.from_cache);
	assert_int_equal(info.check, SCAN_CHECK_STAMPS);
	/* a change in a direct subdirectory is noticed */
	backdate(f);
	assert_int_equal(utimensat(AT_FDCWD, db, t, 0), 0);
	get_opts(f, true, &o, want, NULL);
	get_opts(f, false, &o, want, &info);
	assert_true(info.from_cache);
	mkfile(f, "pub/added600", 0600);
	static const char *const added[] = {
		"back\\slash", "dir\nnl/f600", "group640", "new\nline",
		"noexec", "private", "pub/added600", "pub/deep600", "pub/deeper/late600", "secret600",
		"with space", NULL,
	};
	get_opts(f, false, &o, added, &info);
	assert_false(info.from_cache);
	/* a stamps cache is refused where stamps are not allowed (/etc's options) */
	backdate(f);
	get_opts(f, true, &o, added, NULL);
	get_opts(f, false, NULL, added, &info);
	assert_false(info.from_cache);
}

/* Move a STAMPS cache's scan time `seconds` into the past (negative: the future). */
static void age_stamps_cache(const struct fx *f, long long seconds)
{
	_cleanup_free_ char *text = slurp(f->cache);
	char *at = strstr(text, "\ncheck 3 ");
	assert_non_null(at);
	long long t = strtoll(at + 9, NULL, 10);
	_cleanup_free_ char *from = xasprintf("\ncheck 3 %lld\n", t);
	_cleanup_free_ char *to = xasprintf("\ncheck 3 %lld\n", t - seconds);
	edit_cache(f, from, to);
}

/* A STAMPS cache older than max_age (or from the future) is not trusted. */
static void test_stamps_age(void **state)
{
	struct fx *f = *state;
	const struct scan_opts o = {
		.allow_stamps = true, .entry_budget = 2, .dir_budget = 2, .max_age = 600};
	static const char *const ages[] = {"700", "-5"}; /* seconds before now; after now */
	for (size_t i = 0; i < 2; i++) {
		mark(f, &o);
		age_stamps_cache(f, atoll(ages[i]));
		struct scan_info info;
		get_opts(f, false, &o, base_list, &info);
		assert_false(info.from_cache);
	}
	/* within the age: a hit */
	mark(f, &o);
}

/* A STAMPS cache past half its age is still trusted, and says it is aging (the caller renews
 * it in the background); a younger one does not; other checks never age. */
static void test_stamps_aging(void **state)
{
	struct fx *f = *state;
	const struct scan_opts o = {
		.allow_stamps = true, .entry_budget = 2, .dir_budget = 2, .max_age = 600};
	static const long long back[] = {100, 350, 599};
	static const bool aging[] = {false, true, true};
	for (size_t i = 0; i < 3; i++) {
		mark(f, &o);
		age_stamps_cache(f, back[i]);
		struct scan_info info;
		get_opts(f, false, &o, marked_list, &info);
		assert_true(info.from_cache);
		assert_int_equal(info.aging, aging[i]);
	}
	/* an ENTRIES cache (the defaults on a small tree) never ages */
	struct scan_info info;
	get_opts(f, true, NULL, base_list, &info);
	get_opts(f, false, NULL, base_list, &info);
	assert_true(info.from_cache);
	assert_false(info.aging);
}

/* A tree bound read-only (stamps allowed) is scanned on several threads past its first
 * level: the same list, entry count and directory count as the one-thread scan of /etc's
 * options, on a tree with hidden entries at every depth, a directory masked whole below the
 * first level, one not listable, one too private to enter, and on the real /usr. */
static void test_parallel_equals_serial(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *path; /* a directory when it ends in "/" */
		mode_t mode;
	} tree[] = {
		{"pub/a/", 0755},	     {"pub/a/b/", 0755},	 {"pub/a/b/c/", 0755},
		{"pub/d/", 0755},	     {"pub/e/", 0755},		 {"pub/e/priv/", 0755},
		{"pub/a/b/c/deep600", 0600}, {"pub/a/b/c/ok644", 0644}, {"pub/a/top600", 0600},
		{"pub/d/ok644", 0644},	     {"pub/e/priv/in644", 0644},
	};
	for (size_t i = 0; i < sizeof tree / sizeof *tree; i++) {
		size_t n = strlen(tree[i].path);
		if (tree[i].path[n - 1] == '/') {
			_cleanup_free_ char *d = xstrndup(tree[i].path, n - 1);
			mkdirm(f, d, tree[i].mode);
		} else {
			mkfile(f, tree[i].path, tree[i].mode);
		}
	}
	_cleanup_free_ char *priv = path_join(f->root, "pub/e/priv");
	assert_int_equal(chmod(priv, 0700), 0);
	backdate(f);
	const struct scan_opts par = {.allow_stamps = true};
	const char *roots[] = {f->root, "/usr"};
	for (size_t r = 0; r < 2; r++) {
		struct stat st;
		if (lstat(roots[r], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		struct strv a = STRV_INIT, b = STRV_INIT;
		struct err e = {0};
		struct scan_info ia, ib;
		assert_int_equal(treescan_get(roots[r], NULL, true, &par, &a, &ia, &e), 0);
		assert_int_equal(treescan_get(roots[r], NULL, true, NULL, &b, &ib, &e), 0);
		assert_int_equal(a.n, b.n);
		for (size_t i = 0; i < a.n; i++)
			assert_string_equal(a.v[i], b.v[i]);
		if (r == 0) { /* the real tree may change between the two scans */
			assert_int_equal(ia.nentries, ib.nentries);
			assert_int_equal(ia.ndirs, ib.ndirs);
			static const char *const want[] = {
				"back\\slash", "dir\nnl/f600", "group640", "new\nline", "noexec",
				"private", "pub/a/b/c/deep600", "pub/a/top600", "pub/deep600",
				"pub/e/priv", "secret600", "with space", NULL};
			expect_list(f, &a, want);
		}
		strv_free(&a);
		strv_free(&b);
	}
}

/* The real system trees, as root's jails scan them: figures reported, not asserted. */
static void test_real_trees(void **state)
{
	struct fx *f = *state;
	static const char *const roots[] = {"/usr", "/opt", NULL};
	static const char *const names[] = {"", "entries", "dirs", "stamps"};
	for (size_t r = 0; roots[r]; r++) {
		struct stat st;
		if (lstat(roots[r], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		struct strv got = STRV_INIT;
		struct err e = {0};
		struct scan_info info;
		struct timespec t0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		assert_int_equal(treescan_bound(f->dir, roots[r], true, &got, &info, &e), 0);
		double cold = ms_since(&t0);
		size_t n = got.n, ne = info.nentries, nd = info.ndirs;
		enum scan_check c = info.check;
		bool stored = info.stored;
		for (size_t j = 0; j < got.n; j++)
			assert_non_null(path_below(got.v[j], roots[r]));
		strv_free(&got);
		double warm = 1e9;
		bool hit = true;
		for (int i = 0; i < 20; i++) {
			clock_gettime(CLOCK_MONOTONIC, &t0);
			assert_int_equal(treescan_bound(f->dir, roots[r], false, &got, &info, &e), 0);
			double t = ms_since(&t0);
			warm = t < warm ? t : warm;
			hit = hit && info.from_cache;
			strv_free(&got);
		}
		printf("# %s: %zu entries, %zu directories; %zu masked; scan %.1f ms; cached call "
		       "%.3f ms (best of 20, checked by %s%s)\n",
		       roots[r], ne, nd, n, cold, warm, names[c],
		       stored && hit ? "" : ", cache not used: changed in the last moment");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scan_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_file_created_private, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_hit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_chmod_invalidates_small_tree, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_file_chmod_needs_refresh_large_tree, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dir_chmod_invalidates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_added_file_invalidates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_added_dir_invalidates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_removed_file_invalidates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_cache_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_cache_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_cache_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_for_other_root_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_racy_scan_not_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unwritable_cache_is_not_an_error, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_no_cache_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_not_world_readable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_root_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_normalized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_etc, setup, teardown),
		cmocka_unit_test(test_hidden_rules),
		cmocka_unit_test(test_choose_check),
		cmocka_unit_test(test_cache_path),
		cmocka_unit_test_setup_teardown(test_owner_decides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_skip_subtree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamps_age, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stamps_aging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parallel_equals_serial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_trees, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
