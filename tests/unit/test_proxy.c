/* Tests for core/net/proxy: the egress proxy engine on real loopback sockets, no bwrap. The
 * test opens the listeners itself (127.0.0.1, ephemeral ports), runs stand-in upstream servers
 * in threads, and names them through --map-host-style mappings to 127.0.0.1. Every test checks
 * at its end that no fd is left open and no connection is still counted. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/dnsmsg.h"
#include "core/net/httpreq.h"
#include "core/net/proxy.h"
#include "core/net/proxy_internal.h"
#include "core/plan/httprules.h"
#include "util/clock.h"
#include "util/strv.h"

#include "tlsbuild.h"

/* ---------------------------------------------------------------- small socket helpers */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own fd */
}

static int listen_on(int type, uint16_t *port)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(fd, 4096), 0);
	socklen_t len = sizeof sa;
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* [::1]:0, or -1 when this host has no IPv6 loopback. */
static int listen_v6(uint16_t *port)
{
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	socklen_t len = sizeof sa;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(sa.sin6_port);
	return fd;
}

static int dial(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	struct timeval tv = {.tv_sec = 10};
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	return fd;
}

static void send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		assert_true(k > 0);
		p += k;
		n -= (size_t)k;
	}
}

static void send_str(int fd, const char *s) { send_all(fd, s, strlen(s)); }

/* Read until EOF (or cap): the bytes read, NUL-terminated. */
static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	while (n < cap - 1) {
		ssize_t k = recv(fd, buf + n, cap - 1 - n, 0);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	return n;
}

static void read_exact(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n) {
		ssize_t k = recv(fd, p, n, 0);
		assert_true(k > 0);
		p += k;
		n -= (size_t)k;
	}
}

/* Send msg and read it back from an echo at the other end. */
static void echo_check(int fd, const char *msg)
{
	char back[64];
	size_t n = strlen(msg);
	assert_true(n <= sizeof back);
	send_all(fd, msg, n);
	read_exact(fd, back, n);
	assert_memory_equal(back, msg, n);
}

/* Read a response head (through the empty line), NUL-terminated. */
static void read_head(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	while (n < cap - 1) {
		ssize_t k = recv(fd, buf + n, 1, 0);
		assert_true(k == 1);
		n++;
		buf[n] = '\0';
		if (n >= 4 && !memcmp(buf + n - 4, "\r\n\r\n", 4))
			return;
	}
	fail_msg("response head too long: %s", buf);
}

/* ---------------------------------------------------------------- stand-in upstreams */

/* An echo server on one epoll thread: echoes everything, and shuts its side when the client
 * shuts its own (so a half-close is seen to travel both ways). */
struct echo {
	int lfd, stopfd, ep;
	uint16_t port;
	pthread_t thr;
	atomic_int accepted;
};

static void *echo_main(void *arg)
{
	struct echo *s = arg;
	int ep = s->ep;
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = s->lfd};
	(void)epoll_ctl(ep, EPOLL_CTL_ADD, s->lfd, &ev);
	ev.data.fd = s->stopfd;
	(void)epoll_ctl(ep, EPOLL_CTL_ADD, s->stopfd, &ev);
	int open_fds[4096];
	size_t n_open = 0;
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, -1);
		if (n < 0 && errno != EINTR)
			goto out;
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == s->stopfd)
				goto out;
			if (fd == s->lfd) {
				int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
				if (c < 0)
					continue;
				atomic_fetch_add(&s->accepted, 1);
				struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
				(void)epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
				if (n_open < 4096)
					open_fds[n_open++] = c;
				continue;
			}
			char buf[65536];
			ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
			if (k > 0) {
				send_all(fd, buf, (size_t)k); /* blocking: fine for a test */
			} else if (k == 0) {
				(void)shutdown(fd, SHUT_WR);
				(void)epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
			} else if (errno != EAGAIN) {
				(void)epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
			}
		}
	}
out:
	for (size_t i = 0; i < n_open; i++)
		close(open_fds[i]);
	close(ep);
	return NULL;
}

static void echo_start(struct echo *s)
{
	memset(s, 0, sizeof *s);
	s->lfd = listen_on(SOCK_STREAM, &s->port);
	s->stopfd = eventfd(0, EFD_CLOEXEC);
	s->ep = epoll_create1(EPOLL_CLOEXEC); /* here: a test may lower RLIMIT_NOFILE soon */
	assert_true(s->ep >= 0);
	assert_int_equal(pthread_create(&s->thr, NULL, echo_main, s), 0);
}

static void echo_stop(struct echo *s)
{
	uint64_t one = 1;
	assert_int_equal(write(s->stopfd, &one, sizeof one), sizeof one);
	pthread_join(s->thr, NULL);
	close(s->lfd);
	close(s->stopfd);
}

/* An HTTP server: reads one request head, keeps it, answers "hi" with Connection: close. */
struct web {
	int lfd;
	uint16_t port;
	pthread_t thr;
	atomic_int accepted;
	char head[4096];
};

static void *web_main(void *arg)
{
	struct web *s = arg;
	for (;;) {
		int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return NULL; /* the listener was shut down */
		atomic_fetch_add(&s->accepted, 1);
		size_t n = 0;
		while (n < sizeof s->head - 1) {
			ssize_t k = recv(c, s->head + n, 1, 0);
			if (k <= 0)
				break;
			n++;
			if (n >= 4 && !memcmp(s->head + n - 4, "\r\n\r\n", 4))
				break;
		}
		s->head[n] = '\0';
		const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi";
		(void)send(c, resp, strlen(resp), MSG_NOSIGNAL);
		close(c);
	}
}

static void web_start(struct web *s)
{
	memset(s, 0, sizeof *s);
	s->lfd = listen_on(SOCK_STREAM, &s->port);
	assert_int_equal(pthread_create(&s->thr, NULL, web_main, s), 0);
}

static void web_stop(struct web *s)
{
	(void)shutdown(s->lfd, SHUT_RDWR);
	pthread_join(s->thr, NULL);
	close(s->lfd);
}

/* A resolver for c-ares: every A question gets 127.0.0.1, AAAA none. */
struct fakedns {
	int fd, stopfd;
	uint16_t port;
	pthread_t thr;
	atomic_int queries;
};

static void *fakedns_main(void *arg)
{
	struct fakedns *s = arg;
	struct pollfd pf[2] = {{.fd = s->fd, .events = POLLIN}, {.fd = s->stopfd, .events = POLLIN}};
	for (;;) {
		if (poll(pf, 2, -1) < 0 || pf[1].revents)
			return NULL;
		uint8_t buf[512], out[512];
		struct sockaddr_storage peer;
		socklen_t plen = sizeof peer;
		ssize_t n = recvfrom(s->fd, buf, sizeof buf, 0, (struct sockaddr *)&peer, &plen);
		struct dns_query q;
		if (n <= 0 || dns_parse_query(buf, (size_t)n, &q) != 0)
			continue;
		atomic_fetch_add(&s->queries, 1);
		struct dns_answer a = {.family = AF_INET, .addr = {127, 0, 0, 1}};
		ssize_t len = dns_build_response(&q, DNS_NOERROR, &a, 1, 60, out, sizeof out);
		if (len > 0)
			(void)sendto(s->fd, out, (size_t)len, 0, (struct sockaddr *)&peer, plen);
	}
}

/* ---------------------------------------------------------------- the fixture */

struct fx {
	int fds_before;
	struct echo echo;
	struct web web, web2;
	struct fakedns dns;
	struct netrules rules;
	struct proxy *p;
	struct proxy_stats st;
	uint16_t pport, pport6, udp_port, tcpdns_port;
	int hole;                 /* a listener that never accepts, its queue filled */
	uint16_t hole_port;
};

static pthread_mutex_t ev_mu = PTHREAD_MUTEX_INITIALIZER;
static struct net_event evs[4096];
static size_t n_evs;
static int batches;

static void sink(void *arg, const struct net_event *ev, size_t n)
{
	(void)arg;
	pthread_mutex_lock(&ev_mu);
	for (size_t i = 0; i < n && n_evs < 4096; i++)
		evs[n_evs++] = ev[i];
	batches++;
	pthread_mutex_unlock(&ev_mu);
}

static int head_ms = 5000, connect_ms = 2000;
/* setup_inspect: ok.test is inspected (a request rule names it), agentjail-tls's control socket
 * a socketpair whose other end (inspect_peer) the test holds */
static bool with_inspect;
static struct inspect fx_inspect;
static int inspect_peer = -1;

/* --net ask: the questions the proxy asked and settled (its callbacks, on its thread) */
static struct proxy_ask *test_ask;
static struct net_question asked_q[64];
static int n_asked, n_settled;
static enum ask_answer settled_a[64];
static bool settled_timeout[64];

static void on_asked(void *arg, const struct net_question *q)
{
	(void)arg;
	pthread_mutex_lock(&ev_mu);
	if (n_asked < 64)
		asked_q[n_asked++] = *q;
	pthread_mutex_unlock(&ev_mu);
}

static void on_settled(void *arg, const struct net_question *q, enum ask_answer a,
		       bool timed_out, const char *by)
{
	(void)arg, (void)q, (void)by;
	pthread_mutex_lock(&ev_mu);
	if (n_settled < 64) {
		settled_a[n_settled] = a;
		settled_timeout[n_settled++] = timed_out;
	}
	pthread_mutex_unlock(&ev_mu);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	f->fds_before = count_fds();
	n_evs = 0;
	batches = 0;
	echo_start(&f->echo);
	web_start(&f->web);
	web_start(&f->web2);
	f->dns.fd = listen_on(SOCK_DGRAM, &f->dns.port);
	f->dns.stopfd = eventfd(0, EFD_CLOEXEC);
	assert_int_equal(pthread_create(&f->dns.thr, NULL, fakedns_main, &f->dns), 0);
	f->hole = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in hsa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t hlen = sizeof hsa;
	assert_int_equal(bind(f->hole, (struct sockaddr *)&hsa, sizeof hsa), 0);
	assert_int_equal(listen(f->hole, 0), 0);
	assert_int_equal(getsockname(f->hole, (struct sockaddr *)&hsa, &hlen), 0);
	f->hole_port = ntohs(hsa.sin_port);
	char spec[128];
	struct strv allow = STRV_INIT, deny = STRV_INIT, map = STRV_INIT;
	(void)snprintf(spec, sizeof spec, "ok.test:%u", f->echo.port);
	strv_push(&allow, spec);
	(void)snprintf(spec, sizeof spec, "web.test:%u", f->web.port);
	strv_push(&allow, spec);
	(void)snprintf(spec, sizeof spec, "web2.test:%u", f->web2.port);
	strv_push(&allow, spec);
	(void)snprintf(spec, sizeof spec, "res.test:%u", f->echo.port);
	strv_push(&allow, spec);
	(void)snprintf(spec, sizeof spec, "hole.test:%u", f->hole_port);
	strv_push(&allow, spec);
	(void)snprintf(spec, sizeof spec, "tls.test:%u/tls", f->echo.port);
	strv_push(&allow, spec);
	strv_push(&map, "tls.test=127.0.0.1");
	strv_push(&map, "hole.test=127.0.0.1");
	strv_push(&allow, "*.wild.test");
	strv_push(&deny, "bad.wild.test");
	strv_push(&map, "ok.test=127.0.0.1");
	strv_push(&map, "web.test=127.0.0.1");
	strv_push(&map, "web2.test=127.0.0.1");
	strv_push(&map, "v6.wild.test=::1");
	struct err e = {0};
	assert_int_equal(netrules_build(&allow, &deny, &map, &f->rules, &e), 0);
	strv_free(&allow);
	strv_free(&deny);
	strv_free(&map);
	struct proxy_listeners l = {.inspect_fd = -1};
	if (with_inspect) {
		struct strv rules = STRV_INIT;
		strv_push(&rules, "GET ok.test/*");
		assert_int_equal(inspect_build(&rules, NULL, &fx_inspect, &e), 0);
		strv_free(&rules);
		f->rules.inspect = &fx_inspect;
		int sp[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
		l.inspect_fd = sp[0];
		inspect_peer = sp[1];
	}
	l.tcp4 = listen_on(SOCK_STREAM, &f->pport);
	l.tcp6 = listen_v6(&f->pport6);
	l.dns_udp = listen_on(SOCK_DGRAM, &f->udp_port);
	l.dns_tcp = listen_on(SOCK_STREAM, &f->tcpdns_port);
	px_test_timeouts(head_ms, connect_ms);
	(void)snprintf(spec, sizeof spec, "127.0.0.1:%u", f->dns.port);
	px_test_resolver(spec);
	n_asked = n_settled = 0;
	if (proxy_start(&l, &f->rules, test_ask, sink, NULL, &f->p, &e) < 0)
		fail_msg("proxy_start: %s", e.what);
	*state = f;
	return 0;
}

/* Wait for the loop to have closed every connection (the clients closed theirs), then stop. */
static void stop_proxy(struct fx *f)
{
	long long t0 = clock_mono_ms();
	while (f->p && px_test_open(f->p) > 0 && clock_mono_ms() - t0 < 5000)
		usleep(5000);
	if (f->p)
		proxy_stop(f->p, &f->st);
	f->p = NULL;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	stop_proxy(f);
	echo_stop(&f->echo);
	web_stop(&f->web);
	web_stop(&f->web2);
	uint64_t one = 1;
	assert_int_equal(write(f->dns.stopfd, &one, sizeof one), sizeof one);
	pthread_join(f->dns.thr, NULL);
	close(f->dns.fd);
	close(f->dns.stopfd);
	netrules_free(&f->rules);
	if (with_inspect) {
		inspect_free(&fx_inspect);
		if (inspect_peer >= 0)
			close(inspect_peer);
		inspect_peer = -1;
		with_inspect = false;
	}
	close(f->hole);
	px_test_resolver(NULL);
	px_test_ports(0, 0);
	int after = count_fds(), before = f->fds_before;
	uint64_t open_now = f->st.open_now;
	free(f);
	head_ms = 5000;
	connect_ms = 2000;
	test_ask = NULL;
	if (after != before) {
		print_error("fds: %d before, %d after\n", before, after);
		return -1;
	}
	if (open_now) {
		print_error("%llu connections still open at stop\n", (unsigned long long)open_now);
		return -1;
	}
	return 0;
}

static const struct net_event *find_event(const char *host)
{
	for (size_t i = 0; i < n_evs; i++)
		if (!strcmp(evs[i].host, host))
			return &evs[i];
	return NULL;
}

static int connect_via(struct fx *f, const char *hostport, char *head, size_t cap)
{
	int fd = dial(f->pport);
	char req[512];
	(void)snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport,
		       hostport);
	send_str(fd, req);
	read_head(fd, head, cap);
	return fd;
}

/* ---------------------------------------------------------------- tests */

static void connect_tunnel(void **state)
{
	struct fx *f = *state;
	char hp[64], head[1024];
	(void)snprintf(hp, sizeof hp, "OK.test.:%u", f->echo.port); /* normalized: ok.test */
	int fd = connect_via(f, hp, head, sizeof head);
	assert_non_null(strstr(head, "HTTP/1.1 200"));
	echo_check(fd, "hello");
	close(fd);
	stop_proxy(f);
	const struct net_event *ev = find_event("ok.test");
	assert_non_null(ev);
	assert_true(ev->allowed);
	assert_int_equal(ev->proto, NP_CONNECT);
	assert_int_equal(ev->port, f->echo.port);
	assert_string_equal(ev->addr, "127.0.0.1");
	assert_int_equal(ev->bytes_up, 5);
	assert_int_equal(ev->bytes_down, 5);
	assert_string_equal(ev->error, "");
	assert_true(f->st.allowed >= 1);
}

/* The client sends the tunnel's first bytes right behind the CONNECT (as TLS clients may). */
static void connect_pipelined_bytes(void **state)
{
	struct fx *f = *state;
	int fd = dial(f->pport);
	char req[256], head[512], buf[8];
	(void)snprintf(req, sizeof req, "CONNECT ok.test:%u HTTP/1.1\r\n\r\nearly", f->echo.port);
	send_str(fd, req);
	read_head(fd, head, sizeof head);
	assert_non_null(strstr(head, " 200 "));
	read_exact(fd, buf, 5);
	assert_memory_equal(buf, "early", 5);
	close(fd);
}

static void ipv6_listener(void **state)
{
	struct fx *f = *state;
	if (!f->pport6)
		skip(); /* no ::1 on this host */
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons(f->pport6),
				  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	char req[128], head[256];
	(void)snprintf(req, sizeof req, "CONNECT ok.test:%u HTTP/1.1\r\n\r\n", f->echo.port);
	send_str(fd, req);
	read_head(fd, head, sizeof head);
	assert_non_null(strstr(head, " 200 "));
	echo_check(fd, "over v6");
	close(fd);
}

static void plain_http_one_host(void **state)
{
	struct fx *f = *state;
	int fd = dial(f->pport);
	char req[512], resp[2048];
	/* a second request behind the first names another (allowed) host: it must not reach it */
	(void)snprintf(req, sizeof req,
		       "GET http://web.test:%u/path?q=1 HTTP/1.1\r\nHost: web.test\r\n"
		       "Proxy-Connection: keep-alive\r\nConnection: keep-alive\r\n\r\n"
		       "GET http://web2.test:%u/ HTTP/1.1\r\nHost: web2.test\r\n\r\n",
		       f->web.port, f->web2.port);
	send_str(fd, req);
	read_all(fd, resp, sizeof resp);
	close(fd);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK"));
	assert_non_null(strstr(resp, "\r\n\r\nhi"));
	assert_int_equal(atomic_load(&f->web2.accepted), 0);
	assert_int_equal(atomic_load(&f->web.accepted), 1);
	assert_non_null(strstr(f->web.head, "GET /path?q=1 HTTP/1.1\r\n"));
	assert_non_null(strstr(f->web.head, "Connection: close"));
	assert_null(strstr(f->web.head, "Proxy-Connection"));
	assert_null(strstr(f->web.head, "keep-alive"));
	stop_proxy(f);
	const struct net_event *ev = find_event("web.test");
	assert_non_null(ev);
	assert_int_equal(ev->proto, NP_HTTP);
	assert_true(ev->allowed);
	assert_true(ev->bytes_down > 0);
	assert_null(find_event("web2.test"));
}

static void socks5_tunnel(void **state)
{
	struct fx *f = *state;
	int fd = dial(f->pport);
	uint8_t greet[3] = {5, 1, 0}, rep[10], req[64];
	send_all(fd, greet, 3);
	read_exact(fd, rep, 2);
	assert_int_equal(rep[0], 5);
	assert_int_equal(rep[1], 0);
	size_t n = 0;
	req[n++] = 5, req[n++] = 1, req[n++] = 0, req[n++] = 3, req[n++] = 7;
	memcpy(req + n, "ok.test", 7);
	n += 7;
	req[n++] = (uint8_t)(f->echo.port >> 8), req[n++] = (uint8_t)f->echo.port;
	send_all(fd, req, n);
	read_exact(fd, rep, 10);
	assert_int_equal(rep[1], 0);
	echo_check(fd, "ping");
	close(fd);
	stop_proxy(f);
	const struct net_event *ev = find_event("ok.test");
	assert_non_null(ev);
	assert_int_equal(ev->proto, NP_SOCKS);
	assert_true(ev->allowed);
}

static void socks5_denied(void **state)
{
	struct fx *f = *state;
	int fd = dial(f->pport);
	/* greeting and request in one write */
	uint8_t req[64] = {5, 1, 0, 5, 1, 0, 3, 9};
	memcpy(req + 8, "evil.test", 9);
	req[17] = 1, req[18] = 187;
	send_all(fd, req, 19);
	uint8_t rep[12];
	read_exact(fd, rep, 12);
	assert_int_equal(rep[1], 0);   /* no authentication */
	assert_int_equal(rep[3], 2);   /* not allowed by the ruleset */
	char rest[8];
	assert_int_equal(read_all(fd, rest, sizeof rest), 0); /* and closed */
	close(fd);
	stop_proxy(f);
	const struct net_event *ev = find_event("evil.test");
	assert_non_null(ev);
	assert_false(ev->allowed);
	assert_int_equal(ev->proto, NP_SOCKS);
	assert_non_null(strstr(ev->rule, "--allow-domain evil.test"));
}

static void http_denials(void **state)
{
	struct fx *f = *state;
	struct {
		const char *req;
		const char *in_reason;
	} cases[] = {
		{"CONNECT evil.test:443 HTTP/1.1\r\n\r\n", "add --allow-domain evil.test"},
		{"CONNECT bad.wild.test:443 HTTP/1.1\r\n\r\n", "--deny-domain bad.wild.test"},
		{"CONNECT ok.test:22 HTTP/1.1\r\n\r\n", "port 22"},
		{"CONNECT 127.0.0.1:22 HTTP/1.1\r\n\r\n", "127.0.0.1"},
		{"GET http://evil.test/x HTTP/1.1\r\nHost: evil.test\r\n\r\n", "evil.test"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int fd = dial(f->pport);
		send_str(fd, cases[i].req);
		char resp[2048];
		read_all(fd, resp, sizeof resp);
		close(fd);
		if (!strstr(resp, "HTTP/1.1 403") || !strstr(resp, "X-Proxy-Error: ") ||
		    !strstr(resp, cases[i].in_reason))
			fail_msg("case %zu: %s", i, resp);
	}
	stop_proxy(f);
	assert_int_equal(f->st.denied, 5);
	assert_int_equal(f->st.allowed, 0);
	assert_int_equal(atomic_load(&f->dns.queries), 0); /* decided before any lookup */
	const struct net_event *ev = find_event("evil.test");
	assert_non_null(ev);
	assert_false(ev->allowed);
	assert_string_equal(ev->addr, "");
}

/* An allowed, unmapped name the resolver points at loopback is refused after the lookup. */
static void resolved_loopback_refused(void **state)
{
	struct fx *f = *state;
	char hp[64], head[1024], body[512];
	(void)snprintf(hp, sizeof hp, "res.test:%u", f->echo.port);
	int fd = connect_via(f, hp, head, sizeof head);
	read_all(fd, body, sizeof body);
	close(fd);
	assert_non_null(strstr(head, "HTTP/1.1 403"));
	assert_non_null(strstr(head, "loopback"));
	assert_true(atomic_load(&f->dns.queries) >= 1);
	assert_int_equal(atomic_load(&f->echo.accepted), 0);
}

static void upstream_refused_502(void **state)
{
	struct fx *f = *state;
	/* v6.wild.test is mapped to ::1, where nothing listens on 443 */
	char hp[64], head[1024], body[512];
	(void)snprintf(hp, sizeof hp, "v6.wild.test:443");
	int fd = connect_via(f, hp, head, sizeof head);
	read_all(fd, body, sizeof body);
	close(fd);
	/* ::1:443 has no listener: refused (or no IPv6 at all: unreachable) */
	assert_non_null(strstr(head, "HTTP/1.1 502"));
	stop_proxy(f);
	const struct net_event *ev = find_event("v6.wild.test");
	assert_non_null(ev);
	assert_true(ev->allowed);
	assert_non_null(strstr(ev->error, "connect"));
}

/* An upstream that never answers the connect: 504 when the connect deadline passes. */
static void upstream_timeout_504(void **state)
{
	struct fx *f = *state;
	/* fill the hole's accept queue: from then on its SYNs are dropped */
	int fill[3];
	for (int i = 0; i < 3; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(f->hole_port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		(void)connect(fill[i], (struct sockaddr *)&sa, sizeof sa);
	}
	usleep(100000);
	char hp[64], head[1024], body[512];
	(void)snprintf(hp, sizeof hp, "hole.test:%u", f->hole_port);
	long long t0 = clock_mono_ms();
	int fd = connect_via(f, hp, head, sizeof head);
	long long took = clock_mono_ms() - t0;
	read_all(fd, body, sizeof body);
	close(fd);
	for (int i = 0; i < 3; i++)
		close(fill[i]);
	if (!strstr(head, "HTTP/1.1 504"))
		fail_msg("not a 504 after %lld ms: %s", took, head);
	assert_true(took >= 250);
	stop_proxy(f);
	const struct net_event *ev = find_event("hole.test");
	assert_non_null(ev);
	assert_non_null(strstr(ev->error, "timeout"));
}

static void half_close(void **state)
{
	struct fx *f = *state;
	char hp[64], head[1024], buf[64];
	(void)snprintf(hp, sizeof hp, "ok.test:%u", f->echo.port);
	int fd = connect_via(f, hp, head, sizeof head);
	send_str(fd, "abc");
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	/* the echo server sees our EOF only if the proxy passes the half-close on; it then shuts
	 * its side, which must reach us after the echoed bytes */
	assert_int_equal(read_all(fd, buf, sizeof buf), 3);
	assert_string_equal(buf, "abc");
	close(fd);
}

static void slow_and_vanishing_clients(void **state)
{
	struct fx *f = *state;
	int slow = dial(f->pport);
	send_str(slow, "CONNECT ok.te"); /* and nothing more */
	int gone = dial(f->pport);
	send_str(gone, "GET http://web.te");
	close(gone);
	int silent = dial(f->pport);
	long long t0 = clock_mono_ms();
	char buf[64];
	assert_int_equal(read_all(slow, buf, sizeof buf), 0); /* closed by the proxy */
	assert_int_equal(read_all(silent, buf, sizeof buf), 0);
	long long took = clock_mono_ms() - t0;
	assert_true(took >= 200 && took < 3000);
	close(slow);
	close(silent);
	stop_proxy(f);
	assert_int_equal(f->st.open_now, 0);
	assert_int_equal(n_evs, 0); /* no request, no decision */
}

static int setup_inspect(void **state)
{
	with_inspect = true;
	return setup(state);
}

static int setup_slow(void **state)
{
	head_ms = 300;
	return setup(state);
}

static int setup_short_connect(void **state)
{
	connect_ms = 300;
	return setup(state);
}

static void oversized_head(void **state)
{
	struct fx *f = *state;
	int fd = dial(f->pport);
	char *big = malloc(HTTP_HEAD_MAX + 100);
	memcpy(big, "GET http://web.test/ HTTP/1.1\r\nX: ", 34);
	memset(big + 34, 'a', HTTP_HEAD_MAX + 100 - 34);
	(void)send(fd, big, HTTP_HEAD_MAX + 100, MSG_NOSIGNAL);
	free(big);
	char resp[1024];
	read_all(fd, resp, sizeof resp);
	close(fd);
	assert_non_null(strstr(resp, "HTTP/1.1 431"));
}

/* ---- the names inside a tunnel (TLS server name, HTTP Host) */

static const uint8_t fb_alert[7] = {21, 3, 1, 0, 2, 2, 49}; /* fatal access_denied */

/* A ClientHello naming sni (NULL: none) with pad bytes of padding, in records of chunk bytes. */
static struct bytes *hello_stream(const char *sni, size_t pad, size_t chunk)
{
	struct bytes *e = calloc(1, sizeof *e), *m = calloc(1, sizeof *m), *s = calloc(1, sizeof *s);
	if (sni)
		ext_one(e, sni);
	if (pad)
		ext_empty(e, 21, pad);
	hello_msg(m, e);
	records(s, m->b, m->n, chunk);
	free(e);
	free(m);
	return s;
}

/* Send n bytes seg at a time, a moment apart (a client sending its hello in pieces). */
static void send_pieces(int fd, const uint8_t *b, size_t n, size_t seg)
{
	for (size_t at = 0; at < n; at += seg) {
		send_all(fd, b + at, n - at < seg ? n - at : seg);
		if (seg < n)
			usleep(1000);
	}
}

/* Through a tunnel to the echo server: a hello the proxy passes comes back whole; one it
 * refuses gets a TLS access_denied alert and the end, and never reaches the server. */
static bool hello_passes(int fd, const struct bytes *s, size_t seg)
{
	send_pieces(fd, s->b, s->n, seg);
	uint8_t *back = malloc(s->n + 64);
	size_t got = 0;
	while (got < s->n) {
		ssize_t k = recv(fd, back + got, s->n + 64 - got, 0);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	bool passed = got == s->n && !memcmp(back, s->b, s->n);
	if (!passed && (got != sizeof fb_alert || memcmp(back, fb_alert, got)))
		fail_msg("neither the hello echoed nor an alert: %zu bytes", got);
	free(back);
	close(fd);
	return passed;
}

static size_t count_denied_with(const char *a, const char *b)
{
	size_t k = 0;
	for (size_t i = 0; i < n_evs; i++)
		k += !evs[i].allowed && strstr(evs[i].rule, a) && (!b || strstr(evs[i].rule, b));
	return k;
}

static void tls_names_checked(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *sni;
		size_t pad, chunk, seg;
		bool pass;
	} cases[] = {
		{"ok.test", 0, 16384, 100000, true},
		{"OK.Test.", 0, 16384, 100000, true},   /* folded as the rules fold */
		{"evil.test", 0, 16384, 100000, false}, /* an allowed name, a foreign SNI */
		{NULL, 0, 16384, 100000, false},        /* no SNI */
		{"ok.test", 0, 7, 1, true},             /* records of 7, sent a byte at a time */
		{"evil.test", 0, 5, 3, false},
		{"ok.test", 20000, 16384, 4096, true},  /* a hello over one record */
		{"evil.test", 20000, 16384, 4096, false},
	};
	char hp[64], head[512];
	(void)snprintf(hp, sizeof hp, "ok.test:%u", f->echo.port);
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct bytes *s = hello_stream(cases[i].sni, cases[i].pad, cases[i].chunk);
		int fd = connect_via(f, hp, head, sizeof head);
		assert_non_null(strstr(head, " 200 "));
		if (hello_passes(fd, s, cases[i].seg) != cases[i].pass)
			fail_msg("case %zu (%s): %s", i, cases[i].sni ? cases[i].sni : "no SNI",
				 cases[i].pass ? "refused" : "passed");
		free(s);
	}
	/* SOCKS5 tunnels are checked alike */
	int fd = dial(f->pport);
	uint8_t req[64] = {5, 1, 0, 5, 1, 0, 3, 7}, rep[12];
	memcpy(req + 8, "ok.test", 7);
	req[15] = (uint8_t)(f->echo.port >> 8), req[16] = (uint8_t)f->echo.port;
	send_all(fd, req, 17);
	read_exact(fd, rep, 12);
	assert_int_equal(rep[3], 0);
	struct bytes *s = hello_stream("evil.test", 0, 16384);
	assert_false(hello_passes(fd, s, 100000));
	free(s);
	stop_proxy(f);
	assert_int_equal(count_denied_with("TLS server name evil.test does not match ok.test:", NULL),
			 4);
	assert_int_equal(count_denied_with("no TLS server name sent for ok.test:", NULL), 1);
	assert_int_equal(f->st.denied, 5);
	assert_int_equal(f->st.allowed, 4);
}

/* doc/design.md §4d: a tunnel to an inspected host is never relayed unread. With agentjail-tls
 * gone (its control socket closed, seen by the loop), the tunnel is refused, not passed. */
static void inspect_helper_gone(void **state)
{
	struct fx *f = *state;
	close(inspect_peer);
	inspect_peer = -1;
	usleep(200 * 1000); /* the loop reads the end of the control socket */
	char hp[64], head[512];
	(void)snprintf(hp, sizeof hp, "ok.test:%u", f->echo.port);
	struct bytes *s = hello_stream("ok.test", 0, 16384);
	int fd = connect_via(f, hp, head, sizeof head);
	assert_non_null(strstr(head, " 200 "));
	assert_false(hello_passes(fd, s, 100000));
	free(s);
	stop_proxy(f);
	assert_int_equal(count_denied_with("ok.test:", "the TLS inspector (agentjail-tls) is not "
						       "running"),
			 1);
}

/* A port that carries TLS only (443; here the echo server's, for the test) refuses what is
 * not TLS, garbage and an SSLv2 hello; on another port only what starts as TLS is read. */
static void tls_port_refuses_other_bytes(void **state)
{
	struct fx *f = *state;
	char hp[64], head[512], buf[64];
	(void)snprintf(hp, sizeof hp, "ok.test:%u", f->echo.port);
	int fd = connect_via(f, hp, head, sizeof head);
	echo_check(fd, "plain"); /* not TLS on a port that is not 443: goes on unread */
	close(fd);
	px_test_ports(f->echo.port, 0);
	static const struct {
		const char *b;
		size_t n;
	} junk[] = {{"plain", 5}, {"\x16\x03\x01\x00\x05\x02garbage", 13},
		    {"\x80\x2e\x01\x03\x01\x00\x15", 7}};
	for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
		fd = connect_via(f, hp, head, sizeof head);
		send_all(fd, junk[i].b, junk[i].n);
		size_t n = read_all(fd, buf, sizeof buf);
		if (n && (n != sizeof fb_alert || memcmp(buf, fb_alert, n)))
			fail_msg("junk %zu came back: %zu bytes", i, n);
		close(fd);
	}
	stop_proxy(f);
	assert_int_equal(count_denied_with("not TLS (this port carries TLS only)", NULL), 1);
	assert_int_equal(count_denied_with("cannot check", NULL), 2);
}

/* A port an allow entry names as TLS ("tls.test:PORT/tls") is judged as 443 is. */
static void tls_port_named_by_rule(void **state)
{
	struct fx *f = *state;
	char hp[64], head[512], buf[64];
	(void)snprintf(hp, sizeof hp, "tls.test:%u", f->echo.port);
	int fd = connect_via(f, hp, head, sizeof head);
	send_all(fd, "plain", 5);
	assert_int_equal(read_all(fd, buf, sizeof buf), 0); /* not TLS: closed, no alert */
	close(fd);
	struct bytes *s = hello_stream("evil.test", 0, 16384);
	assert_false(hello_passes(connect_via(f, hp, head, sizeof head), s, 100000));
	free(s);
	s = hello_stream("tls.test", 0, 16384);
	assert_true(hello_passes(connect_via(f, hp, head, sizeof head), s, 100000));
	free(s);
	stop_proxy(f);
	assert_int_equal(count_denied_with("not TLS (this port carries TLS only)", NULL), 1);
	assert_int_equal(count_denied_with("TLS server name evil.test does not match tls.test:", NULL),
			 1);
}

/* A record header that claims 16 KiB, then a trickle: refused when the wait ends. */
static void tls_hello_trickle(void **state)
{
	struct fx *f = *state;
	char hp[64], head[512], buf[64];
	(void)snprintf(hp, sizeof hp, "ok.test:%u", f->echo.port);
	int fd = connect_via(f, hp, head, sizeof head);
	long long t0 = clock_mono_ms();
	send_all(fd, "\x16\x03\x01\x40\x00\x01\x00\x3f", 8);
	for (int i = 0; i < 3; i++) {
		usleep(50000);
		send_all(fd, "\x03", 1);
	}
	size_t n = read_all(fd, buf, sizeof buf);
	long long took = clock_mono_ms() - t0;
	close(fd);
	assert_true(n == sizeof fb_alert && !memcmp(buf, fb_alert, n));
	assert_true(took >= 250 && took < 3000);
	stop_proxy(f);
	assert_int_equal(count_denied_with("part of a TLS ClientHello", NULL), 1);
}

/* Plain HTTP: a Host that is not the request's host is refused, through the proxy and inside a
 * tunnel to a port that carries HTTP (80; here the web server's). */
static void http_host_checked(void **state)
{
	struct fx *f = *state;
	char req[512], resp[2048], hp[64], head[512];
	int fd = dial(f->pport);
	(void)snprintf(req, sizeof req, "GET http://web.test:%u/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
		       f->web.port);
	send_str(fd, req);
	read_all(fd, resp, sizeof resp);
	close(fd);
	if (!strstr(resp, "HTTP/1.1 403") || !strstr(resp, "evil.test") || !strstr(resp, "web.test"))
		fail_msg("plain HTTP with a foreign Host: %s", resp);
	assert_int_equal(atomic_load(&f->web.accepted), 0);

	px_test_ports(0, f->web.port);
	(void)snprintf(hp, sizeof hp, "web.test:%u", f->web.port);
	fd = connect_via(f, hp, head, sizeof head);
	send_str(fd, "GET /x HTTP/1.1\r\nHost: evil.test\r\n\r\n");
	read_all(fd, resp, sizeof resp);
	close(fd);
	if (!strstr(resp, "HTTP/1.1 403") || !strstr(resp, "HTTP Host evil.test does not match"))
		fail_msg("a tunnel with a foreign Host: %s", resp);
	fd = connect_via(f, hp, head, sizeof head);
	send_str(fd, "GET /x HTTP/1.1\r\nHost: WEB.test\r\n\r\n");
	read_all(fd, resp, sizeof resp);
	close(fd);
	assert_non_null(strstr(resp, "\r\n\r\nhi"));
	assert_null(strstr(f->web.head, "evil"));
	stop_proxy(f);
	assert_int_equal(count_denied_with("HTTP Host evil.test does not match web.test:", NULL), 2);
}

/* ---- DNS */

static size_t dns_query_msg(uint8_t *buf, uint16_t id, const char *name, uint16_t type)
{
	size_t n = 0;
	buf[n++] = (uint8_t)(id >> 8), buf[n++] = (uint8_t)id;
	buf[n++] = 1, buf[n++] = 0;           /* RD */
	buf[n++] = 0, buf[n++] = 1;           /* QDCOUNT */
	memset(buf + n, 0, 6);
	n += 6;
	const char *p = name;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		buf[n++] = (uint8_t)l;
		memcpy(buf + n, p, l);
		n += l;
		p += l + (dot ? 1 : 0);
	}
	buf[n++] = 0;
	buf[n++] = (uint8_t)(type >> 8), buf[n++] = (uint8_t)type;
	buf[n++] = 0, buf[n++] = 1;
	return n;
}

static int dns_rcode(const uint8_t *r) { return r[3] & 0xf; }
static int dns_ancount(const uint8_t *r) { return r[6] << 8 | r[7]; }

static ssize_t udp_ask(struct fx *f, const char *name, uint16_t type, uint8_t *resp, size_t cap)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(f->udp_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint8_t q[300];
	size_t n = dns_query_msg(q, 0x1234, name, type);
	assert_int_equal(sendto(fd, q, n, 0, (struct sockaddr *)&sa, sizeof sa), (ssize_t)n);
	struct timeval tv = {.tv_sec = 5};
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	ssize_t k = recv(fd, resp, cap, 0);
	close(fd);
	assert_true(k >= 12);
	assert_int_equal(resp[0], 0x12);
	assert_int_equal(resp[1], 0x34);
	return k;
}

static void dns_udp(void **state)
{
	struct fx *f = *state;
	uint8_t r[512];
	ssize_t n = udp_ask(f, "OK.test", DNS_T_A, r, sizeof r);
	assert_int_equal(dns_rcode(r), DNS_NOERROR);
	assert_int_equal(dns_ancount(r), 1);
	/* not its mapping (127.0.0.1) but the stub's own address for the name, the first */
	assert_memory_equal(r + n - 4, "\xc6\x12\x00\x01", 4);
	n = udp_ask(f, "ok.test", DNS_T_AAAA, r, sizeof r);
	assert_int_equal(dns_rcode(r), DNS_NOERROR);
	assert_int_equal(dns_ancount(r), 0);
	n = udp_ask(f, "v6.wild.test", DNS_T_AAAA, r, sizeof r);
	assert_int_equal(dns_ancount(r), 1);
	assert_memory_equal(r + n - 16, "\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\2", 16); /* 100::2 */
	(void)udp_ask(f, "evil.test", DNS_T_A, r, sizeof r);
	assert_int_equal(dns_rcode(r), DNS_NXDOMAIN);
	(void)udp_ask(f, "bad.wild.test", DNS_T_A, r, sizeof r);
	assert_int_equal(dns_rcode(r), DNS_NXDOMAIN);
	/* an allowed name the resolver says is loopback: the address is not told */
	(void)udp_ask(f, "res.test", DNS_T_A, r, sizeof r);
	assert_int_equal(dns_rcode(r), DNS_NOERROR);
	assert_int_equal(dns_ancount(r), 0);
	assert_true(atomic_load(&f->dns.queries) >= 1);
	stop_proxy(f);
	const struct net_event *ev = find_event("evil.test");
	assert_non_null(ev);
	assert_int_equal(ev->proto, NP_DNS);
	assert_false(ev->allowed);
	ev = find_event("ok.test");
	assert_non_null(ev);
	assert_true(ev->allowed);
	assert_string_equal(ev->addr, "127.0.0.1"); /* the event keeps the real address */
}

static void dns_tcp(void **state)
{
	struct fx *f = *state;
	int fd = dial(f->tcpdns_port);
	uint8_t q[600];
	/* two queries in one write: answered in order on the one connection */
	size_t n1 = dns_query_msg(q + 2, 1, "ok.test", DNS_T_A);
	q[0] = 0, q[1] = (uint8_t)n1;
	size_t n2 = dns_query_msg(q + 4 + n1, 2, "evil.test", DNS_T_A);
	q[2 + n1] = 0, q[3 + n1] = (uint8_t)n2;
	send_all(fd, q, n1 + n2 + 4);
	uint8_t len[2], r[512];
	read_exact(fd, len, 2);
	size_t l = (size_t)len[0] << 8 | len[1];
	assert_true(l <= sizeof r);
	read_exact(fd, r, l);
	assert_int_equal(r[1], 1);
	assert_int_equal(dns_rcode(r), DNS_NOERROR);
	assert_int_equal(dns_ancount(r), 1);
	assert_memory_equal(r + l - 4, "\xc6\x12\x00\x01", 4); /* 198.18.0.1 */
	read_exact(fd, len, 2);
	l = (size_t)len[0] << 8 | len[1];
	read_exact(fd, r, l);
	assert_int_equal(r[1], 2);
	assert_int_equal(dns_rcode(r), DNS_NXDOMAIN);
	close(fd);
}

/* A message sent as is to the UDP stub; its answer in resp (0 when none came within 1 s). */
static ssize_t udp_raw(struct fx *f, const uint8_t *q, size_t n, uint8_t *resp, size_t cap)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(f->udp_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(sendto(fd, q, n, 0, (struct sockaddr *)&sa, sizeof sa), (ssize_t)n);
	struct timeval tv = {.tv_sec = 1};
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	ssize_t k = recv(fd, resp, cap, 0);
	close(fd);
	return k < 0 ? 0 : k;
}

static const struct net_event *find_rule(const char *rule)
{
	for (size_t i = 0; i < n_evs; i++)
		if (!strcmp(evs[i].rule, rule))
			return &evs[i];
	return NULL;
}

/* Malformed requests are recorded as what they are (no host, the reason in the rule, denied),
 * the root as ".", and a non-standard opcode answered NOTIMP (issue 24 item 7). */
static void dns_malformed(void **state)
{
	struct fx *f = *state;
	uint8_t q[300], r[512];
	size_t n = dns_query_msg(q, 0x1234, "ok.test", DNS_T_A);
	q[5] = 2; /* two questions */
	assert_true(udp_raw(f, q, n, r, sizeof r) >= 12);
	int two = dns_rcode(r);
	q[5] = 1;
	q[2] = 0x01 | (2 << 3); /* opcode STATUS */
	assert_true(udp_raw(f, q, n, r, sizeof r) >= 12);
	int status = dns_rcode(r);
	assert_int_equal(udp_raw(f, q, 5, r, sizeof r), 0); /* a runt: no answer */
	(void)udp_ask(f, "", DNS_T_A, r, sizeof r);      /* the root */
	int root = dns_rcode(r);
	stop_proxy(f);
	const struct net_event *ev = find_rule("malformed DNS request: not exactly one question");
	assert_non_null(ev);
	assert_int_equal(ev->proto, NP_DNS);
	assert_string_equal(ev->host, "");
	assert_int_equal(ev->port, 0);
	assert_false(ev->allowed);
	assert_true(net_event_malformed(ev));
	ev = find_rule("malformed DNS request: not a standard query (opcode is not 0)");
	assert_non_null(ev);
	assert_true(net_event_malformed(ev));
	assert_non_null(find_rule("malformed DNS request: shorter than a DNS header"));
	ev = find_event(".");
	assert_non_null(ev);
	assert_false(ev->allowed);
	assert_false(net_event_malformed(ev));
	assert_int_equal(two, DNS_FORMERR);
	assert_int_equal(status, DNS_NOTIMP);
	assert_int_equal(root, DNS_NXDOMAIN);
}

/* ---- many tunnels at once */

static void thousand_tunnels(void **state)
{
	struct fx *f = *state;
	enum { N = 1000 };
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 9000) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
		if (rl.rlim_cur < 9000)
			skip(); /* the test process holds both ends: ~9 fds per tunnel */
	}
	static int fds[N];
	char req[128];
	(void)snprintf(req, sizeof req, "CONNECT ok.test:%u HTTP/1.1\r\n\r\n", f->echo.port);
	for (int i = 0; i < N; i++) {
		fds[i] = dial(f->pport);
		send_str(fds[i], req);
	}
	for (int i = 0; i < N; i++) {
		char head[256];
		read_head(fds[i], head, sizeof head);
		assert_non_null(strstr(head, " 200 "));
	}
	for (int i = 0; i < N; i++) {
		char msg[16];
		(void)snprintf(msg, sizeof msg, "t%04d", i);
		echo_check(fds[i], msg);
	}
	assert_int_equal(atomic_load(&f->echo.accepted), N);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	/* each tunnel's event comes when it has ended (the writer delivers within a second) */
	long long t0 = clock_mono_ms();
	for (;;) {
		pthread_mutex_lock(&ev_mu);
		size_t n = n_evs;
		pthread_mutex_unlock(&ev_mu);
		if (n >= N || clock_mono_ms() - t0 > 20000)
			break;
		usleep(20000);
	}
	stop_proxy(f);
	assert_true(batches >= 1);
	assert_int_equal(f->st.allowed, N);
	assert_int_equal(f->st.events_dropped, 0);
	assert_int_equal(n_evs, N);
}

static double cpu_ms(void)
{
	struct rusage ru;
	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* Out of fds: the listener rests instead of spinning, and the waiting client is served once
 * fds are free again. */
static void out_of_fds(void **state)
{
	struct fx *f = *state;
	struct rlimit saved, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	low = saved;
	low.rlim_cur = 3; /* below what is open: every new fd fails with EMFILE */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(f->pport),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	double c0 = cpu_ms();
	usleep(500000);
	double used = cpu_ms() - c0;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	if (used > 150)
		fail_msg("the proxy used %.0f ms of CPU in 500 ms while out of fds", used);
	char req[128], head[256];
	(void)snprintf(req, sizeof req, "CONNECT ok.test:%u HTTP/1.1\r\n\r\n", f->echo.port);
	send_str(fd, req);
	struct timeval tv = {.tv_sec = 5};
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	read_head(fd, head, sizeof head);
	assert_non_null(strstr(head, " 200 "));
	close(fd);
}

/* The proxy's threads take no signal: a process-directed one goes to a thread that takes it
 * (here the main thread, waiting in sigwait as launch's signalfd would). */
static void threads_block_signals(void **state)
{
	struct fx *f = *state;
	char path[300], line[256];
	DIR *d = opendir("/proc/self/task");
	assert_non_null(d);
	struct dirent *de;
	int checked = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == getpid())
			continue;
		(void)snprintf(path, sizeof path, "/proc/self/task/%s/status", de->d_name);
		FILE *fp = fopen(path, "re");
		if (!fp)
			continue;
		unsigned long long blk = 0;
		char name[32] = "", st = '?';
		while (fgets(line, sizeof line, fp)) {
			if (!strncmp(line, "SigBlk:", 7))
				blk = strtoull(line + 7, NULL, 16);
			if (!strncmp(line, "Name:", 5))
				(void)sscanf(line + 5, "%31s", name);
			if (!strncmp(line, "State:", 6))
				(void)sscanf(line + 6, " %c", &st);
		}
		fclose(fp);
		/* the proxy's two threads (not one of an earlier test's, still going away) */
		if (!strncmp(name, "aj-proxy", 8) && st != 'Z' && st != 'X') {
			int sigs[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP, SIGUSR1};
			for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
				assert_true(blk & (1ULL << (sigs[i] - 1)));
			checked++;
		}
	}
	closedir(d);
	(void)f;
	assert_int_equal(checked, 2);
}

/* ---- --net ask */

static struct proxy_ask ask_cfg = {.timeout_s = 30, .asked = on_asked, .settled = on_settled};

static int setup_ask(void **state)
{
	test_ask = &ask_cfg;
	ask_cfg.timeout_s = 30;
	return setup(state);
}

static int setup_ask_short(void **state)
{
	test_ask = &ask_cfg;
	ask_cfg.timeout_s = 1;
	return setup(state);
}

/* Wait until the proxy asked n questions; the last one. */
static struct net_question wait_asked(int n)
{
	long long t0 = clock_mono_ms();
	for (;;) {
		pthread_mutex_lock(&ev_mu);
		int k = n_asked;
		struct net_question q = k ? asked_q[k - 1] : (struct net_question){0};
		pthread_mutex_unlock(&ev_mu);
		if (k >= n)
			return q;
		if (clock_mono_ms() - t0 > 5000)
			fail_msg("%d questions asked, %d expected", k, n);
		usleep(2000);
	}
}

/* Nothing came on fd within ms. */
static void quiet_for(int fd, int ms)
{
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	assert_int_equal(poll(&pf, 1, ms), 0);
}

/* A CONNECT to a name not on the list waits for the answer; once lets it through and the next
 * one is asked again; session lets the later ones through unasked; deny refuses it and the
 * later ones at once. The literal allowed when asked reaches its loopback server (as an
 * --allow-domain of it would). */
static void ask_connect_answers(void **state)
{
	struct fx *f = *state;
	char hp[64], req[256], head[1024];
	(void)snprintf(hp, sizeof hp, "127.0.0.1:%u", f->echo.port);
	(void)snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hp, hp);
	int fd = dial(f->pport);
	send_str(fd, req);
	struct net_question q = wait_asked(1);
	(void)snprintf(head, sizeof head, "127.0.0.1:%u", f->echo.port);
	assert_string_equal(q.entry, head);
	assert_string_equal(q.host, "127.0.0.1");
	assert_int_equal(q.port, f->echo.port);
	assert_string_equal(q.proto, "connect");
	assert_true(q.deadline_ms - q.asked_ms == 30000);
	quiet_for(fd, 150); /* held */
	proxy_answer(f->p, q.id, NULL, ASK_ONCE, "the test");
	read_head(fd, head, sizeof head);
	assert_non_null(strstr(head, " 200 "));
	echo_check(fd, "allowed once");
	close(fd);
	/* once: the next one is asked again */
	fd = dial(f->pport);
	send_str(fd, req);
	q = wait_asked(2);
	quiet_for(fd, 50);
	proxy_answer(f->p, q.id, NULL, ASK_SESSION, "the test");
	read_head(fd, head, sizeof head);
	assert_non_null(strstr(head, " 200 "));
	close(fd);
	/* session: not asked any more */
	fd = connect_via(f, hp, head, sizeof head);
	assert_non_null(strstr(head, " 200 "));
	close(fd);
	assert_int_equal(n_asked, 2);
	/* deny, and for the session */
	(void)snprintf(hp, sizeof hp, "127.0.0.1:%u", f->web.port);
	(void)snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hp, hp);
	fd = dial(f->pport);
	send_str(fd, req);
	q = wait_asked(3);
	proxy_answer(f->p, q.id, NULL, ASK_DENY, "the test");
	char resp[1024];
	read_all(fd, resp, sizeof resp);
	close(fd);
	assert_non_null(strstr(resp, "HTTP/1.1 403"));
	assert_non_null(strstr(resp, "was denied when asked (the test)"));
	fd = connect_via(f, hp, head, sizeof head);
	assert_non_null(strstr(head, " 403 "));
	close(fd);
	assert_int_equal(n_asked, 3);
	assert_int_equal(atomic_load(&f->web.accepted), 0);
	stop_proxy(f);
	assert_int_equal(n_settled, 3);
	assert_int_equal(settled_a[0], ASK_ONCE);
	assert_int_equal(settled_a[2], ASK_DENY);
	assert_int_equal(count_denied_with("was denied when asked", NULL), 2);
}

/* Requests for one entry share one question; a deny entry is never asked; a name allowed at
 * other ports is asked for this one; an answer by entry (agentjail net allow) also covers the
 * requests to come. */
static void ask_shared_and_by_entry(void **state)
{
	struct fx *f = *state;
	char hp[64], req[256], head[1024];
	int fd = connect_via(f, "bad.wild.test:443", head, sizeof head);
	assert_non_null(strstr(head, " 403 "));
	close(fd);
	assert_int_equal(n_asked, 0);
	(void)snprintf(hp, sizeof hp, "ok.test:%u", f->web.port); /* ok.test: another port only */
	(void)snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hp, hp);
	int a = dial(f->pport), b = dial(f->pport);
	send_str(a, req);
	send_str(b, req);
	struct net_question q = wait_asked(1);
	assert_string_equal(q.entry, hp);
	usleep(100000);
	assert_int_equal(n_asked, 1); /* the second joined the first */
	proxy_answer(f->p, 0, hp, ASK_SESSION, "agentjail net allow");
	read_head(a, head, sizeof head);
	assert_non_null(strstr(head, " 200 "));
	read_head(b, head, sizeof head);
	assert_non_null(strstr(head, " 200 "));
	close(a);
	close(b);
	/* by entry with nothing asked: for the requests to come */
	(void)snprintf(hp, sizeof hp, "127.0.0.1:%u", f->echo.port);
	proxy_answer(f->p, 0, hp, ASK_SESSION, "agentjail net allow");
	usleep(50000);
	fd = connect_via(f, hp, head, sizeof head);
	if (!strstr(head, " 200 "))
		fail_msg("allowed ahead: %s", head);
	echo_check(fd, "allowed ahead");
	close(fd);
	assert_int_equal(n_asked, 1);
	stop_proxy(f);
}

/* No answer in time: denied, saying so; a client that leaves while asked costs nothing. */
static void ask_timeout_and_leaving(void **state)
{
	struct fx *f = *state;
	char hp[64], req[256], resp[1024];
	(void)snprintf(hp, sizeof hp, "127.0.0.1:%u", f->echo.port);
	(void)snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hp, hp);
	int gone = dial(f->pport);
	send_str(gone, req);
	(void)wait_asked(1);
	close(gone);
	int fd = dial(f->pport);
	long long t0 = clock_mono_ms();
	send_str(fd, req);
	read_all(fd, resp, sizeof resp);
	long long took = clock_mono_ms() - t0;
	close(fd);
	assert_non_null(strstr(resp, "HTTP/1.1 403"));
	assert_non_null(strstr(resp, "no answer within 1 s"));
	assert_true(took >= 500 && took < 3000);
	stop_proxy(f);
	assert_int_equal(n_asked, 1);
	assert_true(n_settled >= 1);
	assert_true(settled_timeout[0]);
}

/* A lookup is asked at once (the DNS stub is the first to see a name); allowed once, the
 * lookup is answered and the connection that follows it is not asked again. */
static void ask_at_lookup(void **state)
{
	struct fx *f = *state;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(f->udp_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint8_t qm[300], r[512];
	size_t n = dns_query_msg(qm, 0x1234, "asked.test", DNS_T_A);
	assert_int_equal(sendto(fd, qm, n, 0, (struct sockaddr *)&sa, sizeof sa), (ssize_t)n);
	struct net_question q = wait_asked(1);
	assert_string_equal(q.entry, "asked.test");
	assert_int_equal(q.port, 0);
	assert_string_equal(q.proto, "dns");
	quiet_for(fd, 100);
	proxy_answer(f->p, q.id, NULL, ASK_ONCE, "the test");
	struct timeval tv = {.tv_sec = 5};
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	assert_true(recv(fd, r, sizeof r, 0) >= 12);
	close(fd);
	assert_int_equal(dns_rcode(r), DNS_NOERROR); /* resolved (its loopback address not told) */
	char head[1024];
	fd = connect_via(f, "asked.test:443", head, sizeof head);
	close(fd);
	assert_int_equal(n_asked, 1); /* the lookup's answer holds for its connection */
	stop_proxy(f);
}

/* Stopping while requests wait: they are refused, nothing leaks. */
static void ask_stop_while_waiting(void **state)
{
	struct fx *f = *state;
	int fd = dial(f->pport);
	send_str(fd, "CONNECT waiting.test:443 HTTP/1.1\r\nHost: waiting.test:443\r\n\r\n");
	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(f->udp_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint8_t qm[300];
	size_t n = dns_query_msg(qm, 7, "other.test", DNS_T_A);
	assert_int_equal(sendto(u, qm, n, 0, (struct sockaddr *)&sa, sizeof sa), (ssize_t)n);
	(void)wait_asked(2);
	proxy_stop(f->p, &f->st);
	f->p = NULL;
	close(fd);
	close(u);
	f->st.open_now = 0; /* the held one was open: seen */
}

/* Two connections open: *a a tunnel, *b a client in the middle of its head. */
static void open_two(struct fx *f, int *a, int *b)
{
	char hp[64], head[1024];
	(void)snprintf(hp, sizeof hp, "ok.test:%u", f->echo.port);
	*a = connect_via(f, hp, head, sizeof head);
	*b = dial(f->pport);
	send_str(*b, "CONN");
	while (px_test_open(f->p) < 2)
		usleep(5000);
}

/* Stopping with tunnels open closes them and still delivers their events. */
static void stop_with_open_tunnels(void **state)
{
	struct fx *f = *state;
	char buf[8];
	int a, b;
	open_two(f, &a, &b);
	proxy_stop(f->p, &f->st);
	f->p = NULL;
	assert_int_equal(f->st.open_now, 2);
	assert_int_equal(read_all(a, buf, sizeof buf), 0);
	assert_int_equal(n_evs, 1);
	close(a);
	close(b);
	f->st.open_now = 0; /* seen; the fixture checks the fds */
}


/* ---------------------------------------------------------------- a loopback leg's buffers */

/* The socket of this process whose peer is exactly sa (an IPv4 address), or -1. */
static int sock_with_peer(const struct sockaddr_in *sa)
{
	for (int fd = 0; fd < 1024; fd++) {
		struct sockaddr_in p;
		socklen_t len = sizeof p;
		if (getpeername(fd, (struct sockaddr *)&p, &len) == 0 && p.sin_family == AF_INET &&
		    p.sin_port == sa->sin_port && p.sin_addr.s_addr == sa->sin_addr.s_addr)
			return fd;
	}
	return -1;
}

static long sysctl_long(const char *path, int field)
{
	FILE *fp = fopen(path, "re");
	assert_non_null(fp);
	long v[3] = {0};
	assert_true(fscanf(fp, "%ld %ld %ld", &v[0], &v[1], &v[2]) >= field + 1);
	fclose(fp);
	return v[field];
}

static void cc_of(int fd, char *name, size_t cap)
{
	socklen_t len = (socklen_t)cap - 1;
	memset(name, 0, cap);
	assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len), 0);
}

/* What SO_SNDBUF or SO_RCVBUF reads back once the proxy set 512 KiB: twice that, or twice
 * the cap (max: net.core.wmem_max or rmem_max). */
static int tuned_buf(const char *max)
{
	long m = sysctl_long(max, 0);
	return 2 * (int)(m < 524288 ? m : 524288);
}

/* What the proxy set on a loopback leg (doc/design.md §7, the proxy's buffers): fixed buffers
 * of 512 KiB (doubled by the kernel, capped by net.core.[wr]mem_max) and Reno. */
static void assert_tuned(int fd, const char *which)
{
	int snd = 0, rcv = 0;
	socklen_t len = sizeof snd;
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, &len), 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, &len), 0);
	char cc[32];
	cc_of(fd, cc, sizeof cc);
	if (snd != tuned_buf("/proc/sys/net/core/wmem_max") ||
	    rcv != tuned_buf("/proc/sys/net/core/rmem_max") || strcmp(cc, "reno"))
		fail_msg("%s leg: SO_SNDBUF %d, SO_RCVBUF %d, %s; want twice 512 KiB (or the cap) "
			 "and reno", which, snd, rcv, cc);
}

/* A download's legs on the loopback (the client's, and an upstream that is a server of this
 * host's) get bounded buffers: autotuned, the bytes queued behind a slower reader went cold. */
static void loopback_legs_tuned(void **state)
{
	struct fx *f = *state;
	char hp[64], head[1024];
	(void)snprintf(hp, sizeof hp, "ok.test:%u", f->echo.port);
	int fd = connect_via(f, hp, head, sizeof head);
	assert_non_null(strstr(head, "HTTP/1.1 200"));
	echo_check(fd, "hello");
	struct sockaddr_in me, up = {.sin_family = AF_INET, .sin_port = htons(f->echo.port),
				     .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof me;
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &len), 0);
	int jail_side = sock_with_peer(&me), upstream = sock_with_peer(&up);
	assert_true(jail_side >= 0 && upstream >= 0);
	assert_tuned(jail_side, "the client's");
	assert_tuned(upstream, "the upstream's");
	close(fd);
}

/* An IPv4 address of this host that is not the loopback, or false. */
static bool other_addr(struct sockaddr_in *out)
{
	struct ifaddrs *ifs;
	if (getifaddrs(&ifs) < 0)
		return false;
	bool found = false;
	for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
		    !(i->ifa_flags & IFF_LOOPBACK)) {
			memcpy(out, i->ifa_addr, sizeof *out);
			found = true;
		}
	freeifaddrs(ifs);
	return found;
}

/* A server that is not on the loopback (here: this host's other address, allowed by its
 * literal) keeps the kernel's autotuning and congestion control: its window is its
 * throughput. The client's leg is still bounded. */
static void remote_leg_untouched(void **state)
{
	struct fx *f = *state;
	struct sockaddr_in sa;
	if (!other_addr(&sa)) {
		print_message("# skip: this host has no IPv4 address but the loopback\n");
		return;
	}
	sa.sin_port = 0;
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof sa;
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(lfd, 8), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
	stop_proxy(f); /* a proxy of this test's own: one rule, the literal */
	char a[INET_ADDRSTRLEN], spec[64], head[1024];
	assert_non_null(inet_ntop(AF_INET, &sa.sin_addr, a, sizeof a));
	(void)snprintf(spec, sizeof spec, "%s:%u", a, ntohs(sa.sin_port));
	struct strv allow = STRV_INIT;
	strv_push(&allow, spec);
	struct netrules rules;
	struct err e = {0};
	struct proxy *p;
	uint16_t pport;
	struct proxy_listeners l = {.tcp4 = listen_on(SOCK_STREAM, &pport), .tcp6 = -1,
				    .dns_udp = -1, .dns_tcp = -1, .inspect_fd = -1};
	assert_int_equal(netrules_build(&allow, NULL, NULL, &rules, &e), 0);
	if (proxy_start(&l, &rules, NULL, sink, NULL, &p, &e) < 0)
		fail_msg("proxy_start: %s", e.what);
	int fd = dial(pport);
	char req[128];
	(void)snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\n\r\n", spec);
	send_str(fd, req);
	read_head(fd, head, sizeof head);
	assert_non_null(strstr(head, "HTTP/1.1 200"));
	struct sockaddr_in me;
	len = sizeof me;
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &len), 0);
	int jail_side = sock_with_peer(&me), upstream = sock_with_peer(&sa);
	assert_true(jail_side >= 0 && upstream >= 0);
	assert_tuned(jail_side, "the client's");
	int rcv = 0, snd = 0;
	len = sizeof rcv;
	assert_int_equal(getsockopt(upstream, SOL_SOCKET, SO_RCVBUF, &rcv, &len), 0);
	assert_int_equal(getsockopt(upstream, SOL_SOCKET, SO_SNDBUF, &snd, &len), 0);
	if (rcv == tuned_buf("/proc/sys/net/core/rmem_max") ||
	    snd == tuned_buf("/proc/sys/net/core/wmem_max"))
		fail_msg("the remote upstream's buffers were fixed: SO_RCVBUF %d, SO_SNDBUF %d", rcv,
			 snd);
	char cc[32], want[32] = {0};
	cc_of(upstream, cc, sizeof cc);
	FILE *fp = fopen("/proc/sys/net/ipv4/tcp_congestion_control", "re");
	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%31s", want), 1);
	fclose(fp);
	assert_string_equal(cc, want);
	close(fd);
	proxy_stop(p, NULL);
	netrules_free(&rules);
	strv_free(&allow);
	close(lfd);
}

/* proxy_stop_begin (the jail is gone): the proxy closes its tunnels on its own threads without
 * waiting for proxy_stop, a second call does nothing, and proxy_stop then waits for that work
 * and reports it as if it had done it (the open tunnels, their events). */
static void stop_begun_before_stop(void **state)
{
	struct fx *f = *state;
	char buf[8];
	int a, b;
	open_two(f, &a, &b);
	proxy_stop_begin(f->p);
	proxy_stop_begin(f->p);
	assert_int_equal(read_all(a, buf, sizeof buf), 0); /* closed before proxy_stop */
	assert_int_equal(read_all(b, buf, sizeof buf), 0);
	proxy_stop(f->p, &f->st);
	f->p = NULL;
	assert_int_equal(f->st.open_now, 2);
	assert_int_equal(n_evs, 1);
	close(a);
	close(b);
	f->st.open_now = 0; /* seen; the fixture checks the fds */
	proxy_stop_begin(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(connect_tunnel, setup, teardown),
		cmocka_unit_test_setup_teardown(connect_pipelined_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(ipv6_listener, setup, teardown),
		cmocka_unit_test_setup_teardown(plain_http_one_host, setup, teardown),
		cmocka_unit_test_setup_teardown(socks5_tunnel, setup, teardown),
		cmocka_unit_test_setup_teardown(socks5_denied, setup, teardown),
		cmocka_unit_test_setup_teardown(http_denials, setup, teardown),
		cmocka_unit_test_setup_teardown(resolved_loopback_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(upstream_refused_502, setup, teardown),
		cmocka_unit_test_setup_teardown(upstream_timeout_504, setup_short_connect, teardown),
		cmocka_unit_test_setup_teardown(half_close, setup, teardown),
		cmocka_unit_test_setup_teardown(loopback_legs_tuned, setup, teardown),
		cmocka_unit_test_setup_teardown(remote_leg_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(slow_and_vanishing_clients, setup_slow, teardown),
		cmocka_unit_test_setup_teardown(oversized_head, setup, teardown),
		cmocka_unit_test_setup_teardown(dns_udp, setup, teardown),
		cmocka_unit_test_setup_teardown(dns_tcp, setup, teardown),
		cmocka_unit_test_setup_teardown(dns_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(thousand_tunnels, setup, teardown),
		cmocka_unit_test_setup_teardown(out_of_fds, setup, teardown),
		cmocka_unit_test_setup_teardown(threads_block_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(stop_with_open_tunnels, setup, teardown),
		cmocka_unit_test_setup_teardown(stop_begun_before_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(tls_names_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(inspect_helper_gone, setup_inspect, teardown),
		cmocka_unit_test_setup_teardown(tls_port_refuses_other_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(tls_port_named_by_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(tls_hello_trickle, setup_slow, teardown),
		cmocka_unit_test_setup_teardown(http_host_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(ask_connect_answers, setup_ask, teardown),
		cmocka_unit_test_setup_teardown(ask_shared_and_by_entry, setup_ask, teardown),
		cmocka_unit_test_setup_teardown(ask_timeout_and_leaving, setup_ask_short, teardown),
		cmocka_unit_test_setup_teardown(ask_at_lookup, setup_ask, teardown),
		cmocka_unit_test_setup_teardown(ask_stop_while_waiting, setup_ask, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
