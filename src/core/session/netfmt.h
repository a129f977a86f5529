/* netfmt: the egress proxy's decisions as text (doc/design.md §4, §5) — the lines of
 * `agentjail log`, the network line of `show`, the NET cell of `sessions` and the end-of-run
 * line of denied connections. Pure, like sessfmt: every function returns a new string (free
 * it), never NULL. Hosts, rules and errors come from the jail (a hostile agent chose them):
 * each is cleaned for the terminal (fmt_clean) and cut to a bounded width. */
#pragma once
#include <stddef.h>

#include "core/net/netevent.h"
#include "core/session/store.h"

/* "host:port", "[v6addr]:port" for an IPv6 literal, "host (dns)" for port 0 (a name lookup),
 * "(malformed DNS request)" for port 0 and no host (netevent.h); the host cleaned and cut to
 * 64 columns. host is read up to hostsize bytes. */
char *netfmt_hostport(const char *host, size_t hostsize, int port);
/* A byte count in at most 5 columns: "0", "999", "1.2K", "34K", "5.6M", "1.0G", "12T". */
char *netfmt_bytes(unsigned long long n);

/* How many hosts the end-of-run lines name with their reason; the rest are counted. */
#define NETFMT_LINE_HOSTS 2

/* The denied requests as one line, for the end of a run: "denied 3 connections:
 * evil.example:443 ×2 is not on the allow list (add --allow-domain evil.example);
 * other.example:80 …", "denied 1 connection, 2 name lookups and 1 malformed DNS request: …"
 * when DNS lookups (port 0) were denied too, and DNS messages no name could be read from
 * (malformed: counted apart, never listed). v: the counts by host and port, most frequent first (store_net_counts'
 * order), each with its reason (why: the proxy's one line, which names the host and port and
 * the flag that would allow it; NULL: the host alone); the first NETFMT_LINE_HOSTS whole, the
 * rest "and N more" (N requests), followed by " (MORE)" when more is given (where to see them
 * all). conns and lookups: the totals. "" when nothing was denied. */
char *netfmt_denied_line(const struct net_count *v, size_t n, long long conns,
			 long long lookups, long long malformed, const char *more);
/* The allowed requests whose upstream failed, for the end of a run: "7 allowed, 7 failed
 * upstream: pypi.org:443 ×7 could not resolve: Domain name not found", the first
 * NETFMT_LINE_HOSTS with their error (why), then "and N more" as above. "" when none failed. */
char *netfmt_failed_line(const struct net_count *v, size_t n, long long allowed,
			 long long failed, const char *more);
/* `show`'s summary: "12 allowed, 2 failed upstream (pypi.org:443 ×2 could not resolve: …),
 * 3 denied (evil.example:443 ×2, other.example:80)" (the failed part only when some failed),
 * cut to width (0: no limit); "none" when nothing was decided. fv/fn: the failed by host with
 * their errors; dv/dn: the denied by host. */
char *netfmt_summary(long long allowed, long long failed, long long denied,
		     const struct net_count *fv, size_t fn, const struct net_count *dv, size_t dn,
		     size_t width);
/* The NET cell of `sessions`: "-" (none), "12 ok", "2 failed", "3 denied", and together
 * "10 ok, 2 failed, 3 denied" (ok: allowed and not failed). */
char *netfmt_cell(long long allowed, long long failed, long long denied);

/* `agentjail log`: a header, then a line per decision and per violation, in fixed columns
 * (the lines are printed as they come with --follow): TIME, PROTO, ACTION (ALLOW, FAIL: allowed
 * but the upstream failed, DENY), HOST, ADDR, UP, DOWN, TOOK, then the rule (allowed) or the
 * reason (denied), and the upstream error if any. With a width (0: no limit) the columns are
 * cut to it and the rule, reason and error, when they do not fit after them, follow whole on
 * lines of their own, wrapped to the width and indented; no trailing newline. */
char *netfmt_log_header(size_t width);
char *netfmt_log_line(const struct net_event *ev, long utc_offset_s, size_t width);
/* A violation (an events row): its time, "violation", and its detail (path, what, moved to). */
char *netfmt_log_violation(const struct event *ev, long utc_offset_s, size_t width);
