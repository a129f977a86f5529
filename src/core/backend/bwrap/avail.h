/* avail: can a jail start on this host? Runs the very jail `agentjail run` would build (default
 * policy, a scratch workspace) on /bin/true and, when it fails, translates the failure into a
 * cause and a fix. Used by `doctor` and the TUI, never by `run` (doc/design.md §2: run does not pay
 * for a second jail).
 *
 * The probe goes through the pipeline `run` uses (core/jail/pipeline.h): run_parse_args,
 * launch_harden_self, jail_prepare (without creating the state directory) and jail_launch, with
 * bwrap found by launch_find_bwrap (AGENTJAIL_BWRAP selects it, as for run). It runs in a child process with stdin and
 * stdout on /dev/null (so no pty is involved, whatever the caller's terminal) and stderr on a
 * memory file whose content (bwrap's message) is returned. The scratch directory is made with
 * mkdtemp under /tmp and removed afterwards; the user's cwd is never touched.
 *
 * Test builds (AJ_TEST_BUILD) only: when AGENTJAIL_TEST_PROCFS names a directory, the user
 * namespace facts are read from files below it instead of from the host (see avail_userns_facts),
 * so tests can simulate hosts whose kernel knobs they cannot set. */
#pragma once
#include <stdbool.h>

#include "core/host/userns_diag.h"
#include "util/err.h"

/* How long the probe may take before it is killed. */
#define AVAIL_TIMEOUT_MS 15000

enum avail_outcome {
	AVAIL_OK,          /* the jail started and /bin/true exited 0 in it */
	AVAIL_NOT_STARTED, /* bwrap ran but the jail was not set up (diag says why) */
	AVAIL_CMD_FAILED,  /* the jail started but /bin/true did not exit 0 */
	AVAIL_TIMEOUT,     /* the probe did not finish within AVAIL_TIMEOUT_MS */
	AVAIL_PREPARE,     /* the jail could not be planned or attempted (prep_err says why) */
};

struct avail_result {
	bool ok; /* outcome == AVAIL_OK */
	enum avail_outcome outcome;
	char *bwrap;   /* the bwrap that was run */
	int status;    /* the jail's exit status (shell style); -1 when none */
	char *message; /* what bwrap and the jail wrote on stderr, trimmed ("" if none) */
	struct userns_cause diag; /* cause and fix when outcome is AVAIL_NOT_STARTED */
	struct err prep_err;      /* when outcome is AVAIL_PREPARE */
	long elapsed_ms;          /* wall time of the probe */
	char *leftover;           /* the scratch directory, if it could not be removed */
};

/* Run the probe. Returns -1 (e filled) when it could not be attempted at all: no trusted bwrap
 * (e carries the fix as its hint), no scratch directory, no child process. Otherwise 0, with r
 * filled (r->ok tells whether a jail works here). avail_result_free is needed either way. */
int avail_probe(struct avail_result *r, struct err *e) WUR;
void avail_result_free(struct avail_result *r);

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
