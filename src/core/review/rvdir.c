/* rvdir: a change set's places, its lock, its size, its removal (changeset.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "core/review/review_internal.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

#define OVERLAYFS_MAGIC 0x794c7630

void rv_paths_init(struct rv_paths *p, const char *state_dir, const char *id)
{
	p->dir = review_dir(state_dir, id);
	p->upper = path_join(p->dir, REVIEW_UPPER);
	p->work = path_join(p->dir, REVIEW_WORK);
	p->mnt = path_join(p->dir, REVIEW_MNT);
	p->baseline = path_join(p->dir, REVIEW_BASELINE);
	p->lock = path_join(p->dir, REVIEW_LOCK);
	p->ckpts = path_join(p->dir, REVIEW_CKPTS);
}

/* the part of dir that exists resolved, the rest appended */
static char *real_or_below(const char *dir)
{
	char *r = realpath(dir, NULL);
	if (r || !strcmp(dir, "/") || errno != ENOENT)
		return r ? r : xstrdup(dir);
	_cleanup_free_ char *up = path_dirname(dir);
	_cleanup_free_ char *ru = real_or_below(up);
	return path_join(ru, path_basename(dir));
}

void rv_paths_real(struct rv_paths *p, const char *state_dir, const char *id)
{
	_cleanup_free_ char *real = real_or_below(state_dir);
	rv_paths_init(p, real, id);
}

void rv_paths_free(struct rv_paths *p)
{
	free(p->dir);
	free(p->upper);
	free(p->work);
	free(p->mnt);
	free(p->baseline);
	free(p->lock);
	free(p->ckpts);
	memset(p, 0, sizeof *p);
}

void rv_set_free(struct rv_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].rel);
		free(s->v[i].root);
		free(s->v[i].why);
		free(s->v[i].target);
	}
	free(s->v);
	memset(s, 0, sizeof *s);
}

long long rv_ns(const struct timespec *t)
{
	return (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
}

int rv_opendir_at(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int rv_opendir_path(const char *path)
{
	return fs_open_nofollow(path, O_RDONLY | O_DIRECTORY);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool rv_names(int dirfd, struct strv *out)
{
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			(void)close(fd);
		return false;
	}
	rewinddir(d);
	size_t first = out->n;
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			strv_push(out, de->d_name);
	(void)closedir(d);
	if (out->n - first > 1)
		qsort(out->v + first, out->n - first, sizeof *out->v, cmp_str);
	return true;
}

static bool walk_in(int dirfd, const char *rel, int depth, rv_visit_fn visit, void *arg)
{
	struct strv names = STRV_INIT;
	if (depth > RV_MAX_DEPTH || !rv_names(dirfd, &names))
		return false;
	bool stop = false;
	for (size_t i = 0; i < names.n && !stop; i++) {
		struct stat st;
		if (fstatat(dirfd, names.v[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		_cleanup_free_ char *sub = rel[0] ? xasprintf("%s/%s", rel, names.v[i])
						  : xstrdup(names.v[i]);
		if (!visit(arg, dirfd, names.v[i], sub, &st, &stop) || !S_ISDIR(st.st_mode) || stop)
			continue;
		int fd = rv_opendir_at(dirfd, names.v[i]);
		if (fd >= 0) {
			stop = walk_in(fd, sub, depth + 1, visit, arg);
			(void)close(fd);
		}
	}
	strv_free(&names);
	return stop;
}

void rv_walk(int dirfd, const char *rel, rv_visit_fn visit, void *arg)
{
	(void)walk_in(dirfd, rel, 0, visit, arg);
}

char *rv_read_fd(int fd, size_t size, size_t *len)
{
	char *buf = xmalloc(size + 1);
	size_t got = 0;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	*len = got;
	return buf;
}

/* Our own directory (in the state directory) that we cannot read or search: opened up. */
static int open_up(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char p[40];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	int rc = chmod(p, 0700);
	(void)close(fd);
	return rc;
}

static int remove_tree(int dirfd, const char *name, dev_t dev, int depth)
{
	if (depth > RV_MAX_DEPTH) {
		errno = ELOOP;
		return -1;
	}
	int fd = rv_opendir_at(dirfd, name);
	if (fd < 0 && errno == EACCES && open_up(dirfd, name) == 0)
		fd = rv_opendir_at(dirfd, name);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_dev != dev) {
		(void)close(fd);
		errno = EXDEV; /* a mount inside: never removed through */
		return -1;
	}
	struct strv names = STRV_INIT;
	int rc = rv_names(fd, &names) ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		struct stat cs;
		if (fstatat(fd, names.v[i], &cs, AT_SYMLINK_NOFOLLOW) < 0)
			rc = errno == ENOENT ? 0 : -1;
		else if (S_ISDIR(cs.st_mode))
			rc = remove_tree(fd, names.v[i], dev, depth + 1);
		else if (unlinkat(fd, names.v[i], 0) < 0 && errno != ENOENT)
			rc = -1;
	}
	strv_free(&names);
	int saved = errno;
	(void)close(fd);
	errno = saved;
	if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int rv_remove_at(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	return remove_tree(dirfd, name, st.st_dev, 0);
}

void rv_xattrs_of(int dirfd, const char *name, struct rv_xattrs *out)
{
	memset(out, 0, sizeof *out);
	char path[320]; /* /proc/self/fd/N/NAME: a name is at most 255 bytes */
	snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name);
	char list[4096];
	ssize_t n = llistxattr(path, list, sizeof list);
	if (n < 0) {
		if (errno == ERANGE) { /* more than a page of names: nothing of ours is that */
			out->foreign = true;
			snprintf(out->what, sizeof out->what, "too many extended attributes");
		}
		return;
	}
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(list + i) + 1) {
		const char *a = list + i;
		const char *k = !strncmp(a, "user.overlay.", 13)	  ? a + 13
				: !strncmp(a, "trusted.overlay.", 16) ? a + 16
								      : NULL;
		if (!k)
			continue; /* the jail's own attributes: not applied, not refused */
		/* what overlayfs keeps for itself and means nothing for the change */
		if (!strcmp(k, "origin") || !strcmp(k, "impure") || !strcmp(k, "nlink") ||
		    !strcmp(k, "uuid") || !strcmp(k, "protattr") || !strcmp(k, "upper"))
			continue;
		if (!strcmp(k, "opaque")) {
			char v[8] = "";
			ssize_t l = lgetxattr(path, a, v, sizeof v - 1);
			if (l == 1 && v[0] == 'y') {
				out->opaque = true;
				continue;
			}
		}
		out->foreign = true;
		snprintf(out->what, sizeof out->what, "%.50s", a);
	}
}

int rv_copy_fd(int from, int to)
{
	for (;;) {
		ssize_t n = copy_file_range(from, NULL, to, NULL, 1 << 30, 0);
		if (n == 0)
			return 0;
		if (n > 0)
			continue;
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return -1;
		break;
	}
	char buf[65536];
	for (;;) {
		ssize_t n = read(from, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return (int)n;
		if (fs_write_all(to, buf, (size_t)n) < 0)
			return -1;
	}
}

/* ---- the lock ---- */

static int lock_open(const struct rv_paths *p, bool create)
{
	int dfd = rv_opendir_path(p->dir);
	if (dfd < 0)
		return -1;
	int fd = openat(dfd, REVIEW_LOCK, O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0),
			0600);
	int saved = errno;
	(void)close(dfd);
	errno = saved;
	return fd;
}

bool rv_busy(const struct rv_paths *p)
{
	int fd = lock_open(p, false);
	if (fd < 0)
		return false;
	bool busy = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	(void)close(fd);
	return busy;
}

int rv_lock(const struct rv_paths *p, const char *verb, int *lock_fd, struct err *e)
{
	*lock_fd = lock_open(p, true);
	if (*lock_fd < 0)
		return err_set(e, errno, p->dir, "%s: the session has no change set here", verb);
	if (flock(*lock_fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	int saved = errno;
	(void)close(*lock_fd);
	*lock_fd = -1;
	err_set(e, saved == EWOULDBLOCK ? EBUSY : saved, p->dir,
		"%s: the session is running: its overlay is mounted on this change set", verb);
	err_hint(e, "%s it once the session has ended (a checkpoint can be taken while it runs)",
		 verb);
	return -1;
}

/* Our own directory: owned by us, not a symlink, writable by nobody else. */
static int check_own(const char *dir, struct err *e)
{
	struct stat st;
	if (lstat(dir, &st) < 0)
		return err_set(e, errno, dir, "cannot use the change set's directory");
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		err_set(e, EPERM, dir, "the change set's directory is not a directory of yours "
				       "writable by you alone");
		err_hint(e, "remove it (agentjail discard) or fix its owner and mode (chmod 700)");
		return -1;
	}
	return 0;
}

int rv_open_run(const struct rv_paths *p, const char *workspace, int *lock_fd,
		struct err *e)
{
	*lock_fd = -1;
	char *failed = NULL;
	if (fs_mkdirs(p->dir, 0700, &failed) < 0) {
		int saved = errno;
		err_set(e, saved, failed ? failed : p->dir, "--fs review: cannot make the change "
							    "set's directory");
		free(failed);
		return -1;
	}
	if (check_own(p->dir, e) < 0)
		return -1;
	struct statfs fs;
	if (statfs(p->dir, &fs) == 0 && (unsigned long)fs.f_type == OVERLAYFS_MAGIC) {
		err_set(e, EINVAL, p->dir, "--fs review: the state directory is on overlayfs, which "
					   "cannot hold an overlay's upper layer");
		err_hint(e, "set AGENTJAIL_STATE_DIR (or state_dir) to a directory on another file "
			    "system (ext4, xfs, btrfs, tmpfs), or use --fs workspace-write");
		return -1;
	}
	struct stat ws;
	if (stat(workspace, &ws) < 0)
		return err_set(e, errno, workspace, "--fs review: cannot read the workspace");
	const char *dirs[] = {p->upper, p->work, p->mnt};
	for (size_t i = 0; i < 3; i++)
		if (mkdir(dirs[i], 0700) < 0 && errno != EEXIST)
			return err_set(e, errno, dirs[i], "--fs review: cannot make the change set's "
							  "directory");
	/* the overlay's top shows the upper layer's mode: the workspace's own */
	int ufd = rv_opendir_path(p->upper);
	if (ufd < 0 || fchmod(ufd, ws.st_mode & 0777) < 0) {
		int saved = errno;
		if (ufd >= 0)
			(void)close(ufd);
		return err_set(e, saved, p->upper, "--fs review: cannot use the change set");
	}
	(void)close(ufd);
	if (rv_lock(p, "--fs review", lock_fd, e) < 0) {
		err_hint(e, "another run of this session is using its change set: wait for it to "
			    "end");
		return -1;
	}
	if (rv_unshare(p, e) < 0) {
		(void)close(*lock_fd);
		*lock_fd = -1;
		return -1;
	}
	return 0;
}

/* ---- size, discard ---- */

static bool size_visit(void *arg, int dirfd, const char *name, const char *rel,
		       const struct stat *st, bool *stop)
{
	struct rv_size *out = arg;
	out->entries++;
	if (S_ISREG(st->st_mode))
		out->bytes += (unsigned long long)st->st_size;
	return true;
}

void rv_size(const struct rv_paths *p, struct rv_size *out)
{
	memset(out, 0, sizeof *out);
	int fd = rv_opendir_path(p->upper);
	if (fd < 0)
		return;
	rv_walk(fd, "", size_visit, out);
	(void)close(fd);
}

int rv_discard(const struct rv_paths *p, struct err *e)
{
	_cleanup_free_ char *parent = path_dirname(p->dir);
	int pfd = rv_opendir_path(parent);
	if (pfd < 0)
		return errno == ENOENT ? 0 : err_set(e, errno, parent, "cannot open the change sets' "
								      "directory");
	int rc = rv_remove_at(pfd, path_basename(p->dir));
	int saved = errno;
	(void)close(pfd);
	if (rc < 0)
		return err_set(e, saved, p->dir, "cannot remove the change set");
	return 0;
}
