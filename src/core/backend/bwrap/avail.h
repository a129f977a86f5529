/* avail: can a jail start on this host? The bwrap backend's `available` (its result type and
 * avail_result_free are the interface's, core/backend/backend.h). Runs the very jail `agentjail
 * run` would build (default policy, a scratch workspace) on /bin/true and, when it fails,
 * translates the failure into a cause and a fix. Used by `doctor` and the TUI, never by `run`
 * (doc/design.md §2: run does not pay for a second jail).
 *
 * The probe goes through the pipeline `run` uses (core/jail/pipeline.h): run_parse_args,
 * launch_harden_self, jail_prepare (without creating the state directory) and jail_launch, with
 * bwrap found by launch_find_bwrap (AGENTJAIL_BWRAP selects it, as for run). It runs in a child
 * process with stdin and stdout on /dev/null (so no pty is involved, whatever the caller's
 * terminal) and stderr on a memory file whose content (bwrap's message) is returned. The scratch
 * directory is made with mkdtemp under /tmp and removed afterwards; the user's cwd is never
 * touched.
 *
 * Test builds (AJ_TEST_BUILD) only: when AGENTJAIL_TEST_PROCFS names a directory, the user
 * namespace facts are read from files below it instead of from the host (see avail_userns_facts),
 * so tests can simulate hosts whose kernel knobs they cannot set. */
#pragma once
#include <stdbool.h>

#include "core/backend/backend.h"
#include "core/host/userns_diag.h"
#include "util/err.h"

/* Run the probe. Returns -1 (e filled) when it could not be attempted at all: no trusted bwrap
 * (e carries the fix as its hint), no scratch directory, no child process. Otherwise 0, with r
 * filled (r->ok tells whether a jail works here). avail_result_free is needed either way. */
int avail_probe(struct avail_result *r, struct err *e) WUR;

/* The facts userns_diagnose needs, with a stricter live test than userns_facts_read's: a user
 * namespace counts as working only if a child can also write its own uid map (AppArmor's
 * restriction on Ubuntu 24.04+ lets unshare succeed and refuses the map).
 *
 * Test builds: with AGENTJAIL_TEST_PROCFS=DIR every fact comes from DIR instead:
 *   DIR/sys/kernel/apparmor_restrict_unprivileged_userns, DIR/sys/user/max_user_namespaces,
 *   DIR/sys/kernel/unprivileged_userns_clone   a number, or absent (-1);
 *   DIR/sys/kernel                             proc_masked when not a readable directory;
 *   DIR/agentjail-test/container               in_container when it exists;
 *   DIR/agentjail-test/userns_works            userns_works when it holds 1 (absent: false).
 * uid is always the real one. */
void avail_userns_facts(struct userns_facts *f);

/* The live test alone: a child makes a user namespace and maps its own uid in it. */
bool avail_userns_works(void);
