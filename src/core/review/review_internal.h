/* review_internal: what changeset's files share (rvdir.c, rvscan.c, rvapply.c, rvckpt.c). */
#pragma once
#include <stdbool.h>
#include <sys/stat.h>

#include "core/plan/review.h"
#include "core/review/changeset.h"

/* A directory below dirfd, opened without following a symlink (O_DIRECTORY|O_NOFOLLOW). */
int rv_opendir_at(int dirfd, const char *name);
/* A path opened as a directory without following a symlink anywhere on it. */
int rv_opendir_path(const char *path);
/* The sorted names of the directory fd (not "." and ".."); false when it cannot be read. */
bool rv_names(int dirfd, struct strv *out);

/* Remove name below dirfd, a whole tree when it is a directory: never following a symlink,
 * never crossing into another file system; directories of ours without read or search
 * permission (overlayfs's work/work is 0000) opened up first. 0, or -1 with errno. */
int rv_remove_at(int dirfd, const char *name);

/* What the workspace holds at name below dirfd (dirfd -1: nothing), as a baseline: kind, size,
 * inode, times, and the hash of a file's bytes, a link's target, a directory's listing (its
 * tree's names, kinds, sizes and mtimes, bounded). rel is stored in it (copied). */
void rv_base_of(int dirfd, const char *name, const char *rel, struct rv_base *out);

/* The overlay attributes of an upper entry, as user.overlay.* (userxattr) or trusted.overlay.*. */
struct rv_xattrs {
	bool opaque;  /* "y": a directory that hides the workspace's */
	bool foreign; /* redirect, metacopy, whiteout-as-attribute, anything agentjail's mount
		       * never writes: the entry is refused */
	char what[64];
};
void rv_xattrs_of(int dirfd, const char *name, struct rv_xattrs *out);

/* Walk the tree below dirfd without following a symlink, sorted, at most RV_MAX_DEPTH deep:
 * visit(arg, dirfd, name, rel, st) for each entry (rel: `rel`/name, or name when rel is "");
 * it returns whether to go into a directory (and may stop the walk by setting *stop). */
typedef bool (*rv_visit_fn)(void *arg, int dirfd, const char *name, const char *rel,
			    const struct stat *st, bool *stop);
void rv_walk(int dirfd, const char *rel, rv_visit_fn visit, void *arg);

/* A regular file's bytes from fd (at most its size when opened), NUL-terminated; *len. */
char *rv_read_fd(int fd, size_t size, size_t *len);

/* Copy the bytes of fd `from` into fd `to` (copy_file_range, read/write when it cannot). */
int rv_copy_fd(int from, int to);

/* What a stat says an entry is: 'f' file, 'd' directory, 'l' symlink, 'o' anything else. */
char rv_kind_of(const struct stat *st);

/* nanoseconds since the epoch */
long long rv_ns(const struct timespec *t);
