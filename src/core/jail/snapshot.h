/* snapshot: the state of protected paths before a run, compared after it (doc/design.md §3 step 7).
 * A protected path that appeared or changed during the run is a violation: it is reported and
 * moved aside into the state directory, never deleted. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"
#include "util/strv.h"

/* What lstat said about one path: enough to notice that it was swapped for another entry. */
struct snap_id {
	bool exists;
	mode_t type;
	dev_t dev;
	ino_t ino;
};

struct snap_entry {
	char *path;          /* absolute */
	bool exists;
	mode_t type;         /* S_IFMT bits of lstat */
	dev_t dev;
	ino_t ino;
	uint8_t digest[32];  /* SHA-256 over type, content (files), target (symlinks), or the
			      * recursive listing with each entry's type and content (dirs) */
	/* Each strict ancestor of `path` ("/" excluded), outermost first. A parent that became a
	 * symlink during the run would otherwise lead the check, and the move aside, out of the
	 * tree (e.g. `.claude -> ~/.claude` would move the user's own settings). */
	struct snap_id *anc;
	size_t nanc;
};

struct snapshot {
	struct snap_entry *e;
	size_t n;
};

struct violation {
	char *path;          /* the protected path */
	char *what;          /* "appeared", "changed", "replaced", "removed", ".git changed kind" */
	char *moved_to;      /* where it was moved, NULL if it was not moved (e.g. removed) */
	bool move_failed;    /* it is still in place: the move aside failed (the reason is in what) */
	bool reported;       /* already shown to the user while the run went on (live watch) */
	bool own_words;      /* `what` is a whole clause about path (a scan's finding), shown as
			      * "PATH: WHAT"; otherwise it says what happened to a protected path */
	bool swept;          /* the Landlock backend's sweep moved it out of the agent's own
			      * directory (jail/sweep.h): said as "swept", not as a violation, since
			      * the agent writes there itself on every run */
};

struct violations {
	struct violation *v;
	size_t n;
};

/* Record each path (existing or not). A path that cannot be read is an error. */
int snapshot_take(const struct strv *paths, struct snapshot *out, struct err *e) WUR;
/* Compare a new snapshot of the same paths with `before`; for each difference add a violation
 * and, when the path exists now, move it into `quarantine_dir`/<timestamp>-<pid>/<path>. */
int snapshot_check(const struct snapshot *before, const char *quarantine_dir,
		   struct violations *out, struct err *e) WUR;
/* The same while the command still runs (the Landlock backend's guard, core/jail/guard.h):
 * each move goes through a parent opened with no symlink on its way, as snapshot_move_now's. */
int snapshot_check_live(const struct snapshot *before, const char *quarantine_dir,
			struct violations *out, struct err *e) WUR;
/* The entry for `path` taken again (after the original was put back in its place). */
int snapshot_retake(struct snapshot *s, const char *path, struct err *e) WUR;
/* The entry for `path` now matches nothing: the next check finds it changed (a restore that
 * the command raced). */
void snapshot_poison(struct snapshot *s, const char *path);
/* During the run (the live watch): `path` appeared; move it aside into `quarantine_dir` now and
 * add the violation ("appeared during the run"). Never through a symlink on the way: a path
 * reached through one is left to snapshot_check, which knows the parent chain from before. */
void snapshot_move_now(const char *path, const char *quarantine_dir, struct violations *out);
void snapshot_free(struct snapshot *s);
void violations_free(struct violations *v);
/* Move every violation of `from` to the end of `to`; `from` is left empty. */
void violations_append(struct violations *to, struct violations *from);

/* The EXDEV fallback of a move aside: copy `src` to `dst` (which must not exist; its parent must)
 * recursively, without following symlinks, keeping permission bits (setuid/setgid dropped), then
 * remove `src`, only once the copy fully succeeded and was synced. On failure the partial copy
 * is removed and `src` is left as it was. */
int move_aside_copy(const char *src, const char *dst, struct err *e) WUR;
