/* launch: start bwrap with a plan and wait for the jail (syscalls live here): the bwrap
 * backend's run (doc/design.md §2). What the run found is a struct launch_result
 * (core/jail/result.h), as for the Landlock backend. */
#pragma once
#include <stdbool.h>
#include <time.h>

#include "core/jail/pipeline.h"
#include "core/plan/bwrap_argv.h"
#include "core/confine/seccomp.h"
#include "core/jail/result.h"
#include "util/err.h"

struct pollfd;
struct askprompt_src; /* core/jail/askprompt.h */
struct supervise_jail; /* core/jail/supervise.h */
struct netns_ahead;    /* core/backend/bwrap/netns.h */

/* Find bwrap in a trusted place: `configured` (AGENTJAIL_BWRAP) if given, else
 * /usr/bin/bwrap, /usr/local/bin/bwrap. Refused unless the file and every directory above it
 * are owned by root and not writable by group or others. */
int launch_find_bwrap(const char *configured, char **out, struct err *e) WUR;

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
	 * namespace (fds owned by the callee from here on; see core/backend/bwrap/netns.h); start
	 * serving them. Called after `started` and before the command may start. -1 with e filled
	 * stops the launch: bwrap is killed (exit 125). */
	int (*net_ready)(void *arg, int tcp4, int tcp6, int dns_udp, int dns_tcp, struct err *e);
	/* --publish: the host's end of the publish channel (ctl.h CTL_PUBLISH; the callee's from
	 * here on): serve the published ports with it. Called after net_ready and before the
	 * command may start; -1 with e filled stops the launch (exit 125). */
	int (*publish)(void *arg, int chan, struct err *e);
	/* --net allow: the listener of the filter that captures the command's connects and the
	 * proxy's end of init's capture channel (sent by init before the command's exec; the fds
	 * are the callee's): serve them. */
	void (*net_capture)(void *arg, int listener, int chan);
	/* The jail is gone (bwrap reaped, the supervising loop over), before the checks after the
	 * run: what served it may begin to stop. NULL: nothing. */
	void (*jail_gone)(void *arg);
	void *arg;
	/* more fds in the supervising loop, and --net ask's questions for the terminal
	 * (core/jail/supervise.h: ext_fill, ext_handle, ext_arg, ask) */
	size_t (*ext_fill)(void *arg, struct pollfd *pfd, size_t max);
	void (*ext_handle)(void *arg, const struct pollfd *pfd, size_t n);
	void *ext_arg;
	const struct askprompt_src *ask;
	struct supervise_jail *jail; /* filled while the jail runs (core/jail/supervise.h) */
};
/* --net allow: `ahead` is the namespace holder started while the plan was built (netns.h),
 * taken from here on; NULL (or one already taken): one is started now. */
int launch_run(const struct bw_plan *plan, const char *bwrap, const struct seccomp_opts *sc,
	       const char *quarantine_dir, const struct launch_hooks *hooks,
	       struct netns_ahead *ahead, struct launch_result *r, struct err *e) WUR;
/* Start the prepared jail with `bwrap` and supervise it to the end: seccomp from the policy,
 * what appears under a protected path moved into `quarantine` (NULL: <state dir>/quarantine).
 * 0 with r filled (r->started says whether the command ran), or -1 with e (r still holds what
 * the live watch moved before the failure; launch_result_free it either way). */
int jail_launch(const struct run_request *req, const struct jail *j, const char *bwrap,
		const char *quarantine, const struct launch_hooks *hooks, struct launch_result *r,
		struct err *e) WUR;
