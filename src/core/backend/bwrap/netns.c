/* netns: the namespace holder of `--net allow` (doc/design.md §2, §4). */
#include "core/backend/bwrap/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/host/userns_diag.h"
#include "core/backend/bwrap/nschild.h"
#include "core/plan/netrules.h"

/* The holder's report: errnum 0 and as SCM_RIGHTS the listeners and the namespaces (tcp4,
 * dns_udp, dns_tcp, userns, netns, then tcp6 when there is one), or the step that failed and
 * its errno, without fds. */
struct netns_msg {
	int32_t errnum;
	uint32_t nfds;
	char step[48];
};

#define NETNS_NFDS_MAX 6
#define NETNS_NFDS_MIN 5

void netns_listeners_close(struct netns_listeners *l)
{
	int *fds[] = {&l->tcp4, &l->tcp6, &l->dns_udp, &l->dns_tcp};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++) {
		if (*fds[i] >= 0)
			(void)close(*fds[i]);
		*fds[i] = -1;
	}
}

/* What the holder needs, prepared before the fork (the child then only makes system calls). */
struct netns_holder {
	int sock; /* the child's end of the hand-over socketpair */
	uid_t uid;
	gid_t gid;
	struct nsc_inject inject; /* test builds: fail this step with EPERM
				   * (AGENTJAIL_TEST_NETNS_FAIL) */
};

void netns_fds_close(struct netns_fds *f)
{
	if (f->userns >= 0)
		(void)close(f->userns);
	if (f->netns >= 0)
		(void)close(f->netns);
	*f = NETNS_FDS_NONE;
}

/* The socketpair: h gets the child's end, *parent_end ours (both close-on-exec); the step
 * that starts with fail_step (NULL: none) is made to fail. */
static int holder_prepare(struct netns_holder *h, int *parent_end, const char *fail_step,
			  struct err *e)
{
	memset(h, 0, sizeof *h);
	h->sock = -1;
	*parent_end = -1;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return err_set(e, errno, NULL, "--net allow: cannot create the namespace holder's "
					       "socketpair");
	*parent_end = sp[0];
	h->sock = sp[1];
	h->uid = getuid();
	h->gid = getgid();
	if (fail_step)
		(void)strncpy(h->inject.step, fail_step, sizeof h->inject.step - 1);
	return 0;
}

/* ---- the child: system calls and its own stack only ------------------------------------- */

static int lo_up(void)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, "lo", 3);
	int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (rc == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	int saved = errno;
	(void)close(s);
	errno = saved;
	return rc;
}

/* A socket of `type` bound to the loopback address of `family` on `port`, listening when it is
 * a stream. */
static int open_listener(int family, int type, uint16_t port)
{
	int s = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -1;
	int one = 1;
	int rc = 0;
	if (type == SOCK_STREAM)
		rc = setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (rc == 0 && family == AF_INET6)
		rc = setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (rc == 0 && family == AF_INET) {
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		rc = bind(s, (struct sockaddr *)&a, sizeof a);
	} else if (rc == 0) {
		struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port),
					 .sin6_addr = IN6ADDR_LOOPBACK_INIT};
		rc = bind(s, (struct sockaddr *)&a, sizeof a);
	}
	if (rc == 0 && type == SOCK_STREAM)
		rc = listen(s, SOMAXCONN);
	if (rc == 0)
		return s;
	int saved = errno;
	(void)close(s);
	errno = saved;
	return -1;
}

static void send_msg(int sock, int errnum, const char *step, const int *fds, uint32_t nfds)
{
	struct netns_msg m;
	memset(&m, 0, sizeof m);
	m.errnum = errnum;
	m.nfds = nfds;
	(void)nsc_put_str(m.step, 0, sizeof m.step, step);
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
	union {
		char buf[CMSG_SPACE(NETNS_NFDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof u);
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds) {
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

/* The failure of `step`: told to the parent, dumpable back off, fds closed. */
static int fail(const struct netns_holder *h, const char *step, int errnum, int *fds, size_t n)
{
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			(void)close(fds[i]);
	send_msg(h->sock, errnum ? errnum : EIO, step, NULL, 0);
	return -1;
}

static bool injected(const struct netns_holder *h, const char *step)
{
	return nsc_injected(&h->inject, step);
}

/* In the holder: unshare user + net, deny setgroups, map uid and gid to themselves (dumpable
 * for that time: nschild.h), bring lo up, open the listeners and the namespaces, send them,
 * close them. 0, or -1 after sending the failed step and its errno instead. */
static int holder_run(const struct netns_holder *h)
{
	int fds[NETNS_NFDS_MAX] = {-1, -1, -1, -1, -1, -1};
	static const char *const steps[] = {"listen on 127.0.0.1:3128", "bind 127.0.0.1:53 (udp)",
					    "listen on 127.0.0.1:53 (tcp)"};
	static const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_STREAM};
	static const uint16_t ports[] = {NET_PROXY_PORT, NET_DNS_PORT, NET_DNS_PORT};
	static const char *const ns_steps[] = {"open /proc/self/ns/user", "open /proc/self/ns/net"};
	static const char *const ns_paths[] = {"/proc/self/ns/user", "/proc/self/ns/net"};
	const char *step;
	if (nsc_userns(h->uid, h->gid, CLONE_NEWNET, &h->inject, &step) < 0)
		return fail(h, step, errno, fds, 0);
	step = "bring lo up (SIOCSIFFLAGS)";
	if (injected(h, step) || lo_up() < 0)
		return fail(h, step, errno, fds, 0);
	for (size_t i = 0; i < 3; i++) {
		if (injected(h, steps[i]) || (fds[i] = open_listener(AF_INET, types[i], ports[i])) < 0)
			return fail(h, steps[i], errno, fds, i);
	}
	for (size_t i = 0; i < 2; i++) {
		if (injected(h, ns_steps[i]) ||
		    (fds[3 + i] = open(ns_paths[i], O_RDONLY | O_CLOEXEC)) < 0)
			return fail(h, ns_steps[i], errno, fds, 3 + i);
	}
	uint32_t n = NETNS_NFDS_MIN;
	step = "listen on [::1]:3128";
	if (injected(h, step))
		return fail(h, step, errno, fds, n);
	fds[n] = open_listener(AF_INET6, SOCK_STREAM, NET_PROXY_PORT);
	if (fds[n] >= 0)
		n++;
	else if (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL)
		return fail(h, step, errno, fds, n); /* no IPv6 here: 127.0.0.1 alone */
	send_msg(h->sock, 0, "", fds, n);
	for (size_t i = 0; i < n; i++)
		(void)close(fds[i]);
	(void)close(h->sock);
	return 0;
}

int netns_join(const struct netns_fds *ns)
{
	/* the user namespace first: it gives the capabilities that joining its network
	 * namespace needs */
	if (setns(ns->userns, CLONE_NEWUSER) < 0 || setns(ns->netns, CLONE_NEWNET) < 0)
		return -1;
	return 0;
}

/* ---- the parent ------------------------------------------------------------------------- */

#define NETNS_FAILED "--net allow: the jail's network namespace could not be built: %s failed"

/* The failure of `step`: what failed, why (for the errors a host's policy causes) and the
 * fix. Always -1. */
static int explain(const char *step, int errnum, struct err *e)
{
	bool ns_step = !strncmp(step, "unshare", 7) || !strncmp(step, "write /proc/self", 16);
	if (!ns_step || (errnum != EPERM && errnum != EACCES && errnum != ENOSPC &&
			 errnum != EINVAL && errnum != EUSERS)) {
		err_set(e, errnum, NULL, NETNS_FAILED, step);
		err_hint(e, "this host does not let agentjail build the --net allow namespace; "
			    "run `agentjail doctor`; --net off (loopback only) works without it");
		return -1;
	}
	struct userns_facts f;
	userns_facts_read(&f);
	if (f.userns_works) {
		err_set(e, errnum, NULL, NETNS_FAILED " (a user namespace alone can be created "
			"here, not with a network namespace)", step);
		err_hint(e, "a container's seccomp profile or a security module refuses "
			    "CLONE_NEWNET: allow it (docker: --security-opt seccomp=unconfined), or "
			    "use --net off (loopback only) or --net on (the host's whole network)");
		return -1;
	}
	struct userns_cause c = userns_diagnose(&f);
	err_set(e, errnum, NULL, NETNS_FAILED " (%s)", step, c.cause);
	/* here agentjail itself creates the namespace, before bwrap does: under AppArmor's
	 * restriction its binary needs the profile bwrap needs */
	char self[512] = "agentjail";
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n > 0)
		self[n] = '\0';
	if (f.uid != 0 && f.apparmor_restrict == 1)
		err_hint(e, "%s; --net allow: agentjail creates a user namespace itself, so give %s "
			    "the same profile", c.fix, self);
	else
		err_hint(e, "%s", c.fix);
	return -1;
}

static int recv_report(int sock, int timeout_ms, struct netns_listeners *l, struct netns_fds *ns,
		       struct err *e)
{
	*l = NETNS_LISTENERS_NONE;
	*ns = NETNS_FDS_NONE;
	struct pollfd p = {.fd = sock, .events = POLLIN};
	int pr;
	while ((pr = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (pr < 0)
		return err_set(e, errno, NULL, "--net allow: cannot wait for the namespace holder");
	if (pr == 0)
		return err_set(e, ETIMEDOUT, NULL,
			       "--net allow: the namespace holder did not report within %d ms",
			       timeout_ms);
	struct netns_msg m;
	memset(&m, 0, sizeof m);
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
	union {
		char buf[CMSG_SPACE(NETNS_NFDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof u.buf};
	ssize_t got;
	while ((got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (got < 0)
		return err_set(e, errno, NULL, "--net allow: cannot read the namespace holder's "
					       "report");
	int fds[NETNS_NFDS_MAX];
	size_t nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
			if (nfds < NETNS_NFDS_MAX)
				fds[nfds++] = fd;
			else
				(void)close(fd);
		}
	}
	bool bad = got != (ssize_t)sizeof m || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) ||
		   (m.errnum == 0 && (m.nfds < NETNS_NFDS_MIN || m.nfds != nfds));
	if (bad || m.errnum != 0) {
		for (size_t i = 0; i < nfds; i++)
			(void)close(fds[i]);
		if (got == 0)
			return err_set(e, 0, NULL, "--net allow: the namespace holder ended "
						   "without reporting");
		if (bad)
			return err_set(e, EPROTO, NULL, "--net allow: the namespace holder's report "
							"is malformed");
		m.step[sizeof m.step - 1] = '\0';
		return explain(m.step, m.errnum, e);
	}
	l->tcp4 = fds[0];
	l->dns_udp = fds[1];
	l->dns_tcp = fds[2];
	ns->userns = fds[3];
	ns->netns = fds[4];
	l->tcp6 = nfds == NETNS_NFDS_MAX ? fds[5] : -1;
	return 0;
}

int netns_spawn(struct netns_ahead *a, struct err *e)
{
	const char *fail_step = NULL;
#ifdef AJ_TEST_BUILD
	/* test builds only: make one step fail, to see the failure reported and nothing run */
	fail_step = getenv("AGENTJAIL_TEST_NETNS_FAIL");
#endif
	return netns_spawn_failing(a, fail_step, e);
}

int netns_spawn_failing(struct netns_ahead *a, const char *fail_step, struct err *e)
{
	*a = NETNS_AHEAD_NONE;
	struct netns_holder h;
	if (holder_prepare(&h, &a->sock, fail_step, e) < 0)
		return -1;
	/* a process of its own (not a vfork child): it runs beside us, and its dumpable flag
	 * while it writes its maps is its own mm's, never agentjail's */
	pid_t pid = fork();
	if (pid == 0) {
		(void)close(a->sock);
		_exit(holder_run(&h) == 0 ? 0 : 1);
	}
	int saved = errno;
	(void)close(h.sock);
	if (pid < 0) {
		(void)close(a->sock);
		a->sock = -1;
		return err_set(e, saved, NULL, "--net allow: cannot fork the namespace holder");
	}
	a->pid = pid;
	return 0;
}

int netns_take(struct netns_ahead *a, int timeout_ms, struct netns_listeners *l,
	       struct netns_fds *ns, struct err *e)
{
	*l = NETNS_LISTENERS_NONE;
	*ns = NETNS_FDS_NONE;
	if (a->sock < 0)
		return err_set(e, EBADF, NULL, "--net allow: the namespace holder's report was "
					       "already taken");
	int rc = recv_report(a->sock, timeout_ms, l, ns, e);
	(void)close(a->sock);
	a->sock = -1;
	return rc;
}

void netns_ahead_free(struct netns_ahead *a)
{
	if (a->sock >= 0)
		(void)close(a->sock);
	if (a->pid > 0) {
		/* it exits once it has reported; one that has not is not waited for */
		(void)kill(a->pid, SIGKILL);
		while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	*a = NETNS_AHEAD_NONE;
}

int netns_probe(struct err *e)
{
	struct netns_ahead a;
	if (netns_spawn(&a, e) < 0)
		return -1;
	struct netns_listeners l;
	struct netns_fds ns;
	int rc = netns_take(&a, 5000, &l, &ns, e);
	netns_listeners_close(&l);
	netns_fds_close(&ns);
	netns_ahead_free(&a);
	return rc;
}
