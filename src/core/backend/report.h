/* report: what every backend says the same way (doc/design.md §2a, §3 step 7), through its
 * struct backend_io: the violations of a run (recorded in the session, each said once), the
 * limits it hit, what could not be undone; and the --dry-run lines on limits and on the
 * allow-list. For the backends; the command layer has backend.h. */
#pragma once
#include <stdbool.h>

#include "core/backend/backend.h"
#include "core/jail/result.h"
#include "core/plan/bwrap_argv.h"
#include "core/plan/policy.h"

/* Record each violation in the session and say those not said yet (the live ones were); then
 * a watch that could not start and a check after the run that could not be made. */
void report_violations(const struct launch_result *r, const struct backend_io *io);
/* A violation still in place: said loud, with the path and the error. true if any (the run
 * then exits EXIT_JAIL). */
bool report_unmoved(const struct launch_result *r, const struct backend_io *io);
/* After the run: the limits the jail ran into, and a cgroup scope that could not be removed. */
void report_limits(const struct launch_result *r, const struct bw_plan *plan,
		   const struct backend_io *io);
/* --dry-run's line on the limits and how this host holds them (rlimits: the backend sets
 * rlimits where no cgroup scope does; the Landlock backend does not). malloc'd. */
char *report_limits_text(const struct bw_plan *plan, bool rlimits);
/* --dry-run's notes on a policy: "# note: …\n" for what it allows that the user may not expect
 * (a wildcard allow entry: names under it are looked up by the host's resolver), and "# secret:
 * …\n" for each secret the run adds at the proxy (where its value comes from, never the value).
 * malloc'd, "" when none. */
char *report_dry_run_notes(const struct policy *p);
/* io->warn with a format. */
void report_warn(const struct backend_io *io, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
