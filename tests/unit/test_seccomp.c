/* Unit tests for core/confine/seccomp.
 *
 * Two kinds of test:
 *  - in a child: set no_new_privs, load the filter with seccomp_load_self(), make one syscall
 *    with harmless arguments and report its errno to the parent through a pipe;
 *  - on the exported BPF itself: a small classic-BPF interpreter runs the program from
 *    seccomp_build_fd() on chosen struct seccomp_data values. This reaches what the kernel here
 *    cannot show: foreign architectures, x32, every syscall of the deny list, argument edge cases.
 *
 * Every child test asks for test_errno = TEST_ERRNO. The library linked here is a normal build,
 * which must ignore it; if this file and the library are both compiled with -DAJ_TEST_BUILD the
 * same tests expect the distinctive errno instead, proving each refusal is this filter's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <seccomp.h>

#include "core/confine/seccomp.h"
#include "util/cleanup.h"

enum { TEST_ERRNO = 4000 };

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static int want(int errnum)
{
#ifdef AJ_TEST_BUILD
	(void)errnum;
	return TEST_ERRNO;
#else
	return errnum;
#endif
}

/* ---- running a probe in a filtered child ---- */

struct outcome {
	int err; /* errno seen by the probe, 0 on success */
	int sig; /* signal that killed the child, 0 if it exited */
};

typedef int (*probe_fn)(void);

/* cmocka catches these to report a crashing test; in a child they must kill it instead, or the
 * child would jump back into the test runner and carry on as a second copy of it. */
static void default_crash_signals(void)
{
	const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS, SIGABRT};
	for (size_t i = 0; i < ARRAY_LEN(sigs); i++)
		(void)signal(sigs[i], SIG_DFL);
}

/* Child side: never returns. A load failure is reported as a negative value. */
static void child_run(int wfd, const struct seccomp_opts *o, probe_fn probe)
{
	int r;
	struct err e = {0};
	default_crash_signals();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = -10000 - errno;
	else if (o && seccomp_load_self(o, &e) < 0)
		r = -20000 - e.errnum;
	else
		r = probe();
	if (write(wfd, &r, sizeof r) != (ssize_t)sizeof r)
		_exit(3);
	_exit(0);
}

/* Run probe in a child, filtered with o (unfiltered when o is NULL). */
static struct outcome run_probe(const struct seccomp_opts *o, probe_fn probe)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		child_run(p[1], o, probe);
	}
	close(p[1]);
	int r = 0, status = 0;
	ssize_t n = read(p[0], &r, sizeof r);
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	struct outcome out = {0, 0};
	if (WIFSIGNALED(status)) {
		out.sig = WTERMSIG(status);
		return out;
	}
	assert_int_equal(n, (ssize_t)sizeof r);
	assert_true(r >= 0); /* the filter loaded */
	out.err = r;
	return out;
}

static const struct seccomp_opts deflt = {.allow_ptrace = false, .test_errno = TEST_ERRNO};
static const struct seccomp_opts with_ptrace = {.allow_ptrace = true, .test_errno = TEST_ERRNO};

static void expect_errno(const struct seccomp_opts *o, probe_fn probe, int errnum)
{
	struct outcome out = run_probe(o, probe);
	assert_int_equal(out.sig, 0);
	assert_int_equal(out.err, errnum);
}

#define errno_of(expr) ((expr) < 0 ? errno : 0)

/* ---- probes: each harmless without the filter (bad fds, bogus paths, a throwaway child) ---- */

static int probe_tiocsti(void)
{
	char c = 'x';
	return errno_of(ioctl(-1, TIOCSTI, &c));
}

static int probe_tiocsti_high(void)
{
	char c = 'x';
	return errno_of(syscall(SYS_ioctl, -1, 0x100000000UL | TIOCSTI, &c));
}

static int probe_tioclinux(void)
{
	char sub = 0;
	return errno_of(ioctl(-1, TIOCLINUX, &sub));
}

static int probe_tcgets(void)
{
	char buf[64];
	return errno_of(ioctl(-1, TCGETS, buf));
}

static int probe_unshare(void)
{
	return errno_of(unshare(CLONE_NEWUSER));
}
static int probe_setns(void)
{
	return errno_of(setns(-1, 0));
}
static int probe_mount(void)
{
	return errno_of(mount("none", "/nonexistent/agentjail", "agentjail-nofs", 0, NULL));
}
static int probe_umount2(void)
{
	return errno_of(umount2("/nonexistent/agentjail", 0));
}
static int probe_chroot(void)
{
	return errno_of(chroot("/nonexistent/agentjail"));
}
static int probe_pivot_root(void)
{
	return errno_of(syscall(SYS_pivot_root, "/nonexistent/a", "/nonexistent/b"));
}

/* A raw clone with no stack behaves like fork: the copy just exits. */
static int probe_clone_newuser(void)
{
	long r = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), 0UL, NULL, NULL, 0UL);
	if (r == 0)
		_exit(0);
	if (r < 0)
		return errno;
	(void)waitpid((pid_t)r, NULL, 0);
	return 0;
}

static int probe_clone3(void)
{
	return errno_of(syscall(SYS_clone3, NULL, 0UL));
}
static int probe_open_tree(void)
{
	return errno_of(syscall(SYS_open_tree, -1, "/nonexistent/agentjail", 0U));
}
static int probe_fsopen(void)
{
	return errno_of(syscall(SYS_fsopen, "agentjail-nofs", 0U));
}

static int sock_errno(int fam, int type)
{
	int fd = socket(fam, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int probe_vsock(void)
{
	return sock_errno(AF_VSOCK, SOCK_STREAM);
}
static int probe_packet(void)
{
	return sock_errno(AF_PACKET, SOCK_DGRAM);
}
static int probe_alg(void)
{
	return sock_errno(AF_ALG, SOCK_SEQPACKET);
}
static int probe_unix(void)
{
	return sock_errno(AF_UNIX, SOCK_STREAM);
}
static int probe_inet(void)
{
	return sock_errno(AF_INET, SOCK_DGRAM);
}
static int probe_inet6(void)
{
	return sock_errno(AF_INET6, SOCK_DGRAM);
}
static int probe_netlink(void)
{
	return sock_errno(AF_NETLINK, SOCK_RAW);
}

static int probe_socketpair_unix(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

static int probe_socketpair_inet(void)
{
	int sv[2];
	return errno_of(socketpair(AF_INET, SOCK_STREAM, 0, sv));
}

static int probe_pers_query(void)
{
	return errno_of(personality(0xffffffff));
}
static int probe_pers_linux(void)
{
	return errno_of(personality(PER_LINUX));
}
static int probe_pers_norandom(void)
{
	return errno_of(personality(ADDR_NO_RANDOMIZE));
}
static int probe_pers_norandom_high(void)
{
	return errno_of(syscall(SYS_personality, 0x100000000UL | ADDR_NO_RANDOMIZE));
}

static int probe_ptrace(void)
{
	return errno_of(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}
static int probe_vm_readv(void)
{
	return errno_of(syscall(SYS_process_vm_readv, getpid(), NULL, 0UL, NULL, 0UL, 0UL));
}
static int probe_keyctl(void)
{
	return errno_of(syscall(SYS_keyctl, -1, 0UL, 0UL, 0UL, 0UL));
}
static int probe_bpf(void)
{
	return errno_of(syscall(SYS_bpf, -1, NULL, 0U));
}
static int probe_io_uring(void)
{
	return errno_of(syscall(SYS_io_uring_setup, 0U, NULL));
}
static int probe_userfaultfd(void)
{
	return errno_of(syscall(SYS_userfaultfd, -1));
}
static int probe_perf(void)
{
	return errno_of(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0UL));
}

/* An x32 getpid: the same syscall instruction with the x32 bit in the number. */
static int probe_x32_getpid(void)
{
	return errno_of(syscall(0x40000000L | 39));
}

/* ---- probes: an ordinary workload must be unaffected ---- */

static int probe_fork_exec(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : ECHILD;
}

/* posix_spawn tries clone3 first, so this proves libc falls back on ENOSYS. */
static int probe_spawn(void)
{
	char *argv[] = {"true", NULL};
	char *envp[] = {NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, envp);
	if (rc != 0)
		return rc;
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : ECHILD;
}

static void *thread_main(void *arg)
{
	return arg;
}

static int probe_thread(void)
{
	pthread_t t;
	int token = 42;
	void *ret = NULL;
	int rc = pthread_create(&t, NULL, thread_main, &token);
	if (rc != 0)
		return rc;
	rc = pthread_join(t, &ret);
	if (rc != 0)
		return rc;
	return ret == &token ? 0 : EINVAL;
}

/* i386 getpid (20) through the 32-bit entry point. */
static int probe_int80(void)
{
#if defined(__x86_64__)
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
	return ret == (long)getpid() ? 0 : (ret < 0 ? (int)-ret : EINVAL);
#else
	return ENOSYS;
#endif
}

/* ---- child tests ---- */

static void test_ioctl_tiocsti(void **state)
{
	expect_errno(&deflt, probe_tiocsti, want(EPERM));
}

static void test_ioctl_tiocsti_high_bits(void **state)
{
	expect_errno(&deflt, probe_tiocsti_high, want(EPERM));
}

static void test_ioctl_tioclinux(void **state)
{
	expect_errno(&deflt, probe_tioclinux, want(EPERM));
}

static void test_ioctl_other_allowed(void **state)
{
	expect_errno(&deflt, probe_tcgets, EBADF);
}

static void test_namespace_and_mount_calls(void **state)
{
	expect_errno(&deflt, probe_unshare, want(EPERM));
	expect_errno(&deflt, probe_setns, want(EPERM));
	expect_errno(&deflt, probe_mount, want(EPERM));
	expect_errno(&deflt, probe_umount2, want(EPERM));
	expect_errno(&deflt, probe_chroot, want(EPERM));
	expect_errno(&deflt, probe_pivot_root, want(EPERM));
}

static void test_clone_newuser(void **state)
{
	expect_errno(&deflt, probe_clone_newuser, want(EPERM));
}

static void test_clone3_and_mount_api_enosys(void **state)
{
	/* clone3 answers ENOSYS even in a test build: libc's fallback depends on it. */
	expect_errno(&deflt, probe_clone3, ENOSYS);
	expect_errno(&deflt, probe_open_tree, want(ENOSYS));
	expect_errno(&deflt, probe_fsopen, want(ENOSYS));
}

static void test_socket_families_refused(void **state)
{
	expect_errno(&deflt, probe_vsock, want(EAFNOSUPPORT));
	expect_errno(&deflt, probe_packet, want(EAFNOSUPPORT));
	expect_errno(&deflt, probe_alg, want(EAFNOSUPPORT));
	expect_errno(&deflt, probe_socketpair_inet, want(EAFNOSUPPORT));
}

static void test_socket_families_allowed(void **state)
{
	expect_errno(&deflt, probe_unix, 0);
	expect_errno(&deflt, probe_inet, 0);
	expect_errno(&deflt, probe_inet6, 0);
	expect_errno(&deflt, probe_netlink, 0);
	expect_errno(&deflt, probe_socketpair_unix, 0);
}

static void test_personality(void **state)
{
	expect_errno(&deflt, probe_pers_query, 0);
	expect_errno(&deflt, probe_pers_linux, 0);
	expect_errno(&deflt, probe_pers_norandom, want(EPERM));
	expect_errno(&deflt, probe_pers_norandom_high, want(EPERM));
}

static void test_ptrace_denied_by_default(void **state)
{
	expect_errno(&deflt, probe_ptrace, want(EPERM));
	expect_errno(&deflt, probe_vm_readv, want(EPERM));
}

static void test_ptrace_allowed_on_request(void **state)
{
	expect_errno(&with_ptrace, probe_ptrace, 0);
	expect_errno(&with_ptrace, probe_vm_readv, 0);
}

static void test_kernel_surface_calls(void **state)
{
	expect_errno(&deflt, probe_keyctl, want(EPERM));
	expect_errno(&deflt, probe_bpf, want(EPERM));
	expect_errno(&deflt, probe_io_uring, want(EPERM));
	expect_errno(&deflt, probe_userfaultfd, want(EPERM));
	expect_errno(&deflt, probe_perf, want(EPERM));
}

static void test_workload_unaffected(void **state)
{
	expect_errno(&deflt, probe_fork_exec, 0);
	expect_errno(&deflt, probe_spawn, 0);
	expect_errno(&deflt, probe_thread, 0);
}

/* ---- setuid and setgid bits (issue 10, item 4) ---- */

static char setid_dir[] = "/tmp/aj-test-seccomp-XXXXXX";
static char setid_file[sizeof setid_dir + 16];

static int probe_chmod_suid(void) { return errno_of(chmod(setid_file, 04755)); }
static int probe_chmod_sgid(void) { return errno_of(chmod(setid_file, 02755)); }
static int probe_chmod_plain(void) { return errno_of(chmod(setid_file, 0755)); }
static int probe_chmod_sticky(void) { return errno_of(chmod(setid_dir, 01777)); }

static int probe_fchmod_suid(void)
{
	_cleanup_close_ int fd = open(setid_file, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -1 : errno_of(fchmod(fd, 04755));
}

static int probe_fchmodat_sgid(void)
{
	return errno_of(fchmodat(AT_FDCWD, setid_file, 02755, 0));
}

static int probe_fchmodat2_suid(void)
{
	return errno_of(syscall(452, AT_FDCWD, setid_file, 04755, 0));
}

static int open_new(mode_t mode)
{
	char path[sizeof setid_dir + 16];
	snprintf(path, sizeof path, "%s/new", setid_dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return errno;
	close(fd);
	(void)unlink(path);
	return 0;
}

static int probe_open_creat_suid(void) { return open_new(04755); }
static int probe_open_creat_plain(void) { return open_new(0644); }

/* Without O_CREAT the mode is unused: garbage there (a raw syscall) must not fail the call. */
static int probe_open_garbage_mode(void)
{
	long fd = syscall(SYS_openat, AT_FDCWD, setid_file, O_RDONLY | O_CLOEXEC, 06777);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static int probe_tmpfile_sgid(void)
{
	int fd = open(setid_dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 02755);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int probe_creat_suid(void)
{
	char path[sizeof setid_dir + 16];
	snprintf(path, sizeof path, "%s/creat", setid_dir);
	int fd = creat(path, 04755);
	if (fd < 0)
		return errno;
	close(fd);
	(void)unlink(path);
	return 0;
}

static int probe_mknod_suid(void)
{
	char path[sizeof setid_dir + 16];
	snprintf(path, sizeof path, "%s/node", setid_dir);
	if (mknod(path, S_IFREG | 04755, 0) < 0)
		return errno;
	(void)unlink(path);
	return 0;
}

/* mkdir's mode loses both bits in the kernel: not refused (cp -r of a setgid dir passes them) */
static int probe_mkdir_sgid(void)
{
	char path[sizeof setid_dir + 16];
	snprintf(path, sizeof path, "%s/dir", setid_dir);
	if (mkdir(path, 02755) < 0)
		return errno;
	(void)rmdir(path);
	return 0;
}

static int probe_openat2(void)
{
	struct {
		uint64_t flags, mode, resolve;
	} how = {O_RDONLY, 0, 0};
	long fd = syscall(437, AT_FDCWD, setid_file, &how, sizeof how);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static int setid_setup(void **state)
{
	(void)state;
	memcpy(setid_dir + sizeof setid_dir - 7, "XXXXXX", 6); /* each test gets a fresh one */
	if (!mkdtemp(setid_dir))
		return -1;
	snprintf(setid_file, sizeof setid_file, "%s/file", setid_dir);
	int fd = open(setid_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int setid_teardown(void **state)
{
	(void)state;
	(void)unlink(setid_file);
	(void)rmdir(setid_dir);
	return 0;
}

static void test_setid_bits_refused(void **state)
{
	expect_errno(&deflt, probe_chmod_suid, want(EPERM));
	expect_errno(&deflt, probe_chmod_sgid, want(EPERM));
	expect_errno(&deflt, probe_fchmod_suid, want(EPERM));
	expect_errno(&deflt, probe_fchmodat_sgid, want(EPERM));
	expect_errno(&deflt, probe_open_creat_suid, want(EPERM));
	expect_errno(&deflt, probe_tmpfile_sgid, want(EPERM));
	expect_errno(&deflt, probe_creat_suid, want(EPERM));
	expect_errno(&deflt, probe_mknod_suid, want(EPERM));
	/* fchmodat2 (Linux 6.6): where the kernel lacks it, ENOSYS says nothing about us */
	struct outcome out = run_probe(&deflt, probe_fchmodat2_suid);
	assert_int_equal(out.sig, 0);
	if (out.err != ENOSYS)
		assert_int_equal(out.err, want(EPERM));
	struct stat st;
	assert_int_equal(stat(setid_file, &st), 0);
	assert_int_equal(st.st_mode & (S_ISUID | S_ISGID), 0);
}

static void test_setid_ordinary_modes_allowed(void **state)
{
	expect_errno(&deflt, probe_chmod_plain, 0);
	expect_errno(&deflt, probe_chmod_sticky, 0);
	expect_errno(&deflt, probe_open_creat_plain, 0);
	expect_errno(&deflt, probe_open_garbage_mode, 0);
	expect_errno(&deflt, probe_mkdir_sgid, 0);
	/* openat2 answers ENOSYS, even in a test build: libc falls back to openat */
	expect_errno(&deflt, probe_openat2, ENOSYS);
}

/* A normal build must not be turnable into a filter answering anything but its own errnos. */
static void test_test_errno_ignored_in_normal_build(void **state)
{
	const struct seccomp_opts o = {.test_errno = 4000};
	struct outcome out = run_probe(&o, probe_unshare);
	assert_int_equal(out.sig, 0);
#ifdef AJ_TEST_BUILD
	assert_int_equal(out.err, 4000);
#else
	assert_int_equal(out.err, EPERM);
#endif
}

static void test_x32_call_not_killed(void **state)
{
	if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
		print_message("# skipped: not x86_64, no x32\n");
		return; /* not skip(): cmocka 1.1 reports it as "not ok", failing prove */
	}
	expect_errno(&deflt, probe_x32_getpid, want(ENOSYS));
}

static void test_i386_int80_killed(void **state)
{
	if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
		print_message("# skipped: not x86_64, no int 0x80\n");
		return;
	}
	/* Only meaningful where the kernel runs i386 syscalls at all. */
	struct outcome ctl = run_probe(NULL, probe_int80);
	if (ctl.sig != 0 || ctl.err != 0) {
		/* The BPF test still covers the bad-arch action. */
		print_message("# skipped: no i386 syscalls here (signal %d, errno %d)\n", ctl.sig,
		              ctl.err);
		return;
	}
	struct outcome out = run_probe(&deflt, probe_int80);
	assert_int_equal(out.sig, SIGSYS);
}

/* ---- the exported program ---- */

struct prog {
	struct sock_filter *insns;
	size_t len;
};

static void prog_free(struct prog *p)
{
	free(p->insns);
	p->insns = NULL;
}

static int build_fd(const struct seccomp_opts *o)
{
	struct err e = {0};
	int fd = -1;
	if (seccomp_build_fd(o, &fd, &e) < 0)
		fail_msg("seccomp_build_fd: %s (%s)", e.what, strerror(e.errnum));
	assert_true(fd >= 0);
	return fd;
}

static struct prog load_prog(const struct seccomp_opts *o)
{
	_cleanup_close_ int fd = build_fd(o);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_size > 0);
	assert_int_equal(st.st_size % (off_t)sizeof(struct sock_filter), 0);
	struct prog p = {malloc((size_t)st.st_size),
	                 (size_t)st.st_size / sizeof(struct sock_filter)};
	assert_non_null(p.insns);
	assert_int_equal(pread(fd, p.insns, (size_t)st.st_size, 0), st.st_size);
	return p;
}

/* A classic-BPF interpreter, enough for seccomp programs: loads from seccomp_data, scratch
 * memory, ALU on A, forward jumps, returns. Returns false on anything invalid. */
struct vm {
	uint32_t a, x, mem[BPF_MEMWORDS];
	const struct seccomp_data *d;
};

static bool vm_word(const struct vm *m, uint32_t k, uint32_t *out)
{
	if (k % 4 != 0 || k > sizeof *m->d - 4)
		return false;
	memcpy(out, (const char *)m->d + k, 4);
	return true;
}

static bool vm_load(struct vm *m, const struct sock_filter *f)
{
	uint32_t *dst = BPF_CLASS(f->code) == BPF_LD ? &m->a : &m->x;
	switch (BPF_MODE(f->code)) {
	case BPF_ABS:
		return BPF_SIZE(f->code) == BPF_W && vm_word(m, f->k, dst);
	case BPF_IMM:
		*dst = f->k;
		return true;
	case BPF_MEM:
		if (f->k >= BPF_MEMWORDS)
			return false;
		*dst = m->mem[f->k];
		return true;
	case BPF_LEN:
		*dst = sizeof *m->d;
		return true;
	default:
		return false;
	}
}

static bool vm_alu(struct vm *m, const struct sock_filter *f)
{
	uint32_t v = BPF_SRC(f->code) == BPF_X ? m->x : f->k;
	switch (BPF_OP(f->code)) {
	case BPF_ADD:
		m->a += v;
		return true;
	case BPF_SUB:
		m->a -= v;
		return true;
	case BPF_MUL:
		m->a *= v;
		return true;
	case BPF_AND:
		m->a &= v;
		return true;
	case BPF_OR:
		m->a |= v;
		return true;
	case BPF_XOR:
		m->a ^= v;
		return true;
	case BPF_LSH:
		m->a = v < 32 ? m->a << v : 0;
		return true;
	case BPF_RSH:
		m->a = v < 32 ? m->a >> v : 0;
		return true;
	case BPF_NEG:
		m->a = -m->a;
		return true;
	case BPF_DIV:
		if (v == 0)
			return false;
		m->a /= v;
		return true;
	default:
		return false;
	}
}

/* Returns the jump offset to add to pc, or -1 if the instruction is invalid. */
static long vm_jump(const struct vm *m, const struct sock_filter *f)
{
	uint32_t v = BPF_SRC(f->code) == BPF_X ? m->x : f->k;
	bool c;
	switch (BPF_OP(f->code)) {
	case BPF_JA:
		return f->k;
	case BPF_JEQ:
		c = m->a == v;
		break;
	case BPF_JGT:
		c = m->a > v;
		break;
	case BPF_JGE:
		c = m->a >= v;
		break;
	case BPF_JSET:
		c = (m->a & v) != 0;
		break;
	default:
		return -1;
	}
	return c ? f->jt : f->jf;
}

static bool vm_step(struct vm *m, const struct sock_filter *f, size_t *pc)
{
	switch (BPF_CLASS(f->code)) {
	case BPF_LD:
	case BPF_LDX:
		return vm_load(m, f);
	case BPF_ST:
	case BPF_STX:
		if (f->k >= BPF_MEMWORDS)
			return false;
		m->mem[f->k] = BPF_CLASS(f->code) == BPF_ST ? m->a : m->x;
		return true;
	case BPF_ALU:
		return vm_alu(m, f);
	case BPF_JMP: {
		long off = vm_jump(m, f);
		*pc += (size_t)off;
		return off >= 0;
	}
	case BPF_MISC:
		if (BPF_MISCOP(f->code) == BPF_TAX)
			m->x = m->a;
		else
			m->a = m->x;
		return true;
	default:
		return false;
	}
}

static uint32_t vm_run(const struct prog *p, const struct seccomp_data *d)
{
	struct vm m = {.a = 0, .x = 0, .d = d};
	memset(m.mem, 0, sizeof m.mem);
	for (size_t pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->insns[pc];
		if (BPF_CLASS(f->code) == BPF_RET)
			return BPF_RVAL(f->code) == BPF_A ? m.a : f->k;
		if (!vm_step(&m, f, &pc))
			fail_msg("invalid BPF instruction %zu (code 0x%x)", pc, f->code);
	}
	fail_msg("BPF program runs off its end");
	return 0;
}

#define ALLOW SECCOMP_RET_ALLOW
#define KILL_PROCESS SECCOMP_RET_KILL_PROCESS
#define ERRNO(e) (SECCOMP_RET_ERRNO | ((uint32_t)(e)&SECCOMP_RET_DATA))

static uint32_t native_arch(void)
{
	return seccomp_arch_native();
}

static uint32_t verdict6(const struct prog *p, uint32_t arch, int nr, const uint64_t args[6])
{
	struct seccomp_data d;
	memset(&d, 0, sizeof d);
	d.nr = nr;
	d.arch = arch;
	memcpy(d.args, args, sizeof d.args);
	return vm_run(p, &d);
}

static uint32_t verdict(const struct prog *p, int nr, uint64_t a0, uint64_t a1)
{
	const uint64_t args[6] = {a0, a1, 0, 0, 0, 0};
	return verdict6(p, native_arch(), nr, args);
}

static int nr_of(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr < 0)
		fail_msg("syscall %s unknown to libseccomp here", name);
	return nr;
}

/* libseccomp numbers an architecture with its AUDIT_ARCH value, which the program compares. */
static void test_bpf_foreign_arch_killed(void **state)
{
	struct prog p = load_prog(&deflt);
	const uint64_t none[6] = {0};
	const uint32_t foreign[] = {AUDIT_ARCH_I386,   AUDIT_ARCH_ARM,     AUDIT_ARCH_AARCH64,
	                            AUDIT_ARCH_X86_64, AUDIT_ARCH_PPC64LE, 0};
	int checked = 0;
	for (size_t i = 0; i < ARRAY_LEN(foreign); i++) {
		if (foreign[i] == native_arch())
			continue;
		assert_int_equal(verdict6(&p, foreign[i], 20, none), KILL_PROCESS);
		checked++;
	}
	assert_true(checked >= 4);
	prog_free(&p);
}

/* x32 shares x86_64's AUDIT_ARCH; its numbers carry bit 30. */
static void test_bpf_x32_enosys(void **state)
{
	if (native_arch() != SCMP_ARCH_X86_64) {
		print_message("# skipped: not x86_64, no x32\n");
		return;
	}
	struct prog p = load_prog(&deflt);
	const uint64_t none[6] = {0};
	const char *names[] = {"getpid", "read", "write", "mount", "execve", "ioctl", "socket"};
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		int x32 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X32, names[i]);
		assert_true(x32 >= 0x40000000);
		assert_int_equal(verdict6(&p, AUDIT_ARCH_X86_64, x32, none), ERRNO(want(ENOSYS)));
	}
	/* ... and the x32 section does not swallow native calls. */
	assert_int_equal(verdict6(&p, AUDIT_ARCH_X86_64, nr_of("getpid"), none), ALLOW);
	prog_free(&p);
}

struct expect {
	const char *name;
	int errnum; /* 0: allowed; negative: exactly -errnum, even in a test build */
};

/* clang-format off */
static const struct expect plain_rules[] = {
	{"unshare", EPERM},
	{"setns", EPERM},
	{"mount", EPERM},
	{"umount2", EPERM},
	{"pivot_root", EPERM},
	{"chroot", EPERM},
	{"clone3", -ENOSYS},
	{"open_tree", ENOSYS},
	{"move_mount", ENOSYS},
	{"fsopen", ENOSYS},
	{"fsconfig", ENOSYS},
	{"fsmount", ENOSYS},
	{"fspick", ENOSYS},
	{"mount_setattr", ENOSYS},
	{"keyctl", EPERM},
	{"add_key", EPERM},
	{"request_key", EPERM},
	{"bpf", EPERM},
	{"perf_event_open", EPERM},
	{"userfaultfd", EPERM},
	{"io_uring_setup", EPERM},
	{"io_uring_enter", EPERM},
	{"io_uring_register", EPERM},
	{"kexec_load", EPERM},
	{"kexec_file_load", EPERM},
	{"init_module", EPERM},
	{"finit_module", EPERM},
	{"delete_module", EPERM},
	{"reboot", EPERM},
	{"swapon", EPERM},
	{"swapoff", EPERM},
	{"syslog", EPERM},
	{"acct", EPERM},
	{"quotactl", EPERM},
	{"quotactl_fd", EPERM},
	{"sethostname", EPERM},
	{"setdomainname", EPERM},
	{"open_by_handle_at", EPERM},
	{"name_to_handle_at", EPERM},
	{"settimeofday", EPERM},
	{"clock_settime", EPERM},
	{"clock_adjtime", EPERM},
	{"adjtimex", EPERM},
	{"mbind", EPERM},
	{"set_mempolicy", EPERM},
	{"set_mempolicy_home_node", EPERM},
	{"migrate_pages", EPERM},
	{"move_pages", EPERM},
	{"ptrace", EPERM},
	{"process_vm_readv", EPERM},
	{"process_vm_writev", EPERM},
	/* Not refused: everyday calls, and the read-only NUMA query. */
	{"read", 0},
	{"openat", 0},
	{"execve", 0},
	{"wait4", 0},
	{"getpid", 0},
	{"prctl", 0},
	{"seccomp", 0},
	{"get_mempolicy", 0},
	{"memfd_create", 0},
};
/* clang-format on */

static uint32_t expected_action(int errnum)
{
	if (errnum < 0)
		return ERRNO(-errnum);
	return errnum ? ERRNO(want(errnum)) : ALLOW;
}

static void test_bpf_plain_rules(void **state)
{
	struct prog p = load_prog(&deflt);
	for (size_t i = 0; i < ARRAY_LEN(plain_rules); i++) {
		uint32_t got = verdict(&p, nr_of(plain_rules[i].name), 0, 0);
		if (got != expected_action(plain_rules[i].errnum))
			fail_msg("%s: action 0x%x", plain_rules[i].name, got);
	}
	prog_free(&p);
}

/* Calls that exist only on x86 are refused where they exist. */
static void test_bpf_x86_only_rules(void **state)
{
	if (native_arch() != SCMP_ARCH_X86_64) {
		print_message("# skipped: not x86_64\n");
		return;
	}
	struct prog p = load_prog(&deflt);
	const char *names[] = {"modify_ldt", "iopl", "ioperm"};
	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		assert_int_equal(verdict(&p, nr_of(names[i]), 0, 0), ERRNO(want(EPERM)));
	prog_free(&p);
}

static void test_bpf_ptrace_allowed_on_request(void **state)
{
	struct prog p = load_prog(&with_ptrace);
	const char *names[] = {"ptrace", "process_vm_readv", "process_vm_writev"};
	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		assert_int_equal(verdict(&p, nr_of(names[i]), 0, 0), ALLOW);
	/* The rest of the filter is unchanged. */
	assert_int_equal(verdict(&p, nr_of("mount"), 0, 0), ERRNO(want(EPERM)));
	prog_free(&p);
}

static void test_bpf_clone_flags(void **state)
{
	struct prog p = load_prog(&deflt);
	const int nr = nr_of("clone");
	const uint64_t ns[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
	                       CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};
	for (size_t i = 0; i < ARRAY_LEN(ns); i++) {
		assert_int_equal(verdict(&p, nr, ns[i], 0), ERRNO(want(EPERM)));
		assert_int_equal(verdict(&p, nr, ns[i] | SIGCHLD, 0), ERRNO(want(EPERM)));
		/* The kernel reads the low 32 bits; garbage above does not hide a flag. */
		assert_int_equal(verdict(&p, nr, ns[i] | 0xffffffff00000000ULL, 0),
		                 ERRNO(want(EPERM)));
	}
	/* fork, pthread_create and vfork-style clones. */
	assert_int_equal(verdict(&p, nr, SIGCHLD, 0), ALLOW);
	assert_int_equal(verdict(&p, nr,
	                         CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
	                                 CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |
	                                 CLONE_CHILD_CLEARTID,
	                         0),
	                 ALLOW);
	assert_int_equal(verdict(&p, nr, CLONE_VM | CLONE_VFORK | SIGCHLD, 0), ALLOW);
	/* 0x80 is CLONE_NEWTIME elsewhere but part of the exit signal byte for clone(2). */
	assert_int_equal(verdict(&p, nr, 0x80, 0), ALLOW);
	prog_free(&p);
}

static void test_bpf_ioctl(void **state)
{
	struct prog p = load_prog(&deflt);
	const int nr = nr_of("ioctl");
	const uint64_t reqs[] = {TIOCSTI, TIOCLINUX};
	for (size_t i = 0; i < ARRAY_LEN(reqs); i++) {
		assert_int_equal(verdict(&p, nr, 0, reqs[i]), ERRNO(want(EPERM)));
		assert_int_equal(verdict(&p, nr, 0, reqs[i] | 0x100000000ULL), ERRNO(want(EPERM)));
		assert_int_equal(verdict(&p, nr, 0, reqs[i] | 0xffffffff00000000ULL),
		                 ERRNO(want(EPERM)));
	}
	const uint64_t fine[] = {TCGETS, TCSETS, TIOCGWINSZ, TIOCSWINSZ, FIONREAD, TIOCSCTTY};
	for (size_t i = 0; i < ARRAY_LEN(fine); i++)
		assert_int_equal(verdict(&p, nr, 0, fine[i]), ALLOW);
	prog_free(&p);
}

static bool low_bits_uniform(uint64_t v)
{
	uint32_t lo = (uint32_t)v;
	return lo == 0 || lo == 0xffffffffu;
}

/* Allowed iff the low 32 bits (all the kernel reads) are the query or PER_LINUX. */
static void test_bpf_personality(void **state)
{
	struct prog p = load_prog(&deflt);
	const int nr = nr_of("personality");
	const uint64_t fixed[] = {0,
	                          0xffffffff,
	                          0xffffffffffffffffULL,
	                          0x100000000ULL,
	                          PER_LINUX32,
	                          ADDR_NO_RANDOMIZE,
	                          READ_IMPLIES_EXEC,
	                          PER_LINUX | UNAME26,
	                          0xfffffffe,
	                          0x7fffffff,
	                          0x80000000,
	                          0x100000000ULL | ADDR_NO_RANDOMIZE};
	for (size_t i = 0; i < ARRAY_LEN(fixed); i++) {
		uint32_t expect = low_bits_uniform(fixed[i]) ? ALLOW : ERRNO(want(EPERM));
		assert_int_equal(verdict(&p, nr, fixed[i], 0), expect);
	}
	/* Every single bit and its complement, then pseudo-random values. */
	for (unsigned b = 0; b < 64; b++) {
		uint64_t v = 1ULL << b;
		uint32_t ev = low_bits_uniform(v) ? ALLOW : ERRNO(want(EPERM));
		uint32_t enot = low_bits_uniform(~v) ? ALLOW : ERRNO(want(EPERM));
		assert_int_equal(verdict(&p, nr, v, 0), ev);
		assert_int_equal(verdict(&p, nr, ~v, 0), enot);
	}
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t e = low_bits_uniform(x) ? ALLOW : ERRNO(want(EPERM));
		assert_int_equal(verdict(&p, nr, x, 0), e);
	}
	prog_free(&p);
}

static bool family_ok(uint64_t fam)
{
	return fam == AF_UNIX || fam == AF_INET || fam == AF_INET6 || fam == AF_NETLINK;
}

static void test_bpf_socket_families(void **state)
{
	struct prog p = load_prog(&deflt);
	const int nr = nr_of("socket"), pair = nr_of("socketpair");
	for (uint64_t fam = 0; fam < 64; fam++) {
		uint32_t e = family_ok(fam) ? ALLOW : ERRNO(want(EAFNOSUPPORT));
		assert_int_equal(verdict(&p, nr, fam, SOCK_STREAM), e);
		uint32_t ep = fam == AF_UNIX ? ALLOW : ERRNO(want(EAFNOSUPPORT));
		assert_int_equal(verdict(&p, pair, fam, SOCK_STREAM), ep);
	}
	/* Stricter than the kernel's int: high garbage is refused, so is a negative family. */
	const uint64_t odd[] = {0x100000000ULL | AF_UNIX, 0xffffffffULL, 0xffffffffffffffffULL,
	                        0x80000000ULL | AF_INET};
	for (size_t i = 0; i < ARRAY_LEN(odd); i++) {
		assert_int_equal(verdict(&p, nr, odd[i], 0), ERRNO(want(EAFNOSUPPORT)));
		assert_int_equal(verdict(&p, pair, odd[i], 0), ERRNO(want(EAFNOSUPPORT)));
	}
	prog_free(&p);
}

/* The mode rules: the bit in the mode argument is refused; open/openat only when they create. */
static void test_bpf_setid_modes(void **state)
{
	struct prog p = load_prog(&deflt);
	const uint32_t no = ERRNO(want(EPERM));
	struct {
		const char *name;
		int nr;
		unsigned mode_arg;
	} calls[] = {{"chmod", -1, 1},  {"fchmod", -1, 1},  {"fchmodat", -1, 2}, {NULL, 452, 2},
		     {"creat", -1, 1},  {"mknod", -1, 1},   {"mknodat", -1, 2}};
	const uint64_t bad[] = {04000, 02000, 06755, 04755 | 0xffffffff00000000ULL, 0102000};
	const uint64_t good[] = {0, 0755, 0644, 01777, 0777, 0xffffffff00000000ULL | 0755};
	for (size_t i = 0; i < ARRAY_LEN(calls); i++) {
		int nr = calls[i].name ? seccomp_syscall_resolve_name(calls[i].name) : calls[i].nr;
		if (nr < 0)
			continue; /* not on this architecture (chmod, creat, mknod on aarch64) */
		for (size_t b = 0; b < ARRAY_LEN(bad); b++) {
			uint64_t a[6] = {0};
			a[calls[i].mode_arg] = bad[b];
			assert_int_equal(verdict6(&p, native_arch(), nr, a), no);
		}
		for (size_t g = 0; g < ARRAY_LEN(good); g++) {
			uint64_t a[6] = {0};
			a[calls[i].mode_arg] = good[g];
			assert_int_equal(verdict6(&p, native_arch(), nr, a), ALLOW);
		}
	}
	struct {
		const char *name;
		unsigned flags_arg, mode_arg;
	} opens[] = {{"open", 1, 2}, {"openat", 2, 3}};
	for (size_t i = 0; i < ARRAY_LEN(opens); i++) {
		int nr = seccomp_syscall_resolve_name(opens[i].name);
		if (nr < 0)
			continue;
		uint64_t a[6] = {0};
		a[opens[i].flags_arg] = O_WRONLY | O_CREAT | O_TRUNC;
		a[opens[i].mode_arg] = 04755;
		assert_int_equal(verdict6(&p, native_arch(), nr, a), no);
		a[opens[i].mode_arg] = 02644;
		assert_int_equal(verdict6(&p, native_arch(), nr, a), no);
		a[opens[i].flags_arg] = O_TMPFILE | O_RDWR;
		assert_int_equal(verdict6(&p, native_arch(), nr, a), no);
		a[opens[i].mode_arg] = 0644;
		assert_int_equal(verdict6(&p, native_arch(), nr, a), ALLOW);
		a[opens[i].flags_arg] = O_WRONLY | O_CREAT;
		assert_int_equal(verdict6(&p, native_arch(), nr, a), ALLOW);
		/* no creation: the mode is unused, whatever is in it */
		a[opens[i].flags_arg] = O_RDONLY | O_DIRECTORY;
		a[opens[i].mode_arg] = 06777;
		assert_int_equal(verdict6(&p, native_arch(), nr, a), ALLOW);
	}
	/* mkdir keeps working with the bits (the kernel ignores them there) */
	uint64_t a[6] = {AT_FDCWD, 0, 02755, 0, 0, 0};
	assert_int_equal(verdict6(&p, native_arch(), nr_of("mkdirat"), a), ALLOW);
	const uint64_t none[6] = {0};
	assert_int_equal(verdict6(&p, native_arch(), nr_of("openat2"), none), ERRNO(ENOSYS));
	prog_free(&p);
}

/* A normal build's program holds only our own errnos, whatever test_errno says. */
static void test_bpf_test_errno_ignored(void **state)
{
	const struct seccomp_opts o = {.test_errno = 4000};
	struct prog p = load_prog(&o);
	for (size_t i = 0; i < p.len; i++) {
		const struct sock_filter *f = &p.insns[i];
		if (BPF_CLASS(f->code) != BPF_RET || (f->k & SECCOMP_RET_ACTION_FULL) != ERRNO(0))
			continue;
		uint32_t e = f->k & SECCOMP_RET_DATA;
#ifdef AJ_TEST_BUILD
		assert_true(e == 4000 || e == ENOSYS); /* ENOSYS: clone3 and openat2 only */
#else
		assert_true(e == EPERM || e == ENOSYS || e == EAFNOSUPPORT);
#endif
	}
	prog_free(&p);
}

static void test_bpf_null_opts_is_default(void **state)
{
	struct prog p = load_prog(NULL);
	struct prog q = load_prog(&(struct seccomp_opts){0});
	assert_int_equal(p.len, q.len);
	assert_memory_equal(p.insns, q.insns, p.len * sizeof *p.insns);
	assert_int_equal(verdict(&p, nr_of("ptrace"), 0, 0), ERRNO(EPERM));
	prog_free(&p);
	prog_free(&q);
}

/* ---- the memfd handed to bwrap ---- */

static void test_memfd_sealed(void **state)
{
	_cleanup_close_ int fd = build_fd(&deflt);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_size > 0);
	assert_int_equal(st.st_size % (off_t)sizeof(struct sock_filter), 0);
	/* Small enough for the kernel (BPF_MAXINSNS). */
	assert_true(st.st_size / (off_t)sizeof(struct sock_filter) <= BPF_MAXINSNS);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	int seals = fcntl(fd, F_GET_SEALS);
	const int all = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
	assert_int_equal(seals & all, all);
	assert_int_equal(pwrite(fd, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(fd, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), -1);
	assert_int_equal(errno, EPERM);
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(map == MAP_FAILED);
}

static int count_fds(void)
{
	_cleanup_closedir_ DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	int n = 0;
	while (readdir(d))
		n++;
	return n;
}

static void test_no_fd_leak(void **state)
{
	int before = count_fds();
	for (int i = 0; i < 3; i++) {
		int fd = build_fd(&deflt);
		close(fd);
	}
	assert_int_equal(count_fds(), before);
}

/* The kernel caps SECCOMP_RET_ERRNO data at 4095: a test build refuses what it cannot honour,
 * a normal build does not look. */
static void test_test_errno_range(void **state)
{
	const struct seccomp_opts o = {.test_errno = 5000};
	struct err e = {0};
	int fd = -1;
	int rc = seccomp_build_fd(&o, &fd, &e);
#ifdef AJ_TEST_BUILD
	assert_int_equal(rc, -1);
	assert_int_equal(e.errnum, EINVAL);
	assert_int_equal(fd, -1);
#else
	assert_int_equal(rc, 0);
	close(fd);
#endif
}

static struct prog child_prog;

/* Load the exported program the way bwrap does: straight into the kernel. */
static int probe_kernel_loads_export(void)
{
	struct sock_fprog fp = {(unsigned short)child_prog.len, child_prog.insns};
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0)
		return 10000 + errno;
	return probe_unshare();
}

static void test_memfd_program_loads_in_kernel(void **state)
{
	child_prog = load_prog(&deflt);
	/* run_probe with NULL opts: no seccomp_load_self, the probe loads the export itself. */
	struct outcome out = run_probe(NULL, probe_kernel_loads_export);
	assert_int_equal(out.sig, 0);
	assert_int_equal(out.err, want(EPERM));
	prog_free(&child_prog);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ioctl_tiocsti),
		cmocka_unit_test(test_ioctl_tiocsti_high_bits),
		cmocka_unit_test(test_ioctl_tioclinux),
		cmocka_unit_test(test_ioctl_other_allowed),
		cmocka_unit_test(test_namespace_and_mount_calls),
		cmocka_unit_test(test_clone_newuser),
		cmocka_unit_test(test_clone3_and_mount_api_enosys),
		cmocka_unit_test(test_socket_families_refused),
		cmocka_unit_test(test_socket_families_allowed),
		cmocka_unit_test(test_personality),
		cmocka_unit_test(test_ptrace_denied_by_default),
		cmocka_unit_test(test_ptrace_allowed_on_request),
		cmocka_unit_test(test_kernel_surface_calls),
		cmocka_unit_test(test_workload_unaffected),
		cmocka_unit_test_setup_teardown(test_setid_bits_refused, setid_setup, setid_teardown),
		cmocka_unit_test_setup_teardown(test_setid_ordinary_modes_allowed, setid_setup,
						setid_teardown),
		cmocka_unit_test(test_test_errno_ignored_in_normal_build),
		cmocka_unit_test(test_x32_call_not_killed),
		cmocka_unit_test(test_i386_int80_killed),
		cmocka_unit_test(test_bpf_foreign_arch_killed),
		cmocka_unit_test(test_bpf_x32_enosys),
		cmocka_unit_test(test_bpf_plain_rules),
		cmocka_unit_test(test_bpf_x86_only_rules),
		cmocka_unit_test(test_bpf_ptrace_allowed_on_request),
		cmocka_unit_test(test_bpf_clone_flags),
		cmocka_unit_test(test_bpf_ioctl),
		cmocka_unit_test(test_bpf_personality),
		cmocka_unit_test(test_bpf_socket_families),
		cmocka_unit_test(test_bpf_setid_modes),
		cmocka_unit_test(test_bpf_test_errno_ignored),
		cmocka_unit_test(test_bpf_null_opts_is_default),
		cmocka_unit_test(test_memfd_sealed),
		cmocka_unit_test(test_memfd_program_loads_in_kernel),
		cmocka_unit_test(test_no_fd_leak),
		cmocka_unit_test(test_test_errno_range),
	};
	/* clang-format on */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
