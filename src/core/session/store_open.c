/* store: opening the session store (its directory and file, the connection, the schema and its
 * migrations by user_version, marking lost the sessions whose agentjail is gone) and closing it. */
#include "core/session/store_internal.h"

#define DEFAULT_BUSY_MS 5000

/* Migration k (index k-1) takes user_version k-1 to k. Never edit one that has shipped: add a
 * new one. Each runs in one transaction together with its user_version bump. */
static const char *const migrations[STORE_SCHEMA_VERSION] = {
	/* 1: sessions */
	"CREATE TABLE sessions ("
	" id TEXT PRIMARY KEY NOT NULL,"
	" profile TEXT,"
	" argv TEXT NOT NULL,"
	" workspace TEXT NOT NULL,"
	" policy TEXT NOT NULL,"
	" bwrap TEXT,"
	" agent_session_id TEXT,"
	" pid INTEGER NOT NULL,"
	" pid_start INTEGER NOT NULL,"
	" started_ms INTEGER NOT NULL,"
	" ended_ms INTEGER,"
	" status TEXT NOT NULL"
	"  CHECK (status IN ('running', 'exited', 'signalled', 'killed', 'lost')),"
	" exit_status INTEGER"
	") STRICT;"
	"CREATE INDEX sessions_by_start ON sessions (started_ms DESC, id DESC);"
	"CREATE INDEX sessions_by_workspace ON sessions (workspace, started_ms DESC, id DESC);"
	"CREATE INDEX sessions_running ON sessions (status) WHERE status = 'running';",

	/* 2: attempts (the resume ladder; each v1 run becomes attempt 1), events, counters */
	"CREATE TABLE attempts ("
	" session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
	" n INTEGER NOT NULL CHECK (n >= 1),"
	" kind TEXT NOT NULL CHECK (kind IN ('start', 'resume', 'fresh')),"
	" argv TEXT NOT NULL,"
	" pid INTEGER NOT NULL,"
	" pid_start INTEGER NOT NULL,"
	" started_ms INTEGER NOT NULL,"
	" ended_ms INTEGER,"
	" status TEXT NOT NULL"
	"  CHECK (status IN ('running', 'exited', 'signalled', 'killed', 'lost')),"
	" exit_status INTEGER,"
	" PRIMARY KEY (session_id, n)"
	") STRICT;"
	"INSERT INTO attempts (session_id, n, kind, argv, pid, pid_start, started_ms, ended_ms,"
	" status, exit_status)"
	" SELECT id, 1, 'start', argv, pid, pid_start, started_ms, ended_ms, status, exit_status"
	" FROM sessions;"
	"CREATE TABLE events ("
	" seq INTEGER PRIMARY KEY,"
	" session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
	" attempt INTEGER NOT NULL,"
	" at_ms INTEGER NOT NULL,"
	" kind TEXT NOT NULL,"
	" detail TEXT"
	") STRICT;"
	"CREATE INDEX events_by_session ON events (session_id, seq);"
	"ALTER TABLE sessions ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;"
	"ALTER TABLE sessions ADD COLUMN n_events INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sessions ADD COLUMN n_violations INTEGER NOT NULL DEFAULT 0;",

	/* 3: the egress proxy's decisions (doc/design.md §4) and their counters */
	"CREATE TABLE net_events ("
	" seq INTEGER PRIMARY KEY,"
	" session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
	" attempt INTEGER NOT NULL,"
	" at_ms INTEGER NOT NULL,"
	" proto TEXT NOT NULL CHECK (proto IN ('connect', 'http', 'socks', 'dns')),"
	" host TEXT NOT NULL,"
	" port INTEGER NOT NULL CHECK (port BETWEEN 0 AND 65535),"
	" allowed INTEGER NOT NULL CHECK (allowed IN (0, 1)),"
	" rule TEXT NOT NULL,"
	" addr TEXT NOT NULL,"
	" bytes_up INTEGER NOT NULL,"
	" bytes_down INTEGER NOT NULL,"
	" dur_ms INTEGER NOT NULL,"
	" error TEXT NOT NULL"
	") STRICT;"
	"CREATE INDEX net_events_by_session ON net_events (session_id, seq);"
	"ALTER TABLE sessions ADD COLUMN n_net_allowed INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sessions ADD COLUMN n_net_denied INTEGER NOT NULL DEFAULT 0;",
	/* 4: where it ran (issue 18): NULL backend = local; never a key, only the service's URL */
	"ALTER TABLE sessions ADD COLUMN backend TEXT;"
	"ALTER TABLE sessions ADD COLUMN backend_url TEXT;"
	"ALTER TABLE sessions ADD COLUMN sandbox_id TEXT;",
	/* 5: allowed requests whose upstream failed (issue 26), counted apart. Older rows: an
	 * allowed request with an error and no address connected to failed before its tunnel
	 * (the name, the connect); a DNS answer "no data" is an answer, not a failure. */
	"ALTER TABLE net_events ADD COLUMN failed INTEGER NOT NULL DEFAULT 0"
	" CHECK (failed IN (0, 1));"
	"UPDATE net_events SET failed = 1 WHERE allowed = 1 AND addr = '' AND error != ''"
	" AND error NOT LIKE '%no data%';"
	"ALTER TABLE sessions ADD COLUMN n_net_failed INTEGER NOT NULL DEFAULT 0;"
	"UPDATE sessions SET n_net_failed = (SELECT count(*) FROM net_events n"
	" WHERE n.session_id = sessions.id AND n.failed = 1) WHERE n_net_allowed > 0;",
	/* 6: the captured direct connections (doc/design.md §4, capture) are decisions of their
	 * own, proto 'tcp': SQLite changes a CHECK only by rebuilding the table */
	"CREATE TABLE net_events_v6 ("
	" seq INTEGER PRIMARY KEY,"
	" session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
	" attempt INTEGER NOT NULL,"
	" at_ms INTEGER NOT NULL,"
	" proto TEXT NOT NULL CHECK (proto IN ('connect', 'http', 'socks', 'dns', 'tcp')),"
	" host TEXT NOT NULL,"
	" port INTEGER NOT NULL CHECK (port BETWEEN 0 AND 65535),"
	" allowed INTEGER NOT NULL CHECK (allowed IN (0, 1)),"
	" rule TEXT NOT NULL,"
	" addr TEXT NOT NULL,"
	" bytes_up INTEGER NOT NULL,"
	" bytes_down INTEGER NOT NULL,"
	" dur_ms INTEGER NOT NULL,"
	" error TEXT NOT NULL,"
	" failed INTEGER NOT NULL DEFAULT 0 CHECK (failed IN (0, 1))"
	") STRICT;"
	"INSERT INTO net_events_v6 (seq, session_id, attempt, at_ms, proto, host, port, allowed,"
	" rule, addr, bytes_up, bytes_down, dur_ms, error, failed)"
	" SELECT seq, session_id, attempt, at_ms, proto, host, port, allowed, rule, addr,"
	" bytes_up, bytes_down, dur_ms, error, failed FROM net_events;"
	"DROP TABLE net_events;"
	"ALTER TABLE net_events_v6 RENAME TO net_events;"
	"CREATE INDEX net_events_by_session ON net_events (session_id, seq);",
	/* 7: connections from the host to a published port (--publish, issue 25 item 5) are
	 * decisions of their own, proto 'publish': the table rebuilt again for its CHECK */
	"CREATE TABLE net_events_v7 ("
	" seq INTEGER PRIMARY KEY,"
	" session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
	" attempt INTEGER NOT NULL,"
	" at_ms INTEGER NOT NULL,"
	" proto TEXT NOT NULL"
	"  CHECK (proto IN ('connect', 'http', 'socks', 'dns', 'tcp', 'publish')),"
	" host TEXT NOT NULL,"
	" port INTEGER NOT NULL CHECK (port BETWEEN 0 AND 65535),"
	" allowed INTEGER NOT NULL CHECK (allowed IN (0, 1)),"
	" rule TEXT NOT NULL,"
	" addr TEXT NOT NULL,"
	" bytes_up INTEGER NOT NULL,"
	" bytes_down INTEGER NOT NULL,"
	" dur_ms INTEGER NOT NULL,"
	" error TEXT NOT NULL,"
	" failed INTEGER NOT NULL DEFAULT 0 CHECK (failed IN (0, 1))"
	") STRICT;"
	"INSERT INTO net_events_v7 (seq, session_id, attempt, at_ms, proto, host, port, allowed,"
	" rule, addr, bytes_up, bytes_down, dur_ms, error, failed)"
	" SELECT seq, session_id, attempt, at_ms, proto, host, port, allowed, rule, addr,"
	" bytes_up, bytes_down, dur_ms, error, failed FROM net_events;"
	"DROP TABLE net_events;"
	"ALTER TABLE net_events_v7 RENAME TO net_events;"
	"CREATE INDEX net_events_by_session ON net_events (session_id, seq);",
	/* 8: inspected hosts and the filtered ssh agent (issue 29, doc/design.md §4d): a request
	 * refused inside an inspected tunnel ('https') and a signature asked of the agent
	 * ('ssh-agent'). SQLite changes a CHECK only by rebuilding the table. */
	"CREATE TABLE net_events_v8 ("
	" seq INTEGER PRIMARY KEY,"
	" session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,"
	" attempt INTEGER NOT NULL,"
	" at_ms INTEGER NOT NULL,"
	" proto TEXT NOT NULL CHECK (proto IN ('connect', 'http', 'socks', 'dns', 'tcp', 'publish',"
	"  'https', 'ssh-agent')),"
	" host TEXT NOT NULL,"
	" port INTEGER NOT NULL CHECK (port BETWEEN 0 AND 65535),"
	" allowed INTEGER NOT NULL CHECK (allowed IN (0, 1)),"
	" rule TEXT NOT NULL,"
	" addr TEXT NOT NULL,"
	" bytes_up INTEGER NOT NULL,"
	" bytes_down INTEGER NOT NULL,"
	" dur_ms INTEGER NOT NULL,"
	" error TEXT NOT NULL,"
	" failed INTEGER NOT NULL DEFAULT 0 CHECK (failed IN (0, 1))"
	") STRICT;"
	"INSERT INTO net_events_v8 (seq, session_id, attempt, at_ms, proto, host, port, allowed,"
	" rule, addr, bytes_up, bytes_down, dur_ms, error, failed)"
	" SELECT seq, session_id, attempt, at_ms, proto, host, port, allowed, rule, addr,"
	" bytes_up, bytes_down, dur_ms, error, failed FROM net_events;"
	"DROP TABLE net_events;"
	"ALTER TABLE net_events_v8 RENAME TO net_events;"
	"CREATE INDEX net_events_by_session ON net_events (session_id, seq);",
};
/* ---- opening ---- */

/* The directory must be ours and not writable by others. */
static int check_dir(const char *dir, struct err *e)
{
	struct stat sb;
	if (stat(dir, &sb) < 0)
		return err_set(e, errno, dir, "cannot examine the session store's directory");
	if (!S_ISDIR(sb.st_mode))
		return err_set(e, ENOTDIR, dir, "the session store's directory is not one");
	if (sb.st_uid != geteuid()) {
		err_set(e, 0, dir, "the session store's directory is owned by another user (uid %u)",
			(unsigned)sb.st_uid);
		err_hint(e, "chown %u it, or set AGENTJAIL_STATE_DIR to a directory of yours",
			 (unsigned)geteuid());
		return -1;
	}
	if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
		err_set(e, 0, dir, "the session store's directory is writable by group or others");
		err_hint(e, "chmod go-w %s", dir);
		return -1;
	}
	return 0;
}

/* mkdir -p: the components created get mode 0700. */
static int make_dir(const char *dir, struct err *e)
{
	struct stat sb;
	if (stat(dir, &sb) == 0)
		return check_dir(dir, e);
	if (errno != ENOENT)
		return err_set(e, errno, dir, "cannot examine the session store's directory");
	char *failed = NULL;
	if (fs_mkdirs(dir, 0700, &failed) < 0) {
		err_set(e, errno, failed, "cannot create the session store's directory");
		err_hint(e, "set AGENTJAIL_STATE_DIR to a directory you can write");
		free(failed);
		return -1;
	}
	return check_dir(dir, e);
}

/* Create the database file empty with mode 0600 if it does not exist (SQLite would make it
 * 0644 & ~umask); an existing one must be a regular file of ours. */
static int make_db_file(const char *path, struct err *e)
{
	struct stat sb;
	if (lstat(path, &sb) < 0) {
		if (errno != ENOENT)
			return err_set(e, errno, path, "cannot examine the session database");
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST) {
			err_set(e, errno, path, "cannot create the session database");
			err_hint(e, "set AGENTJAIL_STATE_DIR to a directory you can write");
			return -1;
		}
		if (fd >= 0)
			close(fd);
		if (lstat(path, &sb) < 0)
			return err_set(e, errno, path, "cannot examine the session database");
	}
	if (!S_ISREG(sb.st_mode))
		return err_set(e, 0, path, "the session database is not a regular file");
	if (sb.st_uid != geteuid()) {
		err_set(e, 0, path, "the session database is owned by another user (uid %u)",
			(unsigned)sb.st_uid);
		err_hint(e, "chown %u it, or set AGENTJAIL_STATE_DIR to a directory of yours",
			 (unsigned)geteuid());
		return -1;
	}
	return 0;
}

static int user_version(struct store *st, int *v, struct err *e)
{
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, "cannot read the schema version", e, "PRAGMA user_version", "") < 0)
		return -1;
	int r = st_step_row(st, s, "cannot read the schema version", e);
	if (r < 0)
		return -1;
	*v = r ? sqlite3_column_int(s, 0) : 0;
	return 0;
}

static int too_new(struct store *st, int v, struct err *e)
{
	st->last_rc = SQLITE_OK;
	err_set(e, 0, st->path,
		"the session database was written by a newer agentjail (schema version %d; this "
		"one knows up to %d)",
		v, STORE_SCHEMA_VERSION);
	err_hint(e, "upgrade agentjail, or set AGENTJAIL_STATE_DIR to keep this one's sessions "
		    "elsewhere; the database was not touched");
	return -1;
}

/* Under the write lock: re-read the version (another process may have migrated meanwhile),
 * then apply the next migration if it is still due. */
static int migrate_one(struct store *st, int target, struct err *e)
{
	int v;
	if (user_version(st, &v, e) < 0)
		return -1;
	if (v > STORE_SCHEMA_VERSION)
		return too_new(st, v, e);
	if (v >= target)
		return 0;
	char what[64];
	snprintf(what, sizeof what, "cannot migrate the session database to version %d", v + 1);
	if (st_exec_sql(st, migrations[v], what, e) < 0)
		return -1;
	char bump[64];
	snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
	return st_exec_sql(st, bump, what, e);
}

static int migrate(struct store *st, int target, struct err *e)
{
	for (;;) {
		int v;
		if (user_version(st, &v, e) < 0)
			return -1;
		if (v > STORE_SCHEMA_VERSION)
			return too_new(st, v, e);
		if (v >= target)
			return 0;
		if (st_tx_begin(st, "cannot migrate the session database", e) < 0)
			return -1;
		if (st_tx_end(st, migrate_one(st, target, e), "cannot migrate the session database",
			   e) < 0)
			return -1;
	}
}

/* The connection's settings and the schema; may fail with SQLITE_BUSY in the first-open race,
 * where the caller retries. */
static int set_up(struct store *st, int target, struct err *e)
{
	int v;
	/* a newer database is refused before anything (journal mode included) is changed */
	if (user_version(st, &v, e) < 0)
		return -1;
	if (v > STORE_SCHEMA_VERSION)
		return too_new(st, v, e);
	if (st_exec_sql(st, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
			"cannot configure the session database", e) < 0)
		return -1;
	(void)sqlite3_wal_autocheckpoint(st->db, ST_AUTOCHECKPOINT_PAGES); /* store_internal.h */
	/* The journal mode is kept in the file: set before the first migration, it is WAL in a
	 * database already at the target version (unless someone changed it by hand). */
	if (v < target && st_exec_sql(st, "PRAGMA journal_mode = WAL", "cannot use the WAL journal",
				   e) < 0)
		return -1;
	return migrate(st, target, e);
}

struct lost {
	char *id;
	long long pid, start;
};

/* Mark lost the running sessions whose agentjail is gone. Failing here is not an error (see
 * store.h): the next open tries again. */
static void mark_lost(struct store *st)
{
	struct lost *v = NULL;
	size_t n = 0;
	{
		_cleanup_stmt_ sqlite3_stmt *s = NULL;
		if (st_prep(st, &s, "", NULL,
			 "SELECT id, pid, pid_start FROM sessions WHERE status = 'running'", "") < 0)
			return;
		while (st_step_row(st, s, "", NULL) == 1) {
			long long pid = sqlite3_column_int64(s, 1), start = sqlite3_column_int64(s, 2);
			if (st->alive((long)pid, start, st->alive_arg))
				continue;
			v = xrealloc(v, (n + 1) * sizeof *v);
			v[n++] = (struct lost){st_col_str(s, 0), pid, start};
		}
	}
	if (n && st_tx_begin(st, "", NULL) == 0) {
		int rc = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			_cleanup_stmt_ sqlite3_stmt *a = NULL;
			_cleanup_stmt_ sqlite3_stmt *s = NULL;
			/* the row may have moved on since it was read: only the same attempt */
			rc = st_prep(st, &a, "", NULL,
				  "UPDATE attempts SET status = 'lost' WHERE status = 'running'"
				  " AND session_id = ?1 AND n = (SELECT attempts FROM sessions"
				  " WHERE id = ?1 AND status = 'running' AND pid = ?2"
				  " AND pid_start = ?3)",
				  "sLL", v[i].id, v[i].pid, v[i].start);
			if (rc == 0)
				rc = st_step_done(st, a, "", NULL);
			if (rc == 0)
				rc = st_prep(st, &s, "", NULL,
					  "UPDATE sessions SET status = 'lost', ended_ms = NULL,"
					  " exit_status = NULL WHERE id = ?1 AND status = 'running'"
					  " AND pid = ?2 AND pid_start = ?3",
					  "sLL", v[i].id, v[i].pid, v[i].start);
			if (rc == 0)
				rc = st_step_done(st, s, "", NULL);
		}
		(void)st_tx_end(st, rc, "", NULL);
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].id);
	free(v);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int store_open(const char *state_dir, const struct store_opts *opts, struct store **out,
	       struct err *e)
{
	static const struct store_opts dflt = {0};
	if (!opts)
		opts = &dflt;
	int target = opts->target_version ? opts->target_version : STORE_SCHEMA_VERSION;
	if (target < 1 || target > STORE_SCHEMA_VERSION)
		return err_set(e, EINVAL, NULL, "no session database schema version %d", target);
	if (sqlite3_libversion_number() < 3037000) {
		err_set(e, 0, NULL, "SQLite %s is too old for the session store (STRICT tables need "
				    "3.37)",
			sqlite3_libversion());
		err_hint(e, "build agentjail against a newer libsqlite3");
		return -1;
	}
	if (!state_dir || state_dir[0] != '/')
		return err_set(e, EINVAL, state_dir, "the session store's directory is not absolute");
	_cleanup_free_ char *dir = path_normalize("/", state_dir);
	if (make_dir(dir, e) < 0)
		return -1;
	_cleanup_free_ char *path = path_join(dir, STORE_DB_NAME);
	if (make_db_file(path, e) < 0)
		return -1;

	struct store *st = xcalloc(1, sizeof *st);
	st->path = steal_pointer(&path);
	st->dir = steal_pointer(&dir);
	st->alive = opts->alive ? opts->alive : store_proc_alive;
	st->alive_arg = opts->alive_arg;
	st->busy_ms = opts->busy_timeout_ms > 0 ? opts->busy_timeout_ms : DEFAULT_BUSY_MS;
	int rc = sqlite3_open_v2(st->path, &st->db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
				 NULL);
	if (rc != SQLITE_OK) {
		st_db_fail(st, rc, "cannot open the session database", e);
		store_close(st);
		return -1;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_timeout(st->db, st->busy_ms);
	(void)sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
	(void)sqlite3_db_config(st->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	(void)sqlite3_db_config(st->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);

	/* The busy handler covers waiting for locks inside a transaction; a few steps of the
	 * first open (the journal mode switch, reading a schema being written) can still report
	 * SQLITE_BUSY at once: retry those until the busy timeout. */
	long long deadline = store_now_ms() + st->busy_ms;
	int pause = 1;
	while (set_up(st, target, e) < 0) {
		int prim = st->last_rc & 0xff;
		if ((prim != SQLITE_BUSY && prim != SQLITE_LOCKED) || store_now_ms() >= deadline) {
			store_close(st);
			return -1;
		}
		sleep_ms(pause);
		pause = pause < 32 ? pause * 2 : 32;
	}
	err_clear(e);
	if (target == STORE_SCHEMA_VERSION)
		mark_lost(st);
	*out = st;
	return 0;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	st_fin_drop(st);
	sqlite3_close(st->db);
	free(st->path);
	free(st->dir);
	free(st);
}

int store_open_again(const struct store *st, struct store **out, struct err *e)
{
	if (!sqlite3_threadsafe()) {
		err_set(e, 0, st->path, "this SQLite is built without thread support: the session "
					"store cannot be written from a second thread");
		err_hint(e, "build agentjail against a libsqlite3 with SQLITE_THREADSAFE=1 or 2");
		return -1;
	}
	struct store_opts o = {.alive = st->alive, .alive_arg = st->alive_arg,
			       .busy_timeout_ms = st->busy_ms};
	return store_open(st->dir, &o, out, e);
}

const char *store_path(const struct store *st) { return st->path; }
void *store_handle(struct store *st) { return st->db; }

