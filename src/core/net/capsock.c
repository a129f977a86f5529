/* capsock.c: the upstream socket of a captured connect (doc/design.md §4, capture). It is made
 * by agentjail on the host and handed to the jail in place of the jail's own socket, so it must
 * stay useless for anything but the connection it was approved for, whatever the jail does with
 * it later (a disconnect by connect(AF_UNSPEC), another connect, bind, listen):
 *   - it is bound to a port of its own before it connects (SOCK_BINDPORT_LOCK in the kernel:
 *     a socket bound to an explicit port keeps it when its connection fails or is undone, so
 *     the jail can never bind it to another port of the host — a squat on a port a host
 *     service needs — nor have it rebound by a connect);
 *   - the jail cannot make it connect or listen again: every connect() and listen() of the
 *     jail is carried out by capture.c, which never does either on a socket of ours, and
 *     TCP Fast Open (a connect inside a send) is refused by the jail's seccomp filter
 *     (core/confine/capfilter.h);
 *   - where the kernel lets us (root: Linux 6.17 and later refuse SO_ATTACH_FILTER on a TCP
 *     socket without CAP_NET_ADMIN), it also carries a classic BPF socket filter, locked
 *     (SO_LOCK_FILTER: no one can detach or replace it), that takes packets only from the
 *     approved peer's address and port: a connect elsewhere would never complete (the
 *     SYN-ACK is dropped), a listen never accept. A second wall, should the first have a
 *     gap.
 * It also takes the options the client had set on its own socket that matter once connected
 * (keepalive and its timings, TCP_NODELAY, timeouts, linger, …).
 *
 * A captured connection whose first bytes are judged (port 443, 80, or a port an allow entry
 * names as TLS or HTTP) is not connected to its server but to agentjail: to the relay's
 * listener on the host's 127.0.0.1 (px_relay_listen), whose accepted end becomes a proxy
 * connection approved for the name (proxy_conn.c). That listener is on the host's loopback,
 * where the jail cannot connect (its namespace routes nothing but its own loopback, and a
 * captured connect to the host's loopback is refused); other processes of the host can, so it
 * takes only the connections agentjail made: the jail's end is bound to its port exclusively
 * (no SO_REUSEADDR: no other socket can hold that port while it does), and an accepted
 * connection is ours only when it is established from 127.0.0.1 and exactly such a port
 * (px_relay_accept; capture.c matches the port). A TCP connection's four numbers are unique
 * while it lives, so no one else's connection can show that peer. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/filter.h>

#include "core/net/proxy_internal.h"

#define BIND_TRIES 16

/* The options copied, with the value a socket has when no one set it (a differing one was
 * set by the client). Timings of keepalive and SYN retries are the kernel's built-in defaults:
 * a host that tuned its sysctls differently keeps its own unless the client set one. */
static const struct {
	int level, name;
	int dflt;        /* for int options */
	bool block;      /* a struct (linger, timeval): copied when not all zero */
} copied[] = {
	{SOL_SOCKET, SO_KEEPALIVE, 0, false},
	{SOL_SOCKET, SO_OOBINLINE, 0, false},
	{SOL_SOCKET, SO_RCVLOWAT, 1, false},
	{SOL_SOCKET, SO_LINGER, 0, true},
	{SOL_SOCKET, SO_RCVTIMEO, 0, true},
	{SOL_SOCKET, SO_SNDTIMEO, 0, true},
	{IPPROTO_TCP, TCP_NODELAY, 0, false},
	{IPPROTO_TCP, TCP_KEEPIDLE, 7200, false},
	{IPPROTO_TCP, TCP_KEEPINTVL, 75, false},
	{IPPROTO_TCP, TCP_KEEPCNT, 9, false},
	{IPPROTO_TCP, TCP_SYNCNT, 6, false},
	{IPPROTO_TCP, TCP_USER_TIMEOUT, 0, false},
};

void px_sockopts_read(int s, struct px_sockopts *o)
{
	memset(o, 0, sizeof *o);
	for (size_t i = 0; i < sizeof copied / sizeof *copied; i++) {
		uint8_t v[sizeof o->o[0].val];
		socklen_t len = sizeof v;
		memset(v, 0, sizeof v);
		if (getsockopt(s, copied[i].level, copied[i].name, v, &len) < 0 || !len)
			continue;
		bool set;
		if (copied[i].block) {
			static const uint8_t zero[sizeof v];
			set = memcmp(v, zero, len) != 0;
		} else {
			int x;
			memcpy(&x, v, sizeof x);
			set = len == sizeof x && x != copied[i].dflt;
		}
		if (!set || o->n == sizeof o->o / sizeof o->o[0])
			continue;
		o->o[o->n].level = copied[i].level;
		o->o[o->n].name = copied[i].name;
		o->o[o->n].len = len;
		memcpy(o->o[o->n].val, v, len);
		o->n++;
	}
}

static void sockopts_apply(int s, const struct px_sockopts *o)
{
	/* best effort: an option this host refuses leaves the connection as it would be */
	for (size_t i = 0; i < o->n; i++)
		(void)setsockopt(s, o->o[i].level, o->o[i].name, o->o[i].val, o->o[i].len);
}

void px_ports_init(struct px_ports *pp)
{
	pp->lo = 32768;
	pp->hi = 60999;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
	unsigned lo, hi;
	if (f && fscanf(f, "%u %u", &lo, &hi) == 2 && lo >= 1024 && lo < hi && hi <= 65535) {
		pp->lo = lo;
		pp->hi = hi;
	}
	if (f)
		(void)fclose(f);
	if (getrandom(&pp->rng, sizeof pp->rng, GRND_NONBLOCK) != sizeof pp->rng)
		pp->rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
	pp->rng |= 1;
}

static uint16_t next_port(struct px_ports *pp)
{
	pp->rng ^= pp->rng << 13; /* xorshift64 */
	pp->rng ^= pp->rng >> 7;
	pp->rng ^= pp->rng << 17;
	return (uint16_t)(pp->lo + pp->rng % (pp->hi - pp->lo + 1));
}

/* Bind s (family fam) to the unspecified address and a port of the local range chosen here:
 * an explicit port is what the kernel keeps for good (see the top). exclusive: without
 * SO_REUSEADDR, so no other socket can be bound to that port while s is (the relay's). */
static int bind_own_port(int s, int fam, struct px_ports *pp, bool exclusive)
{
	int one = 1;
	if (!exclusive && setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
		return -1;
	for (int i = 0; i < BIND_TRIES; i++) {
		struct sockaddr_storage sa;
		memset(&sa, 0, sizeof sa);
		socklen_t len;
		uint16_t port = htons(next_port(pp));
		if (fam == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&sa;
			a->sin_family = AF_INET;
			a->sin_port = port;
			len = sizeof *a;
		} else {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&sa;
			a->sin6_family = AF_INET6;
			a->sin6_port = port;
			len = sizeof *a;
		}
		if (bind(s, (struct sockaddr *)&sa, len) == 0)
			return 0;
		if (errno != EADDRINUSE)
			return -1;
	}
	errno = EADDRNOTAVAIL;
	return -1;
}

size_t px_peer_filter(int family, const uint8_t *addr, uint16_t port, struct sock_filter *out)
{
	size_t n = 0;
	uint32_t w[4];
	size_t nw = family == AF_INET ? 1 : 4;
	for (size_t i = 0; i < nw; i++)
		w[i] = (uint32_t)addr[4 * i] << 24 | (uint32_t)addr[4 * i + 1] << 16 |
		       (uint32_t)addr[4 * i + 2] << 8 | addr[4 * i + 3];
	/* the network header: its version, then the source address (IPv4 at 12, IPv6 at 8) */
	out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF);
	out[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 4);
	/* every jump below that fails goes to the drop at the end: count what is left */
	size_t total = 2 + 1 + 2 * nw + 2 + 2;
	out[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					      family == AF_INET ? 4 : 6, 0,
					      (uint8_t)(total - 2 - n - 1));
	n++;
	for (size_t i = 0; i < nw; i++) {
		out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							(uint32_t)SKF_NET_OFF +
								(family == AF_INET ? 12 : 8) +
								4 * (uint32_t)i);
		out[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w[i], 0,
						      (uint8_t)(total - 2 - n - 1));
		n++;
	}
	/* the transport header (where a TCP socket's filter starts): the source port */
	out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0);
	out[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, port, 1, 0);
	n++;
	out[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);          /* drop */
	out[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffffu); /* the packet */
	return n;
}

int px_capsock_open(int fam, const struct sockaddr_storage *peer, const struct px_sockopts *o,
		    struct px_ports *pp, bool exclusive)
{
	int s = socket(fam, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	int zero = 0, one = 1;
	/* the peer as packets will show it: an IPv4 one on an IPv6 socket comes as IPv4 */
	int pfam = peer->ss_family;
	const uint8_t *pa;
	uint16_t port;
	if (pfam == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)peer;
		pa = (const uint8_t *)&a->sin_addr;
		port = ntohs(a->sin_port);
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)peer;
		static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};
		pa = (const uint8_t *)&a->sin6_addr;
		port = ntohs(a->sin6_port);
		if (!memcmp(pa, v4mapped, 12)) {
			pfam = AF_INET;
			pa += 12;
		}
	}
	struct sock_filter f[PX_PEER_FILTER_MAX];
	struct sock_fprog prog = {.len = (unsigned short)px_peer_filter(pfam, pa, port, f),
				  .filter = f};
	/* refused without CAP_NET_ADMIN (EPERM) on recent kernels: the filter is a second wall */
	int attached = setsockopt(s, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) == 0 ? 1
		       : errno == EPERM ? 0 : -1;
	if (attached < 0 ||
	    (attached && setsockopt(s, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof one) < 0) ||
	    (fam == AF_INET6 && setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero) < 0) ||
	    bind_own_port(s, fam, pp, exclusive) < 0) {
		int err = errno;
		(void)close(s);
		errno = err;
		return -1;
	}
	sockopts_apply(s, o);
	return s;
}

int px_tcp_state(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof ti;
	memset(&ti, 0, sizeof ti);
	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ? -1 : ti.tcpi_state;
}

int px_relay_listen(uint16_t *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l < 0)
		return -1;
	if (bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 4096) < 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &len) < 0) {
		int err = errno;
		(void)close(l);
		errno = err;
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return l;
}

int px_relay_accept(int l, uint16_t *peer_port)
{
	for (;;) {
		struct sockaddr_in peer;
		socklen_t len = sizeof peer;
		int s = accept4(l, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (s < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (s < 0)
			return -1;
		/* established (a reset one has no peer any more) from the host's 127.0.0.1 */
		if (len == sizeof peer && peer.sin_family == AF_INET &&
		    peer.sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
		    px_tcp_state(s) == TCP_ESTABLISHED) {
			*peer_port = ntohs(peer.sin_port);
			return s;
		}
		(void)close(s);
	}
}
