#include "core/jail/ctl.h"

#include <errno.h>
#include <sys/socket.h>

int ctl_send(int fd, uint32_t type, int32_t value)
{
	struct ctl_msg m = {.type = type, .value = value};
	for (;;) {
		ssize_t n = send(fd, &m, sizeof m, MSG_NOSIGNAL);
		if (n == (ssize_t)sizeof m)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n >= 0)
			errno = EMSGSIZE;
		return -1;
	}
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
