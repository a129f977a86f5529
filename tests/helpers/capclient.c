/* capclient: a client that connects directly, by IP, as a Go or Rust binary without proxy support
 * would — for the capture tests of `--net allow` (tests/sh/88-capture.t). Linked statically
 * (no libc interposition, no proxy variables read). Each verb prints one result line.
 *
 *   capclient get HOST PORT PATH        getaddrinfo, connect to the addresses in order, an HTTP/1.0
 *                                       GET; prints the response's body, then "peer ADDR PORT"
 *   capclient nonblock HOST PORT PATH   the same with a non-blocking connect, poll and SO_ERROR;
 *                                       prints "einprogress" when the connect said so
 *   capclient connect ADDR PORT         a blocking connect to a literal (IPv4, IPv6, ::ffff:a.b.c.d)
 *   capclient fastopen ADDR PORT        sendto(MSG_FASTOPEN) on a new TCP socket
 *   capclient udp ADDR PORT             one UDP datagram (QUIC's first packet, say)
 *   capclient race HOST PORT BAD BPORT N  N connects while a second thread rewrites the sockaddr
 *                                       between HOST's address and BAD:BPORT; counts where
 *                                       each one ended up
 *   capclient hijack HOST PORT CLOSED CANARY CPORT N SQUAT
 *                                       a GET through a captured connection to HOST:PORT; then
 *                                       a captured non-blocking connect to HOST:CLOSED (allowed,
 *                                       nothing listens), whose socket of agentjail's it tries to
 *                                       turn elsewhere once it failed: bind it to port SQUAT,
 *                                       listen on it, N connects that another thread races from
 *                                       an AF_UNIX address to CANARY:CPORT, Fast Open to it
 * A failure prints "fail ERRNO-NAME ms=N" (ms: how long the failing call took). Exit 0 when the
 * verb ran, 1 when its connection failed, 2 on usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *ename(int e)
{
	static const struct {
		int e;
		const char *n;
	} t[] = {{ECONNREFUSED, "ECONNREFUSED"}, {EACCES, "EACCES"}, {ENETUNREACH, "ENETUNREACH"},
		 {EHOSTUNREACH, "EHOSTUNREACH"}, {ETIMEDOUT, "ETIMEDOUT"}, {EOPNOTSUPP, "EOPNOTSUPP"},
		 {EINPROGRESS, "EINPROGRESS"}, {EALREADY, "EALREADY"}, {EISCONN, "EISCONN"},
		 {EINVAL, "EINVAL"}, {EAFNOSUPPORT, "EAFNOSUPPORT"}, {EADDRINUSE, "EADDRINUSE"},
		 {EPERM, "EPERM"}, {ENOSYS, "ENOSYS"}, {ECONNABORTED, "ECONNABORTED"},
		 {ENOENT, "ENOENT"}, {ECONNRESET, "ECONNRESET"}, {EADDRNOTAVAIL, "EADDRNOTAVAIL"}};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (t[i].e == e)
			return t[i].n;
	return strerror(e);
}

static int fail(int err, long long t0)
{
	printf("fail %s ms=%lld\n", ename(err), now_ms() - t0);
	return 1;
}

/* A literal address (IPv4, IPv6) and port. */
static socklen_t literal(const char *addr, const char *port, struct sockaddr_storage *sa)
{
	memset(sa, 0, sizeof *sa);
	struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)atoi(port));
		return sizeof *a4;
	}
	if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)atoi(port));
		return sizeof *a6;
	}
	fprintf(stderr, "capclient: %s is not an address\n", addr);
	exit(2);
}

static void print_peer(int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	char t[INET6_ADDRSTRLEN] = "?";
	int port = 0;
	if (getpeername(fd, (struct sockaddr *)&sa, &len) == 0) {
		if (sa.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&sa)->sin_addr, t, sizeof t);
			port = ntohs(((struct sockaddr_in *)&sa)->sin_port);
		} else {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&sa)->sin6_addr, t, sizeof t);
			port = ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
		}
	}
	printf("peer %s %d\n", t, port);
}

/* Send a GET and copy the body to stdout (or the first line of it into first). */
static int http_get(int fd, const char *host, const char *path, char *first, size_t cap)
{
	char req[512];
	int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, host);
	if (write(fd, req, (size_t)n) != n)
		return -1;
	static char buf[1 << 16];
	size_t len = 0;
	ssize_t r;
	while (len < sizeof buf - 1 && (r = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	char *body = strstr(buf, "\r\n\r\n");
	if (!body)
		return -1;
	body += 4;
	if (first) {
		snprintf(first, cap, "%.*s", (int)strcspn(body, "\n"), body);
		return 0;
	}
	fputs(body, stdout);
	return 0;
}

/* Wait for a non-blocking connect; its error (0: connected). */
static int wait_connect(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	if (poll(&p, 1, ms) != 1)
		return ETIMEDOUT;
	int err = 0;
	socklen_t len = sizeof err;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		return errno;
	return err;
}

static int do_get(const char *host, const char *port, const char *path, bool nonblock)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
	long long t0 = now_ms();
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		printf("fail getaddrinfo: %s ms=%lld\n", gai_strerror(rc), now_ms() - t0);
		return 1;
	}
	int fd = -1, err = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | (nonblock ? SOCK_NONBLOCK : 0), 0);
		if (fd < 0)
			continue;
		t0 = now_ms();
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		err = errno;
		if (nonblock && err == EINPROGRESS) {
			printf("einprogress\n");
			err = wait_connect(fd, 10000);
			if (!err) {
				int fl = fcntl(fd, F_GETFL);
				fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
				break;
			}
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return fail(err, t0);
	if (http_get(fd, host, path, NULL, 0) < 0)
		return fail(errno ? errno : EIO, t0);
	print_peer(fd);
	close(fd);
	return 0;
}

static int do_connect(const char *addr, const char *port)
{
	struct sockaddr_storage sa;
	socklen_t len = literal(addr, port, &sa);
	int fd = socket(sa.ss_family, SOCK_STREAM, 0);
	long long t0 = now_ms();
	if (connect(fd, (struct sockaddr *)&sa, len) < 0)
		return fail(errno, t0);
	printf("ok\n");
	return 0;
}

static int do_send(const char *addr, const char *port, int type, int flags)
{
	struct sockaddr_storage sa;
	socklen_t len = literal(addr, port, &sa);
	int fd = socket(sa.ss_family, type, 0);
	long long t0 = now_ms();
	if (sendto(fd, "hello", 5, flags, (struct sockaddr *)&sa, len) < 0)
		return fail(errno, t0);
	printf("sent\n");
	return 0;
}

/* ---- races ---- */

struct flipper {
	struct sockaddr_storage *target; /* what the connecting thread passes */
	struct sockaddr_storage a, b;    /* the two versions written in turn */
	atomic_bool stop;
};

/* Writes the first 8 bytes of one version, then of the other, each in one store, for as long
 * as the connecting thread runs: an IPv4 sockaddr's family, port and address are those 8
 * bytes, so a reader sees one version or the other, never a mix (an AF_UNIX path's start is
 * there too; the rest of the path stays as it was). */
static void *flip(void *arg)
{
	struct flipper *f = arg;
	volatile uint64_t *t = (volatile uint64_t *)f->target;
	uint64_t a, b;
	memcpy(&a, &f->a, sizeof a);
	memcpy(&b, &f->b, sizeof b);
	while (!atomic_load(&f->stop)) { /* about as long in each state */
		*t = a;
		for (volatile int i = 0; i < 64; i++)
			;
		*t = b;
		for (volatile int i = 0; i < 64; i++)
			;
	}
	return NULL;
}

static void resolve_one(const char *host, const char *port, struct sockaddr_storage *sa)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
	if (getaddrinfo(host, port, &hints, &res)) {
		printf("fail getaddrinfo %s\n", host);
		exit(1);
	}
	memset(sa, 0, sizeof *sa);
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
}

static int do_race(char **av)
{
	static struct sockaddr_storage shared;
	struct flipper f = {.target = &shared};
	resolve_one(av[0], av[1], &f.a);
	(void)literal(av[2], av[3], &f.b);
	int n = atoi(av[4]), good = 0, bad = 0, refused = 0, other = 0;
	memcpy(&shared, &f.a, sizeof shared);
	pthread_t t;
	pthread_create(&t, NULL, flip, &f);
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&shared, sizeof(struct sockaddr_in)) < 0) {
			if (errno == ECONNREFUSED || errno == ENETUNREACH)
				refused++;
			else
				other++;
			close(fd);
			continue;
		}
		char first[256] = "";
		if (http_get(fd, av[0], "/race", first, sizeof first) == 0 && strstr(first, "hello"))
			good++;
		else
			bad++; /* connected, and not to the allowed server */
		close(fd);
	}
	atomic_store(&f.stop, true);
	pthread_join(t, NULL);
	printf("race good=%d bad=%d refused=%d other=%d\n", good, bad, refused, other);
	return 0;
}

static int do_hijack(char **av)
{
	struct sockaddr_storage up, closed, canary;
	resolve_one(av[0], av[1], &up);
	resolve_one(av[0], av[2], &closed);
	socklen_t clen = literal(av[3], av[4], &canary);
	int n = atoi(av[5]);
	/* a captured connection works */
	int g = socket(AF_INET, SOCK_STREAM, 0);
	long long t0 = now_ms();
	if (connect(g, (struct sockaddr *)&up, sizeof(struct sockaddr_in)) < 0)
		return fail(errno, t0);
	char first[256] = "";
	int ok = http_get(g, av[0], "/hijack", first, sizeof first) == 0 && strstr(first, "hello");
	close(g);
	/* a socket handed over in progress whose connection then failed: the kernel would let
	 * it be connected, bound or made to listen again */
	int h = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int r = connect(h, (struct sockaddr *)&closed, sizeof(struct sockaddr_in)) == 0 ? 0 : errno;
	int refused = r == EINPROGRESS ? wait_connect(h, 5000) : r;
	struct sockaddr_in squat = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(av[6]))};
	int b = bind(h, (struct sockaddr *)&squat, sizeof squat) == 0 ? 0 : errno;
	int l = listen(h, 8) == 0 ? 0 : errno;
	/* the race: an AF_UNIX address (once let go on as asked) that becomes the canary's */
	static struct sockaddr_storage shared;
	struct flipper f = {.target = &shared};
	struct sockaddr_un *un = (struct sockaddr_un *)&f.a;
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, "/nonexistent/capclient");
	f.b = canary;
	memcpy(&shared, &f.a, sizeof shared);
	pthread_t t;
	pthread_create(&t, NULL, flip, &f);
	int connected = 0, tried = 0;
	for (int i = 0; i < n; i++) {
		int e = connect(h, (struct sockaddr *)&shared, sizeof(struct sockaddr_un)) == 0 ? 0 : errno;
		if (e && e != EINPROGRESS && e != EALREADY)
			continue;
		tried++;
		struct sockaddr_storage pe;
		socklen_t pl = sizeof pe;
		int w = wait_connect(h, 300);
		int gp = getpeername(h, (struct sockaddr *)&pe, &pl);
		if (getenv("CAPDEBUG"))
			fprintf(stderr, "connect %s, then %s, peer %d\n", ename(e), ename(w), gp);
		if (w == 0 && gp == 0)
			connected++;
	}
	atomic_store(&f.stop, true);
	pthread_join(t, NULL);
	/* twice: on a socket whose connection failed the first one would only reset it */
	int fo = sendto(h, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&canary, clen) < 0 ? errno : 0;
	if (fo != EOPNOTSUPP)
		fo = sendto(h, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&canary, clen) < 0 ? errno : 0;
	if (fo == 0 || fo == EINPROGRESS) {
		struct sockaddr_storage pe;
		socklen_t pl = sizeof pe;
		if (wait_connect(h, 500) == 0 && getpeername(h, (struct sockaddr *)&pe, &pl) == 0)
			connected++;
	}
	printf("hijack get=%s failed=%s bind=%s listen=%s tried=%d connected=%d fastopen=%s\n",
	       ok ? "ok" : "fail", refused ? ename(refused) : "connected", b ? ename(b) : "ok",
	       l ? ename(l) : "ok", tried, connected, fo ? ename(fo) : "sent");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "get"))
		return do_get(argv[2], argv[3], argv[4], false);
	if (argc == 5 && !strcmp(argv[1], "nonblock"))
		return do_get(argv[2], argv[3], argv[4], true);
	if (argc == 4 && !strcmp(argv[1], "connect"))
		return do_connect(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "fastopen"))
		return do_send(argv[2], argv[3], SOCK_STREAM, MSG_FASTOPEN);
	if (argc == 4 && !strcmp(argv[1], "udp"))
		return do_send(argv[2], argv[3], SOCK_DGRAM, 0);
	if (argc == 7 && !strcmp(argv[1], "race"))
		return do_race(argv + 2);
	if (argc == 9 && !strcmp(argv[1], "hijack"))
		return do_hijack(argv + 2);
	fprintf(stderr, "usage: capclient get|nonblock HOST PORT PATH | connect|fastopen|udp ADDR PORT"
			" | race HOST PORT BAD BPORT N | hijack HOST PORT CLOSED CANARY CPORT N SQUAT\n");
	return 2;
}
