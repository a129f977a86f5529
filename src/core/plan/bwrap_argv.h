/* bwrap_argv: the one pure function from (policy, host facts, command) to bwrap's argv.
 *
 * Every bind source that comes from the host is passed as an fd (`--bind-fd`/`--ro-bind-fd`):
 * the plan names the host path and the fd number; the launcher opens the path without following
 * symlinks and puts the fd at that number. The numbers are fixed by the plan, so `--dry-run`,
 * `verify` and the real run print the same argv. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/plan/hostfacts.h"
#include "core/plan/limits.h"
#include "core/plan/policy.h"
#include "util/err.h"
#include "util/strv.h"

enum {
	BW_FD_ARGS = 3,    /* bwrap --args: the whole argv, NUL separated */
	BW_FD_SECCOMP = 4, /* the BPF filter */
	BW_FD_STATUS = 5,  /* --json-status-fd */
	BW_FD_INIT = 6,    /* agentjail-init, mounted as the jail's PID 1 */
	BW_FD_CONTROL = 7, /* the control channel, inherited by init */
	BW_FD_BIND0 = 8,   /* first bind source */
};

#define BW_INIT_PATH "/run/agentjail/init" /* agentjail-init, the jail's PID 1 */
/* doc/design.md §4d: the trust bundle of a run that inspects hosts, the filtered ssh agent */
#define BW_CA_BUNDLE_PATH "/run/agentjail/ca-bundle.pem"
#define BW_SSH_AGENT_PATH "/run/agentjail/ssh-agent"
#define BW_KNOWN_HOSTS_PATH "/run/agentjail/known_hosts" /* the user's, read-only */
/* agentjail itself, bound read-only only when the command names it (verify's `__probe`) */
#define BW_SELF_PATH "/run/agentjail/agentjail"

struct bw_op {
	struct strv args;  /* the option and its arguments */
	char *comment;     /* why it is there */
	char *src;         /* host source for an fd bind, else NULL */
	int fd;            /* that source's fd number, or -1 */
	bool secret;       /* last argument is a secret value (redacted when shown) */
	char *data;        /* --ro-bind-data: the file's contents, which the launcher puts in a
			    * memfd at fd; else NULL */
	char *ovl_rel;     /* --fs review: the source is this path inside the review overlay
			    * ("" its top), opened by the namespace holder once it mounted it
			    * (core/backend/bwrap/ovlns.h), never the host's src; else NULL */
};

struct bw_plan {
	struct bw_op *ops;
	size_t nops, capops;
	struct strv skipped;  /* "PATH: reason" for what was left out */
	struct strv watch;    /* protected paths to snapshot before and compare after */
	struct strv deny_read; /* masked paths init also makes unreadable with Landlock: a mount
				* over a file vanishes when the host renames over it */
	/* after the run, new git repositories below git_roots are looked for (gitscan.h) */
	struct strv git_roots;  /* the writable workspace */
	struct strv git_dirs;   /* its git dir and common dir: their modules/ are compared too */
	struct strv git_known;  /* the nested .git and submodule git dirs there before the run */
	bool git_truncated;     /* that list is partial (the walk's bound) */
	long long git_since;    /* when it was made (seconds since the epoch) */
	struct strv cmd;      /* what bwrap runs: the init helper, then the command */
	char *chdir;          /* the directory the command starts in */
	char *state_dir;      /* agentjail's own state directory (0700, the user's): binds from it
			       * (the private package caches) are reachable by nobody else */
	int next_fd;
	bool net_allow;       /* --net allow: bwrap runs in the namespace holder's network
			       * namespace (core/backend/bwrap/netns.h), with --share-net */
	/* --fs review (doc/design.md §3c): the overlay the namespace holder mounts before bwrap
	 * runs, the workspace its lower layer; every path NULL in the other modes */
	struct bw_overlay {
		char *dir;    /* <state>/review/<session id> */
		char *lower;  /* the workspace */
		char *upper;  /* dir/upper: the change set */
		char *work;   /* dir/work: overlayfs's work directory */
		char *mnt;    /* dir/mnt: where the holder mounts it */
	} ovl;
	/* --fs review: what `apply` must not write unasked, relative to the workspace: the paths
	 * the plan protects there (made read-only or watched in the other modes), and the ones
	 * git runs from (core.hooksPath) */
	struct strv review_named, review_never;
	bool publish;         /* --publish: launch hands init the publish channel (ctl.h
			       * CTL_PUBLISH), on which init connects to the published ports */
	struct bw_limits {    /* the jail's limits (core/plan/limits.h values) and how they hold */
		uint64_t memory, pids;
		int mech;            /* enum limits_mech (cgroup.h) */
		char *cgroup_parent; /* LIMITS_CGROUP(_V1): where launch makes the jail's scope */
		char *why;           /* why that mechanism (the host probe's words), or NULL */
		bool root;           /* the jail runs as root: RLIMIT_NPROC does not apply */
		bool memory_default; /* the memory limit is the default: no RLIMIT_DATA for it */
		struct tmpfs_sizes tmpfs;
	} limits;
};

/* The option an op gives (past a leading "--size N" and "--perms M"), and the place it makes
 * (a mount point, a link, a directory of the plan's own) or NULL. */
const char *bw_op_verb(const struct bw_op *o);
const char *bw_op_made_dest(const struct bw_op *o);

/* Whether op i binds a host source (o->src) that the jail's final view shows at its
 * destination: no later mount is made there or above it (core/jail/bindcheck.h). */
bool bw_plan_bind_final(const struct bw_plan *p, size_t i);

/* Build the plan. Fails (exit 2 material) only on a policy the host facts make impossible:
 * a block device, a --dev that is not a character device. */
int bwrap_build(const struct policy *pol, struct hostfacts *hf, const struct strv *cmd,
		struct bw_plan *out, struct err *e) WUR;
void bw_plan_free(struct bw_plan *p);

/* The options for --args (no "bwrap" in front, no command: bwrap reads only options from
 * that fd; the command follows "--" on its command line). Secret values are included. */
void bw_plan_argv(const struct bw_plan *p, struct strv *out);
/* The whole command (bwrap, its options, "--", the command) with secret values replaced by
 * "<redacted>": what a session record keeps. */
void bw_plan_argv_redacted(const struct bw_plan *p, const char *bwrap_path, struct strv *out);
/* Human/dry-run rendering: one option per line, shell-quoted, with its comment; secret values
 * shown as <redacted>; then the skipped list. */
char *bw_plan_render(const struct bw_plan *p, const char *bwrap_path);

/* Whether the jail's view shows the host's `path` (absolute, normalized) as the host has it:
 * the deepest mount over it, and over the file its symlinks lead to, binds the same host path
 * there (or is a link the host has too). false where a tmpfs, a mask, or nothing (bwrap's empty
 * root) is over it. For the "not in the jail's view" line (core/backend/bwrap/jailreport.c). */
bool bw_plan_shows(const struct bw_plan *p, struct hostfacts *hf, const char *path);

/* The protected names inside every writable root (doc/design.md §3 step 7). */
extern const char *const bw_protected_names[];
/* The protected name rel (relative to a writable root) is or lies in, ASCII case ignored
 * (".GIT/hooks" is ".git/hooks" on a case-insensitive file system), or NULL. */
const char *bw_protected_prefix(const char *rel);

/* What in a home runs code later, relative to $HOME, and who runs it: protected wherever a
 * writable bind covers it (doc/design.md §3b). NULL-terminated. */
struct bw_home_code {
	const char *name;
	const char *why;
};
extern const struct bw_home_code bw_home_code[];
