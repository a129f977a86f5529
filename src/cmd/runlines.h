/* runlines: the one line at the start of a jailed session and the one at its end, on stderr.
 *
 *   agentjail: jail fs workspace-write, net off, workspace /p, session 1b2c…; ~ and /tmp are
 *   private and discarded   (one line)
 *   agentjail: end: exited 0, session 1b2c…; 1 violation moved aside
 *
 * Printed only when stderr is a terminal (an interactive session) and without --quiet: a script
 * that captures stderr (2>&1, CI logs) keeps the command's own output. Never on stdout. The
 * warnings (--net on, violations, the denied line) are printed as before, whatever the terminal;
 * the allow-list banner too, but not with --quiet (it says nothing the policy did not). The
 * landlock backend's start line says "landlock sandbox" and what it keeps private. */
#ifndef AGENTJAIL_CMD_RUNLINES_H
#define AGENTJAIL_CMD_RUNLINES_H

#include <stdbool.h>
#include <stddef.h>

#include "core/plan/policy.h"

bool runlines_wanted(const struct run_request *req);
void runlines_start(const struct run_request *req);
/* status: the command's exit status; sig: the signal that killed it (0 none); interrupted:
 * agentjail itself got a terminating signal; moved: violations moved aside. On a terminal an
 * interrupted run (Ctrl-C echoed "^C" with no newline) first ends the line, with or without
 * --quiet, so the shell's prompt starts on a line of its own. */
void runlines_end(const struct run_request *req, int status, int sig, bool interrupted,
		  size_t moved);

#endif
