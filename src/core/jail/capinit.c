/* capinit: init's side of the capture channel (see capinit.h). */
#include "core/jail/capinit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/jail/ctl.h"
#include "core/plan/capwire.h"

/* connect(2) on sfd to the request's address, here; its errno or 0. A relative path is the
 * caller's: resolved from its working directory, then init goes back to its own. */
static int connect_here(int sfd, const struct capwire_req *rq)
{
	struct sockaddr_storage sa;
	memset(&sa, 0, sizeof sa);
	memcpy(&sa, rq->addr, rq->len);
	const char *path = (const char *)rq->addr + sizeof(sa_family_t);
	bool relative = sa.ss_family == AF_UNIX && rq->len > sizeof(sa_family_t) && path[0] &&
			path[0] != '/';
	int back = -1;
	if (relative) {
		char cwd[48];
		(void)snprintf(cwd, sizeof cwd, "/proc/%d/cwd", (int)rq->tid);
		int d = rq->tid > 0 ? open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		if (d < 0)
			return rq->tid > 0 ? errno : ENOENT;
		back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		int r = back < 0 ? errno : fchdir(d) < 0 ? errno : 0;
		(void)close(d);
		if (r) {
			if (back >= 0)
				(void)close(back);
			return r;
		}
	}
	/* the file's flags are the command's too: non-blocking only for this call */
	int fl = fcntl(sfd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK))
		(void)fcntl(sfd, F_SETFL, fl | O_NONBLOCK);
	int err = connect(sfd, (struct sockaddr *)&sa, rq->len) == 0 ? 0 : errno;
	if (fl >= 0 && !(fl & O_NONBLOCK))
		(void)fcntl(sfd, F_SETFL, fl);
	if (back >= 0) {
		if (fchdir(back) < 0)
			(void)0; /* init's own directory is never used again for a path */
		(void)close(back);
	}
	return err;
}

int capinit_serve(int chan)
{
	struct capwire_req rq;
	int sfd = -1;
	ssize_t n = ctl_recv_with_fds(chan, &rq, sizeof rq, &sfd, 1, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN))
		return 0;
	if (n != (ssize_t)sizeof rq)
		return 1; /* nothing agentjail sends (its fd, if any, is closed) */
	struct capwire_res rs = {.id = rq.id};
	rs.err = sfd < 0 || rq.len < sizeof(sa_family_t) || rq.len > CAPWIRE_ADDR_MAX
			 ? EINVAL
			 : connect_here(sfd, &rq);
	if (sfd >= 0)
		(void)close(sfd);
	(void)send(chan, &rs, sizeof rs, MSG_NOSIGNAL | MSG_DONTWAIT);
	return 1;
}
