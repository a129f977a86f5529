/* init: `agentjail-init __init [--control FD] [--writable PATH]... [--scope] -- CMD…`, PID 1
 * of the jail (bwrap --as-pid-1).
 *
 * It checks from inside that the jail holds (all capability sets empty, no_new_privs set) and
 * refuses to run the command otherwise; applies Landlock (the writable view again, and, where
 * the kernel has it, abstract Unix sockets and signals scoped to the jail); runs the command as
 * its child in a process group of its own, made the terminal's foreground group; forwards the
 * signals it is sent and the host's requests on the control channel to that group; reports
 * stops (Ctrl-Z) so the host can give the user's terminal back; notes a lock file made beside
 * the --note-lock file (git failing to rewrite the read-only ~/.gitconfig) for the host to
 * explain; runs `agentjail exec`'s commands (CTL_EXEC) as children of its own, under what
 * confines it, and tells each client how its command ended; reaps the orphans reparented to
 * it (a bounded batch at a time, so a fork bomb cannot keep it from the rest); and, as soon
 * as the command has ended, exits with its status (128+N when it died of signal N): the
 * kernel then kills whatever is left in the jail's PID namespace, and no new process can be
 * made in it meanwhile. */
#include "core/jail/init.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "core/jail/capinit.h"
#include "core/jail/ctl.h"
#include "core/jail/bindcheck.h"
#include "core/plan/initargs.h"
#include "core/confine/capfilter.h"
#include "core/plan/execwire.h"
#include "core/plan/pubwire.h"
#include "core/confine/landlock.h"
#include "util/fdmsg.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/strv.h"

/* This runs as the jail's PID 1, so it reports on stderr itself: there is no command layer
 * between it and the user. */
static int fail(const char *what, int err)
{
	fprintf(stderr, "agentjail: jail init: %s%s%s\n", what, err ? ": " : "",
		err ? strerror(err) : "");
	return 125;
}

/* The signals init was started ignoring (SigIgn): all of them until it is read. */
static uint64_t sig_ignored = ~0ULL;

/* All five capability sets must be empty. 1 yes, 0 no, -1 unreadable. Read whole at once (the
 * file is ≈ 1.5 KB): stdio's line reads took twice the system calls. Notes SigIgn on the way
 * (default_signals). */
static int caps_are_zero(void)
{
	char buf[8192];
	if (fs_read_small("/proc/self/status", buf, sizeof buf) < 0)
		return -1;
	int seen = 0, nonzero = 0;
	for (const char *line = buf; *line;) {
		const char *eol = strchr(line, '\n');
		const char *colon = strchr(line, ':');
		if (!strncmp(line, "Cap", 3) && colon && (!eol || colon < eol)) {
			seen++;
			if (strtoull(colon + 1, NULL, 16) != 0)
				nonzero++;
		} else if (!strncmp(line, "SigIgn:", 7)) {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(line + 7, &end, 16);
			if (!errno && end != line + 7 && (*end == '\n' || !*end))
				sig_ignored = v;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return seen == 5 && nonzero == 0 ? 1 : 0;
}

/* Every signal's disposition back to the default, in a child about to exec a command. init
 * installs no handler (it reads a signalfd) and exec resets caught signals anyway, so only
 * those init was started ignoring need it: one or two calls instead of 64 (if the status could
 * not be read, all of them). */
static void default_signals(void)
{
	struct sigaction dfl = {0};
	dfl.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG && s <= 64; s++)
		if (sig_ignored & (1ULL << (s - 1)))
			(void)sigaction(s, &dfl, NULL);
}

/* Keep only 0-2 and the control channel: bwrap's bind fds must not reach the command (a
 * directory fd leads back to the host). */
static int close_inherited(int ctl)
{
	if (ctl < 0)
		return (int)syscall(SYS_close_range, 3U, ~0U, 0);
	if (ctl > 3 && syscall(SYS_close_range, 3U, (unsigned)ctl - 1, 0) < 0)
		return -1;
	if (syscall(SYS_close_range, (unsigned)ctl + 1, ~0U, 0) < 0)
		return -1;
	return fcntl(ctl, F_SETFD, FD_CLOEXEC);
}

/* Landlock on init itself; *report is the CTL_LANDLOCK value for the host, *ruleset the
 * enforced ruleset's descriptor (or -1), closed after the command's fork: freeing its rules
 * need not hold the command up. */
static int apply_landlock(const struct init_args *a, int *report, int *ruleset)
{
	struct landlock_opts lo = {.writable = (const char *const *)a->writable.v,
				   .nwritable = a->writable.n,
				   .deny_read = (const char *const *)a->deny_read.v,
				   .ndeny_read = a->deny_read.n,
				   .scope = a->scope,
				   .keep_ruleset = ruleset};
	struct landlock_report rep = {0};
	struct err e = {0};
	if (landlock_apply(&lo, &rep, &e) < 0) {
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		fprintf(stderr, "agentjail: jail init: Landlock: %s\n", buf);
		return -1;
	}
	/* tell the command what holds it (tools and `verify` read this; it is not a secret) */
	char desc[64];
	snprintf(desc, sizeof desc, "abi=%d%s%s%s", rep.abi, rep.fs_applied ? ",fs" : "",
		 rep.scoped ? ",scoped" : "", rep.read_denied ? ",deny-read" : "");
	(void)setenv("AGENTJAIL_LANDLOCK", desc, 1);
	*report = (rep.abi & 0xff) | (rep.fs_applied ? CTL_LL_FS : 0) |
		  (rep.scoped ? CTL_LL_SCOPED : 0);
	return 0;
}

/* The limits a host without a cgroup scope enforces here (cgroup.h). RLIMIT_NPROC is set in
 * the jail, after bwrap made its user namespace: Linux counts it per user namespace and uid,
 * so it counts the jail's processes and none of the user's others. Soft and hard: the jail
 * has no CAP_SYS_RESOURCE to raise it again. */
static int apply_rlimits(const struct init_args *a)
{
	struct rlimit rl;
	if (a->rlimit_data) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)a->rlimit_data;
		if (setrlimit(RLIMIT_DATA, &rl) < 0)
			return fail("cannot set RLIMIT_DATA (--memory)", errno);
	}
	if (a->rlimit_nproc) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)a->rlimit_nproc;
		if (setrlimit(RLIMIT_NPROC, &rl) < 0)
			return fail("cannot set RLIMIT_NPROC (--pids)", errno);
	}
	return 0;
}

/* The controlling terminal among 0-2, or -1. */
static int find_tty(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd) && tcgetsid(fd) == getsid(0))
			return fd;
	return -1;
}

/* The command's stderr, sent by the host (CTL_STDERR): until now fd 2 was bwrap's, a pipe to
 * the host, so nothing the command writes can pass for bwrap's words
 * (core/backend/bwrap/bwrapmsg.h). */
static int take_stderr(int fd)
{
	return dup2(fd, 2) < 0 ? -1 : 0;
}

/* The identities of the binds (CTL_BINDS: a memfd the host filled, core/jail/bindcheck.h),
 * read whole into t. A table past BINDS_MAX is refused: nothing honest is that large. */
#define BINDS_MAX (4u << 20)
static int take_binds(int fd, struct strbuf *t)
{
	char buf[8192];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : 0;
		if (t->len + (size_t)n > BINDS_MAX) {
			errno = EFBIG;
			return -1;
		}
		sb_addn(t, buf, (size_t)n);
	}
}

static int stat_id(const char *path, struct bindcheck_id *out)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return -errno;
	out->dev = (unsigned long long)st.st_dev;
	out->ino = (unsigned long long)st.st_ino;
	out->type = st.st_mode & S_IFMT;
	return 0;
}

/* Every bind shows, in the jail's final view, the inode agentjail opened (doc/design.md §3,
 * "Mount identity"); otherwise the command does not start. */
static int check_binds(const struct strbuf *t)
{
	struct err e = {0};
	if (bindcheck_verify(t->s, t->len, stat_id, &e) == 0)
		return 0;
	char buf[ERR_FMT_MAX];
	err_format(&e, buf, sizeof buf);
	fprintf(stderr, "agentjail: jail init: refusing to run: %s\n", buf);
	return -1;
}

static const int fwd_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
#define NFWD (sizeof fwd_sigs / sizeof *fwd_sigs)

/* --capture (--net allow): the command's connects go to agentjail's proxy, which decides them
 * (doc/design.md §4). Installed in the child, so init itself is never held on one; the listener
 * and the proxy's end of init's channel (chan: Unix-socket connects are carried out by init,
 * core/jail/capinit.h) reach the host before the command runs, and are not kept here. */
static int capture_connects(const struct init_args *a, int chan)
{
	int lfd = -1;
	struct err e = {0};
	if (a->ctl < 0 || chan < 0)
		err_set(&e, 0, "", "connection capture: no channel to hand its listener to");
	else if (capfilter_install(&lfd, &e) == 0 &&
		 ctl_send_fds(a->ctl, CTL_CAPTURE, 0, (int[]){lfd, chan}, 2) < 0)
		err_set(&e, errno, "", "connection capture: cannot hand its listener to the host");
	if (lfd >= 0)
		(void)close(lfd);
	if (!e.what[0])
		return 0;
	char buf[ERR_FMT_MAX];
	err_format(&e, buf, sizeof buf);
	fprintf(stderr, "agentjail: jail init: %s; the command was not run\n", buf);
	return -1;
}

/* In the child: its own process group, the terminal's foreground, the parent's signal mask
 * back, the capture of its connects (--capture), then the command. Reports an exec failure
 * on the control channel. */
static void exec_command(const struct init_args *a, int tty, const sigset_t *orig, int chan)
{
	(void)setpgid(0, 0);
	if (tty >= 0)
		(void)tcsetpgrp(tty, getpid()); /* SIGTTOU is blocked here */
	default_signals();
	(void)sigprocmask(SIG_SETMASK, orig, NULL);
	if (a->capture && capture_connects(a, chan) < 0)
		_exit(125);
	execvp(a->cmd[0], a->cmd);
	int err = errno;
	fprintf(stderr, "agentjail: cannot run %s: %s\n", a->cmd[0], strerror(err));
	if (a->ctl >= 0)
		(void)ctl_send(a->ctl, CTL_EXEC_FAILED, err);
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

#define EXECS_MAX 16 /* `agentjail exec` commands at once */

struct loop {
	const struct init_args *a;
	int tty;
	int capchan;  /* --capture: init's end of the capture channel, -1 without */
	pid_t child;
	int status;   /* -1 while the command runs */
	bool signalled; /* it died of a signal */
	bool froze_all; /* every process in the jail was stopped with the command */
	int lock_fd;    /* inotify on the --note-lock file's directory, or -1 */
	char *lock_name; /* the lock file's name there: NAME.lock */
	int notes;      /* CTL_NOTE bits seen */
	bool more;    /* orphans may wait to be reaped: poll without blocking */
	int pub;      /* the publish channel (CTL_PUBLISH), or -1 */
	const sigset_t *orig; /* the signal mask a command starts with */
	struct execd {        /* `agentjail exec`'s commands running: their exec channels */
		pid_t pid;
		int chan;
		bool hung_up;  /* the client is gone: its command was sent SIGHUP */
	} execs[EXECS_MAX];
	size_t nexecs;
};

/* One request of the host on the publish channel (core/plan/pubwire.h): a socket of the jail's
 * network namespace connecting to a published port of its loopback, and only such a port: init
 * is no connect-anywhere service (doc/design.md §4, "Dev servers"). Non-blocking, so a full
 * backlog never holds PID 1; the host waits for the connect's end. false: the channel is
 * gone. */
static bool serve_publish(struct loop *l)
{
	struct pubwire_msg m;
	ssize_t r = fdmsg_recv(l->pub, &m, sizeof m, NULL, 0, MSG_DONTWAIT);
	if (r == 0 || (r < 0 && errno != EAGAIN))
		return false;
	if (r != (ssize_t)sizeof m)
		return true; /* nothing now, or not a message of the host's */
	unsigned port = (unsigned)m.value & 0xffff;
	bool v6 = m.value & PUB_V6;
	bool known = false;
	for (size_t i = 0; i < l->a->publish.n; i++)
		known |= strtoul(l->a->publish.v[i], NULL, 10) == port;
	int err = m.type != PUB_CONNECT ? EINVAL : !known || !port ? EPERM : 0;
	int fd = err ? -1
		     : socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (!err && fd < 0)
		err = errno;
	if (fd >= 0) {
		struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
					  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
		int c = v6 ? connect(fd, (struct sockaddr *)&a6, sizeof a6)
			   : connect(fd, (struct sockaddr *)&a4, sizeof a4);
		if (c < 0 && errno != EINPROGRESS)
			err = errno;
	}
	struct pubwire_msg a = {.type = err ? PUB_REFUSED : PUB_SOCKET, .value = err};
	int sent = fdmsg_send(l->pub, &a, sizeof a, &fd, err ? 0 : 1, 0);
	if (fd >= 0)
		(void)close(fd);
	return sent == 0;
}

/* --note-lock PATH: watch PATH's directory for PATH.lock being made (git writes a config file by
 * making NAME.lock and renaming it over NAME; over a read-only bind the rename fails with EBUSY
 * and git removes the lock, so its creation is the one trace). Best effort: without it, no
 * hint. */
static void watch_lock(struct loop *l)
{
	l->lock_fd = -1;
	if (!l->a->note_lock || l->a->note_lock[0] != '/')
		return;
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (fd < 0)
		return;
	char *dir = path_dirname(l->a->note_lock);
	if (inotify_add_watch(fd, dir, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW) < 0) {
		free(dir);
		(void)close(fd);
		return;
	}
	free(dir);
	size_t n = strlen(path_basename(l->a->note_lock));
	l->lock_name = malloc(n + sizeof ".lock");
	if (!l->lock_name) {
		(void)close(fd);
		return;
	}
	memcpy(l->lock_name, path_basename(l->a->note_lock), n);
	memcpy(l->lock_name + n, ".lock", sizeof ".lock");
	l->lock_fd = fd;
}

static void on_lock_events(struct loop *l)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(l->lock_fd, buf, sizeof buf)) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			if (ev->len && !strcmp(ev->name, l->lock_name))
				l->notes |= CTL_NOTE_LOCK;
			p += sizeof *ev + ev->len;
		}
	}
}

/* The command stopped (Ctrl-Z): stop everything else in the jail too, or a process that left its
 * process group (setsid, a daemon) would go on running while the user's shell says "Stopped".
 * PID 1's kill(-1) reaches every process of its namespace but itself; SIGSTOP, because a
 * process can neither catch nor ignore it, and an orphaned group discards SIGTSTP. */
static void freeze_jail(struct loop *l)
{
	if (kill(-1, SIGSTOP) == 0 || errno == ESRCH)
		l->froze_all = true;
}

/* `fg`/`bg`: what freeze_jail stopped runs again. Only after a freeze: a process stopped inside
 * the jail for its own reasons (a job of an inner shell) is not continued by a stray SIGCONT. */
static void thaw_jail(struct loop *l)
{
	if (!l->froze_all)
		return;
	(void)kill(-1, SIGCONT);
	l->froze_all = false;
}

/* ---- `agentjail exec` (doc/design.md §5, "ps, exec, stop") ---- */

static void exec_reply(int chan, uint32_t type, int32_t value)
{
	struct execwire_msg m = {.type = type, .value = value};
	(void)fdmsg_send(chan, &m, sizeof m, NULL, 0, MSG_DONTWAIT); /* a client gone: no matter */
}

/* In the child: a session of its own (its terminal, when it has one, its controlling one), the
 * three fds as 0-2 and no other, signals as a command starts with them, then the command.
 * Everything that confines the jail is inherited from init: nothing is lifted. Under
 * --capture one thing is added: connect and listen refused (capfilter_refuse), since no
 * capture serves this process and a socket the capture handed the command (a host socket)
 * would otherwise connect anywhere here (doc/design.md §5, "ps, exec, stop"). */
static void exec_child(const int fds[4], unsigned flags, char **argv, const sigset_t *orig,
		       bool capture)
{
	(void)setsid();
	for (int i = 0; i < 3; i++)
		if (dup2(fds[1 + i], i) < 0)
			_exit(125);
	if (flags & EXW_TTY)
		for (int i = 0; i < 3; i++)
			if (isatty(i) && ioctl(i, TIOCSCTTY, 0) == 0)
				break;
	default_signals();
	(void)sigprocmask(SIG_SETMASK, orig, NULL);
	if (syscall(SYS_close_range, 3U, ~0U, 0) < 0)
		_exit(125);
	struct err e = {0};
	if (capture && capfilter_refuse(&e) < 0) {
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		fprintf(stderr, "agentjail: exec: %s; the command was not run\n", buf);
		_exit(125);
	}
	execvp(argv[0], argv);
	int err = errno;
	fprintf(stderr, "agentjail: exec: cannot run %s: %s\n", argv[0], strerror(err));
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* CTL_EXEC: fds are the exec channel and the command's stdin, stdout, stderr (all taken). The
 * request waits on the channel (the client wrote it before handing the channel on). */
static void spawn_exec(struct loop *l, int fds[4])
{
	static char buf[EXECWIRE_MAX + 1]; /* init is one thread */
	int chan = fds[0];
	int err = 0;
	unsigned flags = 0;
	size_t argc = 0;
	char *argv[EXECWIRE_ARGS_MAX + 2];
	ssize_t n = chan >= 0 ? fdmsg_recv(chan, buf, sizeof buf, NULL, 0, MSG_DONTWAIT) : -1;
	if (chan < 0 || fds[1] < 0 || fds[2] < 0 || fds[3] < 0)
		err = EBADF;
	else if (n <= 0 || n > EXECWIRE_MAX ||
		 execwire_unpack(buf, (size_t)n, &flags, argv, EXECWIRE_ARGS_MAX, &argc) < 0)
		err = EINVAL;
	else if (l->nexecs >= EXECS_MAX)
		err = EAGAIN;
	if (!err && argc == 0) { /* the jail's shell */
		const char *sh = getenv("SHELL");
		argv[0] = (char *)(sh && sh[0] == '/' ? sh : "/bin/sh");
		argv[1] = NULL;
	}
	pid_t pid = err ? -1 : fork();
	if (!err && pid < 0)
		err = errno;
	if (pid == 0)
		exec_child(fds, flags, argv, l->orig, l->a->capture);
	for (int i = 1; i < 4; i++)
		if (fds[i] >= 0)
			(void)close(fds[i]);
	if (chan < 0)
		return;
	if (err) {
		exec_reply(chan, EXW_REFUSED, err);
		(void)close(chan);
		return;
	}
	l->execs[l->nexecs++] = (struct execd){pid, chan, false};
	exec_reply(chan, EXW_STARTED, pid);
}

/* The client of exec'd command pid said something on its channel: a signal to pass to the
 * command's session (EXW_SIGNAL), or, at EOF, that it is gone: SIGHUP, as a terminal's
 * hangup, so nothing it started lingers unwatched. */
static void exec_client(struct loop *l, pid_t pid)
{
	for (size_t i = 0; i < l->nexecs; i++) {
		struct execd *x = &l->execs[i];
		if (x->pid != pid || x->hung_up)
			continue;
		struct execwire_msg m;
		ssize_t r = fdmsg_recv(x->chan, &m, sizeof m, NULL, 0, MSG_DONTWAIT);
		if (r == (ssize_t)sizeof m && m.type == EXW_SIGNAL && m.value > 0 && m.value < NSIG) {
			(void)kill(-pid, m.value);
		} else if (r == 0 || (r < 0 && errno != EAGAIN)) {
			x->hung_up = true;
			(void)kill(-pid, SIGHUP);
			(void)kill(-pid, SIGCONT);
		}
		return;
	}
}

/* An orphan reaped: when it was an exec'd command, its client hears how it ended. */
static void exec_reaped(struct loop *l, pid_t p, int ws)
{
	for (size_t i = 0; i < l->nexecs; i++) {
		if (l->execs[i].pid != p)
			continue;
		exec_reply(l->execs[i].chan, EXW_EXITED,
			   WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws));
		(void)close(l->execs[i].chan);
		l->execs[i] = l->execs[--l->nexecs];
		return;
	}
}

/* How many orphans one turn of the loop reaps: a fork bomb makes them faster than a starved
 * PID 1 reaps them, so "until none is left" never ends. */
#define REAP_BATCH 64

static void command_ended(struct loop *l, int ws)
{
	l->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	l->signalled = WIFSIGNALED(ws);
}

/* The command first (stopped, or ended), then at most REAP_BATCH orphans reparented to us;
 * once the command has ended the rest is not waited for: PID 1's exit takes it along. */
static void reap(struct loop *l)
{
	int ws;
	pid_t p = waitpid(l->child, &ws, WNOHANG | WUNTRACED);
	if (p == l->child && WIFSTOPPED(ws)) {
		freeze_jail(l);
		if (l->a->ctl >= 0)
			(void)ctl_send(l->a->ctl, CTL_STOPPED, WSTOPSIG(ws));
	} else if (p == l->child) {
		command_ended(l, ws);
	}
	int n = 0;
	while (l->status < 0 && n < REAP_BATCH && (p = waitpid(-1, &ws, WNOHANG)) > 0) {
		if (p == l->child) /* it ended just now */
			command_ended(l, ws);
		else
			exec_reaped(l, p, ws);
		n++;
	}
	l->more = n == REAP_BATCH;
}

static void on_signal(struct loop *l, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	if (sig == SIGCHLD) {
		reap(l);
		return;
	}
	/* signals from a terminal reached the command's group already; forward only those a
	 * process sent to us (kill, the host on SIGTERM) */
	if (si->ssi_code == SI_USER || si->ssi_code == SI_QUEUE)
		(void)kill(-l->child, sig);
}

static void on_control(struct loop *l, bool *ctl_open)
{
	struct ctl_msg m;
	int fds[CTL_FDS_MAX] = {-1, -1, -1, -1};
	int r = ctl_recv_fds(l->a->ctl, &m, fds, CTL_FDS_MAX);
	if (r <= 0) {
		/* the host is gone: --die-with-parent ends the jail; stop listening */
		*ctl_open = false;
		return;
	}
	if (m.type == CTL_EXEC) {
		spawn_exec(l, fds); /* takes them */
		return;
	}
	for (int i = 0; i < CTL_FDS_MAX; i++)
		if (fds[i] >= 0)
			(void)close(fds[i]);
	if (m.type == CTL_CONT) {
		if (l->tty >= 0)
			(void)tcsetpgrp(l->tty, l->child);
		thaw_jail(l);
		(void)kill(-l->child, SIGCONT);
	} else if (m.type == CTL_SIGNAL && m.value > 0 && m.value < NSIG) {
		(void)kill(-l->child, m.value);
	}
}

static int run_loop(struct loop *l, int sfd)
{
	bool ctl_open = l->a->ctl >= 0;
	while (l->status < 0) {
		struct pollfd pfd[5 + EXECS_MAX] = {{.fd = sfd, .events = POLLIN},
						    {.fd = ctl_open ? l->a->ctl : -1, .events = POLLIN},
						    {.fd = l->lock_fd, .events = POLLIN},
						    {.fd = l->capchan, .events = POLLIN},
						    {.fd = l->pub, .events = POLLIN}};
		pid_t epid[EXECS_MAX]; /* the exec'd commands whose clients are polled */
		size_t ne = 0;
		for (size_t i = 0; i < l->nexecs; i++)
			if (!l->execs[i].hung_up) {
				epid[ne] = l->execs[i].pid;
				pfd[5 + ne++] = (struct pollfd){.fd = l->execs[i].chan, .events = POLLIN};
			}
		int n = poll(pfd, 5 + ne, l->more ? 0 : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail("poll failed", errno);
		}
		if (n == 0 && l->more) /* no signal, no message: reap on */
			reap(l);
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
				on_signal(l, &si);
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))
			on_control(l, &ctl_open);
		if (pfd[2].revents & POLLIN)
			on_lock_events(l);
		if ((pfd[3].revents & (POLLIN | POLLHUP | POLLERR)) && !capinit_serve(l->capchan)) {
			(void)close(l->capchan); /* the host is gone */
			l->capchan = -1;
		}
		if ((pfd[4].revents & (POLLIN | POLLHUP | POLLERR)) && !serve_publish(l)) {
			(void)close(l->pub); /* the host is gone */
			l->pub = -1;
		}
		for (size_t i = 0; i < ne; i++) /* by pid: a reap above may have moved the table */
			if (pfd[5 + i].revents & (POLLIN | POLLHUP | POLLERR))
				exec_client(l, epid[i]);
	}
	if (l->lock_fd >= 0)
		on_lock_events(l); /* what came just before the command's end */
	if (l->a->ctl >= 0 && l->notes)
		(void)ctl_send(l->a->ctl, CTL_NOTE, l->notes);
	if (l->a->ctl >= 0)
		(void)ctl_send(l->a->ctl, CTL_EXIT,
			       l->status | (l->signalled ? CTL_EXIT_SIGNALLED : 0));
	return l->status; /* PID 1 exiting takes the rest of the jail with it */
}

int init_main(int argc, char **argv)
{
	struct init_args a;
	if (initargs_parse(argc, argv, &a) < 0)
		return fail("usage: __init [--control FD] [--writable PATH]... [--deny-read PATH]... "
			    "[--scope] [--rlimit-data N] [--rlimit-nproc N] [--note-lock PATH] "
			    "[--capture] [--publish PORT]... -- CMD",
			    0);
	if (close_inherited(a.ctl) < 0)
		return fail("cannot close inherited file descriptors", errno);
	int z = caps_are_zero();
	if (z != 1)
		return fail(z < 0 ? "cannot read /proc/self/status"
				  : "capabilities are not empty: refusing to run",
			    0);
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return fail("no_new_privs is not set: refusing to run", 0);
	/* before Landlock, which could refuse reading the directory; close-on-exec, so the
	 * command never holds it */
	struct loop l = {.a = &a, .status = -1, .capchan = -1, .pub = -1};
	watch_lock(&l);
	int ll_report = 0, ruleset = -1;
	if (apply_landlock(&a, &ll_report, &ruleset) < 0 || apply_rlimits(&a) < 0)
		return 125;
	/* not dumpable: otherwise the command (same uid) could open /proc/1/mem and write into
	 * init, which holds the control channel to the host (fake exits, fake stops). The
	 * command's exec makes it dumpable again; init stays closed. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return fail("cannot make init non-dumpable", errno);

	/* PID 1 only receives signals it handles or blocks: block them and read a signalfd.
	 * TTOU/TTIN/TSTP too, so init itself never stops on the terminal. */
	sigset_t set, orig;
	sigemptyset(&set);
	for (size_t k = 0; k < NFWD; k++)
		sigaddset(&set, fwd_sigs[k]);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTTOU);
	sigaddset(&set, SIGTTIN);
	sigaddset(&set, SIGTSTP);
	if (sigprocmask(SIG_BLOCK, &set, &orig) < 0)
		return fail("cannot block signals", errno);
	sigset_t wanted = set;
	sigdelset(&wanted, SIGTTOU);
	sigdelset(&wanted, SIGTTIN);
	sigdelset(&wanted, SIGTSTP);
	int sfd = signalfd(-1, &wanted, SFD_CLOEXEC);
	if (sfd < 0)
		return fail("cannot create a signalfd", errno);

	/* the host records the session while bwrap builds the jail; the command starts only
	 * once that is done. A signal passed on before then ends the jail without running it. */
	struct strbuf binds = STRBUF_INIT;
	for (bool go = a.ctl < 0; !go;) {
		struct ctl_msg m;
		int got;
		int r = ctl_recv_fd(a.ctl, &m, &got);
		if (r <= 0)
			return fail("the host went away before the command started", r < 0 ? errno : 0);
		if (m.type == CTL_STDERR && got >= 0 && take_stderr(got) < 0)
			return fail("cannot take the command's stderr", errno);
		if (m.type == CTL_BINDS && got >= 0 && take_binds(got, &binds) < 0)
			return fail("cannot read the binds' identities", errno);
		if (m.type == CTL_PUBLISH && got >= 0 && l.pub < 0 && a.publish.n) {
			l.pub = got; /* close-on-exec (ctl_recv_fd): the command never holds it */
			got = -1;
		}
		if (got >= 0)
			(void)close(got);
		if (m.type == CTL_GO)
			go = true;
		else if (m.type == CTL_SIGNAL)
			return 128 + m.value;
	}
	if (check_binds(&binds) < 0)
		return 125;
	sb_free(&binds);
	int tty = find_tty();
	int chan[2] = {-1, -1};
	if (a.capture && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0)
		return fail("connection capture: cannot create its channel", errno);
	pid_t child = fork();
	if (child < 0)
		return fail("cannot fork", errno);
	if (child == 0)
		exec_command(&a, tty, &orig, chan[1]);
	if (chan[1] >= 0)
		(void)close(chan[1]);
	if (ruleset >= 0) /* close-on-exec: the command never holds it */
		(void)close(ruleset);
	/* both sides set the group, whichever runs first */
	(void)setpgid(child, child);
	if (tty >= 0)
		(void)tcsetpgrp(tty, child);
	/* the host only records CTL_LANDLOCK: told now, its wakeup is no longer between init's
	 * Landlock and the command's fork */
	if (a.ctl >= 0) {
		(void)ctl_send(a.ctl, CTL_LANDLOCK, ll_report);
		(void)ctl_send(a.ctl, CTL_READY, child);
	}
	l.tty = tty;
	l.child = child;
	l.orig = &orig;
	l.capchan = chan[0];
	return run_loop(&l, sfd);
}
