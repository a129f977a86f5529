/* guard: the protected paths of a Landlock run (doc/design.md §4c), kept by the host while the
 * command runs and checked after it.
 *
 * Landlock cannot hold a protected path read-only inside the writable workspace (see
 * core/plan/llplan.h). So before the command starts the protected paths are snapshotted
 * (core/jail/snapshot.h) and their bytes kept (core/jail/snapkeep.h); while it runs, inotify
 * watches each one (and the directory it would appear in): a protected name that appears or
 * changes is moved aside into the quarantine at once and, if it existed, the original put back;
 * after the run the same check runs once more. What changed is a violation, in the same
 * `struct violations` as the bwrap jail's.
 *
 * The live part watches each protected path itself and its parent chain, not the inside of a
 * protected directory's subdirectories: a change down there is found by the check after the run. */
#pragma once
#include <stddef.h>

#include "core/jail/snapshot.h"
#include "util/err.h"
#include "util/strv.h"

struct guard;

/* Snapshot and keep `paths`, and start watching them (what moves goes into quarantine_dir).
 * -1 (e filled) when the snapshot cannot be taken: nothing may run. Without inotify the guard
 * still checks after the run; *live_err says why it is not live (watch_failed otherwise 0). */
int guard_start(const struct strv *paths, const char *quarantine_dir, struct guard **out,
		struct err *live_err, struct err *e) WUR;
/* The fd to poll for reading (-1 when not live). */
int guard_fd(const struct guard *g);
/* Read what is pending; check, move aside and restore what changed. How many violations it
 * added to out. */
size_t guard_handle(struct guard *g, struct violations *out);
/* The command is gone: the last check (and restore). -1 (e filled) if it could not be made. */
int guard_finish(struct guard *g, struct violations *out, struct err *e) WUR;
/* Closes the inotify fd (best late: closing waits for the kernel to release the watches that
 * guard_finish removed). */
void guard_free(struct guard *g);
