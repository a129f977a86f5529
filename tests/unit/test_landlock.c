/* Unit tests for core/confine/landlock.
 *
 * Landlock cannot be undone, so every case that applies it runs in a forked child. The child
 * does not use cmocka's assertions (a failing one would jump back into the runner inside the
 * child): CHECK and friends write one line naming the failed expression to a pipe and _exit; the
 * parent turns that line into the test's failure. A child may instead report "skip" with a
 * reason, printed as a TAP comment (cmocka's skip() prints `not ok # SKIP`, a failure to prove),
 * and a child that succeeds may leave a line for a TAP comment too (a measurement).
 *
 * Every "refused" assertion has a twin that shows the same operation succeeding without the
 * restriction (or with the right granted), so a probe that fails for another reason cannot pass
 * for Landlock's refusal. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "core/confine/landlock.h"
#include "util/cleanup.h"
#include "util/xalloc.h"
#include "testutil.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The scratch tree: base/a is the writable directory, base/b is not; base/b/r is readable. */
static char *base, *dir_a, *dir_b, *file_r;

/* ---- the child side ---- */

static int report_fd = -1;

__attribute__((format(printf, 2, 3), noreturn)) static void child_exit(int code,
									 const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!write(report_fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
	_exit(code);
}

enum { CHILD_OK = 0, CHILD_FAIL = 1, CHILD_SKIP = 77 };

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			int e_ = errno;                                                     \
			child_exit(CHILD_FAIL, "line %d: CHECK(%s) failed (errno: %s)",     \
				   __LINE__, #cond, strerror(e_));                          \
		}                                                                           \
	} while (0)

/* expr must fail with exactly `want` */
#define CHECK_ERRNO(expr, want)                                                            \
	do {                                                                               \
		errno = 0;                                                                 \
		long r_ = (long)(expr);                                                    \
		int e_ = errno;                                                            \
		if (r_ != -1 || e_ != (want))                                              \
			child_exit(CHILD_FAIL, "line %d: %s: want %s, got %ld (errno: %s)", \
				   __LINE__, #expr, strerror(want), r_, strerror(e_));      \
	} while (0)

#define SKIP_CHILD(...) child_exit(CHILD_SKIP, __VA_ARGS__)

/* Apply these options, failing the child with the module's own message. */
static struct landlock_report child_apply_opts(const struct landlock_opts *o)
{
	struct landlock_report r = {0};
	struct err e = {0};
	if (landlock_apply(o, &r, &e) < 0)
		child_exit(CHILD_FAIL, "landlock_apply: %s: %s: %s", e.what, e.path,
			   strerror(e.errnum));
	if (r.abi == 0)
		SKIP_CHILD("the kernel has no Landlock");
	return r;
}

/* Apply with these writable paths. */
static struct landlock_report child_apply(const char *const *w, size_t n, bool scope)
{
	struct landlock_opts o = {.writable = w, .nwritable = n, .scope = scope};
	return child_apply_opts(&o);
}

static struct landlock_report apply_a(bool scope)
{
	const char *w[] = {dir_a};
	return child_apply(w, 1, scope);
}

static void need_abi(int min, const char *what)
{
	if (landlock_abi() < min)
		SKIP_CHILD("%s needs Landlock ABI >= %d, this kernel has %d", what, min,
			   landlock_abi());
}

static char *in(const char *dir, const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

/* Create (or truncate) a file and write a byte: 0, or -1 with errno. */
static int write_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, "x", 1);
	int saved = errno;
	close(fd);
	errno = saved;
	return n == 1 ? 0 : -1;
}

/* ---- the parent side ---- */

/* cmocka catches these to report a crash; in a child they must kill it, or the child would
 * jump back into the runner and carry on as a second copy of it. */
static void default_crash_signals(void)
{
	const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGSYS, SIGABRT};
	for (size_t i = 0; i < ARRAY_LEN(sigs); i++)
		(void)signal(sigs[i], SIG_DFL);
}

typedef void (*child_fn)(void *arg);

/* Start fn in a child with its report pipe; *rfd gets the read end. */
static pid_t start_child(child_fn fn, void *arg, int *rfd)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fflush(NULL); /* or the child's exit could print the runner's buffered output twice */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1];
		default_crash_signals();
		fn(arg);
		_exit(CHILD_OK);
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

/* Wait for the child and turn its report into the test's outcome. */
static void finish_child(pid_t pid, int rfd)
{
	char msg[1024];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof msg - 1 && (n = read(rfd, msg + len, sizeof msg - 1 - len)) > 0)
		len += (size_t)n;
	msg[len] = '\0';
	close(rfd);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("child killed by signal %d %s", WTERMSIG(status), msg);
	if (WEXITSTATUS(status) == CHILD_SKIP) {
		printf("# skipped: %s\n", msg);
		return;
	}
	if (WEXITSTATUS(status) != CHILD_OK)
		fail_msg("%s", msg[0] ? msg : "child failed without a message");
	if (msg[0])
		printf("# %s\n", msg);
}

static void run_child(child_fn fn, void *arg)
{
	int rfd;
	pid_t pid = start_child(fn, arg, &rfd);
	finish_child(pid, rfd);
}

static int group_setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char *tmpl = xasprintf("%s/aj-landlock-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		printf("# cannot create a directory like %s: %s\n", tmpl, strerror(errno));
		free(tmpl);
		return -1;
	}
	/* the read-deny tests walk from "/" and refuse a symlink on the way (TMPDIR may be one) */
	base = realpath(tmpl, NULL);
	free(tmpl);
	if (!base)
		return -1;
	dir_a = in(base, "a");
	dir_b = in(base, "b");
	file_r = in(dir_b, "r");
	if (mkdir(dir_a, 0700) < 0 || mkdir(dir_b, 0700) < 0 || write_file(file_r) < 0)
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	if (base)
		(void)test_rm_tree(base);
	free(base);
	free(dir_a);
	free(dir_b);
	free(file_r);
	return 0;
}

/* ---- ABI and report ---- */

static void test_abi_matches_syscall(void **state)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0UL, 1U /* _VERSION */);
	if (v < 0) {
		assert_true(errno == ENOSYS || errno == EOPNOTSUPP);
		assert_int_equal(landlock_abi(), 0);
		printf("# skipped: the kernel has no Landlock (%s)\n", strerror(errno));
		return;
	}
	assert_true(v >= 1);
	assert_int_equal(landlock_abi(), v);
}

static void child_report_scoped(void *arg)
{
	/* Usually the runner is not no_new_privs yet, and landlock_apply must set it; under a
	 * parent that already set it, only the end state can be checked. */
	int before = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	CHECK(before == 0 || before == 1);
	struct landlock_report r = apply_a(true);
	CHECK(r.abi == landlock_abi());
	CHECK(r.fs_applied);
	CHECK(r.scoped == (r.abi >= 6));
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
}

static void child_report_unscoped(void *arg)
{
	struct landlock_report r = apply_a(false);
	CHECK(r.abi == landlock_abi());
	CHECK(r.fs_applied);
	CHECK(!r.scoped);
	CHECK(!r.read_denied);
}

static void test_report(void **state)
{
	run_child(child_report_scoped, NULL);
	run_child(child_report_unscoped, NULL);
}

/* NULL options and a NULL report are accepted: nothing writable but the devices. */
static void child_null_args(void *arg)
{
	struct err e = {0};
	if (landlock_abi() == 0)
		SKIP_CHILD("the kernel has no Landlock");
	CHECK(landlock_apply(NULL, NULL, &e) == 0);
	char *f = in(dir_a, "null-args");
	CHECK_ERRNO(write_file(f), EACCES);
	CHECK(write_file("/dev/null") == 0);
	free(f);
}

static void test_null_args(void **state) { run_child(child_null_args, NULL); }

/* ---- the writable view ---- */

/* Control for the refusals below: the same write outside A, with no Landlock, succeeds. */
static void child_write_b_unrestricted(void *arg)
{
	char *f = in(dir_b, "control");
	CHECK(write_file(f) == 0);
	CHECK(unlink(f) == 0);
	free(f);
}

static void test_negative_control(void **state) { run_child(child_write_b_unrestricted, NULL); }

static void child_write_confined(void *arg)
{
	char *a_f = in(dir_a, "f"), *a_g = in(dir_a, "g"), *a_d = in(dir_a, "d");
	char *a_l = in(dir_a, "l"), *a_p = in(dir_a, "p"), *b_new = in(dir_b, "new");
	char *b_d = in(dir_b, "d"), *b_l = in(dir_b, "l"), *b_p = in(dir_b, "p");
	char *b_f = in(dir_b, "f"), *a_df = in(a_d, "f");
	apply_a(false);

	/* inside A: everything a build or an editor does */
	CHECK(write_file(a_f) == 0);
	CHECK(mkdir(a_d, 0700) == 0);
	CHECK(symlink("f", a_l) == 0);
	CHECK(mkfifo(a_p, 0600) == 0);
	CHECK(truncate(a_f, 0) == 0);
	CHECK(rename(a_f, a_g) == 0);
	if (landlock_abi() >= 2) { /* ABI 1 refuses every cross-directory rename (EXDEV) */
		CHECK(rename(a_g, a_df) == 0);
		CHECK(rename(a_df, a_g) == 0);
	}
	CHECK(unlink(a_l) == 0 && unlink(a_p) == 0 && rmdir(a_d) == 0);

	/* outside A: reading works, no kind of write does */
	char c;
	int rd = open(file_r, O_RDONLY | O_CLOEXEC);
	CHECK(rd >= 0 && read(rd, &c, 1) == 1 && c == 'x');
	close(rd);
	CHECK_ERRNO(write_file(b_new), EACCES);
	CHECK_ERRNO(open(file_r, O_WRONLY | O_CLOEXEC), EACCES);
	CHECK_ERRNO(mkdir(b_d, 0700), EACCES);
	CHECK_ERRNO(symlink("r", b_l), EACCES);
	CHECK_ERRNO(mkfifo(b_p, 0600), EACCES);
	CHECK_ERRNO(unlink(file_r), EACCES);
	if (landlock_abi() >= 3)
		CHECK_ERRNO(truncate(file_r, 0), EACCES);
	/* moving a file out of A needs MAKE_REG on B (and REFER): EACCES prevails over EXDEV */
	CHECK_ERRNO(rename(a_g, b_f), EACCES);
	CHECK_ERRNO(link(a_g, b_f), EACCES);
	CHECK(access(b_f, F_OK) < 0 && errno == ENOENT);
	CHECK(unlink(a_g) == 0);
	free(a_f), free(a_g), free(a_d), free(a_l), free(a_p), free(b_new);
	free(b_d), free(b_l), free(b_p), free(b_f), free(a_df);
}

static void test_write_confined(void **state) { run_child(child_write_confined, NULL); }

/* A directory fd opened before the restriction (as a leaked host fd would be) gives no write
 * access: Landlock checks each new open against the domain, whatever the starting point. */
static void child_leaked_dirfd(void *arg)
{
	int opath = open(dir_b, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int rdonly = open(dir_b, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(opath >= 0 && rdonly >= 0);
	apply_a(false);
	CHECK_ERRNO(openat(opath, "x", O_CREAT | O_WRONLY | O_CLOEXEC, 0600), EACCES);
	CHECK_ERRNO(openat(rdonly, "x", O_CREAT | O_WRONLY | O_CLOEXEC, 0600), EACCES);
	CHECK_ERRNO(openat(opath, "r", O_WRONLY | O_CLOEXEC), EACCES);
	CHECK_ERRNO(mkdirat(opath, "d", 0700), EACCES);
	CHECK_ERRNO(unlinkat(opath, "r", 0), EACCES);
	/* the same fd still reads: the refusal is about writing, not about the fd */
	int fd = openat(opath, "r", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
}

static void test_leaked_dirfd(void **state) { run_child(child_leaked_dirfd, NULL); }

/* The documented limit, kept visible: a file already open for writing stays writable (which
 * is why __init closes every inherited fd before anything else). */
static void child_open_file_kept(void *arg)
{
	char *f = in(dir_b, "open-before");
	int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	apply_a(false);
	CHECK(write(fd, "y", 1) == 1);
	close(fd);
	CHECK_ERRNO(open(f, O_WRONLY | O_CLOEXEC), EACCES);
	free(f);
}

static void test_open_file_kept(void **state)
{
	run_child(child_open_file_kept, NULL);
	char *f = in(dir_b, "open-before");
	(void)unlink(f);
	free(f);
}

/* Missing paths are skipped; the rest of the list still applies. */
static void child_missing_skipped(void *arg)
{
	char *gone = in(base, "does-not-exist");
	char *under_file = in(file_r, "x"); /* ENOTDIR: cannot exist either */
	const char *w[] = {gone, "/nonexistent/agentjail/deep", under_file, dir_a};
	struct landlock_report r = child_apply(w, ARRAY_LEN(w), false);
	CHECK(r.fs_applied);
	char *a_f = in(dir_a, "m"), *b_f = in(dir_b, "m");
	CHECK(write_file(a_f) == 0 && unlink(a_f) == 0);
	CHECK_ERRNO(write_file(b_f), EACCES);
	free(gone), free(under_file), free(a_f), free(b_f);
}

static void test_missing_skipped(void **state) { run_child(child_missing_skipped, NULL); }

/* A writable regular file gets the file rights only (a directory right would be EINVAL). */
static void child_file_writable(void *arg)
{
	const char *w[] = {file_r};
	child_apply(w, 1, false);
	CHECK(write_file(file_r) == 0);
	if (landlock_abi() >= 3)
		CHECK(truncate(file_r, 1) == 0);
	char *other = in(dir_b, "other");
	CHECK_ERRNO(write_file(other), EACCES);
	CHECK_ERRNO(unlink(file_r), EACCES);
	free(other);
}

static void test_file_writable(void **state) { run_child(child_file_writable, NULL); }

/* A bad entry fails the whole call, names the path, and restricts nothing. */
static void child_errors(void *arg)
{
	if (landlock_abi() == 0)
		SKIP_CHILD("the kernel has no Landlock");
	struct err e = {0};
	struct landlock_report r = {0};
	const char *rel[] = {dir_a, "relative/dir"};
	struct landlock_opts o = {.writable = rel, .nwritable = 2};
	CHECK(landlock_apply(&o, &r, &e) == -1);
	CHECK(e.errnum == EINVAL && strcmp(e.path, "relative/dir") == 0 && e.what[0]);
	CHECK(!r.fs_applied && !r.scoped && r.abi == landlock_abi());

	char *longp = xmalloc(PATH_MAX + 16);
	longp[0] = '/';
	memset(longp + 1, 'a', PATH_MAX + 8);
	longp[PATH_MAX + 9] = '\0';
	const char *lp[] = {longp};
	o = (struct landlock_opts){.writable = lp, .nwritable = 1};
	memset(&e, 0, sizeof e);
	CHECK(landlock_apply(&o, &r, &e) == -1);
	CHECK(e.errnum == ENAMETOOLONG && strncmp(e.path, "/aaaa", 5) == 0);

	const char *nul[] = {NULL};
	o = (struct landlock_opts){.writable = nul, .nwritable = 1};
	CHECK(landlock_apply(&o, &r, &e) == -1 && e.errnum == EINVAL);

	/* nothing was enforced by the failed calls */
	char *f = in(dir_b, "after-error");
	CHECK(write_file(f) == 0 && unlink(f) == 0);
	free(f);
	free(longp);
}

static void test_errors(void **state) { run_child(child_errors, NULL); }

/* ---- devices and terminals ---- */

static void child_devices(void *arg)
{
	/* what a shell does with `>/dev/null`: O_TRUNC needs the TRUNCATE right (ABI 3) */
	int tty_before = open("/dev/tty", O_WRONLY | O_CLOEXEC);
	int tty_errno = tty_before < 0 ? errno : 0;
	if (tty_before >= 0)
		close(tty_before);
	apply_a(false);
	CHECK(write_file("/dev/null") == 0);
	int fd = open("/dev/zero", O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
	fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
	/* /dev/tty answers as before (ENXIO without a controlling terminal), never EACCES */
	fd = open("/dev/tty", O_WRONLY | O_CLOEXEC);
	CHECK((fd >= 0 ? 0 : errno) == tty_errno);
	if (fd >= 0)
		close(fd);
	/* a device that is not on the list is refused */
	if (access("/dev/urandom", F_OK) == 0)
		CHECK_ERRNO(open("/dev/urandom", O_WRONLY | O_CLOEXEC), EACCES);
}

static void test_devices(void **state) { run_child(child_devices, NULL); }

/* Open a pty pair: master and slave. */
static void open_pty(int *m, int *s)
{
	*m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	CHECK(*m >= 0);
	CHECK(grantpt(*m) == 0 && unlockpt(*m) == 0);
	const char *name = ptsname(*m);
	CHECK(name != NULL);
	*s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	CHECK(*s >= 0);
}

static void check_winsize(int m, int s)
{
	struct winsize ws = {.ws_row = 42, .ws_col = 137};
	CHECK(ioctl(m, TIOCSWINSZ, &ws) == 0);
	struct winsize got = {0};
	CHECK(ioctl(s, TIOCGWINSZ, &got) == 0);
	CHECK(got.ws_row == 42 && got.ws_col == 137);
	struct termios t;
	CHECK(tcgetattr(s, &t) == 0 && tcsetattr(s, TCSANOW, &t) == 0);
}

static void child_tty(void *arg)
{
	int m, s;
	open_pty(&m, &s); /* before: the terminal __init inherits */
	apply_a(false);
	check_winsize(m, s);
	close(m);
	close(s);
	/* after: an agent that starts its own pty (a terminal emulator, `script`, tmux) */
	open_pty(&m, &s);
	check_winsize(m, s);
	close(m);
	close(s);
}

static void test_tty(void **state) { run_child(child_tty, NULL); }

/* `cmd > /dev/stdout` reopens fd 1 through /proc/self/fd: a pipe stays writable. */
static void child_pipe_reopen(void *arg)
{
	int p[2];
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	apply_a(false);
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", p[1]);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, "z", 1) == 1);
	char c = 0;
	CHECK(read(p[0], &c, 1) == 1 && c == 'z');
	close(fd);
}

static void test_pipe_reopen(void **state) { run_child(child_pipe_reopen, NULL); }

/* ---- scoping: abstract Unix sockets ---- */

static void abstract_addr(const char *name, struct sockaddr_un *sa, socklen_t *len)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t n = strlen(name);
	memcpy(sa->sun_path + 1, name, n); /* sun_path[0] == '\0': the abstract namespace */
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static int abstract_listen(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len;
	abstract_addr(name, &sa, &len);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 4) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* 0 when connected, -1 with errno. */
static int abstract_connect(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len;
	abstract_addr(name, &sa, &len);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int r = connect(fd, (struct sockaddr *)&sa, len);
	int saved = errno;
	close(fd);
	errno = saved;
	return r;
}

struct sock_case {
	const char *name;
	bool scope;
};

static void child_abstract_outside(void *arg)
{
	const struct sock_case *c = arg;
	apply_a(c->scope);
	if (!c->scope) {
		CHECK(abstract_connect(c->name) == 0); /* control: reachable without scoping */
		return;
	}
	need_abi(6, "abstract Unix socket scoping");
	CHECK_ERRNO(abstract_connect(c->name), EPERM);
}

static char *unique_name(const char *what)
{
	static unsigned n;
	return xasprintf("agentjail-test-landlock-%s-%d-%u", what, (int)getpid(), n++);
}

static void test_abstract_outside_refused(void **state)
{
	char *name = unique_name("host");
	int l = abstract_listen(name); /* "the host's" socket: created outside the domain */
	assert_true(l >= 0);
	struct sock_case unscoped = {name, false}, scoped = {name, true};
	run_child(child_abstract_outside, &unscoped);
	run_child(child_abstract_outside, &scoped);
	close(l);
	free(name);
}

/* Sockets created inside the domain stay usable inside it, across a fork. */
static void child_abstract_inside(void *arg)
{
	apply_a(true);
	need_abi(6, "abstract Unix socket scoping");
	const char *name = arg;
	int l = abstract_listen(name);
	CHECK(l >= 0);
	CHECK(abstract_connect(name) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(abstract_connect(name) == 0 ? 0 : 1);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(l);
}

static void test_abstract_inside_allowed(void **state)
{
	char *name = unique_name("jail");
	run_child(child_abstract_inside, name);
	free(name);
}

/* ---- scoping: signals ---- */

/* The restricted child plays __init: it cannot signal the runner (outside the domain, like a
 * host process seen through a shared pid namespace) but can signal and kill what it forks
 * after restricting itself, and that grandchild can signal it back. */
static void child_signals(void *arg)
{
	bool scope = *(const bool *)arg;
	apply_a(scope);
	if (!scope) {
		CHECK(kill(getppid(), 0) == 0); /* control: reachable without scoping */
		return;
	}
	need_abi(6, "signal scoping");
	CHECK_ERRNO(kill(getppid(), 0), EPERM);
	pid_t me = getpid();
	pid_t gc = fork();
	CHECK(gc >= 0);
	if (gc == 0) {
		if (kill(me, 0) != 0) /* the command reaching its init */
			_exit(3);
		pause();
		_exit(4);
	}
	CHECK(kill(gc, 0) == 0);
	CHECK(kill(gc, SIGTERM) == 0);
	int st;
	CHECK(waitpid(gc, &st, 0) == gc);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
}

static void test_signals(void **state)
{
	bool off = false, on = true;
	run_child(child_signals, &off);
	run_child(child_signals, &on);
}

/* The host (outside) can still signal into the jail: scoping restricts senders in the domain. */
static void child_wait_for_term(void *arg)
{
	apply_a(true);
	int sync_fd = *(const int *)arg;
	CHECK(write(sync_fd, "r", 1) == 1);
	pause();
	child_exit(CHILD_FAIL, "SIGTERM did not arrive");
}

static void test_signal_from_outside(void **state)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	int rfd;
	pid_t pid = start_child(child_wait_for_term, &p[1], &rfd);
	close(p[1]);
	char c;
	ssize_t n = read(p[0], &c, 1);
	close(p[0]);
	if (n != 1) { /* the child skipped or failed before restricting: let it explain */
		finish_child(pid, rfd);
		return;
	}
	assert_int_equal(kill(pid, SIGTERM), 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	close(rfd);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
}

/* ---- the read-deny list ---- */

/* A fake root's worth of files, one per test (one of them rewrites it):
 *   etc/{passwd 0644, shadow 0600, shadow-hl (a hard link of shadow), passwd-sl and shadow-sl
 *   (symlinks to them), ssl/certs/a.pem, ssl/private/key}, usr/bin/x, work/ (the writable one).
 * etc/missing, etc/later and etc/ssl/certs/b.pem are only named: the parent creates them
 * while a child is restricted. The deny lists hold real absolute paths, since the rules are
 * computed from "/". */
struct tree {
	char *root, *etc, *passwd, *shadow, *shadow_hl, *passwd_sl, *shadow_sl, *certs, *pem;
	char *private_dir, *key, *x, *work, *missing, *later, *pem_later;
};

/* Create a file holding `text`, with this mode whatever the umask. */
static int put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	bool ok = write(fd, text, n) == (ssize_t)n && fchmod(fd, mode) == 0;
	return close(fd) == 0 && ok ? 0 : -1;
}

static void make_tree(struct tree *t, const char *name)
{
	t->root = in(base, name);
	t->etc = in(t->root, "etc");
	t->passwd = in(t->etc, "passwd");
	t->shadow = in(t->etc, "shadow");
	t->shadow_hl = in(t->etc, "shadow-hl");
	t->passwd_sl = in(t->etc, "passwd-sl");
	t->shadow_sl = in(t->etc, "shadow-sl");
	t->certs = in(t->etc, "ssl/certs");
	t->pem = in(t->certs, "a.pem");
	t->private_dir = in(t->etc, "ssl/private");
	t->key = in(t->private_dir, "key");
	t->x = in(t->root, "usr/bin/x");
	t->work = in(t->root, "work");
	t->missing = in(t->etc, "missing");
	t->later = in(t->etc, "later");
	t->pem_later = in(t->certs, "b.pem");
	char *ssl = in(t->etc, "ssl"), *usr = in(t->root, "usr"), *bin = in(usr, "bin");
	const char *dirs[] = {t->root, t->etc, ssl, t->certs, t->private_dir, usr, bin, t->work};
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++)
		assert_int_equal(mkdir(dirs[i], 0755), 0);
	assert_int_equal(put(t->passwd, "root:x:0:0::/root:/bin/sh\n", 0644), 0);
	assert_int_equal(put(t->shadow, "old", 0600), 0);
	assert_int_equal(put(t->pem, "cert", 0644), 0);
	assert_int_equal(put(t->key, "key", 0600), 0);
	assert_int_equal(put(t->x, "#!/bin/sh\n", 0755), 0);
	assert_int_equal(link(t->shadow, t->shadow_hl), 0);
	assert_int_equal(symlink("passwd", t->passwd_sl), 0);
	assert_int_equal(symlink("shadow", t->shadow_sl), 0);
	free(ssl), free(usr), free(bin);
}

static void free_tree(struct tree *t)
{
	char **all[] = {&t->root, &t->etc, &t->passwd, &t->shadow, &t->shadow_hl, &t->passwd_sl,
			&t->shadow_sl, &t->certs, &t->pem, &t->private_dir, &t->key, &t->x,
			&t->work, &t->missing, &t->later, &t->pem_later};
	for (size_t i = 0; i < ARRAY_LEN(all); i++) {
		free(*all[i]);
		*all[i] = NULL;
	}
}

/* Read up to len - 1 bytes of a file into buf (NUL-terminated): the count, or -1 with errno. */
static long read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	int saved = errno;
	close(fd);
	errno = saved;
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* 0 when the file opens and reads (an empty one too), -1 with errno. */
static int can_read(const char *path)
{
	char buf[16];
	return read_text(path, buf, sizeof buf) < 0 ? -1 : 0;
}

/* 1 when the directory lists `name`, 0 when it lists without it, -1 with errno. */
static int list_has(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d)) != NULL)
		found = strcmp(de->d_name, name) == 0;
	closedir(d);
	return found;
}

/* fork + execve /usr/bin/true: its exit status, or -1. */
static int run_true(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *argv[] = {"true", NULL};
		execve("/usr/bin/true", argv, environ);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Apply with the tree's work/ writable and this deny list. */
static struct landlock_report apply_deny(const struct tree *t, const char *const *deny,
					 size_t n)
{
	const char *w[] = {t->work};
	struct landlock_opts o = {.writable = w, .nwritable = 1, .deny_read = deny,
				  .ndeny_read = n};
	return child_apply_opts(&o);
}

static void child_deny_view(void *arg)
{
	const struct tree *t = arg;
	bool hostname = can_read("/etc/hostname") == 0;
	/* the twins of every refusal below: all of it reads before */
	CHECK(can_read(t->shadow) == 0 && can_read(t->shadow_hl) == 0 && can_read(t->key) == 0);
	CHECK(can_read(t->shadow_sl) == 0);
	const char *deny[] = {t->shadow, t->private_dir};
	struct landlock_report r = apply_deny(t, deny, ARRAY_LEN(deny));
	CHECK(r.fs_applied && r.read_denied);

	CHECK(can_read(t->passwd) == 0);
	CHECK_ERRNO(can_read(t->shadow), EACCES);
	CHECK_ERRNO(can_read(t->shadow_hl), EACCES); /* same inode: no rule may sit on it */
	CHECK(can_read(t->passwd_sl) == 0);          /* a symlink is judged by its target */
	CHECK_ERRNO(can_read(t->shadow_sl), EACCES);
	CHECK(list_has(t->etc, "passwd") == 1 && list_has(t->etc, "shadow") == 1);
	CHECK(can_read(t->pem) == 0);
	CHECK_ERRNO(can_read(t->key), EACCES);
	/* the documented limit: a denied directory lists (READ_DIR granted on "/" reaches it) */
	CHECK(list_has(t->private_dir, "key") == 1);
	CHECK(can_read(t->x) == 0);

	/* the writable directory: written, read back, listed; the rest still read-only */
	char *f = in(t->work, "out"), *d = in(t->work, "sub"), *etc_new = in(t->etc, "new");
	char buf[16];
	CHECK(write_file(f) == 0);
	CHECK(read_text(f, buf, sizeof buf) == 1 && buf[0] == 'x');
	CHECK(mkdir(d, 0700) == 0 && list_has(t->work, "sub") == 1);
	CHECK_ERRNO(write_file(etc_new), EACCES);

	/* the system outside the tree: programs run, and the real /etc, /proc and /dev read */
	CHECK(run_true() == 0);
	if (hostname)
		CHECK(can_read("/etc/hostname") == 0);
	CHECK(can_read("/proc/self/status") == 0);
	CHECK(read_text("/dev/zero", buf, 2) == 1);
	CHECK(can_read("/dev/null") == 0 && write_file("/dev/null") == 0);
	free(f), free(d), free(etc_new);
}

static void test_deny_read_view(void **state)
{
	struct tree t;
	make_tree(&t, "view");
	run_child(child_deny_view, &t);
	free_tree(&t);
}

/* The point of it all: the host replaces a denied file the way passwd(1) does while the jail
 * runs. The new inode has no rule, so it stays unreadable. With `mask`, the child first hides
 * the file under /dev/null in its own mount namespace, as the launcher does: the control shows
 * the kernel detaching that mask on the rename (the bug this defends against). */
struct rename_case {
	struct tree t;
	bool deny, mask;
	int ready[2], go[2];
};

/* Hide path under /dev/null in a mount namespace of this process's own (a user namespace
 * too when unprivileged). */
static void own_mount_ns(const char *why)
{
	bool ns = unshare(CLONE_NEWNS) == 0;
	if (!ns && errno == EPERM)
		ns = unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0;
	if (!ns)
		SKIP_CHILD("no mount namespace to %s in: %s", why, strerror(errno));
	CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
}

static void mask_with_dev_null(const char *path)
{
	own_mount_ns("mask a file");
	CHECK(mount("/dev/null", path, NULL, MS_BIND, NULL) == 0);
	char buf[8];
	CHECK(read_text(path, buf, sizeof buf) == 0);
}

static void child_rename(void *arg)
{
	struct rename_case *c = arg;
	const struct tree *t = &c->t;
	close(c->ready[0]);
	close(c->go[1]);
	const char *deny[] = {t->shadow, t->missing};
	if (c->mask)
		mask_with_dev_null(t->shadow);
	apply_deny(t, deny, c->deny ? ARRAY_LEN(deny) : 0);
	if (c->deny)
		CHECK_ERRNO(can_read(t->shadow), EACCES);
	else
		CHECK(can_read(t->shadow) == 0);
	/* the mask's /dev/null lost its device rule's read right (an alias of a denied path);
	 * the rule on /dev still covers it */
	CHECK(can_read("/dev/null") == 0);
	CHECK(write(c->ready[1], "r", 1) == 1);
	char g, buf[16];
	CHECK(read(c->go[0], &g, 1) == 1);

	CHECK(can_read(t->passwd) == 0);
	CHECK(can_read(t->pem_later) == 0); /* new, but beneath a read-allowed directory */
	if (!c->deny) {
		/* the control: without the list, the new file reads (so the test can fail) */
		CHECK(read_text(t->shadow, buf, sizeof buf) == 3 && strcmp(buf, "new") == 0);
		CHECK(can_read(t->later) == 0);
		return;
	}
	CHECK_ERRNO(read_text(t->shadow, buf, sizeof buf), EACCES);
	CHECK_ERRNO(can_read(t->missing), EACCES); /* denied, and created after the start */
	CHECK_ERRNO(can_read(t->later), EACCES);   /* documented: new in a walked directory */
}

/* What passwd(1) and useradd do: write the new file next to it, rename it over. */
static void replace_by_rename(const char *path, const char *text)
{
	char *tmp = xasprintf("%s+", path);
	assert_int_equal(put(tmp, text, 0600), 0);
	assert_int_equal(rename(tmp, path), 0);
	free(tmp);
}

static void run_rename_case(const char *name, bool deny, bool mask)
{
	struct rename_case c = {.deny = deny, .mask = mask};
	make_tree(&c.t, name);
	assert_int_equal(pipe2(c.ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(c.go, O_CLOEXEC), 0);
	int rfd;
	pid_t pid = start_child(child_rename, &c, &rfd);
	close(c.ready[1]);
	close(c.go[0]);
	char ch;
	if (read(c.ready[0], &ch, 1) == 1) { /* else it skipped or failed: let it explain */
		replace_by_rename(c.t.shadow, "new");
		assert_int_equal(put(c.t.missing, "appeared", 0600), 0);
		assert_int_equal(put(c.t.later, "later", 0644), 0);
		assert_int_equal(put(c.t.pem_later, "cert", 0644), 0);
		assert_int_equal(write(c.go[1], "g", 1), 1);
	}
	close(c.ready[0]);
	close(c.go[1]);
	finish_child(pid, rfd);
	free_tree(&c.t);
}

static void test_deny_read_survives_rename(void **state)
{
	run_rename_case("rename-control", false, false);
	run_rename_case("rename", true, false);
	run_rename_case("rename-mask-control", false, true);
	run_rename_case("rename-mask", true, true);
}

/* Denied paths that do not exist cost nothing and deny nothing else; one in /dev makes /dev a
 * walked directory, and the devices and terminals must work all the same. One in a directory
 * the caller cannot list (mode 0400, unprivileged) is no error either: nothing in there gets a
 * rule. */
static void child_deny_missing(void *arg)
{
	const struct tree *t = arg;
	char *nope = in(t->root, "nope/deep"), *locked = in(t->root, "locked/secret");
	const char *deny[] = {t->missing, nope, "/nonexistent/agentjail/x", "/dev/agentjail-none",
			      locked};
	struct landlock_report r = apply_deny(t, deny, ARRAY_LEN(deny));
	CHECK(r.read_denied);
	CHECK(can_read(t->passwd) == 0 && can_read(t->key) == 0);
	/* as root, an entry beside a denied one that others could not read gets no rule (a file
	 * renamed over a secret is made under another name first): shadow (0600) sits in the
	 * walked etc; an unprivileged caller keeps reading its own file */
	if (geteuid() == 0)
		CHECK(can_read(t->shadow) < 0 && errno == EACCES);
	else
		CHECK(can_read(t->shadow) == 0);
	CHECK(list_has(t->etc, "passwd") == 1);
	char buf[4];
	CHECK(can_read("/dev/null") == 0 && write_file("/dev/null") == 0);
	CHECK(read_text("/dev/zero", buf, 2) == 1);
	int m, s;
	open_pty(&m, &s);
	check_winsize(m, s);
	CHECK(write(s, "p", 1) == 1 && read(m, buf, 1) == 1 && buf[0] == 'p');
	close(m);
	close(s);
	free(nope), free(locked);
}

static void test_deny_read_missing(void **state)
{
	struct tree t;
	make_tree(&t, "missing");
	char *locked = in(t.root, "locked"), *secret = in(locked, "secret");
	assert_int_equal(mkdir(locked, 0700), 0);
	assert_int_equal(put(secret, "s", 0600), 0);
	assert_int_equal(chmod(locked, 0400), 0);
	run_child(child_deny_missing, &t);
	assert_int_equal(chmod(locked, 0700), 0); /* or the teardown could not empty it */
	free(locked), free(secret);
	free_tree(&t);
}

/* landlock_apply must fail with errnum on path (NULL: any path) and enforce nothing. */
static void expect_error(int line, const struct landlock_opts *o, int errnum, const char *path)
{
	struct err e = {0};
	struct landlock_report r = {0};
	if (landlock_apply(o, &r, &e) != -1)
		child_exit(CHILD_FAIL, "line %d: landlock_apply accepted it", line);
	if (e.errnum != errnum || (path && strcmp(e.path, path) != 0) || !e.what[0])
		child_exit(CHILD_FAIL, "line %d: want %s on %s, got %s on %s (%s)", line,
			   strerror(errnum), path ? path : "any path", strerror(e.errnum), e.path,
			   e.what);
	if (r.fs_applied || r.read_denied)
		child_exit(CHILD_FAIL, "line %d: the report says something was applied", line);
}

#define EXPECT_ERROR(o, errnum, path) expect_error(__LINE__, (o), (errnum), (path))

/* Deny lists alone. */
static void expect_deny_error(int line, const char *d, int errnum)
{
	const char *deny[] = {d};
	struct landlock_opts o = {.deny_read = deny, .ndeny_read = 1};
	expect_error(line, &o, errnum, d ? d : "(null)");
}

/* A writable path w against a deny list of one: refused, naming w. */
static void expect_conflict(int line, const char *w, const char *d, int errnum)
{
	const char *wr[] = {w}, *deny[] = {d};
	struct landlock_opts o = {.writable = wr, .nwritable = 1, .deny_read = deny,
				  .ndeny_read = 1};
	expect_error(line, &o, errnum, w);
}

static void child_deny_errors(void *arg)
{
	const struct tree *t = arg;
	if (landlock_abi() == 0)
		SKIP_CHILD("the kernel has no Landlock");
	expect_deny_error(__LINE__, "etc/shadow", EINVAL);
	expect_deny_error(__LINE__, NULL, EINVAL);
	expect_deny_error(__LINE__, "/", EINVAL);
	expect_deny_error(__LINE__, "/etc//shadow", EINVAL);
	expect_deny_error(__LINE__, "/etc/ssl/", EINVAL);
	expect_deny_error(__LINE__, "/etc/./shadow", EINVAL);
	expect_deny_error(__LINE__, "/etc/x/../shadow", EINVAL);

	struct landlock_opts o = {.ndeny_read = 1}; /* a count without a list */
	EXPECT_ERROR(&o, EINVAL, NULL);
	const char **many = xcalloc(LANDLOCK_MAX_DENY_READ + 1, sizeof *many);
	for (size_t i = 0; i <= LANDLOCK_MAX_DENY_READ; i++)
		many[i] = t->shadow;
	o = (struct landlock_opts){.deny_read = many, .ndeny_read = LANDLOCK_MAX_DENY_READ + 1};
	EXPECT_ERROR(&o, E2BIG, NULL);

	/* a writable path must stay readable: above, at or below a denied path it cannot */
	expect_conflict(__LINE__, t->etc, t->shadow, EINVAL);
	expect_conflict(__LINE__, t->root, t->shadow, EINVAL);
	expect_conflict(__LINE__, t->shadow, t->shadow, EINVAL);
	expect_conflict(__LINE__, t->key, t->private_dir, EINVAL);
	char *etc_slash = xasprintf("%s/", t->etc);
	expect_conflict(__LINE__, etc_slash, t->shadow, EINVAL);
	/* the same through symlinks (resolved) and a hard link (the same inode as the denied) */
	char *etc_sl = in(t->root, "etc-sl"), *hl = in(t->work, "shadow-hl");
	char *key_sl = in(t->work, "key-sl");
	expect_conflict(__LINE__, etc_sl, t->shadow, EINVAL);
	expect_conflict(__LINE__, key_sl, t->private_dir, EINVAL);
	expect_conflict(__LINE__, hl, t->shadow, EINVAL);
	/* each writable path's every name is resolved, though the one before it shares a prefix
	 * (landlock.c's real_path: work/key is a directory, work/key-sl a symlink; work/priv-sl
	 * a symlink to the denied directory, its key below the denied path) */
	char *key_dir = in(t->work, "key"), *priv_key = in(t->work, "priv-sl/key");
	const char *after_dir[] = {key_dir, key_sl}, *after_work[] = {t->work, priv_key};
	const char *deny_priv[] = {t->private_dir};
	o = (struct landlock_opts){.writable = after_dir, .nwritable = 2, .deny_read = deny_priv,
				   .ndeny_read = 1};
	EXPECT_ERROR(&o, EINVAL, key_sl);
	o.writable = after_work;
	EXPECT_ERROR(&o, EINVAL, priv_key);
	free(key_dir), free(priv_key);

	/* a denied path cannot be walked through a symlink: its rules would land elsewhere */
	char *through = in(etc_sl, "shadow");
	const char *deny[] = {through};
	o = (struct landlock_opts){.deny_read = deny, .ndeny_read = 1};
	EXPECT_ERROR(&o, ELOOP, etc_sl);

	/* nothing was enforced by the failed calls */
	CHECK(can_read(t->shadow) == 0 && can_read(hl) == 0);
	char *f = in(dir_b, "after-deny-error");
	CHECK(write_file(f) == 0 && unlink(f) == 0);
	free(many), free(etc_slash), free(etc_sl), free(hl), free(key_sl), free(through), free(f);
}

static void test_deny_read_errors(void **state)
{
	struct tree t;
	make_tree(&t, "errors");
	char *etc_sl = in(t.root, "etc-sl"), *hl = in(t.work, "shadow-hl");
	char *key_sl = in(t.work, "key-sl");
	assert_int_equal(symlink("etc", etc_sl), 0);
	assert_int_equal(link(t.shadow, hl), 0);
	assert_int_equal(symlink(t.key, key_sl), 0);
	char *key_dir = in(t.work, "key"), *priv_sl = in(t.work, "priv-sl");
	assert_int_equal(mkdir(key_dir, 0755), 0);
	assert_int_equal(symlink(t.private_dir, priv_sl), 0);
	run_child(child_deny_errors, &t);
	free(etc_sl), free(hl), free(key_sl), free(key_dir), free(priv_sl);
	free_tree(&t);
}

/* The directories the denied paths share are looked at once (landlock.c's collect_aliases):
 * each is still known by its inode, as is each denied path. A second mount of etc/ssl/d2
 * (above the second path, named as long as etc/ssl/d1 above the first), of etc/ssl (shared by
 * both) and a hard link of the second path are refused as writable paths, whatever the order
 * of the list; so is d2's mount when the first path stops short (etc/ssl/none does not
 * exist). */
struct shared_dirs {
	struct tree t;
	char *d1, *d2, *s1, *s2, *none, *ssl, *hl, *mnt_d2, *mnt_ssl;
};

static void child_shared_dirs(void *arg)
{
	const struct shared_dirs *c = arg;
	if (landlock_abi() == 0)
		SKIP_CHILD("the kernel has no Landlock");
	own_mount_ns("mount a second view of a directory");
	CHECK(mount(c->d2, c->mnt_d2, NULL, MS_BIND, NULL) == 0);
	CHECK(mount(c->ssl, c->mnt_ssl, NULL, MS_BIND, NULL) == 0);
	const char *lists[][2] = {{c->s1, c->s2}, {c->s2, c->s1}, {c->none, c->s2}};
	for (size_t i = 0; i < ARRAY_LEN(lists); i++) {
		const char *ws[] = {c->mnt_d2, c->mnt_ssl, c->hl};
		for (size_t j = 0; j < ARRAY_LEN(ws); j++) {
			if (i == 2 && j == 1)
				continue; /* etc/ssl is above both lists' paths: covered above */
			const char *wr[] = {ws[j]};
			struct landlock_opts o = {.writable = wr, .nwritable = 1,
						  .deny_read = lists[i], .ndeny_read = 2};
			/* "line" names the case: this line + 100 × the list + the path */
			expect_error(__LINE__ + (int)(100 * i + j), &o, EINVAL, ws[j]);
		}
	}
}

static void test_deny_read_shared_dirs(void **state)
{
	struct shared_dirs c;
	make_tree(&c.t, "shared");
	c.ssl = in(c.t.etc, "ssl");
	c.d1 = in(c.ssl, "d1"), c.d2 = in(c.ssl, "d2");
	c.s1 = in(c.d1, "s1"), c.s2 = in(c.d2, "s2"), c.none = in(c.ssl, "none/s0");
	c.hl = in(c.t.work, "s2-hl");
	c.mnt_d2 = in(c.t.work, "d2-again"), c.mnt_ssl = in(c.t.work, "ssl-again");
	const char *dirs[] = {c.d1, c.d2, c.mnt_d2, c.mnt_ssl};
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++)
		assert_int_equal(mkdir(dirs[i], 0755), 0);
	assert_int_equal(put(c.s1, "one", 0600), 0);
	assert_int_equal(put(c.s2, "two", 0600), 0);
	assert_int_equal(link(c.s2, c.hl), 0);
	run_child(child_shared_dirs, &c);
	char **all[] = {&c.ssl, &c.d1, &c.d2, &c.s1, &c.s2, &c.none, &c.hl, &c.mnt_d2, &c.mnt_ssl};
	for (size_t i = 0; i < ARRAY_LEN(all); i++)
		free(*all[i]);
	free_tree(&c.t);
}

/* Few descriptors allowed (RLIMIT_NOFILE 40) and a denied path among 300 files: the walk
 * keeps the descriptors its rules were put on until it closes them together
 * (landlock.c's defer_close), so it runs out on the way; it closes those and goes on, and the
 * view is the same as with descriptors to spare. */
static void child_few_fds(void *arg)
{
	const char *many = arg;
	if (landlock_abi() == 0)
		SKIP_CHILD("the kernel has no Landlock");
	struct rlimit rl = {40, 40};
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	char *f0 = in(many, "f0"), *f299 = in(many, "f299");
	const char *deny[] = {f0};
	struct landlock_opts o = {.deny_read = deny, .ndeny_read = 1};
	(void)child_apply_opts(&o);
	CHECK(can_read(f299) == 0);
	CHECK_ERRNO(can_read(f0), EACCES);
	free(f0), free(f299);
}

static void test_deny_read_few_fds(void **state)
{
	char *many = in(base, "many");
	assert_int_equal(mkdir(many, 0755), 0);
	for (int i = 0; i < 300; i++) {
		char *f = xasprintf("%s/f%d", many, i);
		assert_int_equal(put(f, "", 0644), 0);
		free(f);
	}
	run_child(child_few_fds, many);
	free(many);
}

/* A denied path in a directory of more entries than the rule budget: refused, not crawled. */
static void child_too_many_rules(void *arg)
{
	const char *big = arg;
	if (landlock_abi() == 0)
		SKIP_CHILD("the kernel has no Landlock");
	char *f0 = in(big, "f0");
	const char *deny[] = {f0};
	struct landlock_opts o = {.deny_read = deny, .ndeny_read = 1};
	EXPECT_ERROR(&o, E2BIG, NULL);
	CHECK(can_read(f0) == 0);
	free(f0);
}

static void test_deny_read_too_many_rules(void **state)
{
	char *big = in(base, "big");
	assert_int_equal(mkdir(big, 0755), 0);
	for (int i = 0; i <= LANDLOCK_MAX_RULES; i++) {
		char *f = xasprintf("%s/f%d", big, i);
		assert_int_equal(put(f, "", 0644), 0);
		free(f);
	}
	run_child(child_too_many_rules, big);
	free(big);
}

/* ---- the real /etc: what __init will do, and what it costs ---- */

/* Secrets a host commonly has, added to the list whether or not they exist here (a missing
 * one costs the listing of its directory, as it would on a real host). */
static const char *const typical_secrets[] = {
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssh/ssh_host_rsa_key",
	"/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key", "/etc/ssl/private",
	"/etc/security/opasswd", "/etc/crypttab", "/etc/subuid-", "/etc/subgid-",
};

enum { MAX_REAL_DENY = 64 };

struct real_etc {
	char *deny[MAX_REAL_DENY];
	size_t n, root_only;
};

static bool listed(const struct real_etc *r, const char *p)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->deny[i], p) == 0)
			return true;
	return false;
}

/* Every entry of /etc that others cannot read (what the launcher masks), then the typical
 * secrets whose directory is a real one (a symlink on the way would be refused, ELOOP). */
static void collect_real_etc(struct real_etc *r)
{
	DIR *d = opendir("/etc");
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d)) != NULL && r->n < MAX_REAL_DENY) {
		char *p = in("/etc", de->d_name);
		struct stat st;
		bool dot = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
		if (!dot && lstat(p, &st) == 0 && !S_ISLNK(st.st_mode) && !(st.st_mode & S_IROTH))
			r->deny[r->n++] = steal_pointer(&p);
		free(p);
	}
	closedir(d);
	r->root_only = r->n;
	for (size_t i = 0; i < ARRAY_LEN(typical_secrets) && r->n < MAX_REAL_DENY; i++) {
		const char *p = typical_secrets[i];
		char *dir = xstrndup(p, (size_t)(strrchr(p, '/') - p));
		struct stat st;
		bool real_dir = lstat(dir, &st) < 0 || S_ISDIR(st.st_mode);
		if (real_dir && !listed(r, p))
			r->deny[r->n++] = xstrdup(p);
		free(dir);
	}
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

struct real_case {
	struct real_etc *r;
	bool deny;
};

static void child_real_etc(void *arg)
{
	const struct real_case *c = arg;
	const struct real_etc *r = c->r;
	bool hostname = can_read("/etc/hostname") == 0;
	size_t readable = 0; /* files this process could read before: root's are the point */
	for (size_t i = 0; i < r->n; i++)
		readable += can_read(r->deny[i]) == 0;
	struct landlock_opts o = {.deny_read = (const char *const *)r->deny,
				  .ndeny_read = c->deny ? r->n : 0};
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct landlock_report rep = child_apply_opts(&o);
	double ms = ms_since(&t0);
	CHECK(rep.read_denied == c->deny);
	if (hostname)
		CHECK(can_read("/etc/hostname") == 0);
	CHECK(can_read("/etc/passwd") == 0);
	CHECK(run_true() == 0);
	if (!c->deny)
		child_exit(CHILD_OK, "landlock_apply without a deny list: %.3f ms", ms);
	for (size_t i = 0; i < r->n; i++) {
		struct stat st;
		if (stat(r->deny[i], &st) == 0 && S_ISREG(st.st_mode))
			CHECK_ERRNO(can_read(r->deny[i]), EACCES);
	}
	child_exit(CHILD_OK,
		   "landlock_apply denying %zu paths (%zu root-only /etc entries, %zu readable "
		   "before, none after): %.3f ms",
		   r->n, r->root_only, readable, ms);
}

static void test_deny_read_real_etc(void **state)
{
	struct real_etc r = {0};
	collect_real_etc(&r);
	struct real_case without = {&r, false}, with = {&r, true};
	run_child(child_real_etc, &without);
	run_child(child_real_etc, &with);
	for (size_t i = 0; i < r.n; i++)
		free(r.deny[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abi_matches_syscall),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_null_args),
		cmocka_unit_test(test_negative_control),
		cmocka_unit_test(test_write_confined),
		cmocka_unit_test(test_leaked_dirfd),
		cmocka_unit_test(test_open_file_kept),
		cmocka_unit_test(test_missing_skipped),
		cmocka_unit_test(test_file_writable),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_tty),
		cmocka_unit_test(test_pipe_reopen),
		cmocka_unit_test(test_abstract_outside_refused),
		cmocka_unit_test(test_abstract_inside_allowed),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_signal_from_outside),
		cmocka_unit_test(test_deny_read_view),
		cmocka_unit_test(test_deny_read_survives_rename),
		cmocka_unit_test(test_deny_read_missing),
		cmocka_unit_test(test_deny_read_errors),
		cmocka_unit_test(test_deny_read_shared_dirs),
		cmocka_unit_test(test_deny_read_few_fds),
		cmocka_unit_test(test_deny_read_too_many_rules),
		cmocka_unit_test(test_deny_read_real_etc),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
