/* suidscan: setuid/setgid files made during a run are reported and stripped (see suidscan.h). */
#include "core/jail/suidscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define SETID_BITS (S_ISUID | S_ISGID)
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

void suidscan_mark(struct timespec *since)
{
	if (clock_gettime(CLOCK_REALTIME_COARSE, since) < 0)
		(void)clock_gettime(CLOCK_REALTIME, since);
	since->tv_sec -= 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void suidscan_roots(const struct bw_plan *p, const char *private_dir, struct strv *out)
{
	struct strv all = STRV_INIT;
	for (size_t i = 0; i < p->nops; i++) {
		const struct bw_op *op = &p->ops[i];
		if (!op->src || op->args.n == 0 || (private_dir && path_is_under(op->src, private_dir)))
			continue;
		if (op->ovl_rel)
			continue; /* --fs review: the overlay's, never the host's (apply strips the bits) */
		if (strcmp(op->args.v[0], "--bind-fd") == 0 || strcmp(op->args.v[0], "--bind") == 0)
			strv_push(&all, op->src);
	}
	if (all.n)
		qsort(all.v, all.n, sizeof *all.v, cmp_str);
	/* sorted, an ancestor comes before everything below it */
	for (size_t i = 0; i < all.n; i++) {
		bool covered = false;
		for (size_t j = 0; j < out->n && !covered; j++)
			covered = path_below(all.v[i], out->v[j]) != NULL;
		if (!covered)
			strv_push(out, all.v[i]);
	}
	strv_free(&all);
}

struct scan {
	const struct timespec *since;
	const struct suidscan_limits *lim;
	struct violations *out;
	struct strbuf path;
	size_t entries;
	size_t added;
	bool stopped; /* a bound was reached: reported once, then the walk unwinds */
};

static void add(struct scan *s, const char *path, char *what)
{
	struct violations *o = s->out;
	o->v = xrealloc(o->v, (o->n + 1) * sizeof *o->v);
	o->v[o->n++] = (struct violation){.path = xstrdup(path), .what = what, .own_words = true};
	s->added++;
}

static bool changed_since(const struct stat *st, const struct timespec *t)
{
	if (st->st_ctim.tv_sec != t->tv_sec)
		return st->st_ctim.tv_sec > t->tv_sec;
	return st->st_ctim.tv_nsec >= t->tv_nsec;
}

static const char *bits_name(mode_t m)
{
	if ((m & SETID_BITS) == SETID_BITS)
		return "setuid and setgid bits";
	return (m & S_ISUID) ? "setuid bit" : "setgid bit";
}

/* Strip the bits from the file `name` in dfd, never through a symlink: the fd opened is the inode
 * that was examined. */
static void strip(struct scan *s, int dfd, const char *name, const struct stat *st)
{
	const char *which = bits_name(st->st_mode);
	_cleanup_close_ int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat now;
	int err = 0;
	if (fd < 0 || fstat(fd, &now) < 0)
		err = errno;
	else if (!S_ISREG(now.st_mode) || now.st_ino != st->st_ino || now.st_dev != st->st_dev)
		err = ESTALE;
	else {
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		if (chmod(proc, now.st_mode & 07777 & ~(mode_t)SETID_BITS) < 0)
			err = errno;
	}
	if (err)
		add(s, sb_str(&s->path),
		    xasprintf("got the %s (could not remove it: %s)", which,
			      strerror(err)));
	else
		add(s, sb_str(&s->path), xasprintf("got the %s (now removed)", which));
}

static void stop(struct scan *s, char *what)
{
	if (!s->stopped)
		add(s, sb_str(&s->path), what);
	else
		free(what);
	s->stopped = true;
}

static void walk_dir(struct scan *s, int dfd, unsigned depth);

static void visit(struct scan *s, int dfd, const char *name, unsigned char type, unsigned depth)
{
	if (++s->entries > s->lim->max_entries) {
		stop(s, xasprintf("not fully scanned for setuid files: more than %zu entries",
				  s->lim->max_entries));
		return;
	}
	if (type != DT_DIR && type != DT_REG && type != DT_UNKNOWN)
		return; /* symlinks, devices, sockets, fifos: no setuid meaning */
	struct stat st = {.st_mode = S_IFDIR};
	/* a directory needs no stat: opening it with O_NOFOLLOW|O_DIRECTORY checks its kind */
	if (type != DT_DIR && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			add(s, sb_str(&s->path),
			    xasprintf("could not be checked for a setuid bit (%s)", strerror(errno)));
		return;
	}
	if (S_ISREG(st.st_mode) && (st.st_mode & SETID_BITS) && changed_since(&st, s->since)) {
		strip(s, dfd, name, &st);
		return;
	}
	if (!S_ISDIR(st.st_mode))
		return;
	if (depth >= s->lim->max_depth) {
		stop(s, xasprintf("not fully scanned for setuid files: deeper than %u levels",
				  s->lim->max_depth));
		return;
	}
	_cleanup_close_ int fd = openat(dfd, name, DIR_FLAGS);
	if (fd < 0) {
		if (errno != ENOENT)
			add(s, sb_str(&s->path),
			    xasprintf("directory could not be scanned for setuid files (%s)",
				      strerror(errno)));
		return;
	}
	walk_dir(s, steal_fd(&fd), depth + 1);
}

/* Takes ownership of dfd. */
static void walk_dir(struct scan *s, int dfd, unsigned depth)
{
	_cleanup_closedir_ DIR *d = fdopendir(dfd);
	if (!d) {
		int saved = errno;
		(void)close(dfd);
		add(s, sb_str(&s->path),
		    xasprintf("directory could not be scanned for setuid files (%s)", strerror(saved)));
		return;
	}
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno)
				add(s, sb_str(&s->path),
				    xasprintf("directory could not be fully scanned for setuid files "
					      "(%s)",
					      strerror(errno)));
			return;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		size_t old = s->path.len;
		sb_addc(&s->path, '/');
		sb_add(&s->path, de->d_name);
		visit(s, dirfd(d), de->d_name, de->d_type, depth);
		s->path.len = old;
		s->path.s[old] = '\0';
		if (s->stopped)
			return;
	}
}

size_t suidscan_check(const struct strv *roots, const struct timespec *since,
		      const struct suidscan_limits *lim, struct violations *out)
{
	struct scan s = {.since = since, .lim = lim, .out = out, .path = STRBUF_INIT};
	for (size_t i = 0; i < roots->n && !s.stopped; i++) {
		/* a root is the user's own path, given on the host: its parents are trusted, but the
		 * last component may have been replaced from inside (it is in the writable parent
		 * only for nested roots, which are walked as part of their ancestor) */
		s.path.len = 0;
		sb_add(&s.path, roots->v[i]);
		int fd = open(roots->v[i], DIR_FLAGS);
		if (fd < 0 && errno == ENOTDIR) {
			/* a writable file: check it by itself */
			_cleanup_free_ char *parent = path_dirname(roots->v[i]);
			_cleanup_close_ int pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (pfd >= 0) {
				visit(&s, pfd, path_basename(roots->v[i]), DT_UNKNOWN, 0);
				continue;
			}
		}
		if (fd < 0) {
			if (errno != ENOENT)
				add(&s, roots->v[i],
				    xasprintf("could not be scanned for setuid files (%s)",
					      strerror(errno)));
			continue;
		}
		walk_dir(&s, fd, 0);
	}
	sb_free(&s.path);
	return s.added;
}

size_t suidscan_after_run(const struct bw_plan *p, const char *private_dir,
			  const struct timespec *since, struct violations *out)
{
	static const struct suidscan_limits lim = {SUIDSCAN_MAX_ENTRIES, SUIDSCAN_MAX_DEPTH};
	struct strv roots = STRV_INIT;
	suidscan_roots(p, private_dir, &roots);
	size_t n = suidscan_check(&roots, since, &lim, out);
	strv_free(&roots);
	return n;
}
