/* guard: the one watcher of protected paths (doc/design.md §3 step 7, §4c), for both local
 * backends. Before the command starts the protected paths are snapshotted
 * (core/jail/snapshot.h); while it runs, inotify (fanotify needs CAP_SYS_ADMIN) sees changes made
 * through any mount of an inode, the jail's binds included, and the guard acts at once; after
 * the run the same check runs once more, without the watch. Two behaviours, one per kind of
 * path:
 *
 * - a protected path missing at the start (it cannot be bound read-only): the deepest existing
 *   directory on the way to it is watched, re-armed as directories appear, and the path is
 *   moved aside into the quarantine the moment it appears — the check after the run comes too
 *   late for a hook the host runs meanwhile (`git commit` in another terminal);
 * - a protected path that exists (`keep`: the Landlock backend, where nothing holds it
 *   read-only, core/backend/landlock/llplan.h): its bytes are kept (core/jail/snapkeep.h), it is
 *   watched itself (content, mode, entries, its inode going) with the directory it would
 *   appear in, and what changed is moved aside and the original put back. Without `keep` (the
 *   bwrap jail: a read-only bind) it is only checked after the run.
 *
 * The live part watches each protected path itself and its parent chain, not the inside of a
 * protected directory's subdirectories: a change down there is found by the check after the run.
 * What changed is a violation, in one `struct violations` for both backends.
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

/* ask's answers, each path asked once until dirmemo_forget: a watch_isdir_fn over a memo (the
 * guard's arming pass, guard.c). */
struct dirmemo {
	struct strv path; /* asked so far */
	bool *dir;        /* their answers */
	watch_isdir_fn ask;
	void *arg;
};
bool dirmemo_isdir(void *memo, const char *path);
/* Everything asked is asked again (ask and arg stay). */
void dirmemo_forget(struct dirmemo *m);

struct guard;

struct guard_opts {
	/* Keep the existing protected paths' bytes, watch them, and restore them after a change
	 * (the Landlock backend); false: they are read-only, only the missing ones are watched. */
	bool keep;
	/* Watch while the command runs (false: the checks only; a test build's
	 * AGENTJAIL_TEST_NO_WATCH). */
	bool live;
};

/* Snapshot `paths` (and keep them) and start watching them; what moves goes into
 * quarantine_dir (NULL: nothing is watched). -1 (e filled) when the snapshot cannot be taken:
 * nothing may run. Without inotify the guard still checks after the run; *live_err says why it
 * is not live (left empty otherwise). With keep the watches are armed here; without, the
 * first guard_handle arms them (call it once right after, before the jail starts). */
int guard_start(const struct strv *paths, const char *quarantine_dir, const struct guard_opts *o,
		struct guard **out, struct err *live_err, struct err *e) WUR;
/* Start `agentjail-init __unwatch` (exe: agentjail-init, an fd, core/jail/initbin.h) beside
 * a live watch, when the jail has ended and before guard_disarm: a process of its own that
 * holds a reference to the inotify fd, so that its last close, which waits for the kernel
 * (guard_free), is the helper's and not ours: it begins at guard_disarm, beside the checks
 * after the run, and guard_free waits at most 0.25 ms more for it; a helper still closing
 * then is left to init (named `agentjail-init __unwatch`, not the run's command line), a few
 * ms. Nothing when there is no live watch; a helper that cannot be started leaves that close
 * to us. */
void guard_unwatch_start(struct guard *g, int exe);
/* Whether an init of that name (/proc/1/comm) reaps the orphans it adopts: systemd, sysvinit's
 * init, the container inits (tini, dumb-init, docker-init, catatonit, s6-svscan, runit,
 * openrc-init). Only then is the helper above started: left to another init (a container's
 * shell or `sleep infinity`, the agent itself) it would stay a zombie, one per run. */
bool guard_reaping_init(const char *comm);
/* Decide it instead of /proc/1/comm (the unit tests, whatever the host's init). */
void guard_assume_reaped(bool yes);
/* The fd to poll for reading (-1 when not live). */
int guard_fd(const struct guard *g);
/* Read what is pending; move aside what appeared and, with keep, restore what changed. How
 * many violations it added to out. */
size_t guard_handle(struct guard *g, struct violations *out);
/* The run is over: remove every inotify watch now, so the kernel starts releasing them in the
 * background. Closing an inotify fd that still has watches waits for an SRCU grace period
 * (≈ 15 ms here) on the spot; disarmed early, the close at guard_free finds that time already
 * (mostly) spent. With the unwatch helper, our reference to the fd goes now and the helper's
 * last close begins (guard_unwatch_start). Nothing is watched from here on: the check after
 * the run takes over. */
void guard_disarm(struct guard *g);
/* The command is gone: disarmed, the last check (and, with keep, restore). -1 (e filled) if it
 * could not be made. */
int guard_finish(struct guard *g, struct violations *out, struct err *e) WUR;
/* Closes the inotify fd and frees the snapshot. The last close of an inotify fd waits until
 * the kernel's mark reaper (global: any process's marks, not only ours) is past its SRCU grace
 * period: 0.2-0.7 ms here, 4-20 ms in one run of five to three (doc/design.md §7). With the
 * unwatch helper that close is the helper's (guard_unwatch_start); without it, ours (best
 * late: see guard_disarm). NULL is fine. */
void guard_free(struct guard *g);
