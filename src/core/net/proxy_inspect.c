/* proxy_inspect: the proxy's side of inspected hosts (doc/design.md §4d). A tunnel to a host a
 * secret is for or a request rule names, whose first bytes passed, is handed to agentjail-tls
 * with its two sockets (SCM_RIGHTS) and the bytes held; agentjail-tls sends back a net_event
 * for each decision, read here in the proxy's loop into the same queue. A plain HTTP request
 * to such a host is checked here (rules, placeholders): the proxy forwards it itself. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/httpflow.h"
#include "core/net/proxy_internal.h"
#include "core/plan/httprules.h"
#include "util/clock.h"

#define PX_INSPECT_DRAIN_MS 2000 /* proxy_stop waits at most this for agentjail-tls's last events */

/* Whether agentjail-tls is running or not: a tunnel it cannot take is refused (hand_over),
 * never relayed unread. */
bool px_inspect_wanted(const struct proxy *p, const char *host, bool tls, bool http)
{
	return (tls || http) && px_inspect_host(p, host);
}

bool px_inspect_host(const struct proxy *p, const char *host)
{
	return inspect_host(p->rules->inspect, host);
}

int px_inspect_send(struct proxy *p, const struct im_tunnel *t, int client_fd, int upstream_fd)
{
	if (p->inspect_h.fd < 0)
		return -1;
	struct imsg m = {0};
	im_tunnel_encode(t, &m);
	int fds[2] = {client_fd, upstream_fd};
	char ctl[CMSG_SPACE(sizeof fds)];
	memset(ctl, 0, sizeof ctl);
	struct iovec iov = {.iov_base = m.b.p, .iov_len = m.b.len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof ctl};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(cm), fds, sizeof fds);
	/* never waits: a helper that does not read (a full buffer) refuses the tunnel rather
	 * than stop the loop every connection runs in */
	ssize_t n;
	do
		n = sendmsg(p->inspect_h.fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	im_wipe(&m);
	return n == (ssize_t)iov.iov_len ? 0 : -1;
}

/* One message from agentjail-tls: 1 read, 0 none now, -1 gone. */
static int read_one(struct proxy *p, int flags)
{
	uint8_t buf[2048];
	ssize_t n;
	do
		n = recv(p->inspect_h.fd, buf, sizeof buf, flags | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
	if (n == 0)
		return -1;
	struct net_event ev;
	if ((size_t)n <= sizeof buf && im_event_decode(buf, (size_t)n, &ev) == 0) {
		if (ev.allowed)
			p->st.allowed += ev.proto == NP_SSH_AGENT; /* a tunnel was counted already */
		else
			p->st.denied++;
		px_events_push(&p->evq, &ev);
	}
	return 1; /* a message that is not an event is dropped, the socket kept */
}

void px_inspect_ready(struct proxy *p)
{
	for (int k = 0; k < 64; k++) {
		int r = read_one(p, MSG_DONTWAIT);
		if (r == 0)
			return;
		if (r < 0) {
			/* it is gone: no new tunnel is handed over (they are refused instead) */
			(void)px_ep_set(p, &p->inspect_h, 0);
			px_close_fd(&p->inspect_h.fd);
			return;
		}
	}
}

void px_inspect_finish(struct proxy *p)
{
	if (p->inspect_h.fd < 0)
		return;
	(void)shutdown(p->inspect_h.fd, SHUT_WR); /* no more tunnels: it finishes and closes */
	long long end = clock_mono_ms() + PX_INSPECT_DRAIN_MS;
	for (;;) {
		long long now = clock_mono_ms();
		struct pollfd pf = {.fd = p->inspect_h.fd, .events = POLLIN};
		if (now >= end || poll(&pf, 1, (int)(end - now)) <= 0)
			break;
		if (read_one(p, MSG_DONTWAIT) < 0)
			break;
	}
	px_close_fd(&p->inspect_h.fd);
}

int px_inspect_plain(const struct proxy *p, const char *host, uint16_t port, const char *buf,
		     size_t len, const struct http_req *q, char *reason, size_t cap)
{
	const struct inspect *in = p->rules->inspect;
	if (!inspect_any(in))
		return 0;
	struct hflow_ctx c = {.in = in, .host = host, .port = port};
	struct hflow_refusal r;
	if (hflow_check_plain(&c, buf, len, q, &r) == 0)
		return 0;
	(void)snprintf(reason, cap, "%s", r.reason);
	return -1;
}
