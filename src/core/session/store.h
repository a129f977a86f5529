/* store: the session store (doc/design.md §5): SQLite at <state_dir>/agentjail.db.
 *
 * Files. store_open creates the missing components of state_dir with mode 0700 and the database
 * with mode 0600 (created by us with O_EXCL before SQLite sees it, so it is never wider; SQLite
 * gives its -wal and -shm files the database's mode). An existing state_dir or database must be
 * owned by the effective uid, and state_dir must not be writable by group or others: anything
 * else is refused (the rows hold argvs and paths, and a row another user can write is a lie).
 *
 * Connection. WAL journal with synchronous=NORMAL (a commit does not fsync; after a power loss
 * the last commits may be missing but the database is consistent), foreign keys on, a busy
 * timeout (5 s by default), no checkpoint when a connection closes (the commit that takes the
 * WAL past 256 pages does it: closing stays cheap, and the WAL the next first opener reads back
 * stays short), SQLITE_DBCONFIG_DEFENSIVE. Every descriptor SQLite opens is close-on-exec, so a
 * jail never inherits the database. A store is used by one thread at a time, and neither used
 * nor closed across fork(): a child execs or _exits.
 *
 * Writes. Each call that writes is one BEGIN IMMEDIATE … COMMIT transaction: it either lands
 * whole or leaves the database as it was (disk full, read-only file system, locked longer than
 * the busy timeout). Waiting for the write lock is SQLite's busy handler (it sleeps and retries
 * until the timeout); opening also retries the whole set-up while another process holds a lock
 * the handler is not consulted for (the first-open race: journal mode switch, migration).
 *
 * Schema. STRICT tables, versioned by PRAGMA user_version; migration k takes version k-1 to k in
 * its own transaction, re-reading the version under the write lock (two processes opening a new
 * database at once both succeed, one of them migrating). A database newer than this build knows
 * is refused and left untouched.
 *   v1  sessions (one row per run)
 *   v2  attempts (one row per rung of the resume ladder; v1 rows become attempt 1), events,
 *       and the sessions counters (attempts, n_events, n_violations)
 *   v3  net_events (the egress proxy's decisions, doc/design.md §4) and the sessions counters
 *       n_net_allowed, n_net_denied
 *   v4  where a session ran (backend, backend_url, sandbox_id)
 *   v5  net_events.failed (allowed, the upstream failed) and the counter n_net_failed
 *   v6  net_events.proto also 'tcp' (captured connections)
 *   v7  net_events.proto also 'publish' (--publish)
 *
 * Lost sessions. store_open marks `lost` each running session whose recorded process is gone:
 * no /proc/PID, a zombie, or a PID now used by a process with another start time. When /proc
 * cannot tell (not mounted, permission), the session is left running. The pid recorded must be
 * the agentjail process that will call store_finish (not the jailed command), and every agentjail
 * sharing a store must see the same PID namespace (one host, one container). Marking is
 * housekeeping: when it cannot be written, store_open still succeeds and the next open retries.
 * A lost session keeps ended_ms = 0: when it ended is unknown.
 *
 * Errors: every function that can fail fills a struct err naming the database and SQLite's
 * message, with a hint (disk full, locked, not writable, damaged, newer version).
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/net/netevent.h"
#include "util/err.h"
#include "util/strv.h"

#define STORE_SCHEMA_VERSION 8
#define STORE_DB_NAME "agentjail.db"
#define STORE_ID_LEN 36 /* a UUID: 8-4-4-4-12 lowercase hex digits */

/* Returns of the lookups (store_get, store_rm, store_finish, …) besides 0 and -1; e is filled
 * for these too, with a message the command layer can print as it is. */
#define STORE_NONE -2      /* no session has that id (or prefix) */
#define STORE_AMBIGUOUS -3 /* the prefix matches several sessions (the hint lists them) */

enum sess_status {
	SESS_RUNNING,   /* agentjail is supervising it */
	SESS_EXITED,    /* the command exited: exit_status is its code */
	SESS_SIGNALLED, /* the command died of a signal: exit_status is the signal number */
	SESS_KILLED,    /* agentjail itself was terminated (and killed the jail): exit_status is
			 * the signal agentjail received, -1 if none */
	SESS_LOST,      /* agentjail vanished without finishing (SIGKILL, power loss) */
};

enum attempt_kind {
	ATTEMPT_START,  /* the first run */
	ATTEMPT_RESUME, /* the profile's resume form */
	ATTEMPT_FRESH,  /* a fresh start after the resume form failed */
};

const char *sess_status_name(enum sess_status s); /* "running", "exited", … */
int sess_status_parse(const char *s, enum sess_status *out); /* 0 or -1 */
const char *attempt_kind_name(enum attempt_kind k);          /* "start", "resume", "fresh" */
int attempt_kind_parse(const char *s, enum attempt_kind *out);

struct session {
	char *id;               /* STORE_ID_LEN characters */
	char *profile;          /* may be NULL */
	struct strv argv;       /* the command as given */
	const struct strv *spawned; /* store_begin only: what attempt 1 spawns (an agent's
				     * resolved path and flags), NULL when it is argv; not owned */
	char *workspace;
	char *policy_json;      /* the resolved policy, policy_to_json() */
	char *bwrap_json;       /* the bwrap argv, a JSON array of strings, secrets redacted by
				 * the caller; NULL when there is no jail (danger-full-access) */
	char *agent_session_id; /* the agent's own session id, NULL until known */
	long pid;               /* the agentjail process of the latest attempt */
	long long pid_start;    /* its start time: /proc/PID/stat field 22, clock ticks since boot */
	long long started_ms;   /* unix time in ms, of the first attempt */
	long long ended_ms;     /* of the latest attempt; 0 while running and for lost */
	long long last_started_ms; /* when the latest attempt started (read back; = started_ms
				    * for a session of one attempt) */
	enum sess_status status;    /* of the latest attempt */
	int exit_status;        /* see enum sess_status; -1 when none */
	int attempts;           /* number of attempts, 1 after store_begin */
	long long n_events;
	long long n_violations; /* events whose kind is "violation" or starts with "violation." */
	long long n_net_allowed, n_net_denied; /* the egress proxy's decisions (net_events) */
	long long n_net_failed; /* … of the allowed ones, those whose upstream failed */
	char *backend;          /* NULL: local; "opensandbox" (doc/design.md §4b) */
	char *backend_url;      /* the service's URL (never its key) */
	char *sandbox_id;       /* the latest attempt's sandbox there */
};

struct attempt {
	int n; /* 1, 2, … */
	enum attempt_kind kind;
	struct strv argv; /* what was spawned */
	long pid;
	long long pid_start;
	long long started_ms, ended_ms;
	enum sess_status status;
	int exit_status;
};

struct event {
	long long seq; /* increasing over the whole store */
	int attempt;   /* the attempt it happened in */
	long long at_ms;
	char *kind;
	char *detail_json; /* may be NULL */
};

/* One decision of the egress proxy as stored (store_add_net_events). */
struct net_row {
	long long seq; /* increasing over the whole store (its own sequence, not events') */
	int attempt;
	struct net_event ev;
};

/* Denied (or failed) requests counted by host and port (port 0: a DNS lookup). */
struct net_count {
	char *host;
	int port;
	long long n;
	char *why; /* the first one's reason (denied: the rule's words and fix; failed: the
		    * upstream error), as recorded; NULL when unknown */
};

void session_free(struct session *s);
void sessions_free(struct session *v, size_t n); /* each, then the array */
void attempts_free(struct attempt *v, size_t n);
void events_free(struct event *v, size_t n);
void net_counts_free(struct net_count *v, size_t n);

struct store;

/* Whether the agentjail process (pid, start time) still runs; false only when it is certainly
 * gone. store_proc_alive is the default. */
typedef bool (*store_alive_fn)(long pid, long long pid_start, void *arg);
bool store_proc_alive(long pid, long long pid_start, void *arg);

struct store_opts {
	store_alive_fn alive;   /* NULL: store_proc_alive */
	void *alive_arg;
	int busy_timeout_ms;    /* 0: 5000 */
	int target_version;     /* 0: STORE_SCHEMA_VERSION. Tests build older databases with it;
				 * below the latest, only store_handle and store_close may be used
				 * and lost sessions are not marked. */
};

/* Open (creating what is missing) and migrate <state_dir>/agentjail.db, then mark lost
 * sessions. state_dir is absolute; opts may be NULL. */
int store_open(const char *state_dir, const struct store_opts *opts, struct store **out,
	       struct err *e) WUR;
void store_close(struct store *st); /* NULL is fine */
static inline void store_closep(struct store **st) { store_close(*st); }
/* A store closed when the variable goes out of scope. */
#define _cleanup_store_ __attribute__((cleanup(store_closep)))
const char *store_path(const struct store *st);
/* The SQLite connection (a `sqlite3 *`), for tests and diagnostics (e.g. integrity_check). */
void *store_handle(struct store *st);

/* A fresh random (version 4) UUID, lowercase, into out. */
int store_new_id(char out[STORE_ID_LEN + 1], struct err *e) WUR;
/* The start time of a process (field 22 of /proc/PID/stat); pid 0 means ourselves. */
int store_proc_start(long pid, long long *out, struct err *e) WUR;
long long store_now_ms(void); /* CLOCK_REALTIME in ms */

/* Record a new session, before the jail starts: its row (status running, no exit status) and
 * attempt 1 (kind start, s->argv), in one transaction. Used from s: id (required, from
 * store_new_id), profile, argv, workspace, policy_json, bwrap_json, agent_session_id, pid (> 0),
 * pid_start, started_ms (0: now); the rest is ignored. */
int store_begin(struct store *st, const struct session *s, struct err *e) WUR;

/* A new attempt of session id (a rung of the resume ladder): the attempt is added and the
 * session is running again under (pid, pid_start), its end and exit status cleared. Returns the
 * attempt's number (2, 3, …), STORE_NONE, or -1. */
int store_attempt_begin(struct store *st, const char *id, enum attempt_kind kind,
			const struct strv *argv, long pid, long long pid_start, struct err *e) WUR;

/* The latest attempt ended (status not SESS_RUNNING; exit_status as in enum sess_status;
 * ended_ms 0: now): the attempt and the session row are completed together, whatever the
 * session's status was (a session wrongly marked lost gets its true ending). 0, STORE_NONE, -1. */
int store_finish(struct store *st, const char *id, enum sess_status status, int exit_status,
		 long long ended_ms, struct err *e) WUR;

/* 0, STORE_NONE, -1. agent_id NULL clears it. */
/* Where the session runs: a remote backend, its URL and the sandbox of the latest attempt. */
int store_set_backend(struct store *st, const char *id, const char *backend, const char *url,
		      const char *sandbox_id, struct err *e) WUR;
int store_set_agent_session_id(struct store *st, const char *id, const char *agent_id,
			       struct err *e) WUR;

/* An event of the session's latest attempt, now; bumps n_events (and n_violations, see struct
 * session) in the same transaction. detail_json may be NULL. 0, STORE_NONE, -1. */
int store_add_event(struct store *st, const char *id, const char *kind, const char *detail_json,
		    struct err *e) WUR;

/* The session whose id is id_or_prefix, or the only one starting with it (case-insensitive).
 * 0 (out filled, session_free it), STORE_NONE (also for a string that cannot be an id),
 * STORE_AMBIGUOUS (the hint names up to five candidates and how many more), -1. */
int store_get(struct store *st, const char *id_or_prefix, struct session *out, struct err *e) WUR;

/* Sessions newest first (by started_ms, then id), only those of `workspace` when not NULL, at
 * most `limit` of them when limit > 0; bwrap_json is left NULL (store_get has it). *out is NULL
 * when there are none; sessions_free it. */
int store_list(struct store *st, const char *workspace, size_t limit, struct session **out,
	       size_t *n, struct err *e) WUR;

/* The attempts of a session (oldest first) and its events (in order). 0, STORE_NONE, -1. */
int store_attempts(struct store *st, const char *id, struct attempt **out, size_t *n,
		   struct err *e) WUR;
int store_events(struct store *st, const char *id, struct event **out, size_t *n,
		 struct err *e) WUR;

/* Another connection to the store st opened (same database and options), for another thread:
 * a store is used by one thread at a time, so a thread that writes while the opener's thread
 * goes on (the proxy's event writer) gets its own. Refused when SQLite was built without thread
 * support (sqlite3_threadsafe() == 0). */
int store_open_again(const struct store *st, struct store **out, struct err *e) WUR;

/* The egress proxy's decisions ev[0..n) for session id, in one transaction with the session's
 * counters (n_net_allowed, n_net_denied, n_net_failed): all of them or none. attempt <= 0: the session's
 * current attempt. Text fields are read up to their array's size (a missing NUL is no
 * overrun); byte counts beyond INT64_MAX are stored as INT64_MAX. 0, STORE_NONE, -1. */
int store_add_net_events(struct store *st, const char *id, int attempt,
			 const struct net_event *ev, size_t n, struct err *e) WUR;
/* The session's decisions with seq > since_seq, oldest first, at most limit (0: all). *out is
 * NULL when there are none; free it. 0, STORE_NONE, -1. */
int store_net_events(struct store *st, const char *id, long long since_seq, size_t limit,
		     struct net_row **out, size_t *n, struct err *e) WUR;
/* The session's denied requests (NET_DENIED) or allowed ones whose upstream failed
 * (NET_FAILED) by host and port, most frequent first (then by host, port), each with the first
 * one's reason, at most limit (0: all). 0, STORE_NONE, -1. */
enum net_which { NET_DENIED, NET_FAILED };
int store_net_counts(struct store *st, const char *id, enum net_which which, size_t limit,
		     struct net_count **out, size_t *n, struct err *e) WUR;

/* Delete a session (full id) with its attempts, events and net events. 0, STORE_NONE, -1. */
int store_rm(struct store *st, const char *id, struct err *e) WUR;
