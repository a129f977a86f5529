/* rvckpt: checkpoints of a change set, and the return to one (changeset.h). A checkpoint is
 * a copy of the upper layer and the baselines in checkpoints/NAME/. Reflinks (FICLONE) where
 * the file system has them cost nothing and share nothing the overlay could write; hard links
 * cost as little, but overlayfs writes a copied-up file in place, so a linked file must not be
 * in a mounted upper layer: they are made only while the change set is not in use, and the
 * next run copies every file a checkpoint shares first (rv_unshare); a running change set is
 * copied. Whiteouts are made again (a character device 0/0, which the kernel lets anyone
 * make), an opaque directory keeps its attribute. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "core/review/review_internal.h"
#include "util/clock.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

enum how { HOW_UNDECIDED, HOW_REFLINK, HOW_LINK, HOW_COPY };

struct cp {
	enum how how;
	bool running;
	struct rv_ckpt_cost *cost;
};

static int copy_file(struct cp *cp, int sfd, int dfd, const char *name, const struct stat *st)
{
	if (cp->how == HOW_LINK)
		return linkat(sfd, name, dfd, name, 0);
	int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc = out < 0 ? -1 : 0;
	if (rc == 0 && (cp->how == HOW_UNDECIDED || cp->how == HOW_REFLINK)) {
		if (ioctl(out, FICLONE, in) == 0) {
			cp->how = HOW_REFLINK;
		} else if (cp->how == HOW_UNDECIDED) {
			/* no reflinks here: links while nothing can write the change set, else
			 * copies */
			cp->how = cp->running ? HOW_COPY : HOW_LINK;
			if (cp->how == HOW_LINK) {
				(void)close(out);
				(void)close(in);
				(void)unlinkat(dfd, name, 0);
				return linkat(sfd, name, dfd, name, 0);
			}
		} else {
			rc = -1;
		}
	}
	if (rc == 0 && cp->how == HOW_COPY) {
		rc = rv_copy_fd(in, out);
		if (rc == 0)
			cp->cost->copied += (unsigned long long)st->st_size;
	}
	if (rc == 0)
		rc = fchmod(out, st->st_mode & 07777);
	int saved = errno;
	if (out >= 0)
		(void)close(out);
	(void)close(in);
	errno = saved;
	return rc;
}

static int set_opaque(int dfd, const char *name)
{
	char path[320];
	snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dfd, name);
	return lsetxattr(path, "user.overlay.opaque", "y", 1, 0);
}

static int copy_tree(struct cp *cp, int sfd, int dfd, int depth)
{
	struct strv names = STRV_INIT;
	if (depth > RV_MAX_DEPTH || !rv_names(sfd, &names))
		return -1;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		const char *n = names.v[i];
		struct stat st;
		if (fstatat(sfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		cp->cost->files++;
		if (S_ISREG(st.st_mode)) {
			cp->cost->bytes += (unsigned long long)st.st_size;
			rc = copy_file(cp, sfd, dfd, n, &st);
		} else if (S_ISLNK(st.st_mode)) {
			char t[4096];
			ssize_t l = readlinkat(sfd, n, t, sizeof t - 1);
			t[l > 0 ? l : 0] = '\0';
			rc = l > 0 ? symlinkat(t, dfd, n) : -1;
		} else if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) {
			rc = mknodat(dfd, n, S_IFCHR | 0, makedev(0, 0));
		} else if (S_ISDIR(st.st_mode)) {
			struct rv_xattrs xa;
			rv_xattrs_of(sfd, n, &xa);
			rc = mkdirat(dfd, n, 0700);
			if (rc == 0 && xa.opaque)
				rc = set_opaque(dfd, n);
			int cs = rc == 0 ? rv_opendir_at(sfd, n) : -1;
			int cd = cs >= 0 ? rv_opendir_at(dfd, n) : -1;
			rc = cd < 0 ? -1 : copy_tree(cp, cs, cd, depth + 1);
			if (rc == 0)
				rc = fchmod(cd, st.st_mode & 07777);
			if (cs >= 0)
				(void)close(cs);
			if (cd >= 0)
				(void)close(cd);
		}
		/* a FIFO, a socket or a device node: refused by apply, not kept */
	}
	strv_free(&names);
	return rc;
}

/* dir/from/ (a tree) into dir/to/, made fresh; and the baselines beside. */
static int copy_set(struct cp *cp, const char *from_upper, const char *from_base,
		    const char *to_upper, const char *to_base, struct err *e)
{
	long long t0 = clock_mono_ms();
	if (mkdir(to_upper, 0700) < 0)
		return err_set(e, errno, to_upper, "cannot make the copy of the change set");
	int sfd = rv_opendir_path(from_upper), dfd = rv_opendir_path(to_upper);
	struct stat top;
	int rc = sfd < 0 || dfd < 0 || fstat(sfd, &top) < 0 ? -1 : copy_tree(cp, sfd, dfd, 0);
	if (rc == 0)
		rc = fchmod(dfd, top.st_mode & 0777);
	int saved = errno;
	if (sfd >= 0)
		(void)close(sfd);
	if (dfd >= 0)
		(void)close(dfd);
	if (rc < 0)
		return err_set(e, saved, to_upper, "cannot copy the change set");
	int in = fs_open_nofollow(from_base, O_RDONLY);
	if (in >= 0) {
		int out = open(to_base, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		rc = out < 0 ? -1 : rv_copy_fd(in, out);
		saved = errno;
		if (out >= 0)
			(void)close(out);
		(void)close(in);
		if (rc < 0)
			return err_set(e, saved, to_base, "cannot copy the change set's baselines");
	}
	cp->cost->ms = clock_mono_ms() - t0;
	cp->cost->how = cp->how == HOW_REFLINK ? "reflinks"
			: cp->how == HOW_LINK	 ? "hard links"
			: cp->how == HOW_COPY	 ? "copies"
						 : "nothing to copy";
	return 0;
}

/* Remove dir/name (ours), for a replaced checkpoint or a replaced upper layer. */
static void remove_in(const char *dir, const char *name)
{
	int fd = rv_opendir_path(dir);
	if (fd >= 0) {
		(void)rv_remove_at(fd, name);
		(void)close(fd);
	}
}

int rv_checkpoint(const struct rv_paths *p, const char *name, bool running,
		  struct rv_ckpt_cost *cost, struct err *e)
{
	memset(cost, 0, sizeof *cost);
	if (mkdir(p->ckpts, 0700) < 0 && errno != EEXIST)
		return err_set(e, errno, p->ckpts, "checkpoint: cannot make the checkpoints' "
						   "directory");
	_cleanup_free_ char *tmpname = xasprintf(".new-%s-%d", name, (int)getpid());
	_cleanup_free_ char *tmp = path_join(p->ckpts, tmpname);
	remove_in(p->ckpts, tmpname);
	if (mkdir(tmp, 0700) < 0)
		return err_set(e, errno, tmp, "checkpoint: cannot make the checkpoint");
	_cleanup_free_ char *up = path_join(tmp, REVIEW_UPPER);
	_cleanup_free_ char *base = path_join(tmp, REVIEW_BASELINE);
	struct cp cp = {.running = running, .cost = cost};
	if (copy_set(&cp, p->upper, p->baseline, up, base, e) < 0) {
		remove_in(p->ckpts, tmpname);
		return -1;
	}
	_cleanup_free_ char *dst = path_join(p->ckpts, name);
	_cleanup_free_ char *oldname = xasprintf(".old-%s-%d", name, (int)getpid());
	_cleanup_free_ char *old = path_join(p->ckpts, oldname);
	bool replaced = rename(dst, old) == 0;
	if (rename(tmp, dst) < 0) {
		int saved = errno;
		if (replaced)
			(void)rename(old, dst);
		remove_in(p->ckpts, tmpname);
		return err_set(e, saved, dst, "checkpoint: cannot put the checkpoint in place");
	}
	if (replaced)
		remove_in(p->ckpts, oldname);
	return 0;
}

int rv_rollback(const struct rv_paths *p, const char *name, struct rv_ckpt_cost *cost,
		struct err *e)
{
	memset(cost, 0, sizeof *cost);
	_cleanup_free_ char *src = path_join(p->ckpts, name);
	_cleanup_free_ char *src_up = path_join(src, REVIEW_UPPER);
	_cleanup_free_ char *src_base = path_join(src, REVIEW_BASELINE);
	struct stat st;
	if (lstat(src_up, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(e, ENOENT, src, "rollback: the session has no checkpoint %s", name);
	_cleanup_free_ char *newname = xasprintf(".upper-new-%d", (int)getpid());
	_cleanup_free_ char *oldname = xasprintf(".upper-old-%d", (int)getpid());
	_cleanup_free_ char *nup = path_join(p->dir, newname);
	_cleanup_free_ char *oup = path_join(p->dir, oldname);
	_cleanup_free_ char *nbase = xasprintf("%s.rollback", p->baseline);
	remove_in(p->dir, newname);
	struct cp cp = {.running = false, .cost = cost};
	if (copy_set(&cp, src_up, src_base, nup, nbase, e) < 0) {
		remove_in(p->dir, newname);
		return -1;
	}
	if (rename(p->upper, oup) < 0 || rename(nup, p->upper) < 0) {
		int saved = errno;
		(void)rename(oup, p->upper);
		remove_in(p->dir, newname);
		return err_set(e, saved, p->upper, "rollback: cannot put the checkpoint in place");
	}
	remove_in(p->dir, oldname);
	/* overlayfs's work directory holds nothing of the change set */
	remove_in(p->dir, REVIEW_WORK);
	(void)mkdir(p->work, 0700);
	if (lstat(nbase, &st) == 0) {
		if (rename(nbase, p->baseline) < 0)
			return err_set(e, errno, p->baseline, "rollback: cannot restore the "
							      "baselines");
	} else {
		(void)unlink(p->baseline);
	}
	return 0;
}

void rv_checkpoints(const struct rv_paths *p, struct strv *out)
{
	int fd = rv_opendir_path(p->ckpts);
	if (fd < 0)
		return;
	struct strv all = STRV_INIT;
	(void)rv_names(fd, &all);
	(void)close(fd);
	for (size_t i = 0; i < all.n; i++)
		if (all.v[i][0] != '.')
			strv_push(out, all.v[i]);
	strv_free(&all);
}

/* ---- before a run: nothing shared with a checkpoint stays in the upper layer ---- */

struct inode {
	dev_t dev;
	ino_t ino;
};

struct inodes {
	struct inode *v;
	size_t n, cap;
};

static bool inode_visit(void *arg, int dirfd, const char *name, const char *rel,
			const struct stat *st, bool *stop)
{
	struct inodes *s = arg;
	if (S_ISREG(st->st_mode) && st->st_nlink > 1) {
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 256;
			s->v = xrealloc(s->v, s->cap * sizeof *s->v);
		}
		s->v[s->n++] = (struct inode){st->st_dev, st->st_ino};
	}
	return true;
}

static int cmp_inode(const void *a, const void *b)
{
	const struct inode *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int unshare_walk(int dirfd, int depth, const struct inodes *s)
{
	struct strv names = STRV_INIT;
	if (depth > RV_MAX_DEPTH || !rv_names(dirfd, &names))
		return 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < names.n; i++) {
		const char *n = names.v[i];
		struct stat st;
		if (fstatat(dirfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int fd = rv_opendir_at(dirfd, n);
			if (fd >= 0) {
				rc = unshare_walk(fd, depth + 1, s);
				(void)close(fd);
			}
			continue;
		}
		struct inode key = {st.st_dev, st.st_ino};
		if (!S_ISREG(st.st_mode) || st.st_nlink < 2 ||
		    !bsearch(&key, s->v, s->n, sizeof *s->v, cmp_inode))
			continue;
		/* a private copy beside it, renamed over it */
		static const char tmp[] = REVIEW_TMP_PREFIX "unshare";
		(void)unlinkat(dirfd, tmp, 0);
		int in = openat(dirfd, n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		int out = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				 0600);
		rc = in < 0 || out < 0 ? -1 : rv_copy_fd(in, out);
		if (rc == 0)
			rc = fchmod(out, st.st_mode & 07777);
		if (in >= 0)
			(void)close(in);
		if (out >= 0)
			(void)close(out);
		if (rc == 0)
			rc = renameat(dirfd, tmp, dirfd, n);
	}
	strv_free(&names);
	return rc;
}

int rv_unshare(const struct rv_paths *p, struct err *e)
{
	int ck = rv_opendir_path(p->ckpts);
	if (ck < 0)
		return 0;
	struct inodes s = {0};
	rv_walk(ck, "", inode_visit, &s);
	(void)close(ck);
	int rc = 0;
	if (s.n) {
		qsort(s.v, s.n, sizeof *s.v, cmp_inode);
		int up = rv_opendir_path(p->upper);
		rc = up < 0 ? 0 : unshare_walk(up, 0, &s);
		if (up >= 0)
			(void)close(up);
		if (rc < 0)
			err_set(e, errno, p->upper, "cannot copy the files the change set shares with "
						    "its checkpoints");
	}
	free(s.v);
	return rc;
}
