/* The session record of every run (doc/design.md §5): the one place the command layer writes
 * the store while a jail runs. A store that cannot be opened or written costs one warning. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/session/evdetail.h"
#include "cmd/netsink.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

static void rec_warn(struct sess_rec *r, const struct err *e)
{
	if (r->warned)
		return;
	r->warned = true;
	char buf[ERR_FMT_MAX];
	err_format(e, buf, sizeof buf);
	cmd_warn("this run is not recorded in the session store (%s); it runs anyway", buf);
}

static struct store *rec_store(struct sess_rec *r)
{
	if (r->st || r->failed)
		return r->st;
	_cleanup_free_ char *dir = cmd_state_dir();
	struct err e = {0};
	if (store_open(dir, NULL, &r->st, &e) < 0) {
		r->failed = true;
		r->st = NULL;
		rec_warn(r, &e);
	}
	return r->st;
}

void cmd_rec_begin(struct sess_rec *r, const struct run_request *req, const struct bw_plan *plan,
		   const char *bwrap_path)
{
	if (!req->session_id || !rec_store(r))
		return;
	struct session s = {0};
	s.id = req->session_id;
	s.profile = req->pol.profile;
	s.argv = req->record_argv.n ? req->record_argv : req->cmd;
	s.spawned = req->record_argv.n && req->cmd.n ? &req->cmd : NULL; /* attempt 1 as run */
	s.workspace = req->pol.workspace;
	s.policy_json = policy_to_json(&req->pol);
	if (plan) {
		struct strv argv = STRV_INIT;
		bw_plan_argv_redacted(plan, bwrap_path ? bwrap_path : "bwrap", &argv);
		json_t *a = json_array();
		for (size_t i = 0; i < argv.n; i++) {
			json_t *v = json_string(argv.v[i]);
			json_array_append_new(a, v ? v : json_pack("{s:s}", "hex", "?"));
		}
		s.bwrap_json = json_dumps(a, JSON_COMPACT);
		json_decref(a);
		strv_free(&argv);
	}
	s.agent_session_id = req->agent_session_id;
	s.pid = getpid();
	struct err e = {0};
	if (store_proc_start(0, &s.pid_start, &e) < 0 || store_begin(r->st, &s, &e) < 0) {
		rec_warn(r, &e);
	} else {
		r->id = xstrdup(s.id);
	}
#ifdef AJ_TEST_BUILD
	/* the proxy's events, injected (tests/sh/81-netlog.t) */
	netsink_test_feed(r->st, r->id, "AGENTJAIL_TEST_NET_EVENTS");
#endif
	free(s.policy_json);
	free(s.bwrap_json);
}

int cmd_rec_attempt(struct sess_rec *r, const char *id, int kind, const struct strv *argv,
		    const char *agent_id)
{
	if (!rec_store(r))
		return -1;
	struct err e = {0};
	long long start = 0;
	int n = store_proc_start(0, &start, &e) < 0
			? -1
			: store_attempt_begin(r->st, id, (enum attempt_kind)kind, argv, getpid(),
					      start, &e);
	if (n < 0) {
		rec_warn(r, &e);
		return -1;
	}
	free(r->id);
	r->id = xstrdup(id);
	if (agent_id && store_set_agent_session_id(r->st, id, agent_id, &e) < 0)
		rec_warn(r, &e);
	return n;
}

void cmd_rec_violation(struct sess_rec *r, const char *kind, const char *path, const char *what,
		       const char *moved)
{
	if (!r->id)
		return;
	/* path, what and moved_to hold names a jail chose: kept exactly (evdetail.h) */
	json_t *o = json_object();
	evdetail_set(o, "path", path);
	evdetail_set(o, "what", what);
	evdetail_set(o, "moved_to", moved);
	char *d = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	struct err e = {0};
	if (store_add_event(r->st, r->id, kind, d, &e) < 0)
		rec_warn(r, &e);
	free(d);
}

char *cmd_who_detail(long uid, long pid, const char *what)
{
	json_t *o = json_pack("{s:I, s:I}", "uid", (json_int_t)uid, "pid", (json_int_t)pid);
	if (o && what)
		json_object_set_new(o, "what", json_string(what));
	char *d = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(o);
	return d;
}

void cmd_rec_event(struct sess_rec *r, const char *kind, const char *detail_json)
{
	if (!r || !r->id)
		return;
	struct err e = {0};
	if (store_add_event(r->st, r->id, kind, detail_json, &e) < 0)
		rec_warn(r, &e);
}

void cmd_rec_end(struct sess_rec *r, int status, int cmd_signal, int term_signal)
{
	if (!r->id)
		return;
	enum sess_status st = SESS_EXITED;
	int code = status;
	if (term_signal) {
		st = SESS_KILLED;
		code = term_signal;
	} else if (cmd_signal) {
		st = SESS_SIGNALLED;
		code = cmd_signal;
	}
#ifdef AJ_TEST_BUILD
	/* the proxy's last events, then its report, before the session ends (netsink.h) */
	netsink_test_feed(r->st, r->id, "AGENTJAIL_TEST_NET_EVENTS_END");
	netsink_test_end();
#endif
	struct err e = {0};
	if (store_finish(r->st, r->id, st, code, 0, &e) < 0)
		rec_warn(r, &e);
}

void cmd_rec_close(struct sess_rec *r)
{
	store_close(r->st);
	free(r->id);
	memset(r, 0, sizeof *r);
}
