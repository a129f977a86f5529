/* pty: allocation, the child's side, raw mode and its restoration, and the byte relay. */
#include "core/jail/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/clock.h"

/* ---- allocation ---- */

/* The slave through the master rather than its path: no window in which a /dev/pts entry can be
 * swapped, and it works when our /dev/pts is not the devpts instance the master came from. */
static int open_slave(int master, const char *name)
{
#ifdef TIOCGPTPEER
	int fd = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0 || (errno != EINVAL && errno != ENOTTY))
		return fd;
#endif
	return open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
}

/* The jail starts with the user's terminal settings (erase character, iutf8…) and size. */
static int copy_user_settings(int from, int slave, const char *name, struct err *e)
{
	struct termios t;
	struct winsize ws;

	if (from < 0 || !isatty(from))
		return 0;
	if (tcgetattr(from, &t) < 0)
		return err_set(e, errno, NULL, "cannot read the terminal's settings");
	if (tcsetattr(slave, TCSANOW, &t) < 0)
		return err_set(e, errno, name, "cannot set the jail's terminal settings");
	if (ioctl(from, TIOCGWINSZ, &ws) < 0)
		return err_set(e, errno, NULL, "cannot read the terminal's window size");
	if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
		return err_set(e, errno, name, "cannot set the jail's terminal size");
	return 0;
}

int pty_open(struct pty *p, int size_from_fd, struct err *e)
{
	p->master = p->slave = -1;
	p->name[0] = '\0';

	_cleanup_close_ int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0) {
		err_set(e, errno, "/dev/ptmx", "cannot allocate a pseudo-terminal");
		err_hint(e, "is devpts mounted on /dev/pts with a usable ptmx?");
		return -1;
	}
	if (grantpt(m) < 0 || unlockpt(m) < 0)
		return err_set(e, errno, "/dev/ptmx", "cannot unlock the pseudo-terminal");
	int rc = ptsname_r(m, p->name, sizeof p->name);
	if (rc != 0)
		return err_set(e, rc, NULL, "cannot name the pseudo-terminal");

	_cleanup_close_ int s = open_slave(m, p->name);
	if (s < 0)
		return err_set(e, errno, p->name, "cannot open the pseudo-terminal's slave");
	if (copy_user_settings(size_from_fd, s, p->name, e) < 0)
		return -1;

	p->master = steal_fd(&m);
	p->slave = steal_fd(&s);
	return 0;
}

void pty_close(struct pty *p)
{
	closep(&p->master);
	closep(&p->slave);
	p->master = p->slave = -1;
}

/* ---- the child ---- */

static int slave_onto(int slave, int fd)
{
	/* dup2 onto itself is a no-op that would leave the slave close-on-exec */
	if (slave == fd)
		return fcntl(fd, F_SETFD, 0);
	int rc;
	do
		rc = dup2(slave, fd);
	while (rc < 0 && errno == EINTR);
	return rc;
}

int pty_child_setup(int slave, unsigned which)
{
	/* a session of its own, so that the slave can become its controlling terminal and the
	 * jail's job control (Ctrl-C, Ctrl-Z) happens there rather than on the user's terminal */
	if (setsid() < 0)
		return -1;
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return -1;
	/* PTY_STDIN/STDOUT/STDERR are bits 0/1/2: bit n is fd n */
	for (int fd = 0; fd <= 2; fd++) {
		if ((which & (1u << fd)) && slave_onto(slave, fd) < 0)
			return -1;
	}
	/* the slave itself is close-on-exec: exec leaves only the copies on 0-2 */
	return 0;
}

/* ---- raw mode ---- */

static int set_attr(int fd, int when, const struct termios *t)
{
	int rc;
	do
		rc = tcsetattr(fd, when, t);
	while (rc < 0 && errno == EINTR);
	return rc;
}

int pty_raw_enter(int fd, struct termios *saved, struct err *e)
{
	struct termios raw, now;

	if (tcgetattr(fd, saved) < 0)
		return err_set(e, errno, NULL, "cannot read the terminal's settings");
	raw = *saved;
	cfmakeraw(&raw);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (set_attr(fd, TCSADRAIN, &raw) < 0)
		return err_set(e, errno, NULL, "cannot put the terminal in raw mode");
	/* tcsetattr succeeds when any of the changes was made: check the ones that matter */
	int bad = 0;
	if (tcgetattr(fd, &now) < 0)
		bad = errno;
	else if (now.c_lflag & (ICANON | ECHO | ISIG))
		bad = EINVAL;
	if (bad) {
		(void)set_attr(fd, TCSADRAIN, saved);
		return err_set(e, bad, NULL, "the terminal did not accept raw mode");
	}
	return 0;
}

int pty_raw_restore(int fd, const struct termios *saved)
{
	return set_attr(fd, TCSADRAIN, saved);
}

/* ---- restore on every exit path ---- */

/* Read from signal handlers: the fd is published last (and withdrawn first), so a handler sees
 * either no registration or a complete copy of the settings. */
static atomic_int restore_fd = -1;
static struct termios restore_saved;
static bool restore_atexit_done;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "restore_fd must be usable from signal handlers");

void pty_restore_register(int fd, const struct termios *saved)
{
	atomic_store(&restore_fd, -1);
	restore_saved = *saved;
	atomic_store(&restore_fd, fd);
	if (!restore_atexit_done)
		restore_atexit_done = atexit(pty_restore_now) == 0;
}

void pty_restore_unregister(void)
{
	atomic_store(&restore_fd, -1);
}

void pty_restore_now(void)
{
	int fd = atomic_load(&restore_fd);
	if (fd < 0)
		return;
	int saved_errno = errno;
	/* TCSANOW, not TCSADRAIN: output is already processed when written, and waiting for a
	 * stalled terminal to drain would hang an exit path */
	(void)set_attr(fd, TCSANOW, &restore_saved);
	errno = saved_errno;
}

int pty_copy_winsize(int from_fd, int to_fd)
{
	struct winsize ws;
	if (ioctl(from_fd, TIOCGWINSZ, &ws) < 0)
		return -1;
	return ioctl(to_fd, TIOCSWINSZ, &ws);
}

/* ---- the relay ---- */

/* Room kept in to_master for the VEOF characters that end of input may need. */
#define EOF_RESERVE 2

void pty_relay_init(struct pty_relay *r, int in_fd, int out_fd, int master)
{
	memset(r, 0, sizeof *r);
	r->in_fd = in_fd;
	r->out_fd = out_fd;
	r->master = master;
	r->in_eof = in_fd < 0;
	r->in_is_tty = in_fd >= 0 && isatty(in_fd);
	r->last_in = '\n';
	/* the slave's input queue is small: a blocking write to the master would wait for the jail
	 * to read while the jail may be waiting for us to read its output */
	int fl = fcntl(master, F_GETFL);
	if (fl >= 0)
		(void)fcntl(master, F_SETFL, fl | O_NONBLOCK);
}

static bool want_in(const struct pty_relay *r)
{
	return !r->in_eof && !r->master_eof && !r->hold &&
	       r->to_master_len + EOF_RESERVE < sizeof r->to_master;
}

void pty_relay_fill_pollfds(const struct pty_relay *r, struct pollfd pfd[3], nfds_t *n)
{
	short mev = 0;
	if (!r->master_eof && !r->hold && r->to_out_len < sizeof r->to_out)
		mev |= POLLIN;
	if (!r->master_eof && r->to_master_len > 0)
		mev |= POLLOUT;
	/* fd -1 rather than events 0: POLLHUP is reported even when not asked for, and would
	 * spin the loop while out_fd is full */
	pfd[PTY_RELAY_IN] = (struct pollfd){.fd = want_in(r) ? r->in_fd : -1, .events = POLLIN};
	pfd[PTY_RELAY_MASTER] = (struct pollfd){.fd = mev ? r->master : -1, .events = mev};
	pfd[PTY_RELAY_OUT] =
		(struct pollfd){.fd = r->to_out_len ? r->out_fd : -1, .events = POLLOUT};
	*n = PTY_RELAY_NFDS;
}

static void consume(char *buf, size_t *len, size_t k)
{
	memmove(buf, buf + k, *len - k);
	*len -= k;
}

/* Does c, as the last byte received, leave the slave's canonical line empty? */
static bool ends_line(const struct termios *t, char c)
{
	cc_t u = (cc_t)c;
	if (u == '\n')
		return !(t->c_iflag & INLCR);
	if (u == '\r')
		return (t->c_iflag & ICRNL) && !(t->c_iflag & IGNCR);
	if (u == _POSIX_VDISABLE)
		return false;
	return u == t->c_cc[VEOL] || u == t->c_cc[VEOL2] || u == t->c_cc[VEOF];
}

/* A terminal has no end of file, only a character that makes a canonical read() return the
 * line so far: on an empty line that is 0 bytes, which programs take as end of file. An
 * unfinished line needs one VEOF to hand it over and a second one for the EOF. In
 * non-canonical mode VEOF is an ordinary byte: nothing can be said then. */
static void queue_eof(struct pty_relay *r)
{
	struct termios t;
	/* on Linux the master reports the slave's settings, which the jail may have changed */
	if (r->master_eof || tcgetattr(r->master, &t) < 0 || !(t.c_lflag & ICANON))
		return;
	cc_t veof = t.c_cc[VEOF];
	if (veof == _POSIX_VDISABLE)
		return;
	if (!ends_line(&t, r->last_in))
		r->to_master[r->to_master_len++] = (char)veof;
	r->to_master[r->to_master_len++] = (char)veof;
}

/* One read: in_fd may be blocking, and only the first read after POLLIN is sure not to block. */
static int read_in(struct pty_relay *r, struct err *e)
{
	if (!want_in(r))
		return 0;
	size_t room = sizeof r->to_master - EOF_RESERVE - r->to_master_len;
	ssize_t k = read(r->in_fd, r->to_master + r->to_master_len, room);
	if (k > 0) {
		r->to_master_len += (size_t)k;
		r->last_in = r->to_master[r->to_master_len - 1];
		return 0;
	}
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	/* EIO from a terminal: hung up, or we are an orphaned background job */
	if (k < 0 && !(errno == EIO && r->in_is_tty))
		return err_set(e, errno, NULL, "cannot read the input for the jail's terminal");
	r->in_eof = true;
	/* a terminal's EOF is a hangup: in raw mode Ctrl-D arrives as a byte and is passed on */
	if (!r->in_is_tty)
		queue_eof(r);
	return 0;
}

static int write_master(struct pty_relay *r, struct err *e)
{
	while (r->to_master_len > 0 && !r->master_eof) {
		ssize_t k = write(r->master, r->to_master, r->to_master_len);
		if (k > 0) {
			consume(r->to_master, &r->to_master_len, (size_t)k);
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0 || errno == EAGAIN)
			return 0;
		if (errno != EIO)
			return err_set(e, errno, NULL, "cannot write to the jail's terminal");
		/* the slave side is closed: the input has no reader; reading tells the end */
		r->to_master_len = 0;
	}
	return 0;
}

/* The master is non-blocking: read until it is empty or to_out is full. */
static int read_master(struct pty_relay *r, struct err *e)
{
	while (!r->master_eof && r->to_out_len < sizeof r->to_out) {
		size_t room = sizeof r->to_out - r->to_out_len;
		ssize_t k = read(r->master, r->to_out + r->to_out_len, room);
		if (k > 0) {
			r->to_out_len += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			return 0;
		if (k < 0 && errno != EIO)
			return err_set(e, errno, NULL, "cannot read from the jail's terminal");
		/* EIO: the last slave fd is closed. What was read still goes out; input is moot. */
		r->master_eof = true;
		r->to_master_len = 0;
	}
	return 0;
}

/* One write of at most PIPE_BUF: after POLLOUT that much fits in a pipe without blocking. */
static int write_out(struct pty_relay *r, struct err *e)
{
	if (r->to_out_len == 0)
		return 0;
	size_t n = r->to_out_len < PIPE_BUF ? r->to_out_len : PIPE_BUF;
	ssize_t k = write(r->out_fd, r->to_out, n);
	if (k > 0) {
		if (r->seen)
			r->seen(r->seen_arg, r->to_out, (size_t)k);
		consume(r->to_out, &r->to_out_len, (size_t)k);
		return 0;
	}
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	return err_set(e, k < 0 ? errno : EIO, NULL, "cannot write the jail's terminal output");
}

int pty_relay_handle(struct pty_relay *r, const struct pollfd *pfd, nfds_t n, struct err *e)
{
	if (n < PTY_RELAY_NFDS)
		return err_set(e, EINVAL, NULL, "pty relay: %lu poll entries, 3 expected",
			       (unsigned long)n);
	for (int i = 0; i < PTY_RELAY_NFDS; i++)
		if (pfd[i].fd >= 0 && (pfd[i].revents & POLLNVAL))
			return err_set(e, EBADF, NULL, "pty relay: fd %d is not open", pfd[i].fd);

	const short rd = POLLIN | POLLHUP | POLLERR, wr = POLLOUT | POLLHUP | POLLERR;
	const struct pollfd *in = &pfd[PTY_RELAY_IN], *m = &pfd[PTY_RELAY_MASTER],
			    *out = &pfd[PTY_RELAY_OUT];
	if (in->fd >= 0 && (in->revents & rd) && read_in(r, e) < 0)
		return -1;
	/* write before reading: on EIO the read that follows is the one that reports the end */
	if (m->fd >= 0 && (m->revents & wr) && write_master(r, e) < 0)
		return -1;
	if (m->fd >= 0 && (m->revents & rd) && !r->hold && read_master(r, e) < 0)
		return -1;
	if (out->fd >= 0 && (out->revents & wr) && write_out(r, e) < 0)
		return -1;
	return 0;
}

int pty_relay_pull(struct pty_relay *r, struct err *e)
{
	return read_master(r, e);
}

bool pty_relay_done(const struct pty_relay *r)
{
	return r->master_eof && r->to_out_len == 0;
}

int pty_relay_flush(struct pty_relay *r, int timeout_ms)
{
	long long end = clock_mono_ms() + timeout_ms;
	for (;;) {
		struct err e = {0};
		if (read_master(r, &e) < 0) { /* non-blocking: what is there now */
			errno = e.errnum ? e.errnum : EIO;
			return -1;
		}
		if (r->to_out_len == 0)
			return 0;
		long long left = end - clock_mono_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct pollfd out = {.fd = r->out_fd, .events = POLLOUT};
		int rc = poll(&out, 1, (int)left);
		if (rc < 0 && errno != EINTR)
			return -1;
		if (rc > 0 && (out.revents & (POLLERR | POLLHUP | POLLNVAL))) {
			errno = EPIPE;
			return -1;
		}
		if (rc > 0 && write_out(r, &e) < 0) {
			errno = e.errnum ? e.errnum : EIO;
			return -1;
		}
	}
}

int pty_relay_drain(struct pty_relay *r, int timeout_ms)
{
	/* the command is gone: input has nowhere to go */
	r->in_eof = true;
	r->hold = false;
	r->to_master_len = 0;
	long long end = clock_mono_ms() + timeout_ms;
	while (!pty_relay_done(r)) {
		long long left = end - clock_mono_ms();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct pollfd pfd[PTY_RELAY_NFDS];
		nfds_t n;
		pty_relay_fill_pollfds(r, pfd, &n);
		int rc = poll(pfd, n, (int)left);
		if (rc < 0 && errno != EINTR)
			return -1;
		if (rc <= 0)
			continue;
		struct err e = {0};
		if (pty_relay_handle(r, pfd, n, &e) < 0) {
			errno = e.errnum ? e.errnum : EIO;
			return -1;
		}
	}
	return 0;
}
