/* homeprep: see homeprep.h. */
#include "core/host/homeprep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/host/toolprep.h"
#include "core/host/treewalk.h"
#include "core/plan/toolcache.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

/* The lock: an open file description lock (F_OFD_SETLK) on root/lock, so it belongs to the fd
 * (released when agentjail's last copy of it closes, at its exit at the latest) and can be
 * tested without being taken (F_OFD_GETLK), so `agentjail home` listing never makes a jail's
 * start fail. */
static int lock_take(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	return fcntl(fd, F_OFD_SETLK, &fl);
}

/* Refusal: the lock is held by another agentjail, which wrote "PID SESSION" into it. */
static int busy(int fd, const char *root, struct err *e)
{
	char who[128] = "";
	ssize_t n = pread(fd, who, sizeof who - 1, 0);
	who[n > 0 ? n : 0] = '\0';
	who[strcspn(who, "\n")] = '\0';
	unsigned long pid = 0;
	char sess[80] = "";
	bool named = sscanf(who, "%lu %79s", &pid, sess) == 2 &&
		     strspn(sess, "0123456789abcdef-") == strlen(sess);
	_cleanup_free_ char *home = path_join(root, HOMEKEEP_HOME);
	if (named)
		err_set(e, EBUSY, home, "this workspace's persisted home is in use by another jail "
					"(agentjail pid %lu, session %.8s): one jail at a time uses it",
			pid, sess);
	else
		err_set(e, EBUSY, home, "this workspace's persisted home is in use by another jail: "
					"one jail at a time uses it");
	err_hint(e, "wait for that run to end (agentjail sessions), or run this one with --home tmp");
	return -1;
}

int homeprep_prepare(const char *root, const char *workspace, const char *who, int *lock_fd,
		     struct err *e)
{
	*lock_fd = -1;
	_cleanup_free_ char *home = path_join(root, HOMEKEEP_HOME);
	char *failed = NULL;
	if (fs_mkdirs(home, 0700, &failed) < 0) {
		int saved = errno;
		err_set(e, saved, failed ? failed : home, "cannot make the persisted home");
		err_hint(e, "check the permissions of agentjail's state directory "
			    "(AGENTJAIL_STATE_DIR), or run with --home tmp");
		free(failed);
		return -1;
	}
	_cleanup_close_ int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0)
		return err_set(e, errno, root, "cannot open the persisted home's directory");
	int fd = openat(rfd, HOMEKEEP_LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_set(e, errno, root, "cannot open the persisted home's lock");
	if (lock_take(fd) < 0) {
		int rc = errno == EAGAIN || errno == EACCES
				 ? busy(fd, root, e)
				 : err_set(e, errno, root, "cannot lock the persisted home");
		(void)close(fd);
		return rc;
	}
	char line[160];
	int len = snprintf(line, sizeof line, "%ld %s\n", (long)getpid(), who ? who : "-");
	struct stat st;
	int rc = 0;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, line, (size_t)len, 0) != len)
		rc = err_set(e, errno, root, "cannot write the persisted home's lock");
	else if (fstatat(rfd, HOMEKEEP_HOME, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		rc = err_set(e, ENOTDIR, home, "the persisted home is not a directory");
	else if (fchmodat(rfd, HOMEKEEP_HOME, 0700, AT_SYMLINK_NOFOLLOW) < 0)
		rc = err_set(e, errno, home, "cannot make the persisted home 0700");
	else
		rc = toolprep_record_workspace(root, workspace, e);
	if (rc < 0) {
		(void)close(fd);
		return -1;
	}
	*lock_fd = fd;
	return 0;
}

/* ---- the way to bwrap's mount points ---- */

static const char *kind_of(mode_t m)
{
	return S_ISLNK(m) ? "a symlink" : S_ISDIR(m) ? "a directory" : S_ISREG(m) ? "a file"
									  : "a special file";
}

/* Rename `name` of the directory dfd (at `rel` in the home, seen as st) aside. */
static int move_aside(int dfd, const char *name, const char *rel, const struct stat *st,
		      struct strv *moved, struct err *e)
{
	for (int i = 1; i <= 100; i++) {
		char to[300];
		const char *base = strlen(name) > 200 ? "" : name;
		if (i == 1)
			snprintf(to, sizeof to, "%s.agentjail-moved", base);
		else
			snprintf(to, sizeof to, "%s.agentjail-moved-%d", base, i);
		int rc = renameat2(dfd, name, dfd, to, RENAME_NOREPLACE);
		if (rc < 0 && errno == EINVAL) {
			/* a file system without RENAME_NOREPLACE (NFS): the lock keeps every jail out,
			 * so a name free now is free at the rename */
			struct stat there;
			if (fstatat(dfd, to, &there, AT_SYMLINK_NOFOLLOW) == 0)
				errno = EEXIST;
			else if (errno == ENOENT)
				rc = renameat(dfd, name, dfd, to);
		}
		if (rc == 0) {
			strv_pushf(moved, "~/%s (%s): renamed to %s", rel, kind_of(st->st_mode), to);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	return err_set(e, errno, rel, "cannot rename aside what an earlier jail left in the "
				      "persisted home where this jail mounts");
}

enum want { WANT_DIR, WANT_FILE, WANT_LINK };

static bool fits(int dfd, const char *name, const struct stat *st, enum want w,
		 const char *target)
{
	if (w == WANT_DIR)
		return S_ISDIR(st->st_mode);
	if (w == WANT_FILE)
		return S_ISREG(st->st_mode);
	char buf[4096];
	ssize_t n = S_ISLNK(st->st_mode) ? readlinkat(dfd, name, buf, sizeof buf - 1) : -1;
	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, target);
}

/* One place, component by component from the home's top (dfd), never following a link. */
static int clear_one(int top, const char *rel, enum want w, const char *target,
		     struct strv *moved, struct err *e)
{
	_cleanup_free_ char *copy = xstrdup(rel);
	_cleanup_close_ int dfd = fcntl(top, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0)
		return err_set(e, errno, rel, "cannot look into the persisted home");
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		bool last = !save || !*save;
		size_t at = (size_t)(c - copy) + strlen(c);
		_cleanup_free_ char *so_far = xstrndup(rel, at);
		struct stat st;
		if (fstatat(dfd, c, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? 0 /* bwrap makes the rest, nothing there to follow */
					       : err_set(e, errno, so_far, "cannot look at it in the "
									   "persisted home");
		if (last)
			return fits(dfd, c, &st, w, target) ? 0 : move_aside(dfd, c, so_far, &st, moved, e);
		if (!S_ISDIR(st.st_mode))
			return move_aside(dfd, c, so_far, &st, moved, e);
		/* a directory a jail closed (chmod 000) is opened again for the user; bwrap as root
		 * of its namespace would go through it anyway */
		if ((st.st_mode & 0700) != 0700 &&
		    fchmodat(dfd, c, (st.st_mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW) < 0)
			return err_set(e, errno, so_far, "cannot open the directory in the persisted "
							 "home");
		int next = openat(dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return err_set(e, errno, so_far, "cannot open the directory in the persisted "
							 "home");
		(void)close(dfd);
		dfd = next;
	}
	return 0;
}

int homeprep_clear(const char *dir, const struct homekeep_points *pts, struct strv *moved,
		   struct err *e)
{
	_cleanup_close_ int top = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top < 0)
		return err_set(e, errno, dir, "cannot open the persisted home");
	for (size_t i = 0; i < pts->dirs.n; i++)
		if (clear_one(top, pts->dirs.v[i], WANT_DIR, NULL, moved, e) < 0)
			return -1;
	for (size_t i = 0; i < pts->files.n; i++)
		if (clear_one(top, pts->files.v[i], WANT_FILE, NULL, moved, e) < 0)
			return -1;
	for (size_t i = 0; i + 1 < pts->links.n; i += 2)
		if (clear_one(top, pts->links.v[i], WANT_LINK, pts->links.v[i + 1], moved, e) < 0)
			return -1;
	return 0;
}

/* ---- agentjail home: list, remove ---- */

static int cmp_entry(const void *a, const void *b)
{
	const struct home_entry *x = a, *y = b;
	return strcmp(x->workspace ? x->workspace : x->root, y->workspace ? y->workspace : y->root);
}

/* The size of rfd's home directory, whether its lock is held. */
static int measure(int rfd, struct home_entry *h, struct err *e)
{
	_cleanup_close_ int lfd = openat(rfd, HOMEKEEP_LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	h->in_use = lfd >= 0 && fcntl(lfd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	_cleanup_close_ int hfd = openat(rfd, HOMEKEEP_HOME,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (hfd < 0 || fstat(hfd, &st) < 0)
		return 0; /* not made yet, or closed by a jail (chmod 000 on $HOME) */
	h->bytes = (uint64_t)st.st_blocks * 512;
	_cleanup_free_ char *shown = path_join(h->root, HOMEKEEP_HOME);
	return treewalk(hfd, shown, TREEWALK_SIZE, &h->bytes, e);
}

void homeprep_list_free(struct home_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].root);
		free(v[i].workspace);
	}
	free(v);
}

int homeprep_list(const char *state_dir, struct home_entry **out, size_t *n, struct err *e)
{
	*out = NULL;
	*n = 0;
	_cleanup_free_ char *hdir = path_join(state_dir, "home");
	_cleanup_close_ int dfd = open(hdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : err_set(e, errno, hdir, "cannot open the persisted homes' "
								     "directory");
	int own = dup(dfd);
	_cleanup_closedir_ DIR *d = own < 0 ? NULL : fdopendir(own);
	if (!d) {
		int saved = errno;
		if (own >= 0)
			(void)close(own);
		return err_set(e, saved, hdir, "cannot read the persisted homes' directory");
	}
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		if (strlen(de->d_name) != TOOLCACHE_KEY_HEX ||
		    strspn(de->d_name, "0123456789abcdef") != TOOLCACHE_KEY_HEX)
			continue;
		_cleanup_close_ int rfd = openat(dfd, de->d_name,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (rfd < 0)
			continue;
		struct home_entry h = {.root = path_join(hdir, de->d_name)};
		toolprep_read_workspace(rfd, &h.workspace, &h.used);
		rc = measure(rfd, &h, e);
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		(*out)[(*n)++] = h;
	}
	if (rc == 0 && errno)
		rc = err_set(e, errno, hdir, "cannot read the persisted homes' directory");
	if (rc < 0) {
		homeprep_list_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	if (*n)
		qsort(*out, *n, sizeof **out, cmp_entry);
	return 0;
}

int homeprep_remove(const struct home_entry *h, uint64_t *freed, struct err *e)
{
	*freed = 0;
	_cleanup_free_ char *parent = path_dirname(h->root);
	const char *key = path_basename(h->root);
	_cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT ? 0 : err_set(e, errno, parent, "cannot open the persisted "
								       "homes' directory");
	_cleanup_close_ int rfd = openat(pfd, key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0)
		return errno == ENOENT ? 0 : err_set(e, errno, h->root, "cannot open the persisted "
									"home's directory");
	_cleanup_close_ int lfd = openat(rfd, HOMEKEEP_LOCK_FILE,
					 O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0)
		return err_set(e, errno, h->root, "cannot open the persisted home's lock");
	if (lock_take(lfd) < 0)
		return errno == EAGAIN || errno == EACCES
			       ? busy(lfd, h->root, e)
			       : err_set(e, errno, h->root, "cannot lock the persisted home");
	_cleanup_free_ char *shown = path_join(h->root, HOMEKEEP_HOME);
	struct stat st;
	if (fstatat(rfd, HOMEKEEP_HOME, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		/* a jail may have closed its home (chmod 000 on $HOME) */
		if (fchmodat(rfd, HOMEKEEP_HOME, 0700, AT_SYMLINK_NOFOLLOW) < 0)
			return err_set(e, errno, shown, "cannot make it writable to remove it");
		_cleanup_close_ int hfd = openat(rfd, HOMEKEEP_HOME,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (hfd < 0)
			return err_set(e, errno, shown, "cannot open the persisted home");
		if (treewalk(hfd, shown, TREEWALK_REMOVE, freed, e) < 0)
			return -1;
		*freed += (uint64_t)st.st_blocks * 512; /* as homeprep_list counts it */
		if (unlinkat(rfd, HOMEKEEP_HOME, AT_REMOVEDIR) < 0)
			return err_set(e, errno, shown, "cannot remove");
	}
	if (unlinkat(rfd, CACHE_WORKSPACE_FILE, 0) < 0 && errno != ENOENT)
		return err_set(e, errno, h->root, "cannot remove its workspace record");
	if (unlinkat(rfd, HOMEKEEP_LOCK_FILE, 0) < 0 && errno != ENOENT)
		return err_set(e, errno, h->root, "cannot remove its lock");
	/* a jail that started since the lock's file went has made a new home there: it stays */
	if (unlinkat(pfd, key, AT_REMOVEDIR) < 0 && errno != ENOTEMPTY && errno != EEXIST)
		return err_set(e, errno, h->root, "cannot remove");
	return 0;
}
