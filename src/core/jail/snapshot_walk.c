/* snapshot: the bounded walk below one protected path, shared by hashing, copying and removal
 * (see snapshot.c). */
#include "core/jail/snapshot_internal.h"

/* ------------------------------------------------------------------------------------------------
 * Bounded walks below one protected path (hash, copy, removal).
 */

void snap_walk_init(struct walk *w, const char *top, struct err *e)
{
	*w = (struct walk){.path = STRBUF_INIT, .e = e};
	sb_add(&w->path, top);
}

size_t snap_walk_push(struct walk *w, const char *name)
{
	size_t old = w->path.len;
	sb_addc(&w->path, '/');
	sb_add(&w->path, name);
	return old;
}

void snap_walk_pop(struct walk *w, size_t old)
{
	w->path.len = old;
	w->path.s[old] = '\0';
}

/* Fail on the entry being visited. */
int snap_walk_err(struct walk *w, int errnum, const char *what)
{
	return err_set(w->e, errnum, sb_str(&w->path), "%s", what);
}

int snap_walk_enter_dir(struct walk *w, unsigned depth)
{
	if (depth <= WALK_MAX_DEPTH)
		return 0;
	err_set(w->e, 0, sb_str(&w->path), "protected directory nests deeper than %u levels",
		WALK_MAX_DEPTH);
	err_hint(w->e, "a protected path should be a small configuration file or directory");
	return -1;
}

int snap_walk_count(struct walk *w)
{
	if (++w->entries <= WALK_MAX_ENTRIES)
		return 0;
	err_set(w->e, 0, sb_str(&w->path), "protected directory holds more than %zu entries",
		WALK_MAX_ENTRIES);
	err_hint(w->e, "a protected path should be a small configuration file or directory");
	return -1;
}

/* The entry opened is the one fstatat described: it was not swapped in between. */
int snap_walk_same_entry(struct walk *w, int fd, const struct stat *st)
{
	struct stat now;
	if (fstat(fd, &now) < 0)
		return snap_walk_err(w, errno, "cannot inspect protected path");
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	    (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT))
		return snap_walk_err(w, 0, "protected path changed while being read");
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Open the directory `name` (never through a symlink) and read its names, sorted bytewise so the
 * digest does not depend on the order the filesystem returns them in. */
int snap_walk_list_dir(struct walk *w, int dfd, const char *name, const struct stat *st,
			 DIR **out, struct strv *names)
{
	int fd = openat(dfd, name, DIR_OPEN_FLAGS);
	if (fd < 0)
		return snap_walk_err(w, errno, "cannot open protected directory");
	if (snap_walk_same_entry(w, fd, st) < 0) {
		close(fd);
		return -1;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		int saved = errno;
		close(fd);
		return snap_walk_err(w, saved, "cannot list protected directory");
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
		if (snap_walk_count(w) < 0)
			return -1;
		strv_push(names, de->d_name);
	}
	if (names->n)
		qsort(names->v, names->n, sizeof *names->v, cmp_names);
	return 0;
}

/* readlinkat into a new string; the size from lstat is only a hint (it can be 0 on /proc). */
char *snap_read_link_at(int dfd, const char *name, off_t hint)
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

