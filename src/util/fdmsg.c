/* fdmsg: see fdmsg.h. */
#include "util/fdmsg.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

union fdmsg_ctl {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

int fdmsg_send(int sock, const void *msg, size_t len, int pass, int flags)
{
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	union fdmsg_ctl u;
	memset(&u, 0, sizeof u);
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (pass >= 0) {
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof u.buf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass, sizeof pass);
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
		if (n == (ssize_t)len)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n >= 0)
			errno = EMSGSIZE;
		return -1;
	}
}

int fdmsg_recv(int sock, void *msg, size_t len, int *got, int flags)
{
	*got = -1;
	struct iovec iov = {.iov_base = msg, .iov_len = len};
	union fdmsg_ctl u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf};
	ssize_t n;
	while ((n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(got, CMSG_DATA(c), sizeof *got);
	if (n == (ssize_t)len && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return 1;
	if (*got >= 0) { /* not a message of ours: its fd is not kept */
		(void)close(*got);
		*got = -1;
	}
	if (n == 0)
		return 0;
	if (n > 0)
		errno = EMSGSIZE;
	return -1;
}
