/* bench/proxy: the egress proxy engine (doc/design.md §4) on host loopback, no jail.
 * - throughput: one CONNECT stream through the proxy vs direct loopback TCP to the same sink,
 *   alternating, ROUNDS pairs of MIB MiB each; the ratio of the median times (goal >= 0.8);
 * - connection setup: time to the first echoed byte through a CONNECT tunnel vs a direct
 *   connection, alternating; the added median (goal <= 0.2 ms);
 * - memory: the proxy process's RSS with 1,000 tunnels open (goal <= 16 MiB).
 * The proxy runs in a child process (its RSS is what is measured); the stand-in servers run
 * in threads of this one.
 * usage: proxy [ROUNDS] [MIB] */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"
#include "core/net/proxy.h"
#include "util/strv.h"

#define TUNNELS 1000

static void die(const char *what)
{
	fprintf(stderr, "proxy bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int listen_tcp(uint16_t *port)
{
	int fd = bench_listen_lo(port);
	if (fd < 0)
		die("listen");
	return fd;
}

static int dial(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		die("connect");
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

static void send_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k <= 0)
			die("send");
		p += k;
		n -= (size_t)k;
	}
}

/* Read the CONNECT reply's head, as a client does: in as few reads as it comes in (nothing
 * follows it until the client sends). */
static void read_head(int fd)
{
	char buf[512];
	size_t n = 0;
	while (n < sizeof buf) {
		ssize_t k = recv(fd, buf + n, sizeof buf - n, 0);
		if (k <= 0)
			die("reading the CONNECT reply");
		n += (size_t)k;
		if (n >= 4 && !memcmp(buf + n - 4, "\r\n\r\n", 4))
			break;
	}
	if (n < 12 || memcmp(buf + 9, "200", 3)) {
		fprintf(stderr, "proxy bench: CONNECT refused: %.*s\n", (int)n, buf);
		exit(1);
	}
}

static int tunnel(uint16_t proxy_port, const char *host, uint16_t port)
{
	int fd = dial(proxy_port);
	char req[128];
	int n = snprintf(req, sizeof req, "CONNECT %s:%u HTTP/1.1\r\n\r\n", host, port);
	send_all(fd, req, (size_t)n);
	read_head(fd);
	return fd;
}

/* ---- servers: a sink (reads to EOF, then closes) and an echo, one epoll thread each */

struct server {
	int lfd;
	uint16_t port;
	bool echo;
};

static void *serve(void *arg)
{
	struct server *s = arg;
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = s->lfd};
	(void)epoll_ctl(ep, EPOLL_CTL_ADD, s->lfd, &ev);
	static __thread char buf[1 << 18];
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, -1);
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == s->lfd) {
				int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
				if (c < 0)
					continue;
				int one = 1;
				(void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
				struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
				(void)epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
				continue;
			}
			ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
			if (k > 0 && s->echo)
				send_all(fd, buf, (size_t)k);
			else if (k == 0 || (k < 0 && errno != EAGAIN))
				close(fd);
		}
	}
	return NULL;
}

/* ---- measurements */

static double stream(int fd, size_t mib)
{
	static char buf[1 << 18];
	double t0 = now_ms();
	size_t total = mib << 20;
	for (size_t sent = 0; sent < total; sent += sizeof buf)
		send_all(fd, buf, sizeof buf);
	(void)shutdown(fd, SHUT_WR);
	char c;
	while (recv(fd, &c, 1, 0) > 0) /* the sink closes once it has read everything */
		;
	double t = now_ms() - t0;
	close(fd);
	return t;
}

static double first_byte(int fd, double t0)
{
	char c = 'x';
	send_all(fd, &c, 1);
	if (recv(fd, &c, 1, 0) != 1)
		die("echo");
	double t = now_ms() - t0;
	close(fd);
	return t;
}

static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	(void)snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	long kib = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 256;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct server sink = {.echo = false}, echo = {.echo = true};
	sink.lfd = listen_tcp(&sink.port);
	echo.lfd = listen_tcp(&echo.port);
	uint16_t pport;
	int plfd = listen_tcp(&pport);
	int ctl[2];
	if (pipe2(ctl, O_CLOEXEC) < 0)
		die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(ctl[1]);
		close(sink.lfd);
		close(echo.lfd);
		char spec[64];
		struct strv allow = STRV_INIT, deny = STRV_INIT, map = STRV_INIT;
		(void)snprintf(spec, sizeof spec, "sink.test:%u", sink.port);
		strv_push(&allow, spec);
		(void)snprintf(spec, sizeof spec, "echo.test:%u", echo.port);
		strv_push(&allow, spec);
		strv_push(&map, "sink.test=127.0.0.1");
		strv_push(&map, "echo.test=127.0.0.1");
		struct netrules rules;
		struct err e = {0};
		struct proxy *p;
		struct proxy_listeners l = {.tcp4 = plfd, .tcp6 = -1, .dns_udp = -1, .dns_tcp = -1,
					    .inspect_fd = -1};
		if (netrules_build(&allow, &deny, &map, &rules, &e) < 0 ||
		    proxy_start(&l, &rules, NULL, NULL, NULL, &p, &e) < 0) {
			fprintf(stderr, "proxy bench: %s\n", e.what);
			_exit(1);
		}
		char c;
		while (read(ctl[0], &c, 1) > 0) /* until the parent closes its end */
			;
		proxy_stop(p, NULL);
		netrules_free(&rules);
		strv_free(&allow);
		strv_free(&map);
		_exit(0);
	}
	close(ctl[0]);
	close(plfd);
	pthread_t t1, t2;
	if (pthread_create(&t1, NULL, serve, &sink) || pthread_create(&t2, NULL, serve, &echo))
		die("pthread_create");

	/* throughput */
	double *direct = calloc((size_t)rounds, sizeof(double));
	double *proxied = calloc((size_t)rounds, sizeof(double));
	(void)stream(dial(sink.port), 16); /* warm up both paths */
	(void)stream(tunnel(pport, "sink.test", sink.port), 16);
	for (int i = 0; i < rounds; i++) {
		if (i % 2) {
			proxied[i] = stream(tunnel(pport, "sink.test", sink.port), mib);
			direct[i] = stream(dial(sink.port), mib);
		} else {
			direct[i] = stream(dial(sink.port), mib);
			proxied[i] = stream(tunnel(pport, "sink.test", sink.port), mib);
		}
	}
	double md = median(direct, rounds), mp = median(proxied, rounds);
	printf("proxy: one stream of %zu MiB, %d rounds alternating: direct %.0f MiB/s, "
	       "through CONNECT %.0f MiB/s\n", mib, rounds, (double)mib * 1000 / md,
	       (double)mib * 1000 / mp);

	/* connection setup: to the first echoed byte */
	enum { CONNS = 300 };
	static double cd[CONNS], cp[CONNS];
	for (int i = 0; i < CONNS; i++) {
		double t0 = now_ms();
		cd[i] = first_byte(dial(echo.port), t0);
		t0 = now_ms();
		cp[i] = first_byte(tunnel(pport, "echo.test", echo.port), t0);
	}
	double mcd = median(cd, CONNS), mcp = median(cp, CONNS);
	printf("proxy: connection to the first echoed byte, %d alternating: direct %.3f ms, "
	       "through CONNECT %.3f ms\n", CONNS, mcd, mcp);

	/* memory with 1,000 tunnels open, each having carried a few bytes */
	long before = rss_kib(pid);
	static int fds[TUNNELS];
	for (int i = 0; i < TUNNELS; i++)
		fds[i] = tunnel(pport, "echo.test", echo.port);
	for (int i = 0; i < TUNNELS; i++) {
		char c = 'x';
		send_all(fds[i], &c, 1);
		if (recv(fds[i], &c, 1, 0) != 1)
			die("echo through a tunnel");
	}
	long with = rss_kib(pid);
	for (int i = 0; i < TUNNELS; i++)
		close(fds[i]);
	printf("proxy: RSS of the proxy process: %.1f MiB idle, %.1f MiB with %d tunnels open\n",
	       before / 1024.0, with / 1024.0, TUNNELS);

	close(ctl[1]);
	int ws;
	if (waitpid(pid, &ws, 0) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		fprintf(stderr, "proxy bench: the proxy process failed\n");
		return 1;
	}
	printf("bench: proxy-throughput %.3f (goal ≥ 0.8)\n", md / mp);
	printf("bench: proxy-connect-added-ms %.3f (goal ≤ 0.2)\n", mcp - mcd);
	printf("bench: proxy-rss-1000-tunnels-mib %.1f (goal ≤ 16)\n", with / 1024.0);
	free(direct);
	free(proxied);
	return 0;
}
