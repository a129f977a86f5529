/* serve: agentjail-tls's main loop (doc/design.md §4d). It reads the run's configuration from
 * the control socket, loads the CA, answers ready, then takes each tunnel the proxy hands over
 * (a thread each) and each connection to the filtered ssh agent (a thread each); every decision
 * goes back as an event. When agentjail shuts the control socket, it shuts every connection's
 * sockets, waits for the threads (their events sent) and returns. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/tls/serve.h"
#include "core/tls/tls_internal.h"
#include "util/xalloc.h"

#define SERVE_DRAIN_MS 1500 /* at the end, the threads have this long to send their events */

int64_t tls_wall_ms(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tls_send_event(struct tls_srv *s, const struct net_event *ev)
{
	struct imsg m = {0};
	im_event_encode(ev, &m);
	ssize_t n;
	do
		n = send(s->ctl, m.b.p, m.b.len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	im_wipe(&m); /* lost when agentjail is gone: nothing else to do with it */
}

bool tls_conn_add(struct tls_srv *s, struct tls_conn *c)
{
	(void)pthread_mutex_lock(&s->mu);
	bool ok = !s->stopping;
	if (ok) {
		c->next = s->conns;
		s->conns = c;
		s->n_conns++;
	}
	(void)pthread_mutex_unlock(&s->mu);
	return ok;
}

void tls_conn_done(struct tls_srv *s, struct tls_conn *c)
{
	(void)pthread_mutex_lock(&s->mu);
	for (struct tls_conn **pp = &s->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			s->n_conns--;
			break;
		}
	for (int i = 0; i < 2; i++)
		if (c->fd[i] >= 0)
			(void)close(c->fd[i]);
	c->fd[0] = c->fd[1] = -1;
	(void)pthread_cond_broadcast(&s->cv);
	(void)pthread_mutex_unlock(&s->mu);
}

/* Start a thread for a connection; on failure its fds are closed and the message freed. */
static void spawn(struct tls_srv *s, struct tls_tunnel_arg *a, void *(*fn)(void *))
{
	pthread_t th;
	pthread_attr_t at;
	bool started = false;
	if (tls_conn_add(s, &a->conn)) {
		(void)pthread_attr_init(&at);
		(void)pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		started = pthread_create(&th, &at, fn, a) == 0;
		(void)pthread_attr_destroy(&at);
		if (!started)
			tls_conn_done(s, &a->conn);
	} else {
		for (int i = 0; i < 2; i++)
			if (a->conn.fd[i] >= 0)
				(void)close(a->conn.fd[i]);
	}
	if (!started) {
		free(a->msg);
		free(a);
	}
}

/* A message from the proxy: a tunnel with its two sockets. 1 handled, 0 the socket's end, -1
 * failed. */
static int take_tunnel(struct tls_srv *s)
{
	uint8_t *buf = xmalloc(IM_MAX);
	char ctl[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = {.iov_base = buf, .iov_len = IM_MAX};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
			    .msg_controllen = sizeof ctl};
	ssize_t n;
	do
		n = recvmsg(s->ctl, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	int fds[2] = {-1, -1};
	for (struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof fds))
			memcpy(fds, CMSG_DATA(cm), sizeof fds);
	if (n <= 0) {
		free(buf);
		return n == 0 ? 0 : -1;
	}
	struct tls_tunnel_arg *a = xcalloc(1, sizeof *a);
	a->s = s;
	a->msg = buf;
	a->msg_len = (size_t)n;
	a->conn.fd[0] = fds[0];
	a->conn.fd[1] = fds[1];
	if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || fds[0] < 0 || fds[1] < 0 ||
	    im_tunnel_decode(buf, (size_t)n, &a->t) < 0) {
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				(void)close(fds[i]);
		free(buf);
		free(a);
		return 1; /* a malformed message costs its tunnel, not the loop */
	}
	spawn(s, a, tls_tunnel_thread);
	return 1;
}

static void take_ssh(struct tls_srv *s)
{
	int fd = accept4(s->ssh_listen, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	struct tls_tunnel_arg *a = xcalloc(1, sizeof *a);
	a->s = s;
	a->conn.fd[0] = fd;
	a->conn.fd[1] = -1;
	spawn(s, a, tls_ssh_thread);
}

/* The end: every connection's sockets shut down (their polls return), the threads waited for. */
static void stop_all(struct tls_srv *s)
{
	(void)pthread_mutex_lock(&s->mu);
	s->stopping = true;
	for (struct tls_conn *c = s->conns; c; c = c->next)
		for (int i = 0; i < 2; i++)
			if (c->fd[i] >= 0)
				(void)shutdown(c->fd[i], SHUT_RDWR);
	struct timespec until;
	(void)clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SERVE_DRAIN_MS / 1000;
	until.tv_nsec += (long)(SERVE_DRAIN_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (s->n_conns && pthread_cond_timedwait(&s->cv, &s->mu, &until) == 0)
		;
	(void)pthread_mutex_unlock(&s->mu);
}

static void serve(struct tls_srv *s)
{
	for (;;) {
		struct pollfd pf[2] = {{.fd = s->ctl, .events = POLLIN},
				       {.fd = s->ssh_listen, .events = POLLIN}};
		int n = poll(pf, s->ssh_listen >= 0 ? 2 : 1, -1);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			int r = take_tunnel(s);
			if (r <= 0)
				break; /* agentjail shut it: the run is over */
		}
		if (s->ssh_listen >= 0 && (pf[1].revents & POLLIN))
			take_ssh(s);
	}
	stop_all(s);
}

static int setup(struct tls_srv *s, int ctl, int ssh_listen, struct err *e)
{
	memset(s, 0, sizeof *s);
	s->ctl = ctl;
	s->ssh_listen = ssh_listen;
	(void)pthread_mutex_init(&s->mu, NULL);
	(void)pthread_cond_init(&s->cv, NULL);
	uint8_t *buf = xmalloc(IM_MAX);
	ssize_t n;
	struct iovec iov = {.iov_base = buf, .iov_len = IM_MAX};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	do
		n = recvmsg(ctl, &mh, 0);
	while (n < 0 && errno == EINTR);
	int rc = n <= 0 || (mh.msg_flags & MSG_TRUNC)
			 ? err_set(e, n < 0 ? errno : 0, "agentjail-tls", "no configuration came")
			 : im_config_decode(buf, (size_t)n, &s->cfg, e);
	explicit_bzero(buf, IM_MAX);
	free(buf);
	if (rc < 0)
		return -1;
	if (inspect_build(&s->cfg.allow_http, &s->cfg.secrets, &s->in, e) < 0 ||
	    netrules_build(&s->cfg.allow, &s->cfg.deny, &s->cfg.map, &s->rules, e) < 0)
		return -1;
	s->rules.inspect = &s->in;
	/* the CA only for a run that inspects hosts (one with --ssh-agent alone has none) */
	if (inspect_any(&s->in) &&
	    (tls_ca_load(&s->ca, s->cfg.ca_dir, e) < 0 || tls_ctx_make(s, e) < 0))
		return -1;
	if (s->cfg.ssh_auth_sock && tls_ssh_load(s, e) < 0)
		return -1;
	return 0;
}

static void answer(struct tls_srv *s, const struct err *e)
{
	struct imsg m = {0};
	im_begin(&m, e ? IM_FAIL : IM_READY);
	if (e) {
		char buf[ERR_FMT_MAX];
		err_format(e, buf, sizeof buf);
		im_put_str(&m, 1, buf);
	}
	im_end(&m);
	ssize_t n;
	do
		n = send(s->ctl, m.b.p, m.b.len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	im_wipe(&m);
}

static void release(struct tls_srv *s)
{
	im_config_free(&s->cfg); /* the values wiped */
	inspect_free(&s->in);
	netrules_free(&s->rules);
	tls_ca_free(&s->ca);
	SSL_CTX_free(s->client_ctx);
	SSL_CTX_free(s->upstream_ctx);
	tls_ssh_free(s->ssh);
	s->ssh = NULL;
}

int tls_run(int ctl, int ssh_listen, struct err *e)
{
	struct tls_srv *s = xcalloc(1, sizeof *s);
	int rc = setup(s, ctl, ssh_listen, e);
	answer(s, rc < 0 ? e : NULL);
	if (rc == 0)
		serve(s);
	/* threads that outlived the drain still use s: the process exits right after, so it is
	 * released only when none is left */
	(void)pthread_mutex_lock(&s->mu);
	bool idle = s->n_conns == 0;
	(void)pthread_mutex_unlock(&s->mu);
	if (idle) {
		release(s);
		free(s);
	} else {
		im_config_free(&s->cfg); /* the values, at least, go now */
	}
	return rc;
}
