/* Tests for core/net/capsock.c, the sockets the capture hands over: the peer filter takes packets
 * from its address and port only (IPv4 and IPv6; run on UDP sockets, whose filter also starts
 * at the transport header and which need no privilege to carry one), a handed-over socket is
 * bound to a port of the local range that it keeps (a second bind is refused), the options a
 * client set are found, and the relay's pair (a judged connection's socket and the listener's
 * end) is agentjail's alone: no other socket can take its port, and the listener hands over
 * only connections established from 127.0.0.1, with their port. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/proxy_internal.h"

/* A UDP socket bound to the loopback of family fam on a port the kernel picks. */
static int udp_on(int fam, struct sockaddr_storage *sa, socklen_t *len)
{
	memset(sa, 0, sizeof *sa);
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (fam == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)sa;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof *a;
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)sa;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_loopback;
		*len = sizeof *a;
	}
	if (bind(fd, (struct sockaddr *)sa, *len) < 0 ||
	    getsockname(fd, (struct sockaddr *)sa, len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint16_t port_of(const struct sockaddr_storage *sa)
{
	return ntohs(sa->ss_family == AF_INET ? ((const struct sockaddr_in *)sa)->sin_port
					      : ((const struct sockaddr_in6 *)sa)->sin6_port);
}

static void peer_filter_family(int fam)
{
	struct sockaddr_storage rs, as, bs;
	socklen_t rl, al, bl;
	int r = udp_on(fam, &rs, &rl), a = udp_on(fam, &as, &al), b = udp_on(fam, &bs, &bl);
	if (r < 0 || a < 0 || b < 0) {
		if (fam == AF_INET6) /* no ::1 here */
			skip();
		fail_msg("cannot make loopback UDP sockets: %s", strerror(errno));
	}
	uint8_t addr[16];
	memcpy(addr, fam == AF_INET ? (const void *)&((struct sockaddr_in *)&as)->sin_addr
				    : (const void *)&((struct sockaddr_in6 *)&as)->sin6_addr,
	       fam == AF_INET ? 4 : 16);
	struct sock_filter f[PX_PEER_FILTER_MAX];
	struct sock_fprog prog = {.len = (unsigned short)px_peer_filter(fam, addr, port_of(&as), f),
				  .filter = f};
	assert_true(prog.len <= PX_PEER_FILTER_MAX);
	assert_int_equal(setsockopt(r, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog), 0);
	assert_int_equal(sendto(b, "from b", 6, 0, (struct sockaddr *)&rs, rl), 6);
	assert_int_equal(sendto(a, "from a", 6, 0, (struct sockaddr *)&rs, rl), 6);
	char buf[16];
	ssize_t n = recv(r, buf, sizeof buf, 0); /* b's was dropped: a's is the first */
	assert_int_equal(n, 6);
	assert_memory_equal(buf, "from a", 6);
	assert_int_equal(recv(r, buf, sizeof buf, MSG_DONTWAIT), -1);
	assert_int_equal(errno, EAGAIN);
	close(r), close(a), close(b);
}

static void peer_filter_v4(void **state)
{
	(void)state;
	peer_filter_family(AF_INET);
}

static void peer_filter_v6(void **state)
{
	(void)state;
	peer_filter_family(AF_INET6);
}

static void bound_for_good(void **state)
{
	(void)state;
	struct px_ports pp;
	px_ports_init(&pp);
	assert_true(pp.lo >= 1024 && pp.lo < pp.hi && pp.hi <= 65535);
	struct sockaddr_storage peer;
	uint8_t lo[4] = {127, 0, 0, 1};
	(void)px_fill_sa(&peer, AF_INET, lo, 9);
	struct px_sockopts none = {0};
	for (int fam = AF_INET; fam; fam = fam == AF_INET ? AF_INET6 : 0) {
		int s = px_capsock_open(fam, &peer, &none, &pp, false);
		if (s < 0 && fam == AF_INET6 && errno == EAFNOSUPPORT)
			continue;
		assert_true(s >= 0);
		struct sockaddr_storage me;
		socklen_t len = sizeof me;
		assert_int_equal(getsockname(s, (struct sockaddr *)&me, &len), 0);
		uint16_t port = port_of(&me);
		assert_true(port >= pp.lo && port <= pp.hi);
		struct sockaddr_storage other = me;
		if (fam == AF_INET)
			((struct sockaddr_in *)&other)->sin_port = htons((uint16_t)(port ^ 1));
		else
			((struct sockaddr_in6 *)&other)->sin6_port = htons((uint16_t)(port ^ 1));
		assert_int_equal(bind(s, (struct sockaddr *)&other, len), -1);
		assert_int_equal(errno, EINVAL); /* bound already, and kept so */
		close(s);
	}
}

/* A socket bound to (addr, port) with SO_REUSEADDR, as another process of the host would try:
 * 0 bound, else the errno. */
static int squat(int fam, const char *addr, uint16_t port)
{
	struct sockaddr_storage sa;
	uint8_t a[16];
	assert_int_equal(inet_pton(fam, addr, a), 1);
	socklen_t len = px_fill_sa(&sa, fam, a, port);
	int s = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	assert_true(s >= 0);
	assert_int_equal(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
	int err = bind(s, (struct sockaddr *)&sa, len) == 0 ? 0 : errno;
	close(s);
	return err;
}

/* A connection to the listener from addr (bound there, port chosen by the kernel); its fd. */
static int dial_from(const char *addr, uint16_t lport)
{
	struct sockaddr_in me = {.sin_family = AF_INET}, to = {.sin_family = AF_INET};
	assert_int_equal(inet_pton(AF_INET, addr, &me.sin_addr), 1);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons(lport);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&me, sizeof me), 0);
	assert_int_equal(connect(s, (struct sockaddr *)&to, sizeof to), 0);
	return s;
}

static void relay_pair_is_ours(void **state)
{
	(void)state;
	struct px_ports pp;
	px_ports_init(&pp);
	uint16_t lport = 0, got = 0;
	int l = px_relay_listen(&lport);
	assert_true(l >= 0 && lport);
	struct sockaddr_storage to;
	uint8_t lo[4] = {127, 0, 0, 1};
	socklen_t tlen = px_fill_sa(&to, AF_INET, lo, lport);
	struct px_sockopts none = {0};
	for (int fam = AF_INET; fam; fam = fam == AF_INET ? AF_INET6 : 0) {
		struct sockaddr_storage peer = to;
		socklen_t plen = tlen;
		if (fam == AF_INET6) { /* an IPv6 client's: the listener's mapped address */
			uint8_t m[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1};
			plen = px_fill_sa(&peer, AF_INET6, m, lport);
		}
		int x = px_capsock_open(fam, &peer, &none, &pp, true);
		if (x < 0 && fam == AF_INET6 && errno == EAFNOSUPPORT)
			continue;
		assert_true(x >= 0);
		struct sockaddr_storage me;
		socklen_t len = sizeof me;
		assert_int_equal(getsockname(x, (struct sockaddr *)&me, &len), 0);
		uint16_t port = port_of(&me);
		/* no one else can hold its port, on any address, SO_REUSEADDR or not */
		assert_int_equal(squat(AF_INET, "127.0.0.1", port), EADDRINUSE);
		assert_int_equal(squat(AF_INET, "0.0.0.0", port), EADDRINUSE);
		if (connect(x, (struct sockaddr *)&peer, plen) < 0)
			assert_int_equal(errno, EINPROGRESS);
		struct pollfd pf = {.fd = x, .events = POLLOUT};
		assert_int_equal(poll(&pf, 1, 5000), 1);
		int s = px_relay_accept(l, &got);
		assert_true(s >= 0);
		assert_int_equal(got, port);
		close(s);
		close(x);
	}
	/* another address than 127.0.0.1: closed; one reset before it is accepted: closed */
	int f = dial_from("127.0.0.2", lport);
	int r = dial_from("127.0.0.1", lport);
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	assert_int_equal(setsockopt(r, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
	close(r);
	usleep(10000);
	errno = 0;
	assert_int_equal(px_relay_accept(l, &got), -1);
	assert_int_equal(errno, EAGAIN);
	char c;
	assert_int_equal(recv(f, &c, 1, 0), 0); /* closed by the listener's side */
	close(f);
	/* a host process on 127.0.0.1: handed over with its own port, which capture.c matches */
	f = dial_from("127.0.0.1", lport);
	struct sockaddr_in fme;
	socklen_t flen = sizeof fme;
	assert_int_equal(getsockname(f, (struct sockaddr *)&fme, &flen), 0);
	int s = px_relay_accept(l, &got);
	assert_true(s >= 0);
	assert_int_equal(got, ntohs(fme.sin_port));
	close(s);
	close(f);
	close(l);
}

static void options_found(void **state)
{
	(void)state;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, idle = 30;
	assert_true(s >= 0);
	struct px_sockopts o;
	px_sockopts_read(s, &o);
	assert_int_equal(o.n, 0); /* nothing set: nothing to copy */
	assert_int_equal(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
	assert_int_equal(setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one), 0);
	assert_int_equal(setsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle), 0);
	px_sockopts_read(s, &o);
	assert_int_equal(o.n, 3);
	close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(peer_filter_v4),
		cmocka_unit_test(peer_filter_v6),
		cmocka_unit_test(bound_for_good),
		cmocka_unit_test(options_found),
		cmocka_unit_test(relay_pair_is_ours),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
