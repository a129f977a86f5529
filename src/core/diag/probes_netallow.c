/* probes, category "network", the checks `--net allow` adds (doc/design.md §4): raw TCP to an
 * address fails at once, the DNS stub answers only allowed names, links and routes cannot be
 * changed, connections are captured (refused at once when not allowed; no Fast Open; no second
 * listener). (The host's loopback services and abstract sockets are probed for every mode in
 * probes_net.c.) No packet leaves the machine: a route is looked up with a UDP connect() first,
 * and the TCP attempt goes to a documentation address (RFC 5737) only when there is none. */
#include <net/if.h>
#include <net/route.h>

#include <netinet/tcp.h>
#include <sys/wait.h>

#include "core/confine/capfilter.h"
#include "core/diag/probes_internal.h"
#include "util/clock.h"

#define RAW_TCP_ADDR "192.0.2.1" /* TEST-NET-1: never a real host */
#define RAW_TCP_LIMIT_MS 1000
#define CAPTURE_ADDR "198.19.255.254" /* in the DNS stub's range (netsynth.h), never given out */

/* A non-blocking TCP connect to sa, waited for a little longer than RAW_TCP_LIMIT_MS: 0
 * connected, the errno it failed with (ETIMEDOUT: no answer), -1 no socket. *ms: how long. */
static int timed_connect(const struct sockaddr *sa, socklen_t salen, long long *ms)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	long long t0 = clock_mono_ms();
	int err = connect(fd, sa, salen) == 0 ? 0 : errno;
	if (err == EINPROGRESS) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		socklen_t len = sizeof err;
		if (poll(&p, 1, RAW_TCP_LIMIT_MS + 500) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = ETIMEDOUT;
	}
	*ms = clock_mono_ms() - t0;
	(void)close(fd);
	return err;
}

/* Whether the kernel has a route to addr (a UDP connect only looks it up). */
static bool has_route(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool r = connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0;
	(void)close(fd);
	return r;
}

void p_raw_tcp(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->net == NET_ON) {
		pr_set(o, PROBE_SKIP, "net on: the host's routes are used, as the policy says");
		return;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(443)};
	(void)inet_pton(AF_INET, RAW_TCP_ADDR, &sa.sin_addr);
	if (has_route(&sa)) {
		pr_set(o, PROBE_FAIL, "a route to %s exists with the network %s (nothing sent)",
		       RAW_TCP_ADDR, net_mode_name(c->net));
		return;
	}
	long long ms;
	int err = timed_connect((struct sockaddr *)&sa, sizeof sa, &ms);
	if (err < 0) {
		pr_set(o, PROBE_PASS, "socket: %s", pr_ename(errno));
		return;
	}
	if (err == 0)
		pr_set(o, PROBE_FAIL, "raw TCP to %s:443 connected (net %s)", RAW_TCP_ADDR,
		       net_mode_name(c->net));
	else if (ms >= RAW_TCP_LIMIT_MS)
		pr_set(o, PROBE_FAIL, "raw TCP to %s:443 failed only after %lld ms (%s)",
		       RAW_TCP_ADDR, ms, pr_ename(err));
	else
		pr_set(o, PROBE_PASS, "raw TCP to %s:443: %s in %lld ms", RAW_TCP_ADDR,
		       pr_ename(err), ms);
}

/* A DNS query for one A record (RFC 1035 §4.1), id 0x616a. Returns its length, 0 if the name
 * does not fit. */
static size_t dns_query(const char *name, uint8_t *q, size_t cap)
{
	static const uint8_t head[12] = {0x61, 0x6a, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	size_t n = sizeof head;
	memcpy(q, head, n);
	for (const char *l = name; *l;) {
		size_t len = strcspn(l, ".");
		if (len == 0 || len > 63 || n + len + 1 + 5 > cap)
			return 0;
		q[n++] = (uint8_t)len;
		memcpy(q + n, l, len);
		n += len;
		l += len + (l[len] == '.');
	}
	const uint8_t tail[5] = {0, 0, 1, 0, 1}; /* root, type A, class IN */
	memcpy(q + n, tail, sizeof tail);
	return n + sizeof tail;
}

void p_dns_stub(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->net != NET_ALLOW) {
		pr_set(o, PROBE_SKIP, "the DNS stub exists only with --net allow (net %s)",
		       net_mode_name(c->net));
		return;
	}
	char name[96];
	snprintf(name, sizeof name, "agentjail-verify-%s.example.com", c->token ? c->token : "x");
	uint8_t q[128], a[512];
	size_t qn = dns_query(name, q, sizeof q);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || !qn) {
		pr_set(o, PROBE_FAIL, "cannot ask the DNS stub: %s", pr_ename(errno));
		if (fd >= 0)
			(void)close(fd);
		return;
	}
	long long t0 = clock_mono_ms();
	ssize_t n = -1;
	int err = 0;
	if (sendto(fd, q, qn, 0, (struct sockaddr *)&sa, sizeof sa) == (ssize_t)qn) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 2000) == 1)
			n = recv(fd, a, sizeof a, 0);
		else
			errno = ETIMEDOUT;
	}
	err = errno;
	long long ms = clock_mono_ms() - t0;
	(void)close(fd);
	if (n < 12 || a[0] != q[0] || a[1] != q[1] || !(a[2] & 0x80))
		pr_set(o, PROBE_FAIL, "the DNS stub on 127.0.0.1:53 gave no answer for %s (%s)", name,
		       n < 0 ? pr_ename(err) : "a malformed reply");
	else if ((a[3] & 0x0f) == 3 && a[6] == 0 && a[7] == 0)
		pr_set(o, PROBE_PASS, "the DNS stub answers NXDOMAIN for a name not on the list "
				      "(%lld ms)", ms);
	else
		pr_set(o, PROBE_FAIL, "the DNS stub answered rcode %d with %d records for %s, a name "
				      "not on the list", a[3] & 0x0f, a[6] << 8 | a[7], name);
}

/* Deleting a route that does not exist (to a documentation network) changes nothing: with
 * CAP_NET_ADMIN it fails with ESRCH, without with EPERM. */
static int del_absent_route(int fd)
{
	struct rtentry rt = {0};
	struct sockaddr_in *dst = (struct sockaddr_in *)&rt.rt_dst;
	struct sockaddr_in *mask = (struct sockaddr_in *)&rt.rt_genmask;
	dst->sin_family = mask->sin_family = AF_INET;
	(void)inet_pton(AF_INET, "198.51.100.0", &dst->sin_addr);
	(void)inet_pton(AF_INET, "255.255.255.0", &mask->sin_addr);
	rt.rt_flags = RTF_UP;
	return ioctl(fd, SIOCDELRT, &rt);
}

/* Writing back the flags and MTU just read changes nothing when it is allowed; it must not be,
 * and neither may a route be deleted. */
void p_links(const struct probe_ctx *c, struct probe_out *o)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		pr_set(o, PROBE_PASS, "no socket to change links with: %s", pr_ename(errno));
		return;
	}
	struct ifreq fl = {0}, mtu = {0};
	snprintf(fl.ifr_name, sizeof fl.ifr_name, "lo");
	snprintf(mtu.ifr_name, sizeof mtu.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &fl) < 0 || ioctl(fd, SIOCGIFMTU, &mtu) < 0) {
		pr_set(o, PROBE_SKIP, "cannot read lo's flags: %s", pr_ename(errno));
		(void)close(fd);
		return;
	}
	int r1 = ioctl(fd, SIOCSIFFLAGS, &fl), e1 = errno;
	int r2 = ioctl(fd, SIOCSIFMTU, &mtu), e2 = errno;
	int r3 = del_absent_route(fd), e3 = errno;
	(void)close(fd);
	if (r1 == 0 || r2 == 0)
		pr_set(o, PROBE_FAIL, "lo's %s could be set (net %s): links can be changed",
		       r1 == 0 ? "flags" : "MTU", net_mode_name(c->net));
	else if (r3 == 0 || (e3 != EPERM && e3 != EACCES))
		pr_set(o, PROBE_FAIL, "deleting a route was not refused (%s, net %s): routes can be "
				      "changed", r3 == 0 ? "done" : pr_ename(e3), net_mode_name(c->net));
	else
		pr_set(o, PROBE_PASS, "setting lo's flags: %s, its MTU: %s; deleting a route: %s",
		       pr_ename(e1), pr_ename(e2), pr_ename(e3));
}

/* --net allow's capture (doc/design.md §4): a connect to an address of the DNS stub's range
 * that it never gave out is refused by agentjail at once (ECONNREFUSED; without the capture the
 * namespace would answer ENETUNREACH), an IPv4-mapped one too; TCP Fast Open is refused
 * (EOPNOTSUPP, ENOPROTOOPT: data in a SYN would leave before any decision); and no process of
 * the jail can install a second listener to answer connects itself (EBUSY). */
void p_capture(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->net != NET_ALLOW) {
		pr_set(o, PROBE_SKIP, "connections are captured only with --net allow (net %s)",
		       net_mode_name(c->net));
		return;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(443)};
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6, .sin6_port = htons(443)};
	(void)inet_pton(AF_INET, CAPTURE_ADDR, &sa.sin_addr);
	(void)inet_pton(AF_INET6, "::ffff:" CAPTURE_ADDR, &s6.sin6_addr);
	long long ms4 = 0, ms6 = 0;
	int e4 = timed_connect((struct sockaddr *)&sa, sizeof sa, &ms4);
	int e6 = timed_connect((struct sockaddr *)&s6, sizeof s6, &ms6);
	if (e4 != ECONNREFUSED || e6 != ECONNREFUSED || ms4 >= RAW_TCP_LIMIT_MS ||
	    ms6 >= RAW_TCP_LIMIT_MS) {
		pr_set(o, PROBE_FAIL, "a connect to %s:443 (never given out by the DNS stub) gave "
				      "%s in %lld ms, IPv4-mapped %s in %lld ms: not refused by the "
				      "capture (ECONNREFUSED at once)", CAPTURE_ADDR,
		       e4 ? pr_ename(e4) : "a connection", ms4, e6 ? pr_ename(e6) : "a connection",
		       ms6);
		return;
	}
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	int tfo = fd < 0 ? errno
		  : sendto(fd, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&sa, sizeof sa) < 0 ? errno
											   : 0;
	int tfoc = fd < 0 ? errno
		   : setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one) < 0 ? errno
											     : 0;
	if (fd >= 0)
		(void)close(fd);
	if (tfo != EOPNOTSUPP || tfoc != ENOPROTOOPT) {
		pr_set(o, PROBE_FAIL, "TCP Fast Open is not refused: sendto(MSG_FASTOPEN) %s, "
				      "TCP_FASTOPEN_CONNECT %s", tfo ? pr_ename(tfo) : "sent",
		       tfoc ? pr_ename(tfoc) : "set");
		return;
	}
	/* a second listener, in a child: a filter cannot be taken off again */
	pid_t pid = fork();
	if (pid == 0) {
		int lfd = -1;
		struct err e = {0};
		_exit(capfilter_install(&lfd, &e) == 0 ? 0 : e.errnum == EBUSY ? 1 : 2);
	}
	int ws = 0;
	if (pid < 0 || waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 1) {
		pr_set(o, PROBE_FAIL, "a process of the jail %s a seccomp listener of its own",
		       pid > 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? "could install"
									: "could not be tested for");
		return;
	}
	pr_set(o, PROBE_PASS, "connects to %s:443 (never given out) refused at once (%lld ms, "
			      "IPv4-mapped %lld ms); Fast Open refused; no second listener (EBUSY)",
	       CAPTURE_ADDR, ms4, ms6);
}
