/* agentjail-init __connect HOST PORT: ssh's ProxyCommand inside a `--net allow` jail (the jail's
 * GIT_SSH_COMMAND names it, doc/design.md §4). One CONNECT through the proxy on
 * 127.0.0.1:3128, then stdin ⇄ tunnel ⇄ stdout until both directions are closed. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/net/connreply.h"
#include "core/plan/netrules.h"
#include "util/cleanup.h"
#include "util/fs.h"

enum { CONNECT_REPLY_TIMEOUT_MS = 60000, RELAY_BUF = 65536 };

static int proxy_socket(void)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(NET_PROXY_PORT),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
		return s;
	int saved = errno;
	(void)close(s);
	errno = saved;
	return -1;
}

/* Read the reply head (bounded in size and time). Bytes after it are the tunnel's first. */
static int read_reply(int s, char *buf, size_t cap, size_t *got, struct connect_reply *r)
{
	*got = 0;
	for (;;) {
		struct pollfd p = {.fd = s, .events = POLLIN};
		int pr = poll(&p, 1, CONNECT_REPLY_TIMEOUT_MS);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			errno = pr == 0 ? ETIMEDOUT : errno;
			return -1;
		}
		ssize_t n = read(s, buf + *got, cap - *got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errno = n == 0 ? ECONNRESET : errno;
			return -1;
		}
		*got += (size_t)n;
		int rc = connect_reply_parse(buf, *got, r);
		if (rc == CR_OK)
			return 0;
		if (rc != CR_NEED_MORE || *got == cap) {
			errno = EPROTO;
			return -1;
		}
	}
}

/* stdin → s and s → stdout, each direction closed on its own (half-close), until both are. */
static int relay(int s)
{
	static char buf[RELAY_BUF];
	bool up = true, down = true; /* stdin → s, s → stdout */
	while (up || down) {
		struct pollfd p[2] = {{.fd = up ? 0 : -1, .events = POLLIN},
				      {.fd = down ? s : -1, .events = POLLIN}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (up && (p[0].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) {
			ssize_t n = read(0, buf, sizeof buf);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || fs_write_all(s, buf, (size_t)n) < 0) {
				up = false;
				(void)shutdown(s, SHUT_WR);
			}
		}
		if (down && (p[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) {
			ssize_t n = read(s, buf, sizeof buf);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || fs_write_all(1, buf, (size_t)n) < 0) {
				down = false;
				(void)close(1); /* ssh sees the end of the stream */
			}
		}
	}
	return 0;
}

int cmd_connect(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: agentjail-init __connect HOST PORT   (ssh's ProxyCommand inside a jail)\n",
		      stderr);
		return EXIT_USAGE;
	}
	char *end = NULL;
	errno = 0;
	long port = strtol(argv[1], &end, 10);
	size_t len = 0;
	_cleanup_free_ char *req = NULL;
	if (errno || !end || *end || end == argv[1] || port < 1 || port > 65535 ||
	    !(req = connect_request(argv[0], (uint16_t)port, &len))) {
		cmd_warn("__connect: not a host and port: %s %s", argv[0], argv[1]);
		return EXIT_USAGE;
	}
	(void)signal(SIGPIPE, SIG_IGN); /* a closed end is an error return, not death */
	int s = proxy_socket();
	if (s < 0) {
		cmd_warn("__connect: cannot reach the jail's proxy on 127.0.0.1:%d: %s (is this a "
			 "--net allow jail?)",
			 NET_PROXY_PORT, strerror(errno));
		return 1;
	}
	char buf[CONNECT_REPLY_MAX];
	size_t got = 0;
	struct connect_reply r;
	if (fs_write_all(s, req, len) < 0 || read_reply(s, buf, sizeof buf, &got, &r) < 0) {
		cmd_warn("__connect: %s:%s: no answer from the proxy: %s", argv[0], argv[1],
			 strerror(errno));
		(void)close(s);
		return 1;
	}
	if (r.status != 200) {
		cmd_warn("__connect: %s:%s refused by the proxy (%d): %s", argv[0], argv[1],
			 r.status, r.reason);
		(void)close(s);
		return 1;
	}
	/* what came with the head is the server's first bytes */
	if (got > r.head_len && fs_write_all(1, buf + r.head_len, got - r.head_len) < 0) {
		(void)close(s);
		return 1;
	}
	int rc = relay(s);
	(void)close(s);
	return rc < 0 ? 1 : 0;
}
