/* result: see result.h. */
#include "core/jail/result.h"

#include <stdlib.h>

#include "core/jail/gitscan_check.h"
#include "core/jail/suidscan.h"
#include "core/jail/guard.h"

void launch_scan_after(const struct bw_plan *plan, const char *quarantine_dir,
		       const struct timespec *since, struct launch_result *r)
{
	(void)suidscan_after_run(plan, plan->state_dir, since, &r->viol);
	if (plan->git_roots.n && !r->snapshot_failed) {
		struct gitscan_before gb = {.roots = &plan->git_roots,
					    .gitdirs = &plan->git_dirs,
					    .known = &plan->git_known,
					    .truncated = plan->git_truncated,
					    .since = plan->git_since};
		if (gitscan_check(&gb, quarantine_dir, &r->viol, &r->snap_err) < 0)
			r->snapshot_failed = true;
	}
}

void launch_result_free(struct launch_result *r)
{
	violations_free(&r->viol);
	free(r->bwrap_stderr);
	r->bwrap_stderr = NULL;
	guard_free(r->retired);
	r->retired = NULL;
}
