/* netfmt: the egress proxy's decisions as text (doc/design.md §4, §5) — the lines of
 * `agentjail log`, the network line of `show`, the NET cell of `sessions` and the end-of-run
 * line of denied connections. Pure, like sessfmt: every function returns a new string (free
 * it), never NULL. Hosts, rules and errors come from the jail (a hostile agent chose them):
 * each is cleaned for the terminal (fmt_clean) and cut to a bounded width. */
#pragma once
#include <stddef.h>

#include "core/plan/netevent.h"
#include "core/session/store.h"

/* "host:port", "[v6addr]:port" for an IPv6 literal, "host (dns)" for port 0 (a name lookup),
 * "(malformed DNS request)" for port 0 and no host (netevent.h); the host cleaned and cut to
 * 64 columns. host is read up to hostsize bytes. */
char *netfmt_hostport(const char *host, size_t hostsize, int port);
/* A byte count in at most 5 columns: "0", "999", "1.2K", "34K", "5.6M", "1.0G", "12T". */
char *netfmt_bytes(unsigned long long n);

/* The denied requests as one line: "denied 3 connections: evil.example:443 ×2,
 * other.example:80", or "denied 1 connection, 2 name lookups and 1 malformed DNS request: …"
 * when DNS lookups (port 0) were denied too, and DNS messages no name could be read from
 * (counted apart, never listed). v: the counts by host and port of the connections and
 * lookups, most frequent first (store_net_denied's order), perhaps not all of them; conns,
 * lookups and malformed: the totals. Entries that do not fit in width columns (0: no limit),
 * or not in v, become "… N more". "" when nothing was denied. */
char *netfmt_denied_line(const struct net_count *v, size_t n, long long conns,
			 long long lookups, long long malformed, size_t width);
/* `show`'s summary: "12 allowed, 3 denied (evil.example:443 ×2, other.example:80)", cut to
 * width (0: no limit); "none" when both are 0. */
char *netfmt_summary(long long allowed, long long denied, const struct net_count *v, size_t n,
		     size_t width);
/* The NET cell of `sessions`: "-" (none), "12 ok", "3 denied", "12 ok, 3 denied". */
char *netfmt_cell(long long allowed, long long denied);

/* `agentjail log`: a header, then a line per decision and per violation, in fixed columns
 * (the lines are printed as they come with --follow): TIME, PROTO, ACTION (ALLOW, DENY), HOST,
 * ADDR, UP, DOWN, TOOK, then the rule (allowed) or the reason (denied), and the upstream error
 * if any. Cut to width (0: no limit); no trailing newline. */
char *netfmt_log_header(size_t width);
char *netfmt_log_line(const struct net_event *ev, long utc_offset_s, size_t width);
/* A violation (an events row): its time, "violation", and its detail (path, what, moved to). */
char *netfmt_log_violation(const struct event *ev, long utc_offset_s, size_t width);
