/* store: the session store. See store.h for the rules; this file is the queries (see
 * store_open.c for opening the database and its migrations). */
#include "core/session/store_internal.h"

#include "core/plan/jstr.h"

static const char *const status_names[] = {
	[SESS_RUNNING] = "running", [SESS_EXITED] = "exited", [SESS_SIGNALLED] = "signalled",
	[SESS_KILLED] = "killed",   [SESS_LOST] = "lost",
};
static const char *const kind_names[] = {
	[ATTEMPT_START] = "start",
	[ATTEMPT_RESUME] = "resume",
	[ATTEMPT_FRESH] = "fresh",
};

const char *sess_status_name(enum sess_status s)
{
	return (unsigned)s < sizeof status_names / sizeof *status_names ? status_names[s] : "?";
}

int sess_status_parse(const char *s, enum sess_status *out)
{
	for (size_t i = 0; i < sizeof status_names / sizeof *status_names; i++) {
		if (s && !strcmp(s, status_names[i])) {
			*out = (enum sess_status)i;
			return 0;
		}
	}
	return -1;
}

const char *attempt_kind_name(enum attempt_kind k)
{
	return (unsigned)k < sizeof kind_names / sizeof *kind_names ? kind_names[k] : "?";
}

int attempt_kind_parse(const char *s, enum attempt_kind *out)
{
	for (size_t i = 0; i < sizeof kind_names / sizeof *kind_names; i++) {
		if (s && !strcmp(s, kind_names[i])) {
			*out = (enum attempt_kind)i;
			return 0;
		}
	}
	return -1;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	free(s->id);
	free(s->profile);
	strv_free(&s->argv);
	free(s->workspace);
	free(s->policy_json);
	free(s->bwrap_json);
	free(s->agent_session_id);
	free(s->backend);
	free(s->backend_url);
	free(s->sandbox_id);
	memset(s, 0, sizeof *s);
}

void sessions_free(struct session *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		session_free(&v[i]);
	free(v);
}

void attempts_free(struct attempt *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strv_free(&v[i].argv);
	free(v);
}

void events_free(struct event *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].kind);
		free(v[i].detail_json);
	}
	free(v);
}

/* ---- errors ---- */

/* Fill e from SQLite's state after a failure with result rc. Read before any rollback (which
 * replaces the message). Always -1. */
int st_db_fail(struct store *st, int rc, const char *doing, struct err *e)
{
	int prim = rc & 0xff;
	int sys = 0;
	if (st->db && (prim == SQLITE_IOERR || prim == SQLITE_CANTOPEN || prim == SQLITE_FULL ||
		       prim == SQLITE_READONLY))
		sys = sqlite3_system_errno(st->db);
	st->last_rc = rc;
	err_set(e, sys, st->path, "%s: %s", doing,
		st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
	switch (prim) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		err_hint(e, "another agentjail kept the session database locked for more than %d ms; "
			    "try again",
			 st->busy_ms);
		break;
	case SQLITE_FULL:
		err_hint(e, "the disk is full: free some space; nothing was half-written");
		break;
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		err_hint(e, "%s and the database in it must be writable by you, or set "
			    "AGENTJAIL_STATE_DIR to a directory that is",
			 st->dir);
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		err_hint(e, "the session database is damaged: move %s aside and a new one is "
			    "created",
			 st->path);
		break;
	default:
		break;
	}
	return -1;
}

int st_none(struct err *e, const char *id)
{
	err_set(e, 0, id, "no such session");
	err_hint(e, "`agentjail sessions` lists them");
	return STORE_NONE;
}

/* ---- statements ---- */

/* Bind the arguments described by `types` to s: 's' a const char * (NULL binds NULL), 'i' an
 * int, 'L' a long long, 'N' a long long that binds NULL when negative (an exit status not
 * known). */
static int st_vbind(struct store *st, sqlite3_stmt *s, const char *doing, struct err *e,
		    const char *types, va_list ap)
{
	int rc = SQLITE_OK;
	for (int i = 0; rc == SQLITE_OK && types[i]; i++) {
		if (types[i] == 's') {
			const char *v = va_arg(ap, const char *);
			rc = v ? sqlite3_bind_text(s, i + 1, v, -1, SQLITE_TRANSIENT)
			       : sqlite3_bind_null(s, i + 1);
		} else if (types[i] == 'i') {
			rc = sqlite3_bind_int(s, i + 1, va_arg(ap, int));
		} else if (types[i] == 'N') {
			long long v = va_arg(ap, long long);
			rc = v < 0 ? sqlite3_bind_null(s, i + 1) : sqlite3_bind_int64(s, i + 1, v);
		} else {
			rc = sqlite3_bind_int64(s, i + 1, va_arg(ap, long long));
		}
	}
	return rc == SQLITE_OK ? 0 : st_db_fail(st, rc, doing, e);
}

static int st_bind(struct store *st, sqlite3_stmt *s, const char *doing, struct err *e,
		   const char *types, ...)
{
	va_list ap;
	va_start(ap, types);
	int r = st_vbind(st, s, doing, e, types, ap);
	va_end(ap);
	return r;
}

/* Prepare sql and bind the arguments described by `types` (st_vbind). */
int st_prep(struct store *st, sqlite3_stmt **out, const char *doing, struct err *e,
		const char *sql, const char *types, ...)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return st_db_fail(st, rc, doing, e);
	va_list ap;
	va_start(ap, types);
	int r = st_vbind(st, s, doing, e, types, ap);
	va_end(ap);
	if (r < 0) {
		sqlite3_finalize(s);
		return -1;
	}
	*out = s;
	return 0;
}

/* Run a statement that returns no row. */
int st_step_done(struct store *st, sqlite3_stmt *s, const char *doing, struct err *e)
{
	int rc = sqlite3_step(s);
	return rc == SQLITE_DONE ? 0 : st_db_fail(st, rc, doing, e);
}

/* Step to the next row: 1 a row, 0 done, -1 error. */
int st_step_row(struct store *st, sqlite3_stmt *s, const char *doing, struct err *e)
{
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : st_db_fail(st, rc, doing, e);
}

int st_exec_sql(struct store *st, const char *sql, const char *doing, struct err *e)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : st_db_fail(st, rc, doing, e);
}

int st_tx_begin(struct store *st, const char *doing, struct err *e)
{
	return st_exec_sql(st, "BEGIN IMMEDIATE", doing, e);
}

static void tx_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		(void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/* End the transaction begun by tx_begin: commit when rc >= 0 (then rc, or -1 if the commit
 * failed), else roll back and return rc. */
int st_tx_end(struct store *st, int rc, const char *doing, struct err *e)
{
	if (rc >= 0 && st_exec_sql(st, "COMMIT", doing, e) < 0)
		rc = -1;
	if (rc < 0)
		tx_rollback(st);
	return rc;
}

char *st_col_str(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	return t ? xstrdup((const char *)t) : NULL;
}

static long long col_ll_or(sqlite3_stmt *s, int i, long long dflt)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? dflt : sqlite3_column_int64(s, i);
}

/* ---- argv as JSON: an array of strings; one that is not UTF-8 is {"hex": "…"} ---- */

static char *argv_json(const struct strv *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++) {
		json_t *j = jstr(v->v[i]);
		if (!j || json_array_append_new(a, j) < 0)
			abort();
	}
	char *s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	if (!s)
		abort();
	return s;
}

/* Parse what argv_json wrote; an element that is neither form is skipped. */
static void argv_parse(const char *text, struct strv *out)
{
	if (!text)
		return;
	json_t *a = json_loads(text, 0, NULL);
	size_t i;
	json_t *el;
	json_array_foreach(a, i, el) {
		char *s = jstr_get(el);
		if (s)
			strv_push_take(out, s);
	}
	json_decref(a);
}

/* ---- processes, ids, time ---- */

/* The state letter and start time (field 22) of a process; 0 or an errno. */
static int proc_stat(long pid, char *state, long long *start)
{
	char p[64];
	if (pid == 0)
		snprintf(p, sizeof p, "/proc/self/stat");
	else
		snprintf(p, sizeof p, "/proc/%ld/stat", pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	char buf[1024];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int rerr = errno;
	close(fd);
	if (n < 0)
		return rerr; /* ESRCH: it exited between open and read */
	buf[n] = '\0';
	/* "pid (comm) S …": comm may hold anything, including ") ", so start after the last ')' */
	const char *f = strrchr(buf, ')');
	if (!f || f[1] != ' ' || !f[2])
		return EINVAL;
	f += 2;
	*state = *f;
	for (int field = 3; field < 22; field++) {
		f = strchr(f, ' ');
		if (!f)
			return EINVAL;
		f++;
	}
	char *end;
	errno = 0;
	long long v = strtoll(f, &end, 10);
	if (end == f || errno)
		return EINVAL;
	*start = v;
	return 0;
}

int store_proc_start(long pid, long long *out, struct err *e)
{
	char state;
	int r = proc_stat(pid, &state, out);
	if (r) {
		char p[64];
		snprintf(p, sizeof p, "/proc/%ld/stat", pid);
		return err_set(e, r, pid ? p : "/proc/self/stat",
			       "cannot read the start time of a process");
	}
	return 0;
}

bool store_proc_alive(long pid, long long pid_start, void *arg)
{
	(void)arg;
	if (pid <= 0)
		return false;
	char state;
	long long start;
	int r = proc_stat(pid, &state, &start);
	if (r == ENOENT || r == ESRCH)
		return false;
	if (r)
		return true; /* cannot tell: not lost */
	if (state == 'Z' || state == 'X')
		return false;
	return start == pid_start;
}

long long store_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int store_new_id(char out[STORE_ID_LEN + 1], struct err *e)
{
	return uuid_v4(out, e);
}

/* Characters an id (or an id prefix, once lowercased) is made of. */
static bool id_chars_ok(const char *s)
{
	for (; *s; s++) {
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || *s == '-'))
			return false;
	}
	return true;
}

static const char sql_current[] = "SELECT attempts FROM sessions WHERE id = ?";

/* The current attempt of the session s selects (sql_current, bound): > 0, STORE_NONE or -1. */
static int current_of(struct store *st, sqlite3_stmt *s, const char *id, const char *doing,
		      struct err *e)
{
	int r = st_step_row(st, s, doing, e);
	if (r <= 0)
		return r < 0 ? -1 : st_none(e, id);
	return sqlite3_column_int(s, 0);
}

/* The session's current attempt number: > 0, STORE_NONE or -1. */
int st_current_attempt(struct store *st, const char *id, const char *doing, struct err *e)
{
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e, sql_current, "s", id) < 0)
		return -1;
	return current_of(st, s, id, doing, e);
}

/* ---- the session's end, prepared at its start ----
 * store_finish runs when the jail has ended, on the way to agentjail's exit; its start runs
 * while bwrap builds the jail. Parsing the end's three statements cost 60-80 us there: they
 * are prepared with the start (st->fin, for that session) and only bound and stepped at the
 * end. A failure to prepare them only leaves the end to prepare its own, as before. */
static const char sql_end_attempt[] = "UPDATE attempts SET status = ?, exit_status = ?,"
				      " ended_ms = ? WHERE session_id = ? AND n = ?";
static const char sql_end_session[] = "UPDATE sessions SET status = ?, exit_status = ?,"
				      " ended_ms = ? WHERE id = ?";

void st_fin_drop(struct store *st)
{
	sqlite3_finalize(st->fin.cur);
	sqlite3_finalize(st->fin.att);
	sqlite3_finalize(st->fin.ses);
	free(st->fin.id);
	memset(&st->fin, 0, sizeof st->fin);
}

static void fin_ready(struct store *st, const char *id)
{
	st_fin_drop(st);
	if (sqlite3_prepare_v2(st->db, sql_current, -1, &st->fin.cur, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, sql_end_attempt, -1, &st->fin.att, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st->db, sql_end_session, -1, &st->fin.ses, NULL) != SQLITE_OK) {
		st_fin_drop(st);
		return;
	}
	st->fin.id = xstrdup(id);
}

/* Ready for another use (a cached statement is never finalized by its user). */
static void fin_reset(sqlite3_stmt *s)
{
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

/* ---- sessions ---- */

#define SESSION_COLS_(bwrap)                                                                \
	"id, profile, argv, workspace, policy, " bwrap ", agent_session_id, pid, pid_start,"  \
	" started_ms, ended_ms, status, exit_status, attempts, n_events, n_violations,"      \
	" (SELECT a.started_ms FROM attempts a WHERE a.session_id = sessions.id"           \
	"  AND a.n = sessions.attempts), n_net_allowed, n_net_denied, backend, backend_url,"  \
	" sandbox_id, n_net_failed"
#define SESSION_COLS SESSION_COLS_("bwrap")
/* a listing leaves out the bwrap argv: the largest column, and no listing shows it */
#define SESSION_LIST_COLS SESSION_COLS_("NULL")

static void row_session(sqlite3_stmt *s, struct session *o)
{
	memset(o, 0, sizeof *o);
	o->id = st_col_str(s, 0);
	o->profile = st_col_str(s, 1);
	argv_parse((const char *)sqlite3_column_text(s, 2), &o->argv);
	o->workspace = st_col_str(s, 3);
	o->policy_json = st_col_str(s, 4);
	o->bwrap_json = st_col_str(s, 5);
	o->agent_session_id = st_col_str(s, 6);
	o->pid = (long)sqlite3_column_int64(s, 7);
	o->pid_start = sqlite3_column_int64(s, 8);
	o->started_ms = sqlite3_column_int64(s, 9);
	o->ended_ms = col_ll_or(s, 10, 0);
	if (sess_status_parse((const char *)sqlite3_column_text(s, 11), &o->status) < 0)
		o->status = SESS_LOST;
	o->exit_status = (int)col_ll_or(s, 12, -1);
	o->attempts = sqlite3_column_int(s, 13);
	o->n_events = sqlite3_column_int64(s, 14);
	o->n_violations = sqlite3_column_int64(s, 15);
	o->last_started_ms = col_ll_or(s, 16, o->started_ms);
	o->n_net_allowed = sqlite3_column_int64(s, 17);
	o->n_net_denied = sqlite3_column_int64(s, 18);
	o->backend = st_col_str(s, 19);
	o->backend_url = st_col_str(s, 20);
	o->sandbox_id = st_col_str(s, 21);
	o->n_net_failed = sqlite3_column_int64(s, 22);
}

static int begin_tx(struct store *st, const struct session *s, long long started,
		    struct err *e)
{
	static const char doing[] = "cannot record the session";
	_cleanup_free_ char *argv = argv_json(&s->argv);
	_cleanup_free_ char *spawned = s->spawned ? argv_json(s->spawned) : NULL;
	_cleanup_stmt_ sqlite3_stmt *a = NULL;
	_cleanup_stmt_ sqlite3_stmt *b = NULL;
	if (st_prep(st, &a, doing, e,
		 "INSERT INTO sessions (id, profile, argv, workspace, policy, bwrap,"
		 " agent_session_id, pid, pid_start, started_ms, status, attempts)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', 1)",
		 "sssssssLLL", s->id, s->profile, argv, s->workspace, s->policy_json, s->bwrap_json,
		 s->agent_session_id, (long long)s->pid, s->pid_start, started) < 0 ||
	    st_step_done(st, a, doing, e) < 0)
		return -1;
	if (st_prep(st, &b, doing, e,
		 "INSERT INTO attempts (session_id, n, kind, argv, pid, pid_start, started_ms,"
		 " status) VALUES (?, 1, 'start', ?, ?, ?, ?, 'running')",
		 "ssLLL", s->id, spawned ? spawned : argv, (long long)s->pid, s->pid_start,
		 started) < 0 ||
	    st_step_done(st, b, doing, e) < 0)
		return -1;
	return 0;
}

int store_begin(struct store *st, const struct session *s, struct err *e)
{
	static const char doing[] = "cannot record the session";
	if (!s->id || strlen(s->id) != STORE_ID_LEN || !id_chars_ok(s->id))
		return err_set(e, EINVAL, s->id, "%s: not a session id", doing);
	if (!s->workspace || !s->policy_json || s->pid <= 0)
		return err_set(e, EINVAL, s->id, "%s: no workspace, policy or pid", doing);
	long long started = s->started_ms ? s->started_ms : store_now_ms();
	if (st_tx_begin(st, doing, e) < 0)
		return -1;
	int rc = st_tx_end(st, begin_tx(st, s, started, e), doing, e);
	if (rc >= 0)
		fin_ready(st, s->id);
	return rc;
}


static int attempt_tx(struct store *st, const char *id, enum attempt_kind kind,
		      const struct strv *argv, long pid, long long pid_start, struct err *e)
{
	static const char doing[] = "cannot record the new attempt";
	int n = st_current_attempt(st, id, doing, e);
	if (n < 0)
		return n;
	n++;
	_cleanup_free_ char *aj = argv_json(argv);
	_cleanup_stmt_ sqlite3_stmt *a = NULL;
	_cleanup_stmt_ sqlite3_stmt *b = NULL;
	if (st_prep(st, &a, doing, e,
		 "INSERT INTO attempts (session_id, n, kind, argv, pid, pid_start, started_ms,"
		 " status) VALUES (?, ?, ?, ?, ?, ?, ?, 'running')",
		 "sissLLL", id, n, attempt_kind_name(kind), aj, (long long)pid, pid_start,
		 store_now_ms()) < 0 ||
	    st_step_done(st, a, doing, e) < 0)
		return -1;
	if (st_prep(st, &b, doing, e,
		 "UPDATE sessions SET attempts = ?, status = 'running', pid = ?, pid_start = ?,"
		 " ended_ms = NULL, exit_status = NULL WHERE id = ?",
		 "iLLs", n, (long long)pid, pid_start, id) < 0 ||
	    st_step_done(st, b, doing, e) < 0)
		return -1;
	return n;
}

int store_attempt_begin(struct store *st, const char *id, enum attempt_kind kind,
			const struct strv *argv, long pid, long long pid_start, struct err *e)
{
	static const char doing[] = "cannot record the new attempt";
	if (pid <= 0 || (unsigned)kind > ATTEMPT_FRESH)
		return err_set(e, EINVAL, id, "%s: no pid or no such kind", doing);
	if (st_tx_begin(st, doing, e) < 0)
		return -1;
	int rc = st_tx_end(st, attempt_tx(st, id, kind, argv, pid, pid_start, e), doing, e);
	if (rc >= 0)
		fin_ready(st, id);
	return rc;
}

/* Bind the end's two updates (exit_status < 0 is stored as NULL). */
static int bind_end(struct store *st, sqlite3_stmt *a, sqlite3_stmt *s, const char *id, int n,
		    const char *name, int exit_status, long long ended, const char *doing,
		    struct err *e)
{
	long long ex = exit_status;
	return st_bind(st, a, doing, e, "sNLsi", name, ex, ended, id, n) < 0 ||
			       st_bind(st, s, doing, e, "sNLs", name, ex, ended, id) < 0
		       ? -1
		       : 0;
}

static int finish_tx(struct store *st, const char *id, enum sess_status status,
		     int exit_status, long long ended, struct err *e)
{
	static const char doing[] = "cannot record the end of the session";
	/* this session's statements when they were prepared with its start (fin_ready), else
	 * prepared here */
	bool mine = st->fin.id && !strcmp(st->fin.id, id);
	_cleanup_stmt_ sqlite3_stmt *own_c = NULL;
	_cleanup_stmt_ sqlite3_stmt *own_a = NULL;
	_cleanup_stmt_ sqlite3_stmt *own_s = NULL;
	if (!mine && (st_prep(st, &own_c, doing, e, sql_current, "") < 0 ||
		      st_prep(st, &own_a, doing, e, sql_end_attempt, "") < 0 ||
		      st_prep(st, &own_s, doing, e, sql_end_session, "") < 0))
		return -1;
	sqlite3_stmt *c = mine ? st->fin.cur : own_c;
	sqlite3_stmt *a = mine ? st->fin.att : own_a;
	sqlite3_stmt *s = mine ? st->fin.ses : own_s;
	int n = st_bind(st, c, doing, e, "s", id) < 0 ? -1 : current_of(st, c, id, doing, e);
	int rc = n < 0 ? n
		       : bind_end(st, a, s, id, n, sess_status_name(status), exit_status, ended,
				  doing, e);
	if (rc == 0 && (st_step_done(st, a, doing, e) < 0 || st_step_done(st, s, doing, e) < 0))
		rc = -1;
	if (mine) {
		fin_reset(c);
		fin_reset(a);
		fin_reset(s);
	}
	return rc;
}

int store_finish(struct store *st, const char *id, enum sess_status status, int exit_status,
		 long long ended_ms, struct err *e)
{
	static const char doing[] = "cannot record the end of the session";
	if (status == SESS_RUNNING || (unsigned)status > SESS_LOST)
		return err_set(e, EINVAL, id, "%s: it cannot end as \"%s\"", doing,
			       sess_status_name(status));
	long long ended = ended_ms ? ended_ms : store_now_ms();
	if (st_tx_begin(st, doing, e) < 0)
		return -1;
	/* the end's commit never checkpoints (a copy into the database and two fsyncs, 1-6 ms
	 * here, on the way to agentjail's exit): the WAL may pass the threshold by these few
	 * pages, and the next commit that finds it past, a session's start while bwrap builds
	 * the jail or an event during a run, checkpoints */
	(void)sqlite3_wal_autocheckpoint(st->db, 0);
	int rc = st_tx_end(st, finish_tx(st, id, status, exit_status, ended, e), doing, e);
	(void)sqlite3_wal_autocheckpoint(st->db, ST_AUTOCHECKPOINT_PAGES);
	return rc;
}

static int set_agent_tx(struct store *st, const char *id, const char *agent_id, struct err *e)
{
	static const char doing[] = "cannot record the agent's session id";
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e, "UPDATE sessions SET agent_session_id = ? WHERE id = ?", "ss",
		 agent_id, id) < 0 ||
	    st_step_done(st, s, doing, e) < 0)
		return -1;
	return sqlite3_changes(st->db) ? 0 : st_none(e, id);
}

static int set_backend_tx(struct store *st, const char *id, const char *backend,
			  const char *url, const char *sandbox_id, struct err *e)
{
	static const char doing[] = "cannot record the session's backend";
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e,
		    "UPDATE sessions SET backend = ?, backend_url = ?, sandbox_id = ? WHERE id = ?",
		    "ssss", backend, url, sandbox_id, id) < 0 ||
	    st_step_done(st, s, doing, e) < 0)
		return -1;
	return sqlite3_changes(st->db) ? 0 : st_none(e, id);
}

int store_set_backend(struct store *st, const char *id, const char *backend, const char *url,
		      const char *sandbox_id, struct err *e)
{
	static const char doing[] = "cannot record the session's backend";
	if (st_tx_begin(st, doing, e) < 0)
		return -1;
	return st_tx_end(st, set_backend_tx(st, id, backend, url, sandbox_id, e), doing, e);
}

int store_set_agent_session_id(struct store *st, const char *id, const char *agent_id,
			       struct err *e)
{
	static const char doing[] = "cannot record the agent's session id";
	if (st_tx_begin(st, doing, e) < 0)
		return -1;
	return st_tx_end(st, set_agent_tx(st, id, agent_id, e), doing, e);
}

static bool is_violation(const char *kind)
{
	return !strcmp(kind, "violation") || !strncmp(kind, "violation.", 10);
}

static int event_tx(struct store *st, const char *id, const char *kind, const char *detail,
		    struct err *e)
{
	static const char doing[] = "cannot record the event";
	int n = st_current_attempt(st, id, doing, e);
	if (n < 0)
		return n;
	_cleanup_stmt_ sqlite3_stmt *a = NULL;
	_cleanup_stmt_ sqlite3_stmt *b = NULL;
	if (st_prep(st, &a, doing, e,
		 "INSERT INTO events (session_id, attempt, at_ms, kind, detail)"
		 " VALUES (?, ?, ?, ?, ?)",
		 "siLss", id, n, store_now_ms(), kind, detail) < 0 ||
	    st_step_done(st, a, doing, e) < 0)
		return -1;
	if (st_prep(st, &b, doing, e,
		 "UPDATE sessions SET n_events = n_events + 1,"
		 " n_violations = n_violations + ? WHERE id = ?",
		 "is", is_violation(kind) ? 1 : 0, id) < 0 ||
	    st_step_done(st, b, doing, e) < 0)
		return -1;
	return 0;
}

int store_add_event(struct store *st, const char *id, const char *kind, const char *detail_json,
		    struct err *e)
{
	static const char doing[] = "cannot record the event";
	if (!kind || !kind[0])
		return err_set(e, EINVAL, id, "%s: it has no kind", doing);
	if (st_tx_begin(st, doing, e) < 0)
		return -1;
	return st_tx_end(st, event_tx(st, id, kind, detail_json, e), doing, e);
}

static int get_exact(struct store *st, const char *id, struct session *out, struct err *e)
{
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, "cannot read the session", e,
		 "SELECT " SESSION_COLS " FROM sessions WHERE id = ?", "s", id) < 0)
		return -1;
	int r = st_step_row(st, s, "cannot read the session", e);
	if (r <= 0)
		return r < 0 ? -1 : STORE_NONE;
	row_session(s, out);
	return 0;
}

int store_get(struct store *st, const char *id_or_prefix, struct session *out, struct err *e)
{
	static const char doing[] = "cannot look up the session";
	size_t len = strlen(id_or_prefix);
	_cleanup_free_ char *p = xstrdup(id_or_prefix);
	for (char *c = p; *c; c++)
		if (*c >= 'A' && *c <= 'F')
			*c = (char)(*c - 'A' + 'a');
	if (!len || len > STORE_ID_LEN || !id_chars_ok(p)) {
		err_set(e, 0, id_or_prefix, "not a session id");
		err_hint(e, "`agentjail sessions` lists them; a unique prefix of an id is enough");
		return STORE_NONE;
	}
	int r = get_exact(st, p, out, e);
	if (r != STORE_NONE)
		return r;
	/* every id character sorts below 'g': [p, p + "g") is exactly the ids starting with p */
	_cleanup_free_ char *hi = xasprintf("%sg", p);
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e, "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id",
		 "ss", p, hi) < 0)
		return -1;
	struct strbuf cand = STRBUF_INIT;
	_cleanup_free_ char *first = NULL;
	size_t n = 0;
	while ((r = st_step_row(st, s, doing, e)) == 1) {
		const char *id = (const char *)sqlite3_column_text(s, 0);
		if (n == 0)
			first = xstrdup(id);
		if (n < 5)
			sb_addf(&cand, "%s%s", n ? ", " : "", id);
		n++;
	}
	if (r < 0) {
		sb_free(&cand);
		return -1;
	}
	if (n == 1) {
		sb_free(&cand);
		r = get_exact(st, first, out, e);
		return r == STORE_NONE ? st_none(e, id_or_prefix) : r; /* removed meanwhile */
	}
	if (n == 0) {
		sb_free(&cand);
		return st_none(e, id_or_prefix);
	}
	err_set(e, 0, id_or_prefix, "the session id prefix matches %zu sessions", n);
	if (n > 5)
		err_hint(e, "give more of the id: %s and %zu more", sb_str(&cand), n - 5);
	else
		err_hint(e, "give more of the id: %s", sb_str(&cand));
	sb_free(&cand);
	return STORE_AMBIGUOUS;
}

int store_list(struct store *st, const char *workspace, size_t limit, struct session **out,
	       size_t *n, struct err *e)
{
	static const char doing[] = "cannot list the sessions";
	*out = NULL;
	*n = 0;
	long long lim = limit ? (long long)limit : -1;
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	int rc = workspace ? st_prep(st, &s, doing, e,
				  "SELECT " SESSION_LIST_COLS " FROM sessions WHERE workspace = ?"
				  " ORDER BY started_ms DESC, id DESC LIMIT ?",
				  "sL", workspace, lim)
			   : st_prep(st, &s, doing, e,
				  "SELECT " SESSION_LIST_COLS " FROM sessions"
				  " ORDER BY started_ms DESC, id DESC LIMIT ?",
				  "L", lim);
	if (rc < 0)
		return -1;
	struct session *v = NULL;
	size_t k = 0;
	int r;
	while ((r = st_step_row(st, s, doing, e)) == 1) {
		v = xrealloc(v, (k + 1) * sizeof *v);
		row_session(s, &v[k++]);
	}
	if (r < 0) {
		sessions_free(v, k);
		return -1;
	}
	*out = v;
	*n = k;
	return 0;
}

int st_exists(struct store *st, const char *id, const char *doing, struct err *e)
{
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e, "SELECT 1 FROM sessions WHERE id = ?", "s", id) < 0)
		return -1;
	int r = st_step_row(st, s, doing, e);
	return r < 0 ? -1 : r ? 0 : st_none(e, id);
}

int store_attempts(struct store *st, const char *id, struct attempt **out, size_t *n,
		   struct err *e)
{
	static const char doing[] = "cannot read the session's attempts";
	*out = NULL;
	*n = 0;
	int r = st_exists(st, id, doing, e);
	if (r < 0)
		return r;
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e,
		 "SELECT n, kind, argv, pid, pid_start, started_ms, ended_ms, status, exit_status"
		 " FROM attempts WHERE session_id = ? ORDER BY n",
		 "s", id) < 0)
		return -1;
	struct attempt *v = NULL;
	size_t k = 0;
	while ((r = st_step_row(st, s, doing, e)) == 1) {
		v = xrealloc(v, (k + 1) * sizeof *v);
		struct attempt *a = &v[k++];
		memset(a, 0, sizeof *a);
		a->n = sqlite3_column_int(s, 0);
		if (attempt_kind_parse((const char *)sqlite3_column_text(s, 1), &a->kind) < 0)
			a->kind = ATTEMPT_START;
		argv_parse((const char *)sqlite3_column_text(s, 2), &a->argv);
		a->pid = (long)sqlite3_column_int64(s, 3);
		a->pid_start = sqlite3_column_int64(s, 4);
		a->started_ms = sqlite3_column_int64(s, 5);
		a->ended_ms = col_ll_or(s, 6, 0);
		if (sess_status_parse((const char *)sqlite3_column_text(s, 7), &a->status) < 0)
			a->status = SESS_LOST;
		a->exit_status = (int)col_ll_or(s, 8, -1);
	}
	if (r < 0) {
		attempts_free(v, k);
		return -1;
	}
	*out = v;
	*n = k;
	return 0;
}

int store_events(struct store *st, const char *id, struct event **out, size_t *n, struct err *e)
{
	static const char doing[] = "cannot read the session's events";
	*out = NULL;
	*n = 0;
	int r = st_exists(st, id, doing, e);
	if (r < 0)
		return r;
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e,
		 "SELECT seq, attempt, at_ms, kind, detail FROM events WHERE session_id = ?"
		 " ORDER BY seq",
		 "s", id) < 0)
		return -1;
	struct event *v = NULL;
	size_t k = 0;
	while ((r = st_step_row(st, s, doing, e)) == 1) {
		v = xrealloc(v, (k + 1) * sizeof *v);
		v[k++] = (struct event){
			.seq = sqlite3_column_int64(s, 0),
			.attempt = sqlite3_column_int(s, 1),
			.at_ms = sqlite3_column_int64(s, 2),
			.kind = st_col_str(s, 3),
			.detail_json = st_col_str(s, 4),
		};
	}
	if (r < 0) {
		events_free(v, k);
		return -1;
	}
	*out = v;
	*n = k;
	return 0;
}

static int rm_tx(struct store *st, const char *id, struct err *e)
{
	static const char doing[] = "cannot remove the session";
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e, "DELETE FROM sessions WHERE id = ?", "s", id) < 0 ||
	    st_step_done(st, s, doing, e) < 0)
		return -1;
	return sqlite3_changes(st->db) ? 0 : st_none(e, id);
}

int store_rm(struct store *st, const char *id, struct err *e)
{
	static const char doing[] = "cannot remove the session";
	if (st_tx_begin(st, doing, e) < 0)
		return -1;
	return st_tx_end(st, rm_tx(st, id, e), doing, e);
}
