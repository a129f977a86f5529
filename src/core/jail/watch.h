/* watch: protected paths that are missing when the run starts, watched live
 * (doc/design.md §3 step 7).
 *
 * A missing protected path cannot be bound read-only, and the check after the run comes too
 * late for a hook the host runs meanwhile (`git commit` in another terminal). So the host side
 * watches, with inotify (fanotify needs CAP_SYS_ADMIN), the deepest existing directory on the
 * way to each such path, re-arms as directories appear, and moves a path aside the moment it
 * appears. Inotify sees changes made through any mount of the inode, the jail's binds included.
 *
 * The pure part (which directory to watch, what an event concerns) is apart from the syscalls. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/jail/snapshot.h"
#include "util/err.h"
#include "util/strv.h"

/* lstat-style: is `path` a directory (never through a symlink in its last component)? */
typedef bool (*watch_isdir_fn)(void *arg, const char *path);

/* The directory to watch so that `path` (absolute, normalized, not "/") is seen appearing: the
 * deepest strict ancestor reached from "/" through directories only, each asked of is_dir in
 * order from the top (so no symlink is ever passed through). "/" at worst. */
char *watch_anchor(const char *path, watch_isdir_fn is_dir, void *arg);

/* Whether an entry `name` created in (or moved into) `dir` matters for `path`: dir/name is the
 * path or one of its ancestors. */
bool watch_event_concerns(const char *dir, const char *name, const char *path);

struct watch;

/* Watch `paths` (the protected paths missing now); what appears is moved into quarantine_dir.
 * -1 with e filled when inotify cannot be had (the check after the run still happens). */
int watch_start(const struct strv *paths, const char *quarantine_dir, struct watch **out,
		struct err *e) WUR;
/* The fd to poll for reading. */
int watch_fd(const struct watch *w);
/* Read what is pending; every watched path that appeared is moved aside now and added to out.
 * Returns how many violations were added. The first call arms the watches (call it once right
 * after watch_start, before the jail starts). */
size_t watch_handle(struct watch *w, struct violations *out);
/* The run is over: remove every inotify watch now, so the kernel starts releasing them in the
 * background. Closing an inotify fd that still has watches waits for an SRCU grace period
 * (≈ 15 ms here) on the spot; disarmed early, the close at watch_stop finds that time already
 * (mostly) spent. Nothing is watched from here on: the check after the run takes over. */
void watch_disarm(struct watch *w);
void watch_stop(struct watch *w);
