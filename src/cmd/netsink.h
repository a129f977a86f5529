/* netsink: where the egress proxy's decisions go (doc/design.md §4, §5). A net_event_sink
 * (core/net/proxy.h) that writes each batch to the session store on its own connection (the
 * proxy's writer thread calls it; a store that fails costs one warning, never the run) and
 * counts the denied requests, and the allowed ones whose upstream failed, by host and port for
 * the lines printed at the end of the run, each host with its reason and fix (the first two):
 *   agentjail: denied 1 connection: registry.npmjs.org:443 resolves to 10.0.0.1 (private),
 *     which is refused (add --map-host registry.npmjs.org=ADDR to allow that address)
 *   agentjail: 7 allowed, 7 failed upstream: pypi.org:443 ×7 could not resolve: …
 *
 * Use: ns = netsink_new(rec->st, rec->id, attempt); proxy_start(…, netsink_fn, ns, …);
 * … proxy_stop(…); netsink_report(ns); netsink_free(ns); then cmd_rec_end — the proxy stops
 * (delivering its last events) before the session is marked ended, so `agentjail log
 * --follow`, which stops when the session ends, has seen them all. */
#pragma once
#include <stddef.h>

#include "core/net/netevent.h"

struct store;
struct netsink;

/* st: the run's store (struct sess_rec's), NULL when there is none; session_id NULL when the
 * run is not recorded (then the denials are only counted). The sink copies the id and opens
 * its own connection (store_open_again) when the first batch comes, on the thread that delivers
 * it, so st must outlive the sink (a connection that cannot be opened is one warning then).
 * attempt <= 0: the session's current attempt when each batch is written. Never NULL. */
struct netsink *netsink_new(struct store *st, const char *session_id, int attempt);
/* A net_event_sink: arg is the netsink. Safe to call from any one thread at a time. */
void netsink_fn(void *arg, const struct net_event *ev, size_t n);
/* Print the denied line on stderr when anything was denied, and the failed line when an
 * allowed request's upstream failed (nothing otherwise). */
void netsink_report(struct netsink *ns);
/* Totals so far (for tests and summaries); NULL pointers are fine. */
void netsink_counts(struct netsink *ns, unsigned long long *allowed, unsigned long long *denied);
void netsink_free(struct netsink *ns); /* NULL is fine */

#ifdef AJ_TEST_BUILD
/* Test builds: when the variable `var` names a file of JSON lines (one net_event each:
 * proto, host, port, allowed, failed, rule, addr, bytes_up, bytes_down, dur_ms, error, at_ms),
 * feed
 * them through the test sink of session id (made on first use), as the proxy would. */
void netsink_test_feed(struct store *st, const char *session_id, const char *var);
/* Report and free the test sink, if any. */
void netsink_test_end(void);
#endif
