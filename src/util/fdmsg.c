/* fdmsg: see fdmsg.h. */
#include "util/fdmsg.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

union fdmsg_ctl {
	char buf[CMSG_SPACE(sizeof(int) * FDMSG_FDS_MAX)];
	struct cmsghdr align;
};

int fdmsg_send(int sock, const void *msg, size_t len, const int *fds, size_t n, int flags)
{
	if (n > FDMSG_FDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	union fdmsg_ctl u;
	memset(&u, 0, sizeof u);
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (n) {
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	for (;;) {
		ssize_t k = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
		if (k == (ssize_t)len)
			return 0;
		if (k < 0 && errno == EINTR)
			continue;
		if (k >= 0)
			errno = EMSGSIZE;
		return -1;
	}
}

/* recvmsg, the fds that came appended to got[*k..max) (more are closed); *trunc: the message
 * was longer than len. */
static ssize_t recv_fds(int sock, void *buf, size_t len, int *got, size_t max, size_t *k,
			int flags, bool *trunc)
{
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	union fdmsg_ctl u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf};
	ssize_t n;
	while ((n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int one;
			memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof one);
			if (*k < max)
				got[(*k)++] = one;
			else
				(void)close(one); /* more than asked for: not kept */
		}
	}
	*trunc = n > 0 && (mh.msg_flags & MSG_TRUNC);
	return n;
}

ssize_t fdmsg_recv(int sock, void *msg, size_t len, int *got, size_t max, int flags)
{
	for (size_t i = 0; i < max; i++)
		got[i] = -1;
	size_t k = 0;
	bool trunc;
	ssize_t n = recv_fds(sock, msg, len, got, max, &k, flags, &trunc);
	if (n != (ssize_t)len || trunc) /* not a message of ours: no fd */
		for (size_t i = 0; i < k; i++) {
			(void)close(got[i]);
			got[i] = -1;
		}
	return n;
}

ssize_t fdmsg_recv_stream(int sock, void *buf, size_t len, int *got, size_t max, size_t *k,
			  int flags)
{
	bool trunc;
	return recv_fds(sock, buf, len, got, max, k, flags, &trunc);
}
