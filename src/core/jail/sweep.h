/* sweep: the agent's own directories that the Landlock backend must leave writable (doc/design.md
 * §4c). Under bwrap they are the workspace's own (claude's shell-snapshots/, codex's skills/ and
 * tmp/, …); without mounts they are the host's, inside the agent's writable config dir, and what
 * the host's next unjailed run of the agent finds there it sources or runs. So their entries are
 * recorded before the run (type, device, inode, ctime: no unprivileged process sets a ctime
 * back) and, once nothing of the command is left, what is new or changed there is moved aside
 * into the quarantine through snapshot_check (no symlink followed, never deleted) and reported:
 * the jail's agent uses them while it runs; afterwards the host finds its own entries only.
 *
 * Bounds (a jail makes a million files or a tree 100,000 deep in seconds): a walk descends at
 * most SWEEP_MAX_DEPTH levels (a directory made during the run is moved aside whole, never
 * entered); more than SWEEP_MAX_ENTRIES entries before the run leave that directory unswept
 * (said); more than SWEEP_MAX_MOVES new or changed entries move the directory aside whole. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "core/jail/snapshot.h"
#include "util/err.h"
#include "util/strv.h"

#define SWEEP_MAX_DEPTH 64
#define SWEEP_MAX_ENTRIES 100000
#define SWEEP_MAX_MOVES 10000

struct sweep_ent {
	char *rel; /* below the directory, "" for the directory itself */
	mode_t type;
	mode_t perm; /* a directory's permission bits (a chmod 000 would hide what is inside) */
	bool unread; /* a directory that could not be read then */
	dev_t dev;
	ino_t ino;
	struct timespec ctime;
};

struct sweep_dir {
	char *path;       /* absolute */
	bool exists;      /* a directory before the run */
	char *unswept;    /* why it is not swept (too big to record): NULL when it is */
	struct sweep_ent *e; /* sorted by rel */
	size_t n;
};

struct sweep {
	struct sweep_dir *d;
	size_t n;
	int *lock_fds; /* sweep_lock's, one per directory (-1: none); closed by sweep_free */
	size_t n_locks;
};

/* Two runs of one agent on this backend at once would each move the other's files aside (what
 * the other wrote there is new to it), in the middle of that run. So a run holds, for each
 * directory it sweeps, an exclusive lock (flock) on STATE_DIR/locks/sweep-HASH (HASH: the
 * first 16 hex digits of the path's SHA-256; the directory made 0700, the file 0600, our pid
 * in it) from before its record until after its sweep. 0 when every lock is held; 1 when
 * another run holds one: *busy is that directory and *pid the holder's pid as it wrote it (0
 * if unknown), nothing is held; -1 with e when a lock file cannot be made or locked. */
int sweep_lock(const struct strv *dirs, const char *state_dir, struct sweep *s, char **busy,
	       long *pid, struct err *e);

/* Whether `now` (an lstat) is not the entry recorded before: another type, device or inode;
 * for a directory (whose ctime moves with its entries, which are looked at themselves) other
 * permission bits; for anything else another ctime. */
bool sweep_ent_changed(const struct sweep_ent *before, const struct stat *now);

/* Record each directory's entries. Never fails: a directory that cannot be recorded says why
 * in its `unswept`. */
void sweep_take(const struct strv *dirs, struct sweep *out);
/* After the run: move what is new or changed in each directory into quarantine_dir and add a
 * violation for each (in its own words). -1 (e filled) when a walk or a move cannot be made. */
int sweep_check(const struct sweep *s, const char *quarantine_dir, struct violations *out,
		struct err *e) WUR;
void sweep_free(struct sweep *s);
