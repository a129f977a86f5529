/* jailreport: after a jailed run, the one line that says the sandbox caused its failure, only
 * on evidence (doc/design.md §6): bwrap's own setup error (read from the pipe bwrap had for
 * stderr, never the command's output) translated into cause and fix; a command init could not
 * find in the jail that the host has; protected paths the jail moved aside from a run that
 * failed. An unsandboxed run (danger-full-access) never comes here. */
#pragma once

#include <stdbool.h>

#include "core/backend/backend.h"
#include "core/jail/result.h"
#include "core/plan/bwrap_argv.h"
#include "core/plan/hostfacts.h"
#include "util/strv.h"

/* bwrap's stderr as it came (the user can search for bwrap's own line), then, when the jail
 * did not start and bwrap said why, one line with the cause and the fix. true when that line
 * was printed; false leaves the generic cause to the caller. */
bool jailreport_bwrap(const struct launch_result *r, const struct backend_io *io);

/* The run ended with `status`: one line when the sandbox has a share in it (a command not in
 * the jail's view, protected paths moved aside). hf: the facts the jail was planned from;
 * plan: the jail's plan; cmd: the command. A 127 from init (the command itself was not found)
 * names the command; a 127 from the command (a shell's, env's) names the first program its
 * command line names (cmdwords.h) that the host has and the plan does not show. */
void jailreport_failure(const struct launch_result *r, int status, struct hostfacts *hf,
			const struct bw_plan *plan, const struct strv *cmd,
			const struct backend_io *io);

/* After any jailed run: what init noticed that the user should know (ctl.h CTL_NOTE_*): git
 * tried to rewrite ~/.gitconfig, read-only in the jail (one line, with how to set an identity
 * instead). hf: the facts the jail was planned from. */
void jailreport_notes(const struct launch_result *r, struct hostfacts *hf,
		      const struct backend_io *io);

