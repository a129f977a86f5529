/* The host side of the jail's terminal. A second pty stands in for the user's terminal, so the
 * tests need no terminal of their own; children play the jail (pty_child_setup, then sh) and the
 * relay is driven with poll the way the launcher drives it. Every test runs under an alarm and
 * every wait has a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "core/jail/pty.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define TEST_SECONDS 5 /* SIGALRM ends a test that hangs */
#define PUMP_MS 3000

/* What a test may leave behind when an assertion jumps out of it: teardown releases it. */
struct fx {
	int outer_master; /* the terminal emulator's end of the "user's terminal" */
	int outer_slave;  /* the "user's terminal" */
	struct pty p;     /* the jail's pty, under test */
	pid_t child;
	int in[2], out[2], std[2];
	struct strbuf seen, seen_std;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	f->outer_master = f->outer_slave = f->p.master = f->p.slave = -1;
	f->in[0] = f->in[1] = f->out[0] = f->out[1] = f->std[0] = f->std[1] = -1;
	f->child = -1;
	*state = f;
	alarm(TEST_SECONDS);
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	pty_restore_unregister();
	if (f->child > 0) {
		/* the child leads its own session: take its process group down with it */
		kill(-f->child, SIGKILL);
		kill(f->child, SIGKILL);
		waitpid(f->child, NULL, 0);
	}
	close_fd(&f->outer_master);
	close_fd(&f->outer_slave);
	pty_close(&f->p);
	for (int i = 0; i < 2; i++) {
		close_fd(&f->in[i]);
		close_fd(&f->out[i]);
		close_fd(&f->std[i]);
	}
	sb_free(&f->seen);
	sb_free(&f->seen_std);
	free(f);
	alarm(0);
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fail_err(const struct err *e)
{
	char buf[2048];
	err_format(e, buf, sizeof buf);
	fail_msg("%s", buf);
}

static void set_size(int fd, unsigned short rows, unsigned short cols)
{
	struct winsize ws = {.ws_row = rows, .ws_col = cols};
	assert_int_equal(ioctl(fd, TIOCSWINSZ, &ws), 0);
}

static void assert_size(int fd, unsigned short rows, unsigned short cols)
{
	struct winsize ws;
	assert_int_equal(ioctl(fd, TIOCGWINSZ, &ws), 0);
	assert_int_equal(ws.ws_row, rows);
	assert_int_equal(ws.ws_col, cols);
}

/* The "user's terminal", 33x101. False when this system has no ptys at all. */
static bool outer_open(struct fx *f)
{
	char name[64];
	f->outer_master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (f->outer_master < 0)
		return false;
	assert_int_equal(grantpt(f->outer_master), 0);
	assert_int_equal(unlockpt(f->outer_master), 0);
	assert_int_equal(ptsname_r(f->outer_master, name, sizeof name), 0);
	f->outer_slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	assert_true(f->outer_slave >= 0);
	set_size(f->outer_slave, 33, 101);
	return true;
}

/* TAP: cmocka's skip() reads as a failure to prove; a comment and a pass do not. */
#define NEED_PTYS(f)                                                                       \
	do {                                                                               \
		if (!outer_open(f)) {                                                      \
			printf("# skipped: no pseudo-terminals: %s\n", strerror(errno));  \
			return;                                                            \
		}                                                                          \
	} while (0)

static void inner_open(struct fx *f, int size_from)
{
	struct err e = {0};
	if (pty_open(&f->p, size_from, &e) < 0)
		fail_err(&e);
	assert_true(f->p.master >= 0 && f->p.slave >= 0);
	assert_non_null(strstr(f->p.name, "/dev/pts/"));
}

static void open_pipe(int fds[2])
{
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
}

/* ---- the jail's stand-in ---- */

struct spawn {
	unsigned which;
	int stdout_fd;   /* >= 0: the child's fd 1 before the pty takes the others (mixed case) */
	bool slave_on_0; /* the slave already sits on fd 0, close-on-exec */
};

static _Noreturn void child_exec(int slave, const struct spawn *o, const char *script)
{
	if (o->stdout_fd >= 0 && dup2(o->stdout_fd, 1) < 0)
		_exit(120);
	if (o->slave_on_0) {
		if (dup3(slave, 0, O_CLOEXEC) < 0)
			_exit(121);
		slave = 0;
	}
	if (pty_child_setup(slave, o->which) < 0)
		_exit(122);
	execl("/bin/sh", "sh", "-c", script, (char *)NULL);
	_exit(127);
}

static void spawn(struct fx *f, const struct spawn *o, const char *script)
{
	/* buffered TAP output must not be written twice by a child that exits */
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child_exec(f->p.slave, o, script);
	f->child = pid;
	/* as the launcher must: a slave fd left open here and the master never reports the end */
	close_fd(&f->p.slave);
}

static int wait_child(struct fx *f)
{
	int st;
	assert_int_equal(waitpid(f->child, &st, 0), f->child);
	f->child = -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- driving the relay ---- */

struct pump {
	struct pty_relay r;
	int *feed_fd;       /* fed from feed as it becomes writable; NULL: nothing to feed */
	const char *feed;
	size_t feed_len;
	bool close_feed;    /* close *feed_fd once fed: EOF for a pipe */
	int watch_fd;       /* read into *seen; -1: nothing to watch */
	size_t watch_chunk; /* bytes per read: small ones keep out_fd full */
	struct strbuf *seen;
};

static void pump_feed(struct pump *pm)
{
	size_t n = pm->feed_len < PIPE_BUF ? pm->feed_len : PIPE_BUF;
	ssize_t k = n ? write(*pm->feed_fd, pm->feed, n) : 0;
	assert_true(k >= 0 || errno == EINTR || errno == EAGAIN);
	if (k > 0) {
		pm->feed += k;
		pm->feed_len -= (size_t)k;
	}
	if (pm->feed_len == 0 && pm->close_feed)
		close_fd(pm->feed_fd);
}

static void pump_watch(struct pump *pm)
{
	char buf[4096];
	size_t n = pm->watch_chunk < sizeof buf ? pm->watch_chunk : sizeof buf;
	ssize_t k = read(pm->watch_fd, buf, n);
	if (k > 0)
		sb_addn(pm->seen, buf, (size_t)k);
	else if (k == 0 || errno == EIO)
		pm->watch_fd = -1;
}

/* Until the jail's side is finished (master EOF, all output written). False on timeout. */
static bool pump_run(struct pump *pm, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	if (pm->feed_fd && pm->feed_len == 0 && pm->close_feed)
		close_fd(pm->feed_fd);
	while (!pty_relay_done(&pm->r)) {
		long long left = end - now_ms();
		if (left <= 0)
			return false;
		struct pollfd pfd[PTY_RELAY_NFDS + 2];
		nfds_t n;
		pty_relay_fill_pollfds(&pm->r, pfd, &n);
		assert_int_equal(n, PTY_RELAY_NFDS);
		bool feeding = pm->feed_fd && *pm->feed_fd >= 0 && pm->feed_len;
		pfd[n] = (struct pollfd){.fd = feeding ? *pm->feed_fd : -1, .events = POLLOUT};
		pfd[n + 1] = (struct pollfd){.fd = pm->watch_fd, .events = POLLIN};
		int rc = poll(pfd, n + 2, (int)left);
		if (rc < 0 && errno == EINTR)
			continue;
		assert_true(rc >= 0);
		struct err e = {0};
		if (pty_relay_handle(&pm->r, pfd, n, &e) < 0)
			fail_err(&e);
		if (pfd[n].revents)
			pump_feed(pm);
		if (pfd[n + 1].revents)
			pump_watch(pm);
	}
	return true;
}

/* What is still on its way through fd: until EOF/EIO, or nothing for quiet_ms. */
static void collect_rest(int fd, struct strbuf *sb, int quiet_ms)
{
	char buf[4096];
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int rc = poll(&p, 1, quiet_ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return;
		ssize_t k = read(fd, buf, sizeof buf);
		if (k <= 0)
			return;
		sb_addn(sb, buf, (size_t)k);
	}
}

static void pump_init(struct pump *pm, int in_fd, int out_fd, int master, int watch,
		      struct strbuf *seen)
{
	memset(pm, 0, sizeof *pm);
	pty_relay_init(&pm->r, in_fd, out_fd, master);
	pm->watch_fd = watch;
	pm->watch_chunk = 4096;
	pm->seen = seen;
}

/* A pty session whose output goes to the out pipe; returns the child's exit status. */
static int run_piped(struct fx *f, const struct spawn *o, const char *script, int in_fd,
		     const char *feed, size_t feed_len, size_t chunk)
{
	struct pump pm;
	spawn(f, o, script);
	pump_init(&pm, in_fd, f->out[1], f->p.master, f->out[0], &f->seen);
	pm.watch_chunk = chunk;
	if (feed) {
		pm.feed_fd = &f->in[1];
		pm.feed = feed;
		pm.feed_len = feed_len;
		pm.close_feed = true;
	}
	assert_true(pump_run(&pm, PUMP_MS));
	assert_true(pm.r.master_eof);
	close_fd(&f->out[1]);
	collect_rest(f->out[0], &f->seen, 1000);
	return wait_child(f);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

static char *strip_cr(const char *s)
{
	char *out = xstrdup(s), *w = out;
	for (; *s; s++)
		if (*s != '\r')
			*w++ = *s;
	*w = '\0';
	return out;
}

static char *seq_text(int last)
{
	struct strbuf b = STRBUF_INIT;
	for (int i = 1; i <= last; i++)
		sb_addf(&b, "%d\n", i);
	return sb_steal(&b);
}

static void assert_termios_equal(const struct termios *a, const struct termios *b)
{
	assert_int_equal(a->c_iflag, b->c_iflag);
	assert_int_equal(a->c_oflag, b->c_oflag);
	assert_int_equal(a->c_cflag, b->c_cflag);
	assert_int_equal(a->c_lflag, b->c_lflag);
	assert_memory_equal(a->c_cc, b->c_cc, sizeof a->c_cc);
	assert_int_equal(cfgetispeed(a), cfgetispeed(b));
	assert_int_equal(cfgetospeed(a), cfgetospeed(b));
}

static void assert_raw(int fd)
{
	struct termios t;
	assert_int_equal(tcgetattr(fd, &t), 0);
	assert_int_equal(t.c_lflag & (ICANON | ECHO | ISIG | IEXTEN), 0);
	assert_int_equal(t.c_iflag & (ICRNL | IXON | ISTRIP), 0);
	assert_int_equal(t.c_oflag & OPOST, 0);
	assert_int_equal(t.c_cflag & CSIZE, CS8);
	assert_int_equal(t.c_cc[VMIN], 1);
	assert_int_equal(t.c_cc[VTIME], 0);
}

/* ---- tests ---- */

/* The launcher's path: the jail sees the user's size, its own /dev/pts, and typed input. */
static void test_session(void **state)
{
	struct fx *f = *state;
	struct termios saved;
	struct err e = {0};
	struct pump pm;
	NEED_PTYS(f);
	inner_open(f, f->outer_slave); /* before raw mode: the jail gets the cooked settings */
	if (pty_raw_enter(f->outer_slave, &saved, &e) < 0)
		fail_err(&e);

	spawn(f, &(struct spawn){.which = PTY_ALL, .stdout_fd = -1},
	      "stty size; tty; : </dev/tty && echo ctty; read x; echo got:$x");
	pump_init(&pm, f->outer_slave, f->outer_slave, f->p.master, f->outer_master, &f->seen);
	/* Enter sends CR; the jail's ICRNL, copied from the user's settings, makes it a newline */
	pm.feed_fd = &f->outer_master;
	pm.feed = "hello\r";
	pm.feed_len = 6;
	assert_true(pump_run(&pm, PUMP_MS));
	collect_rest(f->outer_master, &f->seen, 100);
	assert_int_equal(wait_child(f), 0);

	const char *out = sb_str(&f->seen);
	assert_non_null(strstr(out, "33 101\r\n"));
	assert_non_null(strstr(out, "/dev/pts/"));
	assert_non_null(strstr(out, "ctty\r\n")); /* /dev/tty opens: the pty is its terminal */
	assert_non_null(strstr(out, "got:hello\r\n"));
	assert_int_equal(pty_raw_restore(f->outer_slave, &saved), 0);
}

/* Size and settings are copied at open, and the size again on a resize (SIGWINCH). */
static void test_winsize_and_settings(void **state)
{
	struct fx *f = *state;
	struct termios t;
	NEED_PTYS(f);
	assert_int_equal(tcgetattr(f->outer_slave, &t), 0);
	t.c_cc[VERASE] = 0x08; /* a user whose erase key sends ^H */
	t.c_iflag |= IUTF8;
	assert_int_equal(tcsetattr(f->outer_slave, TCSANOW, &t), 0);

	inner_open(f, f->outer_slave);
	assert_size(f->p.slave, 33, 101);
	assert_int_equal(tcgetattr(f->p.slave, &t), 0);
	assert_int_equal(t.c_cc[VERASE], 0x08);
	assert_true(t.c_iflag & IUTF8);

	set_size(f->outer_slave, 50, 132);
	assert_int_equal(pty_copy_winsize(f->outer_slave, f->p.master), 0);
	assert_size(f->p.slave, 50, 132);

	open_pipe(f->in);
	assert_int_equal(pty_copy_winsize(f->in[0], f->p.master), -1);
	assert_int_equal(errno, ENOTTY);
	assert_size(f->p.slave, 50, 132);
}

/* Not from a terminal: the kernel's defaults, and no error. */
static void test_open_without_terminal(void **state)
{
	struct fx *f = *state;
	open_pipe(f->in);
	inner_open(f, f->in[0]);
	assert_size(f->p.slave, 0, 0);
	pty_close(&f->p);
	assert_int_equal(f->p.master, -1);
	assert_int_equal(f->p.slave, -1);
	pty_close(&f->p); /* twice is harmless */
}

static void test_raw_roundtrip(void **state)
{
	struct fx *f = *state;
	struct termios before, saved, after;
	struct err e = {0};
	NEED_PTYS(f);
	assert_int_equal(tcgetattr(f->outer_slave, &before), 0);
	if (pty_raw_enter(f->outer_slave, &saved, &e) < 0)
		fail_err(&e);
	assert_termios_equal(&before, &saved);
	assert_raw(f->outer_slave);
	assert_int_equal(pty_raw_restore(f->outer_slave, &saved), 0);
	assert_int_equal(tcgetattr(f->outer_slave, &after), 0);
	assert_termios_equal(&before, &after);

	open_pipe(f->in);
	assert_int_equal(pty_raw_enter(f->in[0], &saved, &e), -1);
	assert_int_equal(e.errnum, ENOTTY);
}

static void on_usr1(int sig)
{
	(void)sig;
	pty_restore_now();
}

static void test_restore_now(void **state)
{
	struct fx *f = *state;
	struct termios before, saved, t;
	struct err e = {0};
	NEED_PTYS(f);
	assert_int_equal(tcgetattr(f->outer_slave, &before), 0);
	pty_restore_now(); /* nothing registered: nothing happens */

	assert_int_equal(pty_raw_enter(f->outer_slave, &saved, &e), 0);
	pty_restore_register(f->outer_slave, &saved);
	memset(&saved, 0, sizeof saved); /* the registration keeps its own copy */

	struct sigaction sa = {.sa_handler = on_usr1}, old;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	assert_int_equal(raise(SIGUSR1), 0);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	assert_int_equal(tcgetattr(f->outer_slave, &t), 0);
	assert_termios_equal(&before, &t);

	/* idempotent, and errno is left alone for the code the signal interrupted */
	errno = E2BIG;
	pty_restore_now();
	assert_int_equal(errno, E2BIG);
	assert_int_equal(tcgetattr(f->outer_slave, &t), 0);
	assert_termios_equal(&before, &t);

	/* still armed: raw again (fg after Ctrl-Z) is restored the same way */
	assert_int_equal(pty_raw_enter(f->outer_slave, &saved, &e), 0);
	pty_restore_now();
	assert_int_equal(tcgetattr(f->outer_slave, &t), 0);
	assert_termios_equal(&before, &t);

	pty_restore_unregister();
	assert_int_equal(pty_raw_enter(f->outer_slave, &saved, &e), 0);
	pty_restore_now();
	assert_raw(f->outer_slave);
	assert_int_equal(pty_raw_restore(f->outer_slave, &saved), 0);
}

/* A process that registers and then just exits leaves the terminal as it found it. */
static void test_restore_atexit(void **state)
{
	struct fx *f = *state;
	struct termios before, t;
	NEED_PTYS(f);
	assert_int_equal(tcgetattr(f->outer_slave, &before), 0);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct termios saved;
		if (pty_raw_enter(f->outer_slave, &saved, NULL) < 0)
			_exit(2);
		pty_restore_register(f->outer_slave, &saved);
		exit(0);
	}
	f->child = pid;
	assert_int_equal(wait_child(f), 0);
	assert_int_equal(tcgetattr(f->outer_slave, &t), 0);
	assert_termios_equal(&before, &t);
}

/* Piped stdin: its EOF reaches `cat` in the jail as VEOF, whether or not the last line ended. */
static void eof_case(struct fx *f, const char *input, const char *expect, size_t times)
{
	inner_open(f, -1);
	open_pipe(f->in);
	open_pipe(f->out);
	int st = run_piped(f, &(struct spawn){.which = PTY_ALL, .stdout_fd = -1}, "cat", f->in[0],
			   input, strlen(input), 4096);
	assert_int_equal(st, 0);
	/* once echoed by the terminal, once written by cat */
	if (times)
		assert_int_equal(count(sb_str(&f->seen), expect), times);
	pty_close(&f->p);
	for (int i = 0; i < 2; i++) {
		close_fd(&f->in[i]);
		close_fd(&f->out[i]);
	}
	sb_free(&f->seen);
}

static void test_eof_forwarding(void **state)
{
	struct fx *f = *state;
	eof_case(f, "abc\n", "abc\r\n", 2);
	eof_case(f, "two\nlines\n", "lines\r\n", 2);
	eof_case(f, "xyz", "xyz", 2); /* unfinished line: one VEOF hands it over, one ends it */
	eof_case(f, "", "", 0);
}

/* 100 KB out through a 4 KB pipe read in small pieces: partial writes, nothing lost or moved. */
static void test_backpressure_output(void **state)
{
	struct fx *f = *state;
	inner_open(f, -1);
	open_pipe(f->out);
	assert_int_equal(fcntl(f->out[1], F_SETPIPE_SZ, 4096), 4096);
	int st = run_piped(f, &(struct spawn){.which = PTY_ALL, .stdout_fd = -1},
			   "seq 1 20000", -1, NULL, 0, 512);
	assert_int_equal(st, 0);
	char *want = seq_text(20000), *got = strip_cr(sb_str(&f->seen));
	assert_true(strlen(want) > 100 * 1000);
	assert_int_equal(strlen(got), strlen(want));
	assert_string_equal(got, want);
	free(want);
	free(got);
}

/* 100 KB in through the slave's 4 KB input queue: EAGAIN on the master, then EOF after it all. */
static void test_backpressure_input(void **state)
{
	struct fx *f = *state;
	char *data = seq_text(20000);
	char want[32];
	snprintf(want, sizeof want, "%zu\r\n", strlen(data));
	inner_open(f, -1);
	open_pipe(f->in);
	open_pipe(f->out);
	int st = run_piped(f, &(struct spawn){.which = PTY_ALL, .stdout_fd = -1}, "wc -c",
			   f->in[0], data, strlen(data), 4096);
	free(data);
	assert_int_equal(st, 0);
	assert_non_null(strstr(sb_str(&f->seen), want));
}

/* Terminal stdin and stderr, piped stdout: fd 1 stays the pipe it was. */
static void test_mixed_fds(void **state)
{
	struct fx *f = *state;
	inner_open(f, -1);
	open_pipe(f->out);
	open_pipe(f->std);
	spawn(f, &(struct spawn){.which = PTY_STDIN | PTY_STDERR, .stdout_fd = f->std[1]},
	      "test -t 0 && echo in-tty >&2; test -t 1 || echo out-pipe");
	close_fd(&f->std[1]);
	struct pump pm;
	pump_init(&pm, -1, f->out[1], f->p.master, f->out[0], &f->seen);
	assert_true(pump_run(&pm, PUMP_MS));
	close_fd(&f->out[1]);
	collect_rest(f->out[0], &f->seen, 1000);
	collect_rest(f->std[0], &f->seen_std, 1000);
	assert_int_equal(wait_child(f), 0);
	assert_string_equal(sb_str(&f->seen), "in-tty\r\n");
	assert_string_equal(sb_str(&f->seen_std), "out-pipe\n");
}

/* A slave that already sits on fd 0 (close-on-exec) must still be there after exec. */
static void test_slave_on_stdin(void **state)
{
	struct fx *f = *state;
	inner_open(f, -1);
	open_pipe(f->out);
	struct spawn o = {.which = PTY_ALL, .stdout_fd = -1, .slave_on_0 = true};
	int st = run_piped(f, &o, "test -t 0 && test -t 1 && test -t 2 && echo all-tty", -1, NULL,
			   0, 4096);
	assert_int_equal(st, 0);
	assert_string_equal(sb_str(&f->seen), "all-tty\r\n");
}

static void test_child_setup_not_a_tty(void **state)
{
	struct fx *f = *state;
	open_pipe(f->in);
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(pty_child_setup(f->in[0], PTY_ALL) == -1 && errno == ENOTTY ? 0 : 1);
	f->child = pid;
	assert_int_equal(wait_child(f), 0);
}

/* After the command exited: what it left in the master still comes out; a slave held open
 * somewhere makes drain give up at its deadline instead of waiting forever. */
static void test_drain(void **state)
{
	struct fx *f = *state;
	struct pty_relay r;
	inner_open(f, -1);
	open_pipe(f->out);
	spawn(f, &(struct spawn){.which = PTY_ALL, .stdout_fd = -1}, "echo last words");
	assert_int_equal(wait_child(f), 0);
	pty_relay_init(&r, -1, f->out[1], f->p.master);
	assert_int_equal(pty_relay_drain(&r, 2000), 0);
	close_fd(&f->out[1]);
	collect_rest(f->out[0], &f->seen, 1000);
	assert_string_equal(sb_str(&f->seen), "last words\r\n");
	pty_close(&f->p);

	inner_open(f, -1); /* no child, and our own slave fd still open */
	pty_relay_init(&r, -1, STDOUT_FILENO, f->p.master);
	long long t0 = now_ms();
	assert_int_equal(pty_relay_drain(&r, 100), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_true(now_ms() - t0 < 1000);
	close_fd(&f->p.slave);
	assert_int_equal(pty_relay_drain(&r, 1000), 0);
	assert_true(r.master_eof);
}

/* While the command runs: what it wrote is out before a line of ours, the slave left open, input
 * untouched (issue 26: violation lines came before the output that preceded them). */
static void test_flush(void **state)
{
	struct fx *f = *state;
	struct pty_relay r;
	inner_open(f, -1);
	open_pipe(f->out);
	pty_relay_init(&r, -1, f->out[1], f->p.master);
	assert_int_equal(pty_relay_flush(&r, 1000), 0); /* nothing written: at once */
	assert_int_equal(write(f->p.slave, "before\n", 7), 7);
	assert_int_equal(pty_relay_flush(&r, 1000), 0);
	assert_int_equal(r.to_out_len, 0);
	assert_false(r.master_eof); /* the slave is still open: the command goes on */
	char buf[64];
	ssize_t n = read(f->out[0], buf, sizeof buf - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "before\r\n");
	/* a full pipe downstream: bounded by the timeout */
	int big = fcntl(f->out[1], F_GETPIPE_SZ);
	char *fill = calloc(1, (size_t)big);
	assert_non_null(fill);
	assert_true(fcntl(f->out[1], F_SETFL, O_NONBLOCK) == 0);
	while (write(f->out[1], fill, (size_t)big) > 0)
		;
	free(fill);
	assert_int_equal(write(f->p.slave, "more\n", 5), 5);
	long long t0 = now_ms();
	assert_int_equal(pty_relay_flush(&r, 100), -1);
	assert_int_equal(errno, ETIMEDOUT);
	assert_true(now_ms() - t0 < 1000);
	pty_close(&f->p);
}

static void test_relay_misuse(void **state)
{
	struct fx *f = *state;
	struct pty_relay r;
	struct pollfd pfd[PTY_RELAY_NFDS];
	nfds_t n;
	struct err e = {0};
	inner_open(f, -1);
	pty_relay_init(&r, -1, STDOUT_FILENO, f->p.master);
	assert_true(r.in_eof);
	pty_relay_fill_pollfds(&r, pfd, &n);
	assert_int_equal(n, 3);
	assert_int_equal(pfd[PTY_RELAY_IN].fd, -1);
	assert_int_equal(pfd[PTY_RELAY_MASTER].fd, f->p.master);
	assert_int_equal(pfd[PTY_RELAY_MASTER].events, POLLIN);
	assert_int_equal(pfd[PTY_RELAY_OUT].fd, -1); /* nothing to write yet */
	assert_true(fcntl(f->p.master, F_GETFL) & O_NONBLOCK);

	assert_int_equal(pty_relay_handle(&r, pfd, 2, &e), -1);
	assert_int_equal(e.errnum, EINVAL);
	pfd[PTY_RELAY_MASTER].revents = POLLNVAL;
	assert_int_equal(pty_relay_handle(&r, pfd, n, &e), -1);
	assert_int_equal(e.errnum, EBADF);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_session),
		T(test_winsize_and_settings),
		T(test_open_without_terminal),
		T(test_raw_roundtrip),
		T(test_flush),
		T(test_restore_now),
		T(test_restore_atexit),
		T(test_eof_forwarding),
		T(test_backpressure_output),
		T(test_backpressure_input),
		T(test_mixed_fds),
		T(test_slave_on_stdin),
		T(test_child_setup_not_a_tty),
		T(test_drain),
		T(test_relay_misuse),
	};
	return cmocka_run_group_tests_name("pty", tests, NULL, NULL);
}
