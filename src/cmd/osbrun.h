/* The opensandbox backend of `run` (doc/design.md §4b). agentjail (static) has no libcurl: its
 * cmd_osb_run and cmd_osb_resume (src/cmd/remote_exec.c) exec agentjail-remote with agentjail's
 * own argv and environment; agentjail-remote (src/remote_main.c, dynamically linked) defines
 * them in src/cmd/osbrun.c and does the work. --backend is parsed in src/cmd/backend.c. */
#pragma once
#include <stdbool.h>

#include "core/plan/config.h"
#include "core/plan/policy.h"

/* Take --backend VALUE / --backend=VALUE out of the options before the command (argv and
 * *argc shrink). -1 (said) on a missing or unknown value. */
int cmd_take_backend(int *argc, char **argv, const char **backend);
/* Whether the run goes to the service: the flag, else the configuration's `backend`. */
bool cmd_backend_remote(const char *flag, const struct config *cfg);
/* The backend the flag names, else the configuration's `backend`, else local. */
enum backend cmd_backend_of(const char *flag, const struct config *cfg);
/* Run req there: the command's exit status, EXIT_USAGE (refused), EXIT_JAIL (service failed,
 * or agentjail-remote missing: said, naming where it was looked for). chosen_by: what chose
 * this backend ("--backend opensandbox", the configuration's FILE:LINE), said with a failure. */
int cmd_osb_run(struct run_request *req, const struct config *cfg, const char *chosen_by);
/* resume of a session that ran there: a new sandbox with the stored policy (req), the
 * [opensandbox] settings of today's configuration. */
int cmd_osb_resume(struct run_request *req);
/* true in agentjail-remote (the functions above do the work here), false in agentjail (they
 * exec agentjail-remote). */
extern const bool cmd_osb_linked;
/* agentjail: keep main's argv for the exec of agentjail-remote (remote_exec.c). */
void cmd_remote_save_argv(int argc, char **argv);
/* agentjail-remote __doctor-opensandbox: doctor's opensandbox check as doctor --json prints it
 * (doc/doctor-json.md), only that check; agentjail's doctor merges it. */
int cmd_osb_doctor(int argc, char **argv);
