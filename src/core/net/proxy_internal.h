/* proxy_internal.h: what the proxy's files share (proxy.c start, stop, the loop and c-ares;
 * proxy_conn.c the connections and the relay; proxy_dns.c the DNS stub; proxy_events.c the
 * event queue and its writer; capture.c the captured connects, capsock.c their upstream
 * sockets). Private to src/core/net/proxy*.c, capture*.c, capsock.c and the proxy's unit
 * tests. Helpers carry the prefix px_. */
#pragma once
#include <ares.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <linux/filter.h>

#include "core/net/firstbytes.h"
#include "core/net/httpreq.h"
#include "core/net/proxy.h"
#include "core/net/netsynth.h"
#include "core/net/inspectmsg.h"
#include "core/plan/netask.h"
#include "core/plan/publish.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71 /* Linux 5.14 */
#endif

/* What an epoll registration points at: every registered object starts with one. */
enum px_kind { PK_STOP, PK_LISTEN, PK_DNS_UDP, PK_DNS_LISTEN, PK_ARES, PK_CLIENT, PK_UPSTREAM,
	       PK_DNS_TCP, PK_NOTIFY, PK_CAPTURE, PK_CAPCHAN, PK_RELAY, PK_WAKE, PK_PUB_LISTEN,
	       PK_PUB_CHAN, PK_INSPECT };
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
struct px_capture;

/* Work another thread hands the loop (px_post): the loop owns every connection and the epoll
 * set, so what changes them from outside is queued and done there. Each kind embeds this
 * first. */
enum px_job_kind { PJ_PUBLISH, PJ_ANSWER };
struct px_job {
	enum px_job_kind kind;
	struct px_job *next;
};

/* --publish: the job (proxy_publish) and what the loop keeps (proxy_conn.c). */
struct px_pub_job {
	struct px_job j;
	size_t n;
	struct publish v[PUBLISH_MAX];
	int fds[PUBLISH_MAX];
	int chan;
};
struct px_pub_listen {
	struct px_handle h;       /* PK_PUB_LISTEN: the host's 127.0.0.1:host_port */
	struct publish pub;
};
struct px_conn;

/* --net ask (proxy_ask.c): a request waiting for the person's answer, embedded in its owner
 * (a connection, a DNS query). */
struct px_question;
struct px_wait {
	struct px_wait *prev, *next;
	struct px_question *q;
	/* The answer came, or the time ran out, or the proxy stops: allowed (d filled, its rule
	 * the answer's entry) or not (d NULL; reason says why, allocated: the callee's). */
	void (*done)(struct proxy *p, struct px_wait *w, const struct net_decision *d,
		     char *reason);
};
struct px_answer_job {           /* proxy_answer */
	struct px_job j;
	uint64_t id;                 /* a question, or 0: every question of entry, and later ones */
	char entry[NET_HOST_MAX + 10];
	enum ask_answer a;
	char by[128];
};
struct px_ask;
#define PX_PUB_INFLIGHT 256 /* connections waiting for init's socket at once */
struct px_pub {
	struct px_pub_listen *l;
	size_t n;
	struct px_handle chan;    /* PK_PUB_CHAN: to the jail's init (core/plan/pubwire.h) */
	struct px_conn *fifo[PX_PUB_INFLIGHT]; /* asked, in order (NULL: gone since) */
	uint64_t head, tail;      /* the next answer is for fifo[head % N]; tail: next asked */
};

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
	bool stop_sent;                    /* proxy_stop_begin wrote stop_h (its caller's) */
	int head_ms, connect_ms;           /* from px_test_timeouts, or the defaults */
	long long accept_paused_until;     /* out of fds: the listeners rest until then */
	struct px_handle wake_h;           /* eventfd: px_post wrote a job */
	pthread_mutex_t inbox_mu;
	struct px_job *inbox;              /* jobs posted, oldest first */
	struct px_pub *pub;                /* --publish, once its job ran */
	struct px_ask *ask;                /* --net ask, NULL without */
	struct netsynth synth;             /* the DNS stub's own addresses, capture's way back */
	uint64_t jail_netns;               /* SO_NETNS_COOKIE of the jail's network namespace, 0
					    * before Linux 5.14: then jail_netns_ino is used */
	uint64_t jail_netns_ino;           /* its inode (SIOCGSKNS of a listener), or 0 */
	struct px_capture *cap;            /* the captured connects, from proxy_capture on */
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
/* A captured connection whose first bytes are judged (capture.c): fd is agentjail's end of the
 * pair whose other end the jail gets; d, ev and the addresses (at most 8 kept) are capture's.
 * Made here, started by px_conn_start: it connects upstream (the next address on failure),
 * then holds the client's first bytes until fb_judge decides, and relays. waiter (or NULL):
 * the jail's connect that waits, told by px_capture_upstream once the upstream is connected
 * or has failed (a connection that fails without one resets the jail's end). The connection
 * ends as one net_event, ev's. */
struct px_cap;
struct px_conn *px_conn_captured(struct proxy *p, int fd, const struct net_decision *d,
				 const struct net_event *ev, const struct sockaddr_storage *addrs,
				 size_t n);
void px_conn_start(struct proxy *p, struct px_conn *c, struct px_cap *waiter);
/* Its waiter went away (the jail's call was interrupted): closed, without an event. */
void px_conn_abandon(struct proxy *p, struct px_conn *c);
/* What the first bytes of a connection to host (normalized):port are judged as (firstbytes.h:
 * fb_kind_for, and the unit test's ports). FB_SNIFF for a port that is not judged. */
enum fb_kind px_fb_kind(const struct proxy *p, const char *host, uint16_t port);

/* --publish (proxy_conn.c) */
void px_pub_start(struct proxy *p, struct px_pub_job *j); /* takes j's fds; frees nothing */
void px_pub_accept(struct proxy *p, struct px_pub_listen *l);
void px_pub_answer(struct proxy *p);                      /* init answered on the channel */
void px_pub_free(struct proxy *p);                        /* after px_close_all */

/* --net ask (proxy_ask.c). After the rules refused host:port (verdict v, not NV_DENY_LISTED):
 * 1 allowed by an earlier answer (d set); 0 waiting (w linked: w->done follows); -1 refused,
 * *reason (allocated) saying why — denied when asked, too many questions — or NULL when the
 * proxy does not ask (the rules' own reason applies). */
int px_ask_setup(struct proxy *p, const struct proxy_ask *cfg); /* before the loop starts */
int px_ask(struct proxy *p, const char *host, uint16_t port, enum net_proto proto,
	   struct net_decision *d, struct px_wait *w, char **reason);
void px_ask_leave(struct proxy *p, struct px_wait *w); /* its request went away */
void px_ask_answer(struct proxy *p, const struct px_answer_job *j);
void px_ask_sweep(struct proxy *p, long long now);     /* questions out of time: denied */
void px_ask_free(struct proxy *p);                     /* waiters told (denied), all freed */

/* proxy_events.c */
int px_events_start(struct px_events *q, net_event_sink sink, void *arg, struct err *e) WUR;
void px_events_push(struct px_events *q, const struct net_event *ev);
void px_events_stop(struct px_events *q); /* deliver what is left, join, free */

/* proxy.c, used by the others */
void px_post(struct proxy *p, struct px_job *j); /* any thread: the loop runs it, then frees it */
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
/* "ADDR (its class)", as a refusal names an address */
void px_addr_class_text(int family, const uint8_t *addr, char *out, size_t cap);
#define PX_REASON_MAX 704
/* The reason for a name whose addresses were all refused (refused: px_addr_class_text's). */
void px_addr_refused(const char *host, uint16_t port, const char *refused, char *out,
		     size_t cap);
void px_set_text(char *dst, size_t cap, const char *s); /* copied, cut to fit */
/* An IPv4 (4 bytes) or IPv6 (16) address and a port as a sockaddr; its length. */
socklen_t px_fill_sa(struct sockaddr_storage *sa, int fam, const uint8_t *a, uint16_t port);

/* proxy_inspect.c (doc/design.md §4d) */
/* Whether a tunnel to host (normalized) at port, whose first bytes fb_judge passed (tls: they
 * are a ClientHello; http: an HTTP head on port 80), goes to agentjail-tls (refused when it
 * cannot take it). */
bool px_inspect_wanted(const struct proxy *p, const char *host, bool tls, bool http);
/* Whether the host is inspected: a captured connection to it is relayed, so its first bytes
 * are read and it can be handed over, whatever its port (capture.c). */
bool px_inspect_host(const struct proxy *p, const char *host);
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

/* capsock.c: the upstream socket of a captured connect */
struct px_sockopts {           /* the options a client set on its socket, to copy upstream */
	size_t n;
	struct {
		int level, name;
		socklen_t len;
		uint8_t val[16];
	} o[16];
};
struct px_ports {              /* the local ports upstream sockets are bound to */
	unsigned lo, hi;
	uint64_t rng;
};
#define PX_PEER_FILTER_MAX 16
void px_sockopts_read(int s, struct px_sockopts *o);
void px_ports_init(struct px_ports *pp);
/* The locked socket filter's program: packets from addr (AF_INET 4 bytes, AF_INET6 16) and
 * port only. Its length (at most PX_PEER_FILTER_MAX). */
size_t px_peer_filter(int family, const uint8_t *addr, uint16_t port, struct sock_filter *out);
/* A TCP socket of family fam ready to connect to peer (non-blocking, close-on-exec): bound to a
 * port of its own (exclusive: without SO_REUSEADDR, no other socket may share it), with the
 * locked filter for peer and the client's options o. -1 with errno. */
int px_capsock_open(int fam, const struct sockaddr_storage *peer, const struct px_sockopts *o,
		    struct px_ports *pp, bool exclusive);
/* A TCP socket's state (TCP_ESTABLISHED, TCP_SYN_SENT, …, TCP_CLOSE), -1 if unknown. */
int px_tcp_state(int fd);
/* The relay's listener on the host's 127.0.0.1, at a port the kernel chooses (*port):
 * non-blocking, close-on-exec. -1 with errno. */
int px_relay_listen(uint16_t *port);
/* The next connection on l established from 127.0.0.1 (others are closed), its peer's port in
 * *peer_port; -1 with errno (EAGAIN: none now). */
int px_relay_accept(int l, uint16_t *peer_port);

/* capture.c */
/* PK_NOTIFY, PK_CAPTURE, PK_CAPCHAN, PK_RELAY */
void px_capture_event(struct proxy *p, struct px_handle *h, uint32_t ev);
void px_capture_sweep(struct proxy *p, long long now);  /* deadlines; interrupted callers */
void px_capture_close(struct proxy *p);                 /* answer and free what waits */
void px_capture_free(struct proxy *p);                  /* then the listener (teardown) */
/* proxy_conn.c's answer to a waiting connect: its upstream is connected (0) or failed (errno). */
void px_capture_upstream(struct proxy *p, struct px_cap *c, int err);
/* Whether socket fd lives in the network namespace of the jail's listener (proxy_start). */
bool px_in_jail_netns(const struct proxy *p, int fd);
/* The name a DNS-stub address stands for (netsynth.h), or NULL: outside the ranges *in_range
 * is false; inside but never given out, NULL with *in_range true. */
const char *px_synth_name(const struct proxy *p, int family, const uint8_t *addr,
			  bool *in_range);

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
