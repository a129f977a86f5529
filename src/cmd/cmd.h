/* The command layer: the only code that prints to the user or decides exit codes. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/config/config_load.h"
#include "core/config/config.h"
#include "core/plan/bwrap_argv.h"
#include "core/plan/hostfacts.h"
#include "core/plan/policy.h"
#include "util/err.h"

/* `agentjail --version`; `shim install` compares it with the installed agentjail's. */
#define AGENTJAIL_VERSION "0.1.0"

/* The exit statuses (EXIT_USAGE, EXIT_JAIL, …) are util/err.h's. */

/* One line on stderr, "agentjail: " first. What they print is one line whatever it holds: the
 * whole text goes through fmt_clean (util/termtext.h), so a name a jail chose (a path, a host,
 * a key) reaches the terminal with its control characters and bidirectional marks as '?'. A
 * second line is a second call. */
void cmd_print_err(const struct err *e);
void cmd_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cmd_warn_line(const char *text);
/* Text of several lines (a table with tabs, bwrap's messages) on f, each piece between tabs
 * and newlines through fmt_clean: the layout stays, nothing in a piece reaches the terminal
 * raw. */
void cmd_put_text(FILE *f, const char *text);
/* Ask the person at the terminal: the question (through fmt_clean, then " [y/N] ") on stderr,
 * the answer a line of stdin. false when stdin is not a terminal (nobody to ask: the caller
 * says how to confirm). */
bool cmd_confirm(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A usage error in one line, with the nearest of known (NULL-terminated) when it is a likely
 * typo: "agentjail: CMD: unknown WHAT: ARG (did you mean X? see `agentjail CMD --help`)";
 * cmd NULL: agentjail's own command. Returns EXIT_USAGE. */
int cmd_unknown(const char *cmd, const char *what, const char *arg, const char *const *known);
/* Whether to colour what goes to fd: a terminal, NO_COLOR unset or empty (no-color.org), TERM
 * not "dumb". */
bool cmd_colour(int fd);
/* agentjail's state directory from the environment (core/plan/dirs.h). */
char *cmd_state_dir(void);
/* The canonical form of DIR (the key a jail there uses for its caches and home), or its normal
 * form when it is gone. */
char *cmd_canonical_dir(const char *dir);
/* A per-workspace directory's workspace as shown: cleaned of control characters, "(gone)" when
 * it no longer exists, "? (KEY)" when unknown (dir: the directory named by the key). */
char *cmd_shown_workspace(const char *ws, const char *dir);
/* Bytes in MiB, for "%.1f MiB". */
double cmd_mib(uint64_t bytes);

int cmd_run(int argc, char **argv);
/* Run a parsed, validated request with the backend its policy names (an agent's: the bwrap jail;
 * a resumed session's: where it ran). Returns the exit status. */
int cmd_run_request(struct run_request *req);
/* Overwrite the values of --env NAME=VALUE among the first nopts arguments (what `ps` shows). */
void cmd_scrub_env_values(int nopts, char **argv);
/* agentjail AGENT [POLICY] [-- ARGS]; `shim`: invoked as the agent's own name, every argument
 * is the agent's. */
struct profile;
int cmd_agent(const struct profile *pr, int argc, char **argv, bool shim);
int cmd_profiles(int argc, char **argv);
/* cmd_run_request for an agent: its private-copy file (claude's ~/.claude.json) made before the
 * jail and bound instead of the host file, and its safe keys merged back after the run. */
int cmd_agent_run_request(const struct profile *pr, struct run_request *req);
/* The real agent on PATH, passing over agentjail itself (a shim). */
struct resolved;
int cmd_find_agent(const struct profile *pr, const char *home, const char *cwd,
		   struct resolved *res, struct err *e);
/* cmd_find_agent failed with e: how to install the agent, in one line when it is simply not
 * there (e's own line first otherwise: found but not executable, …). */
void cmd_agent_missing(const struct profile *pr, const struct err *e);
int cmd_shim(int argc, char **argv);
/* A shim invoked inside a jail: run the real agent directly (never returns on success). */
int cmd_shim_in_jail(const char *exe, char **argv);

/* --backend and the backend interface (cmd/backend.c, doc/design.md §2a). */
/* Take --backend VALUE / --backend=VALUE out of the options before the command (argv and
 * *argc shrink). -1 (said) on a missing or unknown value. */
int cmd_take_backend(int *argc, char **argv, const char **backend);
struct backend;
/* backend = "auto" (the flag's, else the configuration's): choose for this request now, say
 * which and why on stderr (the bwrap jail's line not with --quiet), record why in its policy
 * and set *b. 0, or EXIT_JAIL when no backend can run here (said, with the fix). Nothing when
 * the backend is not auto or the run has no sandbox (danger-full-access). */
int cmd_backend_auto(const char *flag, const struct config *cfg, struct run_request *req,
		     const struct backend **b);
/* What chose the backend, said when it fails: "--backend NAME", `backend = "NAME" at
 * FILE:LINE`, or "the default". malloc'd. */
char *cmd_backend_chosen_by(const char *flag, const struct config *cfg);
/* Run a parsed, validated request with backend b, through the command layer's io (its lines,
 * the session record, the proxy); cfg: the run's configuration, or NULL (read from the
 * workspace when the backend asks for it); chosen_by: what chose b, or NULL. Returns the exit
 * status. */
struct backend;
struct jail;
int cmd_backend_run(const struct backend *b, struct run_request *req, const struct config *cfg,
		    const char *chosen_by);
/* verify: the jail of a request, built exactly as `run` builds it, its errors said (0, or the
 * exit code; jail_free either way); then printed (req->dry_run) or launched with b, nothing
 * recorded. */
int cmd_backend_prepare(struct run_request *req, struct jail *j);
int cmd_backend_jail(const struct backend *b, struct run_request *req, struct jail *j);
/* --dry-run's first line: "would run: CMD ARG…" (shell-quoted), before the plan that
 * otherwise buries the command at the end of init's long line (issue 26). */
void cmd_print_would_run(const struct run_request *req);

/* The session record of one run (cmd/record.c). A store that cannot be opened or written
 * costs one warning; the run goes on. */
struct sess_rec {
	struct store *st;
	char *id;     /* the session recorded, NULL when nothing is */
	bool warned;  /* the one warning was given */
	bool failed;  /* the store could not be opened */
};
/* A new session (before the jail starts); plan NULL when there is no jail. */
void cmd_rec_begin(struct sess_rec *r, const struct run_request *req, const struct bw_plan *plan,
		   const char *bwrap_path);
/* A new attempt of session id (resume); its number, or -1. */
int cmd_rec_attempt(struct sess_rec *r, const char *id, int kind, const struct strv *argv,
		    const char *agent_id);
void cmd_rec_violation(struct sess_rec *r, const char *kind, const char *path, const char *what,
		       const char *moved);
/* An event of another kind (--net ask's "net.ask", "net.answer"); r may be NULL. */
void cmd_rec_event(struct sess_rec *r, const char *kind, const char *detail_json);
/* The detail of an event someone asked for (session.exec, session.stop): who (uid, pid) and,
 * when not NULL, what. A JSON string to free, or NULL. */
char *cmd_who_detail(long uid, long pid, const char *what);
/* The end: status shell-style; cmd_signal the signal the command died of; term_signal the one
 * agentjail received (then the session was killed). */
void cmd_rec_end(struct sess_rec *r, int status, int cmd_signal, int term_signal);
void cmd_rec_close(struct sess_rec *r);
int cmd_sessions(int argc, char **argv);
/* agentjail quarantine [ID | --all] | restore ITEM [--yes] (cmd/quarantine.c) */
int cmd_quarantine(int argc, char **argv);
/* The store when one exists (0; *st NULL and 1 when nothing was recorded yet), or -1 (said). */
struct store;
struct session;
int cmd_store_existing(struct store **st);
/* store_get with the command layer's messages: 0, or the exit code (said). st may be NULL. */
int cmd_session_get(struct store *st, const char *id, struct session *out);
/* The newest session of this workspace (the current directory): 0, or the exit code (said,
 * as "VERB: no session in this workspace …"). st may be NULL. */
int cmd_session_last(struct store *st, const char *verb, struct session *out);
long cmd_utc_offset(void); /* the local offset from UTC, in seconds */
/* agentjail net questions|allow|deny (cmd/net.c) */
int cmd_net(int argc, char **argv);
/* agentjail ps, exec, stop (cmd/jails.c) */
int cmd_ps(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_stop(int argc, char **argv);
/* A line (with fds[0..n) attached) to the control socket of running session id (NULL: the
 * newest of this workspace), and its reply (an "ok" one) in reply; *full: the session's id.
 * 0, or an exit status (said, as "VERB: ...", idle: what a session that is not running
 * means). */
int cmd_session_call(const char *verb, const char *idle, const char *id, const char *line,
		     const int *fds, size_t n, struct strv *reply, char **full);
/* agentjail log [ID | --last] [--json] [--follow] (cmd/log.c) */
int cmd_log(int argc, char **argv);
/* `log ID --suggest [--apply [--yes]]`: the allow_domains entries that would allow what session
 * id (a full id) had denied; --apply adds them to the user's configuration file after asking. */
int cmd_log_suggest(struct store *st, const char *id, bool apply, bool yes);
/* Entries added to allow_domains in the user's configuration file — never a project's — in
 * [agent.NAME] (agent) or [policy] (cmd/log_suggest.c; `log --apply`, --net ask's "always"):
 * cmd_allow_edit reads the file and makes the new text (out NULL, added 0: it has them all),
 * parsed again and checked as the configuration reads it; cmd_allow_write replaces the file
 * with it. -1 with e. */
struct cmd_allow_edit {
	char *path, *header; /* the file, "[policy]" or "[agent.NAME]" */
	char *out;
	size_t out_len, added;
};
int cmd_allow_edit(const char *agent, const struct strv *add, struct cmd_allow_edit *ed,
		   struct err *e) WUR;
int cmd_allow_write(const struct cmd_allow_edit *ed, struct err *e) WUR;
void cmd_allow_edit_free(struct cmd_allow_edit *ed);
int cmd_show(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
/* agentjail --version: its own version, then which bubblewrap it would run and its version
 * (cmd/doctor.c) */
int cmd_version(void);
/* agentjail cache [size | clean] (cmd/cache.c) */
int cmd_cache(int argc, char **argv);
/* agentjail __rescan CACHE_DIR ROOT: a root tree scan's cache renewed, by the detached process
 * a run starts (core/host/etcscan.h, treescan_refresh_detached) (cmd/cache.c) */
int cmd_rescan(int argc, char **argv);
/* agentjail home [ID | --workspace DIR | --all] [clean] (cmd/home.c) */
int cmd_home(int argc, char **argv);
int cmd_verify(int argc, char **argv);
/* agentjail tui: the session manager (cmd/tui/tui.c) */
int cmd_tui(int argc, char **argv);
/* agentjail-init __connect HOST PORT: ssh's ProxyCommand in a --net allow jail (cmd/connect.c) */
int cmd_connect(int argc, char **argv);
/* The configuration (cmd/config.c, doc/design.md §8). */
struct cmd_config {
	struct config cfg;
	struct config_loaded loaded;
	struct policy base; /* what ctx->base points to */
};
/* Load the files for a run (the project of the workspace argv's --workspace names, else of
 * ctx->cwd), refuse an untrusted project's widening keys, set ctx->base (agent: its
 * [agent.NAME] too) and export bwrap/state_dir as AGENTJAIL_BWRAP/AGENTJAIL_STATE_DIR when those
 * are unset. 0, or EXIT_USAGE (said); cmd_config_free either way. */
int cmd_config_ctx(struct cmd_config *cc, int argc, char **argv, const char *agent,
		   struct parse_ctx *ctx);
void cmd_config_free(struct cmd_config *cc);
/* Register the [profile.NAME] of the system and user files (once): 0 or EXIT_USAGE (said). */
int cmd_config_profiles(void);
int cmd_config(int argc, char **argv);
int cmd_trust(int argc, char **argv);
int cmd_untrust(int argc, char **argv);
/* --fs review: a session's change set (cmd/review.c, doc/design.md §3c) */
int cmd_diff(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_discard(int argc, char **argv);
int cmd_checkpoint(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
/* show: the pending change set of a review session (o NULL: as text; else into that JSON
 * object); nothing for another session. */
struct json_t;
void cmd_review_show(const struct session *s, struct json_t *o);
/* The TUI's line about it, or NULL (not a review session). */
char *cmd_review_pending(const struct session *s);
/* rm: the session's change set removed. 0, or -1 (said). */
int cmd_review_forget(const char *id);
/* in-jail probe battery entry point (agentjail __probe) */
int cmd_probe(int argc, char **argv);
/* agentjail-remote __doctor-opensandbox: doctor's opensandbox check as doctor --json prints it
 * (doc/doctor-json.md), only that check; agentjail's doctor merges it (cmd/doctor.c). */
int cmd_osb_doctor(int argc, char **argv);
