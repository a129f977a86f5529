/* proxy: the egress proxy of `--net allow` (doc/design.md §4). It serves the listeners the
 * namespace holder opened inside the jail's network namespace — one TCP port (HTTP CONNECT,
 * plain HTTP, SOCKS5, told apart by the first byte) and the DNS stub (UDP and TCP) — from one
 * epoll loop in one thread of the agentjail process, resolving on the host with c-ares in the
 * same loop, and reports every decision as a net_event. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "core/net/netevent.h"
#include "core/plan/netrules.h"
#include "util/err.h"

struct proxy_listeners {
	int tcp4, tcp6;           /* listening 127.0.0.1:3128 and [::1]:3128 (-1 if absent) */
	int dns_udp, dns_tcp;     /* bound/listening 127.0.0.1:53 */
	int inspect_fd;           /* agentjail-tls's control socket (doc/design.md §4d): the
				   * tunnels rules->inspect names go there, its events come back;
				   * 0 or -1: none (then nothing is inspected) */
};

/* Called from the proxy's own writer (never from the relay's path) with events in batches,
 * at least once a second while there are any, and once more from proxy_stop. */
typedef void (*net_event_sink)(void *arg, const struct net_event *ev, size_t n);

struct proxy_stats {
	uint64_t allowed, denied;   /* decisions */
	uint64_t open_now;          /* connections still open when it stopped */
	uint64_t events_dropped;    /* events lost because the queue was full */
};

struct proxy;

/* Start serving. Takes ownership of the listener fds (closed by proxy_stop, or here on
 * failure). rules must outlive the proxy. */
int proxy_start(const struct proxy_listeners *l, const struct netrules *rules,
		net_event_sink sink, void *arg, struct proxy **out, struct err *e) WUR;
/* --net allow's capture (doc/design.md §4): serve the listener of the seccomp filter that
 * stops the jail's connects (core/confine/capfilter.h) and init's channel for its Unix-socket
 * connects (core/plan/capwire.h), from the proxy's thread. Called once, from another thread,
 * while the proxy runs; takes ownership of both fds (closed by proxy_stop, or at once on
 * failure). -1 with e: the jail's connects then fail (ENOSYS), nothing opens. */
int proxy_capture(struct proxy *p, int listener, int chan, struct err *e) WUR;
/* Stop: close the listeners and every connection, let agentjail-tls finish (its events read
 * until it closes the control socket, at most 2 s), deliver the remaining events, join, free.
 * The control socket is closed; reaping the helper is its starter's. */
void proxy_stop(struct proxy *p, struct proxy_stats *st);
