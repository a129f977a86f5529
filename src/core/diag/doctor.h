/* doctor: what works on this host, what does not, and the exact fix (doc/design.md §1, issue 4).
 *
 * The checks (doctor_run) make system calls and run programs; the report, its aggregation and
 * its two renderings (text and the stable JSON of doc/doctor-json.md) are pure, as are the small
 * helpers the checks use (version parsing, Landlock features, directory resolution). Nothing
 * here prints: the command layer prints what the renderers return. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* The "version" member of the JSON document; bumped only on incompatible changes. */
#define DOCTOR_JSON_VERSION 1

enum doctor_status { DOCTOR_OK, DOCTOR_WARN, DOCTOR_FAIL };

struct doctor_check {
	char *id; /* stable identifier, e.g. "bwrap", "agent.claude" */
	enum doctor_status status;
	char *detail; /* one line: what was seen */
	char *fix;    /* one line: what to do; NULL when status is DOCTOR_OK */
};

struct doctor_report {
	struct doctor_check *v;
	size_t n, cap;
};

void doctor_report_free(struct doctor_report *r);

/* Append a check. Newlines and tabs in detail and fix become spaces, every other control
 * character, bidirectional mark and invalid byte '?' (fmt_clean). A non-OK check without a fix
 * gets a generic one; an OK check's fix is dropped. */
void doctor_add(struct doctor_report *r, const char *id, enum doctor_status st, const char *fix,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* "ok", "warn", "fail" */
const char *doctor_status_name(enum doctor_status s);
/* true when no check failed: a sandboxed run can work here. */
bool doctor_report_ok(const struct doctor_report *r);

/* One line per check, `STATUS  ID  detail`, the fix indented on the next line for warn and
 * fail, then a summary line. */
/* colour: the status words warn (yellow) and fail (red) in ANSI colours, for a terminal. */
char *doctor_render_text(const struct doctor_report *r, bool colour);
/* The JSON document of doc/doctor-json.md (pretty-printed, keys in documented order). */
char *doctor_render_json(const struct doctor_report *r);

/* ---- pure helpers used by the checks ------------------------------------------------------ */

/* The oldest bubblewrap agentjail's argv works with (--disable-userns arrived in 0.8.0). */
#define DOCTOR_BWRAP_MIN "0.8.0"

/* Parse "bubblewrap X.Y[.Z]" (the output of `bwrap --version`) into v. 0, or -1. */
int doctor_bwrap_version_parse(const char *text, int v[3]);
/* <0, 0, >0 like strcmp. */
int doctor_version_cmp(const int a[3], const int b[3]);

/* What a Landlock ABI version gives, e.g. "ABI 3: filesystem (1), refer (2), truncate (3)";
 * "not available" for 0. */
char *doctor_landlock_features(int abi);

/* A program's answer to --version made presentable: the first non-blank line, without terminal
 * escape sequences and control characters, trimmed, at most max bytes. "" when nothing is
 * left. */
char *doctor_clean_line(const char *text, size_t max);

/* ---- the checks ------------------------------------------------------------------------- */


/* Per-program timeout for `NAME --version` and `bwrap --version`: a loaded machine made node
 * agents take 1.4-4.9 s (issue 26), which 3 s called a hang; the checks run together, so this
 * bounds doctor's wait once. */
#define DOCTOR_VERSION_TIMEOUT_MS 10000

/* Run every check on this host and append the results (in the documented order). */
void doctor_run(struct doctor_report *r);
/* Only the checks "bwrap" (which bubblewrap, trusted or not) and "bwrap_version" (its version,
 * run only when trusted); `agentjail --version` reports them. Returns the trusted bwrap's path
 * (to free), or NULL. */
char *doctor_check_bwrap(struct doctor_report *r);

/* The tool managers a jail shows (core/plan/toolmgr) and the private caches' size
 * (doctor_tools.c). */
/* The configuration files, read as `run` reads them (doctor_config.c). */
void doctor_check_config(struct doctor_report *r);
/* Run path (argv, envp) with no terminal and stdin on /dev/null, for at most timeout_ms: what it
 * wrote on stdout and stderr (the caller frees it) and its wait status in *wstatus, or NULL
 * and *wstatus -1 when it could not be started or was killed at the deadline (doctor.c). */
char *doctor_capture(const char *path, char **argv, char **envp, int timeout_ms, int *wstatus);
/* The OpenSandbox service the configuration names, if any: in agentjail-remote, checked there
 * (doctor_remote.c, libcurl); in agentjail, by running agentjail-remote __doctor-opensandbox
 * (doctor_remote_exec.c, doc/design.md §4b). */
struct config;
void doctor_check_opensandbox(struct doctor_report *r, const struct config *c);
void doctor_check_toolchains(struct doctor_report *r, const char *home, const char *state);
/* agentjail-tls, the CA of <state>/ca, the user's ssh agent and gpg-agent's extra socket
 * (doctor_secrets.c, doc/design.md §4d). */
void doctor_check_secrets(struct doctor_report *r, const char *state);
