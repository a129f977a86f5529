/* sweep: see sweep.h. The walks are nftw's (no symlink followed, one file system, bounded
 * depth); the move aside is snapshot_check's, given entries recorded as absent. */
#include "core/jail/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "util/hex.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/sha256.h"
#include "util/xalloc.h"

bool sweep_ent_changed(const struct sweep_ent *before, const struct stat *now)
{
	if ((now->st_mode & S_IFMT) != before->type || now->st_dev != before->dev ||
	    now->st_ino != before->ino)
		return true;
	if (S_ISDIR(now->st_mode))
		return (now->st_mode & 07777) != before->perm;
	return now->st_ctim.tv_sec != before->ctime.tv_sec ||
	       now->st_ctim.tv_nsec != before->ctime.tv_nsec;
}

static int by_rel(const void *a, const void *b)
{
	return strcmp(((const struct sweep_ent *)a)->rel, ((const struct sweep_ent *)b)->rel);
}

static const char *rel_of(const char *root, const char *fpath)
{
	size_t n = strlen(root);
	return fpath[n] == '/' ? fpath + n + 1 : fpath + n;
}

/* nftw keeps no argument for its callback: one walk at a time, its state here */
static struct {
	struct sweep_dir *d;
	const char *root;
	size_t cap;
	bool over;
	struct strv *found; /* check: new or changed paths */
} W;

static int take_one(const char *fpath, const struct stat *st, int flag, struct FTW *f)
{
	if (W.d->n >= SWEEP_MAX_ENTRIES) {
		W.over = true;
		return FTW_STOP;
	}
	if (W.d->n == W.cap) {
		W.cap = W.cap ? 2 * W.cap : 64;
		W.d->e = xrealloc(W.d->e, W.cap * sizeof *W.d->e);
	}
	W.d->e[W.d->n++] = (struct sweep_ent){.rel = xstrdup(rel_of(W.root, fpath)),
					      .type = st->st_mode & S_IFMT,
					      .perm = st->st_mode & 07777,
					      .unread = flag == FTW_DNR,
					      .dev = st->st_dev,
					      .ino = st->st_ino,
					      .ctime = st->st_ctim};
	return flag == FTW_D && f->level >= SWEEP_MAX_DEPTH ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
}

void sweep_take(const struct strv *dirs, struct sweep *out)
{
	out->n = 0; /* sweep_lock's locks stay */
	out->d = xcalloc(dirs->n ? dirs->n : 1, sizeof *out->d);
	for (size_t i = 0; i < dirs->n; i++) {
		struct sweep_dir *d = &out->d[out->n++];
		d->path = xstrdup(dirs->v[i]);
		struct stat st;
		if (lstat(d->path, &st) < 0) {
			if (errno != ENOENT)
				d->unswept = xasprintf("cannot read it: %s", strerror(errno));
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			d->unswept = xstrdup("not a directory");
			continue;
		}
		d->exists = true;
		W.d = d;
		W.root = d->path;
		W.cap = 0;
		W.over = false;
		if (nftw(d->path, take_one, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL) != 0 &&
		    !W.over)
			d->unswept = xasprintf("cannot walk it: %s", strerror(errno));
		else if (W.over)
			d->unswept = xasprintf("more than %d entries", SWEEP_MAX_ENTRIES);
		qsort(d->e, d->n, sizeof *d->e, by_rel);
	}
}

static int check_one(const char *fpath, const struct stat *st, int flag, struct FTW *f)
{
	if (f->level == 0)
		return FTW_CONTINUE;
	struct sweep_ent key = {.rel = (char *)rel_of(W.root, fpath)};
	const struct sweep_ent *b = bsearch(&key, W.d->e, W.d->n, sizeof *W.d->e, by_rel);
	/* a directory that cannot be read now (and could then) hides what is inside: it goes */
	if (!b || sweep_ent_changed(b, st) || (flag == FTW_DNR && !b->unread)) {
		if (W.found->n >= SWEEP_MAX_MOVES) {
			W.over = true;
			return FTW_STOP;
		}
		strv_push(W.found, fpath);
		return flag == FTW_D ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
	}
	return flag == FTW_D && f->level >= SWEEP_MAX_DEPTH ? FTW_SKIP_SUBTREE : FTW_CONTINUE;
}

/* The paths of one directory to move aside: the directory whole when it was made or replaced
 * during the run or when too much in it changed, else each new or changed entry. */
static int find_changed(struct sweep_dir *d, struct strv *found, struct err *e)
{
	struct stat st;
	if (lstat(d->path, &st) < 0)
		return 0; /* removed: nothing of the jail's stays there */
	if (!d->exists || !d->n || sweep_ent_changed(&d->e[0], &st) || !S_ISDIR(st.st_mode)) {
		strv_push(found, d->path);
		return 0;
	}
	struct strv here = STRV_INIT;
	W.d = d;
	W.root = d->path;
	W.over = false;
	W.found = &here;
	int rc = nftw(d->path, check_one, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	if (rc != 0 && !W.over) {
		strv_free(&here);
		return err_set(e, errno, d->path, "cannot walk the agent's directory after the run");
	}
	if (W.over)
		strv_push(found, d->path);
	else
		for (size_t i = 0; i < here.n; i++)
			strv_push(found, here.v[i]);
	strv_free(&here);
	return 0;
}

int sweep_check(const struct sweep *s, const char *quarantine_dir, struct violations *out,
		struct err *e)
{
	struct strv found = STRV_INIT;
	struct strv root_of = STRV_INIT; /* the directory each found path lies in */
	for (size_t i = 0; i < s->n; i++) {
		if (s->d[i].unswept)
			continue;
		size_t first = found.n;
		if (find_changed(&s->d[i], &found, e) < 0) {
			strv_free(&found);
			strv_free(&root_of);
			return -1;
		}
		for (size_t k = first; k < found.n; k++)
			strv_push(&root_of, s->d[i].path);
	}
	struct snapshot absent = {0};
	absent.e = xcalloc(found.n ? found.n : 1, sizeof *absent.e);
	for (size_t i = 0; i < found.n; i++)
		absent.e[absent.n++] = (struct snap_entry){.path = xstrdup(found.v[i])};
	struct violations moved = {0};
	int rc = absent.n ? snapshot_check(&absent, quarantine_dir, &moved, e) : 0;
	for (size_t i = 0; i < moved.n; i++) {
		struct violation *v = &moved.v[i];
		const char *root = NULL;
		for (size_t k = 0; k < found.n && !root; k++)
			if (!strcmp(found.v[k], v->path))
				root = root_of.v[k];
		char *what =
			root && strcmp(root, v->path) != 0
				? xasprintf("written during the run in the agent's own directory %s (the "
					    "workspace's own under bwrap; here the host's, which an "
					    "unjailed run of the agent uses)",
					    root)
				: xstrdup("the agent's own directory, made, replaced or filled during "
					  "the run (the workspace's own under bwrap; here the host's, "
					  "which an unjailed run of the agent uses)");
		free(v->what);
		v->what = what;
		v->own_words = true;
		v->swept = true;
	}
	violations_append(out, &moved);
	snapshot_free(&absent);
	strv_free(&found);
	strv_free(&root_of);
	return rc;
}

static char *lock_path(const char *locks, const char *dir)
{
	struct sha256 c;
	uint8_t h[32];
	sha256_init(&c);
	sha256_update(&c, dir, strlen(dir));
	sha256_final(&c, h);
	char hex[17];
	hex_encode(h, 8, hex);
	return xasprintf("%s/sweep-%s", locks, hex);
}

int sweep_lock(const struct strv *dirs, const char *state_dir, struct sweep *s, char **busy,
	       long *pid, struct err *e)
{
	*busy = NULL;
	*pid = 0;
	if (!dirs->n)
		return 0;
	char *locks = path_join(state_dir, "locks");
	char *failed = NULL;
	if (fs_mkdirs(locks, 0700, &failed) < 0) {
		err_set(e, errno, failed ? failed : locks, "cannot make the directory of run locks");
		free(failed);
		free(locks);
		return -1;
	}
	s->lock_fds = xcalloc(dirs->n, sizeof *s->lock_fds);
	s->n_locks = 0;
	int rc = 0;
	for (size_t i = 0; i < dirs->n && rc == 0; i++) {
		char *lp = lock_path(locks, dirs->v[i]);
		/* in our own 0700 directory: only its last component could be planted */
		int fd = open(lp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			rc = err_set(e, errno, lp, "cannot open the lock of the swept directory %s",
				     dirs->v[i]);
		} else if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno == EWOULDBLOCK) {
				char buf[32] = "";
				ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
				*pid = n > 0 ? strtol(buf, NULL, 10) : 0;
				*busy = xstrdup(dirs->v[i]);
				rc = 1;
			} else {
				rc = err_set(e, errno, lp, "cannot lock it");
			}
			(void)close(fd);
		} else {
			char buf[32];
			int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
			if (ftruncate(fd, 0) < 0 || fs_write_all(fd, buf, (size_t)n) < 0)
				rc = err_set(e, errno, lp, "cannot write our pid into the lock");
			s->lock_fds[s->n_locks++] = fd;
		}
		free(lp);
	}
	free(locks);
	if (rc != 0) { /* all or nothing */
		for (size_t i = 0; i < s->n_locks; i++)
			(void)close(s->lock_fds[i]);
		s->n_locks = 0;
	}
	return rc;
}

void sweep_free(struct sweep *s)
{
	for (size_t i = 0; i < s->n_locks; i++)
		(void)close(s->lock_fds[i]);
	free(s->lock_fds);
	for (size_t i = 0; i < s->n; i++) {
		for (size_t k = 0; k < s->d[i].n; k++)
			free(s->d[i].e[k].rel);
		free(s->d[i].e);
		free(s->d[i].path);
		free(s->d[i].unswept);
	}
	free(s->d);
	*s = (struct sweep){0};
}
