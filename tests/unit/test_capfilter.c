/* Tests for core/confine/capfilter: the program is loaded by the kernel, and in a child that
 * installed it connect() waits for the listener's answer (which the test gives: a refusal),
 * TCP Fast Open is refused in every form (sendto, sendmsg, sendmmsg with MSG_FASTOPEN;
 * setsockopt TCP_FASTOPEN_CONNECT and TCP_FASTOPEN_NO_COOKIE), other sends and options pass,
 * and no second listener can be installed below it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include "core/confine/capfilter.h"
#include "core/jail/ctl.h"

#ifndef TCP_FASTOPEN_NO_COOKIE
#define TCP_FASTOPEN_NO_COOKIE 34
#endif

/* In the child: each check's number is its exit status when it fails. */
static int child_checks(int sp)
{
	int lfd = -1;
	struct err e = {0};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || capfilter_install(&lfd, &e) < 0)
		return 10;
	if (ctl_send_fd(sp, 1, 0, lfd) < 0)
		return 11;
	(void)close(lfd);
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in lo = {.sin_family = AF_INET, .sin_port = htons(9)};
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (sendto(u, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&lo, sizeof lo) >= 0 ||
	    errno != EOPNOTSUPP)
		return 20;
	struct iovec iov = {.iov_base = "x", .iov_len = 1};
	struct msghdr mh = {.msg_name = &lo, .msg_namelen = sizeof lo, .msg_iov = &iov,
			    .msg_iovlen = 1};
	if (sendmsg(u, &mh, MSG_FASTOPEN) >= 0 || errno != EOPNOTSUPP)
		return 21;
	struct mmsghdr mm = {.msg_hdr = mh};
	if (sendmmsg(u, &mm, 1, MSG_FASTOPEN) >= 0 || errno != EOPNOTSUPP)
		return 22;
	if (sendto(u, "x", 1, 0, (struct sockaddr *)&lo, sizeof lo) != 1)
		return 23; /* no MSG_FASTOPEN: not the filter's business */
	int t = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	if (setsockopt(t, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one) == 0 ||
	    errno != ENOPROTOOPT)
		return 30;
	if (setsockopt(t, IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE, &one, sizeof one) == 0 ||
	    errno != ENOPROTOOPT)
		return 31;
	if (setsockopt(t, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
		return 32;
	struct sockaddr_in far = {.sin_family = AF_INET, .sin_port = htons(80)};
	(void)inet_pton(AF_INET, "192.0.2.1", &far.sin_addr);
	if (connect(t, (struct sockaddr *)&far, sizeof far) == 0 || errno != ECONNREFUSED)
		return 40; /* the test's listener refuses it */
	int again = -1;
	if (capfilter_install(&again, &e) == 0 || e.errnum != EBUSY)
		return 50;
	return 0;
}

static void filter_in_a_child(void **state)
{
	(void)state;
	int sp[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		(void)close(sp[0]);
		_exit(child_checks(sp[1]));
	}
	(void)close(sp[1]);
	struct ctl_msg m;
	int lfd = -1;
	assert_int_equal(ctl_recv_fd(sp[0], &m, &lfd), 1);
	assert_true(lfd >= 0);
	/* answer the one connect: check what the kernel says it is, refuse it */
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 10000), 1);
	int ws = 0;
	if (!(p.revents & POLLIN)) { /* the child is gone: say which check failed */
		assert_int_equal(waitpid(pid, &ws, 0), pid);
		fail_msg("the child ended before its connect (check %d failed)", WEXITSTATUS(ws));
	}
	struct seccomp_notif req;
	memset(&req, 0, sizeof req);
	assert_int_equal(ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req), 0);
	assert_int_equal(req.data.nr, __NR_connect);
	assert_int_equal((pid_t)req.pid, pid); /* single-threaded: its tid is its pid */
	assert_int_equal(req.data.args[2], sizeof(struct sockaddr_in));
	struct seccomp_notif_resp resp = {.id = req.id, .error = -ECONNREFUSED};
	assert_int_equal(ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp), 0);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	(void)close(lfd);
	(void)close(sp[0]);
	assert_true(WIFEXITED(ws));
	if (WEXITSTATUS(ws))
		fail_msg("the child's check %d failed", WEXITSTATUS(ws));
}

static void program_shape(void **state)
{
	(void)state;
	struct sock_filter f[CAPFILTER_MAX];
	size_t n = capfilter_program(f);
	assert_true(n > 8 && n <= CAPFILTER_MAX);
	assert_int_equal(f[n - 1].code, BPF_RET | BPF_K); /* it ends in returns */
	for (size_t i = 0; i < n; i++)
		if (BPF_CLASS(f[i].code) == BPF_JMP)
			assert_true(i + 1 + f[i].jt < n && i + 1 + f[i].jf < n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(program_shape),
		cmocka_unit_test(filter_in_a_child),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
