/* treewalk: see treewalk.h. */
#include "core/host/treewalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/xalloc.h"

/* One directory on the way down: its name in its parent, its identity, what is left of it. */
struct frame {
	char *name; /* NULL for the top */
	dev_t dev;
	ino_t ino;
	struct strv names;
	size_t next;
	enum treewalk_do what;
};

struct walk {
	struct frame *v;
	size_t n, cap;
	const char *shown;
	int fd; /* the directory of the top frame */
};

/* The path of the current directory (with `name` below it when not NULL), for errors. */
static char *where(const struct walk *w, const char *name)
{
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, w->shown);
	for (size_t i = 1; i < w->n; i++)
		sb_addf(&b, "/%s", w->v[i].name);
	if (name)
		sb_addf(&b, "/%s", name);
	return sb_steal(&b);
}

static int fail(struct err *e, int err, const struct walk *w, const char *name, const char *what)
{
	_cleanup_free_ char *at = where(w, name);
	err_set(e, err, at, "%s", what);
	err_hint(e, "agentjail's state directory holds it: check its permissions, or remove "
		    "it by hand");
	return -1;
}

/* The entries of the directory fd (but . and ..), read through a description of its own. */
static int list(int fd, struct strv *out)
{
	int own = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = own < 0 ? NULL : fdopendir(own);
	if (!d) {
		int saved = errno;
		if (own >= 0)
			(void)close(own);
		errno = saved;
		return -1;
	}
	struct dirent *de;
	while ((errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			strv_push(out, de->d_name);
	int saved = errno;
	(void)closedir(d);
	errno = saved;
	return saved ? -1 : 0;
}

static int push(struct walk *w, int fd, const char *name, enum treewalk_do what)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->v = xrealloc(w->v, w->cap * sizeof *w->v);
	}
	struct frame *f = &w->v[w->n];
	*f = (struct frame){.name = name ? xstrdup(name) : NULL, .dev = st.st_dev,
			    .ino = st.st_ino, .names = STRV_INIT, .what = what};
	w->n++;
	return list(fd, &f->names);
}

static void frame_free(struct frame *f)
{
	free(f->name);
	strv_free(&f->names);
}

/* Into the directory `name` of the current one (seen as st): made searchable when the walk
 * removes, opened without following anything and checked to be what lstat saw. */
static int down(struct walk *w, const char *name, const struct stat *st, enum treewalk_do what,
		struct err *e)
{
	bool rm = what != TREEWALK_SIZE;
	if (rm && (st->st_mode & 0700) != 0700 &&
	    fchmodat(w->fd, name, (st->st_mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW) < 0)
		return fail(e, errno, w, name, "cannot make the directory searchable to remove it");
	int fd = openat(w->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && !rm && errno == EACCES)
		return 0; /* a directory a jail closed (chmod 000): its size is not counted */
	if (fd < 0)
		return fail(e, errno, w, name, "cannot open the directory");
	struct stat now;
	if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		(void)close(fd);
		return fail(e, ESTALE, w, name, "the directory changed while it was walked");
	}
	/* a frame's mode is how its own entries are treated: below a kept directory of
	 * TREEWALK_EMPTY_DIRS everything goes */
	if (push(w, fd, name, what == TREEWALK_EMPTY_DIRS ? TREEWALK_REMOVE : what) < 0) {
		int saved = errno;
		(void)close(fd);
		return fail(e, saved, w, NULL, "cannot read the directory");
	}
	(void)close(w->fd);
	w->fd = fd;
	return 0;
}

/* Back to the parent of the current directory, which must be the frame below it; the one left
 * is removed when the parent's mode says so. */
static int up(struct walk *w, struct err *e)
{
	struct frame done = w->v[--w->n];
	const struct frame *parent = &w->v[w->n - 1];
	int fd = openat(w->fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	int rc = 0;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != parent->dev || st.st_ino != parent->ino) {
		rc = fail(e, fd < 0 ? errno : ESTALE, w, done.name,
			  "the tree changed while it was walked (its parent is not where it was)");
		if (fd >= 0)
			(void)close(fd);
		frame_free(&done);
		return rc;
	}
	(void)close(w->fd);
	w->fd = fd;
	if (parent->what == TREEWALK_REMOVE && unlinkat(fd, done.name, AT_REMOVEDIR) < 0)
		rc = fail(e, errno, w, done.name, "cannot remove the directory");
	frame_free(&done);
	return rc;
}

/* The next entry of the current directory: counted, removed, or gone into. */
static int step(struct walk *w, uint64_t *bytes, struct err *e)
{
	struct frame *f = &w->v[w->n - 1];
	const char *name = f->names.v[f->next++];
	enum treewalk_do what = f->what;
	struct stat st;
	if (fstatat(w->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : fail(e, errno, w, name, "cannot look at it");
	*bytes += (uint64_t)st.st_blocks * 512;
	if (S_ISDIR(st.st_mode))
		return down(w, name, &st, what, e);
	if (what != TREEWALK_SIZE && unlinkat(w->fd, name, 0) < 0 && errno != ENOENT)
		return fail(e, errno, w, name, "cannot remove it");
	return 0;
}

int treewalk(int dfd, const char *shown, enum treewalk_do what, uint64_t *bytes, struct err *e)
{
	struct walk w = {.shown = shown, .fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
	if (w.fd < 0)
		return fail(e, errno, &w, NULL, "cannot open the directory");
	int rc = 0;
	if (push(&w, w.fd, NULL, what) < 0)
		rc = fail(e, errno, &w, NULL, "cannot read the directory");
	while (rc == 0 && w.n > 0) {
		struct frame *f = &w.v[w.n - 1];
		if (f->next < f->names.n)
			rc = step(&w, bytes, e);
		else if (w.n > 1)
			rc = up(&w, e);
		else
			break;
	}
	for (size_t i = 0; i < w.n; i++)
		frame_free(&w.v[i]);
	free(w.v);
	(void)close(w.fd);
	return rc;
}
