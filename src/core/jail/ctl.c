#include "core/jail/ctl.h"

#include <unistd.h>

#include "util/fdmsg.h"

/* The messages are fdmsg's, of one size (util/fdmsg.h). */

int ctl_send(int fd, uint32_t type, int32_t value)
{
	return ctl_send_fd(fd, type, value, -1);
}

int ctl_recv(int fd, struct ctl_msg *m)
{
	int got;
	int r = ctl_recv_fd(fd, m, &got);
	if (got >= 0)
		(void)close(got); /* an fd no one asked for */
	return r;
}

int ctl_send_fd(int fd, uint32_t type, int32_t value, int pass)
{
	struct ctl_msg m = {.type = type, .value = value};
	return fdmsg_send(fd, &m, sizeof m, pass, 0);
}

int ctl_recv_fd(int fd, struct ctl_msg *m, int *got)
{
	return fdmsg_recv(fd, m, sizeof *m, got, 0);
}
