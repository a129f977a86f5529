/* supervise: the host side of a running jail. One poll loop over bwrap's status pipe, the
 * control channel to `__init`, a signalfd, and (when the user is on a terminal) our pty. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include <termios.h>

#include "core/jail/askprompt.h"
#include "util/err.h"

#define SUPERVISE_EXT_MAX 40 /* the caller's fds polled at once */

/* The running jail, for what the caller's ext_handle serves (the session's control socket,
 * doc/design.md §5 "ps, exec, stop"): supervise fills pid as bwrap reports it and keeps priv
 * while it runs; supervise_exec and supervise_stop act on it from ext_handle. */
struct supervise_jail {
	pid_t pid;   /* the jail's first process (init) on the host: bwrap's child-pid; 0 before */
	void *priv;  /* supervise's own, NULL when it is not running */
};
/* `agentjail exec`: hand init an exec channel and the command's stdin, stdout, stderr (fds
 * stay the caller's: it closes them after). 0, or -1 with errno (the jail is not running, or
 * is ending). */
int supervise_exec(struct supervise_jail *j, const int fds[4]) WUR;
/* `agentjail stop`: end the run as a SIGTERM to agentjail does (the command's group is sent
 * SIGTERM, then killed after the grace period); the run then ends as any other, with its
 * checks and its record. */
void supervise_stop(struct supervise_jail *j);

struct supervise_in {
	pid_t bwrap;
	int status_fd;      /* bwrap --json-status-fd, read end */
	int ctl;            /* our end of the control channel */
	int sfd;            /* signalfd of the signals blocked for the jail's lifetime */
	int master;         /* pty master, -1 without a pty */
	int in_fd, out_fd;  /* the user's ends relayed to/from the master (-1 when not relayed) */
	int tty_fd;         /* the user's terminal (for raw mode and its size), -1 if none */
	bool raw;           /* stdin is the user's terminal: raw mode while we are its foreground */
	struct termios saved; /* its settings before raw mode (filled by supervise) */
	int grace_ms;       /* after SIGTERM/SIGHUP: how long the command may take to exit */
	int watch_fd;       /* the live watch of protected paths (guard.h), -1 if none */
	void (*on_watch)(void *arg); /* called when watch_fd is readable */
	void *watch_arg;
	int err_fd;         /* bwrap's stderr (a non-blocking pipe), -1 if none: kept in out */
	/* the caller's own fds in the loop (the session's control socket, --net ask's
	 * questions): fill up to max entries and return how many; handle them after poll */
	size_t (*ext_fill)(void *arg, struct pollfd *pfd, size_t max);
	void (*ext_handle)(void *arg, const struct pollfd *pfd, size_t n);
	void *ext_arg;
	/* --net ask: the questions put to the person at the terminal (core/jail/askprompt.h),
	 * NULL for none */
	const struct askprompt_src *ask;
	/* --net allow: init's child sent the capture filter's listener and the proxy's end of
	 * init's capture channel (CTL_CAPTURE); the fds are the callee's. The first pair only;
	 * without a callee they are closed, and the jail's connects then fail (ENOSYS). */
	void (*on_capture)(void *arg, int listener, int chan);
	void *capture_arg;
	struct supervise_jail *jail; /* the caller's, or NULL */
};

struct supervise_out {
	bool started;       /* bwrap reported the command (init) running */
	bool have_status;   /* bwrap reported an exit code */
	int status;         /* that exit code (the command's, shell-style) */
	int term_signal;    /* a SIGTERM/SIGHUP/SIGINT agentjail received and passed on, or 0
			     * (SIGTERM too for supervise_stop) */
	bool killed;        /* the grace period ran out: the jail was killed */
	int landlock;       /* CTL_LANDLOCK value, -1 if init did not report */
	int cmd_signal;     /* the signal the command died of (init's CTL_EXIT), or 0 */
	int exec_errno;     /* init could not execute the command (CTL_EXEC_FAILED), or 0 */
	int notes;          /* CTL_NOTE bits init sent (ctl.h), 0 none */
	char *bwrap_stderr; /* what came on err_fd (at most SUPERVISE_ERR_MAX bytes), or NULL;
			     * the caller frees it */
};

#define SUPERVISE_ERR_MAX 65536

/* Runs until bwrap's status pipe closes. Returns -1 only for an internal failure (poll). */
int supervise(struct supervise_in *in, struct supervise_out *out, struct err *e) WUR;
