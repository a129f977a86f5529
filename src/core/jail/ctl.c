#include "core/jail/ctl.h"

#include <errno.h>
#include <unistd.h>

#include "util/fdmsg.h"

/* The messages are fdmsg's, of one size (util/fdmsg.h). */

int ctl_send(int fd, uint32_t type, int32_t value)
{
	struct ctl_msg m = {.type = type, .value = value};
	return fdmsg_send(fd, &m, sizeof m, NULL, 0, 0);
}

int ctl_recv(int fd, struct ctl_msg *m)
{
	return ctl_recv_fds(fd, m, NULL, 0); /* an fd no one asked for is closed */
}

int ctl_send_fds(int fd, uint32_t type, int32_t value, const int *pass, size_t n)
{
	if (n < 1 || n > CTL_FDS_MAX) {
		errno = EINVAL;
		return -1;
	}
	struct ctl_msg m = {.type = type, .value = value};
	return fdmsg_send(fd, &m, sizeof m, pass, n, 0);
}

int ctl_send_fd(int fd, uint32_t type, int32_t value, int pass)
{
	return ctl_send_fds(fd, type, value, &pass, 1);
}

ssize_t ctl_recv_with_fds(int fd, void *buf, size_t len, int *got, size_t max, int flags)
{
	return fdmsg_recv(fd, buf, len, got, max, flags);
}

int ctl_recv_fds(int fd, struct ctl_msg *m, int *got, size_t max)
{
	ssize_t n = fdmsg_recv(fd, m, sizeof *m, got, max, 0);
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
