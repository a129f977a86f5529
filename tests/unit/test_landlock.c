/* Unit tests for core/landlock.
 *
 * Landlock cannot be undone, so every case that applies it runs in a forked child. The child
 * does not use cmocka's assertions (a failing one would jump back into the runner inside the
 * child): CHECK and friends write one line naming the failed expression to a pipe and _exit; the
 * parent turns that line into the test's failure. A child may instead report "skip" with a
 * reason, printed as a TAP comment (cmocka's skip() prints `not ok # SKIP`, a failure to prove).
 *
 * Every "refused" assertion has a twin that shows the same operation succeeding without the
 * restriction (or with the right granted), so a probe that fails for another reason cannot pass
 * for Landlock's refusal. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "core/landlock.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

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

/* Apply with these writable paths, failing the child with the module's own message. */
static struct landlock_report child_apply(const char *const *w, size_t n, bool scope)
{
	struct landlock_report r = {0};
	struct err e = {0};
	struct landlock_opts o = {.writable = w, .nwritable = n, .scope = scope};
	if (landlock_apply(&o, &r, &e) < 0)
		child_exit(CHILD_FAIL, "landlock_apply: %s: %s: %s", e.what, e.path,
			   strerror(e.errnum));
	if (r.abi == 0)
		SKIP_CHILD("the kernel has no Landlock");
	return r;
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
}

static void run_child(child_fn fn, void *arg)
{
	int rfd;
	pid_t pid = start_child(fn, arg, &rfd);
	finish_child(pid, rfd);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);
	return 0;
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
	base = tmpl;
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
		(void)nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
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
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
