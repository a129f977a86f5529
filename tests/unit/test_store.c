/* Unit tests for core/session/store: the files and their modes, the schema and its migrations, the
 * session life cycle, id prefixes, lost sessions, removal, concurrent writers, and failures that
 * must leave nothing half-written. Each test works in its own mkdtemp directory; the store's
 * directory (<tmp>/state/agentjail) does not exist beforehand. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"
#include "testutil.h"

struct fx {
	char tmp[64];
	char *state; /* <tmp>/state/agentjail */
	char *db;    /* <state>/agentjail.db */
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	snprintf(f->tmp, sizeof f->tmp, "/tmp/aj-store-XXXXXX");
	if (!mkdtemp(f->tmp))
		return -1;
	f->state = path_join(f->tmp, "state/agentjail");
	f->db = path_join(f->state, STORE_DB_NAME);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = test_rm_tree(f->tmp);
	free(f->state);
	free(f->db);
	free(f);
	return rc;
}

/* ---- helpers ---- */

/* An injected liveness check: the pids listed (0-terminated) are alive, any start time. */
static bool alive_in(long pid, long long start, void *arg)
{
	(void)start;
	for (const long *p = arg; *p; p++)
		if (*p == pid)
			return true;
	return false;
}

/* Nothing is lost: the rows of tests use made-up pids. */
static bool alive_everyone(long pid, long long start, void *arg)
{
	(void)pid, (void)start, (void)arg;
	return true;
}

static struct store *open_ok(const struct fx *f, const struct store_opts *o)
{
	struct store_opts dflt = {.alive = alive_everyone};
	struct store *st = NULL;
	struct err e = {0};
	int rc = store_open(f->state, o ? o : &dflt, &st, &e);
	if (rc < 0)
		fail_msg("store_open: %s: %s (%s)", e.what, e.path, e.hint);
	return st;
}

static struct store *open_at(const struct fx *f, int version)
{
	struct store_opts o = {.alive = alive_everyone, .target_version = version};
	return open_ok(f, &o);
}

static sqlite3 *db(struct store *st) { return store_handle(st); }

static void sql(struct store *st, const char *q)
{
	char *msg = NULL;
	if (sqlite3_exec(db(st), q, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", q, msg);
}

static long long sql_int(struct store *st, const char *q)
{
	sqlite3_stmt *s = NULL;
	assert_int_equal(sqlite3_prepare_v2(db(st), q, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	long long v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static char *sql_text(struct store *st, const char *q)
{
	sqlite3_stmt *s = NULL;
	assert_int_equal(sqlite3_prepare_v2(db(st), q, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	const unsigned char *t = sqlite3_column_text(s, 0);
	char *v = xstrdup(t ? (const char *)t : "(null)");
	sqlite3_finalize(s);
	return v;
}

static mode_t mode_of(const char *p)
{
	struct stat sb;
	assert_int_equal(stat(p, &sb), 0);
	return sb.st_mode & 07777;
}

/* A session to record: id from the caller, the rest fixed. */
static void mksess(struct session *s, const char *id, long pid, long long started)
{
	memset(s, 0, sizeof *s);
	s->id = xstrdup(id);
	s->profile = xstrdup("claude");
	strv_push(&s->argv, "claude");
	strv_push(&s->argv, "--dangerously-skip-permissions");
	s->workspace = xstrdup("/home/u/proj");
	s->policy_json = xstrdup("{\"version\":1,\"fs\":\"workspace-write\",\"net\":\"off\"}");
	s->bwrap_json = xstrdup("[\"bwrap\",\"--unshare-all\"]");
	s->pid = pid;
	s->pid_start = 1234;
	s->started_ms = started;
}

static void begin_ok(struct store *st, const char *id, long pid, long long started)
{
	struct session s;
	struct err e = {0};
	mksess(&s, id, pid, started);
	if (store_begin(st, &s, &e) < 0)
		fail_msg("store_begin: %s: %s (%s)", e.what, e.path, e.hint);
	session_free(&s);
}

static char *errstr(const struct err *e)
{
	char buf[2048];
	err_format(e, buf, sizeof buf);
	return xstrdup(buf);
}

#define ID(n) "0000000" #n "-0000-4000-8000-000000000000"

/* ---- files and schema ---- */

/* Under umask 0 the directory is still 0700 and the database and its WAL files 0600. */
static void creates_files_private(void **state)
{
	struct fx *f = *state;
	mode_t old = umask(0);
	struct store *st = open_ok(f, NULL);
	begin_ok(st, ID(1), 100, 1000); /* a write: the -wal and -shm files exist now */
	umask(old);
	assert_int_equal(mode_of(f->state), 0700);
	_cleanup_free_ char *parent = path_dirname(f->state);
	assert_int_equal(mode_of(parent), 0700);
	assert_int_equal(mode_of(f->db), 0600);
	_cleanup_free_ char *wal = xasprintf("%s-wal", f->db);
	_cleanup_free_ char *shm = xasprintf("%s-shm", f->db);
	assert_int_equal(mode_of(wal), 0600);
	assert_int_equal(mode_of(shm), 0600);
	assert_string_equal(store_path(st), f->db);
	store_close(st);
}

static void schema_is_current_wal_strict(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	_cleanup_free_ char *jm = sql_text(st, "PRAGMA journal_mode");
	assert_string_equal(jm, "wal");
	assert_int_equal(sql_int(st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(sql_int(st, "PRAGMA foreign_keys"), 1);
	assert_int_equal(sql_int(st, "PRAGMA busy_timeout"), 5000);
	static const char *const tables[] = {"sessions", "attempts", "events", "net_events"};
	for (size_t i = 0; i < 4; i++) {
		_cleanup_free_ char *q = xasprintf(
			"SELECT strict FROM pragma_table_list WHERE schema = 'main' AND name = '%s'",
			tables[i]);
		assert_int_equal(sql_int(st, q), 1);
	}
	/* no other table than ours (and SQLite's own) */
	assert_int_equal(sql_int(st, "SELECT count(*) FROM pragma_table_list WHERE schema = 'main'"
				     " AND type = 'table' AND name NOT LIKE 'sqlite_%'"),
			 4);
	/* STRICT means a wrong type is an error, not a conversion */
	assert_int_not_equal(sqlite3_exec(db(st),
					  "INSERT INTO sessions (id, argv, workspace, policy, pid,"
					  " pid_start, started_ms, status) VALUES"
					  " ('x', '[]', '/w', '{}', 'not a pid', 0, 0, 'running')",
					  NULL, NULL, NULL),
			     SQLITE_OK);
	store_close(st);
}

/* A jail must not inherit the database: every descriptor SQLite opened is close-on-exec. */
static void descriptors_close_on_exec(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	begin_ok(st, ID(1), 100, 1000);
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int seen = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char lp[300], target[4096];
		snprintf(lp, sizeof lp, "/proc/self/fd/%s", de->d_name);
		ssize_t n = readlink(lp, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strstr(target, f->tmp))
			continue;
		seen++;
		int fl = fcntl(atoi(de->d_name), F_GETFD);
		assert_true(fl >= 0 && (fl & FD_CLOEXEC));
	}
	closedir(d);
	assert_true(seen >= 2); /* the database and its WAL at least */
	store_close(st);
}

static void reopen_is_idempotent(void **state)
{
	struct fx *f = *state;
	for (int i = 0; i < 3; i++) {
		struct store *st = open_ok(f, NULL);
		assert_int_equal(sql_int(st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
		store_close(st);
	}
}

/* ---- migrations ---- */

/* What each older version's rows look like: two sessions, one finished, one running. */
/* version 2's rows; versions 3 (net counters) and 4 (backend) only add columns with
 * defaults */
#define SEED_V2 \
	"INSERT INTO sessions (id, profile, argv, workspace, policy, bwrap, agent_session_id," \
	" pid, pid_start, started_ms, ended_ms, status, exit_status, attempts, n_events," \
	" n_violations) VALUES" \
	" ('" ID(1) "', 'claude', '[\"claude\",\"-p\",\"hi\"]', '/w/one'," \
	"  '{\"version\":1,\"fs\":\"read-only\",\"net\":\"off\"}', '[\"bwrap\"]', 'ag-1'," \
	"  101, 11, 1000, 5000, 'exited', 3, 1, 0, 0)," \
	" ('" ID(2) "', NULL, '[\"sh\"]', '/w/two'," \
	"  '{\"version\":1,\"fs\":\"workspace-write\",\"net\":\"on\"}', NULL, NULL," \
	"  102, 12, 2000, NULL, 'running', NULL, 1, 0, 0);" \
	"INSERT INTO attempts (session_id, n, kind, argv, pid, pid_start, started_ms, ended_ms," \
	" status, exit_status) VALUES" \
	" ('" ID(1) "', 1, 'start', '[\"claude\",\"-p\",\"hi\"]', 101, 11, 1000, 5000," \
	"  'exited', 3)," \
	" ('" ID(2) "', 1, 'start', '[\"sh\"]', 102, 12, 2000, NULL, 'running', NULL);"

/* versions 3 and 4: a decision of the proxy (migration 5 rebuilds their table) */
#define SEED_NET \
	"INSERT INTO net_events (session_id, attempt, at_ms, proto, host, port, allowed, rule," \
	" addr, bytes_up, bytes_down, dur_ms, error) VALUES" \
	" ('" ID(1) "', 1, 1500, 'connect', 'seed.example', 443, 1, 'seed.example', '192.0.2.7'," \
	"  10, 20, 5, '');"

static const char *const seed_sql[STORE_SCHEMA_VERSION] = {
	[1] = "INSERT INTO sessions (id, profile, argv, workspace, policy, bwrap, agent_session_id,"
	      " pid, pid_start, started_ms, ended_ms, status, exit_status) VALUES"
	      " ('" ID(1) "', 'claude', '[\"claude\",\"-p\",\"hi\"]', '/w/one',"
	      "  '{\"version\":1,\"fs\":\"read-only\",\"net\":\"off\"}', '[\"bwrap\"]', 'ag-1',"
	      "  101, 11, 1000, 5000, 'exited', 3),"
	      " ('" ID(2) "', NULL, '[\"sh\"]', '/w/two',"
	      "  '{\"version\":1,\"fs\":\"workspace-write\",\"net\":\"on\"}', NULL, NULL,"
	      "  102, 12, 2000, NULL, 'running', NULL);",
	[2] = SEED_V2,
	[3] = SEED_V2 SEED_NET,
	[4] = SEED_V2 SEED_NET,
	[5] = SEED_V2 SEED_NET,
	[6] = SEED_V2 SEED_NET,
	[7] = SEED_V2 SEED_NET,
};

/* The seeded rows, read through the API of the latest version. */
static void check_seed(struct store *st)
{
	struct session s;
	struct err e = {0};
	assert_int_equal(store_get(st, ID(1), &s, &e), 0);
	assert_string_equal(s.profile, "claude");
	assert_int_equal(s.argv.n, 3);
	assert_string_equal(s.argv.v[2], "hi");
	assert_string_equal(s.workspace, "/w/one");
	assert_string_equal(s.policy_json, "{\"version\":1,\"fs\":\"read-only\",\"net\":\"off\"}");
	assert_string_equal(s.bwrap_json, "[\"bwrap\"]");
	assert_string_equal(s.agent_session_id, "ag-1");
	assert_null(s.backend); /* migration 4: every older session ran locally */
	assert_int_equal(s.pid, 101);
	assert_int_equal(s.pid_start, 11);
	assert_int_equal(s.started_ms, 1000);
	assert_int_equal(s.ended_ms, 5000);
	assert_int_equal(s.status, SESS_EXITED);
	assert_int_equal(s.exit_status, 3);
	assert_int_equal(s.attempts, 1);
	assert_int_equal(s.n_events, 0);
	session_free(&s);
	assert_int_equal(store_get(st, ID(2), &s, &e), 0);
	assert_null(s.profile);
	assert_null(s.bwrap_json);
	assert_int_equal(s.status, SESS_RUNNING);
	assert_int_equal(s.exit_status, -1);
	assert_int_equal(s.ended_ms, 0);
	session_free(&s);
	/* each old run is the session's first attempt */
	struct attempt *a;
	size_t n;
	assert_int_equal(store_attempts(st, ID(1), &a, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(a[0].n, 1);
	assert_int_equal(a[0].kind, ATTEMPT_START);
	assert_int_equal(a[0].argv.n, 3);
	assert_int_equal(a[0].status, SESS_EXITED);
	assert_int_equal(a[0].exit_status, 3);
	assert_int_equal(a[0].started_ms, 1000);
	assert_int_equal(a[0].ended_ms, 5000);
	attempts_free(a, n);
	/* and the migrated rows take the new writes */
	assert_int_equal(store_add_event(st, ID(2), "violation", "{}", &e), 0);
	assert_int_equal(store_finish(st, ID(2), SESS_EXITED, 0, 9000, &e), 0);
	assert_int_equal(store_get(st, ID(2), &s, &e), 0);
	assert_int_equal(s.n_violations, 1);
	assert_int_equal(s.status, SESS_EXITED);
	assert_int_equal(s.n_net_allowed + s.n_net_denied, 0);
	session_free(&s);
	struct net_event ev[2] = {{.at_ms = 1, .proto = NP_DNS, .host = "x.example"},
				  {.at_ms = 2, .proto = NP_TCP, .host = "y.example", .port = 5432}};
	assert_int_equal(store_add_net_events(st, ID(1), 0, ev, 2, &e), 0);
	assert_int_equal(store_get(st, ID(1), &s, &e), 0);
	assert_int_equal(s.n_net_denied, 2);
	session_free(&s);
	/* migration 5: the captured connections' proto is taken */
	assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events WHERE proto = 'tcp'"), 1);
}

/* From each older version, to each newer one on the way, then to the latest: the data is kept
 * and user_version follows. */
static void migrates_from_every_version(void **state)
{
	struct fx *f = *state;
	for (int from = 1; from < STORE_SCHEMA_VERSION; from++) {
		for (int via = from; via <= STORE_SCHEMA_VERSION; via++) {
			if (access(f->state, F_OK) == 0)
				assert_int_equal(test_rm_tree(f->state), 0);
			struct store *st = open_at(f, from);
			assert_int_equal(sql_int(st, "PRAGMA user_version"), from);
			sql(st, seed_sql[from]);
			store_close(st);
			st = open_at(f, via);
			assert_int_equal(sql_int(st, "PRAGMA user_version"), via);
			store_close(st);
			st = open_ok(f, NULL);
			assert_int_equal(sql_int(st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
			assert_int_equal(sql_int(st, "SELECT count(*) FROM sessions"), 2);
			check_seed(st);
			/* the proxy's decisions of versions 3 and 4 survive migration 5 whole */
			assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events WHERE host = "
						     "'seed.example' AND bytes_down = 20 AND "
						     "addr = '192.0.2.7'"),
					 from >= 3);
			_cleanup_free_ char *ic = sql_text(st, "PRAGMA integrity_check");
			assert_string_equal(ic, "ok");
			assert_int_equal(sql_int(st, "SELECT count(*) FROM pragma_foreign_key_check"),
					 0);
			store_close(st);
		}
	}
}

/* A migration that fails leaves the database at the version before it, untouched. */
static void failed_migration_rolls_back(void **state)
{
	struct fx *f = *state;
	struct store *st = open_at(f, 1);
	sql(st, seed_sql[1]);
	sql(st, "CREATE TABLE events (x INTEGER) STRICT"); /* in the way of migration 2 */
	store_close(st);
	struct store_opts o = {.alive = alive_everyone};
	struct err e = {0};
	st = NULL;
	assert_int_equal(store_open(f->state, &o, &st, &e), -1);
	assert_null(st);
	assert_non_null(strstr(e.what, "version 2"));
	assert_string_equal(e.path, f->db);
	st = open_at(f, 1);
	assert_int_equal(sql_int(st, "PRAGMA user_version"), 1);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM pragma_table_list WHERE name = "
				     "'attempts'"),
			 0);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM pragma_table_info('sessions') WHERE "
				     "name = 'attempts'"),
			 0);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM sessions"), 2);
	sql(st, "DROP TABLE events");
	store_close(st);
	st = open_ok(f, NULL);
	check_seed(st);
	store_close(st);
}

/* A database from a newer agentjail is refused and not touched (not even its journal mode). */
static void newer_version_refused(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *parent = path_dirname(f->state);
	assert_int_equal(mkdir(parent, 0700), 0);
	assert_int_equal(mkdir(f->state, 0700), 0);
	sqlite3 *raw = NULL;
	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw,
				      "CREATE TABLE future (x INTEGER); PRAGMA user_version = 99;",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(raw);
	assert_int_equal(chmod(f->db, 0600), 0);
	struct store *st = NULL;
	struct err e = {0};
	assert_int_equal(store_open(f->state, NULL, &st, &e), -1);
	assert_null(st);
	assert_non_null(strstr(e.what, "newer agentjail"));
	assert_non_null(strstr(e.what, "99"));
	assert_non_null(strstr(e.hint, "not touched"));
	assert_int_equal(sqlite3_open(f->db, &raw), SQLITE_OK);
	sqlite3_stmt *s = NULL;
	assert_int_equal(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(s, 0), "delete");
	sqlite3_finalize(s);
	sqlite3_close(raw);
}

/* ---- the life cycle ---- */

static void begin_finish_round_trip(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	char id[STORE_ID_LEN + 1];
	assert_int_equal(store_new_id(id, &e), 0);
	struct session s;
	mksess(&s, id, 4242, 0);
	strv_push(&s.argv, "it's \"quoted\"\n");
	strv_push(&s.argv, "\xff\xfe not utf-8"); /* kept byte for byte */
	strv_push(&s.argv, "");
	long long before = store_now_ms();
	assert_int_equal(store_begin(st, &s, &e), 0);
	/* the same id twice is refused, and the first row stays */
	assert_int_equal(store_begin(st, &s, &e), -1);
	assert_non_null(strstr(e.what, "UNIQUE"));

	struct session g;
	assert_int_equal(store_get(st, id, &g, &e), 0);
	assert_string_equal(g.id, id);
	assert_string_equal(g.profile, "claude");
	assert_int_equal(g.argv.n, s.argv.n);
	for (size_t i = 0; i < s.argv.n; i++)
		assert_string_equal(g.argv.v[i], s.argv.v[i]);
	assert_string_equal(g.workspace, s.workspace);
	assert_string_equal(g.policy_json, s.policy_json);
	assert_string_equal(g.bwrap_json, s.bwrap_json);
	assert_null(g.agent_session_id);
	assert_null(g.backend); /* local */
	assert_int_equal(g.pid, 4242);
	assert_int_equal(g.pid_start, 1234);
	assert_true(g.started_ms >= before && g.started_ms <= store_now_ms()); /* 0 means now */
	assert_int_equal(g.ended_ms, 0);
	assert_int_equal(g.status, SESS_RUNNING);
	assert_int_equal(g.exit_status, -1);
	assert_int_equal(g.attempts, 1);
	session_free(&g);

	assert_int_equal(store_set_agent_session_id(st, id, "agent-xyz", &e), 0);
	assert_int_equal(store_set_backend(st, id, "opensandbox", "http://svc:8080", "sb-1", &e), 0);
	assert_int_equal(store_add_event(st, id, "net.deny", "{\"host\":\"x.org\"}", &e), 0);
	assert_int_equal(store_add_event(st, id, "violation", NULL, &e), 0);
	assert_int_equal(store_add_event(st, id, "violation.fs", "{}", &e), 0);
	assert_int_equal(store_add_event(st, id, "violations", "{}", &e), 0); /* not one */
	assert_int_equal(store_finish(st, id, SESS_EXITED, 3, 777777, &e), 0);
	assert_int_equal(store_get(st, id, &g, &e), 0);
	assert_string_equal(g.agent_session_id, "agent-xyz");
	assert_string_equal(g.backend, "opensandbox");
	assert_string_equal(g.backend_url, "http://svc:8080");
	assert_string_equal(g.sandbox_id, "sb-1");
	assert_int_equal(g.status, SESS_EXITED);
	assert_int_equal(g.exit_status, 3);
	assert_int_equal(g.ended_ms, 777777);
	assert_int_equal(g.n_events, 4);
	assert_int_equal(g.n_violations, 2);
	session_free(&g);

	/* the resume ladder: resume form, then a fresh start */
	struct strv rargv = STRV_INIT;
	strv_push(&rargv, "claude");
	strv_push(&rargv, "--resume");
	strv_push(&rargv, "agent-xyz");
	assert_int_equal(store_attempt_begin(st, id, ATTEMPT_RESUME, &rargv, 5000, 55, &e), 2);
	assert_int_equal(store_get(st, id, &g, &e), 0);
	assert_int_equal(g.status, SESS_RUNNING);
	assert_int_equal(g.exit_status, -1);
	assert_int_equal(g.ended_ms, 0);
	assert_int_equal(g.pid, 5000);
	assert_int_equal(g.pid_start, 55);
	assert_int_equal(g.attempts, 2);
	assert_int_equal(g.argv.n, s.argv.n); /* the session's argv is the first one */
	session_free(&g);
	assert_int_equal(store_add_event(st, id, "net.allow", NULL, &e), 0);
	assert_int_equal(store_finish(st, id, SESS_EXITED, 1, 0, &e), 0);
	assert_int_equal(store_attempt_begin(st, id, ATTEMPT_FRESH, &s.argv, 5001, 56, &e), 3);
	assert_int_equal(store_finish(st, id, SESS_SIGNALLED, 9, 0, &e), 0);
	assert_int_equal(store_get(st, id, &g, &e), 0);
	assert_int_equal(g.status, SESS_SIGNALLED);
	assert_int_equal(g.exit_status, 9);
	assert_true(g.ended_ms >= before);
	session_free(&g);

	struct attempt *a;
	size_t n;
	assert_int_equal(store_attempts(st, id, &a, &n, &e), 0);
	assert_int_equal(n, 3);
	static const struct {
		enum attempt_kind kind;
		enum sess_status status;
		int exit;
		long pid;
	} want[] = {{ATTEMPT_START, SESS_EXITED, 3, 4242},
		    {ATTEMPT_RESUME, SESS_EXITED, 1, 5000},
		    {ATTEMPT_FRESH, SESS_SIGNALLED, 9, 5001}};
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].n, (int)i + 1);
		assert_int_equal(a[i].kind, want[i].kind);
		assert_int_equal(a[i].status, want[i].status);
		assert_int_equal(a[i].exit_status, want[i].exit);
		assert_int_equal(a[i].pid, want[i].pid);
		assert_true(a[i].ended_ms > 0);
	}
	assert_string_equal(a[1].argv.v[1], "--resume");
	attempts_free(a, n);

	struct event *ev;
	assert_int_equal(store_events(st, id, &ev, &n, &e), 0);
	assert_int_equal(n, 5);
	assert_string_equal(ev[0].kind, "net.deny");
	assert_string_equal(ev[0].detail_json, "{\"host\":\"x.org\"}");
	assert_null(ev[1].detail_json);
	assert_int_equal(ev[0].attempt, 1);
	assert_int_equal(ev[4].attempt, 2);
	assert_string_equal(ev[4].kind, "net.allow");
	for (size_t i = 1; i < n; i++)
		assert_true(ev[i].seq > ev[i - 1].seq);
	events_free(ev, n);

	strv_free(&rargv);
	session_free(&s);
	store_close(st);
}

/* The end of a session begun on a connection is prepared with its start (store.c, fin): it still
 * reads the current attempt at the end (a resume recorded meanwhile by another process is the
 * one ended, as before), and a session begun elsewhere is ended on this connection too. */
static void finish_prepared_at_start(void **state)
{
	struct fx *f = *state;
	struct store *a = open_ok(f, NULL), *b = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(a, ID(1), 4242, 1000);
	begin_ok(b, ID(2), 4343, 1001);
	struct strv rargv = STRV_INIT;
	strv_push(&rargv, "claude");
	assert_int_equal(store_attempt_begin(b, ID(1), ATTEMPT_RESUME, &rargv, 5000, 55, &e), 2);
	assert_int_equal(store_finish(a, ID(1), SESS_EXITED, 7, 2000, &e), 0);
	assert_int_equal(store_finish(a, ID(2), SESS_KILLED, 15, 2001, &e), 0); /* begun by b */
	struct attempt *at;
	size_t n;
	assert_int_equal(store_attempts(a, ID(1), &at, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(at[0].status, SESS_RUNNING); /* attempt 1 was superseded, not ended */
	assert_int_equal(at[1].status, SESS_EXITED);
	assert_int_equal(at[1].exit_status, 7);
	attempts_free(at, n);
	struct session g;
	assert_int_equal(store_get(b, ID(2), &g, &e), 0);
	assert_int_equal(g.status, SESS_KILLED);
	assert_int_equal(g.exit_status, 15);
	assert_int_equal(g.ended_ms, 2001);
	session_free(&g);
	/* again on the same prepared statements: the next end of ID(1) */
	assert_int_equal(store_finish(a, ID(1), SESS_SIGNALLED, -1, 3000, &e), 0);
	assert_int_equal(store_get(a, ID(1), &g, &e), 0);
	assert_int_equal(g.status, SESS_SIGNALLED);
	assert_int_equal(g.exit_status, -1);
	session_free(&g);
	strv_free(&rargv);
	store_close(b);
	store_close(a);
}

/* The WAL's frames (mxFrame) and those copied into the database (nBackfill), from the
 * wal-index (SQLite's WAL format: the header at 0, its second copy at 48, the checkpoint
 * information at 96). */
static void wal_frames(const struct fx *f, uint32_t *mx, uint32_t *backfill)
{
	char *shm = xasprintf("%s-shm", f->db);
	int fd = open(shm, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	unsigned char h[100];
	assert_int_equal(pread(fd, h, sizeof h, 0), (ssize_t)sizeof h);
	close(fd);
	free(shm);
	memcpy(mx, h + 16, 4);
	memcpy(backfill, h + 96, 4);
}

/* A session's end never checkpoints (store_finish: it is on the way to agentjail's exit); the
 * next commit past the threshold, the next session's start, does. */
static void finish_never_checkpoints(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	uint32_t mx = 0, bf = 0, mx0;
	/* how many frames an end adds (d), then events until the WAL is fewer than d frames short
	 * of the threshold (256) */
	begin_ok(st, ID(3), 4242, 900);
	wal_frames(f, &mx0, &bf);
	assert_int_equal(store_finish(st, ID(3), SESS_EXITED, 0, 950, &e), 0);
	wal_frames(f, &mx, &bf);
	uint32_t d = mx - mx0;
	assert_true(d >= 1 && d < 20);
	begin_ok(st, ID(1), 4242, 1000);
	for (int i = 0; i < 100000; i++) {
		wal_frames(f, &mx, &bf);
		if (mx + d >= 256 && mx < 256 && bf < mx)
			break;
		assert_int_equal(store_add_event(st, ID(1), "net.allow", "{}", &e), 0);
	}
	assert_true(mx + d >= 256 && mx < 256);
	assert_int_equal(store_finish(st, ID(1), SESS_EXITED, 0, 2000, &e), 0);
	uint32_t mx2, bf2;
	wal_frames(f, &mx2, &bf2);
	assert_true(mx2 >= 256); /* past the threshold */
	assert_true(bf2 < mx2);  /* and not copied */
	begin_ok(st, ID(2), 4242, 3000);
	wal_frames(f, &mx, &bf);
	assert_true(mx > mx2);
	assert_int_equal(bf, mx); /* checkpointed by the start */
	store_close(st);
}

/* What the functions refuse, and the lookups of an unknown session. */
static void misuse_and_unknown(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(st, ID(1), 100, 1000);
	assert_int_equal(store_finish(st, ID(1), SESS_RUNNING, 0, 0, &e), -1);
	assert_int_equal(e.errnum, EINVAL);
	struct session s;
	mksess(&s, "not-an-id", 1, 1);
	assert_int_equal(store_begin(st, &s, &e), -1);
	session_free(&s);
	mksess(&s, ID(2), 0, 1); /* no pid */
	assert_int_equal(store_begin(st, &s, &e), -1);
	session_free(&s);
	const char *ghost = ID(9);
	struct strv argv = STRV_INIT;
	strv_push(&argv, "x");
	assert_int_equal(store_finish(st, ghost, SESS_EXITED, 0, 0, &e), STORE_NONE);
	assert_string_equal(e.what, "no such session");
	assert_string_equal(e.path, ghost);
	assert_int_equal(store_attempt_begin(st, ghost, ATTEMPT_RESUME, &argv, 1, 1, &e),
			 STORE_NONE);
	assert_int_equal(store_add_event(st, ghost, "k", NULL, &e), STORE_NONE);
	assert_int_equal(store_set_agent_session_id(st, ghost, "a", &e), STORE_NONE);
	assert_int_equal(store_set_backend(st, ghost, "opensandbox", "u", "s", &e), STORE_NONE);
	assert_int_equal(store_rm(st, ghost, &e), STORE_NONE);
	struct attempt *a;
	struct event *ev;
	size_t n;
	assert_int_equal(store_attempts(st, ghost, &a, &n, &e), STORE_NONE);
	assert_int_equal(store_events(st, ghost, &ev, &n, &e), STORE_NONE);
	/* nothing of these reached the database */
	assert_int_equal(sql_int(st, "SELECT count(*) FROM sessions"), 1);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM attempts"), 1);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM events"), 0);
	strv_free(&argv);
	store_close(st);
}

static void ids_are_uuid4(void **state)
{
	(void)state;
	struct err e = {0};
	char prev[STORE_ID_LEN + 1] = "";
	for (int i = 0; i < 200; i++) {
		char id[STORE_ID_LEN + 1];
		assert_int_equal(store_new_id(id, &e), 0);
		assert_int_equal(strlen(id), STORE_ID_LEN);
		for (int k = 0; k < STORE_ID_LEN; k++) {
			if (k == 8 || k == 13 || k == 18 || k == 23)
				assert_int_equal(id[k], '-');
			else
				assert_non_null(strchr("0123456789abcdef", id[k]));
		}
		assert_int_equal(id[14], '4');
		assert_non_null(strchr("89ab", id[19]));
		assert_string_not_equal(id, prev);
		memcpy(prev, id, sizeof id);
	}
	long long a, b;
	assert_int_equal(store_proc_start(0, &a, &e), 0);
	assert_int_equal(store_proc_start(getpid(), &b, &e), 0);
	assert_int_equal(a, b);
	assert_true(a > 0);
}

/* ---- lookups ---- */

static void prefix_resolution(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	static const char *const ids[] = {
		"aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002",
		"abcdef01-0000-4000-8000-000000000000", "c0000000-0000-4000-8000-000000000001",
		"c0000000-0000-4000-8000-000000000002", "c0000000-0000-4000-8000-000000000003",
		"c0000000-0000-4000-8000-000000000004", "c0000000-0000-4000-8000-000000000005",
		"c0000000-0000-4000-8000-000000000006", "c0000000-0000-4000-8000-000000000007",
	};
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
		begin_ok(st, ids[i], 100, 1000 + (long long)i);
	static const struct {
		const char *q;
		int rc;
		const char *id;   /* when found */
		const char *needle; /* in the formatted error otherwise */
	} t[] = {
		{"abcdef01-0000-4000-8000-000000000000", 0, "abcdef01-0000-4000-8000-000000000000", NULL},
		{"ABCDEF01-0000-4000-8000-000000000000", 0, "abcdef01-0000-4000-8000-000000000000", NULL},
		{"ab", 0, "abcdef01-0000-4000-8000-000000000000", NULL},
		{"AbC", 0, "abcdef01-0000-4000-8000-000000000000", NULL},
		{"aaaaaaaa-0000-4000-8000-000000000002", 0, "aaaaaaaa-0000-4000-8000-000000000002", NULL},
		{"aaaaaaaa-0000-4000-8000-00000000000", STORE_AMBIGUOUS, NULL,
		 "aaaaaaaa-0000-4000-8000-000000000001, aaaaaaaa-0000-4000-8000-000000000002"},
		{"a", STORE_AMBIGUOUS, NULL, "matches 3 sessions"},
		{"c", STORE_AMBIGUOUS, NULL, "and 2 more"},
		{"b", STORE_NONE, NULL, "no such session: b"},
		{"aaaab", STORE_NONE, NULL, "no such session"},
		{"", STORE_NONE, NULL, "not a session id"},
		{"xyz", STORE_NONE, NULL, "not a session id"},
		{"%", STORE_NONE, NULL, "not a session id"},
		{"abcdef01-0000-4000-8000-0000000000000", STORE_NONE, NULL, "not a session id"},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		struct session s;
		struct err e = {0};
		int rc = store_get(st, t[i].q, &s, &e);
		if (rc != t[i].rc)
			fail_msg("%s: %d, want %d", t[i].q, rc, t[i].rc);
		if (rc == 0) {
			assert_string_equal(s.id, t[i].id);
			session_free(&s);
			continue;
		}
		_cleanup_free_ char *msg = errstr(&e);
		if (!strstr(msg, t[i].needle))
			fail_msg("%s: \"%s\" lacks \"%s\"", t[i].q, msg, t[i].needle);
	}
	store_close(st);
}

static void list_newest_first(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(st, ID(1), 100, 3000);
	begin_ok(st, ID(2), 100, 1000);
	begin_ok(st, ID(3), 100, 2000);
	struct session s;
	mksess(&s, ID(4), 100, 2500);
	free(s.workspace);
	s.workspace = xstrdup("/elsewhere");
	assert_int_equal(store_begin(st, &s, &e), 0);
	session_free(&s);
	struct session *v;
	size_t n;
	assert_int_equal(store_list(st, NULL, 0, &v, &n, &e), 0);
	assert_int_equal(n, 4);
	static const char *const all[] = {ID(1), ID(4), ID(3), ID(2)};
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(v[i].id, all[i]);
		assert_int_equal(v[i].argv.n, 2);
		assert_non_null(v[i].policy_json);
		assert_null(v[i].bwrap_json); /* not in listings */
	}
	sessions_free(v, n);
	assert_int_equal(store_list(st, "/home/u/proj", 2, &v, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].id, ID(1));
	assert_string_equal(v[1].id, ID(3));
	sessions_free(v, n);
	assert_int_equal(store_list(st, "/nowhere", 0, &v, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	store_close(st);
}

/* ---- lost sessions ---- */

static void lost_with_injected_check(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(st, ID(1), 100, 1000); /* alive */
	begin_ok(st, ID(2), 200, 2000); /* gone */
	begin_ok(st, ID(3), 300, 3000); /* gone, but it finished */
	assert_int_equal(store_finish(st, ID(3), SESS_EXITED, 0, 3500, &e), 0);
	begin_ok(st, ID(4), 400, 4000); /* gone during its second attempt */
	assert_int_equal(store_finish(st, ID(4), SESS_EXITED, 1, 4100, &e), 0);
	struct strv argv = STRV_INIT;
	strv_push(&argv, "again");
	assert_int_equal(store_attempt_begin(st, ID(4), ATTEMPT_FRESH, &argv, 401, 9, &e), 2);
	strv_free(&argv);
	store_close(st);

	static long alive[] = {100, 0};
	struct store_opts o = {.alive = alive_in, .alive_arg = alive};
	st = open_ok(f, &o);
	static const struct {
		const char *id;
		enum sess_status status;
	} want[] = {{ID(1), SESS_RUNNING}, {ID(2), SESS_LOST}, {ID(3), SESS_EXITED},
		    {ID(4), SESS_LOST}};
	for (size_t i = 0; i < 4; i++) {
		struct session s;
		assert_int_equal(store_get(st, want[i].id, &s, &e), 0);
		assert_int_equal(s.status, want[i].status);
		if (want[i].status == SESS_LOST) {
			assert_int_equal(s.ended_ms, 0);
			assert_int_equal(s.exit_status, -1);
		}
		session_free(&s);
	}
	struct attempt *a;
	size_t n;
	assert_int_equal(store_attempts(st, ID(4), &a, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(a[0].status, SESS_EXITED); /* the finished attempt keeps its end */
	assert_int_equal(a[1].status, SESS_LOST);
	attempts_free(a, n);
	/* a session wrongly given up for lost still gets its true ending */
	assert_int_equal(store_finish(st, ID(2), SESS_EXITED, 0, 0, &e), 0);
	struct session s;
	assert_int_equal(store_get(st, ID(2), &s, &e), 0);
	assert_int_equal(s.status, SESS_EXITED);
	session_free(&s);
	store_close(st);
}

/* The default check, on real processes: ourselves (alive), ourselves with another start time
 * (the pid was reused), a reaped child (gone), a zombie child (gone). */
static void lost_with_proc(void **state)
{
	struct fx *f = *state;
	struct err e = {0};
	long long self_start;
	assert_int_equal(store_proc_start(0, &self_start, &e), 0);

	pid_t reaped = fork();
	assert_true(reaped >= 0);
	if (reaped == 0)
		_exit(0);
	assert_int_equal(waitpid(reaped, NULL, 0), reaped);
	pid_t zombie = fork();
	assert_true(zombie >= 0);
	if (zombie == 0)
		_exit(0);
	/* wait until it is a zombie, without reaping it */
	siginfo_t si;
	assert_int_equal(waitid(P_PID, (id_t)zombie, &si, WEXITED | WNOWAIT), 0);

	struct store *st = open_ok(f, NULL);
	struct session s;
	static const char *const ids[] = {ID(1), ID(2), ID(3), ID(4)};
	const long pids[] = {getpid(), getpid(), reaped, zombie};
	const long long starts[] = {self_start, self_start + 1, 1, 1};
	for (int i = 0; i < 4; i++) {
		mksess(&s, ids[i], pids[i], 1000);
		s.pid_start = starts[i];
		assert_int_equal(store_begin(st, &s, &e), 0);
		session_free(&s);
	}
	store_close(st);
	struct store_opts o = {0}; /* store_proc_alive */
	st = open_ok(f, &o);
	const enum sess_status want[] = {SESS_RUNNING, SESS_LOST, SESS_LOST, SESS_LOST};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(store_get(st, ids[i], &s, &e), 0);
		if (s.status != want[i])
			fail_msg("%s: %s, want %s", ids[i], sess_status_name(s.status),
				 sess_status_name(want[i]));
		session_free(&s);
	}
	store_close(st);
	assert_int_equal(waitpid(zombie, NULL, 0), zombie);
	assert_true(store_proc_alive(getpid(), self_start, NULL));
	assert_false(store_proc_alive(0, self_start, NULL));
}

/* ---- network events ---- */

static struct net_event mkev(long long at, enum net_proto p, const char *host, int port,
			     bool allowed, const char *rule)
{
	struct net_event ev = {.at_ms = at, .proto = p, .port = (uint16_t)port, .allowed = allowed};
	snprintf(ev.host, sizeof ev.host, "%s", host);
	snprintf(ev.rule, sizeof ev.rule, "%s", rule);
	return ev;
}

static void net_events_round_trip(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(st, ID(1), 100, 1000);
	begin_ok(st, ID(2), 100, 2000);
	struct net_event b[4] = {
		mkev(10, NP_CONNECT, "api.example.com", 443, true, "*.example.com"),
		mkev(11, NP_CONNECT, "evil.example", 443, false, "evil.example is not allowed"),
		mkev(12, NP_HTTP, "evil.example", 443, false, "evil.example is not allowed"),
		mkev(13, NP_DNS, "other.example", 0, false, "not allowed"),
	};
	snprintf(b[0].addr, sizeof b[0].addr, "203.0.113.7");
	b[0].bytes_up = 1234;
	b[0].bytes_down = UINT64_MAX; /* clamped, not negative */
	b[0].dur_ms = 56;
	snprintf(b[2].error, sizeof b[2].error, "connect: Connection refused");
	/* a host with no NUL in its array: read up to the array's end, no further */
	memset(b[3].host, 'h', sizeof b[3].host);
	assert_int_equal(store_add_net_events(st, ID(1), 0, b, 4, &e), 0);
	assert_int_equal(store_add_net_events(st, ID(1), 0, b, 0, &e), 0);

	struct net_row *r;
	size_t n;
	assert_int_equal(store_net_events(st, ID(1), 0, 0, &r, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_int_equal(r[0].attempt, 1);
	assert_int_equal(r[0].ev.at_ms, 10);
	assert_int_equal(r[0].ev.proto, NP_CONNECT);
	assert_string_equal(r[0].ev.host, "api.example.com");
	assert_int_equal(r[0].ev.port, 443);
	assert_true(r[0].ev.allowed);
	assert_string_equal(r[0].ev.rule, "*.example.com");
	assert_string_equal(r[0].ev.addr, "203.0.113.7");
	assert_int_equal(r[0].ev.bytes_up, 1234);
	assert_int_equal(r[0].ev.bytes_down, INT64_MAX);
	assert_int_equal(r[0].ev.dur_ms, 56);
	assert_string_equal(r[0].ev.error, "");
	assert_false(r[1].ev.allowed);
	assert_int_equal(r[2].ev.proto, NP_HTTP);
	assert_string_equal(r[2].ev.error, "connect: Connection refused");
	assert_int_equal(r[3].ev.proto, NP_DNS);
	assert_int_equal(strlen(r[3].ev.host), sizeof r[3].ev.host - 1);
	assert_true(r[0].seq < r[1].seq && r[1].seq < r[2].seq && r[2].seq < r[3].seq);
	long long second = r[1].seq;
	free(r);
	/* since a seq, and a limit */
	assert_int_equal(store_net_events(st, ID(1), second, 1, &r, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].ev.at_ms, 12);
	free(r);
	assert_int_equal(store_net_events(st, ID(2), 0, 0, &r, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_null(r);

	/* the counters, on the row read and listed */
	struct session s;
	assert_int_equal(store_get(st, ID(1), &s, &e), 0);
	assert_int_equal(s.n_net_allowed, 1);
	assert_int_equal(s.n_net_denied, 3);
	session_free(&s);
	struct session *v;
	assert_int_equal(store_list(st, NULL, 0, &v, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[1].id, ID(1));
	assert_int_equal(v[1].n_net_denied, 3);
	assert_int_equal(v[0].n_net_denied, 0);
	sessions_free(v, n);

	/* denied by host and port, most frequent first, with the first one's reason */
	struct net_count *c;
	assert_int_equal(store_net_counts(st, ID(1), NET_DENIED, 0, &c, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(c[0].host, "evil.example");
	assert_int_equal(c[0].port, 443);
	assert_int_equal(c[0].n, 2);
	assert_string_equal(c[0].why, "evil.example is not allowed");
	assert_int_equal(c[1].port, 0);
	assert_int_equal(c[1].n, 1);
	assert_string_equal(c[1].why, "not allowed");
	net_counts_free(c, n);
	assert_int_equal(store_net_counts(st, ID(1), NET_DENIED, 1, &c, &n, &e), 0);
	assert_int_equal(n, 1);
	net_counts_free(c, n);
	assert_int_equal(store_net_counts(st, ID(1), NET_FAILED, 0, &c, &n, &e), 0);
	assert_int_equal(n, 0);
	net_counts_free(c, n);

	/* attempt 0 is the current attempt; an explicit one is kept */
	struct strv argv = STRV_INIT;
	strv_push(&argv, "x");
	assert_int_equal(store_finish(st, ID(1), SESS_EXITED, 0, 0, &e), 0);
	assert_int_equal(store_attempt_begin(st, ID(1), ATTEMPT_RESUME, &argv, 7, 7, &e), 2);
	strv_free(&argv);
	assert_int_equal(store_add_net_events(st, ID(1), 0, b, 1, &e), 0);
	assert_int_equal(store_add_net_events(st, ID(1), 1, b, 1, &e), 0);
	assert_int_equal(store_net_events(st, ID(1), 0, 0, &r, &n, &e), 0);
	assert_int_equal(n, 6);
	assert_int_equal(r[4].attempt, 2);
	assert_int_equal(r[5].attempt, 1);
	free(r);

	/* an unknown session: nothing written, its id named */
	assert_int_equal(store_add_net_events(st, ID(3), 0, b, 4, &e), STORE_NONE);
	assert_string_equal(e.path, ID(3));
	assert_int_equal(store_net_events(st, ID(3), 0, 0, &r, &n, &e), STORE_NONE);
	assert_int_equal(store_net_counts(st, ID(3), NET_DENIED, 0, &c, &n, &e), STORE_NONE);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events"), 6);

	/* removed with their session */
	assert_int_equal(store_rm(st, ID(1), &e), 0);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events"), 0);
	store_close(st);
}

/* Allowed requests whose upstream failed (issue 26): kept apart, counted, grouped with their
 * error; a denied event's "failed" is never kept. */
static void net_events_failed(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(st, ID(1), 100, 1000);
	struct net_event b[4] = {
		mkev(10, NP_CONNECT, "pypi.org", 443, true, "pypi.org"),
		mkev(11, NP_CONNECT, "pypi.org", 443, true, "pypi.org"),
		mkev(12, NP_CONNECT, "ok.example", 443, true, "ok.example"),
		mkev(13, NP_CONNECT, "evil.example", 443, false, "evil.example is not allowed"),
	};
	b[0].failed = b[1].failed = true;
	snprintf(b[0].error, sizeof b[0].error, "could not resolve: Domain name not found");
	snprintf(b[1].error, sizeof b[1].error, "could not resolve: Timeout");
	b[3].failed = true; /* meaningless on a denial: not kept */
	assert_int_equal(store_add_net_events(st, ID(1), 0, b, 4, &e), 0);
	struct session s;
	assert_int_equal(store_get(st, ID(1), &s, &e), 0);
	assert_int_equal(s.n_net_allowed, 3);
	assert_int_equal(s.n_net_failed, 2);
	assert_int_equal(s.n_net_denied, 1);
	session_free(&s);
	struct net_row *r;
	size_t n;
	assert_int_equal(store_net_events(st, ID(1), 0, 0, &r, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_true(r[0].ev.failed && r[1].ev.failed);
	assert_false(r[2].ev.failed || r[3].ev.failed);
	free(r);
	struct net_count *c;
	assert_int_equal(store_net_counts(st, ID(1), NET_FAILED, 0, &c, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_string_equal(c[0].host, "pypi.org");
	assert_int_equal(c[0].n, 2);
	assert_string_equal(c[0].why, "could not resolve: Domain name not found"); /* the first */
	net_counts_free(c, n);
	store_close(st);
}

/* Migration 5 marks the older allowed requests that failed before their tunnel (an error and
 * no address) and counts them; a DNS "no data" is an answer. */
static void migration_5_backfills_failed(void **state)
{
	struct fx *f = *state;
	struct store *st = open_at(f, 4);
	sql(st, SEED_V2);
	sql(st, "INSERT INTO net_events (session_id, attempt, at_ms, proto, host, port, allowed,"
		" rule, addr, bytes_up, bytes_down, dur_ms, error) VALUES"
		" ('" ID(1) "', 1, 1, 'connect', 'pypi.org', 443, 1, 'pypi.org', '', 0, 0, 0,"
		"  'could not resolve: Domain name not found'),"
		" ('" ID(1) "', 1, 2, 'connect', 'a.example', 443, 1, 'a.example', '', 0, 0, 0,"
		"  'connect: Connection refused'),"
		" ('" ID(1) "', 1, 3, 'connect', 'b.example', 443, 1, 'b.example', '192.0.2.1',"
		"  10, 20, 5, 'to client: Connection reset by peer'),"
		" ('" ID(1) "', 1, 4, 'dns', 'b.example', 0, 1, 'b.example', '', 0, 0, 0,"
		"  'resolve: DNS server returned answer with no data'),"
		" ('" ID(1) "', 1, 5, 'connect', 'c.example', 443, 1, 'c.example', '192.0.2.2',"
		"  1, 2, 3, ''),"
		" ('" ID(1) "', 1, 6, 'connect', 'd.example', 443, 0, 'not allowed', '', 0, 0, 0,"
		"  '');"
		"UPDATE sessions SET n_net_allowed = 5, n_net_denied = 1 WHERE id = '" ID(1) "';");
	store_close(st);
	st = open_ok(f, NULL);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events WHERE failed"), 2);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events WHERE failed"
				     " AND at_ms IN (1, 2)"), 2);
	struct session s;
	struct err e = {0};
	assert_int_equal(store_get(st, ID(1), &s, &e), 0);
	assert_int_equal(s.n_net_failed, 2);
	assert_int_equal(s.n_net_allowed, 5);
	session_free(&s);
	assert_int_equal(store_get(st, ID(2), &s, &e), 0);
	assert_int_equal(s.n_net_failed, 0);
	session_free(&s);
	store_close(st);
}

/* Migrations 6 and 7 rebuild net_events for the kinds 'tcp' and 'publish': from version 5 the
 * rows and their failed flags stay, and the new kinds are stored and read back. */
static void migrations_6_7_tcp_and_publish(void **state)
{
	struct fx *f = *state;
	struct store *st = open_at(f, 5);
	sql(st, SEED_V2);
	sql(st, "INSERT INTO net_events (session_id, attempt, at_ms, proto, host, port, allowed,"
		" rule, addr, bytes_up, bytes_down, dur_ms, error, failed) VALUES"
		" ('" ID(1) "', 1, 1, 'connect', 'pypi.org', 443, 1, 'pypi.org', '', 0, 0, 0,"
		"  'could not resolve: Domain name not found', 1),"
		" ('" ID(1) "', 1, 2, 'dns', 'x.example', 0, 0, 'not allowed', '', 0, 0, 0, '', 0);");
	store_close(st);
	st = open_ok(f, NULL);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events"), 2);
	assert_int_equal(sql_int(st, "SELECT failed FROM net_events WHERE at_ms = 1"), 1);
	struct err e = {0};
	struct net_event ev[2] = {
		{.at_ms = 3, .proto = NP_PUBLISH, .host = "127.0.0.1", .port = 3000, .allowed = true,
		 .rule = "8080:3000", .addr = "127.0.0.1:40000", .bytes_up = 7},
		{.at_ms = 4, .proto = NP_TCP, .host = "db.example", .port = 5432, .allowed = false,
		 .rule = "not allowed"},
	};
	assert_int_equal(store_add_net_events(st, ID(1), 0, ev, 2, &e), 0);
	struct net_row *rows = NULL;
	size_t n = 0;
	assert_int_equal(store_net_events(st, ID(1), 0, 0, &rows, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_int_equal(rows[2].ev.proto, NP_PUBLISH);
	assert_string_equal(rows[2].ev.addr, "127.0.0.1:40000");
	assert_int_equal(rows[2].ev.bytes_up, 7);
	assert_int_equal(rows[3].ev.proto, NP_TCP);
	free(rows);
	store_close(st);
}

/* Migration 8 rebuilds net_events for 'https' (a request refused inside an inspected tunnel)
 * and 'ssh-agent' (a signature): the rows and their failed flags stay, the new kinds are stored
 * and read back (issue 29). */
static void migration_8_https_and_ssh_agent(void **state)
{
	struct fx *f = *state;
	struct store *st = open_at(f, 7);
	sql(st, SEED_V2);
	sql(st, "INSERT INTO net_events (session_id, attempt, at_ms, proto, host, port, allowed,"
		" rule, addr, bytes_up, bytes_down, dur_ms, error, failed) VALUES"
		" ('" ID(1) "', 1, 1, 'connect', 'pypi.org', 443, 1, 'pypi.org', '', 0, 0, 0,"
		"  'could not resolve: Domain name not found', 1),"
		" ('" ID(1) "', 1, 2, 'publish', '127.0.0.1', 3000, 1, '8080:3000', '127.0.0.1:1', 7,"
		"  0, 0, '', 0);");
	store_close(st);
	st = open_ok(f, NULL);
	assert_int_equal(sql_int(st, "SELECT failed FROM net_events WHERE at_ms = 1"), 1);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events WHERE proto = 'publish'"), 1);
	struct err e = {0};
	struct net_event ev[2] = {
		{.at_ms = 3, .proto = NP_HTTPS, .host = "github.com", .port = 443, .allowed = false,
		 .rule = "POST github.com/gists is not allowed by the request rules"},
		{.at_ms = 4, .proto = NP_SSH_AGENT, .host = "github.com", .port = 22, .allowed = true,
		 .rule = "signed as git with SHA256:abc (ED25519)"},
	};
	assert_int_equal(store_add_net_events(st, ID(1), 0, ev, 2, &e), 0);
	struct net_row *rows = NULL;
	size_t n = 0;
	assert_int_equal(store_net_events(st, ID(1), 0, 0, &rows, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_int_equal(rows[2].ev.proto, NP_HTTPS);
	assert_int_equal(rows[3].ev.proto, NP_SSH_AGENT);
	assert_string_equal(rows[3].ev.rule, "signed as git with SHA256:abc (ED25519)");
	free(rows);
	store_close(st);
}

/* A batch lands whole or not at all: the disk fills up in the middle of one. */
static void net_events_batch_is_atomic(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(st, ID(1), 100, 1000);
	long long pages = sql_int(st, "PRAGMA page_count");
	char q[64];
	snprintf(q, sizeof q, "PRAGMA max_page_count = %lld", pages + 2);
	sql(st, q);
	size_t n = 2000;
	struct net_event *b = xcalloc(n, sizeof *b);
	for (size_t i = 0; i < n; i++)
		b[i] = mkev((long long)i, NP_CONNECT, "host.example", 443, i % 2, "a rule");
	assert_int_equal(store_add_net_events(st, ID(1), 0, b, n, &e), -1);
	assert_non_null(strstr(e.what, "cannot record the network events"));
	assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events"), 0);
	assert_int_equal(sql_int(st, "SELECT n_net_allowed + n_net_denied FROM sessions"), 0);
	free(b);
	store_close(st);
}

#define NET_BATCHES 40
#define NET_PER_BATCH 25

struct net_writer {
	struct store *st;
	const char *id;
	int k;
	int rc;
};

/* One writer: batches of events for its session, as the proxy's writer sends them. */
static int write_batches(struct store *st, const char *id, int k)
{
	struct net_event b[NET_PER_BATCH];
	for (int i = 0; i < NET_BATCHES; i++) {
		for (int j = 0; j < NET_PER_BATCH; j++)
			b[j] = mkev(i * NET_PER_BATCH + j, NP_CONNECT, "w.example", 1000 + k,
				    j % 5 != 0, "rule");
		struct err e = {0};
		if (store_add_net_events(st, id, 0, b, NET_PER_BATCH, &e) < 0) {
			fprintf(stderr, "writer %d: %s (%s)\n", k, e.what, e.hint);
			return -1;
		}
	}
	return 0;
}

static void *net_writer_thread(void *arg)
{
	struct net_writer *w = arg;
	w->rc = write_batches(w->st, w->id, w->k);
	return NULL;
}

/* Two threads of one process (each its own connection, store_open_again) and two more
 * processes write batches at once, for the same session and another: nothing is lost, the
 * counters agree with the rows. */
static void net_events_concurrent(void **state)
{
	struct fx *f = *state;
	assert_int_not_equal(sqlite3_threadsafe(), 0);
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(st, ID(1), 100, 1000);
	begin_ok(st, ID(2), 100, 2000);
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		assert_true(kids[k] >= 0);
		if (kids[k] == 0) {
			struct store *c = NULL;
			struct err ce = {0};
			if (store_open(f->state, NULL, &c, &ce) < 0)
				_exit(11);
			int rc = write_batches(c, k ? ID(2) : ID(1), 10 + k);
			store_close(c);
			_exit(rc ? 12 : 0);
		}
	}
	struct net_writer w[2];
	pthread_t t[2];
	for (int k = 0; k < 2; k++) {
		w[k] = (struct net_writer){.id = k ? ID(2) : ID(1), .k = k};
		assert_int_equal(store_open_again(st, &w[k].st, &e), 0);
		assert_int_equal(pthread_create(&t[k], NULL, net_writer_thread, &w[k]), 0);
	}
	/* and the opener's own connection reads meanwhile */
	for (int i = 0; i < 20; i++) {
		struct net_row *r;
		size_t n;
		assert_int_equal(store_net_events(st, ID(1), 0, 0, &r, &n, &e), 0);
		free(r);
	}
	for (int k = 0; k < 2; k++) {
		assert_int_equal(pthread_join(t[k], NULL), 0);
		assert_int_equal(w[k].rc, 0);
		store_close(w[k].st);
	}
	for (int k = 0; k < 2; k++) {
		int ws;
		assert_int_equal(waitpid(kids[k], &ws, 0), kids[k]);
		if (!WIFEXITED(ws) || WEXITSTATUS(ws))
			fail_msg("writer process %d: status %#x", k, ws);
	}
	long long per = (long long)NET_BATCHES * NET_PER_BATCH;
	assert_int_equal(sql_int(st, "SELECT count(*) FROM net_events"), 4 * per);
	for (int k = 0; k < 2; k++) {
		char q[200];
		snprintf(q, sizeof q,
			 "SELECT count(*) FROM net_events WHERE session_id = '%s' AND port IN (%d, %d)",
			 k ? ID(2) : ID(1), 1000 + k, 1010 + k);
		assert_int_equal(sql_int(st, q), 2 * per);
	}
	assert_int_equal(sql_int(st, "SELECT sum(n_net_allowed) FROM sessions"), 4 * per * 4 / 5);
	assert_int_equal(sql_int(st, "SELECT sum(n_net_denied) FROM sessions"), 4 * per / 5);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM sessions s WHERE n_net_allowed ="
				     " (SELECT count(*) FROM net_events WHERE session_id = s.id AND allowed)"),
			 2);
	_cleanup_free_ char *ic = sql_text(st, "PRAGMA integrity_check");
	assert_string_equal(ic, "ok");
	store_close(st);
}

/* ---- removal ---- */

static void rm_cascades(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(st, ID(1), 100, 1000);
	begin_ok(st, ID(2), 100, 2000);
	struct strv argv = STRV_INIT;
	strv_push(&argv, "x");
	for (int i = 1; i <= 2; i++) {
		const char *id = i == 1 ? ID(1) : ID(2);
		assert_int_equal(store_add_event(st, id, "violation", "{}", &e), 0);
		assert_int_equal(store_finish(st, id, SESS_EXITED, 0, 0, &e), 0);
		assert_int_equal(store_attempt_begin(st, id, ATTEMPT_RESUME, &argv, 7, 7, &e), 2);
		assert_int_equal(store_add_event(st, id, "net.deny", "{}", &e), 0);
	}
	strv_free(&argv);
	assert_int_equal(store_rm(st, ID(1), &e), 0);
	struct session s;
	assert_int_equal(store_get(st, ID(1), &s, &e), STORE_NONE);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM attempts WHERE session_id = '" ID(1) "'"),
			 0);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM events WHERE session_id = '" ID(1) "'"),
			 0);
	/* the other session is whole */
	assert_int_equal(sql_int(st, "SELECT count(*) FROM attempts WHERE session_id = '" ID(2) "'"),
			 2);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM events WHERE session_id = '" ID(2) "'"),
			 2);
	assert_int_equal(store_rm(st, ID(1), &e), STORE_NONE);
	store_close(st);
}

/* ---- concurrency ---- */

#define WRITERS 24
#define PER_WRITER 6

/* A child: open (racing the others, on a new database the first round), then record its
 * sessions with an event each and finish them. */
static int writer(const char *dir, int rfd, int k)
{
	char c;
	if (read(rfd, &c, 1) != 0) /* the start gun: the write end closes */
		return 10;
	struct store *st = NULL;
	struct err e = {0};
	if (store_open(dir, NULL, &st, &e) < 0) {
		fprintf(stderr, "child %d: open: %s (%s)\n", k, e.what, e.hint);
		return 11;
	}
	long long self;
	if (store_proc_start(0, &self, &e) < 0)
		return 12;
	for (int i = 0; i < PER_WRITER; i++) {
		struct session s;
		char id[STORE_ID_LEN + 1];
		if (store_new_id(id, &e) < 0)
			return 13;
		mksess(&s, id, getpid(), 0);
		s.pid_start = self;
		int rc = store_begin(st, &s, &e);
		if (rc == 0)
			rc = store_add_event(st, id, "violation", "{}", &e);
		if (rc == 0)
			rc = store_finish(st, id, SESS_EXITED, k, 0, &e);
		session_free(&s);
		if (rc < 0) {
			fprintf(stderr, "child %d: %s (%s)\n", k, e.what, e.hint);
			return 14;
		}
	}
	store_close(st);
	return 0;
}

static void concurrent_writers(void **state)
{
	struct fx *f = *state;
	for (int round = 1; round <= 2; round++) {
		int gun[2];
		assert_int_equal(pipe(gun), 0);
		pid_t kids[WRITERS];
		for (int k = 0; k < WRITERS; k++) {
			kids[k] = fork();
			assert_true(kids[k] >= 0);
			if (kids[k] == 0) {
				close(gun[1]);
				_exit(writer(f->state, gun[0], k));
			}
		}
		close(gun[0]);
		close(gun[1]);
		for (int k = 0; k < WRITERS; k++) {
			int ws;
			assert_int_equal(waitpid(kids[k], &ws, 0), kids[k]);
			if (!WIFEXITED(ws) || WEXITSTATUS(ws))
				fail_msg("round %d: writer %d: status %#x", round, k, ws);
		}
		struct store *st = open_ok(f, NULL);
		long long want = (long long)round * WRITERS * PER_WRITER;
		assert_int_equal(sql_int(st, "SELECT count(*) FROM sessions"), want);
		assert_int_equal(sql_int(st, "SELECT count(*) FROM attempts"), want);
		assert_int_equal(sql_int(st, "SELECT count(*) FROM events"), want);
		assert_int_equal(sql_int(st, "SELECT count(*) FROM sessions WHERE status = 'exited'"
					     " AND n_violations = 1"),
				 want);
		assert_int_equal(sql_int(st, "SELECT count(DISTINCT exit_status) FROM sessions"),
				 WRITERS);
		_cleanup_free_ char *ic = sql_text(st, "PRAGMA integrity_check");
		assert_string_equal(ic, "ok");
		store_close(st);
	}
}

/* ---- failures leave nothing behind ---- */

/* The disk fills up in the middle of recording a session: neither the row nor its attempt. */
static void disk_full_writes_nothing(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	struct err e = {0};
	begin_ok(st, ID(1), 100, 1000);
	long long pages = sql_int(st, "PRAGMA page_count");
	_cleanup_free_ char *cap = xasprintf("PRAGMA max_page_count = %lld", pages);
	sql(st, cap);
	struct session s;
	mksess(&s, ID(2), 100, 2000);
	free(s.policy_json);
	s.policy_json = xmalloc(200000);
	memset(s.policy_json, 'x', 199999);
	s.policy_json[199999] = '\0';
	assert_int_equal(store_begin(st, &s, &e), -1);
	_cleanup_free_ char *msg = errstr(&e);
	assert_non_null(strstr(msg, "full"));
	assert_string_equal(e.path, f->db);
	assert_true(sqlite3_get_autocommit(db(st))); /* no transaction left open */
	assert_int_equal(sql_int(st, "SELECT count(*) FROM sessions"), 1);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM attempts"), 1);
	session_free(&s);
	store_close(st);
	st = open_ok(f, NULL);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM sessions"), 1);
	store_close(st);
}

/* Another process holds the write lock longer than the busy timeout: a clean error naming the
 * lock, nothing written, and the next try succeeds. */
static void locked_too_long(void **state)
{
	struct fx *f = *state;
	struct store *st = open_ok(f, NULL);
	store_close(st);
	sqlite3 *other = NULL;
	assert_int_equal(sqlite3_open(f->db, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	struct store_opts o = {.alive = alive_everyone, .busy_timeout_ms = 150};
	st = open_ok(f, &o); /* opening a current database needs no write */
	struct session s;
	struct err e = {0};
	mksess(&s, ID(1), 100, 1000);
	long long t0 = store_now_ms();
	assert_int_equal(store_begin(st, &s, &e), -1);
	long long waited = store_now_ms() - t0;
	assert_true(waited >= 100 && waited < 3000);
	assert_non_null(strstr(e.what, "locked"));
	assert_non_null(strstr(e.hint, "150 ms"));
	assert_int_equal(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(other);
	assert_int_equal(sql_int(st, "SELECT count(*) FROM sessions"), 0);
	assert_int_equal(store_begin(st, &s, &e), 0);
	session_free(&s);
	store_close(st);
}

/* A directory that cannot be created: a clean error naming it. As root, permissions do not
 * stop us, so a child drops to nobody first. */
static void unwritable_directory(void **state)
{
	struct fx *f = *state;
	assert_int_equal(chmod(f->tmp, 0555), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(20);
		struct store *st = NULL;
		struct err e = {0};
		int rc = store_open(f->state, NULL, &st, &e);
		if (rc != -1 || st)
			_exit(21);
		if (e.errnum != EACCES)
			_exit(22);
		if (!strstr(e.what, "cannot create the session store's directory"))
			_exit(23);
		if (strcmp(e.path, path_dirname(f->state)) != 0) /* <tmp>/state */
			_exit(24);
		if (!strstr(e.hint, "AGENTJAIL_STATE_DIR"))
			_exit(25);
		_exit(0);
	}
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_int_equal(chmod(f->tmp, 0700), 0);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
}

/* A directory others may write to, or that belongs to someone else, is refused. */
static void unsafe_directory_refused(void **state)
{
	struct fx *f = *state;
	store_close(open_ok(f, NULL));
	struct store *st = NULL;
	struct err e = {0};
	assert_int_equal(chmod(f->state, 0770), 0);
	assert_int_equal(store_open(f->state, NULL, &st, &e), -1);
	assert_non_null(strstr(e.what, "writable by group or others"));
	assert_non_null(strstr(e.hint, "chmod go-w"));
	assert_int_equal(chmod(f->state, 0700), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(f->state, 65534, 65534), 0);
		assert_int_equal(store_open(f->state, NULL, &st, &e), -1);
		assert_non_null(strstr(e.what, "owned by another user"));
		assert_int_equal(chown(f->state, 0, 0), 0);
		assert_int_equal(chown(f->db, 65534, 65534), 0);
		assert_int_equal(store_open(f->state, NULL, &st, &e), -1);
		assert_non_null(strstr(e.what, "database is owned by another user"));
		assert_int_equal(chown(f->db, 0, 0), 0);
	}
	/* a database that is not a regular file */
	_cleanup_free_ char *wal = xasprintf("%s-wal", f->db);
	_cleanup_free_ char *shm = xasprintf("%s-shm", f->db);
	(void)unlink(wal);
	(void)unlink(shm);
	assert_int_equal(unlink(f->db), 0);
	assert_int_equal(symlink("/dev/null", f->db), 0);
	assert_int_equal(store_open(f->state, NULL, &st, &e), -1);
	assert_non_null(strstr(e.what, "not a regular file"));
	assert_null(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(creates_files_private, setup, teardown),
		cmocka_unit_test_setup_teardown(schema_is_current_wal_strict, setup, teardown),
		cmocka_unit_test_setup_teardown(descriptors_close_on_exec, setup, teardown),
		cmocka_unit_test_setup_teardown(reopen_is_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(migrates_from_every_version, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_migration_rolls_back, setup, teardown),
		cmocka_unit_test_setup_teardown(newer_version_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(begin_finish_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(finish_prepared_at_start, setup, teardown),
		cmocka_unit_test_setup_teardown(finish_never_checkpoints, setup, teardown),
		cmocka_unit_test_setup_teardown(misuse_and_unknown, setup, teardown),
		cmocka_unit_test(ids_are_uuid4),
		cmocka_unit_test_setup_teardown(prefix_resolution, setup, teardown),
		cmocka_unit_test_setup_teardown(list_newest_first, setup, teardown),
		cmocka_unit_test_setup_teardown(lost_with_injected_check, setup, teardown),
		cmocka_unit_test_setup_teardown(lost_with_proc, setup, teardown),
		cmocka_unit_test_setup_teardown(net_events_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(net_events_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(migration_5_backfills_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(migrations_6_7_tcp_and_publish, setup, teardown),
		cmocka_unit_test_setup_teardown(migration_8_https_and_ssh_agent, setup, teardown),
		cmocka_unit_test_setup_teardown(net_events_batch_is_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(net_events_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(rm_cascades, setup, teardown),
		cmocka_unit_test_setup_teardown(concurrent_writers, setup, teardown),
		cmocka_unit_test_setup_teardown(disk_full_writes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(locked_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(unwritable_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(unsafe_directory_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
