/* llrun: `run --backend landlock` (doc/design.md §4c): no bwrap, no namespaces. The command is
 * forked with no capabilities (root's dropped for good), no_new_privs, the Landlock ruleset of
 * core/backend/landlock/llplan.h and the jail's seccomp filter, in a private temporary directory
 * that is removed afterwards. agentjail is the subreaper of what the command leaves; when it ends,
 * the cgroup scope (if any) is killed and every descendant of agentjail's is killed and reaped,
 * round after round until none is left. The caller removes the temporary directory (after the
 * private home's write-back, core/backend/landlock/llhome.h). */
#pragma once
#include <stdbool.h>

#include "core/confine/landlock.h"
#include "core/confine/seccomp.h"
#include "core/backend/landlock/llplan.h"
#include "util/err.h"

/* The oldest Landlock ABI the backend accepts: 3, the first to handle truncate (below it a
 * protected file could be truncated to nothing); 4 when the network is confined by port. */
#define LLRUN_MIN_ABI 3

/* Make the private temporary directory (0700, under /tmp). A malloc'ed path, or NULL. */
char *llrun_mktemp(struct err *e);

/* --net allow: a TCP listener on the host's 127.0.0.1, on a port the kernel picks. */
int llrun_listen_loopback(int *fd, unsigned short *port, struct err *e) WUR;

/* How long the command has, after the SIGTERM or SIGHUP agentjail passed on (`agentjail
 * stop`, a closed terminal), before it is killed: as the bwrap jail's stop. */
#define LLRUN_TERM_GRACE_MS 10000

struct llrun_result {
	int status;     /* shell-style: n, or 128+signal; 125 when the confinement failed */
	int cmd_signal; /* the command died of this signal, or 0 */
	int term_signal; /* SIGTERM/SIGHUP agentjail received and passed on, or 0 */
	bool killed;     /* the command was still there LLRUN_TERM_GRACE_MS after it: SIGKILL */
	struct landlock_report ll;
	unsigned long long oom_kills, pids_hits; /* what the cgroup scope saw (launch.h) */
	bool cgroup_left;                        /* the scope could not be removed: cg_err */
	struct err cg_err;
};

/* Something the host watches while the command runs (core/jail/guard.h): on_event is called
 * whenever fd is readable. */
struct llrun_watch {
	int fd;
	void (*on_event)(void *arg);
	void *arg;
};

/* Run cmd under the plan (w, if not NULL, is served while it runs), in a cgroup scope with the
 * limits where the host has one (lim: the bwrap plan's, core/confine/cgroup.h). -1 (e filled)
 * when the command could not be confined: nothing ran. When it returns nothing of the command
 * is left: every descendant is killed and reaped first (doc/design.md §4c). */
int llrun_run(const struct ll_plan *p, const struct bw_limits *lim, char **cmd,
	      const struct seccomp_opts *sc, const struct landlock_list *ll,
	      const struct llrun_watch *w, struct llrun_result *r, struct err *e) WUR;
