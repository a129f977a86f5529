/* pipeline: one jail from policy to exit status (doc/design.md §2, §3, §3b). prepare (the policy
 * made canonical and checked, the host facts gathered, the private caches made, the plan built)
 * → launch (core/backend/bwrap/launch.h's jail_launch: bwrap found by the caller, __init, the
 * supervised run) → the snapshot compared and what appeared moved into the quarantine (inside
 * launch_run). `run`, the agent commands, `resume`, `verify` and the availability check
 * (core/backend/bwrap/avail.c) all build and start their jail here; the command layer adds only
 * what it prints, the exit codes and the session record. */
#pragma once
#include <stdbool.h>

#include "core/plan/bwrap_argv.h"
#include "core/plan/hostfacts.h"
#include "core/plan/policy.h"
#include "util/err.h"

/* The jail of a request: the host facts it was planned from and its plan. */
struct jail {
	struct hostfacts hf;
	struct bw_plan plan;
	int home_lock;          /* --home persist: the persisted home's lock, held until
				 * jail_free (core/host/homeprep.h); else -1 */
	struct strv home_moved; /* what was renamed aside in the persisted home for bwrap's
				 * mount points ("~/PATH (WHAT): renamed to NAME") */
	void *ahead;            /* what the backend started while the plan was built
				 * (jail_prep's ahead: the bwrap jail's --net allow namespace
				 * holder), or NULL; its launch takes it */
	void (*ahead_free)(void *ahead); /* … ended and freed by jail_free */
};

/* Where jail_prepare stopped. */
enum jail_stage {
	JAIL_READY = 0,
	JAIL_BAD_POLICY, /* the policy is invalid: nothing on the host was touched */
	JAIL_NO_FACTS,   /* the host facts could not be gathered */
	JAIL_BAD_PLAN,   /* the plan was refused (a hostile git pointer, a contradiction) */
	JAIL_NO_HOME,    /* --home persist: the persisted home is in use by another jail, or
			  * cannot be made or readied */
};

struct jail_prep {
	bool make_caches;      /* make the private caches and filtered configs first (not for a
				* dry run); a failure costs them, never the run; and with --home
				* persist the persisted home, locked for the run (a failure stops
				* it: JAIL_NO_HOME) */
	bool no_new_state_dir; /* the state directory is never created: when it is missing, the
				* jail is planned without it (doctor's probe) */
	const struct hf_secrets *sec; /* what a run with secrets or agents adds to the view
				       * (doc/design.md §4d), or NULL */
	/* Called once the policy is valid, before the host facts and the plan: what the backend
	 * can start now, to run beside them (j->ahead; doc/design.md §7). NULL: nothing. */
	void (*ahead)(struct jail *j, const struct policy *pol);
};

/* Canonicalize and validate req's policy (the resolved limits stored back into it), gather the
 * host facts, make the caches, build the plan. JAIL_READY, or the stage that failed with e
 * filled. jail_free is needed either way (j is initialized first). */
enum jail_stage jail_prepare(struct run_request *req, const struct jail_prep *o, struct jail *j,
			     struct err *e) WUR;
void jail_free(struct jail *j);
