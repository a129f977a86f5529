/* backend: where a command runs, behind one door (doc/design.md §2a). The bwrap jail
 * (core/backend/bwrap/), the Landlock backend (core/backend/landlock/) and an OpenSandbox service
 * (core/backend/remote/) each fill a struct backend; `run`, the agent commands, `resume`,
 * `verify`, doctor and the TUI choose one (backend_choose) and call through it. A backend prints
 * nothing: it speaks through the struct backend_io the command layer gives it (cmd/backend.c).
 * The command layer includes this header and no other of core/backend/ (tests/sh/00-layering.t). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/host/userns_diag.h"
#include "core/jail/pipeline.h"
#include "core/jail/snapshot.h"
#include "core/plan/bwrap_argv.h"
#include "core/plan/policy.h"
#include "util/err.h"

struct askprompt_src;
struct supervise_jail;
struct config;
struct pollfd;

/* ---- what a backend guarantees: data (core/backend/caps.c) ---- */

/* The rows of the table of guarantees (README, "Where bubblewrap cannot run"). */
enum backend_row {
	BR_READS,
	BR_WRITES,
	BR_PROTECTED,
	BR_PRIVATE_TMP,
	BR_PTRACE,
	BR_NET_OFF,
	BR_NET_ALLOW,
	BR_UNIX,
	BR_PRIVATE_PROC,
	BR_SESSIONS,
	BR_WATCH,
	BR_LIMITS,
	BR_OUTLIVE,
	/* the agent commands (issue 28): a row per capability of an agent's profile */
	BR_AGENTS,
	BR_AGENT_PROTECT,
	BR_AGENT_COPY,
	BR_AGENT_HIDE,
	BR_AGENT_PRIVATE,
	BR_AGENT_RESUME,
	BR_AUTO,
	BR__N
};

struct backend_caps {
	const char *column;        /* the table's head for it: "bwrap (default)", "landlock" */
	/* the start line of a session (cmd/runlines.h): what it runs in, what it keeps private */
	const char *noun, *private_note;
	const char *rows[BR__N];   /* its answer to each row, in words (NULL: not in the table) */
	/* what the commands act on */
	bool namespaces;  /* private /proc, PIDs, mounts, /dev: the probes that need them hold */
	bool agents;      /* agent commands run in it (else they run in the bwrap jail, and say so) */
	bool verify;      /* verify's battery runs in it */
	bool net_by_port; /* --net allow holds by port, not address: verify WARNs */
	bool rlimits;     /* --memory and --pids hold by rlimits where no cgroup scope does */
	/* When an agent command falls back to the bwrap jail: where it runs instead and why
	 * ("a local jail", "its credentials are never sent to a service"). */
	const char *agents_instead, *agents_why;
	/* Why verify's battery does not run in it (when !verify). */
	const char *verify_why;
	/* For a host where the bwrap jail cannot start: this backend as the way out, in one
	 * paragraph (NULL: it is none). */
	const char *fallback;
	/* The Landlock ABI it needs (0: none), and with --net allow (its TCP port rules). */
	int min_landlock_abi, min_landlock_abi_net;
	/* What `auto` says when it chooses this backend for a host where bwrap cannot start:
	 * what it does not protect, in a few words (NULL: auto never chooses it). */
	const char *auto_note;
};

/* The guarantee a row names ("reads limited to the jail's allowlist"). */
const char *backend_row_name(enum backend_row r);
/* The table of guarantees of these backends, as Markdown (the README's). malloc'd. */
char *backend_caps_table(const struct backend_caps *const *cols, size_t n);

/* ---- how a backend speaks: the command layer's side ---- */

/* Where a session ran, when not on this host (the remote backend's service and sandbox). */
struct backend_place {
	const char *backend, *url, *sandbox_id;
};

/* What the supervising loop of the bwrap jail serves beyond the jail (core/jail/supervise.h's
 * ext_fill, ext_handle, ext_arg, ask and jail): the session's control socket (ps, exec, stop,
 * --net ask's answers) and --net ask's questions at the terminal. */
struct backend_ext {
	size_t (*fill)(void *arg, struct pollfd *pfd, size_t max);
	void (*handle)(void *arg, const struct pollfd *pfd, size_t n);
	void *arg;
	const struct askprompt_src *ask;
	struct supervise_jail *jail; /* the session's control socket acts on it (ps, exec, stop) */
};

/* A launch's answer that is not an exit status: the bwrap jail could not be built because the
 * host changed a file it masks while bwrap mounted over it (bwrapmsg_host_race); the run plans
 * the jail again and launches it once more (backend_local_run), the same session. */
#define BACKEND_AGAIN (-2)

struct backend_io {
	void *arg;
	bool tty; /* stderr is a terminal */
	/* What chose the backend ("--backend NAME", `backend = "NAME" at FILE:LINE`, "the session,
	 * which ran on it"), for the line after a failure; NULL: not known. */
	const char *chosen_by;
	/* One line on stderr ("agentjail: " first; the whole line through fmt_clean). */
	void (*warn)(void *arg, const char *line);
	void (*error)(void *arg, const struct err *e);
	/* --dry-run: agentjail's text on stdout as it is (the user's policy and plan, agentjail's
	 * comments): made before anything runs, never a jail's words (tests/helpers/printcheck.py). */
	void (*text)(void *arg, const char *text);
	/* --dry-run's first line on stdout: "would run: CMD ARG…" (shell-quoted, cleaned). */
	void (*would_run)(void *arg);
	/* Text of several lines on stderr, each piece through fmt_clean (bwrap's own words). */
	void (*put_text)(void *arg, const char *text);
	/* The command's own output (the remote stream): on fd 1 or 2 as it came. */
	void (*output)(void *arg, int fd, const char *buf, size_t n);
	/* A transient status line on a terminal (nothing elsewhere); NULL clears it. */
	void (*progress)(void *arg, const char *line);
	/* A violation found while the command runs: said at once. */
	void (*violation)(void *arg, const struct violation *v);
	/* The session record: the run starts (plan and bwrap when a bwrap jail runs it), where it
	 * runs (remote), a violation, its end. NULL when nothing is recorded (verify). */
	void (*started)(void *arg, const struct bw_plan *plan, const char *bwrap);
	void (*place)(void *arg, const struct backend_place *p);
	/* kind: the event's ("violation.protected_path", or "sweep.agent_dir" for what the Landlock
	 * backend's sweep moved out of the agent's own directories: doc/design.md §4c) */
	void (*record_violation)(void *arg, const char *kind, const char *path, const char *what,
				 const char *moved);
	void (*ended)(void *arg, int status, int cmd_signal, int term_signal);
	/* --net allow: start the proxy on these listeners (owned by the callee from here on); -1
	 * with e: the run stops (exit 125). net_stop: the proxy stopped, its events written and
	 * its summary said (before the session ends); nothing when it never started. */
	int (*net_ready)(void *arg, int tcp4, int tcp6, int dns_udp, int dns_tcp, struct err *e);
	/* --net allow's capture (the bwrap jail): the proxy serves the capture filter's listener
	 * and init's channel (owned by the callee); a failure is said, and the jail's direct
	 * connections then fail. */
	void (*net_capture)(void *arg, int listener, int chan);
	void (*net_stop)(void *arg);
	/* The jail is gone (no process of it is left): the proxy may begin to stop on its own
	 * threads while the checks after the run are made; net_stop still follows. NULL: none. */
	void (*net_ending)(void *arg);
	/* Before the bwrap jail is built: --publish's host ports listened on (and said), --net
	 * ask's hub made (cmd/netask.h), the session's control socket (cmd/jailctl.h) and *x filled with what the
	 * supervising loop serves for it (zeroed: nothing). -1 with e: nothing runs (exit 2: a
	 * host port in use). net_stop ends both. */
	int (*net_prepare)(void *arg, struct backend_ext *x, struct err *e);
	/* --publish: init's publish channel (owned by the callee): the proxy serves the published
	 * ports with it. -1 with e: the run stops (exit 125). */
	int (*publish)(void *arg, int chan, struct err *e);
	/* A run's secrets and agents (doc/design.md §4d, the bwrap jail only). secrets_prepare,
	 * once agentjail is hardened (its inherited fds closed) and before the jail is prepared:
	 * which the run uses, the CA, the trust bundle, the agents' sockets; then sec is what they
	 * add to the jail's view. secrets, before the jail starts: their values read on the host.
	 * Each 0, or the exit code (said); NULL (sec: nothing) when the command has none. */
	const struct hf_secrets *sec;
	int (*secrets_prepare)(void *arg);
	int (*secrets)(void *arg);
	/* The session's start and end lines (on a terminal, not with --quiet: cmd/runlines.h). */
	void (*begin)(void *arg);
	void (*end)(void *arg, int status, int cmd_signal, bool interrupted, size_t moved);
	/* The configuration a run was started with, or loaded now (a resumed session reads
	 * today's); NULL when it cannot be read (said). */
	const struct config *(*config)(void *arg);
};

/* ---- what a backend can do ---- */

/* Can it run here: the test run behind doctor and the TUI (core/backend/bwrap/avail.h). */
enum avail_outcome {
	AVAIL_OK,          /* the jail started and /bin/true exited 0 in it */
	AVAIL_NOT_STARTED, /* bwrap ran but the jail was not set up (diag says why) */
	AVAIL_CMD_FAILED,  /* the jail started but /bin/true did not exit 0 */
	AVAIL_TIMEOUT,     /* the probe did not finish within AVAIL_TIMEOUT_MS */
	AVAIL_PREPARE,     /* the jail could not be planned or attempted (prep_err says why) */
};

/* How long the probe may take before it is killed. */
#define AVAIL_TIMEOUT_MS 15000

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
void avail_result_free(struct avail_result *r);

struct backend {
	enum backend_id id;
	const char *name; /* as --backend and `backend =` spell it */
	const struct backend_caps *caps;
	/* run hands the whole command to another program (agentjail-remote), which says
	 * everything itself */
	bool elsewhere;
	/* Run a parsed, validated request to its end (--dry-run: what it would start, as text);
	 * a resumed session's too (req->resume). The exit status. */
	int (*run)(const struct backend *b, struct run_request *req, const struct backend_io *io);
	/* What the backend refuses in a policy before anything is made (backend_local_run: exit
	 * 2): -1 with e saying what and why; NULL: nothing beyond the policy's own checks. */
	int (*policy_check)(const struct policy *p, struct err *e);
	/* The local backends: a jail already prepared (backend_prepare), printed (--dry-run) or
	 * launched and reported (verify's battery). The exit status. NULL for the others. */
	int (*dry_run)(struct run_request *req, struct jail *j, const struct backend_io *io);
	int (*launch)(struct run_request *req, struct jail *j, const struct backend_io *io);
	/* What a run (not a dry run) starts once its policy is valid, to run beside the plan
	 * (core/jail/pipeline.h's jail_prep ahead: the bwrap jail's --net allow namespace, §7);
	 * launch takes it from the jail. NULL: nothing. */
	void (*ahead)(struct jail *j, const struct policy *pol);
	/* Can it run here (a test run): -1 with e when that could not even be tried; NULL when
	 * the backend has no such test. */
	int (*available)(struct avail_result *r, struct err *e);
};

/* The backends (core/backend/bwrap/bwrap.c, core/backend/landlock/landlock.c,
 * core/backend/remote/remote_exec.c in agentjail and osbrun.c in agentjail-remote). */
extern const struct backend backend_bwrap, backend_landlock, backend_opensandbox;
extern const struct backend_caps backend_caps_bwrap, backend_caps_landlock,
	backend_caps_opensandbox;

/* ---- choosing one (core/backend/backend.c) ---- */

/* The backend of an id (the policy's). */
const struct backend *backend_by_id(enum backend_id id);
/* The flag's, else the configuration's `backend` (cfg may be NULL), else the bwrap jail. */
const struct backend *backend_choose(const char *flag, const struct config *cfg);
/* The backend agent commands run in: the chosen one when it runs agents, else the bwrap jail. */
const struct backend *backend_for_agents(const struct backend *chosen);
/* Where a recorded session ran: its row's backend ("opensandbox"), else its policy's. */
const struct backend *backend_of_session(const char *row_backend, enum backend_id policy_backend);
/* Whether this program runs b: agentjail runs every backend (the remote one by exec'ing
 * agentjail-remote); agentjail-remote only the remote one. */
bool backend_here(const struct backend *b);
/* agentjail: keep main's argv, for the backend that hands the command to agentjail-remote. */
void backend_keep_argv(int argc, char **argv);
/* The paragraph of a backend that works where the bwrap jail cannot start, or NULL. */
const char *backend_fallback(void);

/* ---- backend = "auto" (core/backend/backend.c, doc/design.md §2a) ---- */

/* What auto chose for one run. */
struct backend_auto {
	const struct backend *b; /* NULL: no backend can run here (the run exits 125, never
				  * unsandboxed) */
	char *why;               /* the start line: which and why */
	char *fix;               /* when the bwrap jail cannot start here: how to make it */
};
/* Whether the flag (else the configuration) says `auto`. */
bool backend_is_auto(const char *flag, const struct config *cfg);
/* The bwrap jail when its test jail runs here (its `available`), else the backend whose
 * capabilities offer a way out (the Landlock backend) when the kernel's Landlock ABI is enough
 * for the policy (net_allow: its TCP port rules), else none. */
void backend_auto_choose(bool net_allow, struct backend_auto *out);
void backend_auto_free(struct backend_auto *a);

/* ---- what the local backends share (core/backend/local.c) ---- */

/* The local backends' run: agentjail hardened, the session id, then without a jail
 * (danger-full-access) or the jail prepared and b->dry_run or b->launch. */
int backend_local_run(const struct backend *b, struct run_request *req,
		      const struct backend_io *io);
/* The jail of a request (core/jail/pipeline.h) with its errors and notes said: 0, or the exit
 * code to return. jail_free is needed either way. */
int backend_prepare(struct run_request *req, struct jail *j, const struct backend_io *io);

/* ---- what every backend says the same way (core/backend/report.c) ---- */

/* One violation as a line: "violation: protected path P appeared during the run; MOVED Q", or
 * "violation: P: WHAT" for a scan's finding in its own words. malloc'd. */
char *backend_violation_text(const struct violation *v, const char *moved);
