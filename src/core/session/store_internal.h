/* store_internal.h: private to src/core/session/store*.c (the public header is store.h): the
 * store's handle and the SQLite plumbing both files use. */
#pragma once

#include "core/session/store.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/uuid.h"

/* Connections do not checkpoint when they close (closing stays cheap); the commit that takes the
 * WAL past this many pages does (but a session's end: store_finish). The first connection to open
 * the database after all have closed reads the WAL back (SQLite's recovery), so a short WAL
 * keeps opening cheap too. */
#define ST_AUTOCHECKPOINT_PAGES 256

struct store {
	sqlite3 *db;
	char *path;
	char *dir;
	store_alive_fn alive;
	void *alive_arg;
	int busy_ms;
	int last_rc; /* the SQLite result of the last failure (open retries on BUSY) */
	/* the end of the session begun on this connection, prepared at its start (store.c) */
	struct {
		char *id;
		sqlite3_stmt *cur, *att, *ses;
	} fin;
};

static inline void finalizep(sqlite3_stmt **s) { sqlite3_finalize(*s); }
#define _cleanup_stmt_ _cleanup_(finalizep)

/* store.c */
int st_db_fail(struct store *st, int rc, const char *doing, struct err *e);
int st_prep(struct store *st, sqlite3_stmt **out, const char *doing, struct err *e,
	    const char *sql, const char *types, ...);
/* The prepared statements of the session's end finalized (store_close, before sqlite3_close). */
void st_fin_drop(struct store *st);
int st_step_done(struct store *st, sqlite3_stmt *s, const char *doing, struct err *e);
int st_step_row(struct store *st, sqlite3_stmt *s, const char *doing, struct err *e);
int st_exec_sql(struct store *st, const char *sql, const char *doing, struct err *e);
int st_tx_begin(struct store *st, const char *doing, struct err *e);
int st_tx_end(struct store *st, int rc, const char *doing, struct err *e);
char *st_col_str(sqlite3_stmt *s, int i);
/* "no such session" for id; STORE_NONE */
int st_none(struct err *e, const char *id);
/* 0 when session id exists, else STORE_NONE or -1 */
int st_exists(struct store *st, const char *id, const char *doing, struct err *e);
/* the session's current attempt number: > 0, STORE_NONE or -1 */
int st_current_attempt(struct store *st, const char *id, const char *doing, struct err *e);
