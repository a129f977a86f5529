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
