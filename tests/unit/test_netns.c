/* The namespace holder's hand-over (core/backend/bwrap/netns): the listeners and the namespaces
 * arrive (a child that joins them is in the listeners' namespace), a failed step
 * arrives named, and a holder that says nothing or vanishes is an error, never a hang. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/backend/bwrap/netns.h"

/* Run the holder with the step `fail` made to fail ("" for none); take its report, and its
 * namespaces into *ns (NULL: closed). */
static int run_holder(const char *fail, struct netns_listeners *l, struct netns_fds *ns,
		      struct err *e, int *status)
{
	struct netns_ahead a;
	assert_int_equal(netns_spawn_failing(&a, fail[0] ? fail : NULL, e), 0);
	assert_true(a.pid > 0 && a.sock >= 0);
	pid_t pid = a.pid;
	struct netns_fds got;
	int rc = netns_take(&a, 5000, l, &got, e);
	assert_int_equal(a.sock, -1);
	assert_int_equal(waitpid(pid, status, 0), pid); /* it exits once it has reported */
	a.pid = -1;
	netns_ahead_free(&a);
	if (ns)
		*ns = got;
	else
		netns_fds_close(&got);
	return rc;
}

static bool can_unshare(void)
{
	struct err e = {0};
	return netns_probe(&e) == 0;
}

static void listeners_arrive(void **state)
{
	(void)state;
	if (!can_unshare())
		skip();
	struct netns_listeners l;
	struct netns_fds ns;
	struct err e = {0};
	int st;
	assert_int_equal(run_holder("", &l, &ns, &e, &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	int fds[] = {l.tcp4, l.dns_udp, l.dns_tcp};
	int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_STREAM};
	int ports[] = {3128, 53, 53};
	for (size_t i = 0; i < 3; i++) {
		assert_true(fds[i] >= 0);
		int t = 0;
		socklen_t tl = sizeof t;
		assert_int_equal(getsockopt(fds[i], SOL_SOCKET, SO_TYPE, &t, &tl), 0);
		assert_int_equal(t, types[i]);
		struct sockaddr_in a;
		socklen_t al = sizeof a;
		assert_int_equal(getsockname(fds[i], (struct sockaddr *)&a, &al), 0);
		assert_int_equal(a.sin_family, AF_INET);
		assert_int_equal(ntohs(a.sin_port), ports[i]);
		assert_int_equal(ntohl(a.sin_addr.s_addr), INADDR_LOOPBACK);
		int fl = fcntl(fds[i], F_GETFL);
		assert_true(fl & O_NONBLOCK);
		assert_true(fcntl(fds[i], F_GETFD) & FD_CLOEXEC);
	}
	if (l.tcp6 >= 0) {
		struct sockaddr_in6 a6;
		socklen_t al = sizeof a6;
		assert_int_equal(getsockname(l.tcp6, (struct sockaddr *)&a6, &al), 0);
		assert_int_equal(a6.sin6_family, AF_INET6);
		assert_int_equal(ntohs(a6.sin6_port), 3128);
		assert_true(IN6_IS_ADDR_LOOPBACK(&a6.sin6_addr));
	}
	/* the namespaces: a child that joins them (as the one that execs bwrap does) is in the
	 * listeners' network namespace, where 127.0.0.1:3128 accepts a connection */
	assert_true(ns.userns >= 0 && ns.netns >= 0);
	assert_true(fcntl(ns.userns, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(ns.netns, F_GETFD) & FD_CLOEXEC);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (netns_join(&ns) < 0)
			_exit(2);
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(3128),
					.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		_exit(s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* … and our own namespace is not the jail's: nothing listens on 3128 here (or something
	 * else of the host's does: the listener's namespace is not ours either way) */
	struct stat mine, theirs;
	assert_int_equal(stat("/proc/self/ns/net", &mine), 0);
	assert_int_equal(fstat(ns.netns, &theirs), 0);
	assert_true(mine.st_ino != theirs.st_ino);
	netns_fds_close(&ns);
	assert_int_equal(ns.netns, -1);
	netns_listeners_close(&l);
	assert_int_equal(l.tcp4, -1);
}

static void failed_step_named(void **state)
{
	(void)state;
	static const char *const steps[] = {"make the holder dumpable", "unshare",
					    "write /proc/self/setgroups", "write /proc/self/gid_map",
					    "bring lo up", "listen on 127.0.0.1:3128",
					    "bind 127.0.0.1:53", "open /proc/self/ns/user",
					    "open /proc/self/ns/net", "listen on [::1]:3128"};
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
		if (i > 0 && !can_unshare())
			break;
		struct netns_listeners l;
		struct err e = {0};
		int st;
		assert_int_equal(run_holder(steps[i], &l, NULL, &e, &st), -1);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
		if (!strstr(e.what, steps[i]) || !strstr(e.what, "could not be built"))
			fail_msg("step %s: got \"%s\"", steps[i], e.what);
		assert_int_equal(e.errnum, EPERM);
		assert_true(e.hint[0] != '\0');
		assert_int_equal(l.tcp4, -1);
		assert_int_equal(l.dns_udp, -1);
	}
}

static void silent_or_gone_holder(void **state)
{
	(void)state;
	/* a holder's end of the report that says nothing, a short message, or is closed */
	struct netns_listeners l;
	struct netns_fds ns;
	struct err e = {0};
	for (int k = 0; k < 3; k++) {
		int sp[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
		struct netns_ahead a = {.pid = -1, .sock = sp[0]};
		if (k == 1)
			assert_int_equal(write(sp[1], "x", 1), 1);
		if (k == 2)
			close(sp[1]);
		err_clear(&e);
		assert_int_equal(netns_take(&a, 50, &l, &ns, &e), -1);
		if (k == 0)
			assert_int_equal(e.errnum, ETIMEDOUT);
		assert_non_null(strstr(e.what, k == 0 ? "did not report" : k == 1 ? "malformed"
										: "without reporting"));
		assert_int_equal(l.tcp4, -1);
		assert_int_equal(ns.netns, -1);
		assert_int_equal(a.sock, -1); /* taken: closed */
		err_clear(&e);
		assert_int_equal(netns_take(&a, 50, &l, &ns, &e), -1); /* taken once only */
		if (k != 2)
			close(sp[1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(listeners_arrive),
		cmocka_unit_test(failed_step_named),
		cmocka_unit_test(silent_or_gone_holder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
