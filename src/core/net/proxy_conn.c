/* proxy_conn.c: the egress proxy's connections (doc/design.md §4). A connection reads its
 * request head (bounded by HTTP_HEAD_MAX and a deadline; the first byte picks SOCKS5 or HTTP),
 * is checked against the rules before any lookup, resolves through c-ares in the proxy's loop
 * (a mapping or an IP literal needs none), has each address checked again (netrules_addr_ok),
 * connects to exactly that address; a tunnel then holds the client's first bytes until they
 * are judged (firstbytes.c: the TLS server name, the HTTP Host), then relays with splice()
 * through one pipe per direction, half-closing each direction as its source ends. Each
 * connection ends as one net_event. A captured connection whose first bytes are judged comes
 * in as a connection approved already (px_conn_captured: capture.c made the decision and found
 * the addresses): it connects upstream, then goes the tunnel's way without a reply of ours. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "core/net/firstbytes.h"
#include "core/net/httpreq.h"
#include "core/net/proxy_internal.h"
#include "core/net/socks5.h"
#include "core/net/tlshello.h"
#include "core/plan/pubwire.h"
#include "util/clock.h"
#include "util/fdmsg.h"
#include "util/xalloc.h"

#define PX_ADDRS_MAX 8        /* addresses tried per request */
#define PX_PIPE_CAP 65536     /* bytes a relay pipe holds (Linux's default size) */
#define PX_PIPE_BIG (1 << 20) /* a busy direction's pipe (after PX_PIPE_GROW bytes) */
#define PX_PIPE_GROW (4 << 20)
#define PX_CONNS_MAX 8192     /* open proxy connections; more are closed at accept */
#define PX_LO_BUF (512 << 10) /* a loopback leg's socket buffers (the kernel doubles it) */

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

enum cstate { CS_HEAD, CS_RESOLVING, CS_CONNECTING, CS_RELAY, CS_LINGER,
	      CS_PUB_WAIT, /* --publish: init has been asked for a socket of the jail's */
	      CS_ASKING    /* --net ask: waiting for the person's answer (proxy_ask.c) */ };

/* One direction of the relay: src → pipe → dst, after `pre` (bytes of ours) is written. */
struct px_dir {
	int pipe[2];
	size_t inpipe;
	bool eof;       /* src said EOF */
	bool shut;      /* dst shut for writing */
	bool stalled;   /* the pipe took no more: wait for dst to drain it */
	bool readable;  /* src may have bytes: set by EPOLLIN, cleared by its EAGAIN */
	bool writable;  /* dst may take bytes: set by EPOLLOUT, cleared by its EAGAIN */
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
	enum fb_kind fb;          /* the check of a tunnel's first bytes from the client */
	bool held;                /* relaying, but the client's bytes are read into `in` until
				   * fb_judge decides (the upstream's flow meanwhile) */
	/* --publish: the client is the host's, the upstream a socket of the jail's loopback */
	const struct publish *pub; /* its entry, NULL for a connection of the jail's */
	bool pub_v6;               /* asked for ::1 (127.0.0.1 refused it) */
	bool pub_asked;            /* in p->pub->fifo at pub_seq */
	uint64_t pub_seq;
	struct px_wait w;          /* --net ask: while CS_ASKING */
	bool captured;            /* a captured connection (px_conn_captured), not a request */
	struct px_cap *waiter;    /* captured: the jail's connect waiting for the upstream */
	int up_err;               /* the last upstream connect's errno */
};

/* Registered with no events: EPOLLERR and EPOLLHUP still come. */
static int ep_quiet(struct proxy *p, struct px_handle *h)
{
	struct epoll_event ev = {.events = 0, .data.ptr = h};
	if (epoll_ctl(p->ep, h->mask ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, h->fd, &ev) < 0)
		return -1;
	h->mask = EPOLLERR; /* not 0: "registered" */
	return 0;
}

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

/* A captured connection's connect, waiting in the jail: the upstream is connected (0) or not. */
static void tell_waiter(struct proxy *p, struct px_conn *c, int err)
{
	struct px_cap *w = c->waiter;
	c->waiter = NULL;
	if (w)
		px_capture_upstream(p, w, err);
}

/* Deliver the event, close both sockets and the pipes; freed at the round's end (or, while a
 * lookup is in flight, when c-ares calls back). */
static void conn_close(struct proxy *p, struct px_conn *c)
{
	if (c->closed)
		return;
	c->closed = true;
	tell_waiter(p, c, ECONNABORTED);
	if (c->pub_asked) /* init's answer, when it comes, finds no one */
		p->pub->fifo[c->pub_seq % PX_PUB_INFLIGHT] = NULL;
	px_ask_leave(p, &c->w);
	if (c->pub) { /* the event counts bytes from the jail's side: the upstream is the jail */
		uint64_t up = c->ev.bytes_up;
		c->ev.bytes_up = c->ev.bytes_down;
		c->ev.bytes_down = up;
	}
	if (c->have_ev) {
		c->ev.dur_ms = clock_mono_ms() - c->t0;
		px_events_push(&p->evq, &c->ev);
		c->have_ev = false;
	}
	for (int i = 0; i < 2; i++) {
		px_close_fd(&c->dir[i].pipe[0]);
		px_close_fd(&c->dir[i].pipe[1]);
	}
	c->u.dead = true;
	px_close_fd(&c->u.fd);
	c->c.dead = true;
	px_close_fd(&c->c.fd);
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
	int r = px_send(c->c.fd, c->out, c->outlen, &c->outoff);
	*failed = r < 0;
	return r > 0;
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
	size_t n = sizeof buf;
	while (n == sizeof buf) { /* read and drop what the client still sends */
		n = 0;
		if (px_recv(c->c.fd, buf, sizeof buf, &n) < 0) {
			conn_close(p, c);
			return;
		}
	}
	conn_set_mask(p, c, &c->c, EPOLLIN);
}

/* Close the upstream, queue what the client is to be told last, and linger. */
static void conn_end_with(struct proxy *p, struct px_conn *c, const void *last, size_t n)
{
	if (c->u.fd >= 0) {
		c->u.dead = true;
		px_close_fd(&c->u.fd);
		c->u.mask = 0;
	}
	if (n)
		queue_out(c, last, n);
	conn_free_bufs(c);
	c->st = CS_LINGER;
	c->deadline = clock_mono_ms() + p->head_ms;
	linger_step(p, c);
}

/* Refuse or fail the request: the reply in the client's protocol, then a lingering close. */
static void conn_fail(struct proxy *p, struct px_conn *c, int http_code, uint8_t socks_rep,
		      const char *reason)
{
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
	conn_end_with(p, c, NULL, 0);
}

static void deny(struct proxy *p, struct px_conn *c, int http_code, uint8_t socks_rep,
		 const char *reason)
{
	c->ev.allowed = false;
	px_set_text(c->ev.rule, sizeof c->ev.rule, reason);
	c->have_ev = true;
	p->st.denied++;
	conn_fail(p, c, http_code, socks_rep, reason);
}

/* An allowed request whose upstream failed: 502 (refused, unreachable, no address) or 504. */
static void upstream_fail(struct proxy *p, struct px_conn *c, bool timeout, const char *error)
{
	px_set_text(c->ev.error, sizeof c->ev.error, error);
	c->ev.failed = true;
	if (c->captured) {
		/* a connect still waiting gets the upstream's error; one answered already (a
		 * non-blocking client) sees its connection reset */
		if (c->waiter) {
			tell_waiter(p, c, c->up_err ? c->up_err : timeout ? ETIMEDOUT : EHOSTUNREACH);
		} else {
			struct linger lg = {.l_onoff = 1, .l_linger = 0};
			(void)setsockopt(c->c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
		}
		conn_close(p, c);
		return;
	}
	char reason[512];
	(void)snprintf(reason, sizeof reason, "%s:%u: %s", c->ev.host, c->ev.port, error);
	uint8_t rep = !timeout && strstr(error, "refused") ? 5 : 4;
	conn_fail(p, c, timeout ? 504 : 502, rep, reason);
}

/* Read into c->in (grown up to max; not allocated while nothing has come: a thousand idle
 * tunnels hold no buffers). -1: closed or failed; 0: nothing more now. */
static int read_in(struct px_conn *c, size_t max)
{
	if (!c->in) {
		char first[1024];
		size_t n = 0;
		int r = px_recv(c->c.fd, first, sizeof first, &n);
		if (n) {
			c->incap = n < sizeof first ? sizeof first : 2 * sizeof first;
			c->in = xmalloc(c->incap);
			memcpy(c->in, first, n);
			c->inlen = n;
		}
		if (r < 0 || n < sizeof first)
			return r;
	}
	for (;;) {
		if (c->inlen == c->incap) {
			if (c->incap >= max)
				return 0;
			c->incap = c->incap ? c->incap * 2 : 1024;
			if (c->incap > max)
				c->incap = max;
			c->in = xrealloc(c->in, c->incap);
		}
		if (px_recv(c->c.fd, c->in, c->incap, &c->inlen) < 0)
			return -1;
		if (c->inlen < c->incap)
			return 0; /* the socket is empty */
	}
}

/* ---------------------------------------------------------------- a tunnel's first bytes */

enum fb_kind px_fb_kind(const struct proxy *p, const char *host, uint16_t port)
{
	if (px_test_tls_port && port == px_test_tls_port)
		return FB_TLS;
	if (px_test_http_port && port == px_test_http_port)
		return FB_HTTP;
	return fb_kind_for(p->rules, host, port);
}

/* They were refused: the reason in the event (it names both names), a TLS alert or a 403 to
 * the client after what it was already owed (the 200, the SOCKS reply), nothing upstream. */
static void refuse_held(struct proxy *p, struct px_conn *c, const struct fb_result *r)
{
	c->ev.allowed = false;
	px_set_text(c->ev.rule, sizeof c->ev.rule, r->reason);
	p->st.allowed--; /* counted when the name was allowed */
	p->st.denied++;
	c->held = false;
	c->outoff = c->dir[1].preoff; /* the upstream's bytes in the pipe are dropped */
	size_t n = 0;
	char *resp = r->http ? http_response(403, r->reason, &n) : NULL;
	if (r->tls)
		conn_end_with(p, c, fb_tls_alert, sizeof fb_tls_alert);
	else
		conn_end_with(p, c, resp, resp ? n : 0);
	free(resp);
}

/* doc/design.md §4d: an inspected tunnel goes to agentjail-tls, with what the client sent and
 * what it is still owed; the event becomes agentjail-tls's. One that cannot be handed over is
 * refused: never relayed unread. */
static void hand_over(struct proxy *p, struct px_conn *c, const struct fb_result *judged)
{
	struct px_dir *back = &c->dir[1];
	struct im_tunnel t = {.id = ++p->inspect_ids, .port = c->ev.port, .at_ms = c->ev.at_ms,
			      .t0_mono_ms = c->t0, .proto = c->ev.proto, .tls = judged->tls,
			      .held = (const uint8_t *)c->in, .held_len = c->inlen,
			      .to_client = (const uint8_t *)back->pre + back->preoff,
			      .to_client_len = back->prelen - back->preoff};
	px_set_text(t.host, sizeof t.host, c->ev.host);
	px_set_text(t.rule, sizeof t.rule, c->ev.rule);
	px_set_text(t.addr, sizeof t.addr, c->ev.addr);
	if (!back->inpipe && px_inspect_send(p, &t, c->c.fd, c->u.fd) == 0) {
		/* out of the epoll set by hand: the sockets live on in agentjail-tls, so closing
		 * our fds would leave them registered, with events for a freed connection */
		struct px_handle *hs[2] = {&c->c, &c->u};
		for (int i = 0; i < 2; i++) {
			(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, hs[i]->fd, NULL);
			hs[i]->mask = 0;
		}
		c->have_ev = false;
		conn_close(p, c);
		return;
	}
	struct fb_result r = *judged;
	r.state = FB_REFUSE;
	(void)snprintf(r.reason, sizeof r.reason,
		       "%s:%u is inspected, and the TLS inspector (agentjail-tls) %s: refused rather "
		       "than passed unread", c->ev.host, c->ev.port,
		       back->inpipe ? "cannot take a tunnel whose server spoke first"
				    : "is not running or not keeping up");
	refuse_held(p, c, &r);
}

/* Read what the client sent and judge it (final after the wait's deadline). 1: still held;
 * 0: passed, the bytes read go upstream first; -1: refused or handed over (c lingers or is
 * closed). */
static int held_step(struct proxy *p, struct px_conn *c, bool timed_out)
{
	int rr = timed_out ? 0 : read_in(c, TLS_HELLO_READ_MAX);
	struct fb_result r;
	fb_judge(p->rules, &c->d, c->ev.host, c->ev.port, c->fb, (const uint8_t *)c->in,
		 c->inlen, timed_out || rr < 0, &r);
	if (r.state == FB_REFUSE) {
		refuse_held(p, c, &r);
		return -1;
	}
	if (r.state == FB_WAIT) {
		if (c->inlen && c->deadline == LLONG_MAX) /* bytes came: the wait is bounded now */
			c->deadline = clock_mono_ms() + p->head_ms;
		return 1;
	}
	c->held = false;
	if (px_inspect_wanted(p, c->ev.host, r.tls, r.http)) {
		hand_over(p, c, &r);
		return -1;
	}
	free(c->up);
	c->up = c->in;
	c->uplen = c->inlen;
	c->in = NULL;
	c->inlen = c->incap = 0;
	c->dir[0].pre = c->up;
	c->dir[0].prelen = c->uplen;
	c->dir[0].preoff = 0;
	if (rr < 0)
		c->dir[0].eof = true;
	return 0;
}

/* ---------------------------------------------------------------- relay */

/* Move what can move in one direction, making only the calls that can succeed: a socket is
 * read after an edge said it has bytes and until it says EAGAIN, written until it is full.
 * -1 on a socket error (the connection is reset). */
static int pump_dir(struct px_conn *c, int i)
{
	struct px_dir *d = &c->dir[i];
	int src = i == 0 ? c->c.fd : c->u.fd, dst = i == 0 ? c->u.fd : c->c.fd;
	uint64_t *bytes = i == 0 ? &c->ev.bytes_up : &c->ev.bytes_down;
	for (;;) {
		if (d->preoff < d->prelen && d->writable) {
			size_t was = d->preoff;
			int r = px_send(dst, d->pre, d->prelen, &d->preoff);
			if (i == 0)
				*bytes += d->preoff - was;
			if (r < 0)
				return -1;
			d->writable = r > 0;
		}
		while (d->inpipe > 0 && d->writable && d->preoff == d->prelen) {
			ssize_t n = splice(d->pipe[0], NULL, dst, NULL, d->inpipe,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0) {
				d->inpipe -= (size_t)n;
				*bytes += (uint64_t)n;
				d->stalled = false;
			} else if (n < 0 && errno == EINTR) {
				continue;
			} else if (n < 0 && errno == EAGAIN) {
				d->writable = false;
			} else {
				return -1;
			}
		}
		if (d->eof || d->stalled || !d->readable || d->inpipe >= d->cap)
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
		else
			d->readable = false;
		break;
	}
	if (d->eof && d->inpipe == 0 && d->preoff == d->prelen && !d->shut) {
		(void)shutdown(dst, SHUT_WR);
		d->shut = true;
	}
	return 0;
}

/* The events side s (0 the client, 1 the upstream) must wake the loop for: EPOLLIN when the
 * direction it feeds wants bytes and last found none, EPOLLOUT when the direction it drains
 * has bytes and last found it full. Edge-triggered: an edge comes with each arrival, so
 * nothing is lost between calls; and a change of mask reports what is ready already. */
static uint32_t want_events(const struct px_conn *c, int s)
{
	const struct px_dir *in = &c->dir[s], *out = &c->dir[!s];
	uint32_t m = EPOLLET;
	if ((s == 0 && c->held) ||
	    (!in->eof && !in->readable && !in->stalled && in->inpipe < in->cap))
		m |= EPOLLIN;
	if (!out->writable && (out->inpipe > 0 || out->preoff < out->prelen))
		m |= EPOLLOUT;
	return m;
}

static void relay(struct proxy *p, struct px_conn *c)
{
	if (c->held && held_step(p, c, false) < 0)
		return;
	for (int i = 1; i >= 0; i -= c->held ? 2 : 1) /* toward the client first: an upstream's
							 * last words; nothing from a held client */
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
	if (c->up && c->dir[0].preoff == c->dir[0].prelen) { /* what went first has gone */
		free(c->up);
		c->up = NULL;
		c->dir[0].pre = NULL;
		c->dir[0].prelen = c->dir[0].preoff = 0;
	}
	/* a bulk stream keeps its masks: no epoll_ctl per chunk, and no wake-up for a side with
	 * nothing to do (an upstream's write space while the pipe is empty) */
	struct px_handle *hs[2] = {&c->c, &c->u};
	for (int s = 0; s < 2 && !c->closed; s++)
		if (!c->hup[s])
			conn_set_mask(p, c, hs[s], want_events(c, s));
}

/* What an event says about side s: bytes to read from it, room to write to it. */
static void relay_ready(struct px_conn *c, int s, uint32_t ev)
{
	if (ev & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR))
		c->dir[s].readable = true;
	if (ev & (EPOLLOUT | EPOLLHUP))
		c->dir[!s].writable = true;
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
	c->dir[s].readable = true; /* to its EOF */
}

static bool on_loopback(const struct sockaddr_storage *sa)
{
	if (sa->ss_family == AF_INET)
		return netaddr_on_loopback(
			AF_INET, (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr);
	return sa->ss_family == AF_INET6 &&
	       netaddr_on_loopback(AF_INET6, ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
}

/* A leg of the relay whose peer is on this host's loopback (the jail's side: its loopback,
 * or the capture's on the host's; the upstream too when it is a server of the host's, a
 * mapped name or a --publish's jail): fixed socket buffers of PX_LO_BUF and no pacing.
 * Autotuned, a loopback leg's windows grew to 16-22 MiB when the reader beyond it is slower
 * than the writer before it (a download to a client that copies: the upstream's receive
 * queue held 12-22 MiB, the client's 2-16), so each byte sat tens of MiB behind the source's
 * copy and was out of the CPU caches when the client copied it: the client's and source's
 * CPU per MiB were 1.4-1.7 times the direct download's. A loopback path has no bandwidth-delay
 * product to fill: 1 MiB per socket keeps the splices large. BBR (where it is the host's
 * default) paces a socket's sends from a timer; a path nothing congests needs none: Reno,
 * always allowed, paces nothing. A remote server's leg keeps the kernel's autotuning and
 * congestion control (its window is its throughput). doc/design.md §7. Best effort: the
 * kernel caps the sizes at net.core.[wr]mem_max, and a refusal leaves a setting as it was. */
static void tune_loopback(int fd)
{
	static const char reno[] = "reno";
	int sz = PX_LO_BUF;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, reno, sizeof reno - 1);
}

/* Both legs of a connection about to relay: tune_loopback where the peer is ours. The
 * upstream's peer is the address connected to (a --publish's is the jail's loopback). */
static void tune_legs(struct px_conn *c)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	if (getpeername(c->c.fd, (struct sockaddr *)&sa, &len) == 0 && on_loopback(&sa))
		tune_loopback(c->c.fd);
	if (c->pub || on_loopback(&c->addrs[c->i_addr]))
		tune_loopback(c->u.fd);
}

static void connected(struct proxy *p, struct px_conn *c)
{
	if (!c->pub) { /* a published port's event keeps the host's client as its address */
		struct sockaddr_storage *sa = &c->addrs[c->i_addr];
		const void *a = sa->ss_family == AF_INET
			? (const void *)&((struct sockaddr_in *)sa)->sin_addr
			: (const void *)&((struct sockaddr_in6 *)sa)->sin6_addr;
		px_addr_text(sa->ss_family, a, c->ev.addr, sizeof c->ev.addr);
	}
	int one = 1;
	(void)setsockopt(c->u.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	tune_legs(c);
	/* what follows the request in the buffer goes on after our head (SOCKS: the buffer holds
	 * only what followed the request) */
	size_t head = c->have_req ? c->req.head_len : 0;
	size_t rest = c->inlen > head ? c->inlen - head : 0;
	bool tunnel = !c->pub && (c->socks || c->req.connect || c->captured);
	if (c->pub) {
		/* the host's client speaks to the jail's server: nothing of ours in between */
	} else if (c->socks) {
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
	if (tunnel) {
		/* nothing the client sends goes upstream before fb_judge has passed it */
		c->fb = px_fb_kind(p, c->ev.host, c->ev.port);
		c->held = true;
		c->deadline = c->fb == FB_SNIFF ? LLONG_MAX : clock_mono_ms() + p->head_ms;
		if (rest) {
			memmove(c->in, c->in + head, rest);
			c->inlen = rest;
			if (c->have_req) {
				http_req_free(&c->req);
				c->have_req = false;
			}
		} else {
			conn_free_bufs(c); /* most clients wait for the answer: no buffer until
					    * they send */
		}
	} else if (!c->pub) {
		size_t pre = c->req.upstream_len;
		c->up = xmalloc(pre + rest + 1);
		memcpy(c->up, c->req.upstream, pre);
		if (rest)
			memcpy(c->up + pre, c->in + head, rest);
		c->uplen = pre + rest;
		conn_free_bufs(c);
	}
	for (int i = 0; i < 2; i++) {
		if (pipe2(c->dir[i].pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
			(void)snprintf(c->ev.error, sizeof c->ev.error, "pipe: %s", strerror(errno));
			conn_close(p, c);
			return;
		}
		c->dir[i].cap = PX_PIPE_CAP;
		c->dir[i].writable = true; /* just connected (or accepted): room to write */
		c->dir[i].readable = true; /* unknown until the first EAGAIN */
	}
	c->dir[0].pre = c->up;
	c->dir[0].prelen = c->uplen;
	c->dir[1].pre = c->out;
	c->dir[1].prelen = c->outlen;
	c->dir[1].preoff = c->outoff;
	c->st = CS_RELAY;
	relay(p, c);
	if (!c->closed)
		tell_waiter(p, c, 0); /* the jail's connect returns 0 */
}

static void connect_done(struct proxy *p, struct px_conn *c);
static void pub_retry(struct proxy *p, struct px_conn *c, int err, const char *error);

static void connect_next(struct proxy *p, struct px_conn *c, const char *last_error)
{
	char error[128];
	px_set_text(error, sizeof error, last_error);
	while (c->i_addr < c->n_addrs) {
		struct sockaddr_storage *sa = &c->addrs[c->i_addr];
		int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			c->up_err = errno;
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
		c->up_err = errno;
		(void)snprintf(error, sizeof error, "connect: %s", strerror(errno));
		px_close_fd(&c->u.fd);
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
	c->up_err = err;
	(void)snprintf(error, sizeof error, "connect: %s", strerror(err));
	(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, c->u.fd, NULL);
	c->u.mask = 0;
	px_close_fd(&c->u.fd);
	if (c->pub) {
		pub_retry(p, c, err, error);
		return;
	}
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
			if (!refused[0])
				px_addr_class_text(fam, a, refused, sizeof refused);
			continue;
		}
		c->addrs[c->n_addrs] = in[i];
		c->addrlens[c->n_addrs++] = lens[i];
	}
	if (!c->n_addrs && refused[0]) {
		char reason[PX_REASON_MAX];
		px_addr_refused(c->ev.host, c->ev.port, refused, reason, sizeof reason);
		p->st.allowed--; /* counted at the name check; the address check refused it */
		deny(p, c, 403, 2, reason);
		return;
	}
	c->i_addr = 0;
	connect_next(p, c, NULL);
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
			lens[n] = px_fill_sa(&sas[n], AF_INET,
				(const uint8_t *)&((struct sockaddr_in *)nd->ai_addr)->sin_addr,
				c->ev.port);
		else if (nd->ai_family == AF_INET6)
			lens[n] = px_fill_sa(&sas[n], AF_INET6,
				(const uint8_t *)&((struct sockaddr_in6 *)nd->ai_addr)->sin6_addr,
				c->ev.port);
		else
			continue;
		n++;
	}
	ares_freeaddrinfo(res);
	have_addresses(p, c, sas, lens, n);
}

static void proceed(struct proxy *p, struct px_conn *c, char *host, uint16_t port,
		    const char *asked);

/* --net ask: the person answered (or did not in time). */
static void conn_answered(struct proxy *p, struct px_wait *w, const struct net_decision *d,
			  char *reason)
{
	struct px_conn *c = container_of(w, struct px_conn, w);
	if (!d) {
		deny(p, c, 403, 2, reason);
	} else { /* the answer's entry decides; a mapping of the name still holds */
		c->d.v = d->v;
		c->d.rule = d->rule;
		proceed(p, c, xstrdup(c->ev.host), c->ev.port, reason);
	}
	free(reason);
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
	/* an address the DNS stub gave out stands for its name (a client that resolved the name
	 * itself, as SOCKS5 without remote resolution does) */
	uint8_t sa6[16];
	int sfam = inet_pton(AF_INET, host, sa6) == 1 ? AF_INET
		   : inet_pton(AF_INET6, host, sa6) == 1 ? AF_INET6 : 0;
	bool synth = false;
	const char *name = sfam ? px_synth_name(p, sfam, sa6, &synth) : NULL;
	if (synth) {
		px_event_init(&c->ev, proto, name ? name : host, port);
		if (!name) {
			char reason[sizeof c->ev.host + 96];
			(void)snprintf(reason, sizeof reason, "%s is not an address the jail's DNS stub "
				       "gave out", c->ev.host);
			free(host);
			deny(p, c, 403, 2, reason);
			return;
		}
		free(host);
		host = xstrdup(name);
	}
	px_event_init(&c->ev, proto, host, port);
	enum net_verdict v = netrules_check(p->rules, host, port, &c->d);
	if (v == NV_NOT_ALLOWED || v == NV_BAD_PORT) { /* --net ask: the person may allow it */
		char *why = NULL;
		c->w.done = conn_answered;
		int r = px_ask(p, host, port, proto, &c->d, &c->w, &why);
		if (r == 0) { /* held, watched for errors only, until the answer */
			c->st = CS_ASKING;
			c->deadline = LLONG_MAX;
			(void)ep_quiet(p, &c->c);
			free(host);
			return;
		}
		if (r > 0)
			v = NV_ALLOW;
		if (why) {
			deny(p, c, 403, 2, why);
			free(why);
			free(host);
			return;
		}
	}
	if (v != NV_ALLOW) {
		char *reason = net_deny_reason(&c->d, host, port);
		deny(p, c, 403, 2, reason ? reason : "not allowed");
		free(reason);
		free(host);
		return;
	}
	proceed(p, c, host, port, NULL);
}

/* host:port is allowed (c->d: why; asked: the answer's words when it was asked): check what
 * the request says besides, then find its addresses. Takes host. */
static void proceed(struct proxy *p, struct px_conn *c, char *host, uint16_t port,
		    const char *asked)
{
	enum net_proto proto = c->ev.proto;
	/* plain HTTP: a Host naming another host than the URI is refused, not rewritten */
	enum net_name_match m = NM_SAME;
	if (proto == NP_HTTP && c->req.host_header[0])
		m = netrules_name_check(p->rules, &c->d, host, port, c->req.host_header, NULL);
	if (!net_name_ok(m)) {
		char *reason = net_name_reason(m, "HTTP Host", host, port, c->req.host_header);
		deny(p, c, 403, 2, reason);
		free(reason);
		free(host);
		return;
	}
	/* plain HTTP to an inspected host: its request rules, and no placeholder in clear */
	char why[sizeof c->ev.rule];
	if (proto == NP_HTTP &&
	    px_inspect_plain(p, host, port, c->in, c->inlen, &c->req, why, sizeof why) < 0) {
		deny(p, c, 403, 2, why);
		free(host);
		return;
	}
	c->ev.allowed = true;
	c->have_ev = true;
	p->st.allowed++;
	if (asked)
		px_set_text(c->ev.rule, sizeof c->ev.rule, asked);
	else if (c->d.mapped)
		px_set_text(c->ev.rule, sizeof c->ev.rule, c->d.mapped->spec);
	else if (c->d.rule)
		px_set_text(c->ev.rule, sizeof c->ev.rule, c->d.rule->spec);
	/* the client is watched for errors only until the tunnel is up */
	(void)ep_quiet(p, &c->c);
	c->deadline = clock_mono_ms() + p->connect_ms;
	struct sockaddr_storage sa;
	socklen_t len;
	uint8_t a[16];
	if (c->d.mapped) {
		len = px_fill_sa(&sa, c->d.mapped->family, c->d.mapped->addr, port);
		free(host);
		have_addresses(p, c, &sa, &len, 1);
		return;
	}
	if (inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1) {
		len = px_fill_sa(&sa, strchr(host, ':') ? AF_INET6 : AF_INET, a, port);
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
	int rr = read_in(c, HTTP_HEAD_MAX);
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

/* A connection for the client socket fd, in the list. */
static struct px_conn *conn_new(struct proxy *p, int fd)
{
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
	return c;
}

struct px_conn *px_conn_captured(struct proxy *p, int fd, const struct net_decision *d,
				 const struct net_event *ev, const struct sockaddr_storage *addrs,
				 size_t n)
{
	struct px_conn *c = conn_new(p, fd);
	c->captured = true;
	c->d = *d;
	c->ev = *ev;
	c->have_ev = true;
	for (size_t i = 0; i < n && c->n_addrs < PX_ADDRS_MAX; i++) {
		c->addrs[c->n_addrs] = addrs[i];
		c->addrlens[c->n_addrs++] = addrs[i].ss_family == AF_INET
						    ? sizeof(struct sockaddr_in)
						    : sizeof(struct sockaddr_in6);
	}
	return c;
}

void px_conn_start(struct proxy *p, struct px_conn *c, struct px_cap *waiter)
{
	c->waiter = waiter;
	/* the client is watched for errors only until the upstream is up */
	if (ep_quiet(p, &c->c) < 0) {
		(void)snprintf(c->ev.error, sizeof c->ev.error, "epoll: %s", strerror(errno));
		conn_close(p, c);
		return;
	}
	c->i_addr = 0;
	connect_next(p, c, NULL);
}

void px_conn_abandon(struct proxy *p, struct px_conn *c)
{
	c->waiter = NULL;
	c->have_ev = false;
	conn_close(p, c);
}

/* Every listener of the proxy's (its own and the published ports'): on (EPOLLIN) or resting. */
static void listeners_set(struct proxy *p, uint32_t mask)
{
	for (int i = 0; i < 2; i++)
		(void)px_ep_set(p, &p->listen_h[i], mask);
	for (size_t i = 0; p->pub && i < p->pub->n; i++)
		(void)px_ep_set(p, &p->pub->l[i].h, mask);
}

/* accept4 failed: out of fds (or memory), the client waits in the backlog, and a
 * level-triggered listener would spin until an fd is free, so they rest a moment (sweep wakes
 * them). true when that was the failure. */
static bool accept_starved(struct proxy *p)
{
	if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM)
		return false;
	listeners_set(p, 0);
	p->accept_paused_until = clock_mono_ms() + 2 * PX_SWEEP_MS;
	return true;
}

/* The next client of listener fd, as a new connection (conn_new), or NULL when there is none
 * now. peer: its address, when not NULL. */
static struct px_conn *conn_accept(struct proxy *p, int lfd, struct sockaddr_storage *peer)
{
	for (;;) {
		socklen_t plen = sizeof *peer;
		int fd = accept4(lfd, (struct sockaddr *)peer, peer ? &plen : NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			(void)accept_starved(p);
			return NULL; /* EAGAIN, or the client gave up */
		}
		if (p->n_conns >= PX_CONNS_MAX) {
			(void)close(fd);
			continue;
		}
		return conn_new(p, fd);
	}
}

void px_accept(struct proxy *p, struct px_handle *l)
{
	struct px_conn *c;
	for (int k = 0; k < 64 && (c = conn_accept(p, l->fd, NULL)); k++) {
		/* a client often sends its request right behind the handshake: read it now rather
		 * than a loop round later (registers for EPOLLIN when there is nothing yet) */
		client_head(p, c);
	}
}

void px_conn_event(struct proxy *p, struct px_handle *h, uint32_t ev)
{
	int side = h->kind == PK_UPSTREAM;
	struct px_conn *c = side ? container_of(h, struct px_conn, u) : container_of(h, struct px_conn, c);
	switch (c->st) {
	case CS_HEAD:
		if (side == 0)
			client_head(p, c);
		return;
	case CS_RESOLVING:
	case CS_PUB_WAIT:
	case CS_ASKING:
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
		relay_ready(c, side, ev);
		if (ev & EPOLLERR) {
			/* a reset: what the peer sent before it is still read and passed on */
			int err = 0;
			socklen_t len = sizeof err;
			(void)getsockopt(side ? c->u.fd : c->c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
			(void)snprintf(c->ev.error, sizeof c->ev.error, "%s: %s",
				       side ? "upstream" : "client", strerror(err ? err : EIO));
			if (!(side == 0 && c->held))
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

void px_sweep(struct proxy *p, long long now)
{
	struct px_conn *next;
	for (struct px_conn *c = p->conns; c; c = next) {
		next = c->next;
		if ((c->st == CS_RELAY && !c->held) || now < c->deadline)
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
		case CS_PUB_WAIT:
			pub_retry(p, c, ETIMEDOUT, "the jail's init did not answer in time");
			break;
		case CS_ASKING: /* no deadline of its own: its question has one */
			break;
		case CS_CONNECTING:
			c->timed_out = true;
			c->up_err = ETIMEDOUT;
			(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, c->u.fd, NULL);
			c->u.mask = 0;
			px_close_fd(&c->u.fd);
			if (c->pub) {
				pub_retry(p, c, ETIMEDOUT, "connect: timeout");
				break;
			}
			c->i_addr++;
			connect_next(p, c, "connect: timeout");
			break;
		case CS_RELAY: /* held: its first bytes did not come whole in time */
			if (held_step(p, c, true) == 0)
				relay(p, c);
			break;
		}
	}
	px_dns_sweep(p, now);
	if (p->accept_paused_until && now >= p->accept_paused_until) {
		p->accept_paused_until = 0;
		listeners_set(p, EPOLLIN);
	}
}

void px_close_all(struct proxy *p)
{
	while (p->conns)
		conn_close(p, p->conns);
}

/* ---------------------------------------------------------------- --publish */

/* The host's client is turned away as a refused connect would be: a reset, the event failed. */
static void pub_fail(struct proxy *p, struct px_conn *c, const char *error)
{
	c->ev.failed = true;
	px_set_text(c->ev.error, sizeof c->ev.error, error);
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	(void)setsockopt(c->c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	conn_close(p, c);
}

/* Ask init for a socket connecting to the jail's port (::1 when v6). */
static void pub_ask(struct proxy *p, struct px_conn *c, bool v6)
{
	struct px_pub *pb = p->pub;
	struct pubwire_msg m = {.type = PUB_CONNECT, .value = c->pub->port | (v6 ? PUB_V6 : 0)};
	if (pb->tail - pb->head >= PX_PUB_INFLIGHT) {
		pub_fail(p, c, "too many connections waiting for the jail");
		return;
	}
	if (pb->chan.fd < 0 || fdmsg_send(pb->chan.fd, &m, sizeof m, NULL, 0, MSG_DONTWAIT) < 0) {
		pub_fail(p, c, "the jail's init does not answer (the jail has ended)");
		return;
	}
	c->pub_v6 = v6;
	c->pub_asked = true;
	c->pub_seq = pb->tail++;
	pb->fifo[c->pub_seq % PX_PUB_INFLIGHT] = c;
	c->st = CS_PUB_WAIT;
	c->deadline = clock_mono_ms() + p->connect_ms;
}

/* The jail's side failed: nothing listens on 127.0.0.1:PORT there, perhaps on ::1 (a server
 * bound to ::1 only); else the host's client is refused. */
static void pub_retry(struct proxy *p, struct px_conn *c, int err, const char *error)
{
	if (c->st == CS_PUB_WAIT && c->pub_asked) { /* init is late: its answer finds no one */
		p->pub->fifo[c->pub_seq % PX_PUB_INFLIGHT] = NULL;
		c->pub_asked = false;
	}
	if (err == ECONNREFUSED && !c->pub_v6) {
		pub_ask(p, c, true);
		return;
	}
	char msg[sizeof c->ev.error];
	(void)snprintf(msg, sizeof msg, "%s%s", error,
		       err == ECONNREFUSED ? " (nothing listens on that port in the jail)" : "");
	pub_fail(p, c, msg);
}

/* init answered the oldest request: its socket (connecting) or why not. */
static void pub_take(struct proxy *p, struct px_conn *c, const struct pubwire_msg *m, int fd)
{
	c->pub_asked = false;
	if (m->type != PUB_SOCKET || fd < 0) {
		int err = m->type == PUB_REFUSED && m->value > 0 ? m->value : EPROTO;
		if (fd >= 0)
			(void)close(fd);
		char error[96];
		(void)snprintf(error, sizeof error, "the jail's init: %s", strerror(err));
		pub_retry(p, c, err, error);
		return;
	}
	px_set_text(c->ev.host, sizeof c->ev.host, c->pub_v6 ? "::1" : "127.0.0.1");
	c->u.fd = fd;
	c->u.dead = false;
	c->u.mask = 0;
	c->st = CS_CONNECTING;
	struct pollfd pf = {.fd = fd, .events = POLLOUT};
	if (poll(&pf, 1, 0) == 1) { /* loopback: often done already */
		connect_done(p, c);
		return;
	}
	conn_set_mask(p, c, &c->u, EPOLLOUT);
}

void px_pub_answer(struct proxy *p)
{
	struct px_pub *pb = p->pub;
	for (int k = 0; k < 64 && pb->chan.fd >= 0; k++) {
		struct pubwire_msg m;
		int fd = -1;
		ssize_t r = fdmsg_recv(pb->chan.fd, &m, sizeof m, &fd, 1, MSG_DONTWAIT);
		if (r < 0 && errno == EAGAIN)
			return;
		if (r != (ssize_t)sizeof m || pb->head == pb->tail) {
			/* init is gone (the jail ended), or says what no one asked: the channel is
			 * closed, and what waits on it fails */
			if (fd >= 0)
				(void)close(fd);
			px_close_fd(&pb->chan.fd);
			pb->chan.mask = 0;
			while (pb->head != pb->tail) {
				struct px_conn *c = pb->fifo[pb->head++ % PX_PUB_INFLIGHT];
				if (c)
					pub_retry(p, c, ECONNABORTED, "the jail has ended");
			}
			return;
		}
		struct px_conn *c = pb->fifo[pb->head % PX_PUB_INFLIGHT];
		pb->fifo[pb->head++ % PX_PUB_INFLIGHT] = NULL;
		if (c)
			pub_take(p, c, &m, fd);
		else if (fd >= 0)
			(void)close(fd); /* its client left meanwhile */
	}
}

void px_pub_accept(struct proxy *p, struct px_pub_listen *l)
{
	struct sockaddr_storage peer;
	struct px_conn *c;
	for (int k = 0; k < 64 && (c = conn_accept(p, l->h.fd, &peer)); k++) {
		c->pub = &l->pub;
		px_event_init(&c->ev, NP_PUBLISH, "127.0.0.1", l->pub.port);
		publish_format(&l->pub, c->ev.rule, sizeof c->ev.rule);
		char a[INET_ADDRSTRLEN] = "?"; /* the host's listener is 127.0.0.1: IPv4 */
		const struct sockaddr_in *in4 = (const struct sockaddr_in *)&peer;
		if (peer.ss_family == AF_INET)
			px_addr_text(AF_INET, (const uint8_t *)&in4->sin_addr, a, sizeof a);
		(void)snprintf(c->ev.addr, sizeof c->ev.addr, "%.15s:%u", a,
			       (unsigned)ntohs(in4->sin_port));
		c->ev.allowed = true;
		c->have_ev = true;
		p->st.allowed++;
		if (ep_quiet(p, &c->c) < 0) {
			conn_close(p, c);
			continue;
		}
		pub_ask(p, c, false);
	}
}

void px_pub_start(struct proxy *p, struct px_pub_job *j)
{
	if (p->pub) { /* one jail, one channel: a second job is refused */
		for (size_t i = 0; i < j->n; i++)
			px_close_fd(&j->fds[i]);
		px_close_fd(&j->chan);
		return;
	}
	struct px_pub *pb = xcalloc(1, sizeof *pb);
	pb->l = xcalloc(j->n, sizeof *pb->l);
	pb->n = j->n;
	pb->chan = (struct px_handle){.kind = PK_PUB_CHAN, .fd = j->chan};
	j->chan = -1;
	for (size_t i = 0; i < j->n; i++) {
		pb->l[i].h = (struct px_handle){.kind = PK_PUB_LISTEN, .fd = j->fds[i]};
		pb->l[i].pub = j->v[i];
		j->fds[i] = -1;
		(void)px_ep_set(p, &pb->l[i].h, EPOLLIN);
	}
	(void)px_ep_set(p, &pb->chan, EPOLLIN);
	p->pub = pb;
}

void px_pub_free(struct proxy *p)
{
	struct px_pub *pb = p->pub;
	if (!pb)
		return;
	for (size_t i = 0; i < pb->n; i++)
		px_close_fd(&pb->l[i].h.fd);
	px_close_fd(&pb->chan.fd);
	free(pb->l);
	free(pb);
	p->pub = NULL;
}
