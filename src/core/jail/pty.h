/* pty: the host side of the jail's terminal (DESIGN.md §2, "Terminal").
 *
 * When stdin is a terminal, the jail gets a pty of its own instead of the user's terminal: the
 * user's terminal never reaches bwrap (TIOCSTI could inject into it, `--dev` would expose it as
 * /dev/console). This module knows nothing about bwrap; the launcher:
 *   1. pty_open(&p, STDIN_FILENO) — before raw mode, so the jail starts with the user's settings;
 *   2. fork; the child calls pty_child_setup(p.slave, which) and execs bwrap;
 *   3. the parent closes p.slave (else the master never sees the end of the session), enters raw
 *      mode with pty_raw_enter + pty_restore_register, and runs its event loop around
 *      pty_relay_fill_pollfds / pty_relay_handle, calling pty_copy_winsize on SIGWINCH;
 *   4. when the command has exited: pty_relay_drain, pty_raw_restore, pty_close.
 * Nothing here prints or exits; errors come back in a struct err. */
#pragma once
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <termios.h>

#include "util/err.h"

struct pty {
	int master; /* ours: the relay reads the jail's output and writes its input here */
	int slave;  /* the jail's terminal: the child's 0/1/2, closed by the parent after fork */
	char name[64];
};

/* Which of the child's standard fds become the pty slave. The others are left as they are, so a
 * piped stdout (`agentjail run … | less`) stays a pipe while stdin is the terminal. */
enum {
	PTY_STDIN = 1u << 0,
	PTY_STDOUT = 1u << 1,
	PTY_STDERR = 1u << 2,
	PTY_ALL = PTY_STDIN | PTY_STDOUT | PTY_STDERR,
};

/* Allocate a pty (both ends close-on-exec, neither becomes our controlling terminal). When
 * size_from_fd is a terminal, the slave gets its window size and termios (erase character,
 * iutf8…); pass -1 to keep the kernel's defaults. p->master = p->slave = -1 on failure. */
int pty_open(struct pty *p, int size_from_fd, struct err *e) WUR;
/* Close whichever ends are still open. */
void pty_close(struct pty *p);

/* In the child between fork/vfork and exec: a new session with the slave as its controlling
 * terminal, then the slave dup'ed onto the fds in `which`. Async-signal-safe (syscalls only).
 * Returns 0, or -1 with errno set. */
int pty_child_setup(int slave, unsigned which);

/* Put the user's terminal in raw mode (cfmakeraw, VMIN=1 VTIME=0: every byte, Ctrl-C included,
 * goes to the jail, as with `ssh -t`), saving the previous settings in *saved. A process in the
 * background process group gets SIGTTOU here: callers in the foreground only. */
int pty_raw_enter(int fd, struct termios *saved, struct err *e) WUR;
/* Put back *saved after pending output is written (TCSADRAIN). 0, or -1 with errno set. */
int pty_raw_restore(int fd, const struct termios *saved);

/* Restoring the terminal on every exit path: remember (fd, *saved) for pty_restore_now, which is
 * also registered with atexit the first time. Call from normal context, not a signal handler. */
void pty_restore_register(int fd, const struct termios *saved);
/* Apply the registered settings; nothing when none are. Async-signal-safe, preserves errno, and
 * may be called any number of times (signal handlers, atexit, Ctrl-Z before stopping). */
void pty_restore_now(void);
/* Forget the registered settings (a forked child, or the terminal is no longer ours). */
void pty_restore_unregister(void);

/* Copy the window size of from_fd onto to_fd (either end of a pty works). The kernel sends
 * SIGWINCH to the slave's foreground group when it changes. Async-signal-safe; 0 or -1/errno. */
int pty_copy_winsize(int from_fd, int to_fd);

/* Moving bytes between the user and the master, one poll round at a time, in a loop the
 * launcher owns. The master is made non-blocking; in_fd and out_fd are left as they are (their
 * flags are shared with the user's shell), and writes to them are kept to PIPE_BUF bytes so that
 * a blocking pipe or terminal that polled writable does not stall the loop. */
struct pty_relay {
	int in_fd;  /* the user's terminal or stdin; -1: the jail's stdin is not the pty */
	int out_fd; /* the user's stdout */
	int master;
	char to_master[8192];
	size_t to_master_len;
	char to_out[8192];
	size_t to_out_len;
	bool in_eof;     /* nothing more to read from in_fd */
	bool master_eof; /* every slave fd is closed (EIO): only to_out remains to be written */
	/* held (--net ask's question on the terminal, core/jail/askprompt.h): neither the user's
	 * input nor the jail's output is read; what was read already is still written */
	bool hold;
	/* every byte written to out_fd, in order, as it goes (NULL: none) */
	void (*seen)(void *arg, const char *buf, size_t n);
	void *seen_arg;
	/* private */
	bool in_is_tty; /* EOF from a terminal is a hangup, not something to pass on */
	char last_in;   /* last byte read from in_fd: is the jail's current line empty? */
};

/* The three entries pty_relay_fill_pollfds fills, at fixed positions. */
enum { PTY_RELAY_IN, PTY_RELAY_MASTER, PTY_RELAY_OUT, PTY_RELAY_NFDS };

void pty_relay_init(struct pty_relay *r, int in_fd, int out_fd, int master);
/* Fill pfd[0..2] (PTY_RELAY_IN/MASTER/OUT); an entry with nothing to wait for has fd -1, which
 * poll ignores. *n = 3. Callers with more fds copy these into their own array, in order. */
void pty_relay_fill_pollfds(const struct pty_relay *r, struct pollfd pfd[3], nfds_t *n);
/* Act on the revents of what pty_relay_fill_pollfds filled. EINTR and EAGAIN are retried on the
 * next round; EIO on the master ends the session (master_eof). EOF on a non-terminal in_fd is
 * passed on as the slave's VEOF character when the slave is in canonical mode (the only way to
 * say end-of-file through a terminal). -1 with e filled on a real error (out_fd gone: EPIPE,
 * which needs SIGPIPE ignored by the caller). */
int pty_relay_handle(struct pty_relay *r, const struct pollfd *pfd, nfds_t n, struct err *e) WUR;
/* Read what the jail has written so far into the relay's output buffer, held or not (a
 * question about to be shown takes the screen after it). 0, or -1 with e. */
int pty_relay_pull(struct pty_relay *r, struct err *e) WUR;
/* True when everything the jail wrote has been written out and it can write no more. */
bool pty_relay_done(const struct pty_relay *r);
/* While the command runs, before agentjail writes a line of its own to the same terminal (a
 * violation the live watch moved aside): copy what the master holds now, and what is still
 * queued, to out_fd, for at most timeout_ms; input is left as it is. So the line comes after
 * the output the command wrote before it, not in the middle of it (issue 26). 0 when nothing is
 * left, else -1 with errno set (ETIMEDOUT: the command keeps writing, or out_fd is slow). */
int pty_relay_flush(struct pty_relay *r, int timeout_ms);
/* After the command exited: stop reading input and copy the master's remaining output to out_fd
 * until EIO on the master or timeout_ms. 0 when all of it went out, else -1 with errno set
 * (ETIMEDOUT: something in the jail still holds the slave open, or out_fd does not drain). */
int pty_relay_drain(struct pty_relay *r, int timeout_ms);
