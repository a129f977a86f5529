/* `agentjail sessions | show | rm | resume` (the records of each run are made in record.c). */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/backend/backend.h"
#include "core/host/hostfacts_probe.h"
#include "core/plan/homekeep.h"
#include "core/plan/profile.h"
#include "core/plan/resolve.h"
#include "core/session/netfmt.h"
#include "core/session/sessfmt.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/path.h"
#include "util/xalloc.h"
#include "util/clock.h"
#include "util/uuid.h"

/* A resume rung that fails within this long is followed by the next rung. */
#define RESUME_FAST_MS 5000
/* `show` names at most this many denied host:port pairs */
#define SHOW_DENIED_MAX 10
/* `show` lists at most this many events, the latest (agentjail log has them all) */
#define SHOW_EVENTS_MAX 20

static const char show_usage[] =
	"usage: agentjail show ID [--json]\n"
	"  one session in full: command, policy, attempts, events\n"
	"  ID       a session id or a unique prefix of one (agentjail sessions lists them)\n"
	"  --json   one JSON document\n"
	"example: agentjail show 3f2a\n";
static const char rm_usage[] =
	"usage: agentjail rm ID...\n"
	"  forget sessions (a running one is kept)\n"
	"  ID   a session id or a unique prefix of one (agentjail sessions lists them)\n"
	"example: agentjail rm 3f2a 9c01\n";
static const char resume_usage[] =
	"usage: agentjail resume [ID | --last] [--dry-run] [--quiet]\n"
	"  run a session again with its stored sandbox (the agent's own resume first)\n"
	"  ID        a session id or a unique prefix of one (agentjail sessions lists them)\n"
	"  --last    the newest session of this workspace (the default without ID)\n"
	"  --dry-run print what would run, and run nothing\n"
	"  --quiet   no line saying what runs again, no start and end lines\n"
	"example: agentjail resume --last\n";

static bool is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }
static int help(const char *text)
{
	fputs(text, stdout);
	return 0;
}

/* ---- sessions, show, rm ------------------------------------------------------------------ */

/* show's "home" line: the persisted home a --home persist session had. */
static void show_home(const struct session *s)
{
	struct policy pol;
	struct err e = {0};
	if (!s->policy_json || policy_from_json(s->policy_json, &pol, &e) < 0)
		return;
	if (pol.home == HOME_PERSIST) {
		_cleanup_free_ char *state = cmd_state_dir();
		_cleanup_free_ char *dir = homekeep_dir(state, pol.workspace);
		_cleanup_free_ char *d = fmt_clean(dir ? dir : "?");
		_cleanup_free_ char *id = fmt_clean(s->id);
		printf("home       persist: %s (agentjail home %.8s)\n", d, id);
	}
	policy_free(&pol);
}

static int open_existing(struct store **st)
{
	_cleanup_free_ char *dir = cmd_state_dir();
	_cleanup_free_ char *db = path_join(dir, STORE_DB_NAME);
	struct stat sb;
	if (stat(db, &sb) < 0) {
		*st = NULL;
		return 1; /* nothing recorded yet */
	}
	struct err e = {0};
	if (store_open(dir, NULL, st, &e) < 0) {
		cmd_print_err(&e);
		return -1;
	}
	return 0;
}

static long utc_offset(void)
{
	time_t now = time(NULL);
	struct tm tm;
	return localtime_r(&now, &tm) ? tm.tm_gmtoff : 0;
}

static json_t *session_json(const struct session *s)
{
	json_t *argv = json_array();
	for (size_t i = 0; i < s->argv.n; i++) {
		json_t *v = json_string(s->argv.v[i]);
		json_array_append_new(argv, v ? v : json_string("?"));
	}
	json_t *pol = s->policy_json ? json_loads(s->policy_json, 0, NULL) : NULL;
	json_t *o = json_pack("{s:s, s:s?, s:o, s:s?, s:o, s:s, s:i, s:s?, s:I, s:I, s:I, s:i, s:I, "
			      "s:I}",
			      "id", s->id, "profile", s->profile, "argv", argv, "workspace",
			      s->workspace, "policy", pol ? pol : json_null(), "status",
			      sess_status_name(s->status), "exit_status", s->exit_status,
			      "agent_session_id", s->agent_session_id, "pid", (json_int_t)s->pid,
			      "started_ms", (json_int_t)s->started_ms, "ended_ms",
			      (json_int_t)s->ended_ms, "attempts", s->attempts, "events",
			      (json_int_t)s->n_events, "violations", (json_int_t)s->n_violations);
	if (!o)
		o = json_pack("{s:s}", "id", s->id);
	if (s->backend)
		json_object_set_new(o, "backend",
				    json_pack("{s:s, s:s?, s:s?}", "name", s->backend, "url",
					      s->backend_url, "sandbox_id", s->sandbox_id));
	char *summary = sessfmt_policy(s->policy_json ? s->policy_json : "");
	json_object_set_new(o, "policy_summary", json_string(summary));
	free(summary);
	json_object_set_new(o, "net_allowed", json_integer(s->n_net_allowed));
	json_object_set_new(o, "net_denied", json_integer(s->n_net_denied));
	json_object_set_new(o, "net_failed", json_integer(s->n_net_failed));
	return o;
}

/* A JSON string of text from the store that may not be UTF-8 (the jail chose it). */
static json_t *jtext(const char *t)
{
	json_t *j = json_string(t ? t : "");
	if (!j) {
		char *c = fmt_clean(t);
		j = json_string(c);
		free(c);
	}
	return j ? j : json_string("?");
}

/* show --json: requests by host and port, each with its first reason (or upstream error). */
static json_t *by_host_json(const struct net_count *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:o, s:i, s:I, s:o}", "host", jtext(v[i].host),
						   "port", v[i].port, "count", (json_int_t)v[i].n,
						   "reason", jtext(v[i].why)));
	return a;
}

static void print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	printf("%s\n", s ? s : "null");
	free(s);
	json_decref(j);
}

int cmd_sessions(int argc, char **argv)
{
	bool all = false, json = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--all"))
			all = true;
		else if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: agentjail sessions [--all] [--json]\n"
			       "  the sessions of this workspace (all of them with --all), newest "
			       "first\n"
			       "  --all    every workspace's sessions\n"
			       "  --json   one JSON array\n"
			       "example: agentjail sessions --all\n");
			return 0;
		} else {
			static const char *const known[] = {"--all", "--json", "--help", NULL};
			return cmd_unknown("sessions", "argument", argv[i], known);
		}
	}
	_cleanup_store_ struct store *st = NULL;
	int o = open_existing(&st);
	if (o < 0)
		return 1;
	_cleanup_free_ char *ws = realpath(".", NULL); /* this workspace */
	struct session *v = NULL;
	size_t n = 0;
	struct err e = {0};
	if (st && store_list(st, all ? NULL : ws, 0, &v, &n, &e) < 0) {
		cmd_print_err(&e);
		return 1;
	}
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, session_json(&v[i]));
		print_json(a);
	} else if (n == 0) {
		printf("no sessions %s yet%s\n", all ? "recorded" : "in this workspace",
		       all ? "" : " (agentjail sessions --all shows every workspace)");
	} else {
		struct winsize w = {0};
		struct sessfmt_opts fo = {.now_ms = store_now_ms(),
					  .utc_offset_s = utc_offset(),
					  .workspace = all,
					  .home = getenv("HOME")};
		if (isatty(1) && ioctl(1, TIOCGWINSZ, &w) == 0)
			fo.width = w.ws_col;
		char *t = sessfmt_sessions(v, n, &fo);
		fputs(t, stdout);
		free(t);
	}
	sessions_free(v, n);
	return 0;
}

/* store_get with the command layer's messages; 0, or the exit code. */
static int get_session(struct store *st, const char *id, struct session *out)
{
	struct err e = {0};
	int rc = st ? store_get(st, id, out, &e) : STORE_NONE;
	if (rc == 0)
		return 0;
	if (!st)
		cmd_warn("no session %s: nothing has been recorded yet", id);
	else
		cmd_print_err(&e);
	return rc == STORE_NONE || rc == STORE_AMBIGUOUS ? EXIT_USAGE : 1;
}

int cmd_store_existing(struct store **st) { return open_existing(st); }
int cmd_session_get(struct store *st, const char *id, struct session *out)
{
	return get_session(st, id, out);
}
long cmd_utc_offset(void) { return utc_offset(); }

int cmd_show(int argc, char **argv)
{
	bool json = false;
	const char *id = NULL;
	for (int i = 0; i < argc; i++) {
		if (is_help(argv[i]))
			return help(show_usage);
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (argv[i][0] != '-' && !id)
			id = argv[i];
		else {
			cmd_warn("usage: agentjail show ID [--json]");
			return EXIT_USAGE;
		}
	}
	if (!id) {
		cmd_warn("usage: agentjail show ID [--json] (agentjail sessions lists the ids)");
		return EXIT_USAGE;
	}
	_cleanup_store_ struct store *st = NULL;
	if (open_existing(&st) < 0)
		return 1;
	struct session s;
	int rc = get_session(st, id, &s);
	if (rc) {
		return rc;
	}
	struct attempt *at = NULL;
	size_t nat = 0;
	struct err e = {0};
	if (store_attempts(st, s.id, &at, &nat, &e) < 0)
		cmd_print_err(&e);
	struct net_count *den = NULL, *fail = NULL;
	size_t nden = 0, nfail = 0;
	if (s.n_net_denied > 0 &&
	    store_net_counts(st, s.id, NET_DENIED, SHOW_DENIED_MAX, &den, &nden, &e) < 0)
		cmd_print_err(&e);
	if (s.n_net_failed > 0 &&
	    store_net_counts(st, s.id, NET_FAILED, SHOW_DENIED_MAX, &fail, &nfail, &e) < 0)
		cmd_print_err(&e);
	struct event *ev = NULL;
	size_t nev = 0;
	if (s.n_events > 0 && store_events(st, s.id, &ev, &nev, &e) < 0)
		cmd_print_err(&e);
	if (json) {
		json_t *o = session_json(&s);
		json_t *atts = json_array();
		for (size_t i = 0; i < nat; i++) {
			json_t *av = json_array();
			for (size_t k = 0; k < at[i].argv.n; k++) {
				json_t *js = json_string(at[i].argv.v[k]);
				json_array_append_new(av, js ? js : json_string("?"));
			}
			json_array_append_new(
				atts, json_pack("{s:i, s:s, s:o, s:s, s:i, s:I, s:I}", "n", at[i].n,
						"kind", attempt_kind_name(at[i].kind), "argv", av,
						"status", sess_status_name(at[i].status),
						"exit_status", at[i].exit_status, "started_ms",
						(json_int_t)at[i].started_ms, "ended_ms",
						(json_int_t)at[i].ended_ms));
		}
		json_object_set_new(o, "attempts_detail", atts);
		json_object_set_new(o, "net_denied_by_host", by_host_json(den, nden));
		json_object_set_new(o, "net_failed_by_host", by_host_json(fail, nfail));
		json_t *ej = json_array();
		for (size_t i = 0; i < nev; i++) {
			json_t *d = ev[i].detail_json ? json_loads(ev[i].detail_json, 0, NULL) : NULL;
			json_t *k = json_string(ev[i].kind ? ev[i].kind : "");
			json_array_append_new(ej, json_pack("{s:I, s:i, s:I, s:o, s:o}", "seq",
							    (json_int_t)ev[i].seq, "attempt",
							    ev[i].attempt, "at_ms",
							    (json_int_t)ev[i].at_ms, "kind",
							    k ? k : json_string("?"), "detail",
							    d ? d : json_null()));
		}
		json_object_set_new(o, "events_detail", ej);
		json_t *bw = s.bwrap_json ? json_loads(s.bwrap_json, 0, NULL) : NULL;
		json_object_set_new(o, "bwrap_argv", bw ? bw : json_null());
		cmd_review_show(&s, o);
		print_json(o);
	} else {
		long off = utc_offset();
		_cleanup_free_ char *started = sessfmt_time(s.started_ms, off);
		_cleanup_free_ char *ago = sessfmt_ago(s.started_ms, store_now_ms(), off);
		_cleanup_free_ char *status = sessfmt_status(s.status, s.exit_status);
		_cleanup_free_ char *pol = sessfmt_policy(s.policy_json ? s.policy_json : "");
		_cleanup_free_ char *cmdline = sessfmt_argv(&s.argv);
		_cleanup_free_ char *ws = fmt_clean(s.workspace ? s.workspace : "");
		long long from = s.last_started_ms ? s.last_started_ms : s.started_ms;
		_cleanup_free_ char *took =
			s.ended_ms ? sessfmt_duration(s.ended_ms - from) : xstrdup("-");
		printf("session    %s\n", s.id);
		printf("profile    %s\n", s.profile ? s.profile : "(run)");
		printf("command    %s\n", cmdline);
		printf("workspace  %s\n", ws);
		_cleanup_free_ char *pj = fmt_clean(s.policy_json ? s.policy_json : "");
		printf("policy     %s  %s\n", pol, pj);
		show_home(&s);
		printf("started    %s (%s)\n", started, ago);
		printf("status     %s (took %s)\n", status, took);
		if (s.agent_session_id) {
			_cleanup_free_ char *a = fmt_clean(s.agent_session_id);
			printf("agent id   %s\n", a);
		}
		if (s.backend) {
			_cleanup_free_ char *b = fmt_clean(s.backend);
			_cleanup_free_ char *u = fmt_clean(s.backend_url ? s.backend_url : "");
			_cleanup_free_ char *x = fmt_clean(s.sandbox_id ? s.sandbox_id : "-");
			printf("backend    %s %s (sandbox %s)\n", b, u, x);
		}
		cmd_review_show(&s, NULL);
		printf("events     %lld (%lld violations)\n", s.n_events, s.n_violations);
		size_t first = nev > SHOW_EVENTS_MAX ? nev - SHOW_EVENTS_MAX : 0;
		if (first)
			printf("  … %zu earlier\n", first);
		for (size_t i = first; i < nev; i++) {
			_cleanup_free_ char *l = netfmt_log_violation(&ev[i], off, 0);
			printf("  %s\n", l);
		}
		if (nev > 0 || s.n_net_allowed + s.n_net_denied > 0)
			printf("           agentjail log %s lists them with the network decisions\n",
			       s.id);
		if (s.n_net_allowed + s.n_net_denied > 0) {
			_cleanup_free_ char *net =
				netfmt_summary(s.n_net_allowed, s.n_net_failed, s.n_net_denied, fail,
					       nfail, den, nden, 400);
			printf("network    %s\n", net);
		}
		/* the "ago" column as wide as its widest cell, so the rows align */
		int agew = 0;
		for (size_t i = 0; i < nat; i++) {
			_cleanup_free_ char *aw = sessfmt_ago(at[i].started_ms, store_now_ms(), off);
			if ((int)strlen(aw) > agew)
				agew = (int)strlen(aw);
		}
		for (size_t i = 0; i < nat; i++) {
			_cleanup_free_ char *ac = sessfmt_argv(&at[i].argv);
			_cleanup_free_ char *as = sessfmt_status(at[i].status, at[i].exit_status);
			_cleanup_free_ char *aw = sessfmt_ago(at[i].started_ms, store_now_ms(), off);
			printf("attempt %d  %-6s %-*s  %s  %s\n", at[i].n,
			       attempt_kind_name(at[i].kind), agew, aw, as, ac);
		}
	}
	attempts_free(at, nat);
	events_free(ev, nev);
	net_counts_free(den, nden);
	net_counts_free(fail, nfail);
	session_free(&s);
	return 0;
}

int cmd_rm(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (is_help(argv[i]))
			return help(rm_usage);
	if (argc < 1) {
		cmd_warn("usage: agentjail rm ID... (agentjail sessions lists the ids)");
		return EXIT_USAGE;
	}
	_cleanup_store_ struct store *st = NULL;
	if (open_existing(&st) < 0)
		return 1;
	int rc = 0;
	for (int i = 0; i < argc; i++) {
		struct session s;
		int g = get_session(st, argv[i], &s);
		if (g) {
			rc = g;
			continue;
		}
		struct err e = {0};
		if (s.status == SESS_RUNNING) {
			cmd_warn("session %s is running (agentjail pid %ld): not removed", s.id, s.pid);
			rc = 1;
		} else if (cmd_review_forget(s.id) < 0) {
			cmd_warn("session %s: its change set (--fs review) could not be removed: the "
				 "session is kept",
				 s.id);
			rc = 1;
		} else if (store_rm(st, s.id, &e) < 0) {
			cmd_print_err(&e);
			rc = 1;
		} else {
			printf("removed %s\n", s.id);
		}
		session_free(&s);
	}
	return rc;
}

/* ---- resume ------------------------------------------------------------------------------ */

/* The stored policy, ready to run again: --env values were never stored, so those variables
 * pass through from the host now (when set), with a note. */
static int stored_policy(const struct session *s, struct policy *pol)
{
	struct err e = {0};
	if (!s->policy_json || policy_from_json(s->policy_json, pol, &e) < 0) {
		if (!s->policy_json)
			err_set(&e, 0, s->id, "the session has no stored policy");
		cmd_print_err(&e);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < pol->env.n; i++) {
		char *eq = strchr(pol->env.v[i], '=');
		if (!eq)
			continue;
		*eq = '\0';
		cmd_warn("resume: the value given with --env %s was not stored; %s passes through "
			 "from this environment if set",
			 pol->env.v[i], pol->env.v[i]);
	}
	struct stat sb;
	if (stat(pol->workspace, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		cmd_warn("resume: the session's workspace %s is gone", pol->workspace);
		return EXIT_USAGE;
	}
	/* a stored --rw/--ro path removed since: said here, with the session, not as a flag's typo */
	const struct strv *binds[] = {&pol->rw, &pol->ro};
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < binds[k]->n; i++) {
			const char *p = binds[k]->v[i];
			if (stat(p, &sb) == 0 || errno != ENOENT)
				continue;
			cmd_warn("resume: session %s: its %s path %s no longer exists; create it again "
				 "to resume, or start a new session without it",
				 s->id, k ? "--ro" : "--rw", p);
			return EXIT_USAGE;
		}
	return 0;
}

/* The ladder for an agent: its resume form, then (when that fails at once) a fresh start of
 * the same agent with the same policy. Each rung is an attempt of the session. */
static int resume_agent(const struct profile *pr, const struct session *s, struct run_request *req)
{
	int rc = 0;
	struct resolved res = {0};
	struct err e = {0};
	const char *home = getenv("HOME");
	if (home && home[0] == '/') {
		/* the profile's paths as this agentjail knows them: a session stored before it
		 * learned another place where the agent runs code from resumes with that place
		 * protected */
		struct strv env = STRV_INIT;
		strv_push_all(&env, environ);
		profile_apply_paths(pr, home, &env, &req->pol);
		strv_free(&env);
	}
	if (cmd_find_agent(pr, home ? home : "/", req->pol.workspace, &res, &e) < 0) {
		cmd_agent_missing(pr, &e);
		return EXIT_NOTFOUND;
	}
	bool sandboxed = req->pol.fs != FS_DANGER_FULL;
	struct strv user_args = STRV_INIT; /* what the user gave the agent: argv[1…] */
	for (size_t i = 1; i < s->argv.n; i++)
		strv_push(&user_args, s->argv.v[i]);
	/* rung 1: the agent's own resume form */
	bool fresh = profile_resume_argv(pr, res.path, sandboxed, s->agent_session_id, &req->cmd) < 0;
	if (!fresh) {
		req->attempt_kind = ATTEMPT_RESUME;
		long long t0 = clock_mono_ms();
		rc = cmd_agent_run_request(pr, req);
		bool quick = clock_mono_ms() - t0 < RESUME_FAST_MS;
		fresh = !req->dry_run && rc != 0 && quick && rc != EXIT_JAIL && !req->interrupted;
		if (fresh)
			cmd_warn("resume: `%s` failed at once (exit %d); starting %s afresh with the "
				 "same sandbox",
				 req->cmd.v[0], rc, pr->name);
	}
	const char *once = fresh ? profile_oneshot_arg(pr, &user_args) : NULL;
	if (once) {
		/* a one-shot task (claude -p PROMPT): a fresh start would run it again, unasked */
		struct strbuf given = STRBUF_INIT;
		for (size_t i = 0; i < s->argv.n; i++)
			sb_addf(&given, "%s%s", i ? " " : "", s->argv.v[i]);
		cmd_warn("resume: `%s` was a one-shot run (%s): a fresh start would send its prompt "
			 "again, so nothing was started; to run the task again: agentjail %s -- %s "
			 "…; to start %s afresh: agentjail %s",
			 sb_str(&given), once, pr->name, once, pr->name, pr->name);
		sb_free(&given);
		fresh = false;
		if (rc == 0)
			rc = EXIT_USAGE; /* nothing ran */
	}
	if (fresh) {
		/* rung 2: a fresh start of the same agent, same policy, a new agent session */
		strv_free(&req->cmd);
		free(req->agent_session_id);
		req->agent_session_id = NULL;
		if (pr->session_flag && !profile_args_choose_session(pr, &user_args) &&
		    !(req->agent_session_id = uuid_v4_new(&e))) {
			cmd_print_err(&e);
			strv_free(&user_args);
			resolved_free(&res);
			return EXIT_JAIL;
		}
		profile_argv(pr, res.path, sandboxed, req->agent_session_id, &user_args, &req->cmd);
		req->attempt_kind = ATTEMPT_FRESH;
		rc = cmd_agent_run_request(pr, req);
	}
	strv_free(&user_args);
	resolved_free(&res);
	return rc;
}

/* The session to resume: id, or the last one of this workspace. 0, or the exit code (said). */
int cmd_session_last(struct store *st, const char *verb, struct session *out)
{
	_cleanup_free_ char *ws = realpath(".", NULL); /* this workspace */
	struct session *v = NULL;
	size_t n = 0;
	struct err e = {0};
	if (st && store_list(st, ws, 1, &v, &n, &e) < 0) {
		cmd_print_err(&e);
		return 1;
	}
	if (n == 0) {
		cmd_warn("%s: no session in this workspace (agentjail sessions --all, then "
			 "agentjail %s ID)",
			 verb, verb);
		return EXIT_USAGE;
	}
	int g = get_session(st, v[0].id, out);
	sessions_free(v, n);
	return g;
}

static int find_session(const char *id, bool last, struct session *s)
{
	_cleanup_store_ struct store *st = NULL;
	if (open_existing(&st) < 0)
		return 1;
	if (last)
		return cmd_session_last(st, "resume", s);
	return get_session(st, id, s);
}

int cmd_resume(int argc, char **argv)
{
	const char *id = NULL;
	bool last = false, dry = false, quiet = false;
	for (int i = 0; i < argc; i++) {
		if (is_help(argv[i]))
			return help(resume_usage);
		if (!strcmp(argv[i], "--last"))
			last = true;
		else if (!strcmp(argv[i], "--dry-run"))
			dry = true;
		else if (!strcmp(argv[i], "--quiet"))
			quiet = true;
		else if (argv[i][0] != '-' && !id)
			id = argv[i];
		else {
			static const char *const known[] = {"--last", "--dry-run", "--quiet", "--help",
							    NULL};
			return cmd_unknown("resume", "argument", argv[i], known);
		}
	}
	if ((id && last) || (!id && !last))
		last = !id;
	struct session s = {0};
	int g = find_session(id, last, &s);
	if (g)
		return g;
	int rc;
	struct run_request req = {0};
	const struct profile *pr = NULL;
	/* where it ran: its row's backend (remote), else its policy's, read below */
	const struct backend *b = backend_of_session(s.backend, BACKEND_LOCAL);
	if (!backend_here(b)) {
		cmd_warn("agentjail-remote resumes only sessions of --backend opensandbox: `agentjail "
			 "resume %s`",
			 s.id);
		rc = EXIT_USAGE;
		goto out;
	}
	if (s.status == SESS_RUNNING) {
		cmd_warn("session %s is still running (agentjail pid %ld)", s.id, s.pid);
		rc = EXIT_USAGE;
		goto out;
	}
	rc = stored_policy(&s, &req.pol);
	if (rc)
		goto out;
	b = backend_of_session(s.backend, req.pol.backend);
	if (req.pol.backend_auto && !quiet) /* where it ran is where it resumes: never re-chosen */
		cmd_warn("resume: session %s ran on the %s backend, chosen by backend = auto (%s); it "
			 "resumes there (for a new choice, start a new session)",
			 s.id, b->name, req.pol.backend_auto);
	if (chdir(req.pol.workspace) < 0) {
		cmd_warn("resume: cannot enter %s: %s", req.pol.workspace, strerror(errno));
		rc = EXIT_USAGE;
		goto out;
	}
	req.dry_run = dry;
	req.quiet = quiet;
	req.session_id = xstrdup(s.id);
	req.resume = true;
	strv_copy(&req.record_argv, &s.argv);

	pr = req.pol.profile ? profile_find(req.pol.profile) : NULL;
	if (req.pol.profile && !pr && cmd_config_profiles() == 0)
		pr = profile_find(req.pol.profile); /* a [profile.NAME]: the policy stays stored */
	if (req.pol.profile && !pr) {
		cmd_warn("resume: the session's profile %s is unknown to this agentjail",
			 req.pol.profile);
		rc = EXIT_USAGE;
		goto out;
	}
	if (!pr) {
		/* a generic command resumes by running again (a remote one in a new sandbox): said
		 * once (not with --quiet), by the program that runs it */
		if (b->elsewhere) {
			rc = cmd_backend_run(b, &req, NULL, NULL); /* agentjail-remote resumes it */
			goto out;
		}
		strv_copy(&req.cmd, &s.argv);
		if (!quiet && !dry) {
			_cleanup_free_ char *c = sessfmt_argv(&s.argv);
			cmd_warn("resuming session %s: running %s again with its stored sandbox", s.id,
				 c);
		}
		req.attempt_kind = ATTEMPT_FRESH;
		rc = cmd_backend_run(b, &req, NULL, "the session, which ran on it");
		goto out;
	}
	rc = resume_agent(pr, &s, &req);
out:
	session_free(&s);
	run_request_free(&req);
	return rc;
}
