/* Tests for core/net/capsock.c, the sockets the capture hands over: the peer filter takes packets
 * from its address and port only (IPv4 and IPv6; run on UDP sockets, whose filter also starts
 * at the transport header and which need no privilege to carry one), a handed-over socket is
 * bound to a port of the local range that it keeps (a second bind is refused), and the
 * options a client set are found. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
		int s = px_capsock_open(fam, &peer, &none, &pp);
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
