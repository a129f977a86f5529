/* proxy_internal.h: what the proxy's files share (proxy.c start, stop, the loop and c-ares;
 * proxy_conn.c the connections and the relay; proxy_dns.c the DNS stub; proxy_events.c the
 * event queue and its writer). Private to src/core/net/proxy*.c and the proxy's unit test.
 * Helpers carry the prefix px_. */
#pragma once
#include <ares.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/net/httpreq.h"
#include "core/net/proxy.h"
#include "core/plan/inspectmsg.h"

/* What an epoll registration points at: every registered object starts with one. */
enum px_kind { PK_STOP, PK_LISTEN, PK_DNS_UDP, PK_DNS_LISTEN, PK_ARES, PK_CLIENT, PK_UPSTREAM,
	       PK_DNS_TCP, PK_INSPECT };
struct px_handle {
	enum px_kind kind;
	int fd;
	uint32_t mask;      /* the events registered, 0 when not registered */
	bool dead;          /* closed in this round of events: skip what is still queued */
};

/* The event queue: the loop appends, the writer takes the whole batch (never blocking the loop
 * on the sink). */
struct px_events {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct net_event *v;
	size_t n, cap;
	bool stop;
	uint64_t dropped;
	net_event_sink sink;
	void *arg;
	pthread_t thr;
	bool started;
};

struct px_dns_tcp;
struct px_dns_job;

struct proxy {
	int ep;
	struct px_handle stop_h;           /* eventfd: proxy_stop writes it */
	struct px_handle listen_h[2];      /* tcp4, tcp6 */
	struct px_handle udp_h, dnsl_h;    /* the DNS stub: UDP, TCP listener */
	struct px_handle inspect_h;        /* agentjail-tls's control socket, -1 when none */
	uint64_t inspect_ids;              /* the last tunnel id handed over */
	const struct netrules *rules;
	ares_channel ch;
	bool ares_ok;
	struct px_ares *ares_fds;          /* c-ares's sockets in the epoll set */
	struct px_conn *conns;             /* the open proxy connections */
	struct px_dns_tcp *dns_conns;      /* the open DNS-over-TCP connections */
	struct px_handle **graveyard;      /* freed at the end of a round of events */
	size_t n_grave, cap_grave;
	size_t n_conns, n_dns_conns, n_dns_jobs;
	struct proxy_stats st;
	struct px_events evq;
	pthread_t thr;
	bool thr_started;
	int head_ms, connect_ms;           /* from px_test_timeouts, or the defaults */
	long long accept_paused_until;     /* out of fds: the listeners rest until then */
};

struct px_ares {
	struct px_handle h;
	struct px_ares *next;
};

#define PX_SWEEP_MS 100 /* how often deadlines are looked at */

/* proxy_conn.c */
void px_accept(struct proxy *p, struct px_handle *listener);
void px_conn_event(struct proxy *p, struct px_handle *h, uint32_t ev); /* PK_CLIENT/UPSTREAM */
void px_sweep(struct proxy *p, long long now); /* deadlines; the DNS stub's; resting listeners */
void px_close_all(struct proxy *p);            /* every connection, its event delivered */

/* proxy_events.c */
int px_events_start(struct px_events *q, net_event_sink sink, void *arg, struct err *e) WUR;
void px_events_push(struct px_events *q, const struct net_event *ev);
void px_events_stop(struct px_events *q); /* deliver what is left, join, free */

/* proxy.c, used by the others */
int px_ep_set(struct proxy *p, struct px_handle *h, uint32_t mask);
void px_bury(struct proxy *p, struct px_handle *h); /* close its fd, free at the round's end */
void px_close_fd(int *fd);                           /* close it if open, set it to -1 */
int64_t px_wall_ms(void);
/* Send buf[*off, len) on a non-blocking socket, advancing *off: 1 all of it went, 0 the socket
 * is full, -1 failed. */
int px_send(int fd, const void *buf, size_t len, size_t *off);
/* Receive into buf[*len, cap) until it is full or the socket is empty, advancing *len: 0, or
 * -1 at EOF or on an error. */
int px_recv(int fd, void *buf, size_t cap, size_t *len);
void px_event_init(struct net_event *ev, enum net_proto proto, const char *host, uint16_t port);
void px_addr_text(int family, const uint8_t *addr, char *out, size_t cap);

/* proxy_inspect.c (doc/design.md §4d) */
/* Whether a tunnel to host (normalized) at port, whose first bytes fb_judge passed (tls: they
 * are a ClientHello; http: an HTTP head on port 80), goes to agentjail-tls. */
bool px_inspect_wanted(const struct proxy *p, const char *host, bool tls, bool http);
/* Hand the tunnel over: its client and upstream sockets and the bytes held. 0 sent (the
 * caller closes its copies and leaves the event to agentjail-tls), -1 not (it is gone: the
 * caller refuses the tunnel, never relays it unread). */
int px_inspect_send(struct proxy *p, const struct im_tunnel *t, int client_fd, int upstream_fd);
void px_inspect_ready(struct proxy *p);  /* PK_INSPECT readable: its events */
void px_inspect_finish(struct proxy *p); /* proxy_stop: read its last events, close */
/* A plain HTTP request (absolute URI) to an inspected host: -1 with the refusal's reason and
 * whether it is an exfiltration attempt. */
int px_inspect_plain(const struct proxy *p, const char *host, uint16_t port, const char *buf,
		     size_t len, const struct http_req *q, char *reason, size_t cap);

/* proxy_dns.c */
void px_dns_udp_ready(struct proxy *p);
void px_dns_accept(struct proxy *p);
void px_dns_tcp_event(struct proxy *p, struct px_dns_tcp *c, uint32_t ev);
void px_dns_sweep(struct proxy *p, long long now); /* close idle DNS-over-TCP connections */
void px_dns_close_all(struct proxy *p);

/* May the DNS stub answer for this normalized name (netrules_check with port 0: an allow rule
 * or a mapping names it at some port, and no port-less deny rule refuses it)? */
bool px_dns_name_allowed(const struct netrules *r, const char *host, struct net_decision *d);

/* For the unit test: timeouts (ms) for the next proxy_start (0 keeps the default: the request
 * head 10 s, the connect 10 s), and the resolver c-ares asks ("127.0.0.1:5353", NULL for the
 * host's). */
void px_test_timeouts(int head_ms, int connect_ms);
/* For the unit test: a port (0: none) that carries TLS only, as 443 does, and one that carries
 * HTTP only, as 80 does (the test's servers cannot listen on those). */
void px_test_ports(uint16_t tls_port, uint16_t http_port);
extern uint16_t px_test_tls_port, px_test_http_port;
void px_test_resolver(const char *servers_csv);
/* Connections open now (read from another thread: for a test waiting for the loop). */
size_t px_test_open(const struct proxy *p);
