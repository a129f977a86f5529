/* bench/proxy: the egress proxy engine (doc/design.md §4) on host loopback, no jail.
 * - throughput: one download through a CONNECT tunnel vs direct loopback TCP from the same
 *   source (an HTTP request, then MIB MiB and the close), alternating, ROUNDS pairs; the ratio
 *   of the median times (goal >= 0.8). Both ways have the same parties (the client thread, the
 *   source's thread) and the same copies (the source's send, the client's recv); the tunnel
 *   adds the proxy process (splice: no copy) and a second TCP connection. The CPU time a MiB
 *   costs each way is printed too, per party: the parties mostly run one after another (a
 *   loopback wake-up pulls the woken party onto the waker's CPU: a sched_switch trace of a
 *   run at load 3 had all three on one CPU), so the ratio follows the ratio of those sums;
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
	int fd = bench_dial_lo(port);
	if (fd < 0)
		die("connect");
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

/* ---- servers: a source (reads a request, sends stream_mib MiB, closes) and an echo, one
 * thread each */

struct server {
	int lfd;
	uint16_t port;
	bool echo;
};

static size_t stream_mib;

/* One download at a time: the request's head, then the bytes, then the close. */
static void *source(void *arg)
{
	struct server *s = arg;
	static char buf[1 << 18];
	for (;;) {
		int c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		char req[512];
		size_t n = 0;
		while (n < sizeof req) {
			ssize_t k = recv(c, req + n, sizeof req - n, 0);
			if (k <= 0)
				break;
			n += (size_t)k;
			if (n >= 4 && !memcmp(req + n - 4, "\r\n\r\n", 4))
				break;
		}
		size_t total = stream_mib << 20;
		for (size_t sent = 0; sent < total; sent += sizeof buf)
			send_all(c, buf, sizeof buf);
		close(c);
	}
	return NULL;
}

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

/* CPU time (ms) of the client (this thread), of the source's thread and of the proxy's
 * process. */
static clockid_t proxy_clock, source_clock;
static double cpu_ms(clockid_t clk)
{
	struct timespec ts;
	if (clock_gettime(clk, &ts) < 0)
		return 0;
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU spent during the last stream: by the client, the source, the proxy. Each party's own
 * clock: the kernel's TCP work is counted in whichever party's context it ran (on loopback, a
 * sender's context delivers to the receiver's socket; an ACK that opens a window sends the
 * peer's queued bytes), so only the sum compares across the two ways. */
static double cpu_client, cpu_source, cpu_proxy;

/* A download of stream_mib MiB on fd (connected to the source, directly or through a tunnel):
 * its time in ms, the CPU it cost in cpu_self and cpu_proxy. */
static double stream(int fd)
{
	static char buf[1 << 18];
	static const char req[] = "GET /big HTTP/1.1\r\nHost: source.test\r\n\r\n";
	double c0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID), s0 = cpu_ms(source_clock),
	       p0 = cpu_ms(proxy_clock);
	double t0 = now_ms();
	send_all(fd, req, sizeof req - 1);
	size_t total = 0;
	for (;;) {
		ssize_t k = recv(fd, buf, sizeof buf, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			die("download");
		if (k == 0)
			break;
		total += (size_t)k;
	}
	if (total != stream_mib << 20) {
		fprintf(stderr, "proxy bench: downloaded %zu bytes of %zu\n", total, stream_mib << 20);
		exit(1);
	}
	double t = now_ms() - t0;
	cpu_client = cpu_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
	cpu_source = cpu_ms(source_clock) - s0;
	cpu_proxy = cpu_ms(proxy_clock) - p0;
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
	size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 1024;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct server src_srv = {.echo = false}, echo = {.echo = true};
	stream_mib = 16; /* the warm-up */
	src_srv.lfd = listen_tcp(&src_srv.port);
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
		close(src_srv.lfd);
		close(echo.lfd);
		char spec[64];
		struct strv allow = STRV_INIT, deny = STRV_INIT, map = STRV_INIT;
		(void)snprintf(spec, sizeof spec, "source.test:%u", src_srv.port);
		strv_push(&allow, spec);
		(void)snprintf(spec, sizeof spec, "echo.test:%u", echo.port);
		strv_push(&allow, spec);
		strv_push(&map, "source.test=127.0.0.1");
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
	if (clock_getcpuclockid(pid, &proxy_clock) != 0)
		die("clock_getcpuclockid");
	pthread_t t1, t2;
	if (pthread_create(&t1, NULL, source, &src_srv) || pthread_create(&t2, NULL, serve, &echo))
		die("pthread_create");
	if (pthread_getcpuclockid(t1, &source_clock) != 0)
		die("pthread_getcpuclockid");

	/* throughput */
	double *direct = calloc((size_t)rounds, sizeof(double));
	double *proxied = calloc((size_t)rounds, sizeof(double));
	/* CPU ms per MiB of each party, each way: [0] the client, [1] the source, [2] the proxy */
	double *cpu[2][3];
	for (int w = 0; w < 2; w++)
		for (int k = 0; k < 3; k++)
			cpu[w][k] = calloc((size_t)rounds, sizeof(double));
	(void)stream(dial(src_srv.port)); /* warm up both paths */
	(void)stream(tunnel(pport, "source.test", src_srv.port));
	stream_mib = mib;
	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < 2; k++) {
			int w = (i + k) % 2; /* 0 direct, 1 through CONNECT */
			if (w == 0)
				direct[i] = stream(dial(src_srv.port));
			else
				proxied[i] = stream(tunnel(pport, "source.test", src_srv.port));
			cpu[w][0][i] = cpu_client / (double)mib;
			cpu[w][1][i] = cpu_source / (double)mib;
			cpu[w][2][i] = cpu_proxy / (double)mib;
		}
	}
	double md = median(direct, rounds), mp = median(proxied, rounds);
	printf("proxy: a download of %zu MiB, %d rounds alternating: direct %.0f MiB/s, "
	       "through CONNECT %.0f MiB/s\n", mib, rounds, (double)mib * 1000 / md,
	       (double)mib * 1000 / mp);
	/* What bounds the ratio where the parties run one after another (a loopback wake-up
	 * pulls the woken party onto the waker's CPU, and the CPUs are shared): the CPU time a
	 * MiB costs each way, the kernel's TCP work included */
	double m[2][3];
	for (int w = 0; w < 2; w++)
		for (int k = 0; k < 3; k++)
			m[w][k] = median(cpu[w][k], rounds);
	double sd = m[0][0] + m[0][1], sp = m[1][0] + m[1][1] + m[1][2];
	printf("proxy: CPU ms per MiB (medians): direct %.3f (client %.3f, source %.3f); through "
	       "CONNECT %.3f (client %.3f, source %.3f, proxy %.3f); direct / proxied %.3f\n", sd,
	       m[0][0], m[0][1], sp, m[1][0], m[1][1], m[1][2], sd / sp);

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
	for (int w = 0; w < 2; w++)
		for (int k = 0; k < 3; k++)
			free(cpu[w][k]);
	return 0;
}
