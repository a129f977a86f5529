/* proxy_dns.c: the proxy's DNS stub on 127.0.0.1:53, UDP and TCP (doc/design.md §4). A query's
 * name is normalized and checked against the rules like a connection's host: an allowed name
 * gets its mapping or the host resolver's A/AAAA (through c-ares in the proxy's loop, CNAME
 * chains followed there), each address checked as a connection's would be; every other name
 * NXDOMAIN at once. Nothing from the jail is forwarded: an answer is built from addresses. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "core/net/dnsmsg.h"
#include "core/net/proxy_internal.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define DNS_TTL 30           /* seconds the jail may keep an answer */
#define DNS_JOBS_MAX 256     /* lookups in flight; more are answered SERVFAIL */
#define DNS_TCP_CONNS_MAX 64 /* open DNS-over-TCP connections; more are closed at accept */
#define DNS_ANSWERS_MAX 16
#define DNS_TCP_OUT 4096     /* an answer over TCP: 16 addresses fit many times over */

struct px_dns_tcp {
	struct px_handle h;       /* first: the loop casts the handle to this */
	struct px_dns_tcp *prev, *next;
	uint8_t *in;
	size_t inlen, incap;
	uint8_t *out;
	size_t outlen, outoff;
	long long deadline;
	struct px_dns_job *job;   /* the lookup its current query waits for */
	bool reading;             /* in tcp_read: it goes on with the next buffered query */
};

struct px_dns_job {
	struct px_wait w;             /* --net ask: while its question is open */
	struct proxy *p;
	struct dns_query q;
	struct net_decision d;
	struct net_event ev;
	struct sockaddr_storage peer; /* UDP */
	socklen_t peerlen;
	struct px_dns_tcp *tcp;       /* TCP, NULL once that connection is gone */
	bool udp;
};

bool px_dns_name_allowed(const struct netrules *r, const char *host, struct net_decision *d)
{
	return netrules_check(r, host, 0, d) == NV_ALLOW; /* port 0: the name at any port */
}

/* ---------------------------------------------------------------- answering */

static void tcp_close(struct proxy *p, struct px_dns_tcp *c)
{
	if (c->h.dead)
		return;
	if (c->job)
		c->job->tcp = NULL;
	free(c->in);
	free(c->out);
	c->in = c->out = NULL;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->dns_conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	__atomic_sub_fetch(&p->n_dns_conns, 1, __ATOMIC_RELAXED);
	px_bury(p, &c->h);
}

static void tcp_flush(struct proxy *p, struct px_dns_tcp *c);

static void send_answer(struct proxy *p, struct px_dns_job *j, const uint8_t *msg, size_t n)
{
	if (j->udp) {
		/* a full socket buffer drops it, as UDP may: the client asks again */
		(void)sendto(p->udp_h.fd, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL,
			     (struct sockaddr *)&j->peer, j->peerlen);
		return;
	}
	struct px_dns_tcp *c = j->tcp;
	if (!c)
		return;
	c->job = NULL;
	c->out = xrealloc(c->out, c->outlen + n + 2);
	c->out[c->outlen] = (uint8_t)(n >> 8);
	c->out[c->outlen + 1] = (uint8_t)n;
	memcpy(c->out + c->outlen + 2, msg, n);
	c->outlen += n + 2;
	tcp_flush(p, c);
}

static void reply(struct proxy *p, struct px_dns_job *j, int rcode, const struct dns_answer *a,
		  size_t n)
{
	uint8_t buf[DNS_TCP_OUT];
	ssize_t len = dns_build_response(&j->q, rcode, a, n, DNS_TTL, buf,
					 j->udp ? DNS_UDP_MAX : sizeof buf);
	if (len > 0)
		send_answer(p, j, buf, (size_t)len);
	else if (j->tcp)
		tcp_close(p, j->tcp); /* not even the question fits: nothing sensible to say */
}

/* An allowed name is answered with the stub's own address for it (core/net/netsynth.h): the
 * jail's direct connections to it are captured and decided for that name (capture.c), and its
 * real addresses, kept for that, are never told to the jail. The event keeps the real one. */
static size_t synthesize(struct proxy *p, struct px_dns_job *j, int *rcode, struct dns_answer *a,
			 size_t n)
{
	if (!n)
		return 0;
	uint32_t idx = netsynth_for(&p->synth, j->ev.host);
	if (!idx) {
		(void)snprintf(j->ev.error, sizeof j->ev.error,
			       "no address of the stub left for it (%d names in this session)",
			       NETSYNTH_MAX);
		*rcode = DNS_SERVFAIL;
		return 0;
	}
	int fam = a[0].family;
	size_t len = fam == AF_INET ? 4 : 16;
	uint8_t packed[DNS_ANSWERS_MAX * 16];
	for (size_t i = 0; i < n; i++)
		memcpy(packed + i * len, a[i].addr, len);
	netsynth_remember(netsynth_get(&p->synth, idx), fam, packed, n,
			  clock_mono_ms() + DNS_TTL * 1000LL);
	netsynth_addr(idx, fam, a[0].addr);
	return 1;
}

static void finish(struct proxy *p, struct px_dns_job *j, int rcode, struct dns_answer *a,
		   size_t n)
{
	if (n)
		px_addr_text(a[0].family, a[0].addr, j->ev.addr, sizeof j->ev.addr);
	if (j->ev.allowed)
		n = synthesize(p, j, &rcode, a, n);
	px_events_push(&p->evq, &j->ev);
	reply(p, j, rcode, a, n);
	free(j);
}

static int qfamily(uint16_t qtype)
{
	return qtype == DNS_T_A ? AF_INET : qtype == DNS_T_AAAA ? AF_INET6 : 0;
}

static void looked_up(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	(void)timeouts;
	struct px_dns_job *j = arg;
	struct proxy *p = j->p;
	p->n_dns_jobs--;
	if (status == ARES_EDESTRUCTION) { /* the proxy is stopping */
		ares_freeaddrinfo(res);
		if (j->tcp)
			j->tcp->job = NULL;
		free(j);
		return;
	}
	struct dns_answer a[DNS_ANSWERS_MAX];
	size_t n = 0;
	int want = qfamily(j->q.qtype);
	for (struct ares_addrinfo_node *nd = res && status == ARES_SUCCESS ? res->nodes : NULL;
	     nd && n < DNS_ANSWERS_MAX; nd = nd->ai_next) {
		if (nd->ai_family != want)
			continue;
		a[n].family = want;
		if (want == AF_INET)
			memcpy(a[n].addr, &((struct sockaddr_in *)nd->ai_addr)->sin_addr, 4);
		else
			memcpy(a[n].addr, &((struct sockaddr_in6 *)nd->ai_addr)->sin6_addr, 16);
		/* an address the proxy would refuse is not told either */
		if (netrules_addr_ok(p->rules, &j->d, a[n].family, a[n].addr))
			n++;
	}
	ares_freeaddrinfo(res);
	int rcode = DNS_NOERROR;
	if (status == ARES_ENOTFOUND || status == ARES_ENONAME)
		rcode = DNS_NXDOMAIN;
	else if (status != ARES_SUCCESS && status != ARES_ENODATA)
		rcode = DNS_SERVFAIL;
	/* no record of the type asked is an answer; anything else is a failed lookup, worded
	 * as the proxy words a connection's */
	j->ev.failed = status != ARES_SUCCESS && status != ARES_ENODATA;
	if (j->ev.failed)
		(void)snprintf(j->ev.error, sizeof j->ev.error, "could not resolve: %s",
			       ares_strerror(status));
	finish(p, j, rcode, a, n);
}

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

static void answer_allowed(struct proxy *p, struct px_dns_job *j, char *host, const char *asked);

/* --net ask: the person answered the lookup's question (or did not in time). */
static void dns_answered(struct proxy *p, struct px_wait *w, const struct net_decision *d,
			 char *reason)
{
	struct px_dns_job *j = container_of(w, struct px_dns_job, w);
	if (j->tcp)
		j->tcp->job = NULL; /* answered now, one way or the other */
	if (d) { /* the answer's entry decides; a mapping of the name still holds */
		j->d.v = d->v;
		j->d.rule = d->rule;
		answer_allowed(p, j, xstrdup(j->ev.host), reason);
	} else {
		(void)snprintf(j->ev.rule, sizeof j->ev.rule, "%s", reason);
		p->st.denied++;
		finish(p, j, DNS_NXDOMAIN, NULL, 0);
	}
	free(reason);
}

/* One parsed query: the job is ours to answer and free. */
static void answer(struct proxy *p, struct px_dns_job *j)
{
	char *host = NULL;
	struct err e = {0};
	if (net_host_normalize(j->q.name, &host, &e) < 0) {
		/* the root is ".": an empty host is a malformed request's (netevent.h) */
		px_event_init(&j->ev, NP_DNS, j->q.name[0] ? j->q.name : ".", 0);
		(void)snprintf(j->ev.rule, sizeof j->ev.rule, "not a valid host name: %.280s", e.what);
		p->st.denied++;
		finish(p, j, DNS_NXDOMAIN, NULL, 0);
		return;
	}
	px_event_init(&j->ev, NP_DNS, host, 0);
	bool allowed = px_dns_name_allowed(p->rules, host, &j->d);
	if (!allowed && j->d.v == NV_NOT_ALLOWED) { /* --net ask: the person may allow it */
		char *why = NULL;
		j->w.done = dns_answered;
		int r = px_ask(p, host, 0, NP_DNS, &j->d, &j->w, &why);
		if (r == 0) { /* the question holds the job; over TCP, its connection waits */
			if (j->tcp)
				j->tcp->job = j;
			free(host);
			return;
		}
		allowed = r > 0;
		if (why) {
			(void)snprintf(j->ev.rule, sizeof j->ev.rule, "%s", why);
			free(why);
			free(host);
			p->st.denied++;
			finish(p, j, DNS_NXDOMAIN, NULL, 0);
			return;
		}
	}
	if (!allowed) {
		/* worded for port 443: net_deny_reason would print port 0 as ":0" */
		char *reason = net_deny_reason(&j->d, host, 443);
		(void)snprintf(j->ev.rule, sizeof j->ev.rule, "%s", reason ? reason : "not allowed");
		free(reason);
		free(host);
		p->st.denied++;
		finish(p, j, DNS_NXDOMAIN, NULL, 0);
		return;
	}
	answer_allowed(p, j, host, NULL);
}

/* The name is allowed (j->d: why; asked: the answer's words when it was asked): its addresses.
 * Takes host. */
static void answer_allowed(struct proxy *p, struct px_dns_job *j, char *host, const char *asked)
{
	p->st.allowed++;
	j->ev.allowed = true;
	const char *spec = asked ? asked : j->d.mapped ? j->d.mapped->spec
				 : j->d.rule ? j->d.rule->spec : "";
	(void)snprintf(j->ev.rule, sizeof j->ev.rule, "%s", spec);
	int fam = qfamily(j->q.qtype);
	if (!fam || j->q.qclass != DNS_C_IN) { /* the name exists; no records of that type */
		free(host);
		finish(p, j, DNS_NOERROR, NULL, 0);
		return;
	}
	if (j->d.mapped) {
		struct dns_answer a = {.family = j->d.mapped->family};
		memcpy(a.addr, j->d.mapped->addr, 16);
		free(host);
		finish(p, j, DNS_NOERROR, &a, a.family == fam ? 1 : 0);
		return;
	}
	if (p->n_dns_jobs >= DNS_JOBS_MAX) {
		free(host);
		(void)snprintf(j->ev.error, sizeof j->ev.error, "too many lookups in flight");
		j->ev.failed = true;
		finish(p, j, DNS_SERVFAIL, NULL, 0);
		return;
	}
	p->n_dns_jobs++;
	if (j->tcp)
		j->tcp->job = j;
	struct ares_addrinfo_hints hints = {.ai_family = fam, .ai_socktype = SOCK_STREAM};
	ares_getaddrinfo(p->ch, host, NULL, &hints, looked_up, j);
	free(host);
}

/* A message that is not a query the stub answers: recorded as what it is (an event with no
 * host, the reason in its rule: netevent.h), denied. */
static void malformed(struct proxy *p, const struct dns_query *q)
{
	struct net_event ev;
	px_event_init(&ev, NP_DNS, "", 0);
	(void)snprintf(ev.rule, sizeof ev.rule, "malformed DNS request: %s",
		       q->why ? q->why : "unreadable");
	p->st.denied++;
	px_events_push(&p->evq, &ev);
}

/* A message from the jail: 0 answered or being answered, -1 to drop (and close, over TCP). */
static int query(struct proxy *p, const uint8_t *msg, size_t n, struct px_dns_job *j)
{
	int r = dns_parse_query(msg, n, &j->q);
	if (r != 0)
		malformed(p, &j->q);
	if (r < 0) {
		free(j);
		return -1;
	}
	j->p = p;
	if (r > 0) {
		uint8_t buf[DNS_UDP_MAX];
		int rcode = j->q.opcode ? DNS_NOTIMP : DNS_FORMERR;
		ssize_t len = dns_build_response(&j->q, rcode, NULL, 0, 0, buf, sizeof buf);
		if (len > 0)
			send_answer(p, j, buf, (size_t)len);
		free(j);
		return 0;
	}
	answer(p, j);
	return 0;
}

/* ---------------------------------------------------------------- UDP */

void px_dns_udp_ready(struct proxy *p)
{
	for (int k = 0; k < 64; k++) {
		uint8_t buf[DNS_UDP_MAX];
		struct px_dns_job *j = xcalloc(1, sizeof *j);
		j->udp = true;
		j->peerlen = sizeof j->peer;
		ssize_t n = recvfrom(p->udp_h.fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&j->peer, &j->peerlen);
		if (n < 0) {
			free(j);
			return;
		}
		if ((size_t)n > sizeof buf) { /* longer than a query: not one we answer */
			free(j);
			continue;
		}
		(void)query(p, buf, (size_t)n, j);
	}
}

/* ---------------------------------------------------------------- TCP */

static void tcp_mask(struct proxy *p, struct px_dns_tcp *c)
{
	uint32_t m = c->outoff < c->outlen ? EPOLLOUT : c->job ? 0 : EPOLLIN;
	if (!m) { /* waiting for a lookup: keep only errors */
		if (c->h.mask) {
			(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, c->h.fd, NULL);
			c->h.mask = 0;
		}
		return;
	}
	if (px_ep_set(p, &c->h, m) < 0)
		tcp_close(p, c);
}

static void tcp_read(struct proxy *p, struct px_dns_tcp *c)
{
	for (;;) {
		/* a whole framed query in the buffer: answer it, one at a time */
		if (c->inlen >= 2) {
			size_t len = (size_t)c->in[0] << 8 | c->in[1];
			if (len == 0) {
				tcp_close(p, c);
				return;
			}
			if (c->inlen >= len + 2) {
				struct px_dns_job *j = xcalloc(1, sizeof *j);
				j->tcp = c;
				c->deadline = clock_mono_ms() + p->head_ms;
				uint8_t *msg = xmalloc(len);
				memcpy(msg, c->in + 2, len);
				memmove(c->in, c->in + len + 2, c->inlen - len - 2);
				c->inlen -= len + 2;
				c->reading = true;
				int r = query(p, msg, len, j);
				c->reading = false;
				free(msg);
				if (r < 0)
					tcp_close(p, c);
				if (c->h.dead)
					return;
				if (c->job || c->outoff < c->outlen)
					break;
				continue;
			}
			if (c->incap < len + 2) {
				c->incap = len + 2;
				c->in = xrealloc(c->in, c->incap);
			}
		} else if (c->incap < 2) {
			c->incap = 512;
			c->in = xrealloc(c->in, c->incap);
		}
		size_t before = c->inlen;
		if (px_recv(c->h.fd, c->in, c->incap, &c->inlen) < 0) {
			tcp_close(p, c);
			return;
		}
		if (c->inlen == before)
			break; /* the socket is empty */
	}
	tcp_mask(p, c);
}

static void tcp_flush(struct proxy *p, struct px_dns_tcp *c)
{
	int r = px_send(c->h.fd, c->out, c->outlen, &c->outoff);
	if (r < 0) {
		tcp_close(p, c);
		return;
	}
	if (r == 0) {
		tcp_mask(p, c);
		return;
	}
	c->outoff = c->outlen = 0;
	if (c->reading)
		return; /* tcp_read goes on */
	if (c->inlen >= 2)
		tcp_read(p, c); /* a query that came behind the one just answered */
	else
		tcp_mask(p, c);
}

void px_dns_accept(struct proxy *p)
{
	for (int k = 0; k < 16; k++) {
		int fd = accept4(p->dnsl_h.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (p->n_dns_conns >= DNS_TCP_CONNS_MAX) {
			(void)close(fd);
			continue;
		}
		struct px_dns_tcp *c = xcalloc(1, sizeof *c);
		c->h = (struct px_handle){.kind = PK_DNS_TCP, .fd = fd};
		c->deadline = clock_mono_ms() + p->head_ms;
		c->next = p->dns_conns;
		if (p->dns_conns)
			p->dns_conns->prev = c;
		p->dns_conns = c;
		__atomic_add_fetch(&p->n_dns_conns, 1, __ATOMIC_RELAXED);
		tcp_mask(p, c);
	}
}

void px_dns_tcp_event(struct proxy *p, struct px_dns_tcp *c, uint32_t ev)
{
	if (ev & EPOLLERR) {
		tcp_close(p, c);
		return;
	}
	if (c->outoff < c->outlen)
		tcp_flush(p, c);
	else
		tcp_read(p, c);
}

void px_dns_sweep(struct proxy *p, long long now)
{
	struct px_dns_tcp *next;
	for (struct px_dns_tcp *c = p->dns_conns; c; c = next) {
		next = c->next;
		if (now >= c->deadline && !c->job) /* a query being answered has its own bound */
			tcp_close(p, c);
	}
}

void px_dns_close_all(struct proxy *p)
{
	while (p->dns_conns)
		tcp_close(p, p->dns_conns);
}
