#include "core/jail/supervise.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "core/jail/ctl.h"
#include "core/jail/pty.h"
#include "util/strbuf.h"
#include "util/clock.h"

/* bwrap's JSON lines: we need two integers, so a small scan is enough. */
static bool json_int(const char *buf, const char *key, long *out)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\"", key);
	const char *p = strstr(buf, pat);
	if (!p)
		return false;
	p += strlen(pat);
	while (*p == ' ' || *p == ':')
		p++;
	char *end;
	long v = strtol(p, &end, 10);
	if (end == p)
		return false;
	*out = v;
	return true;
}

struct state {
	struct supervise_in *in;
	struct supervise_out *out;
	struct pty_relay relay;
	struct strbuf status;
	struct strbuf errtext; /* bwrap's stderr */
	bool status_open, ctl_open, err_open;
	bool captured; /* the capture's listener was handed on */
	bool raw_on; /* the user's terminal is in raw mode now */
	long long deadline; /* kill the jail at this time (after SIGTERM), 0 = none */
	struct askprompt ask; /* --net ask's question on the terminal */
	bool out_tty;         /* the relay writes to a terminal (the question can be shown) */
};

/* Pass a signal to the command's process group through init; without a control channel,
 * to bwrap (which ends the jail). */
static void pass_signal(struct state *s, int sig)
{
	if (!s->ctl_open || ctl_send(s->in->ctl, CTL_SIGNAL, sig) < 0)
		(void)kill(s->in->bwrap, SIGKILL);
}

/* Take the user's terminal when we are its foreground job: raw mode, its size, and relaying
 * its input. In the background (continued by `bg`, or by `kill %N`, which sends SIGCONT) we
 * must neither change its mode nor read it (the kernel would stop us with SIGTTOU/SIGTTIN):
 * output still flows, input waits until `fg`. */
static void take_terminal(struct state *s)
{
	struct supervise_in *in = s->in;
	bool fg = in->tty_fd >= 0 && tcgetpgrp(in->tty_fd) == getpgrp();
	if (in->master >= 0)
		s->relay.in_fd = fg ? in->in_fd : -1;
	if (!fg)
		return;
	if (in->raw && !s->raw_on) {
		struct err e = {0};
		if (pty_raw_enter(in->tty_fd, &in->saved, &e) == 0) {
			s->raw_on = true;
			pty_restore_register(in->tty_fd, &in->saved);
		}
	}
	if (in->master >= 0)
		(void)pty_copy_winsize(in->tty_fd, in->master);
}

static void give_terminal(struct state *s)
{
	if (s->raw_on) {
		(void)pty_raw_restore(s->in->tty_fd, &s->in->saved);
		/* nothing left to restore at exit: restoring from the background (after `bg`)
		 * would stop us with SIGTTOU */
		pty_restore_unregister();
	}
	s->raw_on = false;
}

/* Ctrl-Z in the jail stopped the command: give the user's terminal back and stop ourselves;
 * when the shell continues us, take the terminal again (if it is ours) and continue the
 * command. */
static void stop_and_resume(struct state *s)
{
	give_terminal(s);
	(void)kill(getpid(), SIGSTOP);
	/* … here after SIGCONT */
	take_terminal(s);
	if (s->ctl_open)
		(void)ctl_send(s->in->ctl, CTL_CONT, 0);
}

/* SIGTERM or SIGHUP (or supervise_stop): the command's group is sent it; after the grace
 * period the jail is killed. */
static void end_run(struct state *s, int sig)
{
	s->out->term_signal = sig;
	pass_signal(s, sig);
	if (!s->deadline)
		s->deadline = clock_mono_ms() + s->in->grace_ms;
}

int supervise_exec(struct supervise_jail *j, const int fds[4])
{
	struct state *s = j ? j->priv : NULL;
	if (!s || !s->ctl_open || s->deadline) {
		errno = ESRCH;
		return -1;
	}
	return ctl_send_fds(s->in->ctl, CTL_EXEC, 0, fds, 4);
}

void supervise_stop(struct supervise_jail *j)
{
	struct state *s = j ? j->priv : NULL;
	if (s)
		end_run(s, SIGTERM);
}

static void on_signal(struct state *s)
{
	struct signalfd_siginfo si;
	if (read(s->in->sfd, &si, sizeof si) != (ssize_t)sizeof si)
		return;
	int sig = (int)si.ssi_signo;
	switch (sig) {
	case SIGWINCH:
		if (s->in->master >= 0 && s->in->tty_fd >= 0)
			(void)pty_copy_winsize(s->in->tty_fd, s->in->master);
		askprompt_resized(&s->ask);
		break;
	case SIGCONT:
		/* continued by the shell (fg/bg) without a stop of ours: re-check who owns the
		 * terminal, and make sure the command runs */
		take_terminal(s);
		if (s->ctl_open)
			(void)ctl_send(s->in->ctl, CTL_CONT, 0);
		break;
	case SIGTSTP:
		pass_signal(s, SIGTSTP); /* init reports the stop, then we stop */
		break;
	case SIGTERM:
	case SIGHUP:
		end_run(s, sig);
		break;
	default: /* INT, QUIT, USR1, USR2: the jail is in a session of its own */
		if (sig == SIGINT && !s->out->term_signal)
			s->out->term_signal = sig;
		pass_signal(s, sig);
		break;
	}
}

static void on_control(struct state *s)
{
	struct ctl_msg m;
	int fd[2] = {-1, -1};
	int r = ctl_recv_fds(s->in->ctl, &m, fd, 2);
	if (r <= 0) {
		s->ctl_open = false;
		return;
	}
	if (fd[0] >= 0 && fd[1] >= 0 && m.type == CTL_CAPTURE && s->in->on_capture &&
	    !s->captured) {
		s->captured = true;
		s->in->on_capture(s->in->capture_arg, fd[0], fd[1]);
		fd[0] = fd[1] = -1;
	}
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			(void)close(fd[i]); /* only CTL_CAPTURE carries them, once */
	if (m.type == CTL_STOPPED)
		stop_and_resume(s);
	else if (m.type == CTL_LANDLOCK)
		s->out->landlock = m.value;
	else if (m.type == CTL_EXIT && (m.value & CTL_EXIT_SIGNALLED))
		s->out->cmd_signal = (m.value & 0xffff) - 128;
	else if (m.type == CTL_EXEC_FAILED)
		s->out->exec_errno = m.value;
	else if (m.type == CTL_NOTE)
		s->out->notes |= m.value;
}

/* bwrap's stderr: kept (bounded) for the caller; what is over the bound is read and dropped,
 * so bwrap never blocks on it. */
static void on_err(struct state *s)
{
	for (;;) {
		char buf[4096];
		ssize_t n = read(s->in->err_fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			s->err_open = false;
			return;
		}
		size_t room = SUPERVISE_ERR_MAX - s->errtext.len;
		sb_addn(&s->errtext, buf, (size_t)n < room ? (size_t)n : room);
	}
}

static void on_status(struct state *s)
{
	char buf[512];
	ssize_t n = read(s->in->status_fd, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		s->status_open = false;
		return;
	}
	sb_addn(&s->status, buf, (size_t)n);
	long v;
	if (!s->out->started && json_int(sb_str(&s->status), "child-pid", &v)) {
		s->out->started = true;
		if (s->in->jail)
			s->in->jail->pid = (pid_t)v;
	}
}

int supervise(struct supervise_in *in, struct supervise_out *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	out->landlock = -1;
	struct state s = {.in = in,
			  .out = out,
			  .status_open = true,
			  .ctl_open = in->ctl >= 0,
			  .err_open = in->err_fd >= 0};
	askprompt_init(&s.ask, in->ask);
	if (in->jail)
		in->jail->priv = &s;
	if (in->master >= 0) {
		pty_relay_init(&s.relay, in->in_fd, in->out_fd, in->master);
		s.out_tty = in->ask && isatty(in->out_fd);
		if (s.out_tty) {
			s.relay.seen = askprompt_seen;
			s.relay.seen_arg = &s.ask;
		}
	}
	take_terminal(&s);
	int ask_timeout = -1;
	while (s.status_open) {
		struct pollfd pfd[8 + 1 + SUPERVISE_EXT_MAX];
		nfds_t n = 0;
		pfd[n++] = (struct pollfd){.fd = in->status_fd, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = in->sfd, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = s.ctl_open ? in->ctl : -1, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = in->on_watch ? in->watch_fd : -1, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = s.err_open ? in->err_fd : -1, .events = POLLIN};
		nfds_t nrelay = 0;
		if (in->master >= 0)
			pty_relay_fill_pollfds(&s.relay, pfd + n, &nrelay);
		nfds_t iask = n + nrelay;
		pfd[iask] = askprompt_fill(&s.ask, in->in_fd);
		nfds_t iext = iask + 1, next = 0;
		if (in->ext_fill)
			next = in->ext_fill(in->ext_arg, pfd + iext, SUPERVISE_EXT_MAX);
		int timeout = ask_timeout;
		if (s.deadline) {
			long long left = s.deadline - clock_mono_ms();
			timeout = left > 0 && (timeout < 0 || left < timeout) ? (int)left
				  : left > 0					? timeout
										: 0;
		}
		int r = poll(pfd, iext + next, timeout);
		if (r < 0 && errno != EINTR) {
			sb_free(&s.status);
			sb_free(&s.errtext);
			if (in->jail)
				in->jail->priv = NULL;
			return err_set(e, errno, NULL, "poll failed while supervising the jail");
		}
		if (s.deadline && clock_mono_ms() >= s.deadline && !out->killed) {
			out->killed = true; /* the grace period is over */
			(void)kill(in->bwrap, SIGKILL);
		}
		if (r < 0)
			continue;
		if (next && r > 0)
			in->ext_handle(in->ext_arg, pfd + iext, next);
		if (in->master >= 0) {
			bool can = s.out_tty && s.raw_on && s.relay.in_fd >= 0 && !s.relay.master_eof;
			ask_timeout = askprompt_step(&s.ask, &s.relay, in->in_fd, in->tty_fd,
						     in->master, can, &pfd[iask]);
		}
		if (r == 0)
			continue;
		if (pfd[1].revents & POLLIN)
			on_signal(&s);
		if (pfd[2].revents & (POLLIN | POLLHUP | POLLERR))
			on_control(&s);
		if (pfd[3].revents & POLLIN) {
			/* what the command wrote before the violation goes out before its line
			 * (issue 26); a command that never stops writing costs 100 ms at most */
			if (in->master >= 0)
				(void)pty_relay_flush(&s.relay, 100);
			in->on_watch(in->watch_arg);
		}
		if (pfd[4].revents & (POLLIN | POLLHUP | POLLERR))
			on_err(&s);
		if (nrelay) {
			struct err re = {0};
			/* a relay error (the user's terminal went away) must not end the jail's
			 * supervision: stop relaying, keep waiting for the command */
			if (pty_relay_handle(&s.relay, pfd + n, nrelay, &re) < 0)
				in->master = -1;
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))
			on_status(&s);
	}
	/* init's last word (CTL_EXIT) may still wait in the socket when bwrap's pipe closes */
	while (s.ctl_open) {
		struct pollfd cp = {.fd = in->ctl, .events = POLLIN};
		if (poll(&cp, 1, 0) <= 0 || !(cp.revents & (POLLIN | POLLHUP | POLLERR)))
			break;
		on_control(&s);
	}
	/* bwrap has exited: what it wrote is in the pipe by now */
	if (s.err_open)
		on_err(&s);
	if (s.errtext.len)
		out->bwrap_stderr = sb_steal(&s.errtext);
	sb_free(&s.errtext);
	long v;
	if (json_int(sb_str(&s.status), "exit-code", &v)) {
		out->have_status = true;
		out->status = (int)v;
	}
	sb_free(&s.status);
	if (in->master >= 0) {
		askprompt_end(&s.ask, &s.relay, in->tty_fd, in->master);
		(void)pty_relay_drain(&s.relay, 200);
	}
	give_terminal(&s);
	if (in->jail)
		in->jail->priv = NULL;
	return 0;
}
