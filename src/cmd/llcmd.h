/* llcmd: `run --backend landlock` (doc/design.md §4c). */
#pragma once
#include "cmd/cmd.h"
#include "core/jail/pipeline.h"
#include "core/plan/config.h"

/* --backend is parsed in cmd/backend.c (cmd_take_backend, cmd_backend_of). */
/* Run (or --dry-run) the request with the Landlock backend. */
int cmd_ll_run(struct run_request *req, struct sess_rec *rec);
/* The same, on a jail already prepared (verify): its command may be agentjail itself at
 * BW_SELF_PATH, which becomes the real binary (readable) here. */
int cmd_ll_launch(struct run_request *req, struct jail *j, struct sess_rec *rec);
/* One paragraph for a host where bwrap cannot run: the option and what it does not protect. */
void cmd_ll_suggest(void);

/* Defined in run.c, shared with the landlock backend: violations said and recorded the same way.
 * live_violation prints one the moment it is found (arg unused); report_violations records
 * each in the session and prints those not yet printed; report_unmoved warns of those still in
 * place (true if any: the run then exits EXIT_JAIL). */
struct launch_result;
struct violation;
void live_violation(void *arg, const struct violation *v);
void report_violations(const struct launch_result *r, struct sess_rec *rec);
bool report_unmoved(const struct launch_result *r);
/* Also run.c's: the --dry-run line of the limits and how this host holds them (landlock: as
 * the Landlock backend does, by a cgroup scope or not at all), and after a run the limits it
 * ran into and a scope left behind. */
struct bw_plan;
void print_limits(const struct bw_plan *plan, bool landlock);
void report_limits(const struct launch_result *r, const struct bw_plan *plan);
