/* proxy.c: the egress proxy's loop, its connections and the relay (doc/design.md §4).
 *
 * One thread runs one epoll loop over: the stop eventfd, the TCP listeners, the DNS stub's
 * sockets (proxy_dns.c), c-ares's sockets and every connection's two sockets. A connection
 * reads its request head (bounded by HTTP_HEAD_MAX and a deadline), is checked against the
 * rules before any lookup, resolves through c-ares in the same loop (a mapping or an IP literal
 * needs none), has each address checked again (netrules_addr_ok), connects to exactly that
 * address, then relays with splice() through one pipe per direction, half-closing each
 * direction as its source ends. Each connection ends as one net_event (proxy_events.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/net/httpreq.h"
#include "core/net/proxy_internal.h"
#include "core/net/socks5.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define PX_HEAD_MS 10000      /* the request head (and a denial's lingering close) */
#define PX_CONNECT_MS 10000   /* resolution plus one address's connect */
#define PX_SWEEP_MS 100       /* how often deadlines are looked at */
#define PX_ADDRS_MAX 8        /* addresses tried per request */
#define PX_PIPE_CAP 65536     /* bytes a relay pipe holds (Linux's default size) */
#define PX_PIPE_BIG (1 << 20) /* a busy direction's pipe (after PX_PIPE_GROW bytes) */
#define PX_PIPE_GROW (4 << 20)
#define PX_CONNS_MAX 8192     /* open proxy connections; more are closed at accept */

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static int test_head_ms, test_connect_ms;
static char *test_resolver;

void px_test_timeouts(int head_ms, int connect_ms)
{
	test_head_ms = head_ms;
	test_connect_ms = connect_ms;
}

size_t px_test_open(const struct proxy *p)
{
	return __atomic_load_n(&p->n_conns, __ATOMIC_RELAXED) +
	       __atomic_load_n(&p->n_dns_conns, __ATOMIC_RELAXED);
}

void px_test_resolver(const char *servers_csv)
{
	free(test_resolver);
	test_resolver = servers_csv ? xstrdup(servers_csv) : NULL;
}

enum cstate { CS_HEAD, CS_RESOLVING, CS_CONNECTING, CS_RELAY, CS_LINGER };

/* One direction of the relay: src → pipe → dst, after `pre` (bytes of ours) is written. */
struct px_dir {
	int pipe[2];
	size_t inpipe;
	bool eof;       /* src said EOF */
	bool shut;      /* dst shut for writing */
	bool stalled;   /* the pipe took no more: wait for dst to drain it */
	bool grown;     /* its pipe was offered PX_PIPE_BIG */
	size_t cap;     /* bytes the pipe holds */
	char *pre;
	size_t prelen, preoff;
};

struct px_conn {
	struct px_handle c;       /* the client (inside the jail) */
	struct px_handle u;       /* the upstream, -1 until a connect */
	struct px_conn *prev, *next;
	struct proxy *p;
	enum cstate st;
	bool socks, greeted, resolving, closed;
	char *in;
	size_t inlen, incap;
	struct http_req req;      /* plain HTTP: the head to send upstream */
	bool have_req;
	char *up;                 /* to the upstream once connected */
	size_t uplen;
	char *out;                /* to the client: 200, the SOCKS reply, or the refusal */
	size_t outlen, outoff;
	struct sockaddr_storage addrs[PX_ADDRS_MAX];
	socklen_t addrlens[PX_ADDRS_MAX];
	size_t n_addrs, i_addr;
	bool timed_out;
	long long t0, deadline;
	struct net_decision d;
	struct net_event ev;
	bool have_ev;
	struct px_dir dir[2];     /* 0: client → upstream, 1: upstream → client */
	bool hup[2];              /* 0: the client fd, 1: the upstream fd, taken out of epoll */
};

int64_t px_wall_ms(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void px_event_init(struct net_event *ev, enum net_proto proto, const char *host, uint16_t port)
{
	memset(ev, 0, sizeof *ev);
	ev->at_ms = px_wall_ms();
	ev->proto = proto;
	ev->port = port;
	size_t i = 0;
	for (; host && host[i] && i < sizeof ev->host - 1; i++) {
		unsigned char ch = (unsigned char)host[i];
		ev->host[i] = ch > 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	ev->host[i] = '\0';
}

void px_addr_text(int family, const uint8_t *addr, char *out, size_t cap)
{
	if (!inet_ntop(family, addr, out, (socklen_t)cap))
		(void)snprintf(out, cap, "?");
}

static void set_text(char *dst, size_t cap, const char *s)
{
	size_t n = 0;
	for (; s && s[n] && n < cap - 1; n++)
		dst[n] = s[n];
	dst[n] = '\0';
}

int px_ep_set(struct proxy *p, struct px_handle *h, uint32_t mask)
{
	if (h->fd < 0 || h->dead || mask == h->mask)
		return 0;
	struct epoll_event ev = {.events = mask, .data.ptr = h};
	int op = !h->mask ? EPOLL_CTL_ADD : mask ? EPOLL_CTL_MOD : EPOLL_CTL_DEL;
	if (epoll_ctl(p->ep, op, h->fd, &ev) < 0)
		return -1;
	h->mask = mask;
	return 0;
}

/* Registered with no events: EPOLLERR and EPOLLHUP still come. */
static int ep_add_quiet(struct proxy *p, struct px_handle *h)
{
	struct epoll_event ev = {.events = 0, .data.ptr = h};
	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, h->fd, &ev) < 0)
		return -1;
	h->mask = EPOLLERR; /* not 0: "registered" */
	return 0;
}

void px_bury(struct proxy *p, struct px_handle *h)
{
	h->dead = true;
	if (h->fd >= 0) {
		(void)close(h->fd); /* leaves the epoll set with it */
		h->fd = -1;
	}
	if (p->n_grave == p->cap_grave) {
		p->cap_grave = p->cap_grave ? p->cap_grave * 2 : 64;
		p->graveyard = xrealloc(p->graveyard, p->cap_grave * sizeof *p->graveyard);
	}
	p->graveyard[p->n_grave++] = h;
}

/* ---------------------------------------------------------------- connections */

static void conn_free_bufs(struct px_conn *c)
{
	free(c->in);
	c->in = NULL;
	c->inlen = c->incap = 0;
	if (c->have_req) {
		http_req_free(&c->req);
		c->have_req = false;
	}
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		(void)close(*fd);
		*fd = -1;
	}
}

/* Deliver the event, close both sockets and the pipes; freed at the round's end (or, while a
 * lookup is in flight, when c-ares calls back). */
static void conn_close(struct proxy *p, struct px_conn *c)
{
	if (c->closed)
		return;
	c->closed = true;
	if (c->have_ev) {
		c->ev.dur_ms = clock_mono_ms() - c->t0;
		px_events_push(&p->evq, &c->ev);
		c->have_ev = false;
	}
	for (int i = 0; i < 2; i++) {
		close_fd(&c->dir[i].pipe[0]);
		close_fd(&c->dir[i].pipe[1]);
	}
	c->u.dead = true;
	close_fd(&c->u.fd);
	c->c.dead = true;
	close_fd(&c->c.fd);
	conn_free_bufs(c);
	free(c->up);
	c->up = NULL;
	free(c->out);
	c->out = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
	__atomic_sub_fetch(&p->n_conns, 1, __ATOMIC_RELAXED); /* read by px_test_open */
	if (!c->resolving)
		px_bury(p, &c->c);
}

static void conn_set_mask(struct proxy *p, struct px_conn *c, struct px_handle *h, uint32_t m)
{
	if (px_ep_set(p, h, m) < 0)
		conn_close(p, c);
}

/* Write what is queued for the client; true when all of it went. */
static bool flush_out(struct px_conn *c, bool *failed)
{
	while (c->outoff < c->outlen) {
		ssize_t n = send(c->c.fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
		if (n > 0) {
			c->outoff += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return false;
		*failed = true;
		return false;
	}
	return true;
}

static void queue_out(struct px_conn *c, const void *buf, size_t n)
{
	c->out = xrealloc(c->out, c->outlen + n);
	memcpy(c->out + c->outlen, buf, n);
	c->outlen += n;
}

/* Write the queued reply, shut our side, and read until the client closes (so the reply is not
 * lost to a reset), or the deadline. */
static void linger_step(struct proxy *p, struct px_conn *c)
{
	bool failed = false;
	if (!flush_out(c, &failed)) {
		if (failed)
			conn_close(p, c);
		else
			conn_set_mask(p, c, &c->c, EPOLLOUT);
		return;
	}
	if (!c->dir[1].shut) {
		(void)shutdown(c->c.fd, SHUT_WR);
		c->dir[1].shut = true;
	}
	char buf[4096];
	for (;;) {
		ssize_t n = recv(c->c.fd, buf, sizeof buf, 0);
		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			conn_set_mask(p, c, &c->c, EPOLLIN);
			return;
		}
		conn_close(p, c);
		return;
	}
}

/* Refuse or fail the request: the reply in the client's protocol, then a lingering close. */
static void conn_fail(struct proxy *p, struct px_conn *c, int http_code, uint8_t socks_rep,
		      const char *reason)
{
	if (c->u.fd >= 0) {
		c->u.dead = true;
		close_fd(&c->u.fd);
		c->u.mask = 0;
	}
	if (c->socks) {
		uint8_t r[10];
		size_t n = socks5_reply(socks_rep, r);
		queue_out(c, r, n);
	} else {
		size_t n = 0;
		char *resp = http_response(http_code, reason, &n);
		if (resp)
			queue_out(c, resp, n);
		free(resp);
	}
	conn_free_bufs(c);
	c->st = CS_LINGER;
	c->deadline = clock_mono_ms() + p->head_ms;
	linger_step(p, c);
}

static void deny(struct proxy *p, struct px_conn *c, int http_code, uint8_t socks_rep,
		 const char *reason)
{
	c->ev.allowed = false;
	set_text(c->ev.rule, sizeof c->ev.rule, reason);
	c->have_ev = true;
	p->st.denied++;
	conn_fail(p, c, http_code, socks_rep, reason);
}

/* An allowed request whose upstream failed: 502 (refused, unreachable, no address) or 504. */
static void upstream_fail(struct proxy *p, struct px_conn *c, bool timeout, const char *error)
{
	set_text(c->ev.error, sizeof c->ev.error, error);
	char reason[512];
	(void)snprintf(reason, sizeof reason, "%s:%u: %s", c->ev.host, c->ev.port, error);
	uint8_t rep = !timeout && strstr(error, "refused") ? 5 : 4;
	conn_fail(p, c, timeout ? 504 : 502, rep, reason);
}

/* ---------------------------------------------------------------- relay */

/* Move what can move in one direction. -1 on a socket error (the connection is reset). */
static int pump_dir(struct px_conn *c, int i)
{
	struct px_dir *d = &c->dir[i];
	int src = i == 0 ? c->c.fd : c->u.fd, dst = i == 0 ? c->u.fd : c->c.fd;
	uint64_t *bytes = i == 0 ? &c->ev.bytes_up : &c->ev.bytes_down;
	for (;;) {
		while (d->preoff < d->prelen) {
			ssize_t n = send(dst, d->pre + d->preoff, d->prelen - d->preoff, MSG_NOSIGNAL);
			if (n > 0) {
				d->preoff += (size_t)n;
				if (i == 0)
					*bytes += (uint64_t)n;
			} else if (n < 0 && errno == EINTR) {
				continue;
			} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				return 0;
			} else {
				return -1;
			}
		}
		while (d->inpipe > 0) {
			ssize_t n = splice(d->pipe[0], NULL, dst, NULL, d->inpipe,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0) {
				d->inpipe -= (size_t)n;
				*bytes += (uint64_t)n;
				d->stalled = false;
			} else if (n < 0 && errno == EINTR) {
				continue;
			} else if (n < 0 && errno == EAGAIN) {
				break;
			} else {
				return -1;
			}
		}
		if (d->eof || d->stalled || d->inpipe >= d->cap)
			break;
		if (!d->grown && *bytes >= PX_PIPE_GROW) {
			/* a bulk transfer: fewer, larger splices. Refused past the user's pipe
			 * allowance (fs.pipe-user-pages-soft): then it keeps the default. */
			d->grown = true;
			int sz = fcntl(d->pipe[1], F_SETPIPE_SZ, PX_PIPE_BIG);
			if (sz > 0)
				d->cap = (size_t)sz;
		}
		ssize_t n = splice(src, NULL, d->pipe[1], NULL, d->cap - d->inpipe,
				   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
		if (n > 0) {
			d->inpipe += (size_t)n;
			continue; /* try to pass it on at once */
		}
		if (n == 0) {
			d->eof = true;
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -1;
		/* the socket is empty, or the pipe's slots are full (a slot per segment): in the
		 * second case waiting for EPOLLIN would spin, so wait for dst to drain the pipe */
		if (d->inpipe > 0)
			d->stalled = true;
		break;
	}
	if (d->eof && d->inpipe == 0 && d->preoff == d->prelen && !d->shut) {
		(void)shutdown(dst, SHUT_WR);
		d->shut = true;
	}
	return 0;
}

static void relay(struct proxy *p, struct px_conn *c)
{
	for (int i = 1; i >= 0; i--) /* toward the client first: an upstream's last words */
		if (pump_dir(c, i) < 0) {
			if (!c->ev.error[0])
				(void)snprintf(c->ev.error, sizeof c->ev.error, "%s: %s",
					       i == 0 ? "to upstream" : "to client", strerror(errno));
			conn_close(p, c);
			return;
		}
	if (c->dir[0].shut && c->dir[1].shut) {
		conn_close(p, c);
		return;
	}
	/* edge-triggered: each pump goes on until a socket or a pipe says EAGAIN, so the next
	 * edge on either fd resumes it; no epoll_ctl per chunk */
	struct px_handle *hs[2] = {&c->c, &c->u};
	for (int s = 0; s < 2 && !c->closed; s++)
		if (!c->hup[s])
			conn_set_mask(p, c, hs[s], EPOLLIN | EPOLLOUT | EPOLLET);
}

/* The peer of side s hung up both ways: EPOLLHUP would come on every wait, so take the fd out
 * of the set; its remaining bytes are read as the other side drains (pump_dir reads until EOF). */
static void relay_hup(struct proxy *p, struct px_conn *c, int s)
{
	struct px_handle *h = s == 0 ? &c->c : &c->u;
	if (!c->dir[!s].shut) { /* not after our own shutdown: a reset */
		conn_close(p, c);
		return;
	}
	if (!c->hup[s] && h->mask) {
		(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, h->fd, NULL);
		h->mask = 0;
	}
	c->hup[s] = true;
	c->dir[s].stalled = false;
}

static void connected(struct proxy *p, struct px_conn *c)
{
	struct sockaddr_storage *sa = &c->addrs[c->i_addr];
	const void *a = sa->ss_family == AF_INET ? (const void *)&((struct sockaddr_in *)sa)->sin_addr
						 : (const void *)&((struct sockaddr_in6 *)sa)->sin6_addr;
	px_addr_text(sa->ss_family, a, c->ev.addr, sizeof c->ev.addr);
	int one = 1;
	(void)setsockopt(c->u.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	/* what follows the request in the buffer goes on after our head */
	size_t head = c->have_req ? c->req.head_len : c->inlen;
	size_t rest = c->inlen > head ? c->inlen - head : 0;
	if (c->socks) {
		uint8_t r[10];
		size_t n = socks5_reply(0, r);
		queue_out(c, r, n);
	} else if (c->req.connect) {
		size_t n = 0;
		char *resp = http_response(200, NULL, &n);
		if (resp)
			queue_out(c, resp, n);
		free(resp);
	}
	size_t pre = !c->socks && !c->req.connect ? c->req.upstream_len : 0;
	c->up = xmalloc(pre + rest + 1);
	if (pre)
		memcpy(c->up, c->req.upstream, pre);
	if (rest)
		memcpy(c->up + pre, c->in + head, rest);
	c->uplen = pre + rest;
	conn_free_bufs(c);
	for (int i = 0; i < 2; i++) {
		if (pipe2(c->dir[i].pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
			(void)snprintf(c->ev.error, sizeof c->ev.error, "pipe: %s", strerror(errno));
			conn_close(p, c);
			return;
		}
		c->dir[i].cap = PX_PIPE_CAP;
	}
	c->dir[0].pre = c->up;
	c->dir[0].prelen = c->uplen;
	c->dir[1].pre = c->out;
	c->dir[1].prelen = c->outlen;
	c->dir[1].preoff = c->outoff;
	c->st = CS_RELAY;
	relay(p, c);
}

static void connect_done(struct proxy *p, struct px_conn *c);

static void connect_next(struct proxy *p, struct px_conn *c, const char *last_error)
{
	char error[128];
	set_text(error, sizeof error, last_error);
	while (c->i_addr < c->n_addrs) {
		struct sockaddr_storage *sa = &c->addrs[c->i_addr];
		int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			(void)snprintf(error, sizeof error, "socket: %s", strerror(errno));
			c->i_addr++;
			continue;
		}
		c->u.fd = fd;
		c->u.dead = false;
		c->u.mask = 0;
		if (connect(fd, (struct sockaddr *)sa, c->addrlens[c->i_addr]) == 0 ||
		    errno == EINPROGRESS) {
			c->st = CS_CONNECTING;
			c->timed_out = false;
			c->deadline = clock_mono_ms() + p->connect_ms;
			/* a near upstream (loopback) has often answered already: no loop round */
			struct pollfd pf = {.fd = fd, .events = POLLOUT};
			if (poll(&pf, 1, 0) == 1) {
				connect_done(p, c);
				return;
			}
			/* EPOLLOUT says the connect ended; the client is watched for errors only */
			conn_set_mask(p, c, &c->u, EPOLLOUT);
			return;
		}
		(void)snprintf(error, sizeof error, "connect: %s", strerror(errno));
		close_fd(&c->u.fd);
		c->i_addr++;
	}
	upstream_fail(p, c, c->timed_out, error[0] ? error : "no address to connect to");
}

static void connect_done(struct proxy *p, struct px_conn *c)
{
	int err = 0;
	socklen_t len = sizeof err;
	if (getsockopt(c->u.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == 0) {
		connected(p, c);
		return;
	}
	char error[128];
	(void)snprintf(error, sizeof error, "connect: %s", strerror(err));
	(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, c->u.fd, NULL);
	c->u.mask = 0;
	close_fd(&c->u.fd);
	c->i_addr++;
	connect_next(p, c, error);
}

/* Keep the addresses the rules allow for this decision; connect to the first. */
static void have_addresses(struct proxy *p, struct px_conn *c, const struct sockaddr_storage *in,
			   const socklen_t *lens, size_t n)
{
	char refused[160] = "";
	c->n_addrs = 0;
	for (size_t i = 0; i < n && c->n_addrs < PX_ADDRS_MAX; i++) {
		int fam = in[i].ss_family;
		const uint8_t *a = fam == AF_INET
			? (const uint8_t *)&((const struct sockaddr_in *)&in[i])->sin_addr
			: (const uint8_t *)&((const struct sockaddr_in6 *)&in[i])->sin6_addr;
		if (!netrules_addr_ok(p->rules, &c->d, fam, a)) {
			if (!refused[0]) {
				char t[INET6_ADDRSTRLEN];
				px_addr_text(fam, a, t, sizeof t);
				(void)snprintf(refused, sizeof refused, "%s (%s)", t,
					       netaddr_class_name(netaddr_classify(fam, a)));
			}
			continue;
		}
		c->addrs[c->n_addrs] = in[i];
		c->addrlens[c->n_addrs++] = lens[i];
	}
	if (!c->n_addrs && refused[0]) {
		char reason[sizeof c->ev.host * 2 + sizeof refused + 96];
		(void)snprintf(reason, sizeof reason,
			       "%s:%u resolves to %s, which is refused (add --map-host %s=ADDR to "
			       "allow that address)", c->ev.host, c->ev.port, refused, c->ev.host);
		p->st.allowed--; /* counted at the name check; the address check refused it */
		deny(p, c, 403, 2, reason);
		return;
	}
	c->i_addr = 0;
	connect_next(p, c, NULL);
}

static void fill_sa(struct sockaddr_storage *sa, socklen_t *len, int fam, const uint8_t *a,
		    uint16_t port)
{
	memset(sa, 0, sizeof *sa);
	if (fam == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)sa;
		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, a, 4);
		*len = sizeof *s;
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)sa;
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		memcpy(&s->sin6_addr, a, 16);
		*len = sizeof *s;
	}
}

static void resolved(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	(void)timeouts;
	struct px_conn *c = arg;
	struct proxy *p = c->p;
	c->resolving = false;
	if (c->closed || c->st != CS_RESOLVING) {
		if (c->closed)
			px_bury(p, &c->c);
		ares_freeaddrinfo(res);
		return;
	}
	if (status != ARES_SUCCESS || !res) {
		char error[128];
		(void)snprintf(error, sizeof error, "could not resolve: %s", ares_strerror(status));
		ares_freeaddrinfo(res);
		upstream_fail(p, c, status == ARES_ETIMEOUT, error);
		return;
	}
	struct sockaddr_storage sas[PX_ADDRS_MAX * 2];
	socklen_t lens[PX_ADDRS_MAX * 2];
	size_t n = 0;
	for (struct ares_addrinfo_node *nd = res->nodes; nd && n < PX_ADDRS_MAX * 2;
	     nd = nd->ai_next) {
		if (nd->ai_family == AF_INET)
			fill_sa(&sas[n], &lens[n],  AF_INET,
				(const uint8_t *)&((struct sockaddr_in *)nd->ai_addr)->sin_addr,
				c->ev.port);
		else if (nd->ai_family == AF_INET6)
			fill_sa(&sas[n], &lens[n], AF_INET6,
				(const uint8_t *)&((struct sockaddr_in6 *)nd->ai_addr)->sin6_addr,
				c->ev.port);
		else
			continue;
		n++;
	}
	ares_freeaddrinfo(res);
	have_addresses(p, c, sas, lens, n);
}

/* The request names host:port (as received). Check it, then find its addresses. */
static void decide(struct proxy *p, struct px_conn *c, const char *raw, uint16_t port)
{
	enum net_proto proto = c->socks ? NP_SOCKS : c->req.connect ? NP_CONNECT : NP_HTTP;
	char *host = NULL;
	struct err e = {0};
	if (net_host_normalize(raw, &host, &e) < 0) {
		px_event_init(&c->ev, proto, raw, port);
		char reason[sizeof c->ev.host + sizeof e.what + 32];
		(void)snprintf(reason, sizeof reason, "%s is not a valid host name: %s", c->ev.host,
			       e.what);
		deny(p, c, 400, 2, reason);
		return;
	}
	px_event_init(&c->ev, proto, host, port);
	enum net_verdict v = netrules_check(p->rules, host, port, &c->d);
	if (v != NV_ALLOW) {
		char *reason = net_deny_reason(&c->d, host, port);
		deny(p, c, 403, 2, reason ? reason : "not allowed");
		free(reason);
		free(host);
		return;
	}
	c->ev.allowed = true;
	c->have_ev = true;
	p->st.allowed++;
	if (c->d.mapped)
		set_text(c->ev.rule, sizeof c->ev.rule, c->d.mapped->spec);
	else if (c->d.rule)
		set_text(c->ev.rule, sizeof c->ev.rule, c->d.rule->spec);
	/* the client is watched for errors only until the tunnel is up */
	(void)px_ep_set(p, &c->c, 0);
	(void)ep_add_quiet(p, &c->c);
	c->deadline = clock_mono_ms() + p->connect_ms;
	struct sockaddr_storage sa;
	socklen_t len;
	uint8_t a[16];
	if (c->d.mapped) {
		fill_sa(&sa, &len, c->d.mapped->family, c->d.mapped->addr, port);
		free(host);
		have_addresses(p, c, &sa, &len, 1);
		return;
	}
	if (inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1) {
		fill_sa(&sa, &len, strchr(host, ':') ? AF_INET6 : AF_INET, a, port);
		free(host);
		have_addresses(p, c, &sa, &len, 1);
		return;
	}
	c->st = CS_RESOLVING;
	c->resolving = true;
	struct ares_addrinfo_hints hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	ares_getaddrinfo(p->ch, host, NULL, &hints, resolved, c);
	free(host);
}

/* Read into c->in (grown up to HTTP_HEAD_MAX). -1: closed or failed; 0: nothing more now. */
static int read_in(struct px_conn *c)
{
	for (;;) {
		if (c->inlen == c->incap) {
			if (c->incap >= HTTP_HEAD_MAX)
				return 0;
			c->incap = c->incap ? c->incap * 2 : 1024;
			if (c->incap > HTTP_HEAD_MAX)
				c->incap = HTTP_HEAD_MAX;
			c->in = xrealloc(c->in, c->incap);
		}
		ssize_t n = recv(c->c.fd, c->in + c->inlen, c->incap - c->inlen, 0);
		if (n > 0) {
			c->inlen += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return -1;
	}
}

static void head_socks(struct proxy *p, struct px_conn *c)
{
	if (!c->greeted) {
		size_t used = 0;
		bool noauth = false;
		int r = socks5_parse_greeting((const uint8_t *)c->in, c->inlen, &used, &noauth);
		if (r == SP_NEED_MORE)
			return;
		if (r != SP_OK || !noauth) {
			static const uint8_t no[2] = {5, 0xff};
			queue_out(c, no, 2);
			conn_free_bufs(c);
			c->st = CS_LINGER;
			linger_step(p, c);
			return;
		}
		static const uint8_t ok[2] = {5, 0};
		queue_out(c, ok, 2);
		memmove(c->in, c->in + used, c->inlen - used);
		c->inlen -= used;
		c->greeted = true;
	}
	struct socks5_req sr;
	memset(&sr, 0, sizeof sr);
	int r = socks5_parse_request((const uint8_t *)c->in, c->inlen, &sr);
	if (r == SP_NEED_MORE)
		return;
	if (r != SP_OK || sr.cmd != 1) {
		px_event_init(&c->ev, NP_SOCKS, sr.host, sr.port);
		deny(p, c, 400, r == SP_OK ? 7 : sr.bad_rep ? sr.bad_rep : 1,
		     r == SP_OK ? "SOCKS command not supported (CONNECT only)" : "bad SOCKS request");
		return;
	}
	/* what followed the request is the tunnel's first bytes */
	memmove(c->in, c->in + sr.used, c->inlen - sr.used);
	c->inlen -= sr.used;
	decide(p, c, sr.host, sr.port);
}

static void head_http(struct proxy *p, struct px_conn *c)
{
	int r = http_parse_request(c->in, c->inlen, &c->req);
	if (r == HP_NEED_MORE && c->inlen < HTTP_HEAD_MAX)
		return;
	if (r != HP_OK) {
		px_event_init(&c->ev, NP_HTTP, c->req.host, c->req.port);
		char reason[200];
		(void)snprintf(reason, sizeof reason, "bad request: %s",
			       c->req.error ? c->req.error : "request head too large");
		deny(p, c, r == HP_BAD ? 400 : 431, 1, reason);
		return;
	}
	c->have_req = true;
	decide(p, c, c->req.host, c->req.port);
}

static void client_head(struct proxy *p, struct px_conn *c)
{
	bool failed = false;
	if (!flush_out(c, &failed) && failed) {
		conn_close(p, c);
		return;
	}
	size_t before = c->inlen;
	int rr = read_in(c);
	if (c->inlen > before) {
		if (!c->socks && c->in[0] == 0x05)
			c->socks = true;
		if (c->socks)
			head_socks(p, c);
		else
			head_http(p, c);
		if (c->closed || c->st != CS_HEAD)
			return;
	}
	if (rr < 0) { /* gone before a whole request: nothing to log */
		conn_close(p, c);
		return;
	}
	conn_set_mask(p, c, &c->c, EPOLLIN | (c->outoff < c->outlen ? EPOLLOUT : 0));
}

static void accept_all(struct proxy *p, struct px_handle *l)
{
	for (int k = 0; k < 64; k++) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return; /* EAGAIN, or out of fds: the client waits in the backlog */
		if (p->n_conns >= PX_CONNS_MAX) {
			(void)close(fd);
			continue;
		}
		struct px_conn *c = xcalloc(1, sizeof *c);
		c->p = p;
		c->c = (struct px_handle){.kind = PK_CLIENT, .fd = fd};
		c->u = (struct px_handle){.kind = PK_UPSTREAM, .fd = -1};
		for (int i = 0; i < 2; i++)
			c->dir[i].pipe[0] = c->dir[i].pipe[1] = -1;
		c->t0 = clock_mono_ms();
		c->deadline = c->t0 + p->head_ms;
		c->next = p->conns;
		if (p->conns)
			p->conns->prev = c;
		p->conns = c;
		__atomic_add_fetch(&p->n_conns, 1, __ATOMIC_RELAXED);
		int one = 1;
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		conn_set_mask(p, c, &c->c, EPOLLIN);
	}
}

static void conn_event(struct proxy *p, struct px_conn *c, int side, uint32_t ev)
{
	switch (c->st) {
	case CS_HEAD:
		if (side == 0)
			client_head(p, c);
		return;
	case CS_RESOLVING:
		if (side == 0 && (ev & (EPOLLERR | EPOLLHUP)))
			conn_close(p, c);
		return;
	case CS_CONNECTING:
		if (side == 0 && (ev & (EPOLLERR | EPOLLHUP)))
			conn_close(p, c);
		else if (side == 1)
			connect_done(p, c);
		return;
	case CS_RELAY:
		if (ev & EPOLLERR) {
			/* a reset: what the peer sent before it is still read and passed on */
			int err = 0;
			socklen_t len = sizeof err;
			(void)getsockopt(side ? c->u.fd : c->c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
			(void)snprintf(c->ev.error, sizeof c->ev.error, "%s: %s",
				       side ? "upstream" : "client", strerror(err ? err : EIO));
			(void)pump_dir(c, side);
			conn_close(p, c);
			return;
		}
		if (ev & EPOLLHUP) {
			relay_hup(p, c, side);
			if (c->closed)
				return;
		}
		relay(p, c);
		return;
	case CS_LINGER:
		if (ev & EPOLLERR)
			conn_close(p, c);
		else
			linger_step(p, c);
		return;
	}
}

static void sweep(struct proxy *p, long long now)
{
	struct px_conn *next;
	for (struct px_conn *c = p->conns; c; c = next) {
		next = c->next;
		if (c->st == CS_RELAY || now < c->deadline)
			continue;
		switch (c->st) {
		case CS_HEAD:
		case CS_LINGER:
			conn_close(p, c); /* a slow client: no request, nothing to say */
			break;
		case CS_RESOLVING:
			c->st = CS_HEAD; /* the late callback sees it is no longer wanted */
			upstream_fail(p, c, true, "timeout resolving the name");
			break;
		case CS_CONNECTING:
			c->timed_out = true;
			(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, c->u.fd, NULL);
			c->u.mask = 0;
			close_fd(&c->u.fd);
			c->i_addr++;
			connect_next(p, c, "connect: timeout");
			break;
		case CS_RELAY:
			break;
		}
	}
	px_dns_sweep(p, now);
}

/* ---------------------------------------------------------------- c-ares */

static void ares_sock(void *data, ares_socket_t fd, int readable, int writable)
{
	struct proxy *p = data;
	struct px_ares **pp = &p->ares_fds;
	while (*pp && (*pp)->h.fd != fd)
		pp = &(*pp)->next;
	if (!readable && !writable) {
		if (*pp) {
			struct px_ares *a = *pp;
			*pp = a->next;
			if (a->h.mask)
				(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, fd, NULL);
			a->h.fd = -1; /* c-ares closes it */
			a->h.mask = 0;
			px_bury(p, &a->h);
		}
		return;
	}
	if (!*pp) {
		struct px_ares *a = xcalloc(1, sizeof *a);
		a->h = (struct px_handle){.kind = PK_ARES, .fd = fd};
		a->next = p->ares_fds;
		p->ares_fds = a;
		pp = &p->ares_fds;
	}
	(void)px_ep_set(p, &(*pp)->h, (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0));
}

static int ares_cloexec(ares_socket_t fd, int type, void *data)
{
	(void)type, (void)data;
	return fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ? -1 : 0;
}

static int ares_setup(struct proxy *p, struct err *e)
{
	int rc = ares_library_init(ARES_LIB_INIT_ALL);
	if (rc != ARES_SUCCESS)
		return err_set(e, 0, "", "proxy: cannot initialise c-ares: %s", ares_strerror(rc));
	struct ares_options o = {
		.sock_state_cb = ares_sock, .sock_state_cb_data = p, .timeout = 2000, .tries = 2,
	};
	rc = ares_init_options(&p->ch, &o,
			       ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES);
	if (rc != ARES_SUCCESS) {
		ares_library_cleanup();
		return err_set(e, 0, "/etc/resolv.conf", "proxy: cannot set up the resolver: %s",
			       ares_strerror(rc));
	}
	p->ares_ok = true;
	ares_set_socket_configure_callback(p->ch, ares_cloexec, NULL);
	if (test_resolver && ares_set_servers_ports_csv(p->ch, test_resolver) != ARES_SUCCESS)
		return err_set(e, 0, test_resolver, "proxy: bad resolver address");
	return 0;
}

/* ---------------------------------------------------------------- the loop */

static void *loop(void *arg)
{
	struct proxy *p = arg;
	struct epoll_event evs[256];
	long long next_sweep = clock_mono_ms() + PX_SWEEP_MS;
	bool stop = false;
	while (!stop) {
		long long now = clock_mono_ms();
		int timeout = next_sweep > now ? (int)(next_sweep - now) : 0;
		struct timeval max = {.tv_sec = 0, .tv_usec = timeout * 1000}, tv;
		struct timeval *t = ares_timeout(p->ch, &max, &tv);
		if (t)
			timeout = (int)(t->tv_sec * 1000 + (t->tv_usec + 999) / 1000);
		int n = epoll_wait(p->ep, evs, 256, timeout);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			struct px_handle *h = evs[i].data.ptr;
			uint32_t ev = evs[i].events;
			if (h->dead)
				continue;
			switch (h->kind) {
			case PK_STOP:
				stop = true;
				break;
			case PK_LISTEN:
				accept_all(p, h);
				break;
			case PK_DNS_UDP:
				px_dns_udp_ready(p);
				break;
			case PK_DNS_LISTEN:
				px_dns_accept(p);
				break;
			case PK_ARES:
				ares_process_fd(p->ch,
						ev & (EPOLLIN | EPOLLERR | EPOLLHUP) ? h->fd
										      : ARES_SOCKET_BAD,
						ev & EPOLLOUT ? h->fd : ARES_SOCKET_BAD);
				break;
			case PK_CLIENT:
				conn_event(p, container_of(h, struct px_conn, c), 0, ev);
				break;
			case PK_UPSTREAM:
				conn_event(p, container_of(h, struct px_conn, u), 1, ev);
				break;
			case PK_DNS_TCP:
				px_dns_tcp_event(p, (struct px_dns_tcp *)h, ev);
				break;
			}
		}
		ares_process_fd(p->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD); /* lookups' timeouts */
		now = clock_mono_ms();
		if (now >= next_sweep) {
			sweep(p, now);
			next_sweep = now + PX_SWEEP_MS;
		}
		for (size_t i = 0; i < p->n_grave; i++)
			free(p->graveyard[i]); /* every kind begins with its handle */
		p->n_grave = 0;
	}
	return NULL;
}

static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl); /* best effort: fewer tunnels otherwise */
	}
}

static void teardown(struct proxy *p)
{
	while (p->conns)
		conn_close(p, p->conns);
	px_dns_close_all(p);
	if (p->ares_ok) {
		ares_destroy(p->ch); /* calls back the lookups in flight: they bury their conns */
		ares_library_cleanup();
		p->ares_ok = false;
	}
	while (p->ares_fds) {
		struct px_ares *a = p->ares_fds;
		p->ares_fds = a->next;
		free(a);
	}
	for (size_t i = 0; i < p->n_grave; i++)
		free(p->graveyard[i]);
	free(p->graveyard);
	p->graveyard = NULL;
	p->n_grave = p->cap_grave = 0;
	struct px_handle *hs[] = {&p->listen_h[0], &p->listen_h[1], &p->udp_h, &p->dnsl_h,
				  &p->stop_h};
	for (size_t i = 0; i < sizeof hs / sizeof *hs; i++)
		close_fd(&hs[i]->fd);
	close_fd(&p->ep);
}

static int setup(struct proxy *p, struct err *e)
{
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	if (p->ep < 0)
		return err_set(e, errno, "", "proxy: cannot create an epoll instance");
	p->stop_h.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->stop_h.fd < 0)
		return err_set(e, errno, "", "proxy: cannot create its stop eventfd");
	struct px_handle *hs[] = {&p->stop_h, &p->listen_h[0], &p->listen_h[1], &p->udp_h,
				  &p->dnsl_h};
	for (size_t i = 0; i < sizeof hs / sizeof *hs; i++) {
		if (hs[i]->fd < 0)
			continue;
		int fl = fcntl(hs[i]->fd, F_GETFL);
		if (fl < 0 || fcntl(hs[i]->fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
		    px_ep_set(p, hs[i], EPOLLIN) < 0)
			return err_set(e, errno, "", "proxy: cannot watch listener fd %d",
				       hs[i]->fd);
	}
	if (ares_setup(p, e) < 0)
		return -1;
	if (px_events_start(&p->evq, p->evq.sink, p->evq.arg, e) < 0)
		return -1;
	int rc = pthread_create(&p->thr, NULL, loop, p);
	if (rc != 0) {
		px_events_stop(&p->evq);
		return err_set(e, rc, "", "proxy: cannot start its thread");
	}
	p->thr_started = true;
	return 0;
}

int proxy_start(const struct proxy_listeners *l, const struct netrules *rules,
		net_event_sink sink, void *arg, struct proxy **out, struct err *e)
{
	*out = NULL;
	raise_nofile();
	struct proxy *p = xcalloc(1, sizeof *p);
	p->rules = rules;
	p->head_ms = test_head_ms > 0 ? test_head_ms : PX_HEAD_MS;
	p->connect_ms = test_connect_ms > 0 ? test_connect_ms : PX_CONNECT_MS;
	p->listen_h[0] = (struct px_handle){.kind = PK_LISTEN, .fd = l->tcp4};
	p->listen_h[1] = (struct px_handle){.kind = PK_LISTEN, .fd = l->tcp6};
	p->udp_h = (struct px_handle){.kind = PK_DNS_UDP, .fd = l->dns_udp};
	p->dnsl_h = (struct px_handle){.kind = PK_DNS_LISTEN, .fd = l->dns_tcp};
	p->stop_h = (struct px_handle){.kind = PK_STOP, .fd = -1};
	p->evq.sink = sink;
	p->evq.arg = arg;
	if (setup(p, e) < 0) {
		teardown(p);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

void proxy_stop(struct proxy *p, struct proxy_stats *st)
{
	if (!p) {
		if (st)
			memset(st, 0, sizeof *st);
		return;
	}
	if (p->thr_started) {
		uint64_t one = 1;
		if (write(p->stop_h.fd, &one, sizeof one) != sizeof one)
			(void)0; /* cannot fail on a fresh eventfd; the join below would hang if so */
		(void)pthread_join(p->thr, NULL);
	}
	p->st.open_now = p->n_conns + p->n_dns_conns;
	teardown(p);
	px_events_stop(&p->evq);
	p->st.events_dropped = p->evq.dropped;
	if (st)
		*st = p->st;
	free(p);
}
