/* fdmsg: see fdmsg.h. */
#include "util/fdmsg.h"

#include <errno.h>
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

ssize_t fdmsg_recv(int sock, void *msg, size_t len, int *got, size_t max, int flags)
{
	for (size_t i = 0; i < max; i++)
		got[i] = -1;
	struct iovec iov = {.iov_base = msg, .iov_len = len};
	union fdmsg_ctl u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf};
	ssize_t n;
	while ((n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	size_t k = 0;
	for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int one;
			memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof one);
			if (k < max)
				got[k++] = one;
			else
				(void)close(one); /* more than asked for: not kept */
		}
	}
	if (n != (ssize_t)len || (mh.msg_flags & MSG_TRUNC)) /* not a message of ours: no fd */
		for (size_t i = 0; i < k; i++) {
			(void)close(got[i]);
			got[i] = -1;
		}
	return n;
}
