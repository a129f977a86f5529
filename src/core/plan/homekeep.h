/* homekeep: a workspace's persisted home (`--home persist`, doc/design.md §3 step 5 and §3b):
 * where it lives and what a plan makes inside it (pure; core/host/homeprep.c does the files).
 *
 * <state>/home/KEY, KEY the workspace's (toolcache_key: the first 128 bits of the SHA-256 of
 * its canonical path), holds
 *   home/      the directory bound at $HOME, 0700: the jail's, never the real home;
 *   workspace  the workspace's path (its time: the last run), for `agentjail home`;
 *   lock       held (flock) by the one agentjail whose jail uses the home.
 * Only home/ is in a jail's view: the record and the lock are agentjail's. */
#pragma once
#include <stdbool.h>

#include "core/plan/bwrap_argv.h"
#include "core/plan/hostfacts.h"
#include "util/strv.h"

#define HOMEKEEP_HOME "home"
#define HOMEKEEP_WORKSPACE_FILE "workspace"
#define HOMEKEEP_LOCK_FILE "lock"

/* <state>/home/KEY for `workspace` (absolute, canonical); NULL without a state dir. */
char *homekeep_root(const char *state_dir, const char *workspace);
/* <state>/home/KEY/home: the directory a jail of `workspace` gets at $HOME; NULL without a
 * state dir. */
char *homekeep_dir(const char *state_dir, const char *workspace);

/* The places the plan has bwrap make inside the persisted home `dir` bound at `home`: the
 * mount points and links of every op whose destination lies in it (the deepest mount above
 * is that bind). bwrap makes them, and the directories on the way, following whatever
 * symlink an earlier jail left there (into the host's tree: doc/design.md §3 step 5), so
 * core/host/homeprep.c clears their way first. Relative to `home`, in plan order:
 *   dirs   where a directory is needed (a bind of a directory, a tmpfs);
 *   files  where a file is needed (a bind of a file, a mask, generated data);
 *   links  pairs (place, target) of the links the plan recreates there. */
struct homekeep_points {
	struct strv dirs, files, links;
};
void homekeep_points(const struct bw_plan *p, struct hostfacts *hf, const char *home,
		     const char *dir, struct homekeep_points *out);
void homekeep_points_free(struct homekeep_points *pts);

/* Whether a mount (mountinfo's root and mount point) is a persisted home: its source ends in
 * /home/KEY/home and it is mounted at `home` (verify's writable-mount probe allows it). */
bool homekeep_is_home_mount(const char *home, const char *root, const char *point);
