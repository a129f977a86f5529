/* changeset: a --fs review session's change set on disk (doc/design.md §3c): the overlay's
 * upper layer in <state>/review/<session id>/, read as hostile input, compared with the real
 * workspace, applied to it, checkpointed, thrown away.
 *
 * The upper layer is what the jail wrote, through overlayfs: files, directories, symlinks,
 * whiteouts (character devices 0/0) for what it removed, opaque directories
 * (user.overlay.opaque) for a directory it replaced. Anything else there (a device node, a
 * FIFO, a socket, a redirect or metacopy attribute, which agentjail never mounts with, a name
 * with a control character) is refused, never written. Every path is walked with directory
 * fds opened without following a symlink, in the upper layer and in the workspace alike: a
 * symlink in the workspace is never followed, so nothing lands outside it. The pure rules
 * (protection, modes, symlinks, baselines, the diff) are core/plan/review.h. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/plan/review.h"
#include "util/err.h"
#include "util/strv.h"

enum rv_op {
	RV_ADD,     /* a file the workspace does not have */
	RV_MODIFY,  /* a file whose content changed, or that replaces a directory or a link */
	RV_MODE,    /* only the mode changed */
	RV_DELETE,  /* removed: a whiteout, or not in an opaque directory */
	RV_MKDIR,   /* a directory the workspace does not have (or has as something else) */
	RV_SYMLINK, /* a symlink made or changed */
	RV_REFUSED, /* never written: see why */
};

struct rv_change {
	char *rel;
	enum rv_op op;
	enum rv_guard guard;
	char *root;                /* the protected root covering it (guard != RV_FREE) */
	bool conflict;             /* the workspace changed there since the baseline */
	char *why;                 /* RV_REFUSED: why; else NULL */
	char old_kind;             /* what the workspace has there now: '-', 'f', 'd', 'l', 'o' */
	mode_t old_mode, new_mode; /* permission bits; new_mode as it would be applied */
	bool bits_dropped;         /* setuid, setgid, sticky or group/other write not applied */
	unsigned long long size;   /* a file's new size */
	char *target;              /* RV_SYMLINK: its target */
	unsigned long long files;  /* RV_DELETE of a directory: the entries it holds */
	/* the upper layer's entry as the walk saw it (for a deletion from an opaque directory:
	 * that directory): rv_set_digest's input, which a write through the overlay changes
	 * (its ctime moves even when the size and the mtime are put back) */
	unsigned long long uino;
	long long umtime_ns, uctime_ns;
	/* the workspace's entry as the walk saw it (old_kind != '-'): apply holds the change
	 * back when it is not that any more when its turn comes (a conflict made while apply
	 * ran) */
	unsigned long long wino, wsize;
	long long wmtime_ns;
};

struct rv_set {
	struct rv_change *v;
	size_t n, cap;
	bool truncated; /* the walk stopped at its bound (RV_MAX_ENTRIES): the set is partial */
};
void rv_set_free(struct rv_set *s);

/* The digest of the changes chosen by paths (relative, normalized; NULL or none: all), as
 * `diff` shows them and `apply --expect` compares them (doc/design.md §3c): each change's
 * path, kind, mode, target, size and its upper entry's inode and times. Lower-case hex,
 * RV_DIGEST_LEN characters, NUL-terminated. */
#define RV_DIGEST_LEN 16
void rv_set_digest(const struct rv_set *set, const struct strv *paths,
		   char out[RV_DIGEST_LEN + 1]);

#define RV_MAX_ENTRIES 2000000 /* entries walked in the upper layer */
#define RV_MAX_DEPTH 256

/* The places of session id's change set. */
struct rv_paths {
	char *dir, *upper, *work, *mnt, *baseline, *lock, *ckpts;
};
void rv_paths_init(struct rv_paths *p, const char *state_dir, const char *id);
/* The same over the state directory's real place (the part that exists resolved, the rest
 * appended), as the plan has it: the change set's directories are opened without following a
 * link, so a link on the way (/home -> /var/home) is followed here, once. */
void rv_paths_real(struct rv_paths *p, const char *state_dir, const char *id);
void rv_paths_free(struct rv_paths *p);

/* A run of a review session (the bwrap backend: core/backend/bwrap/bwrap.c): before it, the
 * change set made ready (rv_open_run) with the time it started; after it, the baselines
 * recorded (rv_record), and a change set left with nothing pending nor kept removed. */
struct rv_run {
	bool on;
	struct rv_paths p;
	int lock;
	long long since_ns;
};

/* Before a run: the directories made (0700, the user's; upper with the workspace's mode, as
 * the overlay's top shows it) and the lock taken (flock, held while the overlay is mounted;
 * *lock_fd, close it when the run is over). A change set in use by another run: -1 with e
 * (EBUSY). The state directory on overlayfs: -1 with e (overlayfs refuses it as a layer). */
int rv_open_run(const struct rv_paths *p, const char *workspace, int *lock_fd,
		struct err *e) WUR;
/* Whether a run holds the change set now. */
bool rv_busy(const struct rv_paths *p);
/* Take the lock for apply, discard, rollback: *lock_fd, or -1 with e (EBUSY: running). */
int rv_lock(const struct rv_paths *p, const char *verb, int *lock_fd, struct err *e) WUR;

/* What the walk needs besides the places. */
struct rv_ctx {
	const struct rv_paths *p;
	const char *workspace;
	const struct rv_rules *rules;
	struct rv_manifest base; /* the baselines (rv_load_baselines) */
};
int rv_load_baselines(struct rv_ctx *c, struct err *e) WUR;
void rv_ctx_free(struct rv_ctx *c);

/* The change set against the workspace now, sorted by path: every change judged (guard,
 * conflict, refusal). -1 with e when the upper layer or the workspace cannot be read. */
int rv_scan(struct rv_ctx *c, struct rv_set *out, struct err *e) WUR;

/* After a run: a baseline for each change that has none yet, of what the workspace holds
 * there now; `since` (ns since the epoch) the run's start: a workspace path whose ctime is
 * later changed during the run (a conflict). Written to the baseline file (replaced
 * atomically). */
int rv_record(struct rv_ctx *c, long long since_ns, struct err *e) WUR;

/* The file's bytes (at most max; *len; NULL when it is not a regular file or larger): the
 * change set's copy (upper) or the workspace's, read through directories opened without
 * following a symlink. */
char *rv_read(const struct rv_ctx *c, bool upper, const char *rel, size_t max, size_t *len);
/* The entries of a directory tree in the workspace, for a deleted directory's diff (relative
 * to the workspace, sorted; files only, bounded). */
void rv_ws_files(const struct rv_ctx *c, const char *rel, struct strv *out);

/* ---- apply ---- */

struct rv_apply_opts {
	const struct strv *paths; /* relative, normalized; none: every change */
	bool force;               /* conflicts applied too */
	const char *id;           /* the session, for the commands the report suggests */
};
struct rv_apply_report {
	struct strv applied;      /* rel */
	struct strv held;         /* "REL: why" (protected, never, conflict, refused) */
	struct strv failed;       /* "REL: error" */
};
void rv_apply_report_free(struct rv_apply_report *r);
/* Apply the chosen changes to the workspace: each file written to a temporary file beside
 * its place, the file system synced once, then renamed into place; deletions, directories,
 * symlinks and modes in path order; every parent opened without following a symlink. What
 * was applied leaves the change set (and its baseline). -1 with e only when nothing could be
 * tried (a change that fails is in the report). */
int rv_apply(struct rv_ctx *c, const struct rv_set *set, const struct rv_apply_opts *o,
	     struct rv_apply_report *r, struct err *e) WUR;

/* ---- the change set as a whole ---- */

struct rv_size {
	unsigned long long entries, bytes;
};
/* What the upper layer holds (entries, bytes of files), walked without following links. */
void rv_size(const struct rv_paths *p, struct rv_size *out);

/* Remove the change set (the session's whole review directory, checkpoints included). */
int rv_discard(const struct rv_paths *p, struct err *e) WUR;

/* How a checkpoint was copied, and what it cost. */
struct rv_ckpt_cost {
	const char *how;          /* "reflinks", "hard links", "copies" */
	unsigned long long files, bytes, copied; /* copied: bytes really written */
	long long ms;
};
/* Snapshot the upper layer and the baselines as checkpoint NAME (replacing one of that
 * name): reflinks where the file system has them; else, when the change set is not in use,
 * hard links (the next run copies a file a checkpoint shares before the overlay can write it
 * in place: rv_unshare); else copies. */
int rv_checkpoint(const struct rv_paths *p, const char *name, bool running,
		  struct rv_ckpt_cost *cost, struct err *e) WUR;
/* Return the change set to checkpoint NAME (the checkpoint stays). */
int rv_rollback(const struct rv_paths *p, const char *name, struct rv_ckpt_cost *cost,
		struct err *e) WUR;
/* The checkpoints' names, sorted. */
void rv_checkpoints(const struct rv_paths *p, struct strv *out);
/* Before a run: every file of the upper layer that a checkpoint shares (a hard link) copied,
 * so the overlay's writes in place cannot reach the checkpoint. */
int rv_unshare(const struct rv_paths *p, struct err *e) WUR;
