/* cgroup: enforcing the jail's memory and process limits (issue 10 item 8).
 *
 * Where a cgroup v2 scope can be made, each jail gets its own: a child of a parent directory
 * agentjail owns (root: `agentjail` under the cgroup2 root; a user: `agentjail` under the
 * delegated subtree systemd gives `user@UID.service`), with memory.max, memory.swap.max and
 * pids.max set. bwrap, and so everything in the jail, is moved into it before bwrap is
 * executed; after the run the scope is killed (cgroup.kill), emptied and removed.
 *
 * Without one, where the cgroup v1 `pids` hierarchy is mounted and writable (a host or
 * container still on v1 or hybrid, whose v2 hierarchy has no controllers), the scope is made
 * there by the same rules (the same parent under that hierarchy's mount): pids.max holds the
 * process limit; memory is left to the rlimit below (issue 24 item 12).
 *
 * Elsewhere the jail's init sets rlimits (init.c): RLIMIT_DATA (the private writable memory of
 * each process: RLIMIT_AS is not used, V8's WebAssembly reserves 10 GiB of address space and
 * fails under it) and, for a non-root user, RLIMIT_NPROC, set inside the jail's own user
 * namespace so it counts the jail's processes and nothing else of the user's (Linux counts
 * processes per user namespace and uid). Root is exempt from RLIMIT_NPROC: no process limit.
 *
 * The planning part (which parent, from /proc/self/cgroup's line, the cgroup mounts and the
 * uid) is pure and unit-tested; the rest makes the system calls. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/plan/limits.h"
#include "util/err.h"

struct cg_probe {
	enum limits_mech mech;
	char *parent;     /* LIMITS_CGROUP(_V1): the directory jails are created under */
	char why[512];    /* one line: why this mechanism (LIMITS_CGROUP_V1: why not v2) */
	char fix[512];    /* how to get a cgroup scope ("" when there is one) */
};

/* Pure: the parent directory for jail scopes, from the cgroup2 mount point `mnt`, this
 * process's cgroup `self` (the path after "0::" in /proc/self/cgroup) and the uid. Root: MNT/
 * agentjail. A user: the `user@UID.service` ancestor of self plus "/agentjail", or NULL (with
 * why/fix filled) when self is not inside that delegated subtree. Returned malloc'd. */
char *cg_plan_parent(const char *mnt, const char *self, uid_t uid, char *why, size_t whylen,
		     char *fix, size_t fixlen);

/* Pure: whether a /proc/self/mountinfo line mounts the root of the cgroup2 hierarchy
 * (controller NULL) or of the v1 hierarchy holding `controller`; *mnt its mount point then
 * (malloc'd). */
bool cg_mountinfo_match(const char *line, const char *controller, char **mnt);
/* Pure: from /proc/self/cgroup's text, the path of this process's cgroup in the v2 hierarchy
 * ("0::PATH", controller NULL) or in the v1 hierarchy holding `controller` ("N:a,b:PATH").
 * malloc'd, or NULL. */
char *cg_self_path(const char *text, const char *controller);

/* Which mechanism applies on this host for this user, and why: a v2 scope, else a v1 pids
 * scope, else rlimits. Never fails. */
void cg_probe_host(struct cg_probe *out);
void cg_probe_free(struct cg_probe *p);

/* One jail's scope. */
struct cg_scope {
	char *dir;      /* PARENT/jail-PID-N */
	int procs_fd;   /* DIR/cgroup.procs (v1: DIR/tasks), open for writing: the child writes
			 * "0" into it */
	uint64_t memory, pids;
};
#define CG_SCOPE_INIT {.procs_fd = -1}

/* Make the scope under `parent` with the limits set (LIMIT_UNLIMITED: "max"): memory and
 * pids for LIMITS_CGROUP, pids alone for LIMITS_CGROUP_V1. On failure nothing is left
 * behind. */
int cg_scope_create(const char *parent, enum limits_mech mech, uint64_t memory, uint64_t pids,
		    struct cg_scope *s, struct err *e);
/* In the child, before exec: move the calling process into the scope (async-signal-safe).
 * The caller must be a process of one thread (a fork or vfork child): on v1 only the calling
 * thread is moved. */
int cg_scope_enter(const struct cg_scope *s);
/* The scope's memory.events oom_kill counter (0 when unreadable), and whether pids.max was
 * reached (pids.events max). */
uint64_t cg_scope_oom_kills(const struct cg_scope *s);
uint64_t cg_scope_pids_max_hits(const struct cg_scope *s);
/* Kill everything in the scope now, no new process starting meanwhile (pids.max 0, then
 * cgroup.kill, or without it pid by pid until none is listed). Safe on an unset scope. */
void cg_scope_kill(const struct cg_scope *s);
/* Kill whatever is left, wait until the scope is empty, remove it (and the parent when it is
 * empty). Fills e when the directory could not be removed. Safe on an unset scope. */
int cg_scope_destroy(struct cg_scope *s, struct err *e);
