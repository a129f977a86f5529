/* store: the egress proxy's decisions (net_events, schema v3) — written in batches by the
 * proxy's writer, read back by `agentjail log` and summarised by `show` and `sessions`. */
#include "core/session/store_internal.h"

#include <stdint.h>

void net_counts_free(struct net_count *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].host);
		free(v[i].why);
	}
	free(v);
}

/* A text field of a net_event: at most its array's size, whether or not it ends in a NUL. */
#define BIND_FIELD(s, i, field) \
	sqlite3_bind_text((s), (i), (field), (int)strnlen((field), sizeof(field)), SQLITE_TRANSIENT)

static long long clamp_u64(uint64_t v) { return v > INT64_MAX ? INT64_MAX : (long long)v; }

static int bind_event(sqlite3_stmt *s, const char *id, int attempt, const struct net_event *ev)
{
	int rc = sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(s, 2, attempt);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(s, 3, ev->at_ms);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(s, 4, net_proto_name(ev->proto), -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = BIND_FIELD(s, 5, ev->host);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(s, 6, ev->port);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(s, 7, ev->allowed ? 1 : 0);
	if (rc == SQLITE_OK)
		rc = BIND_FIELD(s, 8, ev->rule);
	if (rc == SQLITE_OK)
		rc = BIND_FIELD(s, 9, ev->addr);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(s, 10, clamp_u64(ev->bytes_up));
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(s, 11, clamp_u64(ev->bytes_down));
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(s, 12, ev->dur_ms);
	if (rc == SQLITE_OK)
		rc = BIND_FIELD(s, 13, ev->error);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int(s, 14, ev->allowed && ev->failed ? 1 : 0);
	return rc;
}

static int net_tx(struct store *st, const char *id, int attempt, const struct net_event *ev,
		  size_t n, struct err *e)
{
	static const char doing[] = "cannot record the network events";
	int cur = st_current_attempt(st, id, doing, e);
	if (cur < 0)
		return cur;
	if (attempt <= 0)
		attempt = cur;
	_cleanup_stmt_ sqlite3_stmt *ins = NULL;
	if (st_prep(st, &ins, doing, e,
		 "INSERT INTO net_events (session_id, attempt, at_ms, proto, host, port, allowed,"
		 " rule, addr, bytes_up, bytes_down, dur_ms, error, failed)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		 "") < 0)
		return -1;
	long long allowed = 0, denied = 0, failed = 0;
	for (size_t i = 0; i < n; i++) {
		int rc = bind_event(ins, id, attempt, &ev[i]);
		if (rc != SQLITE_OK)
			return st_db_fail(st, rc, doing, e);
		if (st_step_done(st, ins, doing, e) < 0)
			return -1;
		sqlite3_reset(ins);
		if (ev[i].allowed)
			allowed++;
		else
			denied++;
		if (ev[i].allowed && ev[i].failed)
			failed++;
	}
	_cleanup_stmt_ sqlite3_stmt *up = NULL;
	if (st_prep(st, &up, doing, e,
		 "UPDATE sessions SET n_net_allowed = n_net_allowed + ?,"
		 " n_net_denied = n_net_denied + ?, n_net_failed = n_net_failed + ? WHERE id = ?",
		 "LLLs", allowed, denied, failed, id) < 0 ||
	    st_step_done(st, up, doing, e) < 0)
		return -1;
	return 0;
}

int store_add_net_events(struct store *st, const char *id, int attempt,
			 const struct net_event *ev, size_t n, struct err *e)
{
	static const char doing[] = "cannot record the network events";
	if (!id)
		return err_set(e, EINVAL, NULL, "%s: no session id", doing);
	if (n == 0)
		return 0;
	if (st_tx_begin(st, doing, e) < 0)
		return -1;
	return st_tx_end(st, net_tx(st, id, attempt, ev, n, e), doing, e);
}

/* Copy column i into a fixed field, cut (never overrun) and NUL-terminated. */
static void col_field(sqlite3_stmt *s, int i, char *dst, size_t size)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	size_t len = t ? (size_t)sqlite3_column_bytes(s, i) : 0;
	if (len >= size)
		len = size - 1;
	if (len)
		memcpy(dst, t, len);
	dst[len] = '\0';
}

static void row_net(sqlite3_stmt *s, struct net_row *r)
{
	memset(r, 0, sizeof *r);
	r->seq = sqlite3_column_int64(s, 0);
	r->attempt = sqlite3_column_int(s, 1);
	struct net_event *ev = &r->ev;
	ev->at_ms = sqlite3_column_int64(s, 2);
	if (net_proto_parse((const char *)sqlite3_column_text(s, 3), &ev->proto) < 0)
		ev->proto = NP_CONNECT;
	col_field(s, 4, ev->host, sizeof ev->host);
	ev->port = (uint16_t)sqlite3_column_int(s, 5);
	ev->allowed = sqlite3_column_int(s, 6) != 0;
	col_field(s, 7, ev->rule, sizeof ev->rule);
	col_field(s, 8, ev->addr, sizeof ev->addr);
	ev->bytes_up = (uint64_t)sqlite3_column_int64(s, 9);
	ev->bytes_down = (uint64_t)sqlite3_column_int64(s, 10);
	ev->dur_ms = sqlite3_column_int64(s, 11);
	col_field(s, 12, ev->error, sizeof ev->error);
	ev->failed = ev->allowed && sqlite3_column_int(s, 13) != 0;
}

int store_net_events(struct store *st, const char *id, long long since_seq, size_t limit,
		     struct net_row **out, size_t *n, struct err *e)
{
	static const char doing[] = "cannot read the session's network events";
	*out = NULL;
	*n = 0;
	int r = st_exists(st, id, doing, e);
	if (r < 0)
		return r;
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e,
		 "SELECT seq, attempt, at_ms, proto, host, port, allowed, rule, addr, bytes_up,"
		 " bytes_down, dur_ms, error, failed FROM net_events WHERE session_id = ? AND seq > ?"
		 " ORDER BY seq LIMIT ?",
		 "sLL", id, since_seq, limit ? (long long)limit : -1LL) < 0)
		return -1;
	struct net_row *v = NULL;
	size_t k = 0, cap = 0;
	while ((r = st_step_row(st, s, doing, e)) == 1) {
		if (k == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof *v);
		}
		row_net(s, &v[k++]);
	}
	if (r < 0) {
		free(v);
		return -1;
	}
	*out = v;
	*n = k;
	return 0;
}

int store_net_counts(struct store *st, const char *id, enum net_which which, size_t limit,
		     struct net_count **out, size_t *n, struct err *e)
{
	static const char doing[] = "cannot read the session's denied or failed requests";
	*out = NULL;
	*n = 0;
	int r = st_exists(st, id, doing, e);
	if (r < 0)
		return r;
	/* the reason is the group's first row's: SQLite takes a bare column from the row min()
	 * picked */
	_cleanup_stmt_ sqlite3_stmt *s = NULL;
	if (st_prep(st, &s, doing, e,
		 which == NET_DENIED
			 ? "SELECT host, port, count(*) AS c, rule, min(seq) FROM net_events"
			   " WHERE session_id = ? AND allowed = 0 GROUP BY host, port"
			   " ORDER BY c DESC, host, port LIMIT ?"
			 : "SELECT host, port, count(*) AS c, error, min(seq) FROM net_events"
			   " WHERE session_id = ? AND allowed = 1 AND failed = 1 GROUP BY host, port"
			   " ORDER BY c DESC, host, port LIMIT ?",
		 "sL", id, limit ? (long long)limit : -1LL) < 0)
		return -1;
	struct net_count *v = NULL;
	size_t k = 0;
	while ((r = st_step_row(st, s, doing, e)) == 1) {
		v = xrealloc(v, (k + 1) * sizeof *v);
		v[k++] = (struct net_count){
			.host = st_col_str(s, 0),
			.port = sqlite3_column_int(s, 1),
			.n = sqlite3_column_int64(s, 2),
			.why = st_col_str(s, 3),
		};
		if (!v[k - 1].host)
			v[k - 1].host = xstrdup("");
	}
	if (r < 0) {
		net_counts_free(v, k);
		return -1;
	}
	*out = v;
	*n = k;
	return 0;
}
