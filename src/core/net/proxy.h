/* proxy: the egress proxy of `--net allow` (doc/design.md §4). It serves the listeners the
 * namespace holder opened inside the jail's network namespace — one TCP port (HTTP CONNECT,
 * plain HTTP, SOCKS5, told apart by the first byte) and the DNS stub (UDP and TCP) — from one
 * epoll loop in one thread of the agentjail process, resolving on the host with c-ares in the
 * same loop, and reports every decision as a net_event. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "core/net/netevent.h"
#include "core/plan/netask.h"
#include "core/plan/netrules.h"
#include "core/plan/publish.h"
#include "util/err.h"

struct proxy_listeners {
	int tcp4, tcp6;           /* listening 127.0.0.1:3128 and [::1]:3128 (-1 if absent) */
	int dns_udp, dns_tcp;     /* bound/listening 127.0.0.1:53 (-1: none, as for --net off
				   * with --publish, the proxy's only work then) */
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

/* --net ask (doc/design.md §4, "Ask instead of fail"): a request the rules refuse — not on the
 * list, or not at that port; never what a deny entry refuses — waits for the person's answer
 * (proxy_answer) or timeout_s, then is allowed or refused. The callbacks run on the proxy's
 * thread and must not block: `asked` once per question, `settled` when it is answered (by:
 * who), timed out or given up. */
struct proxy_ask {
	int timeout_s;          /* 0: NETASK_TIMEOUT_S */
	void (*asked)(void *arg, const struct net_question *q);
	void (*settled)(void *arg, const struct net_question *q, enum ask_answer a,
			bool timed_out, const char *by);
	void *arg;
};

/* Start serving. Takes ownership of the listener fds (closed by proxy_stop, or here on
 * failure). rules must outlive the proxy. ask: NULL, or --net ask (copied). */
int proxy_start(const struct proxy_listeners *l, const struct netrules *rules,
		const struct proxy_ask *ask, net_event_sink sink, void *arg, struct proxy **out,
		struct err *e) WUR;
/* --net ask: the answer to question id, or with id 0 to every open question of entry (an
 * allow_domains entry, net_suggest_entry's form) and, but for ASK_ONCE, to those to come (by:
 * who answered, for the events). Any thread; the loop applies it. */
void proxy_answer(struct proxy *p, uint64_t id, const char *entry, enum ask_answer a,
		  const char *by);
/* --publish (doc/design.md §4, "Dev servers"). The host's listeners, 127.0.0.1:HOSTPORT for each
 * entry (fds[i] for v[i], non-blocking, close-on-exec), opened before the jail starts: -1 with e
 * naming the entry and why (the port in use, below 1024 for a user), every fd closed. */
int proxy_publish_listen(const struct publish *v, size_t n, int *fds, struct err *e) WUR;
/* Serve them from the proxy's loop: for each connection accepted there the jail's init, asked
 * over chan (core/plan/pubwire.h), connects to the jail's loopback at the entry's port, and
 * the proxy relays; each connection is a net_event of proto publish. Takes fds and chan (closed
 * by proxy_stop, or at once on failure); v is copied. Any thread, while the proxy runs. */
int proxy_publish(struct proxy *p, const struct publish *v, const int *fds, size_t n, int chan,
		  struct err *e) WUR;
/* --net allow's capture (doc/design.md §4): serve the listener of the seccomp filter that
 * stops the jail's connects (core/confine/capfilter.h) and init's channel for its Unix-socket
 * connects (core/plan/capwire.h), from the proxy's thread. Called once, from another thread,
 * while the proxy runs; takes ownership of both fds (closed by proxy_stop, or at once on
 * failure). -1 with e: the jail's connects then fail (ENOSYS), nothing opens. */
int proxy_capture(struct proxy *p, int listener, int chan, struct err *e) WUR;
/* Stop: close the listeners and every connection, let agentjail-tls finish (its events read
 * until it closes the control socket, at most 2 s), deliver the remaining events — all on the
 * proxy's own threads —, join, free. The control socket is closed; reaping the helper is its
 * starter's. */
void proxy_stop(struct proxy *p, struct proxy_stats *st);
/* Begin proxy_stop's work on the proxy's threads and return at once, for when the jail is gone
 * (doc/design.md §7: it overlaps the checks after the run); proxy_stop then waits for it. From
 * the thread that calls proxy_stop; nothing is served after it. NULL is fine. */
void proxy_stop_begin(struct proxy *p);
