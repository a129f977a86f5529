/* self: agentjail's own process around a local run. It hardens itself before any jail (§2),
 * and with danger-full-access it runs the command itself, without a jail. */
#pragma once
#include <stdbool.h>

#include "util/err.h"

/* Host self-hardening before anything else: not dumpable, no core files, a fresh session
 * keyring, every inherited fd >= 3 closed, and (when nnp) no_new_privs. */
int launch_harden_self(bool nnp, struct err *e) WUR;

/* danger-full-access: run the command directly, no jail. Returns its shell-style status, or
 * 126/127 when it cannot be executed; *cmd_signal the signal it died of (or 0), *term_signal a
 * SIGTERM/SIGHUP agentjail received and passed on (or 0). */
int launch_unjailed(char **argv, int *cmd_signal, int *term_signal, struct err *e);
