#include "core/jail/ctl.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* One message, retried on EINTR: 0, or -1 with errno. */
static int send_one(int fd, const struct msghdr *mh)
{
	for (;;) {
		ssize_t n = sendmsg(fd, mh, MSG_NOSIGNAL);
		if (n == (ssize_t)sizeof(struct ctl_msg))
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n >= 0)
			errno = EMSGSIZE;
		return -1;
	}
}

int ctl_send(int fd, uint32_t type, int32_t value)
{
	struct ctl_msg m = {.type = type, .value = value};
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	return send_one(fd, &mh);
}

int ctl_recv(int fd, struct ctl_msg *m)
{
	for (;;) {
		ssize_t n = recv(fd, m, sizeof *m, 0);
		if (n == (ssize_t)sizeof *m)
			return 1;
		if (n == 0)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			errno = EMSGSIZE;
		return -1;
	}
}

int ctl_send_fd(int fd, uint32_t type, int32_t value, int pass)
{
	struct ctl_msg m = {.type = type, .value = value};
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &pass, sizeof pass);
	return send_one(fd, &mh);
}

int ctl_recv_fd(int fd, struct ctl_msg *m, int *got)
{
	*got = -1;
	struct iovec iov = {.iov_base = m, .iov_len = sizeof *m};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf};
	for (;;) {
		ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c;
		     c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
			    c->cmsg_len == CMSG_LEN(sizeof(int)))
				memcpy(got, CMSG_DATA(c), sizeof *got);
		if (n == (ssize_t)sizeof *m)
			return 1;
		if (*got >= 0) { /* a malformed message: its fd is not kept */
			(void)close(*got);
			*got = -1;
		}
		if (n == 0)
			return 0;
		if (n > 0)
			errno = EMSGSIZE;
		return -1;
	}
}
