/* probes, category "network": Unix sockets, abstract sockets, loopback TCP, egress. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Network                                                                                 */

static int connect_unix(const char *name, bool abstract)
{
	struct sockaddr_un sa;
	socklen_t len;
	if (pr_unix_addr(name, abstract, &sa, &len) < 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int rc = connect(fd, (struct sockaddr *)&sa, len);
	int saved = errno;
	(void)close(fd);
	errno = saved;
	return rc;
}

static void unix_probe(const char *path, struct probe_out *o)
{
	if (!path) {
		pr_set(o, PROBE_SKIP, "no socket planted there on the host");
		return;
	}
	if (connect_unix(path, false) == 0)
		pr_set(o, PROBE_FAIL, "connected to the host's socket %s", path);
	else
		pr_set(o, PROBE_PASS, "the host's socket %s: %s", path, pr_ename(errno));
}

void p_unix_run(const struct probe_ctx *c, struct probe_out *o)
{
	unix_probe(c->unix_run, o);
}

void p_unix_tmp(const struct probe_ctx *c, struct probe_out *o)
{
	unix_probe(c->unix_tmp, o);
}

/* Abstract sockets live in the network namespace: unreachable with the network off; with it on,
 * only Landlock scoping (ABI >= 6) keeps the host's out of reach. */
void p_abstract(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->abstract) {
		pr_set(o, PROBE_SKIP, "no abstract socket planted on the host");
		return;
	}
	int abi = landlock_abi();
	int rc = connect_unix(c->abstract, true);
	int err = errno;
	if (rc < 0)
		pr_set(o, PROBE_PASS, "the host's abstract socket @%s: %s%s", c->abstract, pr_ename(err),
		    err == EPERM ? " (Landlock scoping)" : "");
	else if (c->net == NET_ON && abi < 6)
		pr_set(o, PROBE_WARN,
		    "net on: the host's abstract Unix sockets are reachable (this "
		    "kernel has Landlock ABI %d, scoping needs 6)",
		    abi);
	else
		pr_set(o, PROBE_FAIL,
		    "connected to the host's abstract socket @%s (net %s, Landlock "
		    "ABI %d)",
		    c->abstract, net_mode_name(c->net), abi);
}

void p_loopback_tcp(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->tcp_port <= 0) {
		pr_set(o, PROBE_SKIP, "no loopback listener planted on the host");
		return;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->tcp_port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {1, 0};
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	int rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&sa, sizeof sa);
	int err = errno;
	if (fd >= 0)
		(void)close(fd);
	if (rc < 0)
		pr_set(o, PROBE_PASS, "the host's 127.0.0.1:%d: %s", c->tcp_port, pr_ename(err));
	else if (c->net == NET_ON)
		pr_set(o, PROBE_WARN,
		    "net on: the host's loopback services are reachable "
		    "(127.0.0.1:%d answered)",
		    c->tcp_port);
	else
		pr_set(o, PROBE_FAIL, "connected to the host's 127.0.0.1:%d with the network %s",
		    c->tcp_port, net_mode_name(c->net));
}

/* connect() on a UDP socket only looks up a route: no packet leaves. */
static void egress(const struct probe_ctx *c, struct probe_out *o, int fam, const char *addr)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	if (fam == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(53);
		(void)inet_pton(AF_INET, addr, &s4->sin_addr);
		len = sizeof *s4;
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(53);
		(void)inet_pton(AF_INET6, addr, &s6->sin6_addr);
		len = sizeof *s6;
	}
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&ss, len);
	int err = errno;
	if (fd >= 0)
		(void)close(fd);
	if (rc < 0)
		pr_set(o, PROBE_PASS, "no route to %s: %s (nothing sent)", addr, pr_ename(err));
	else if (c->net == NET_ON)
		pr_set(o, PROBE_PASS,
		    "net on: a route to %s exists, as the policy says (nothing "
		    "sent)",
		    addr);
	else
		pr_set(o, PROBE_FAIL, "a route to %s exists with the network %s (nothing sent)", addr,
		    net_mode_name(c->net));
}

void p_egress4(const struct probe_ctx *c, struct probe_out *o)
{
	egress(c, o, AF_INET, "1.1.1.1");
}

void p_egress6(const struct probe_ctx *c, struct probe_out *o)
{
	egress(c, o, AF_INET6, "2606:4700:4700::1111");
}

