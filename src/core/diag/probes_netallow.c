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
#include "core/plan/netrules.h"
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

/* Ask the jail's DNS stub (127.0.0.1:53) for name's A record: the answer's length in a (-1
 * with errno: none within 2 s), its query's in *qn. */
static ssize_t ask_stub(const char *name, uint8_t *a, size_t cap, size_t *qn)
{
	uint8_t q[300];
	*qn = dns_query(name, q, sizeof q);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = *qn ? socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) : -1;
	if (fd < 0)
		return -1;
	ssize_t n = -1;
	if (sendto(fd, q, *qn, 0, (struct sockaddr *)&sa, sizeof sa) == (ssize_t)*qn) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 2000) == 1)
			n = recv(fd, a, cap, 0);
		else
			errno = ETIMEDOUT;
	}
	int err = errno;
	(void)close(fd);
	errno = err;
	if (n >= 12 && (a[0] != q[0] || a[1] != q[1] || !(a[2] & 0x80)))
		n = 0; /* not the answer to it */
	return n;
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
	uint8_t a[512];
	size_t qn;
	long long t0 = clock_mono_ms();
	ssize_t n = ask_stub(name, a, sizeof a, &qn);
	int err = errno;
	long long ms = clock_mono_ms() - t0;
	if (!qn) {
		pr_set(o, PROBE_FAIL, "cannot ask the DNS stub: %s", pr_ename(err));
		return;
	}
	if (n < 12)
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

/* ---- the names inside approved connections (issue 25 item 2) ----
 * The host plants a TLS bait (probes_bait.c) reached by probe_tls_bait_name, mapped to the
 * host's 127.0.0.1 and allowed at its port as TLS: what reaches it is answered with
 * PROBE_TLS_BAIT_REPLY. A ClientHello naming another name must be refused (a TLS
 * access_denied alert, nothing reaching the bait), one naming the bait's name must pass, in a
 * CONNECT tunnel and in a captured direct connection alike. */

#define SNI_FOREIGN "foreign.example"
#define SNI_WAIT_MS 3000

/* A port number (1..65535, nothing after it): 0, or -1. */
static int parse_num_str(const char *s, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || (*end && *end != '/') || v < 1 || v > 65535)
		return -1;
	*out = v;
	return 0;
}

/* A TLS 1.2 ClientHello in one record, naming sni: its length. */
static size_t client_hello(const char *sni, uint8_t *out)
{
	size_t sl = strlen(sni), n = 0;
	static const uint8_t suites[] = {0, 4, 0xc0, 0x2f, 0x13, 0x01};
	uint8_t body[512];
	size_t b = 0;
	body[b++] = 3, body[b++] = 3;              /* client_version TLS 1.2 */
	memset(body + b, 0x61, 32), b += 32;      /* random */
	body[b++] = 0;                             /* session id */
	memcpy(body + b, suites, sizeof suites), b += sizeof suites;
	body[b++] = 1, body[b++] = 0;              /* compression: null */
	size_t ext = 9 + sl;                       /* server_name: type, len, list len, entry */
	body[b++] = (uint8_t)(ext >> 8), body[b++] = (uint8_t)ext;
	body[b++] = 0, body[b++] = 0;
	body[b++] = (uint8_t)((ext - 4) >> 8), body[b++] = (uint8_t)(ext - 4);
	body[b++] = (uint8_t)((ext - 6) >> 8), body[b++] = (uint8_t)(ext - 6);
	body[b++] = 0;
	body[b++] = (uint8_t)(sl >> 8), body[b++] = (uint8_t)sl;
	memcpy(body + b, sni, sl), b += sl;
	size_t hs = b + 4;
	out[n++] = 22, out[n++] = 3, out[n++] = 1; /* handshake record */
	out[n++] = (uint8_t)(hs >> 8), out[n++] = (uint8_t)hs;
	out[n++] = 1;                              /* ClientHello */
	out[n++] = 0, out[n++] = (uint8_t)(b >> 8), out[n++] = (uint8_t)b;
	memcpy(out + n, body, b);
	return n + b;
}

/* Read what fd sends until EOF or SNI_WAIT_MS, into buf (NUL-terminated); its length. */
static size_t read_some(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	long long end = clock_mono_ms() + SNI_WAIT_MS;
	while (n < cap - 1) {
		long long left = end - clock_mono_ms();
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, (int)left) != 1)
			break;
		ssize_t k = read(fd, buf + n, cap - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		if (memchr(buf, '\n', n) && !strncmp(buf, "HTTP/", 5) && strstr(buf, "\r\n\r\n"))
			break; /* a proxy's answer head, whole */
	}
	buf[n] = '\0';
	return n;
}

/* A ClientHello naming sni on fd (closed here): 1 it reached the bait, 0 refused with the TLS
 * alert, -1 anything else (said in why). */
static int hello_outcome(int fd, const char *sni, char *why, size_t cap)
{
	static const uint8_t alert[7] = {21, 3, 1, 0, 2, 2, 49};
	uint8_t h[600];
	size_t hn = client_hello(sni, h);
	char got[256];
	size_t n = write(fd, h, hn) == (ssize_t)hn ? read_some(fd, got, sizeof got) : 0;
	(void)close(fd);
	if (!strncmp(got, PROBE_TLS_BAIT_REPLY, sizeof PROBE_TLS_BAIT_REPLY - 1))
		return 1;
	if (n == sizeof alert && !memcmp(got, alert, n))
		return 0;
	snprintf(why, cap, n ? "%zu other bytes" : "nothing, then the end", n);
	return -1;
}

/* A TCP connection to 127.0.0.1:port, or to addr (4 bytes) when given; -1 with why. */
static int dial(const uint8_t *addr, int port, char *why, size_t cap)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (addr)
		memcpy(&sa.sin_addr, addr, 4);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {.tv_sec = SNI_WAIT_MS / 1000};
	if (fd >= 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		snprintf(why, cap, "connect: %s", pr_ename(errno));
		if (fd >= 0)
			(void)close(fd);
		return -1;
	}
	return fd;
}

/* The proxy's port on 127.0.0.1: the jail's HTTPS_PROXY says it (the landlock backend's is not
 * 3128). */
static int proxy_port(void)
{
	const char *v = getenv("HTTPS_PROXY");
	const char *pfx = "http://127.0.0.1:";
	long port;
	if (v && !strncmp(v, pfx, strlen(pfx)) && !parse_num_str(v + strlen(pfx), &port))
		return (int)port;
	return NET_PROXY_PORT;
}

/* A CONNECT tunnel to name:port through the jail's proxy, or -1 with why. */
static int tunnel(const char *name, int port, char *why, size_t cap)
{
	int fd = dial(NULL, proxy_port(), why, cap);
	if (fd < 0)
		return -1;
	char req[200], got[512];
	int rn = snprintf(req, sizeof req, "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n", name,
			  port, name, port);
	if (write(fd, req, (size_t)rn) != rn || !read_some(fd, got, sizeof got) ||
	    strncmp(got, "HTTP/1.1 200", 12)) {
		snprintf(why, cap, "the proxy answered %.*s", (int)strcspn(got, "\r\n"), got);
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* A direct connection to name:port (the DNS stub's address for it): captured. -1 with why. */
static int direct(const char *name, int port, char *why, size_t cap)
{
	uint8_t a[512];
	size_t qn;
	ssize_t n = ask_stub(name, a, sizeof a, &qn);
	/* the one answer follows the question: a pointer to it, type A, class, TTL, 4 bytes */
	if (n < (ssize_t)qn + 16 || a[7] < 1 || a[qn + 2] != 0 || a[qn + 3] != 1 ||
	    a[qn + 10] != 0 || a[qn + 11] != 4) {
		snprintf(why, cap, "the DNS stub gave no address for %s", name);
		return -1;
	}
	return dial(a + qn + 12, port, why, cap);
}

static void sni_probe(const struct probe_ctx *c, struct probe_out *o, bool via_tunnel)
{
	const char *how = via_tunnel ? "a CONNECT tunnel" : "a captured direct connection";
	if (c->net != NET_ALLOW) {
		pr_set(o, PROBE_SKIP, "TLS names are checked only with --net allow (net %s)",
		       net_mode_name(c->net));
		return;
	}
	if (c->tls_port <= 0) {
		pr_set(o, PROBE_SKIP, "the host could not plant the TLS bait");
		return;
	}
	char name[96], why[160] = "";
	probe_tls_bait_name(c->token, name, sizeof name);
	int r[2];
	const char *sni[2] = {SNI_FOREIGN, name};
	for (int i = 0; i < 2; i++) {
		int fd = via_tunnel ? tunnel(name, c->tls_port, why, sizeof why)
				    : direct(name, c->tls_port, why, sizeof why);
		r[i] = fd < 0 ? -2 : hello_outcome(fd, sni[i], why, sizeof why);
		if (r[i] == 1 && i == 0) {
			pr_set(o, PROBE_FAIL, "%s to %s:%d carried a ClientHello naming %s to the "
					      "host's server: TLS names are not checked", how, name,
			       c->tls_port, SNI_FOREIGN);
			return;
		}
		if (r[i] != (i == 0 ? 0 : 1)) {
			pr_set(o, PROBE_FAIL, "%s to %s:%d with the TLS server name %s: %s%s", how,
			       name, c->tls_port, sni[i], r[i] == -2 ? "" : "got ",
			       r[i] == 0 ? "a TLS alert (refused)" : why);
			return;
		}
	}
	pr_set(o, PROBE_PASS, "%s to an allowed name: a foreign TLS server name refused (TLS "
			      "alert), its own passed", how);
}

void p_sni_tunnel(const struct probe_ctx *c, struct probe_out *o)
{
	sni_probe(c, o, true);
}

void p_sni_capture(const struct probe_ctx *c, struct probe_out *o)
{
	sni_probe(c, o, false);
}
