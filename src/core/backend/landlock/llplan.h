/* llplan: the Landlock ruleset of `run --backend landlock` (doc/design.md §4c), derived from the
 * bwrap plan so both backends show the command the same allowlist. Pure: the host is asked only
 * through hostfacts (directory listings, for the expansion below).
 *
 * Landlock can only grant, never subtract, and a grant on a directory reaches everything beneath
 * it. So a tree with a masked path inside (/etc holding a secret, a --hide in the workspace) is
 * granted child by child: the directories on the way to it get READ_DIR only (LLP_LIST), every
 * other child the tree's right, the masked path none. The cost is one rule per entry of each
 * directory on such a way, not per file of the tree. A protected path (§3 step 7) inside a
 * writable tree is no such exception: the tree stays writable whole (a new file's write right
 * can only come from its directory's rule) and core/jail/guard.h keeps the protected paths. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/plan/bwrap_argv.h"
#include "core/plan/hostfacts.h"
#include "core/plan/llrule.h"
#include "util/err.h"
#include "util/strv.h"

/* One entry of the private home (doc/design.md §4c): what stands at `rel` below it. */
enum llp_home_kind {
	LLH_DIR,  /* a directory of its own (bwrap's directories on the way, an empty tmpfs) */
	LLH_LINK, /* a symlink to `target`: a bind of a host path or of agentjail's own file */
};

struct llp_home_ent {
	char *rel;    /* relative to the private home */
	enum llp_home_kind kind;
	char *target; /* LLH_LINK: where the bind's source is (or a --symlink's target) */
	/* a writable bind of a regular file (the agent's private copy, a writable config file):
	 * a file the command put in the link's place is written back into target after the
	 * run, as it would have written it in place over bwrap's bind */
	bool writeback;
};

struct ll_plan {
	struct llp_rule *rules;
	size_t n, cap;
	struct strv env;     /* the command's environment, "NAME=VALUE" (TMPDIR included) */
	char *chdir;         /* where it starts */
	char *tmpdir;        /* the private temporary directory (writable) */
	struct strv notes;   /* "PATH: what differs from the bwrap jail", for --dry-run */
	size_t listed;       /* directory entries looked at by the expansion (its cost) */
	/* bwrap's $HOME is a tmpfs with binds in it: here a private directory (tmpdir/home) with
	 * a symlink for each bind made directly in it, and $HOME points there. NULL when the plan
	 * binds the real $HOME (the workspace is $HOME). */
	char *home, *host_home;
	struct llp_home_ent *ents;
	size_t nents;
	/* What bwrap puts inside a writable bind below $HOME (an agent's config dir) that this
	 * backend cannot put in place without mounts: "PATH: what bwrap does; what it means
	 * here", said at the start of a run and by --dry-run. */
	struct strv gaps;
	/* Files inside such a bind that bwrap replaces by a private copy (pi's auth.json): here
	 * the guard keeps the host's file instead (a change is moved aside and the original put
	 * back), so no planted key ever stays in it. */
	struct strv guard_extra;
	/* The agent's own directories inside such a bind (bwrap's private dirs: claude's
	 * shell-snapshots/, codex's skills/, …): here the host's, writable while the command runs;
	 * after it, what is new or changed in them is moved aside (core/jail/sweep.h), so the
	 * host's next unjailed run of the agent finds nothing the jail left there. */
	struct strv sweep;
};

#define LLP_TMP_VARS "TMPDIR", "TMP", "TEMP", "TEMPDIR"

/* What this backend refuses before anything is made (exit 2): --home persist (it binds the
 * persisted home at $HOME, and without mounts there is no $HOME but the real one); --publish
 * (without a network namespace the jail's loopback is the host's). */
int llplan_policy_check(const struct policy *p, struct err *e) WUR;
/* Derive the ruleset from a bwrap plan built for the policy pol. tmpdir is the private
 * temporary directory the runner makes (it replaces bwrap's /tmp, /var/tmp, /dev/shm and /run
 * tmpfs). The user's own writable places (the workspace, --rw) keep their masks and read-only
 * paths as exceptions wherever they lie; what bwrap puts inside the agent's binds below $HOME
 * is a gap instead (the struct's gaps). Fails only on a plan it cannot mirror (an option it
 * does not know). */
int llplan_build(const struct bw_plan *bp, const struct policy *pol, struct hostfacts *hf,
		 const char *tmpdir, struct ll_plan *out, struct err *e) WUR;
/* The private home's path for a host path below $HOME (the host's $HOME itself included), or
 * NULL when the plan has no private home or the path is not below it. malloc'd. */
char *llplan_home_path(const struct ll_plan *p, const char *host_path);
/* --net allow: the proxy listens on the host's 127.0.0.1:port, not the jail's :3128; the
 * environment's proxy settings say so. GIT_SSH_COMMAND (the jail's init as ProxyCommand) is
 * dropped: there is no init here. */
void llplan_proxy_port(struct ll_plan *p, unsigned port);
void ll_plan_free(struct ll_plan *p);
const char *llp_right_name(enum llp_right r);
/* Human rendering for --dry-run: one rule a line, then the notes. */
char *ll_plan_render(const struct ll_plan *p);
