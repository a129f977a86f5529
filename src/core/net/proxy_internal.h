/* proxy_internal.h: what the proxy's files share (proxy.c the loop, the connections and the
 * relay; proxy_dns.c the DNS stub; proxy_events.c the event queue and its writer). Private to
 * src/core/net/proxy*.c and the proxy's unit test. Helpers carry the prefix px_. */
#pragma once
#include <ares.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/net/proxy.h"

/* What an epoll registration points at: every registered object starts with one. */
enum px_kind { PK_STOP, PK_LISTEN, PK_DNS_UDP, PK_DNS_LISTEN, PK_ARES, PK_CLIENT, PK_UPSTREAM,
	       PK_DNS_TCP };
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
};

struct px_ares {
	struct px_handle h;
	struct px_ares *next;
};

/* proxy_events.c */
int px_events_start(struct px_events *q, net_event_sink sink, void *arg, struct err *e) WUR;
void px_events_push(struct px_events *q, const struct net_event *ev);
void px_events_stop(struct px_events *q); /* deliver what is left, join, free */

/* proxy.c, used by proxy_dns.c */
int px_ep_set(struct proxy *p, struct px_handle *h, uint32_t mask);
void px_bury(struct proxy *p, struct px_handle *h); /* close its fd, free at the round's end */
int64_t px_wall_ms(void);
void px_event_init(struct net_event *ev, enum net_proto proto, const char *host, uint16_t port);
void px_addr_text(int family, const uint8_t *addr, char *out, size_t cap);

/* proxy_dns.c */
void px_dns_udp_ready(struct proxy *p);
void px_dns_accept(struct proxy *p);
void px_dns_tcp_event(struct proxy *p, struct px_dns_tcp *c, uint32_t ev);
void px_dns_sweep(struct proxy *p, long long now); /* close idle DNS-over-TCP connections */
void px_dns_close_all(struct proxy *p);

/* May the DNS stub answer for this normalized name: would a connection to it on some port be
 * allowed (deny → allow → port, as netrules_check decides)? d filled from the allowing check. */
bool px_dns_name_allowed(const struct netrules *r, const char *host, struct net_decision *d);

/* For the unit test: timeouts (ms) for the next proxy_start (0 keeps the default: the request
 * head 10 s, the connect 10 s), and the resolver c-ares asks ("127.0.0.1:5353", NULL for the
 * host's). */
void px_test_timeouts(int head_ms, int connect_ms);
void px_test_resolver(const char *servers_csv);
/* Connections open now (read from another thread: for a test waiting for the loop). */
size_t px_test_open(const struct proxy *p);
