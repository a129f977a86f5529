/* snapshot_internal.h: private to src/core/jail/snapshot*.c (the public header is snapshot.h):
 * the walk, the state of one check, and what one file defines and another uses. */
#pragma once

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

/* snapshot_walk.c */
void snap_walk_init(struct walk *w, const char *top, struct err *e);
size_t snap_walk_push(struct walk *w, const char *name);
void snap_walk_pop(struct walk *w, size_t old);
int snap_walk_err(struct walk *w, int errnum, const char *what);
int snap_walk_enter_dir(struct walk *w, unsigned depth);
int snap_walk_count(struct walk *w);
int snap_walk_same_entry(struct walk *w, int fd, const struct stat *st);
int snap_walk_list_dir(struct walk *w, int dfd, const char *name, const struct stat *st,
		      DIR **out, struct strv *names);
char *snap_read_link_at(int dfd, const char *name, off_t hint);

/* snapshot_quarantine.c */
void snap_move_all(struct check *ck);
