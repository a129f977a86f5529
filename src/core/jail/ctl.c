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

int ctl_send_fds(int fd, uint32_t type, int32_t value, const int *pass, size_t n)
{
	struct ctl_msg m = {.type = type, .value = value};
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
	union {
		char buf[CMSG_SPACE(sizeof(int) * CTL_FDS_MAX)];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	if (n < 1 || n > CTL_FDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = CMSG_SPACE(sizeof(int) * n)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(c), pass, sizeof(int) * n);
	return send_one(fd, &mh);
}

int ctl_send_fd(int fd, uint32_t type, int32_t value, int pass)
{
	return ctl_send_fds(fd, type, value, &pass, 1);
}

ssize_t ctl_recv_with_fds(int fd, void *buf, size_t len, int *got, size_t max, int flags)
{
	for (size_t i = 0; i < max; i++)
		got[i] = -1;
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(int) * CTL_FDS_MAX)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf};
	ssize_t n;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | flags);
	while (n < 0 && errno == EINTR);
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
	if (n != (ssize_t)len) /* a malformed message: its fds are not kept */
		for (size_t i = 0; i < k; i++) {
			(void)close(got[i]);
			got[i] = -1;
		}
	return n;
}

int ctl_recv_fds(int fd, struct ctl_msg *m, int *got, size_t max)
{
	ssize_t n = ctl_recv_with_fds(fd, m, sizeof *m, got, max, 0);
	if (n == (ssize_t)sizeof *m)
		return 1;
	if (n == 0)
		return 0;
	if (n > 0)
		errno = EMSGSIZE;
	return -1;
}

int ctl_recv_fd(int fd, struct ctl_msg *m, int *got)
{
	return ctl_recv_fds(fd, m, got, 1);
}
