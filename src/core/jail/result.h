/* result: what a local run found (doc/design.md §3 step 7, §3b, §4c), filled by both local
 * backends (the bwrap jail's launch_run, the Landlock backend's run) and said by
 * core/backend/report.h: the command's end, the violations, the limits it hit; and the checks
 * after a run that both make besides the snapshot's. */
#pragma once
#include <stdbool.h>
#include <time.h>

#include "core/jail/snapshot.h"
#include "core/plan/bwrap_argv.h"
#include "util/err.h"

struct guard; /* core/jail/guard.h */

struct launch_result {
	bool started;          /* bwrap reported the command running */
	int status;            /* shell-style: n, or 128+signal */
	struct violations viol;
	bool snapshot_failed;  /* the after-run comparison could not be done */
	int term_signal;       /* SIGTERM/SIGHUP/SIGINT agentjail received and passed on, or 0 */
	bool killed;           /* the command outlived the grace period and the jail was killed */
	int landlock;          /* what init reported (ctl.h CTL_LANDLOCK value), -1 if nothing */
	int cmd_signal;        /* the command died of this signal (status is 128+it), or 0 */
	struct err snap_err;
	bool watch_failed;     /* the live watch of protected paths could not start */
	struct err watch_err;
	unsigned long long oom_kills;  /* cgroup scope: processes the kernel OOM-killed */
	unsigned long long pids_hits;  /* cgroup scope: forks refused at pids.max */
	bool cgroup_left;              /* the scope could not be removed (cg_err says why) */
	struct err cg_err;
	/* What bwrap wrote on its stderr (a pipe of ours until the command got the user's own
	 * stderr back): its setup errors (core/backend/bwrap/bwrapmsg.h), never the command's
	 * words. NULL when it wrote nothing; the caller shows it as it is. */
	char *bwrap_stderr;
	int exec_errno;                /* init could not execute the command: why, else 0 */
	int notes;                     /* what init saw for the host to explain (ctl.h CTL_NOTE_*) */
	/* the guard of the protected paths, disarmed when the jail ended and freed by
	 * launch_result_free: closing its inotify fd waits for the kernel to release its watches
	 * (guard.h), time overlapped this way with the checks after the run and the caller's end
	 * of the session */
	struct guard *retired;
};

void launch_result_free(struct launch_result *r);
/* The checks after a run besides the snapshot's (launch_run's, and the landlock backend's):
 * setuid/setgid bits gained since `since` (suidscan_mark, taken before the command started)
 * removed, and git directories that appeared in the writable roots or changed what makes git
 * run a command moved aside (gitscan_check). Violations go to r->viol. */
void launch_scan_after(const struct bw_plan *plan, const char *quarantine_dir,
		       const struct timespec *since, struct launch_result *r);
