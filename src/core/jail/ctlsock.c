/* ctlsock: see ctlsock.h. */
#include "core/jail/ctlsock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fdmsg.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define OUT_MAX (64 * 1024) /* a peer that reads nothing is let go past this */

struct peer {
	int fd;
	struct ctlsock_peer who; /* and the fds that came with the line being read */
	char in[CTLPROTO_LINE_MAX + 2];
	size_t inlen;
	struct strbuf out;
	size_t outoff;
	bool closing; /* the reply is the last: close once it is out */
};

struct ctlsock {
	int fd;
	char *path;
	struct peer peers[CTLSOCK_CLIENTS_MAX];
	size_t npeers;
};

char *ctlsock_path(const char *state_dir, const char *session_id)
{
	return xasprintf("%s/run/%s.sock", state_dir, session_id);
}

/* path as a socket address; a path too long for sun_path goes through its directory's fd
 * (*dirfd, to close after the call). */
static int addr_of(const char *path, struct sockaddr_un *a, int *dirfd, struct err *e)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	*dirfd = -1;
	if (strlen(path) < sizeof a->sun_path) {
		memcpy(a->sun_path, path, strlen(path) + 1);
		return 0;
	}
	char *dir = path_dirname(path);
	*dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (*dirfd < 0)
		return err_set(e, errno, path, "cannot open the control socket's directory");
	int n = snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d/%s", *dirfd,
			 path_basename(path));
	if (n < 0 || (size_t)n >= sizeof a->sun_path) {
		(void)close(*dirfd);
		*dirfd = -1;
		return err_set(e, ENAMETOOLONG, path, "the control socket's name is too long");
	}
	return 0;
}

/* The run directory: ours, 0700 (made so when missing). */
static int own_dir(const char *path, struct err *e)
{
	char *dir = path_dirname(path);
	struct stat st;
	if (stat(dir, &st) < 0 && errno == ENOENT && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		err_set(e, errno, dir, "cannot make the directory of the sessions' control sockets");
		free(dir);
		return -1;
	}
	int rc = 0;
	if (lstat(dir, &st) < 0)
		rc = err_set(e, errno, dir, "cannot examine the control sockets' directory");
	else if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		rc = err_set(e, EPERM, dir,
			     "the control sockets' directory is not a directory of yours, 0700");
	if (rc < 0)
		err_hint(e, "remove it; agentjail makes it again");
	free(dir);
	return rc;
}

static int try_bind(int fd, const char *path, struct err *e)
{
	struct sockaddr_un a;
	int dirfd;
	if (addr_of(path, &a, &dirfd, e) < 0)
		return -1;
	int r = bind(fd, (struct sockaddr *)&a, sizeof a);
	int err = errno;
	if (r < 0 && err == EADDRINUSE) {
		/* a socket a run left there: replaced when nobody answers on it */
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		bool live = probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof a) == 0;
		if (probe >= 0)
			(void)close(probe);
		struct stat st;
		if (!live && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && unlink(path) == 0)
			r = bind(fd, (struct sockaddr *)&a, sizeof a);
		err = r < 0 ? (live ? EADDRINUSE : errno) : 0;
	}
	if (dirfd >= 0)
		(void)close(dirfd);
	if (r < 0)
		return err_set(e, err, path, "cannot listen on the session's control socket");
	return 0;
}

int ctlsock_listen(const char *path, struct ctlsock **out, struct err *e)
{
	*out = NULL;
	if (own_dir(path, e) < 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(e, errno, path, "cannot make the session's control socket");
	if (try_bind(fd, path, e) < 0 || chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
		if (!e->what[0])
			err_set(e, errno, path, "cannot listen on the session's control socket");
		(void)close(fd);
		return -1;
	}
	struct ctlsock *s = xcalloc(1, sizeof *s);
	s->fd = fd;
	s->path = xstrdup(path);
	*out = s;
	return 0;
}

size_t ctlsock_fill(struct ctlsock *s, struct pollfd *pfd, size_t max)
{
	size_t n = 0;
	if (!s || !max)
		return 0;
	pfd[n++] = (struct pollfd){.fd = s->npeers < CTLSOCK_CLIENTS_MAX ? s->fd : -1,
				   .events = POLLIN};
	for (size_t i = 0; i < s->npeers && n < max; i++) {
		struct peer *p = &s->peers[i];
		bool pending = p->outoff < p->out.len;
		pfd[n++] = (struct pollfd){.fd = p->fd, .events = pending ? POLLOUT : POLLIN};
	}
	return n;
}

static void close_fds(struct ctlsock_peer *w)
{
	for (size_t i = 0; i < w->nfds; i++)
		if (w->fds[i] >= 0)
			(void)close(w->fds[i]);
	w->nfds = 0;
}

static void drop(struct ctlsock *s, size_t i)
{
	(void)close(s->peers[i].fd);
	close_fds(&s->peers[i].who);
	sb_free(&s->peers[i].out);
	s->peers[i] = s->peers[--s->npeers];
	memset(&s->peers[s->npeers], 0, sizeof s->peers[s->npeers]);
}

/* One line of a peer's: its reply queued. */
static void line(struct peer *p, const char *l, size_t len, ctlsock_handler h, void *arg)
{
	struct ctl_req req;
	const char *why = NULL;
	if (ctlproto_parse(l, len, &req, &why) < 0) {
		sb_addf(&p->out, "err bad request: %s\n", why);
		return;
	}
	if (req.version != CTLPROTO_VERSION) {
		sb_addf(&p->out, "err version: this agentjail speaks AJ%d\n", CTLPROTO_VERSION);
		return;
	}
	char *r = h(arg, &req, &p->who);
	sb_add(&p->out, r ? r : "err internal\n");
	free(r);
}

/* Read what the peer sent and answer each whole line; false: let it go. */
static bool peer_in(struct peer *p, ctlsock_handler h, void *arg)
{
	for (;;) {
		ssize_t k = fdmsg_recv_stream(p->fd, p->in + p->inlen, sizeof p->in - p->inlen,
					      p->who.fds, CTLSOCK_FDS_MAX, &p->who.nfds, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			return true;
		if (k <= 0)
			return false;
		p->inlen += (size_t)k;
		char *nl;
		while ((nl = memchr(p->in, '\n', p->inlen))) {
			size_t len = (size_t)(nl - p->in);
			line(p, p->in, len, h, arg);
			close_fds(&p->who); /* those the handler did not take: one line's only */
			memmove(p->in, nl + 1, p->inlen - len - 1);
			p->inlen -= len + 1;
		}
		if (p->inlen == sizeof p->in) { /* a line longer than any request */
			sb_add(&p->out, "err bad request: the line is too long\n");
			p->closing = true;
			p->inlen = 0;
			return true;
		}
	}
}

/* Write what is queued; false: let it go. */
static bool peer_out(struct peer *p)
{
	while (p->outoff < p->out.len) {
		ssize_t k = send(p->fd, p->out.s + p->outoff, p->out.len - p->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			return p->out.len - p->outoff < OUT_MAX;
		if (k <= 0)
			return false;
		p->outoff += (size_t)k;
	}
	sb_free(&p->out);
	p->outoff = 0;
	return !p->closing;
}

static void accept_peers(struct ctlsock *s)
{
	while (s->npeers < CTLSOCK_CLIENTS_MAX) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred uc;
		socklen_t len = sizeof uc;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0 ||
		    (uc.uid != geteuid() && uc.uid != 0)) {
			(void)close(fd); /* not the user's, not root's: no word */
			continue;
		}
		s->peers[s->npeers++] = (struct peer){.fd = fd, .who = {.uid = uc.uid, .pid = uc.pid}};
	}
}

void ctlsock_handle(struct ctlsock *s, const struct pollfd *pfd, size_t n, ctlsock_handler h,
		    void *arg)
{
	if (!s || !n)
		return;
	/* peers from the last (pfd[1 + i] is peers[i]: dropping one moves the last one in) */
	for (size_t i = s->npeers < n - 1 ? s->npeers : n - 1; i-- > 0;) {
		struct peer *p = &s->peers[i];
		short re = pfd[1 + i].revents;
		bool keep = true;
		if (re & POLLIN)
			keep = peer_in(p, h, arg);
		else if (re & (POLLHUP | POLLERR) && !(re & POLLOUT))
			keep = false;
		if (keep && p->out.len)
			keep = peer_out(p);
		if (!keep)
			drop(s, i);
	}
	if (pfd[0].revents & POLLIN)
		accept_peers(s);
}

void ctlsock_close(struct ctlsock *s)
{
	if (!s)
		return;
	while (s->npeers)
		drop(s, s->npeers - 1);
	(void)close(s->fd);
	(void)unlink(s->path);
	free(s->path);
	free(s);
}

/* ---- the client ---- */

static int wait_for(int fd, short ev, long long end)
{
	for (;;) {
		long long left = end - clock_mono_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct pollfd p = {.fd = fd, .events = ev};
		int r = poll(&p, 1, (int)left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* The request line, with fds attached to its first byte. */
static int send_line(int fd, const char *line_, const int *fds, size_t n)
{
	struct strbuf req = STRBUF_INIT;
	sb_addf(&req, "%s\n", line_);
	int rc = n ? fdmsg_send(fd, req.s, 1, fds, n, 0) : 0;
	if (rc == 0)
		rc = fs_write_all(fd, req.s + (n ? 1 : 0), req.len - (n ? 1 : 0));
	sb_free(&req);
	return rc;
}

int ctlsock_call(const char *path, const char *line_, int timeout_ms, struct strv *reply,
		 struct err *e)
{
	return ctlsock_call_fds(path, line_, NULL, 0, timeout_ms, reply, e);
}

int ctlsock_call_fds(const char *path, const char *line_, const int *fds, size_t nfds,
		     int timeout_ms, struct strv *reply, struct err *e)
{
	if (nfds > CTLSOCK_FDS_MAX)
		return err_set(e, EINVAL, path, "too many fds for one request");
	long long end = clock_mono_ms() + timeout_ms;
	struct sockaddr_un a;
	int dirfd;
	if (addr_of(path, &a, &dirfd, e) < 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&a, sizeof a);
	int err = errno;
	if (dirfd >= 0)
		(void)close(dirfd);
	if (r < 0) {
		if (fd >= 0)
			(void)close(fd);
		err_set(e, err, path, "cannot reach the session");
		err_hint(e, err == ENOENT || err == ECONNREFUSED
				    ? "it is not running (or not in the bwrap jail)"
				    : "is it yours?");
		return -1;
	}
	struct ucred uc;
	socklen_t ulen = sizeof uc;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ulen) < 0 ||
	    (uc.uid != geteuid() && uc.uid != 0 && geteuid() != 0)) {
		(void)close(fd);
		return err_set(e, EPERM, path, "the control socket is served by another user");
	}
	if (send_line(fd, line_, fds, nfds) < 0) {
		err_set(e, errno, path, "cannot send to the session");
		(void)close(fd);
		return -1;
	}
	struct strbuf in = STRBUF_INIT;
	long want = -1; /* lines still to come after the head */
	int rc = -1;
	while (want != 0) {
		char *nl;
		while (want != 0 && (nl = memchr(in.s ? in.s : "", '\n', in.len))) {
			size_t len = (size_t)(nl - in.s);
			char *l = xstrndup(in.s, len);
			memmove(in.s, nl + 1, in.len - len - 1);
			in.len -= len + 1;
			in.s[in.len] = '\0';
			if (want < 0) {
				const char *rest;
				long n;
				if (ctlproto_reply_head(l, &n, &rest) < 0) {
					free(l);
					err_set(e, EPROTO, path, "the session's answer is not one");
					goto out;
				}
				want = n;
			} else {
				want--;
			}
			strv_push_take(reply, l);
		}
		if (want == 0)
			break;
		char buf[4096];
		if (wait_for(fd, POLLIN, end) < 0) {
			err_set(e, errno, path, "the session did not answer");
			goto out;
		}
		ssize_t k = recv(fd, buf, sizeof buf, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || in.len + (size_t)k > OUT_MAX) {
			err_set(e, k < 0 ? errno : EPROTO, path, "the session's answer was cut off");
			goto out;
		}
		sb_addn(&in, buf, (size_t)k);
	}
	rc = 0;
out:
	sb_free(&in);
	(void)close(fd);
	return rc;
}
