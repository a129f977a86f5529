/* proxy.c: the egress proxy's start and stop, its loop and c-ares in it (doc/design.md §4).
 *
 * One thread runs one epoll loop over: the stop eventfd, the TCP listeners and every
 * connection's two sockets (proxy_conn.c), the DNS stub's sockets (proxy_dns.c) and c-ares's
 * sockets (added and removed by its socket-state callback; ares_timeout bounds the wait).
 * Objects closed during a round of events are freed at its end (px_bury), so an event still
 * queued for one is skipped, never followed into freed memory. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "core/net/proxy_internal.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define PX_HEAD_MS 10000      /* the request head (and a denial's lingering close) */
#define PX_CONNECT_MS 10000   /* resolution plus one address's connect */

static int test_head_ms, test_connect_ms;
static char *test_resolver;

void px_test_timeouts(int head_ms, int connect_ms)
{
	test_head_ms = head_ms;
	test_connect_ms = connect_ms;
}

uint16_t px_test_tls_port, px_test_http_port;

void px_test_ports(uint16_t tls_port, uint16_t http_port)
{
	px_test_tls_port = tls_port;
	px_test_http_port = http_port;
}

size_t px_test_open(const struct proxy *p)
{
	return __atomic_load_n(&p->n_conns, __ATOMIC_RELAXED) +
	       __atomic_load_n(&p->n_dns_conns, __ATOMIC_RELAXED);
}

void px_test_resolver(const char *servers_csv)
{
	free(test_resolver);
	test_resolver = servers_csv ? xstrdup(servers_csv) : NULL;
}

int64_t px_wall_ms(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void px_event_init(struct net_event *ev, enum net_proto proto, const char *host, uint16_t port)
{
	memset(ev, 0, sizeof *ev);
	ev->at_ms = px_wall_ms();
	ev->proto = proto;
	ev->port = port;
	size_t i = 0;
	for (; host && host[i] && i < sizeof ev->host - 1; i++) {
		unsigned char ch = (unsigned char)host[i];
		ev->host[i] = ch > 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	ev->host[i] = '\0';
}

void px_addr_text(int family, const uint8_t *addr, char *out, size_t cap)
{
	if (!inet_ntop(family, addr, out, (socklen_t)cap))
		(void)snprintf(out, cap, "?");
}

void px_addr_class_text(int family, const uint8_t *addr, char *out, size_t cap)
{
	char t[INET6_ADDRSTRLEN];
	px_addr_text(family, addr, t, sizeof t);
	(void)snprintf(out, cap, "%s (%s)", t, netaddr_class_name(netaddr_classify(family, addr)));
}

void px_addr_refused(const char *host, uint16_t port, const char *refused, char *out,
		     size_t cap)
{
	(void)snprintf(out, cap,
		       "%.253s:%u resolves to %.60s, which is refused (add --map-host %.253s=ADDR "
		       "to allow that address)", host, (unsigned)port, refused, host);
}

socklen_t px_fill_sa(struct sockaddr_storage *sa, int fam, const uint8_t *a, uint16_t port)
{
	memset(sa, 0, sizeof *sa);
	if (fam == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)sa;
		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, a, 4);
		return sizeof *s;
	}
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)sa;
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(port);
	memcpy(&s->sin6_addr, a, 16);
	return sizeof *s;
}

void px_set_text(char *dst, size_t cap, const char *s)
{
	size_t n = 0;
	for (; s && s[n] && n < cap - 1; n++)
		dst[n] = s[n];
	dst[n] = '\0';
}

/* The inode of socket fd's network namespace (SIOCGSKNS), 0 when it cannot be had: the
 * namespace's owner lacks CAP_NET_ADMIN over it (EPERM: for us, not the jail's), or no such
 * ioctl. */
static uint64_t netns_ino(int fd)
{
	int ns = ioctl(fd, SIOCGSKNS);
	struct stat st;
	uint64_t ino = ns >= 0 && fstat(ns, &st) == 0 ? (uint64_t)st.st_ino : 0;
	if (ns >= 0)
		(void)close(ns);
	return ino;
}

bool px_in_jail_netns(const struct proxy *p, int fd)
{
	if (p->jail_netns) {
		uint64_t cookie = 0;
		socklen_t len = sizeof cookie;
		return getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) == 0 &&
		       cookie == p->jail_netns;
	}
	return p->jail_netns_ino && netns_ino(fd) == p->jail_netns_ino;
}

int px_ep_set(struct proxy *p, struct px_handle *h, uint32_t mask)
{
	if (h->fd < 0 || h->dead || mask == h->mask)
		return 0;
	struct epoll_event ev = {.events = mask, .data.ptr = h};
	int op = !h->mask ? EPOLL_CTL_ADD : mask ? EPOLL_CTL_MOD : EPOLL_CTL_DEL;
	if (epoll_ctl(p->ep, op, h->fd, &ev) < 0)
		return -1;
	h->mask = mask;
	return 0;
}

void px_close_fd(int *fd)
{
	if (*fd >= 0) {
		(void)close(*fd);
		*fd = -1;
	}
}

void px_bury(struct proxy *p, struct px_handle *h)
{
	h->dead = true;
	if (h->fd >= 0) {
		(void)close(h->fd); /* leaves the epoll set with it */
		h->fd = -1;
	}
	if (p->n_grave == p->cap_grave) {
		p->cap_grave = p->cap_grave ? p->cap_grave * 2 : 64;
		p->graveyard = xrealloc(p->graveyard, p->cap_grave * sizeof *p->graveyard);
	}
	p->graveyard[p->n_grave++] = h;
}

int px_send(int fd, const void *buf, size_t len, size_t *off)
{
	while (*off < len) {
		ssize_t n = send(fd, (const char *)buf + *off, len - *off, MSG_NOSIGNAL);
		if (n > 0)
			*off += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
			return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
	}
	return 1;
}

int px_recv(int fd, void *buf, size_t cap, size_t *len)
{
	while (*len < cap) {
		ssize_t n = recv(fd, (char *)buf + *len, cap - *len, 0);
		if (n > 0)
			*len += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
			return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- c-ares */

static void ares_sock(void *data, ares_socket_t fd, int readable, int writable)
{
	struct proxy *p = data;
	struct px_ares **pp = &p->ares_fds;
	while (*pp && (*pp)->h.fd != fd)
		pp = &(*pp)->next;
	if (!readable && !writable) {
		if (*pp) {
			struct px_ares *a = *pp;
			*pp = a->next;
			if (a->h.mask)
				(void)epoll_ctl(p->ep, EPOLL_CTL_DEL, fd, NULL);
			a->h.fd = -1; /* c-ares closes it */
			a->h.mask = 0;
			px_bury(p, &a->h);
		}
		return;
	}
	if (!*pp) {
		struct px_ares *a = xcalloc(1, sizeof *a);
		a->h = (struct px_handle){.kind = PK_ARES, .fd = fd};
		a->next = p->ares_fds;
		p->ares_fds = a;
		pp = &p->ares_fds;
	}
	(void)px_ep_set(p, &(*pp)->h, (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0));
}

static int ares_cloexec(ares_socket_t fd, int type, void *data)
{
	(void)type, (void)data;
	return fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ? -1 : 0;
}

static int ares_setup(struct proxy *p, struct err *e)
{
	int rc = ares_library_init(ARES_LIB_INIT_ALL);
	if (rc != ARES_SUCCESS)
		return err_set(e, 0, "", "proxy: cannot initialise c-ares: %s", ares_strerror(rc));
	struct ares_options o = {
		.sock_state_cb = ares_sock, .sock_state_cb_data = p, .timeout = 2000, .tries = 2,
	};
	rc = ares_init_options(&p->ch, &o,
			       ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES);
	if (rc != ARES_SUCCESS) {
		ares_library_cleanup();
		return err_set(e, 0, "/etc/resolv.conf", "proxy: cannot set up the resolver: %s",
			       ares_strerror(rc));
	}
	p->ares_ok = true;
	ares_set_socket_configure_callback(p->ch, ares_cloexec, NULL);
	if (test_resolver && ares_set_servers_ports_csv(p->ch, test_resolver) != ARES_SUCCESS)
		return err_set(e, 0, test_resolver, "proxy: bad resolver address");
	return 0;
}

/* ---------------------------------------------------------------- jobs from other threads */

void px_post(struct proxy *p, struct px_job *j)
{
	j->next = NULL;
	(void)pthread_mutex_lock(&p->inbox_mu);
	struct px_job **t = &p->inbox;
	while (*t)
		t = &(*t)->next;
	*t = j;
	(void)pthread_mutex_unlock(&p->inbox_mu);
	uint64_t one = 1;
	if (write(p->wake_h.fd, &one, sizeof one) != sizeof one)
		(void)0; /* the counter is already non-zero: the loop wakes anyway */
}

/* A job the loop never ran (it stopped first): what it holds is closed. */
static void job_drop(struct px_job *j)
{
	if (j->kind == PJ_PUBLISH) {
		struct px_pub_job *pj = (struct px_pub_job *)j;
		for (size_t i = 0; i < pj->n; i++)
			px_close_fd(&pj->fds[i]);
		px_close_fd(&pj->chan);
	}
	free(j);
}

static struct px_job *take_jobs(struct proxy *p)
{
	uint64_t n;
	if (read(p->wake_h.fd, &n, sizeof n) < 0)
		(void)0; /* EAGAIN: woken for jobs already taken */
	(void)pthread_mutex_lock(&p->inbox_mu);
	struct px_job *j = p->inbox;
	p->inbox = NULL;
	(void)pthread_mutex_unlock(&p->inbox_mu);
	return j;
}

static void run_jobs(struct proxy *p)
{
	for (struct px_job *j = take_jobs(p), *next; j; j = next) {
		next = j->next;
		if (j->kind == PJ_PUBLISH)
			px_pub_start(p, (struct px_pub_job *)j);
		else if (j->kind == PJ_ANSWER)
			px_ask_answer(p, (struct px_answer_job *)j);
		free(j);
	}
}

void proxy_answer(struct proxy *p, uint64_t id, const char *entry, enum ask_answer a,
		  const char *by)
{
	struct px_answer_job *j = xcalloc(1, sizeof *j);
	j->j.kind = PJ_ANSWER;
	j->id = id;
	(void)snprintf(j->entry, sizeof j->entry, "%s", entry ? entry : "");
	j->a = a;
	(void)snprintf(j->by, sizeof j->by, "%s", by ? by : "");
	px_post(p, &j->j);
}

/* ---------------------------------------------------------------- the loop */

static void teardown(struct proxy *p);

/* On the loop's thread once it has stopped (proxy_stop_begin): every connection closed, their
 * events first, then agentjail-tls's last ones; the loop's resources let go; the event writer
 * flushed and joined. stop_h, wake_h and the inbox stay for proxy_stop (another thread may
 * still write them). */
static void finish(struct proxy *p)
{
	p->st.open_now = p->n_conns + p->n_dns_conns;
	px_close_all(p);
	px_inspect_finish(p);
	teardown(p);
	px_events_stop(&p->evq);
	p->st.events_dropped = p->evq.dropped;
}

static void *loop(void *arg)
{
	struct proxy *p = arg;
	struct epoll_event evs[256];
	long long next_sweep = clock_mono_ms() + PX_SWEEP_MS;
	bool stop = false;
	while (!stop) {
		long long now = clock_mono_ms();
		int timeout = next_sweep > now ? (int)(next_sweep - now) : 0;
		struct timeval max = {.tv_sec = 0, .tv_usec = timeout * 1000}, tv;
		struct timeval *t = p->ares_ok ? ares_timeout(p->ch, &max, &tv) : NULL;
		if (t)
			timeout = (int)(t->tv_sec * 1000 + (t->tv_usec + 999) / 1000);
		int n = epoll_wait(p->ep, evs, 256, timeout);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			struct px_handle *h = evs[i].data.ptr;
			uint32_t ev = evs[i].events;
			if (h->dead)
				continue;
			switch (h->kind) {
			case PK_STOP:
				stop = true;
				break;
			case PK_LISTEN:
				px_accept(p, h);
				break;
			case PK_DNS_UDP:
				px_dns_udp_ready(p);
				break;
			case PK_DNS_LISTEN:
				px_dns_accept(p);
				break;
			case PK_ARES:
				ares_process_fd(p->ch,
						ev & (EPOLLIN | EPOLLERR | EPOLLHUP) ? h->fd
										      : ARES_SOCKET_BAD,
						ev & EPOLLOUT ? h->fd : ARES_SOCKET_BAD);
				break;
			case PK_CLIENT:
			case PK_UPSTREAM:
				px_conn_event(p, h, ev);
				break;
			case PK_DNS_TCP:
				px_dns_tcp_event(p, (struct px_dns_tcp *)h, ev);
				break;
			case PK_INSPECT:
				px_inspect_ready(p);
				break;
			case PK_NOTIFY:
			case PK_CAPTURE:
			case PK_CAPCHAN:
			case PK_RELAY:
				px_capture_event(p, h, ev);
				break;
			case PK_WAKE:
				run_jobs(p);
				break;
			case PK_PUB_LISTEN:
				px_pub_accept(p, (struct px_pub_listen *)h);
				break;
			case PK_PUB_CHAN:
				px_pub_answer(p);
				break;
			}
		}
		if (p->ares_ok) /* lookups' timeouts */
			ares_process_fd(p->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
		now = clock_mono_ms();
		if (now >= next_sweep) {
			px_sweep(p, now);
			px_ask_sweep(p, now);
			px_capture_sweep(p, now);
			next_sweep = now + PX_SWEEP_MS;
		}
		for (size_t i = 0; i < p->n_grave; i++)
			free(p->graveyard[i]); /* every kind begins with its handle */
		p->n_grave = 0;
	}
	finish(p);
	return NULL;
}

static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl); /* best effort: fewer tunnels otherwise */
	}
}

static void teardown(struct proxy *p)
{
	px_close_all(p);
	px_ask_free(p); /* the DNS queries still waiting are answered (denied) and freed */
	px_dns_close_all(p);
	px_pub_free(p);
	px_capture_close(p);
	if (p->ares_ok) {
		ares_destroy(p->ch); /* calls back the lookups in flight: they bury their conns */
		ares_library_cleanup();
		p->ares_ok = false;
	}
	while (p->ares_fds) {
		struct px_ares *a = p->ares_fds;
		p->ares_fds = a->next;
		free(a);
	}
	for (size_t i = 0; i < p->n_grave; i++)
		free(p->graveyard[i]);
	free(p->graveyard);
	p->graveyard = NULL;
	p->n_grave = p->cap_grave = 0;
	struct px_handle *hs[] = {&p->listen_h[0], &p->listen_h[1], &p->udp_h, &p->dnsl_h,
				  &p->inspect_h};
	for (size_t i = 0; i < sizeof hs / sizeof *hs; i++)
		px_close_fd(&hs[i]->fd);
	px_capture_free(p);
	netsynth_free(&p->synth);
	px_close_fd(&p->ep);
}

/* What another thread may still touch until the loop is joined: the jobs posted and never run
 * (what they hold closed), the eventfds. */
static void close_posts(struct proxy *p)
{
	for (struct px_job *j = p->inbox, *next; j; j = next) {
		next = j->next;
		job_drop(j);
	}
	p->inbox = NULL;
	px_close_fd(&p->stop_h.fd);
	px_close_fd(&p->wake_h.fd);
}

static int setup(struct proxy *p, struct err *e)
{
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	if (p->ep < 0)
		return err_set(e, errno, "", "proxy: cannot create an epoll instance");
	p->stop_h.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	p->wake_h.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->stop_h.fd < 0 || p->wake_h.fd < 0)
		return err_set(e, errno, "", "proxy: cannot create its eventfds");
	struct px_handle *hs[] = {&p->stop_h, &p->wake_h, &p->listen_h[0], &p->listen_h[1],
				  &p->udp_h, &p->dnsl_h, &p->inspect_h};
	for (size_t i = 0; i < sizeof hs / sizeof *hs; i++) {
		if (hs[i]->fd < 0)
			continue;
		int fl = fcntl(hs[i]->fd, F_GETFL);
		if (fl < 0 || fcntl(hs[i]->fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
		    px_ep_set(p, hs[i], EPOLLIN) < 0)
			return err_set(e, errno, "", "proxy: cannot watch listener fd %d",
				       hs[i]->fd);
	}
	/* the resolver serves the --net allow listeners; without them (--net off with
	 * --publish) there is nothing to resolve */
	bool resolves = p->listen_h[0].fd >= 0 || p->listen_h[1].fd >= 0 || p->udp_h.fd >= 0 ||
			p->dnsl_h.fd >= 0;
	if (resolves && ares_setup(p, e) < 0)
		return -1;
	/* the threads take no signal: the process's own (SIGCHLD, SIGINT…, read through a
	 * signalfd by launch and supervise) must not be delivered to them instead */
	sigset_t all, orig;
	(void)sigfillset(&all);
	(void)pthread_sigmask(SIG_BLOCK, &all, &orig);
	int rc = px_events_start(&p->evq, p->evq.sink, p->evq.arg, e) < 0 ? -1
		 : pthread_create(&p->thr, NULL, loop, p);
	(void)pthread_sigmask(SIG_SETMASK, &orig, NULL);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		(void)pthread_setname_np(p->thr, "aj-proxy"); /* names for ps, top, gdb */
		(void)pthread_setname_np(p->evq.thr, "aj-proxy-events");
	}
	if (rc != 0) {
		px_events_stop(&p->evq);
		return err_set(e, rc, "", "proxy: cannot start its thread");
	}
	p->thr_started = true;
	return 0;
}

int proxy_start(const struct proxy_listeners *l, const struct netrules *rules,
		const struct proxy_ask *ask, net_event_sink sink, void *arg, struct proxy **out,
		struct err *e)
{
	*out = NULL;
	raise_nofile();
	struct proxy *p = xcalloc(1, sizeof *p);
	p->rules = rules;
	p->head_ms = test_head_ms > 0 ? test_head_ms : PX_HEAD_MS;
	p->connect_ms = test_connect_ms > 0 ? test_connect_ms : PX_CONNECT_MS;
	p->listen_h[0] = (struct px_handle){.kind = PK_LISTEN, .fd = l->tcp4};
	p->listen_h[1] = (struct px_handle){.kind = PK_LISTEN, .fd = l->tcp6};
	p->udp_h = (struct px_handle){.kind = PK_DNS_UDP, .fd = l->dns_udp};
	p->dnsl_h = (struct px_handle){.kind = PK_DNS_LISTEN, .fd = l->dns_tcp};
	p->stop_h = (struct px_handle){.kind = PK_STOP, .fd = -1};
	p->inspect_h = (struct px_handle){.kind = PK_INSPECT,
					  .fd = l->inspect_fd > 0 ? l->inspect_fd : -1};
	p->wake_h = (struct px_handle){.kind = PK_WAKE, .fd = -1};
	(void)pthread_mutex_init(&p->inbox_mu, NULL);
	p->evq.sink = sink;
	p->evq.arg = arg;
	/* the jail's network namespace, told by its listener: capture.c tells the jail's own
	 * sockets from those it handed over by it */
	socklen_t clen = sizeof p->jail_netns;
	if (l->tcp4 < 0 ||
	    getsockopt(l->tcp4, SOL_SOCKET, SO_NETNS_COOKIE, &p->jail_netns, &clen) < 0)
		p->jail_netns = 0;
	p->jail_netns_ino = l->tcp4 >= 0 ? netns_ino(l->tcp4) : 0;
	if (px_ask_setup(p, ask) < 0 || setup(p, e) < 0) {
		teardown(p);
		close_posts(p);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

void proxy_stop_begin(struct proxy *p)
{
	if (!p || !p->thr_started || p->stop_sent)
		return;
	p->stop_sent = true;
	uint64_t one = 1;
	if (write(p->stop_h.fd, &one, sizeof one) != sizeof one)
		(void)0; /* cannot fail on a fresh eventfd; proxy_stop's join would hang if so */
}

void proxy_stop(struct proxy *p, struct proxy_stats *st)
{
	if (!p) {
		if (st)
			memset(st, 0, sizeof *st);
		return;
	}
	if (p->thr_started) {
		proxy_stop_begin(p);
		(void)pthread_join(p->thr, NULL); /* it has finished (finish) */
	} else {
		teardown(p);
	}
	close_posts(p);
	if (st)
		*st = p->st;
	(void)pthread_mutex_destroy(&p->inbox_mu);
	free(p);
}

/* ---------------------------------------------------------------- --publish */

int proxy_publish_listen(const struct publish *v, size_t n, int *fds, struct err *e)
{
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	for (size_t i = 0; i < n; i++) {
		char entry[16];
		publish_format(&v[i], entry, sizeof entry);
		int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(v[i].host_port),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		/* SO_REUSEADDR: a port a previous run left in TIME_WAIT is free again; a port
		 * another program listens on is still refused (EADDRINUSE) */
		if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
		    bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 128) < 0) {
			int err = errno;
			if (s >= 0)
				(void)close(s);
			for (size_t k = 0; k < i; k++)
				px_close_fd(&fds[k]);
			err_set(e, err, entry, "--publish %s: cannot listen on the host's 127.0.0.1:%u",
				entry, (unsigned)v[i].host_port);
			if (err == EADDRINUSE)
				err_hint(e, "another program uses that port: stop it, or publish on "
					    "another host port (--publish HOSTPORT:%u)",
					 (unsigned)v[i].port);
			else if (err == EACCES)
				err_hint(e, "ports below 1024 need root: publish on a higher host port "
					    "(--publish 8080:%u)",
					 (unsigned)v[i].port);
			return -1;
		}
		fds[i] = s;
	}
	return 0;
}

int proxy_publish(struct proxy *p, const struct publish *v, const int *fds, size_t n, int chan,
		  struct err *e)
{
	if (n > PUBLISH_MAX || !n) {
		for (size_t i = 0; i < n; i++)
			(void)close(fds[i]);
		(void)close(chan);
		return err_set(e, EINVAL, "", "proxy: %zu ports to publish (1 to %d)", n, PUBLISH_MAX);
	}
	struct px_pub_job *j = xcalloc(1, sizeof *j);
	j->j.kind = PJ_PUBLISH;
	j->n = n;
	memcpy(j->v, v, n * sizeof *v);
	memcpy(j->fds, fds, n * sizeof *fds);
	j->chan = chan;
	px_post(p, &j->j);
	return 0;
}
