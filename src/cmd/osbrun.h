/* The opensandbox backend of `run` (src/cmd/osbrun.c, doc/design.md §4b). */
#pragma once
#include <stdbool.h>

#include "core/plan/config.h"
#include "core/plan/policy.h"

/* Take --backend VALUE / --backend=VALUE out of the options before the command (argv and
 * *argc shrink). -1 (said) on a missing or unknown value. */
int cmd_take_backend(int *argc, char **argv, const char **backend);
/* Whether the run goes to the service: the flag, else the configuration's `backend`. */
bool cmd_backend_remote(const char *flag, const struct config *cfg);
/* Run req there: the command's exit status, EXIT_USAGE (refused), EXIT_JAIL (service failed). */
int cmd_osb_run(struct run_request *req, const struct config *cfg);
/* resume of a session that ran there: a new sandbox with the stored policy (req), the
 * [opensandbox] settings of today's configuration. */
int cmd_osb_resume(struct run_request *req);
