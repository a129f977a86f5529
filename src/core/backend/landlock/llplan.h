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

struct ll_plan {
	struct llp_rule *rules;
	size_t n, cap;
	struct strv env;     /* the command's environment, "NAME=VALUE" (TMPDIR included) */
	char *chdir;         /* where it starts */
	char *tmpdir;        /* the private temporary directory (writable) */
	struct strv notes;   /* "PATH: what differs from the bwrap jail", for --dry-run */
	size_t listed;       /* directory entries looked at by the expansion (its cost) */
};

#define LLP_TMP_VARS "TMPDIR", "TMP", "TEMP", "TEMPDIR"

/* What this backend refuses before anything is made (exit 2): --home persist (it binds the
 * persisted home at $HOME, and without mounts there is no $HOME but the real one). */
int llplan_policy_check(const struct policy *p, struct err *e) WUR;
/* Derive the ruleset from a bwrap plan built for the same policy. tmpdir is the private
 * temporary directory the runner makes (it replaces bwrap's /tmp, /var/tmp, /dev/shm and /run
 * tmpfs). Fails only on a plan it cannot mirror (an option it does not know). */
int llplan_build(const struct bw_plan *bp, struct hostfacts *hf, const char *tmpdir,
		 struct ll_plan *out, struct err *e) WUR;
/* --net allow: the proxy listens on the host's 127.0.0.1:port, not the jail's :3128; the
 * environment's proxy settings say so. GIT_SSH_COMMAND (the jail's init as ProxyCommand) is
 * dropped: there is no init here. */
void llplan_proxy_port(struct ll_plan *p, unsigned port);
void ll_plan_free(struct ll_plan *p);
const char *llp_right_name(enum llp_right r);
/* Human rendering for --dry-run: one rule a line, then the notes. */
char *ll_plan_render(const struct ll_plan *p);
