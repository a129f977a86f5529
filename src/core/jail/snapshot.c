/* snapshot: protected paths before and after a run, and the quarantine for what changed
 * (doc/design.md §3 step 7).
 *
 * The read-only binds are the protection; this is the second line. Everything here runs on the
 * host after the jail is gone, possibly as root, over a tree an agent could write: nothing follows
 * a symlink below a protected path, every walk is bounded, and nothing is ever deleted unless an
 * identical copy was made and synced first. */
#include "core/jail/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ------------------------------------------------------------------------------------------------
 * Bounded walks below one protected path (hash, copy, removal).
 */

/* A protected path is a configuration file or a small directory; these bounds keep a hostile tree
 * from exhausting the stack, memory or time of the host process. */
#define WALK_MAX_DEPTH 64u
#define WALK_MAX_ENTRIES ((size_t)100000)

/* A directory opened for reading, never through a symlink. */
#define DIR_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct walk {
	struct strbuf path;  /* the entry being visited, for error messages */
	size_t entries;      /* entries seen so far in this walk */
	bool made_top;       /* copy: the top destination entry was created (so it may be undone) */
	uint64_t copied;     /* copy: bytes of file data written so far (holes not counted) */
	bool capped;         /* copy: stopped at COPY_MAX_BYTES */
	struct err *e;
};

static void walk_init(struct walk *w, const char *top, struct err *e)
{
	*w = (struct walk){.path = STRBUF_INIT, .e = e};
	sb_add(&w->path, top);
}

static size_t walk_push(struct walk *w, const char *name)
{
	size_t old = w->path.len;
	sb_addc(&w->path, '/');
	sb_add(&w->path, name);
	return old;
}

static void walk_pop(struct walk *w, size_t old)
{
	w->path.len = old;
	w->path.s[old] = '\0';
}

/* Fail on the entry being visited. */
static int walk_err(struct walk *w, int errnum, const char *what)
{
	return err_set(w->e, errnum, sb_str(&w->path), "%s", what);
}

static int walk_enter_dir(struct walk *w, unsigned depth)
{
	if (depth <= WALK_MAX_DEPTH)
		return 0;
	err_set(w->e, 0, sb_str(&w->path), "protected directory nests deeper than %u levels",
		WALK_MAX_DEPTH);
	err_hint(w->e, "a protected path should be a small configuration file or directory");
	return -1;
}

static int walk_count(struct walk *w)
{
	if (++w->entries <= WALK_MAX_ENTRIES)
		return 0;
	err_set(w->e, 0, sb_str(&w->path), "protected directory holds more than %zu entries",
		WALK_MAX_ENTRIES);
	err_hint(w->e, "a protected path should be a small configuration file or directory");
	return -1;
}

/* The entry opened is the one fstatat described: it was not swapped in between. */
static int walk_same_entry(struct walk *w, int fd, const struct stat *st)
{
	struct stat now;
	if (fstat(fd, &now) < 0)
		return walk_err(w, errno, "cannot inspect protected path");
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	    (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT))
		return walk_err(w, 0, "protected path changed while being read");
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Open the directory `name` (never through a symlink) and read its names, sorted bytewise so the
 * digest does not depend on the order the filesystem returns them in. */
static int walk_list_dir(struct walk *w, int dfd, const char *name, const struct stat *st,
			 DIR **out, struct strv *names)
{
	int fd = openat(dfd, name, DIR_OPEN_FLAGS);
	if (fd < 0)
		return walk_err(w, errno, "cannot open protected directory");
	if (walk_same_entry(w, fd, st) < 0) {
		close(fd);
		return -1;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		int saved = errno;
		close(fd);
		return walk_err(w, saved, "cannot list protected directory");
	}
	*out = d;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno)
				return err_set(w->e, errno, sb_str(&w->path),
					       "cannot list protected directory");
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (walk_count(w) < 0)
			return -1;
		strv_push(names, de->d_name);
	}
	if (names->n)
		qsort(names->v, names->n, sizeof *names->v, cmp_names);
	return 0;
}

/* readlinkat into a new string; the size from lstat is only a hint (it can be 0 on /proc). */
static char *read_link_at(int dfd, const char *name, off_t hint)
{
	size_t cap = hint > 0 && (size_t)hint < SIZE_MAX / 2 ? (size_t)hint + 1 : 256;
	for (;;) {
		char *buf = xmalloc(cap);
		ssize_t r = readlinkat(dfd, name, buf, cap);
		if (r < 0) {
			int saved = errno;
			free(buf);
			errno = saved;
			return NULL;
		}
		if ((size_t)r < cap) {
			buf[r] = '\0';
			return buf;
		}
		free(buf);
		cap *= 2;
	}
}

/* ------------------------------------------------------------------------------------------------
 * Digests.
 */

static void hash_u64(struct sha256 *c, uint64_t v)
{
	uint8_t b[8];
	for (unsigned i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (56 - 8 * i));
	sha256_update(c, b, sizeof b);
}

static uint8_t type_tag(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return 'f';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	default: return '?';
	}
}

/* Type and permission bits open every digest: a hook made executable, or a file turned into a
 * directory, is a change even when the bytes are the same. */
static void hash_head(struct sha256 *c, const struct stat *st)
{
	uint8_t tag = type_tag(st->st_mode);
	sha256_update(c, &tag, 1);
	hash_u64(c, st->st_mode & 07777);
}

static int hash_at(struct walk *w, int dfd, const char *name, const struct stat *st,
		   unsigned depth, uint8_t out[32]);

static int hash_file_at(struct walk *w, int dfd, const char *name, const struct stat *st,
			struct sha256 *c)
{
	/* O_NONBLOCK: had the file been swapped for a FIFO, open must fail the check, not hang */
	_cleanup_close_ int fd =
		openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return walk_err(w, errno, "cannot open protected file");
	if (walk_same_entry(w, fd, st) < 0)
		return -1;
	uint8_t buf[65536];
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return walk_err(w, errno, "cannot read protected file");
		if (r == 0)
			return 0;
		sha256_update(c, buf, (size_t)r);
	}
}

static int hash_link_at(struct walk *w, int dfd, const char *name, const struct stat *st,
			struct sha256 *c)
{
	_cleanup_free_ char *target = read_link_at(dfd, name, st->st_size);
	if (!target)
		return walk_err(w, errno, "cannot read protected symlink");
	sha256_update(c, target, strlen(target));
	return 0;
}

/* A directory is its sorted listing: per entry the name (length-prefixed, so names cannot run
 * into each other), type, device and inode (a file swapped for an identical copy is a change)
 * and the entry's own digest. */
static int hash_dir_at(struct walk *w, int dfd, const char *name, const struct stat *st,
		       unsigned depth, struct sha256 *c)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_strv_ struct strv names = STRV_INIT;
	if (walk_enter_dir(w, depth) < 0 || walk_list_dir(w, dfd, name, st, &d, &names) < 0)
		return -1;
	for (size_t i = 0; i < names.n; i++) {
		const char *child = names.v[i];
		size_t old = walk_push(w, child);
		struct stat cst;
		uint8_t digest[32];
		if (fstatat(dirfd(d), child, &cst, AT_SYMLINK_NOFOLLOW) < 0)
			return walk_err(w, errno, "cannot inspect protected path");
		if (hash_at(w, dirfd(d), child, &cst, depth + 1, digest) < 0)
			return -1;
		walk_pop(w, old);
		hash_u64(c, strlen(child));
		sha256_update(c, child, strlen(child));
		hash_u64(c, cst.st_mode & S_IFMT);
		hash_u64(c, (uint64_t)cst.st_dev);
		hash_u64(c, (uint64_t)cst.st_ino);
		sha256_update(c, digest, sizeof digest);
	}
	return 0;
}

static int hash_at(struct walk *w, int dfd, const char *name, const struct stat *st,
		   unsigned depth, uint8_t out[32])
{
	struct sha256 c;
	int r = 0;
	sha256_init(&c);
	hash_head(&c, st);
	if (S_ISREG(st->st_mode))
		r = hash_file_at(w, dfd, name, st, &c);
	else if (S_ISLNK(st->st_mode))
		r = hash_link_at(w, dfd, name, st, &c);
	else if (S_ISDIR(st->st_mode))
		r = hash_dir_at(w, dfd, name, st, depth, &c);
	else
		hash_u64(&c, (uint64_t)st->st_rdev); /* sockets, FIFOs, devices: no content */
	if (r < 0)
		return -1;
	sha256_final(&c, out);
	return 0;
}

static bool is_git(const char *path) { return strcmp(path_basename(path), ".git") == 0; }

/* A .git directory is recorded by kind and inode only: git rewrites its contents all the time
 * (objects, index, refs) and its dangerous parts (hooks, config) are protected paths of their own.
 * A .git file or symlink (worktree, submodule) is hashed: its few bytes say where the repository
 * is, and pointing them elsewhere is how hooks would be planted. */
static bool kind_only(const char *path, const struct stat *st)
{
	return is_git(path) && S_ISDIR(st->st_mode);
}

static int digest_entry(struct snap_entry *se, const struct stat *st, struct err *e)
{
	if (kind_only(se->path, st)) {
		struct sha256 c;
		uint8_t tag = type_tag(st->st_mode);
		sha256_init(&c);
		sha256_update(&c, &tag, 1);
		sha256_final(&c, se->digest);
		return 0;
	}
	struct walk w;
	walk_init(&w, se->path, e);
	int r = hash_at(&w, AT_FDCWD, se->path, st, 0, se->digest);
	sb_free(&w.path);
	return r;
}

/* ------------------------------------------------------------------------------------------------
 * Taking a snapshot.
 */

/* lstat into id; a missing entry, or a parent that is not a directory, is "does not exist". */
static int lstat_id(const char *path, struct snap_id *id, struct stat *st)
{
	*id = (struct snap_id){0};
	if (lstat(path, st) == 0) {
		*id = (struct snap_id){true, st->st_mode & S_IFMT, st->st_dev, st->st_ino};
		return 0;
	}
	return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

static bool same_id(const struct snap_id *a, const struct snap_id *b)
{
	if (a->exists != b->exists)
		return false;
	return !a->exists || (a->type == b->type && a->dev == b->dev && a->ino == b->ino);
}

static void entry_free(struct snap_entry *se)
{
	free(se->path);
	free(se->anc);
	*se = (struct snap_entry){0};
}

/* Where `path` (normalized, absolute) stands now, without reading any content: the lstat of each
 * strict ancestor and of the path itself. */
static int probe(const char *path, struct snap_entry *se, struct stat *st, struct err *e)
{
	_cleanup_free_ char *buf = xstrdup(path);
	size_t n = 0;
	se->path = xstrdup(path);
	for (const char *p = path + 1; *p; p++)
		n += *p == '/';
	se->anc = n ? xcalloc(n, sizeof *se->anc) : NULL;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		struct stat ast;
		*p = '\0';
		if (lstat_id(buf, &se->anc[se->nanc], &ast) < 0)
			return err_set(e, errno, buf, "cannot inspect a parent of protected path");
		se->nanc++;
		*p = '/';
	}
	struct snap_id id;
	if (lstat_id(path, &id, st) < 0)
		return err_set(e, errno, path, "cannot inspect protected path");
	se->exists = id.exists;
	se->type = id.type;
	se->dev = id.dev;
	se->ino = id.ino;
	return 0;
}

static int take_one(const char *raw, struct snap_entry *se, struct err *e)
{
	if (raw[0] != '/' || strcmp(raw, "/") == 0) {
		err_set(e, EINVAL, raw, "protected path must be absolute and not /");
		err_hint(e, "protected paths are given as absolute paths below a writable root");
		return -1;
	}
	_cleanup_free_ char *path = path_normalize(NULL, raw);
	struct stat st;
	if (probe(path, se, &st, e) < 0)
		return -1;
	if (se->exists && digest_entry(se, &st, e) < 0) {
		err_hint(e, "make it readable by the user running agentjail, or unprotect it");
		return -1;
	}
	return 0;
}

int snapshot_take(const struct strv *paths, struct snapshot *out, struct err *e)
{
	*out = (struct snapshot){0};
	if (!paths->n)
		return 0;
	out->e = xcalloc(paths->n, sizeof *out->e);
	for (size_t i = 0; i < paths->n; i++) {
		/* counted first so snapshot_free releases a half-filled entry */
		out->n++;
		if (take_one(paths->v[i], &out->e[i], e) < 0) {
			snapshot_free(out);
			return -1;
		}
	}
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	for (size_t i = 0; i < s->n; i++)
		entry_free(&s->e[i]);
	free(s->e);
	*s = (struct snapshot){0};
}

void violations_free(struct violations *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->v[i].path);
		free(v->v[i].what);
		free(v->v[i].moved_to);
	}
	free(v->v);
	*v = (struct violations){0};
}

/* ------------------------------------------------------------------------------------------------
 * Moving aside: copy (for EXDEV), removal, quarantine directories.
 */

static int copy_at(struct walk *w, int sdir, const char *sname, int ddir, const char *dname,
		   unsigned depth);

/* Permission bits of a copy. setuid/setgid/sticky are dropped: agentjail may run as root, and a
 * setuid-root copy of something an agent planted must never come into being. */
static mode_t copy_mode(const struct stat *st) { return st->st_mode & 0777; }

/* A move aside copies at most this much file data per item (holes are free: a sparse file keeps
 * them). Above it the copy stops, is undone, and the item is renamed in place instead (see
 * copy_then_remove): a hostile multi-gigabyte file must not fill the state directory's disk nor
 * hold the host process for minutes. */
#define COPY_MAX_BYTES ((uint64_t)64 << 20)
#define COPY_CAP_ERRNO EFBIG

/* Copy [off, end) of in to out, through copy_file_range where the kernel can, else a buffer. */
static int copy_range(struct walk *w, int in, int out, off_t off, off_t end)
{
	uint8_t buf[65536];
	bool cfr = true;
	while (off < end) {
		size_t want = (size_t)(end - off < (off_t)(1 << 20) ? end - off : (1 << 20));
		if (w->copied + want > COPY_MAX_BYTES) {
			w->capped = true;
			return walk_err(w, COPY_CAP_ERRNO, "file data exceeds the quarantine copy cap");
		}
		ssize_t r = -1;
		if (cfr) {
			off_t o_in = off, o_out = off;
			r = copy_file_range(in, &o_in, out, &o_out, want, 0);
			if (r < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP || errno == EPERM)) {
				cfr = false;
				continue;
			}
		} else {
			r = pread(in, buf, want < sizeof buf ? want : sizeof buf, off);
			if (r > 0 && (lseek(out, off, SEEK_SET) < 0 || fs_write_all(out, buf, (size_t)r) < 0))
				return walk_err(w, errno, "cannot write the copy of a file");
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return walk_err(w, errno, "cannot copy file data");
		if (r == 0)
			break; /* the file shrank: what is there is copied */
		off += r;
		w->copied += (uint64_t)r;
	}
	return 0;
}

/* The data of `in` into `out`, keeping holes: only the extents SEEK_DATA finds are copied, and
 * the size is set at the end (so a trailing hole stays one). A filesystem without SEEK_DATA
 * reports the whole file as data. */
static int copy_data(struct walk *w, int in, int out, off_t size)
{
	off_t off = 0;
	while (off < size) {
		off_t data = lseek(in, off, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break; /* only a hole is left */
		if (data < 0)
			return walk_err(w, errno, "cannot read file to copy it");
		off_t hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			return walk_err(w, errno, "cannot read file to copy it");
		if (hole > size)
			hole = size;
		if (copy_range(w, in, out, data, hole) < 0)
			return -1;
		off = hole > data ? hole : size;
	}
	if (ftruncate(out, size) < 0)
		return walk_err(w, errno, "cannot write the copy of a file");
	return 0;
}

static int copy_file_at(struct walk *w, int sdir, const char *sname, const struct stat *st,
			int ddir, const char *dname, unsigned depth)
{
	_cleanup_close_ int in =
		openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (in < 0)
		return walk_err(w, errno, "cannot open file to copy it aside");
	if (walk_same_entry(w, in, st) < 0)
		return -1;
	_cleanup_close_ int out =
		openat(ddir, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return walk_err(w, errno, "cannot create the copy of a file");
	w->made_top |= depth == 0;
	if (copy_data(w, in, out, st->st_size) < 0)
		return -1;
	if (fchmod(out, copy_mode(st)) < 0)
		return walk_err(w, errno, "cannot set the mode of a copy");
	/* close reports delayed write errors (NFS, quota): the copy is not done before it */
	if (close(steal_fd(&out)) < 0)
		return walk_err(w, errno, "cannot write the copy of a file");
	return 0;
}

static int copy_link_at(struct walk *w, int sdir, const char *sname, const struct stat *st,
			int ddir, const char *dname, unsigned depth)
{
	_cleanup_free_ char *target = read_link_at(sdir, sname, st->st_size);
	if (!target)
		return walk_err(w, errno, "cannot read symlink to copy it");
	if (symlinkat(target, ddir, dname) < 0)
		return walk_err(w, errno, "cannot create the copy of a symlink");
	w->made_top |= depth == 0;
	return 0;
}

static int copy_dir_at(struct walk *w, int sdir, const char *sname, const struct stat *st,
		       int ddir, const char *dname, unsigned depth)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_strv_ struct strv names = STRV_INIT;
	if (walk_enter_dir(w, depth) < 0 || walk_list_dir(w, sdir, sname, st, &d, &names) < 0)
		return -1;
	if (mkdirat(ddir, dname, 0700) < 0)
		return walk_err(w, errno, "cannot create the copy of a directory");
	w->made_top |= depth == 0;
	_cleanup_close_ int out = openat(ddir, dname, DIR_OPEN_FLAGS);
	if (out < 0)
		return walk_err(w, errno, "cannot open the copy of a directory");
	for (size_t i = 0; i < names.n; i++) {
		size_t old = walk_push(w, names.v[i]);
		if (copy_at(w, dirfd(d), names.v[i], out, names.v[i], depth + 1) < 0)
			return -1;
		walk_pop(w, old);
	}
	/* only now: a read-only source directory would have refused its own children */
	if (fchmod(out, copy_mode(st)) < 0)
		return walk_err(w, errno, "cannot set the mode of a copy");
	return 0;
}

static int copy_at(struct walk *w, int sdir, const char *sname, int ddir, const char *dname,
		   unsigned depth)
{
	struct stat st;
	if (fstatat(sdir, sname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return walk_err(w, errno, "cannot inspect path to copy it aside");
	if (walk_count(w) < 0)
		return -1;
	if (S_ISREG(st.st_mode))
		return copy_file_at(w, sdir, sname, &st, ddir, dname, depth);
	if (S_ISLNK(st.st_mode))
		return copy_link_at(w, sdir, sname, &st, ddir, dname, depth);
	if (S_ISDIR(st.st_mode))
		return copy_dir_at(w, sdir, sname, &st, ddir, dname, depth);
	/* FIFOs and sockets copy as empty nodes; a device only where we may create one */
	if (mknodat(ddir, dname, (st.st_mode & S_IFMT) | copy_mode(&st), st.st_rdev) < 0)
		return walk_err(w, errno, "cannot create the copy of a node");
	w->made_top |= depth == 0;
	return 0;
}

/* Remove `name` and everything below it, never following a symlink. */
static int remove_at(struct walk *w, int dfd, const char *name, unsigned depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return walk_err(w, errno, "cannot inspect path to remove it");
	if (S_ISDIR(st.st_mode)) {
		_cleanup_closedir_ DIR *d = NULL;
		_cleanup_strv_ struct strv names = STRV_INIT;
		if (walk_enter_dir(w, depth) < 0 ||
		    walk_list_dir(w, dfd, name, &st, &d, &names) < 0)
			return -1;
		/* a directory made read-only to pin its contents is ours to empty after the copy */
		if ((st.st_mode & 0700) != 0700)
			(void)fchmod(dirfd(d), (st.st_mode & 07777) | 0700);
		for (size_t i = 0; i < names.n; i++) {
			size_t old = walk_push(w, names.v[i]);
			if (remove_at(w, dirfd(d), names.v[i], depth + 1) < 0)
				return -1;
			walk_pop(w, old);
		}
	}
	if (unlinkat(dfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
		return walk_err(w, errno, "cannot remove path after copying it");
	return 0;
}

/* syncfs wants a real descriptor; `dfd` may be an O_PATH one. */
static int sync_fs_of(int dfd)
{
	_cleanup_close_ int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	return syncfs(fd);
}

/* Copy src to (ddir, dname), sync, then remove src. On failure undo the partial copy (only what
 * this call created) and leave src alone. `shown_dst` names the destination in messages. */
/* Above the copy cap: rename src in place, within its own directory (so its own filesystem), to a
 * name nothing loads (".envrc" becomes ".envrc.agentjail-too-large-<pid>"). Never deleted: the
 * user decides. Returns 1 with *renamed (named after `shown`, the path the user knows; `src` may
 * be a /proc/self/fd path) and e telling why; -1 when even that rename fails: src stays. */
static int rename_in_place(const char *src, const char *shown, char **renamed, struct err *e)
{
	_cleanup_free_ char *parent = path_dirname(src);
	_cleanup_free_ char *shown_parent = path_dirname(shown);
	const char *base = path_basename(src);
	for (unsigned k = 0; k < 100; k++) {
		_cleanup_free_ char *name =
			k ? xasprintf("%s.agentjail-too-large-%d.%u", base, (int)getpid(), k)
			  : xasprintf("%s.agentjail-too-large-%d", base, (int)getpid());
		_cleanup_free_ char *full = path_join(parent, name);
		if (renameat2(AT_FDCWD, src, AT_FDCWD, full, RENAME_NOREPLACE) == 0) {
			*renamed = path_join(shown_parent, name);
			err_set(e, COPY_CAP_ERRNO, shown,
				"more than %llu MiB of file data, too large to copy into the "
				"quarantine: renamed in place to %s",
				(unsigned long long)(COPY_MAX_BYTES >> 20), *renamed);
			err_hint(e, "inspect %s and delete it if you did not expect it", *renamed);
			return 1;
		}
		if (errno != EEXIST)
			break;
	}
	int saved = errno;
	err_set(e, saved, shown,
		"more than %llu MiB of file data, too large to copy into the quarantine, and it "
		"cannot be renamed in place either: LEFT WHERE IT IS",
		(unsigned long long)(COPY_MAX_BYTES >> 20));
	err_hint(e, "inspect %s and delete it if you did not expect it", shown);
	return -1;
}

/* Copy src to (ddir, dname), sync, then remove src. On failure undo the partial copy (only what
 * this call created) and leave src alone. `shown_src` and `shown_dst` name both ends in messages.
 * Returns 0 when moved, 1 when src was above the copy cap and renamed in place instead
 * (*renamed, and e says why), -1 on failure. */
static int copy_then_remove(const char *src, const char *shown_src, int ddir, const char *dname,
			    const char *shown_dst, char **renamed, struct err *e)
{
	struct walk w;
	walk_init(&w, shown_src, e);
	int r = copy_at(&w, AT_FDCWD, src, ddir, dname, 0);
	if (r == 0 && sync_fs_of(ddir) < 0)
		r = err_set(e, errno, shown_dst, "cannot sync the copy of a protected path");
	if (r < 0 && w.made_top) {
		struct err ignored;
		struct walk undo;
		walk_init(&undo, shown_dst, &ignored);
		(void)remove_at(&undo, ddir, dname, 0);
		sb_free(&undo.path);
	}
	sb_free(&w.path);
	if (r < 0 && w.capped)
		return rename_in_place(src, shown_src, renamed, e);
	if (r < 0)
		return -1;
	walk_init(&w, shown_src, e);
	r = remove_at(&w, AT_FDCWD, src, 0);
	sb_free(&w.path);
	if (r < 0)
		err_hint(e, "a complete copy is at %s", shown_dst);
	return r;
}

int move_aside_copy(const char *src, const char *dst, struct err *e)
{
	_cleanup_free_ char *parent = path_dirname(dst);
	_cleanup_close_ int pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return err_set(e, errno, parent, "cannot open the directory to copy into");
	_cleanup_free_ char *renamed = NULL;
	/* renamed in place (above the cap) is still a failure to this caller: e says where */
	return copy_then_remove(src, src, pfd, path_basename(dst), dst, &renamed, e) == 0 ? 0 : -1;
}

/* mkdir (0700) unless it exists, then open it as a directory; *what says what failed. New
 * directories are opened for reading (a sync needs it), existing ones with O_PATH (a parent of the
 * state directory may be searchable only). */
static int mkdir_open_at(int dfd, const char *name, bool nofollow, const char **what)
{
	bool made = mkdirat(dfd, name, 0700) == 0;
	if (!made && errno != EEXIST) {
		*what = "cannot create quarantine directory";
		return -1;
	}
	int flags = O_DIRECTORY | O_CLOEXEC | (made ? O_RDONLY : O_PATH);
	int fd = openat(dfd, name, nofollow ? flags | O_NOFOLLOW : flags);
	if (fd < 0) {
		*what = "cannot open quarantine directory";
		return -1;
	}
	/* exactly 0700 whatever the umask: it will hold what an agent planted */
	if (made && fchmod(fd, 0700) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		*what = "cannot set the mode of quarantine directory";
		return -1;
	}
	return fd;
}

/* Walk the relative path `rel` below dfd, creating what is missing; returns the last directory.
 * `shown` is dfd's path, for messages. */
static int mkdirs_at(int dfd, const char *shown, const char *rel, bool nofollow, struct err *e)
{
	int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return err_set(e, errno, shown, "cannot open quarantine directory");
	_cleanup_free_ char *buf = xstrdup(rel);
	char *save = NULL;
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		const char *what = NULL;
		int next = mkdir_open_at(fd, c, nofollow, &what);
		int saved = errno;
		close(fd);
		if (next < 0) {
			_cleanup_free_ char *prefix = xstrndup(rel, (size_t)(c - buf) + strlen(c));
			_cleanup_free_ char *full = path_join(shown, prefix);
			return err_set(e, saved, full, "%s", what);
		}
		fd = next;
	}
	return fd;
}

/* ------------------------------------------------------------------------------------------------
 * Checking.
 */

/* A violation whose entry exists and is to be moved aside from `src` (the protected path, or the
 * symlink planted in its parent chain). */
struct pending {
	size_t vi;
	char *src;
};

struct check {
	const char *qdir;
	char *stamp;         /* qdir/<UTC time>-<pid>, made at the first move */
	int stampfd;
	bool stamp_failed;
	struct err stamp_err; /* why it could not be made, repeated for every move */
	struct violations *out;
	struct pending *pend;
	size_t npend;
	bool live;           /* during the run: move through a parent opened without symlinks */
};

static void add_violation(struct check *ck, const char *path, char *what, char *move_src)
{
	struct violations *out = ck->out;
	out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
	out->v[out->n] = (struct violation){.path = xstrdup(path), .what = what};
	if (move_src) {
		ck->pend = xrealloc(ck->pend, (ck->npend + 1) * sizeof *ck->pend);
		ck->pend[ck->npend++] = (struct pending){out->n, move_src};
	}
	out->n++;
}

/* The first ancestor that is a symlink now and was not that same symlink before: the agent put it
 * there, and whatever the path resolves to through it is outside the protected tree. */
static char *planted_symlink(const struct snap_entry *before, const struct snap_entry *now)
{
	for (size_t i = 0; i < now->nanc && i < before->nanc; i++) {
		if (!now->anc[i].exists || now->anc[i].type != S_IFLNK ||
		    same_id(&before->anc[i], &now->anc[i]))
			continue;
		/* ancestor i ends at the (i + 2)-th slash of the path */
		const char *p = before->path;
		for (size_t slashes = 0; *p; p++)
			if (*p == '/' && ++slashes == i + 2)
				break;
		return xstrndup(before->path, (size_t)(p - before->path));
	}
	return NULL;
}

static char *classify(const struct snap_entry *b, struct snap_entry *now, const struct stat *st,
		      const char *via)
{
	if (!now->exists)
		return b->exists ? xstrdup("removed") : NULL;
	if (via)
		return xasprintf("%s (through a symlink planted at %s)",
				 b->exists ? "replaced" : "appeared", via);
	if (!b->exists)
		return xstrdup("appeared");
	if (now->type != b->type)
		return xstrdup(is_git(b->path) ? ".git changed kind" : "replaced");
	if (now->dev != b->dev || now->ino != b->ino)
		return xstrdup("replaced");
	struct err e = {0};
	if (digest_entry(now, st, &e) < 0) {
		/* it was readable before the run: unreadable now is a change made to hide one */
		char msg[ERR_FMT_MAX];
		err_format(&e, msg, sizeof msg);
		return xasprintf("changed (cannot read it now: %s)", msg);
	}
	return memcmp(now->digest, b->digest, sizeof b->digest) ? xstrdup("changed") : NULL;
}

static void check_one(struct check *ck, const struct snap_entry *b)
{
	struct snap_entry now = {0};
	struct stat st;
	struct err e = {0};
	if (probe(b->path, &now, &st, &e) < 0) {
		char msg[ERR_FMT_MAX];
		err_format(&e, msg, sizeof msg);
		add_violation(ck, b->path, xasprintf("could not be checked (%s)", msg), NULL);
		entry_free(&now);
		return;
	}
	char *via = planted_symlink(b, &now);
	char *what = classify(b, &now, &st, via);
	if (what && now.exists) {
		/* through a planted symlink, the symlink moves: never what it points to */
		add_violation(ck, b->path, what, via ? steal_pointer(&via) : xstrdup(b->path));
	} else if (what) {
		add_violation(ck, b->path, what, NULL);
	}
	free(via);
	entry_free(&now);
}

/* The quarantine directory itself, made with its parents as needed. Its location is agentjail's
 * state directory, trusted: symlinks on the way there are followed. */
static int open_quarantine(const char *qdir, struct err *e)
{
	const char *root = qdir[0] == '/' ? "/" : ".";
	_cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return err_set(e, errno, root, "cannot open quarantine directory");
	return mkdirs_at(rfd, root, qdir, false, e);
}

/* qdir/<UTC time>-<pid>, fresh: a second check within the same second gets ".1", ".2"… rather
 * than mixing its entries with (or failing against) the first one's. */
static int make_stamp(struct check *ck, struct err *e)
{
	char ts[32];
	time_t t = time(NULL);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm))
		return err_set(e, errno, ck->qdir, "cannot format the time for a quarantine name");
	_cleanup_close_ int qfd = open_quarantine(ck->qdir, e);
	if (qfd < 0)
		return -1;
	for (unsigned k = 0; k < 1000; k++) {
		_cleanup_free_ char *name = k ? xasprintf("%s-%d.%u", ts, (int)getpid(), k)
					      : xasprintf("%s-%d", ts, (int)getpid());
		_cleanup_free_ char *full = path_join(ck->qdir, name);
		if (mkdirat(qfd, name, 0700) < 0) {
			if (errno == EEXIST)
				continue;
			return err_set(e, errno, full, "cannot create quarantine directory");
		}
		/* exactly 0700 whatever the umask: it will hold what an agent planted */
		_cleanup_close_ int sfd = openat(qfd, name, DIR_OPEN_FLAGS);
		if (sfd < 0 || fchmod(sfd, 0700) < 0)
			return err_set(e, errno, full, "cannot open quarantine directory");
		ck->stampfd = steal_fd(&sfd);
		ck->stamp = steal_pointer(&full);
		return 0;
	}
	return err_set(e, EEXIST, ck->qdir, "cannot find a free quarantine directory name");
}

static int ensure_stamp(struct check *ck, struct err *e)
{
	if (ck->stampfd >= 0)
		return 0;
	if (!ck->stamp_failed && make_stamp(ck, &ck->stamp_err) == 0)
		return 0;
	ck->stamp_failed = true;
	*e = ck->stamp_err;
	return -1;
}

/* rename without ever replacing what is at the destination */
static int rename_noreplace(const char *src, int ddir, const char *dname)
{
	if (renameat2(AT_FDCWD, src, ddir, dname, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* filesystems without RENAME_NOREPLACE: the destination is in a directory of ours */
	struct stat st;
	if (fstatat(ddir, dname, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(AT_FDCWD, src, ddir, dname);
}

/* chmod u+rwx through an O_PATH fd (the inode it names, never a symlink's target). */
static void owner_rwx(int fd, const struct stat *st)
{
	if ((st->st_mode & 0700) == 0700 || st->st_uid != geteuid())
		return;
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (chmod(proc, (st->st_mode & 07777) | 0700) < 0)
		return; /* best effort: the move that follows reports what still fails */
}

/* A move needs write and search permission on the directory it moves from, and on the item when
 * it is a directory (its ".." entry changes). An agent takes them away (`chmod 555 .git/hooks`)
 * to make the move fail: give them back to the owner first. Nothing is followed: the parent is
 * opened with no symlink anywhere on its path, the item without following it. The paths moved
 * are protected paths (or a symlink planted in their parent chain), so both lie in a writable
 * root or are one. Root needs none of this (it bypasses the permission bits). */
static void loosen_for_move(const char *src)
{
	if (geteuid() == 0)
		return;
	_cleanup_free_ char *parent = path_dirname(src);
	_cleanup_close_ int pfd = fs_open_nofollow(parent, O_PATH | O_DIRECTORY);
	struct stat st;
	if (pfd < 0 || fstat(pfd, &st) < 0)
		return;
	owner_rwx(pfd, &st);
	_cleanup_close_ int ifd =
		openat(pfd, path_basename(src), O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (ifd >= 0 && fstat(ifd, &st) == 0 && S_ISDIR(st.st_mode))
		owner_rwx(ifd, &st);
}

/* Move src to stamp/<src without its leading slash>; returns that path or NULL with *e set. */
/* Returns where src went (NULL with e on failure); *in_place is set when it was too large for
 * the quarantine and went to a harmless name beside itself instead. */
static char *move_one(struct check *ck, const char *src, bool *in_place, struct err *e)
{
	if (ensure_stamp(ck, e) < 0)
		return NULL;
	loosen_for_move(src);
	_cleanup_free_ char *dst = path_join(ck->stamp, src);
	_cleanup_free_ char *parent = path_dirname(src);
	_cleanup_close_ int pfd = mkdirs_at(ck->stampfd, ck->stamp, parent, true, e);
	if (pfd < 0)
		return NULL;
	const char *base = path_basename(src);
	/* live, the agent still runs: the parent is pinned (no symlink on its way), and the move
	 * goes through it, so a directory swapped for a symlink meanwhile is not followed */
	_cleanup_close_ int sfd = -1;
	_cleanup_free_ char *pinned = NULL;
	if (ck->live) {
		_cleanup_free_ char *sparent = path_dirname(src);
		sfd = fs_open_nofollow(sparent, O_PATH | O_DIRECTORY);
		if (sfd < 0) {
			err_set(e, errno, sparent, "cannot open the directory to move from");
			return NULL;
		}
		pinned = xasprintf("/proc/self/fd/%d/%s", sfd, base);
	}
	const char *from = pinned ? pinned : src;
	if (rename_noreplace(from, pfd, base) == 0)
		return steal_pointer(&dst);
	if (errno != EXDEV) {
		err_set(e, errno, src, "cannot move protected path to %s", dst);
		return NULL;
	}
	char *renamed = NULL;
	int r = copy_then_remove(from, src, pfd, base, dst, &renamed, e);
	if (r < 0)
		return NULL;
	*in_place = r == 1;
	return r == 1 ? renamed : steal_pointer(&dst);
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	size_t lx = strlen(x->src), ly = strlen(y->src);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return x->vi < y->vi ? -1 : x->vi > y->vi;
}

/* An entry below one already moved went with it: say where it is now. */
static char *moved_with_ancestor(const struct check *ck, size_t upto, const char *src)
{
	for (size_t j = 0; j < upto; j++) {
		const char *moved = ck->out->v[ck->pend[j].vi].moved_to;
		const char *rel = moved ? path_below(src, ck->pend[j].src) : NULL;
		if (rel)
			return path_join(moved, rel);
	}
	return NULL;
}

/* Shortest source first, so an ancestor moves before the entries below it and they follow it. */
static void move_all(struct check *ck)
{
	if (ck->npend)
		qsort(ck->pend, ck->npend, sizeof *ck->pend, cmp_pending);
	for (size_t i = 0; i < ck->npend; i++) {
		struct violation *v = &ck->out->v[ck->pend[i].vi];
		v->moved_to = moved_with_ancestor(ck, i, ck->pend[i].src);
		if (v->moved_to)
			continue;
		struct err e = {0};
		bool in_place = false;
		v->moved_to = move_one(ck, ck->pend[i].src, &in_place, &e);
		char msg[ERR_FMT_MAX];
		if (v->moved_to && in_place) {
			/* the protected name is free again, so the violation is undone; say how */
			err_format(&e, msg, sizeof msg);
			char *what = xasprintf("%s (%s)", v->what, msg);
			free(v->what);
			v->what = what;
		}
		if (v->moved_to)
			continue;
		err_format(&e, msg, sizeof msg);
		char *what = xasprintf("%s (could not move: %s)", v->what, msg);
		free(v->what);
		v->what = what;
		v->move_failed = true;
	}
}

static void check_free(struct check *ck)
{
	for (size_t i = 0; i < ck->npend; i++)
		free(ck->pend[i].src);
	free(ck->pend);
	free(ck->stamp);
	if (ck->stampfd >= 0)
		close(ck->stampfd);
}

void snapshot_move_now(const char *path, const char *quarantine_dir, struct violations *out)
{
	/* only what is there, reached without a symlink anywhere on the way */
	_cleanup_close_ int fd = fs_open_nofollow(path, O_PATH | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return;
	struct check ck = {.qdir = quarantine_dir, .stampfd = -1, .out = out, .live = true};
	add_violation(&ck, path,
		      xstrdup(S_ISLNK(st.st_mode) ? "appeared (a symlink)" : "appeared"),
		      xstrdup(path));
	move_all(&ck);
	check_free(&ck);
}

int snapshot_check(const struct snapshot *before, const char *quarantine_dir,
		   struct violations *out, struct err *e)
{
	*out = (struct violations){0};
	if (!quarantine_dir || !quarantine_dir[0])
		return err_set(e, EINVAL, "", "no quarantine directory to move violations into");
	struct check ck = {.qdir = quarantine_dir, .stampfd = -1, .out = out};
	/* every path is compared before anything moves: a move must not change another's verdict */
	for (size_t i = 0; i < before->n; i++)
		check_one(&ck, &before->e[i]);
	move_all(&ck);
	check_free(&ck);
	return 0;
}
