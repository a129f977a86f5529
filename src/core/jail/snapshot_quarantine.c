/* snapshot: the quarantine (see snapshot.c): moving a violation aside, by a rename in place or a
 * copy (holes kept, size capped) then removal, into a fresh stamp directory under the quarantine
 * directory. Nothing is deleted unless an identical copy was made and synced first. */
#include "core/jail/snapshot_internal.h"

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
			return snap_walk_err(w, COPY_CAP_ERRNO, "file data exceeds the quarantine copy cap");
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
				return snap_walk_err(w, errno, "cannot write the copy of a file");
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return snap_walk_err(w, errno, "cannot copy file data");
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
			return snap_walk_err(w, errno, "cannot read file to copy it");
		off_t hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			return snap_walk_err(w, errno, "cannot read file to copy it");
		if (hole > size)
			hole = size;
		if (copy_range(w, in, out, data, hole) < 0)
			return -1;
		off = hole > data ? hole : size;
	}
	if (ftruncate(out, size) < 0)
		return snap_walk_err(w, errno, "cannot write the copy of a file");
	return 0;
}

static int copy_file_at(struct walk *w, int sdir, const char *sname, const struct stat *st,
			int ddir, const char *dname, unsigned depth)
{
	_cleanup_close_ int in =
		openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (in < 0)
		return snap_walk_err(w, errno, "cannot open file to copy it aside");
	if (snap_walk_same_entry(w, in, st) < 0)
		return -1;
	_cleanup_close_ int out =
		openat(ddir, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return snap_walk_err(w, errno, "cannot create the copy of a file");
	w->made_top |= depth == 0;
	if (copy_data(w, in, out, st->st_size) < 0)
		return -1;
	if (fchmod(out, copy_mode(st)) < 0)
		return snap_walk_err(w, errno, "cannot set the mode of a copy");
	/* close reports delayed write errors (NFS, quota): the copy is not done before it */
	if (close(steal_fd(&out)) < 0)
		return snap_walk_err(w, errno, "cannot write the copy of a file");
	return 0;
}

static int copy_link_at(struct walk *w, int sdir, const char *sname, const struct stat *st,
			int ddir, const char *dname, unsigned depth)
{
	_cleanup_free_ char *target = snap_read_link_at(sdir, sname, st->st_size);
	if (!target)
		return snap_walk_err(w, errno, "cannot read symlink to copy it");
	if (symlinkat(target, ddir, dname) < 0)
		return snap_walk_err(w, errno, "cannot create the copy of a symlink");
	w->made_top |= depth == 0;
	return 0;
}

static int copy_dir_at(struct walk *w, int sdir, const char *sname, const struct stat *st,
		       int ddir, const char *dname, unsigned depth)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_strv_ struct strv names = STRV_INIT;
	if (snap_walk_enter_dir(w, depth) < 0 || snap_walk_list_dir(w, sdir, sname, st, &d, &names) < 0)
		return -1;
	if (mkdirat(ddir, dname, 0700) < 0)
		return snap_walk_err(w, errno, "cannot create the copy of a directory");
	w->made_top |= depth == 0;
	_cleanup_close_ int out = openat(ddir, dname, DIR_OPEN_FLAGS);
	if (out < 0)
		return snap_walk_err(w, errno, "cannot open the copy of a directory");
	for (size_t i = 0; i < names.n; i++) {
		size_t old = snap_walk_push(w, names.v[i]);
		if (copy_at(w, dirfd(d), names.v[i], out, names.v[i], depth + 1) < 0)
			return -1;
		snap_walk_pop(w, old);
	}
	/* only now: a read-only source directory would have refused its own children */
	if (fchmod(out, copy_mode(st)) < 0)
		return snap_walk_err(w, errno, "cannot set the mode of a copy");
	return 0;
}

static int copy_at(struct walk *w, int sdir, const char *sname, int ddir, const char *dname,
		   unsigned depth)
{
	struct stat st;
	if (fstatat(sdir, sname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return snap_walk_err(w, errno, "cannot inspect path to copy it aside");
	if (snap_walk_count(w) < 0)
		return -1;
	if (S_ISREG(st.st_mode))
		return copy_file_at(w, sdir, sname, &st, ddir, dname, depth);
	if (S_ISLNK(st.st_mode))
		return copy_link_at(w, sdir, sname, &st, ddir, dname, depth);
	if (S_ISDIR(st.st_mode))
		return copy_dir_at(w, sdir, sname, &st, ddir, dname, depth);
	/* FIFOs and sockets copy as empty nodes; a device only where we may create one */
	if (mknodat(ddir, dname, (st.st_mode & S_IFMT) | copy_mode(&st), st.st_rdev) < 0)
		return snap_walk_err(w, errno, "cannot create the copy of a node");
	w->made_top |= depth == 0;
	return 0;
}

/* Remove `name` and everything below it, never following a symlink. */
static int remove_at(struct walk *w, int dfd, const char *name, unsigned depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return snap_walk_err(w, errno, "cannot inspect path to remove it");
	if (S_ISDIR(st.st_mode)) {
		_cleanup_closedir_ DIR *d = NULL;
		_cleanup_strv_ struct strv names = STRV_INIT;
		if (snap_walk_enter_dir(w, depth) < 0 ||
		    snap_walk_list_dir(w, dfd, name, &st, &d, &names) < 0)
			return -1;
		/* a directory made read-only to pin its contents is ours to empty after the copy */
		if ((st.st_mode & 0700) != 0700)
			(void)fchmod(dirfd(d), (st.st_mode & 07777) | 0700);
		for (size_t i = 0; i < names.n; i++) {
			size_t old = snap_walk_push(w, names.v[i]);
			if (remove_at(w, dirfd(d), names.v[i], depth + 1) < 0)
				return -1;
			snap_walk_pop(w, old);
		}
	}
	if (unlinkat(dfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
		return snap_walk_err(w, errno, "cannot remove path after copying it");
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
	snap_walk_init(&w, shown_src, e);
	int r = copy_at(&w, AT_FDCWD, src, ddir, dname, 0);
	if (r == 0 && sync_fs_of(ddir) < 0)
		r = err_set(e, errno, shown_dst, "cannot sync the copy of a protected path");
	if (r < 0 && w.made_top) {
		struct err ignored;
		struct walk undo;
		snap_walk_init(&undo, shown_dst, &ignored);
		(void)remove_at(&undo, ddir, dname, 0);
		sb_free(&undo.path);
	}
	sb_free(&w.path);
	if (r < 0 && w.capped)
		return rename_in_place(src, shown_src, renamed, e);
	if (r < 0)
		return -1;
	snap_walk_init(&w, shown_src, e);
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
void snap_move_all(struct check *ck)
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

