/* launch: start bwrap with a plan and wait for the jail (syscalls live here). */
#pragma once
#include <stdbool.h>
#include <time.h>

#include "core/plan/bwrap_argv.h"
#include "core/confine/seccomp.h"
#include "core/jail/snapshot.h"
#include "util/err.h"

struct watch; /* core/jail/watch.h */
struct pollfd;
struct askprompt_src; /* core/jail/askprompt.h */

/* Host self-hardening before anything else: not dumpable, no core files, a fresh session
 * keyring, every inherited fd >= 3 closed, and (when nnp) no_new_privs. */
int launch_harden_self(bool nnp, struct err *e) WUR;

/* Find bwrap in a trusted place: `configured` (AGENTJAIL_BWRAP) if given, else
 * /usr/bin/bwrap, /usr/local/bin/bwrap. Refused unless the file and every directory above it
 * are owned by root and not writable by group or others. */
int launch_find_bwrap(const char *configured, char **out, struct err *e) WUR;

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
	bool watch_failed;     /* the live watch of missing protected paths could not start */
	struct err watch_err;
	unsigned long long oom_kills;  /* cgroup scope: processes the kernel OOM-killed */
	unsigned long long pids_hits;  /* cgroup scope: forks refused at pids.max */
	bool cgroup_left;              /* the scope could not be removed (cg_err says why) */
	struct err cg_err;
	/* What bwrap wrote on its stderr (a pipe of ours until the command got the user's own
	 * stderr back): its setup errors (core/plan/bwrapmsg.h), never the command's words.
	 * NULL when it wrote nothing; the caller shows it as it is. */
	char *bwrap_stderr;
	int exec_errno;                /* init could not execute the command: why, else 0 */
	int notes;                     /* what init saw for the host to explain (ctl.h CTL_NOTE_*) */
	/* the live watch, disarmed when the jail ended and closed by launch_result_free: closing
	 * it waits for the kernel to release its watches (watch.h), time overlapped this way with
	 * the checks after the run and the caller's end of the session */
	struct watch *retired;
};

/* Run the plan. Returns -1 (e filled) when the jail could not even be attempted
 * (an fd source that changed, no memory for the filter…): exit 125. Otherwise fills r; when
 * !r->started the jail failed during setup: exit 125 too. */
/* Called once bwrap runs and before the command may start (the session record is written
 * there, in parallel with bwrap building the jail). */
struct launch_hooks {
	void (*started)(void *arg);
	/* A protected path appeared during the run and was just moved aside (or could not be):
	 * say so now. It is in the result's violations too. */
	void (*violation)(void *arg, const struct violation *v);
	/* --net allow: the namespace holder opened these listeners inside the jail's network
	 * namespace (fds owned by the callee from here on; see core/jail/netns.h); start serving
	 * them. Called after `started` and before the command may start. -1 with e filled stops
	 * the launch: bwrap is killed (exit 125). */
	int (*net_ready)(void *arg, int tcp4, int tcp6, int dns_udp, int dns_tcp, struct err *e);
	/* --publish: the host's end of the publish channel (ctl.h CTL_PUBLISH; the callee's from
	 * here on): serve the published ports with it. Called after net_ready and before the
	 * command may start; -1 with e filled stops the launch (exit 125). */
	int (*publish)(void *arg, int chan, struct err *e);
	/* --net allow: the listener of the filter that captures the command's connects and the
	 * proxy's end of init's capture channel (sent by init before the command's exec; the fds
	 * are the callee's): serve them. */
	void (*net_capture)(void *arg, int listener, int chan);
	void *arg;
	/* more fds in the supervising loop, and --net ask's questions for the terminal
	 * (core/jail/supervise.h: ext_fill, ext_handle, ext_arg, ask) */
	size_t (*ext_fill)(void *arg, struct pollfd *pfd, size_t max);
	void (*ext_handle)(void *arg, const struct pollfd *pfd, size_t n);
	void *ext_arg;
	const struct askprompt_src *ask;
};
int launch_run(const struct bw_plan *plan, const char *bwrap, const struct seccomp_opts *sc,
	       const char *quarantine_dir, const struct launch_hooks *hooks,
	       struct launch_result *r, struct err *e) WUR;
void launch_result_free(struct launch_result *r);
/* The checks after a run besides the snapshot's (launch_run's, and the landlock backend's):
 * setuid/setgid bits gained since `since` (suidscan_mark, taken before the command started)
 * removed, and git directories that appeared in the writable roots or changed what makes git
 * run a command moved aside (gitscan_check). Violations go to r->viol. */
void launch_scan_after(const struct bw_plan *plan, const char *quarantine_dir,
		       const struct timespec *since, struct launch_result *r);

/* danger-full-access: run the command directly, no jail. Returns its shell-style status, or
 * 126/127 when it cannot be executed; *cmd_signal the signal it died of (or 0), *term_signal a
 * SIGTERM/SIGHUP agentjail received and passed on (or 0). */
int launch_unjailed(char **argv, int *cmd_signal, int *term_signal, struct err *e);
