/* capture.c: the jail's direct connections, captured (doc/design.md §4, capture). Every
 * connect() and listen() in a `--net allow` jail stops in the kernel (core/confine/capfilter.h)
 * until this code, in the proxy's thread and loop, has carried it out and answers it. The
 * kernel is never told to go on with the call itself (SECCOMP_USER_NOTIF_FLAG_CONTINUE): it
 * would read the address and the descriptor again, and another thread of the jail can change
 * both between our look and its; a socket of ours (below) swapped in would then be connected,
 * on the host's network, wherever the jail liked. So each call is done here, on the very file
 * we got from the jail (pidfd_getfd) with the address we read once (process_vm_readv):
 *
 *   - a socket of the jail's own namespace bound for the jail itself — loopback, the
 *     unspecified address, a UDP or other non-TCP socket (its namespace routes nothing but
 *     loopback, so UDP elsewhere, QUIC included, fails with ENETUNREACH), AF_UNSPEC, netlink —
 *     is connected on our copy of it, in its own namespace. A Unix socket's path means
 *     something only in the jail's mount namespace: init connects those (core/jail/capinit.h,
 *     over the channel of core/plan/capwire.h);
 *   - a TCP connect of the jail to any other address is decided by the proxy's rules: an
 *     address the DNS stub gave out (netsynth.h) stands for its name; any other address is
 *     itself (an allowed literal). The name and port go through deny → allow → port
 *     (netrules_check), the addresses through netrules_addr_ok, exactly as a proxy request. A
 *     refusal answers ECONNREFUSED at once and is a net_event naming the name the address came
 *     from. An allowed one: agentjail connects a socket of its own (capsock.c) to an address
 *     it chose, and installs it in the jail's process at the descriptor number the jail used
 *     (SECCOMP_IOCTL_NOTIF_ADDFD, SETFD), then answers: 0 for a blocking socket once the
 *     connection is up (the loop never waits for it), EINPROGRESS at once for a non-blocking
 *     one (its poll and SO_ERROR then see our socket), or the upstream's error. From then on
 *     the data flows between the jail's process and the server through the kernel, with
 *     nothing of ours in between. Except where the first bytes are judged (port 443, 80, a
 *     port an allow entry names as TLS or HTTP: px_fb_kind): the socket handed over is then
 *     connected to agentjail's relay on the host's loopback (capsock.c), whose end becomes a
 *     proxy connection approved for the name (proxy_conn.c: the TLS server name or HTTP Host
 *     checked as in a CONNECT tunnel, then spliced). A blocking caller is answered once that
 *     connection's upstream is connected (0) or has failed (its error); a non-blocking one
 *     EINPROGRESS at once, an upstream that fails then resetting its connection;
 *   - a socket of ours that the jail asks to connect again or to listen is never connected or
 *     made to listen: it gets the answer its state calls for (EALREADY, EISCONN, its pending
 *     error, EINVAL), or, failed and asked for another allowed address, a new socket of ours. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include "core/net/proxy_internal.h"
#include "core/plan/capwire.h"
#include "util/clock.h"
#include "util/fdmsg.h"
#include "util/xalloc.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL /* Linux 6.9: a pidfd for a thread */
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

#define CAP_ADDRS 8       /* upstream addresses tried per connect */
#define CAP_WAITING_MAX 4096 /* connects waiting for their upstream at once; more are refused */
#define CAP_PORT_TRIES 32    /* local ports tried per address when ours is taken */

#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

struct px_capture {
	struct px_handle h;          /* the listener (PK_NOTIFY) */
	struct px_handle chan;       /* init's channel (PK_CAPCHAN): its Unix-socket connects */
	struct px_cap *waiting;      /* connects that are not answered yet */
	size_t n_waiting;
	uint64_t next_req;           /* the id of the next request to init */
	struct px_ports ports;
	bool said_unreadable;        /* a jail's memory could not be read: in one event */
	struct px_handle relay;      /* the relay's listener on the host's 127.0.0.1 (PK_RELAY),
				      * opened at the first judged connect */
	struct sockaddr_storage relay_sa; /* its address */
};

/* One connect that waits: an allowed one for its lookup or its upstream (CK_UPSTREAM), one on
 * the jail's own socket by a blocking caller (CK_OWN), one of a Unix socket for init (CK_UNIX). */
enum cap_kind { CK_UPSTREAM, CK_OWN, CK_UNIX };

struct px_cap {
	struct px_handle u;          /* CK_UPSTREAM: the upstream being connected, CK_OWN: our
				      * copy of the jail's socket (PK_CAPTURE); first */
	struct px_cap *prev, *next;
	struct proxy *p;
	enum cap_kind kind;
	uint64_t req;                /* CK_UNIX: the request's id */
	uint64_t id;                 /* the notification */
	pid_t tid;
	int tfd;                     /* the descriptor number in the jail's process */
	int cfam;                    /* its socket's family */
	int pref;                    /* the family of the address it asked for */
	bool cloexec, nonblock, resolving, closed;
	struct px_sockopts opts;
	struct net_decision d;
	struct sockaddr_storage addrs[CAP_ADDRS];
	size_t n, i;
	int port_tries;              /* local ports tried for addrs[i] */
	int last_err;
	long long t0, deadline;
	struct net_event ev;
	/* --net ask: while its question is open (proxy_ask.c), and what it resumes with */
	struct px_wait w;
	uint8_t lit[16];             /* the address it asked for (decided as), its family, and */
	int litfam;
	uint32_t synth;              /* the DNS stub's index of the name it stands for, or 0 */
	bool relayed;                /* its first bytes are judged: u is the jail's end of a pair
				      * with the relay (capsock.c), not a socket to the server */
	uint16_t relay_port;         /* u's port, while it waits to be accepted */
	struct px_conn *conn;        /* the proxy connection it waits for (relayed, blocking) */
	bool ev_given;               /* its event is conn's to deliver */
};

static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};

/* ---------------------------------------------------------------- the jail's side */

/* Answer a notification: error (-errno) or 0. ENOENT (the caller was interrupted meanwhile: it
 * will ask again) is not a failure. */
static void respond(struct proxy *p, uint64_t id, int error)
{
	struct seccomp_notif_resp r = {.id = id, .error = error};
	(void)ioctl(p->cap->h.fd, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

static bool still_waiting(struct proxy *p, uint64_t id)
{
	return ioctl(p->cap->h.fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static int read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = {.iov_base = buf, .iov_len = len};
	struct iovec r = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(tid, &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		errno = EFAULT;
	return -1;
}

/* The thread group of a thread, from /proc (kernels before 6.9 have no thread pidfd). */
static pid_t tgid_of(pid_t tid)
{
	char path[48], buf[512];
	(void)snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	(void)close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *t = strstr(buf, "\nTgid:");
	return t ? (pid_t)atoi(t + 6) : -1;
}

/* A descriptor of ours for the jail's open file tfd of thread tid (pidfd_getfd; the caller
 * checks the notification is still valid afterwards, so tid was not reused meanwhile). Before
 * Linux 6.9 the thread group's table is read: a thread that unshared its table could show us
 * another socket, which at worst makes us answer CONTINUE, never more (see the top). */
static int jail_fd(pid_t tid, int tfd)
{
	int pfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (pfd < 0 && errno == EINVAL) {
		pid_t tg = tgid_of(tid);
		pfd = tg > 0 ? (int)syscall(SYS_pidfd_open, tg, 0) : -1;
	}
	if (pfd < 0)
		return -1;
	int fd = (int)syscall(SYS_pidfd_getfd, pfd, tfd, 0);
	int err = errno;
	(void)close(pfd);
	errno = err;
	return fd;
}

/* Whether the jail's descriptor tfd is close-on-exec (/proc/TID/fdinfo/FD's flags). */
static bool fd_cloexec(pid_t tid, int tfd)
{
	char path[64], buf[256];
	(void)snprintf(path, sizeof path, "/proc/%d/fdinfo/%d", (int)tid, tfd);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	(void)close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	const char *f = strstr(buf, "flags:");
	return f && (strtoul(f + 6, NULL, 8) & O_CLOEXEC);
}

static int sockopt_int(int fd, int level, int name)
{
	int v = -1;
	socklen_t len = sizeof v;
	return getsockopt(fd, level, name, &v, &len) < 0 ? -1 : v;
}

/* ---------------------------------------------------------------- decisions */

const char *px_synth_name(const struct proxy *p, int family, const uint8_t *addr,
			  bool *in_range)
{
	*in_range = netsynth_in_range(family, addr);
	if (!*in_range)
		return NULL;
	const struct netsynth_entry *e = netsynth_get(&p->synth, netsynth_index_of(family, addr));
	return e ? e->name : NULL;
}

/* Loopback and the unspecified address (which Linux connects to the local host): the jail's
 * own, since its namespace has no other interface. */
static bool jail_local(int family, const uint8_t *a)
{
	if (family == AF_INET6 && !memcmp(a, v4mapped, 12))
		return jail_local(AF_INET, a + 12);
	enum netaddr_class c = netaddr_classify(family, a);
	return c == NA_LOOPBACK || c == NA_UNSPECIFIED;
}

static void cap_event(struct net_event *ev, const char *host, uint16_t port)
{
	px_event_init(ev, NP_TCP, host, port);
}

/* Refuse at once, as one event. */
static void refuse(struct proxy *p, uint64_t id, struct net_event *ev, const char *reason)
{
	ev->allowed = false;
	px_set_text(ev->rule, sizeof ev->rule, reason);
	p->st.denied++;
	px_events_push(&p->evq, ev);
	respond(p, id, -ECONNREFUSED);
}

static void cap_free(struct proxy *p, struct px_cap *c)
{
	if (c->closed)
		return;
	c->closed = true;
	px_ask_leave(p, &c->w); /* its question stays, for later requests */
	if (c->prev)
		c->prev->next = c->next;
	else
		p->cap->waiting = c->next;
	if (c->next)
		c->next->prev = c->prev;
	p->cap->n_waiting--;
	if (c->conn) { /* interrupted while its upstream connects */
		struct px_conn *conn = c->conn;
		c->conn = NULL;
		px_conn_abandon(p, conn);
	}
	c->u.dead = true;
	if (!c->resolving)
		px_bury(p, &c->u); /* closes the upstream, frees c at the round's end */
}

/* A connect that waits, in the list of those to answer. */
static struct px_cap *cap_new(struct proxy *p, enum cap_kind kind,
			      const struct seccomp_notif *req)
{
	struct px_cap *c = xcalloc(1, sizeof *c);
	c->u = (struct px_handle){.kind = PK_CAPTURE, .fd = -1};
	c->p = p;
	c->kind = kind;
	c->id = req->id;
	c->tid = (pid_t)req->pid;
	c->tfd = (int)req->data.args[0];
	c->t0 = clock_mono_ms();
	c->deadline = c->t0 + p->connect_ms;
	c->next = p->cap->waiting;
	if (c->next)
		c->next->prev = c;
	p->cap->waiting = c;
	p->cap->n_waiting++;
	return c;
}

/* The connect ends: its event, its answer (0, EINPROGRESS or the upstream's error). */
static void cap_answer(struct proxy *p, struct px_cap *c, int error)
{
	if (c->kind == CK_UPSTREAM && !c->ev_given) { /* the jail's own connects are no decision:
						       * no event */
		if (error && error != -EINPROGRESS && !c->ev.error[0])
			(void)snprintf(c->ev.error, sizeof c->ev.error, "connect: %s",
				       strerror(-error));
		if (error && error != -EINPROGRESS && c->ev.allowed)
			c->ev.failed = true; /* allowed, and its upstream failed */
		c->ev.dur_ms = clock_mono_ms() - c->t0;
		px_events_push(&p->evq, &c->ev);
	}
	respond(p, c->id, error);
	cap_free(p, c);
}

/* Put the connected (or connecting) upstream in the jail's process at its descriptor number. */
static int install(struct proxy *p, struct px_cap *c)
{
	struct seccomp_notif_addfd a = {.id = c->id,
					.flags = SECCOMP_ADDFD_FLAG_SETFD,
					.srcfd = (uint32_t)c->u.fd,
					.newfd = (uint32_t)c->tfd,
					.newfd_flags = c->cloexec ? O_CLOEXEC : 0};
	if (ioctl(p->cap->h.fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a) >= 0)
		return 0;
	(void)snprintf(c->ev.error, sizeof c->ev.error, "could not hand the socket over: %s",
		       strerror(errno));
	return -1;
}

static void addr_text(const struct sockaddr_storage *sa, char *out, size_t cap)
{
	const uint8_t *a = sa->ss_family == AF_INET
		? (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr
		: (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (sa->ss_family == AF_INET6 && !memcmp(a, v4mapped, 12))
		px_addr_text(AF_INET, a + 12, out, cap);
	else
		px_addr_text(sa->ss_family, a, out, cap);
}

/* An IPv4 address as IPv6 sees it (::ffff:a.b.c.d), for an IPv6 socket; others unchanged. */
static void v4_to_mapped(struct sockaddr_storage *sa)
{
	if (sa->ss_family != AF_INET)
		return;
	struct sockaddr_in v4 = *(const struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
	memset(sa, 0, sizeof *sa);
	v6->sin6_family = AF_INET6;
	v6->sin6_port = v4.sin_port;
	memcpy(&v6->sin6_addr, v4mapped, 12);
	memcpy((uint8_t *)&v6->sin6_addr + 12, &v4.sin_addr, 4);
}

/* The upstream is connected: the jail's socket becomes ours. */
static void cap_connected(struct proxy *p, struct px_cap *c, bool in_progress)
{
	if (c->u.mask) {
		(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, c->u.fd, NULL);
		c->u.mask = 0;
	}
	if (!c->nonblock) {
		int fl = fcntl(c->u.fd, F_GETFL);
		if (fl >= 0)
			(void)fcntl(c->u.fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	if (install(p, c) < 0) {
		cap_answer(p, c, -ECONNABORTED);
		return;
	}
	cap_answer(p, c, in_progress ? -EINPROGRESS : 0);
}

static void cap_connect_done(struct proxy *p, struct px_cap *c);

/* Connect to the next candidate; answer when one is connected (or, non-blocking, started). */
static void cap_connect_next(struct proxy *p, struct px_cap *c)
{
	while (c->i < c->n) {
		struct sockaddr_storage *sa = &c->addrs[c->i];
		/* the client's family when it can hold the address: an IPv6 socket reaches an
		 * IPv4 server through its mapped address, so its getsockname stays IPv6 */
		int fam = c->cfam == AF_INET6 || sa->ss_family == AF_INET6 ? AF_INET6 : AF_INET;
		struct sockaddr_storage to = *sa;
		socklen_t len = fam == AF_INET ? sizeof(struct sockaddr_in)
					       : sizeof(struct sockaddr_in6);
		if (fam == AF_INET6)
			v4_to_mapped(&to);
		addr_text(sa, c->ev.addr, sizeof c->ev.addr);
		int fd = px_capsock_open(fam, &to, &c->opts, &p->cap->ports, false);
		if (fd < 0) {
			c->last_err = errno;
			c->i++;
			continue;
		}
		c->u.fd = fd;
		c->u.dead = false;
		c->u.mask = 0;
		if (connect(fd, (struct sockaddr *)&to, len) == 0) {
			cap_connected(p, c, false);
			return;
		}
		if (errno == EINPROGRESS) {
			if (c->nonblock) {
				cap_connected(p, c, true);
				return;
			}
			/* a near server (loopback) has often answered already: no loop round */
			struct pollfd pf = {.fd = fd, .events = POLLOUT};
			if (poll(&pf, 1, 0) == 1) {
				cap_connect_done(p, c);
				return;
			}
			c->deadline = clock_mono_ms() + p->connect_ms;
			if (px_ep_set(p, &c->u, EPOLLOUT) == 0)
				return;
		}
		c->last_err = errno;
		px_close_fd(&c->u.fd);
		/* our port with that server is taken (a connection of late in TIME_WAIT): the same
		 * address again from another port */
		if ((c->last_err == EADDRNOTAVAIL || c->last_err == EADDRINUSE) &&
		    ++c->port_tries < CAP_PORT_TRIES)
			continue;
		c->port_tries = 0;
		c->i++;
	}
	cap_answer(p, c, -(c->last_err ? c->last_err : EHOSTUNREACH));
}

static void cap_connect_done(struct proxy *p, struct px_cap *c)
{
	int err = 0;
	socklen_t len = sizeof err;
	if (getsockopt(c->u.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == 0) {
		cap_connected(p, c, false);
		return;
	}
	if (c->u.mask) {
		(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, c->u.fd, NULL);
		c->u.mask = 0;
	}
	px_close_fd(&c->u.fd);
	c->last_err = err;
	c->i++;
	cap_connect_next(p, c);
}

/* ---------------------------------------------------------------- the relay */

/* The relay's end of c's pair is accepted (s): the proxy connection takes it and c's decision,
 * event and addresses. A blocking caller waits for its upstream (px_capture_upstream); a
 * non-blocking one has its socket now. */
static void cap_paired(struct proxy *p, struct px_cap *c, int s)
{
	c->relay_port = 0;
	struct px_conn *conn = px_conn_captured(p, s, &c->d, &c->ev, c->addrs, c->n);
	if (c->nonblock) {
		if (install(p, c) < 0) {
			px_conn_abandon(p, conn);
			cap_answer(p, c, -ECONNABORTED);
			return;
		}
		c->ev_given = true;
		cap_answer(p, c, -EINPROGRESS); /* c is gone */
		px_conn_start(p, conn, NULL);
		return;
	}
	c->ev_given = true;
	c->conn = conn;
	c->deadline = LLONG_MAX; /* the connection's own deadlines bound the wait */
	px_conn_start(p, conn, c);
}

/* Connections on the relay's listener: each is the other end of a pair a waiting connect made
 * (told by the port its end is bound to, exclusively), or no one's: closed. */
static void relay_accept(struct proxy *p)
{
	for (;;) {
		uint16_t port = 0;
		int s = px_relay_accept(p->cap->relay.fd, &port);
		if (s < 0)
			return;
		struct px_cap *c = p->cap->waiting;
		while (c && !(c->relayed && c->relay_port == port && c->u.fd >= 0 && !c->ev_given))
			c = c->next;
		if (c && px_tcp_state(c->u.fd) == TCP_ESTABLISHED)
			cap_paired(p, c, s);
		else
			(void)close(s);
	}
}

static int relay_listener(struct proxy *p)
{
	if (p->cap->relay.fd >= 0)
		return 0;
	uint16_t port = 0;
	int l = px_relay_listen(&port);
	if (l < 0)
		return -1;
	p->cap->relay = (struct px_handle){.kind = PK_RELAY, .fd = l};
	uint8_t lo[4] = {127, 0, 0, 1};
	(void)px_fill_sa(&p->cap->relay_sa, AF_INET, lo, port);
	if (px_ep_set(p, &p->cap->relay, EPOLLIN) < 0) {
		int err = errno;
		px_close_fd(&p->cap->relay.fd);
		errno = err;
		return -1;
	}
	return 0;
}

/* Allowed, its addresses known, its first bytes to be judged: the socket handed over is
 * connected to the relay, whose end becomes a proxy connection (cap_paired). */
static void cap_relay(struct proxy *p, struct px_cap *c)
{
	int fam = c->cfam == AF_INET6 ? AF_INET6 : AF_INET;
	int err = relay_listener(p) < 0 ? errno : 0;
	struct sockaddr_storage to = p->cap->relay_sa;
	if (fam == AF_INET6) /* an IPv6 client's socket stays IPv6: the mapped address */
		v4_to_mapped(&to);
	for (int i = 0; !err && i < CAP_PORT_TRIES; i++) {
		c->u.fd = px_capsock_open(fam, &to, &c->opts, &p->cap->ports, true);
		if (c->u.fd < 0) {
			err = errno;
			break;
		}
		socklen_t len = fam == AF_INET ? sizeof(struct sockaddr_in)
					       : sizeof(struct sockaddr_in6);
		err = connect(c->u.fd, (struct sockaddr *)&to, len) == 0 ? 0 : errno;
		if (err == 0 || err == EINPROGRESS) {
			struct sockaddr_storage me;
			socklen_t mlen = sizeof me;
			err = getsockname(c->u.fd, (struct sockaddr *)&me, &mlen) < 0 ? errno : 0;
			c->relay_port = ntohs(me.ss_family == AF_INET
						      ? ((struct sockaddr_in *)&me)->sin_port
						      : ((struct sockaddr_in6 *)&me)->sin6_port);
			break;
		}
		px_close_fd(&c->u.fd);
		if (err != EADDRNOTAVAIL && err != EADDRINUSE)
			break;
		err = i + 1 < CAP_PORT_TRIES ? 0 : err; /* a port of late in TIME_WAIT: another */
	}
	if (err) {
		(void)snprintf(c->ev.error, sizeof c->ev.error, "agentjail's relay: %s",
			       strerror(err));
		cap_answer(p, c, -ECONNABORTED);
		return;
	}
	c->deadline = clock_mono_ms() + p->connect_ms;
	relay_accept(p); /* on the host's loopback the handshake is most often over already */
}

void px_capture_upstream(struct proxy *p, struct px_cap *c, int err)
{
	c->conn = NULL;
	if (err) {
		cap_answer(p, c, -err);
		return;
	}
	cap_connected(p, c, false);
}

/* Add a candidate the rules allow for this decision; say the first one refused in *refused. */
static void candidate(struct proxy *p, struct px_cap *c, int fam, const uint8_t *a,
		      char *refused, size_t cap)
{
	if (!netrules_addr_ok(p->rules, &c->d, fam, a)) {
		if (!refused[0])
			px_addr_class_text(fam, a, refused, cap);
		return;
	}
	if (c->n < CAP_ADDRS)
		(void)px_fill_sa(&c->addrs[c->n++], fam, a, c->ev.port);
}

/* The addresses are known (cands: the family the client asked for first): keep those the
 * rules allow, connect to the first. */
static void cap_have(struct proxy *p, struct px_cap *c, const struct netsynth_real *v4,
		     const struct netsynth_real *v6)
{
	char refused[96] = "";
	const struct netsynth_real *order[2] = {v4, v6};
	if (c->pref == AF_INET6) {
		order[0] = v6;
		order[1] = v4;
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; order[k] && i < order[k]->n; i++)
			candidate(p, c, order[k] == v4 ? AF_INET : AF_INET6, order[k]->addr[i],
				  refused, sizeof refused);
	if (!c->n && refused[0]) {
		char reason[PX_REASON_MAX];
		px_addr_refused(c->ev.host, c->ev.port, refused, reason, sizeof reason);
		p->st.allowed--; /* counted at the name check; the addresses refused it */
		p->st.denied++;
		c->ev.allowed = false;
		px_set_text(c->ev.rule, sizeof c->ev.rule, reason);
		cap_answer(p, c, -ECONNREFUSED);
		return;
	}
	if (!c->n) {
		px_set_text(c->ev.error, sizeof c->ev.error, "the name has no address on the host");
		cap_answer(p, c, -EHOSTUNREACH);
		return;
	}
	c->i = 0;
	if (c->relayed)
		cap_relay(p, c);
	else
		cap_connect_next(p, c);
}

static void cap_resolved(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	(void)timeouts;
	struct px_cap *c = arg;
	struct proxy *p = c->p;
	c->resolving = false;
	if (c->closed) {
		px_bury(p, &c->u);
		ares_freeaddrinfo(res);
		return;
	}
	struct netsynth_real v4 = {0}, v6 = {0};
	for (struct ares_addrinfo_node *nd = status == ARES_SUCCESS && res ? res->nodes : NULL;
	     nd; nd = nd->ai_next) {
		if (nd->ai_family == AF_INET && v4.n < NETSYNTH_KEEP)
			memcpy(v4.addr[v4.n++], &((struct sockaddr_in *)nd->ai_addr)->sin_addr, 4);
		else if (nd->ai_family == AF_INET6 && v6.n < NETSYNTH_KEEP)
			memcpy(v6.addr[v6.n++], &((struct sockaddr_in6 *)nd->ai_addr)->sin6_addr, 16);
	}
	ares_freeaddrinfo(res);
	if (status != ARES_SUCCESS) {
		(void)snprintf(c->ev.error, sizeof c->ev.error, "could not resolve: %s",
			       ares_strerror(status));
		cap_answer(p, c, status == ARES_ETIMEOUT ? -ETIMEDOUT : -EHOSTUNREACH);
		return;
	}
	cap_have(p, c, &v4, &v6);
}

/* Allowed by name and port: find the addresses (a mapping; the literal itself; the stub's
 * recent answer for the name; else a lookup) and connect. */
static void cap_start(struct proxy *p, struct px_cap *c, const uint8_t *lit, int litfam,
		      struct netsynth_entry *e)
{
	struct netsynth_real one = {.n = 1};
	if (c->d.mapped || !e) {
		int fam = c->d.mapped ? c->d.mapped->family : litfam;
		memcpy(one.addr[0], c->d.mapped ? c->d.mapped->addr : lit, 16);
		cap_have(p, c, fam == AF_INET ? &one : NULL, fam == AF_INET6 ? &one : NULL);
		return;
	}
	long long now = clock_mono_ms();
	bool f4 = e->v4.n && e->v4.expires_ms > now, f6 = e->v6.n && e->v6.expires_ms > now;
	if (f4 || f6) {
		cap_have(p, c, f4 ? &e->v4 : NULL, f6 ? &e->v6 : NULL);
		return;
	}
	c->resolving = true;
	c->deadline = now + p->connect_ms;
	struct ares_addrinfo_hints hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	ares_getaddrinfo(p->ch, c->ev.host, NULL, &hints, cap_resolved, c);
}

/* The connect is refused (the rules, or the person when asked): its event, ECONNREFUSED. */
static void cap_refuse(struct proxy *p, struct px_cap *c, const char *reason)
{
	c->ev.allowed = false;
	px_set_text(c->ev.rule, sizeof c->ev.rule, reason);
	p->st.denied++;
	px_events_push(&p->evq, &c->ev);
	respond(p, c->id, -ECONNREFUSED);
	cap_free(p, c);
}

/* The connect is allowed (c->d; asked: the answer's words when it was asked): to its
 * addresses. */
static void cap_go(struct proxy *p, struct px_cap *c, const char *asked)
{
	c->ev.allowed = true;
	(void)snprintf(c->ev.rule, sizeof c->ev.rule, "%s",
		       asked ? asked : c->d.mapped ? c->d.mapped->spec
				     : c->d.rule ? c->d.rule->spec : "");
	p->st.allowed++;
	cap_start(p, c, c->lit, c->litfam, c->synth ? netsynth_get(&p->synth, c->synth) : NULL);
}

/* --net ask: the person answered the connect's question (or did not in time). The caller has
 * waited in connect() meanwhile. */
static void cap_asked(struct proxy *p, struct px_wait *w, const struct net_decision *d,
		      char *reason)
{
	struct px_cap *c = container_of(w, struct px_cap, w);
	c->deadline = clock_mono_ms() + p->connect_ms;
	if (!d) {
		cap_refuse(p, c, reason);
	} else { /* the answer's entry decides; a mapping of the name still holds */
		c->d.v = d->v;
		c->d.rule = d->rule;
		cap_go(p, c, reason);
	}
	free(reason);
}

/* A connect() to an address outside the jail, on a TCP socket of the jail's: decide it. */
static void capture(struct proxy *p, const struct seccomp_notif *req, int sfd, int fam,
		    const uint8_t *a, uint16_t port)
{
	struct net_event ev;
	char lit[INET6_ADDRSTRLEN];
	px_addr_text(fam, a, lit, sizeof lit);
	bool in_range = false;
	const char *name = px_synth_name(p, fam, a, &in_range);
	cap_event(&ev, name ? name : lit, port);
	(void)snprintf(ev.addr, sizeof ev.addr, "%s", lit);
	if (in_range && !name) {
		char reason[160];
		(void)snprintf(reason, sizeof reason,
			       "%s:%u is not an address the jail's DNS stub gave out (it answers "
			       "allowed names only)", lit, port);
		refuse(p, req->id, &ev, reason);
		return;
	}
	if (port == 0) {
		refuse(p, req->id, &ev, "port 0 is not a port to connect to");
		return;
	}
	if (p->cap->n_waiting >= CAP_WAITING_MAX) {
		refuse(p, req->id, &ev, "too many connections waiting for their server");
		return;
	}
	struct px_cap *c = cap_new(p, CK_UPSTREAM, req);
	/* the TLS server name or HTTP Host must be the approved name (issue 25 item 2): where
	 * the port carries those, the bytes go through agentjail (doc/design.md §4); and on any
	 * port of an inspected host, so its tunnel goes to agentjail-tls as a CONNECT tunnel's
	 * does (§4d): a client that ignores the proxy does not pass its request rules by */
	c->relayed = px_fb_kind(p, ev.host, port) != FB_SNIFF || px_inspect_host(p, ev.host);
	c->cfam = fam;
	c->pref = fam;
	int domain = sockopt_int(sfd, SOL_SOCKET, SO_DOMAIN);
	if (domain == AF_INET || domain == AF_INET6)
		c->cfam = domain;
	int fl = fcntl(sfd, F_GETFL);
	c->nonblock = fl >= 0 && (fl & O_NONBLOCK);
	c->cloexec = fd_cloexec(c->tid, c->tfd);
	px_sockopts_read(sfd, &c->opts);
	c->ev = ev;
	c->ev.addr[0] = '\0';
	memcpy(c->lit, a, fam == AF_INET ? 4 : 16);
	c->litfam = fam;
	c->synth = name ? netsynth_index_of(fam, a) : 0;
	enum net_verdict v = netrules_check(p->rules, ev.host, port, &c->d);
	if (v == NV_NOT_ALLOWED || v == NV_BAD_PORT) { /* --net ask: the person may allow it */
		char *why = NULL;
		c->w.done = cap_asked;
		int r = px_ask(p, ev.host, port, NP_TCP, &c->d, &c->w, &why);
		if (r == 0) { /* the caller waits in connect() for the answer */
			c->deadline = LLONG_MAX;
			return;
		}
		if (r > 0)
			v = NV_ALLOW;
		if (why) {
			cap_refuse(p, c, why);
			free(why);
			return;
		}
	}
	if (v != NV_ALLOW) {
		char *reason = net_deny_reason(&c->d, ev.host, port);
		cap_refuse(p, c, reason ? reason : "not allowed");
		free(reason);
		return;
	}
	cap_go(p, c, NULL);
}

/* A socket of ours (handed over earlier) asked to connect again: answer as the kernel would
 * for its state, without ever connecting it anywhere; a failed one asked for another address
 * outside the jail is captured anew (a new socket of ours replaces it). True when answered. */
static bool ours_again(struct proxy *p, uint64_t id, int sfd, bool outside)
{
	int st = px_tcp_state(sfd), err = 0;
	socklen_t elen = sizeof err;
	if (st == TCP_SYN_SENT) {
		respond(p, id, -EALREADY);
		return true;
	}
	if (st != TCP_CLOSE && st >= 0) {
		respond(p, id, -EISCONN);
		return true;
	}
	if (getsockopt(sfd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err) {
		respond(p, id, -err);
		return true;
	}
	if (!outside) { /* the jail's loopback, AF_UNSPEC, another family: not on our socket */
		respond(p, id, -ECONNREFUSED);
		return true;
	}
	return false;
}

/* connect(2) on our copy sfd of a socket of the jail's namespace (a destination inside the
 * jail): what the jail asked, with the address we read. A blocking caller waits here, in the
 * loop, for a connect in progress; sfd is ours to close. */
static void own_connect(struct proxy *p, const struct seccomp_notif *req, int sfd,
			const struct sockaddr_storage *sa, socklen_t len)
{
	int fl = fcntl(sfd, F_GETFL);
	bool nonblock = fl < 0 || (fl & O_NONBLOCK);
	if (!nonblock) /* the file's flags are the caller's too: only for this call */
		(void)fcntl(sfd, F_SETFL, fl | O_NONBLOCK);
	int err = connect(sfd, (const struct sockaddr *)sa, len) == 0 ? 0 : errno;
	if (!nonblock)
		(void)fcntl(sfd, F_SETFL, fl);
	if (err == EINPROGRESS && !nonblock) {
		struct pollfd pf = {.fd = sfd, .events = POLLOUT};
		socklen_t elen = sizeof err;
		if (poll(&pf, 1, 0) == 1) { /* loopback: most often over already */
			if (getsockopt(sfd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
				err = errno;
		} else if (p->cap->n_waiting < CAP_WAITING_MAX) {
			struct px_cap *c = cap_new(p, CK_OWN, req);
			c->u.fd = sfd;
			if (px_ep_set(p, &c->u, EPOLLOUT) < 0)
				cap_answer(p, c, -errno);
			return;
		} else {
			err = EAGAIN;
		}
	}
	(void)close(sfd);
	respond(p, req->id, -err);
}

/* The caller's thread id in the jail's pid namespace (NSpid's last field), 0 if unknown. */
static int32_t jail_tid(pid_t tid)
{
	char path[48], buf[2048];
	(void)snprintf(path, sizeof path, "/proc/%d/status", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	(void)close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *ns = strstr(buf, "\nNSpid:");
	if (!ns)
		return 0;
	const char *end = strchr(ns + 1, '\n'), *last = NULL;
	for (const char *q = ns + 7; *q && q != end; q++)
		if ((*q == ' ' || *q == '\t') && q[1] >= '0' && q[1] <= '9')
			last = q + 1;
	return last ? (int32_t)atoi(last) : 0;
}

/* A Unix socket of the jail: init connects it, in the jail's namespaces (capwire.h). sfd is
 * ours to close. */
static void to_init(struct proxy *p, const struct seccomp_notif *req, int sfd,
		    const struct sockaddr_storage *sa, socklen_t len)
{
	struct capwire_req rq = {.id = ++p->cap->next_req, .len = len};
	memcpy(rq.addr, sa, len);
	const char *path = (const char *)rq.addr + sizeof(sa_family_t);
	if (sa->ss_family == AF_UNIX && len > sizeof(sa_family_t) && path[0] && path[0] != '/')
		rq.tid = jail_tid((pid_t)req->pid); /* a relative path: from its directory */
	int err = 0;
	if (p->cap->chan.fd < 0)
		err = ECONNREFUSED; /* init is gone: so is the jail */
	else if (p->cap->n_waiting >= CAP_WAITING_MAX)
		err = EAGAIN;
	else if (fdmsg_send(p->cap->chan.fd, &rq, sizeof rq, &sfd, 1, MSG_DONTWAIT) < 0)
		err = errno == EAGAIN ? EAGAIN : ECONNREFUSED;
	(void)close(sfd);
	if (err) {
		respond(p, req->id, -err);
		return;
	}
	cap_new(p, CK_UNIX, req)->req = rq.id;
}

/* init's answers. */
static void on_chan(struct proxy *p, uint32_t ev)
{
	for (;;) {
		struct capwire_res rs;
		ssize_t n = recv(p->cap->chan.fd, &rs, sizeof rs, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && !(ev & (EPOLLHUP | EPOLLERR)))
			return;
		if (n <= 0) { /* init is gone: what waits for it is answered */
			(void)px_ep_set(p, &p->cap->chan, 0);
			px_close_fd(&p->cap->chan.fd);
			struct px_cap *next;
			for (struct px_cap *c = p->cap->waiting; c; c = next) {
				next = c->next;
				if (c->kind == CK_UNIX)
					cap_answer(p, c, -ECONNREFUSED);
			}
			return;
		}
		if (n != (ssize_t)sizeof rs)
			continue;
		for (struct px_cap *c = p->cap->waiting; c; c = c->next)
			if (c->kind == CK_UNIX && c->req == rs.id) {
				cap_answer(p, c, rs.err > 0 && rs.err < 4096 ? -rs.err : 0);
				break;
			}
	}
}

/* Our copy of the jail's descriptor args[0], still the caller's (the notification is valid
 * after it was taken), or -1 when answered here already. */
static int jail_sock(struct proxy *p, const struct seccomp_notif *req)
{
	int sfd = jail_fd((pid_t)req->pid, (int)req->data.args[0]);
	int err = errno;
	if (!still_waiting(p, req->id)) {
		if (sfd >= 0)
			(void)close(sfd);
		return -1;
	}
	if (sfd < 0) {
		respond(p, req->id, err == EBADF ? -EBADF : -ECONNREFUSED);
		return -1;
	}
	if (sockopt_int(sfd, SOL_SOCKET, SO_DOMAIN) < 0) {
		(void)close(sfd);
		respond(p, req->id, -ENOTSOCK);
		return -1;
	}
	return sfd;
}

/* One connect() of the jail. */
static void on_connect(struct proxy *p, const struct seccomp_notif *req)
{
	uint64_t uaddr = req->data.args[1];
	int64_t ulen = (int32_t)req->data.args[2];
	struct sockaddr_storage sa;
	if (ulen < (int64_t)sizeof(sa_family_t) || ulen > (int64_t)sizeof sa) {
		respond(p, req->id, -EINVAL); /* what the kernel answers */
		return;
	}
	memset(&sa, 0, sizeof sa);
	if (read_mem((pid_t)req->pid, uaddr, &sa, (size_t)ulen) < 0) {
		int err = errno;
		if (err == ESRCH || !still_waiting(p, req->id))
			return;
		if (err == EFAULT) {
			respond(p, req->id, -EFAULT);
			return;
		}
		/* we cannot see where it goes: refuse it, and say why once */
		if (!p->cap->said_unreadable) {
			struct net_event ev;
			cap_event(&ev, "?", 0);
			(void)snprintf(ev.error, sizeof ev.error,
				       "cannot read the jail's memory: %s", strerror(err));
			p->cap->said_unreadable = true;
			refuse(p, req->id, &ev, "agentjail could not read the address to decide");
		} else {
			respond(p, req->id, -ECONNREFUSED);
		}
		return;
	}
	socklen_t len = (socklen_t)ulen;
	int fam = sa.ss_family;
	bool inet = (fam == AF_INET && len >= sizeof(struct sockaddr_in)) ||
		    (fam == AF_INET6 && len >= 24); /* SIN6_LEN_RFC2133 */
	uint8_t a[16] = {0};
	uint16_t port = 0;
	if (inet && fam == AF_INET) {
		memcpy(a, &((struct sockaddr_in *)&sa)->sin_addr, 4);
		port = ntohs(((struct sockaddr_in *)&sa)->sin_port);
	} else if (inet) {
		memcpy(a, &((struct sockaddr_in6 *)&sa)->sin6_addr, 16);
		port = ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
	}
	int dfam = fam; /* an IPv4-mapped address is decided as its IPv4 */
	const uint8_t *da = a;
	if (inet && fam == AF_INET6 && !memcmp(a, v4mapped, 12)) {
		dfam = AF_INET;
		da = a + 12;
	}
	bool outside = inet && !jail_local(dfam, da);
	int sfd = jail_sock(p, req);
	if (sfd < 0)
		return;
	int domain = sockopt_int(sfd, SOL_SOCKET, SO_DOMAIN);
	int type = sockopt_int(sfd, SOL_SOCKET, SO_TYPE);
	int proto = sockopt_int(sfd, SOL_SOCKET, SO_PROTOCOL);
	bool tcp = type == SOCK_STREAM && (proto == IPPROTO_TCP || proto == IPPROTO_MPTCP);
	if (!px_in_jail_netns(p, sfd)) {
		if (!ours_again(p, req->id, sfd, outside && fam == domain))
			capture(p, req, sfd, dfam, da, port);
	} else if (domain == AF_UNIX) {
		to_init(p, req, sfd, &sa, len);
		return;
	} else if (tcp && outside && fam == domain && px_tcp_state(sfd) == TCP_CLOSE) {
		capture(p, req, sfd, dfam, da, port);
	} else {
		own_connect(p, req, sfd, &sa, len);
		return;
	}
	(void)close(sfd);
}

/* One listen() of the jail: on our copy of a socket of its namespace; never on ours. */
static void on_listen(struct proxy *p, const struct seccomp_notif *req)
{
	int sfd = jail_sock(p, req);
	if (sfd < 0)
		return;
	int err = !px_in_jail_netns(p, sfd) ? EINVAL /* what a connected socket answers */
		  : listen(sfd, (int)req->data.args[1]) == 0 ? 0 : errno;
	(void)close(sfd);
	respond(p, req->id, -err);
}

/* ---------------------------------------------------------------- the loop's side */

static void on_notify(struct proxy *p)
{
	struct seccomp_notif req;
	memset(&req, 0, sizeof req);
	if (ioctl(p->cap->h.fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return; /* ENOENT: the caller went away meanwhile */
	if (req.data.nr == __NR_connect)
		on_connect(p, &req);
	else if (req.data.nr == __NR_listen)
		on_listen(p, &req);
	else
		respond(p, req.id, -ENOSYS); /* the filter sends nothing else */
}

void px_capture_event(struct proxy *p, struct px_handle *h, uint32_t ev)
{
	if (h->kind == PK_NOTIFY) {
		if (ev & EPOLLIN)
			on_notify(p);
		else if (ev & (EPOLLHUP | EPOLLERR))
			(void)px_ep_set(p, h, 0); /* the jail is gone: no one is left to ask */
		return;
	}
	if (h->kind == PK_CAPCHAN) {
		on_chan(p, ev);
		return;
	}
	if (h->kind == PK_RELAY) {
		relay_accept(p);
		return;
	}
	struct px_cap *c = container_of(h, struct px_cap, u);
	if (c->kind == CK_UPSTREAM) {
		cap_connect_done(p, c);
		return;
	}
	int err = 0; /* CK_OWN: the jail's own connect ended */
	socklen_t len = sizeof err;
	if (getsockopt(c->u.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	cap_answer(p, c, -err);
}

void px_capture_sweep(struct proxy *p, long long now)
{
	if (!__atomic_load_n(&p->cap, __ATOMIC_ACQUIRE))
		return;
	struct px_cap *next;
	for (struct px_cap *c = p->cap->waiting; c; c = next) {
		next = c->next;
		if (!still_waiting(p, c->id)) { /* interrupted: it asks again, or not at all */
			cap_free(p, c);
			continue;
		}
		if (now < c->deadline)
			continue;
		if (c->kind == CK_UPSTREAM && c->resolving) {
			(void)snprintf(c->ev.error, sizeof c->ev.error, "timeout resolving the name");
			cap_answer(p, c, -ETIMEDOUT);
		} else if (c->kind != CK_UPSTREAM || c->relayed) {
			if (c->relayed) /* its pair was not accepted in time (never connect it
					 * anywhere else) */
				(void)snprintf(c->ev.error, sizeof c->ev.error,
					       "agentjail's relay did not accept it in time");
			cap_answer(p, c, -ETIMEDOUT);
		} else {
			(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, c->u.fd, NULL);
			c->u.mask = 0;
			px_close_fd(&c->u.fd);
			c->last_err = ETIMEDOUT;
			c->i++;
			cap_connect_next(p, c);
		}
	}
}

void px_capture_close(struct proxy *p)
{
	if (!p->cap)
		return;
	while (p->cap->waiting)
		cap_answer(p, p->cap->waiting, -ECONNABORTED);
}

void px_capture_free(struct proxy *p)
{
	if (!p->cap)
		return;
	px_close_fd(&p->cap->h.fd);
	px_close_fd(&p->cap->chan.fd);
	px_close_fd(&p->cap->relay.fd);
	free(p->cap);
	p->cap = NULL;
}

int proxy_capture(struct proxy *p, int listener, int chan, struct err *e)
{
	if (p->cap) {
		(void)close(listener);
		(void)close(chan);
		return err_set(e, EBUSY, NULL, "connection capture: already serving a listener");
	}
	struct px_capture *cap = xcalloc(1, sizeof *cap);
	cap->h = (struct px_handle){.kind = PK_NOTIFY, .fd = listener};
	cap->chan = (struct px_handle){.kind = PK_CAPCHAN, .fd = chan};
	cap->relay = (struct px_handle){.kind = PK_RELAY, .fd = -1};
	px_ports_init(&cap->ports);
	/* the loop looks at p->cap only once one of these fds has an event, which the epoll_ctl
	 * calls below order after these stores */
	cap->h.mask = cap->chan.mask = EPOLLIN;
	__atomic_store_n(&p->cap, cap, __ATOMIC_RELEASE);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &cap->chan};
	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, chan, &ev) < 0) {
		cap->h.mask = cap->chan.mask = 0; /* closed with the proxy: the jail's connects fail */
		return err_set(e, errno, NULL, "connection capture: cannot watch init's channel");
	}
	ev.data.ptr = &cap->h;
	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, listener, &ev) < 0) {
		cap->h.mask = 0;
		return err_set(e, errno, NULL, "connection capture: cannot watch its listener");
	}
	return 0;
}
