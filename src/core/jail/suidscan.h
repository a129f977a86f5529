/* suidscan: after a run, the setuid and setgid files that appeared in the jail's writable roots
 * are reported and stripped of those bits (issue 10, item 4).
 *
 * The seccomp filter refuses every call that sets either bit from inside; this is the second
 * line, for a way the filter does not know of. agentjail may run as root, and a setuid-root file
 * left in the workspace makes any local user who can reach it root.
 *
 * Which files: regular files with S_ISUID or S_ISGID whose ctime is not older than the run's
 * start. Setting a mode, creating, renaming or linking a file all update its ctime, and nothing
 * in the jail can set the clock, so every file the jail made setuid is caught; a setuid file the
 * user had before, untouched by the run, is left alone. One that the run touched (renamed,
 * linked) is stripped too: the safe side. */
#pragma once
#include <stddef.h>
#include <time.h>

#include "core/plan/bwrap_argv.h"
#include "core/jail/snapshot.h"
#include "util/strv.h"

/* Bounds on the walk: a hostile tree must not hold the host process forever. Reaching one is a
 * violation of its own ("not fully scanned"), never silence. */
struct suidscan_limits {
	size_t max_entries;
	unsigned max_depth;
};
/* Measured: 100k files in 1.1k directories take 0.45 s warm, 3 s with a cold cache (ext4, a
 * loaded 2-CPU VM); the bound keeps the worst case to a few seconds. */
#define SUIDSCAN_MAX_ENTRIES ((size_t)1000000)
#define SUIDSCAN_MAX_DEPTH 256u

/* The start of a run as ctime compares it (the kernel's coarse clock), less a second for a clock
 * slewed by NTP. Take it before the jail starts. */
void suidscan_mark(struct timespec *since);

/* The writable roots of a plan: the host sources of its writable binds, without those below
 * another (the walk reaches them anyway) or below `private_dir` (may be NULL), sorted. Pure.
 * agentjail's state directory is that private dir: it is 0700 and the user's own, so a setuid
 * file in the private package caches bound from it is reachable by nobody but its owner, and
 * walking those caches (tens of thousands of files) after every run would cost more than a run. */
void suidscan_roots(const struct bw_plan *p, const char *private_dir, struct strv *out);

/* Walk `roots` (never following a symlink); for each regular file with S_ISUID/S_ISGID and a
 * ctime at or after `since`, remove both bits and add a violation ("got the setuid bit (now
 * removed)", moved_to NULL). A root or a directory that cannot be read, or a bound reached, is a
 * violation too. Returns the number of violations added. */
size_t suidscan_check(const struct strv *roots, const struct timespec *since,
		      const struct suidscan_limits *lim, struct violations *out);

/* launch_run's one call: the plan's roots (outside `private_dir`) with the default bounds. */
size_t suidscan_after_run(const struct bw_plan *p, const char *private_dir,
			  const struct timespec *since, struct violations *out);
