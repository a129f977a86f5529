/* launch: host self-hardening, trusted bwrap lookup, fd plumbing, and waiting for the jail. */
#include "core/backend/bwrap/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/confine/cgroup.h"
#include "core/jail/ctl.h"
#include "core/jail/gitscan_check.h"
#include "core/jail/initbin.h"
#include "core/backend/bwrap/netns.h"
#include "core/backend/bwrap/ovlns.h"
#include "core/jail/pty.h"
#include "core/jail/suidscan.h"
#include "core/jail/supervise.h"
#include "core/jail/guard.h"
#include "core/jail/bindcheck.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* The file and every directory above it: owned by root, not writable by group or others. */
static int check_trusted(const char *path, struct err *e)
{
	_cleanup_free_ char *real = realpath(path, NULL);
	if (!real)
		return err_set(e, errno, path, "cannot use bwrap");
	struct stat st;
	if (stat(real, &st) < 0)
		return err_set(e, errno, real, "cannot use bwrap");
	if (!S_ISREG(st.st_mode) || access(real, X_OK) < 0)
		return err_set(e, EACCES, real, "bwrap is not an executable file");
	_cleanup_free_ char *cur = xstrdup(real);
	for (;;) {
		if (stat(cur, &st) < 0)
			return err_set(e, errno, cur, "cannot check bwrap's location");
		if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
			err_set(e, 0, real,
				"bwrap is not trusted: %s is %s", cur,
				st.st_uid != 0 ? "not owned by root"
					       : "writable by group or others");
			err_hint(e, "install bubblewrap from your distribution (apt-get install "
				    "bubblewrap) or point AGENTJAIL_BWRAP at a root-owned copy in "
				    "root-owned directories");
			return -1;
		}
		if (!strcmp(cur, "/"))
			break;
		char *up = path_dirname(cur);
		free(cur);
		cur = up;
	}
	return 0;
}

int launch_find_bwrap(const char *configured, char **out, struct err *e)
{
	if (configured && *configured) {
		if (configured[0] != '/')
			return err_set(e, 0, configured, "AGENTJAIL_BWRAP must be an absolute path");
		if (check_trusted(configured, e) < 0)
			return -1;
		*out = xstrdup(configured);
		return 0;
	}
	static const char *const cands[] = {"/usr/bin/bwrap", "/usr/local/bin/bwrap", NULL};
	struct err first = {0};
	bool seen = false;
	for (size_t i = 0; cands[i]; i++) {
		if (access(cands[i], F_OK) < 0)
			continue;
		struct err tmp = {0};
		if (check_trusted(cands[i], &tmp) == 0) {
			*out = xstrdup(cands[i]);
			return 0;
		}
		if (!seen)
			first = tmp;
		seen = true;
	}
	if (seen) {
		if (e)
			*e = first;
		return -1;
	}
	err_set(e, ENOENT, "/usr/bin/bwrap", "bubblewrap (bwrap) is not installed");
	err_hint(e, "apt-get install bubblewrap; agentjail never runs a command unsandboxed "
		    "in its place");
	return -1;
}

/* A bind source opened as O_PATH without following a symlink anywhere on its path (fs.h);
 * *st is what was opened. */
static int open_nofollow(const char *path, struct stat *st, struct err *e)
{
	int fd = fs_open_nofollow(path, O_PATH);
	if (fd >= 0 && fstat(fd, st) < 0) {
		int saved = errno;
		(void)close(fd);
		fd = -1;
		errno = saved;
	}
	if (fd >= 0 && S_ISLNK(st->st_mode)) {
		(void)close(fd); /* the component-wise fallback of old kernels returns a last link */
		fd = -1;
		errno = ELOOP;
	}
	if (fd >= 0)
		return fd;
	err_set(e, errno, path, "cannot open bind source without following symlinks");
	err_hint(e, errno == ELOOP ? "a symlink appeared on the way since the jail was "
				     "planned; agentjail does not follow it"
				   : "the path changed while the jail was being set up");
	return -1;
}

/* A memfd holding buf, read from its start: what bwrap reads (`what` names it in errors). */
static int data_fd(const char *what, const char *buf, size_t len, struct err *e)
{
	int fd = memfd_create("agentjail-bwrap-data", MFD_CLOEXEC);
	if (fd < 0)
		return err_set(e, errno, NULL, "cannot create the memfd for %s", what);
	if (fs_write_all(fd, buf, len) < 0) {
		int saved = errno;
		(void)close(fd);
		return err_set(e, saved, NULL, "cannot write %s", what);
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		int saved = errno;
		(void)close(fd);
		return err_set(e, saved, NULL, "cannot rewind %s", what);
	}
	return fd;
}

static int args_fd(const struct bw_plan *plan, struct err *e)
{
	struct strv argv = STRV_INIT;
	bw_plan_argv(plan, &argv);
#ifdef AJ_TEST_BUILD
	/* test builds only: words appended to bwrap's options, so a test can make the real bwrap
	 * fail during setup (tests/sh/96-violations.t) */
	const char *extra = getenv("AGENTJAIL_TEST_BWRAP_EXTRA");
	_cleanup_free_ char *words = extra ? xstrdup(extra) : NULL;
	char *save = NULL;
	for (char *w = words ? strtok_r(words, " ", &save) : NULL; w; w = strtok_r(NULL, " ", &save))
		strv_push(&argv, w);
#endif
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < argv.n; i++)
		sb_addn(&b, argv.v[i], strlen(argv.v[i]) + 1);
	strv_free(&argv);
	int fd = data_fd("bwrap's arguments", b.s, b.len, e);
	sb_free(&b);
	return fd;
}

/* fds the child must find at fixed numbers */
struct fdmap {
	int *src;
	int *dst;
	size_t n;
	char **argv; /* bwrap --args N -- COMMAND… */
	const struct cg_scope *cg; /* the jail's cgroup scope, or NULL */
	const struct netns_fds *ns;    /* --net allow: the holder's namespaces to join, or NULL */
	const struct ovlns_req *ovl;   /* --fs review: the overlay's part, or NULL */
};

static void fdmap_add(struct fdmap *m, int src, int dst)
{
	m->src = xrealloc(m->src, (m->n + 1) * sizeof *m->src);
	m->dst = xrealloc(m->dst, (m->n + 1) * sizeof *m->dst);
	m->src[m->n] = src;
	m->dst[m->n] = dst;
	m->n++;
}

static void fdmap_close(struct fdmap *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->src[i] >= 0)
			(void)close(m->src[i]);
	free(m->src);
	free(m->dst);
	memset(m, 0, sizeof *m);
}

/* In the vfork child: move every fd to its number (through a range above every source and
 * target, so no source is overwritten before it is moved), close the rest, exec bwrap. The
 * child shares our memory until execve: it only makes system calls and writes nothing but its
 * own stack. Never returns. */
static void child_exec(const char *bwrap, const struct fdmap *m, int base, const sigset_t *mask,
		       int slave, unsigned which)
{
	static const char msg[] = "agentjail: cannot start bwrap\n";
	static const char cgmsg[] = "agentjail: cannot enter the jail's cgroup\n";
	static const char nsmsg[] = "agentjail: --net allow: cannot join the jail's network "
				    "namespace (setns)\n";
	/* first: the fds below are about to be renumbered */
	if (m->cg && cg_scope_enter(m->cg) < 0) {
		ssize_t w = write(2, cgmsg, sizeof cgmsg - 1);
		(void)w;
		_exit(125);
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(125);
	/* a session of its own: no signal for our process group or our terminal reaches the
	 * jail except through agentjail; with a pty, that pty is its controlling terminal */
	if (which ? pty_child_setup(slave, which) < 0 : setsid() < 0)
		_exit(125);
	/* --net allow: bwrap runs in the namespaces the holder made (netns.h) */
	if (m->ns && netns_join(m->ns) < 0) {
		ssize_t w = write(2, nsmsg, sizeof nsmsg - 1);
		(void)w;
		_exit(125);
	}
	/* --fs review: the overlay mounted in a mount namespace of this child's, the sources
	 * taken from it parked above every fd moved below (the failed step is reported) */
	if (m->ovl && ovlns_enter(m->ovl) < 0)
		_exit(125);
	for (size_t i = 0; i < m->n; i++)
		if (dup3(m->src[i], base + (int)i, O_CLOEXEC) < 0)
			_exit(125);
	for (size_t i = 0; i < m->n; i++)
		if (dup2(base + (int)i, m->dst[i]) < 0) /* dup2 clears CLOEXEC on the copy */
			_exit(125);
	if (m->ovl && ovlns_place(m->ovl) < 0)
		_exit(125);
	/* everything else is close-on-exec already; this only makes sure */
	if (syscall(SYS_close_range, (unsigned)base, ~0U, 0) < 0 && errno != ENOSYS)
		_exit(125);
	(void)sigprocmask(SIG_SETMASK, mask, NULL);
	/* bwrap runs with an empty environment: nothing of ours (LD_PRELOAD…) reaches it, and
	 * the jail's environment is set explicitly with --setenv */
	char *envp[] = {NULL};
	execve(bwrap, m->argv, envp);
	ssize_t r = write(2, msg, sizeof msg - 1);
	(void)r;
	_exit(125);
}

/* Every fd the child needs, at the number the plan gave it (those of the review overlay the
 * child opens itself: ovlns.h); and in *ids the identity of each host source the jail's final
 * view shows (bindcheck.h), for init. */
static int prepare_fds(const struct bw_plan *plan, const struct seccomp_opts *sc,
		       struct fdmap *m, int *maxfd, int *status_read, struct strbuf *ids,
		       int *init_exe, struct err *e)
{
	*maxfd = BW_FD_BIND0;
	int fd = args_fd(plan, e);
	if (fd < 0)
		return -1;
	fdmap_add(m, fd, BW_FD_ARGS);
	if (seccomp_build_fd(sc, &fd, e) < 0)
		return -1;
	fdmap_add(m, fd, BW_FD_SECCOMP);
	fd = initbin_open(NULL, e); /* agentjail-init, never agentjail itself (initbin.h) */
	if (fd < 0)
		return -1;
	fdmap_add(m, fd, BW_FD_INIT);
	*init_exe = fcntl(fd, F_DUPFD_CLOEXEC, 3); /* the watch's helper too (guard.h); -1: none */
	for (size_t i = 0; i < plan->nops; i++) {
		const struct bw_op *o = &plan->ops[i];
		if (!o->src && !o->data)
			continue;
		if (o->fd > *maxfd)
			*maxfd = o->fd;
		if (o->ovl_rel)
			continue; /* the overlay's: the child opens it (ovlns_enter) */
		struct stat st;
		fd = o->data ? data_fd(o->args.v[o->args.n - 1], o->data, strlen(o->data), e)
			     : open_nofollow(o->src, &st, e);
		if (fd < 0)
			return -1;
		fdmap_add(m, fd, o->fd);
		if (o->src && bw_plan_bind_final(plan, i)) {
			struct bindcheck_id id = {.dev = (unsigned long long)st.st_dev,
						  .ino = (unsigned long long)st.st_ino,
						  .type = st.st_mode & S_IFMT};
			bindcheck_add(ids, &id, o->args.v[o->args.n - 1]);
		}
	}
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return err_set(e, errno, NULL, "cannot create the status pipe");
	fdmap_add(m, pipefd[1], BW_FD_STATUS);
	*status_read = pipefd[0];
	return 0;
}

/* vfork: no copy of our page tables (fork's cost dominates on paravirtualized hosts). Kept
 * apart so nothing of the caller's frame is live across it. */
__attribute__((noinline)) static pid_t spawn_bwrap(const char *bwrap, const struct fdmap *m,
						    int base, const sigset_t *mask, int slave,
						    unsigned which)
{
	pid_t pid = vfork();
	if (pid == 0)
		child_exec(bwrap, m, base, mask, slave, which);
	return pid;
}

/* The first fd number above every source and target. */
static int fd_base(const struct fdmap *m, int maxfd)
{
	int base = maxfd + 1;
	for (size_t i = 0; i < m->n; i++)
		if (m->src[i] >= base)
			base = m->src[i] + 1;
	return base;
}

/* The user's terminal: which of 0-2 are terminals, and the one we take size and raw mode
 * from (stdin first: it is the one we read). */
static unsigned tty_ends(int *tty_fd)
{
	unsigned which = 0;
	*tty_fd = -1;
	static const unsigned bit[3] = {PTY_STDIN, PTY_STDOUT, PTY_STDERR};
	for (int fd = 0; fd < 3; fd++) {
		if (isatty(fd)) {
			which |= bit[fd];
			if (*tty_fd < 0)
				*tty_fd = fd;
		}
	}
	return which;
}

/* A crash must not leave the user's terminal in raw mode: restore it, then die as we would. */
static void restore_and_die(int sig)
{
	pty_restore_now();
	(void)raise(sig); /* SA_RESETHAND: the default action this time */
}

static void restore_on_crash(void)
{
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
	struct sigaction sa = {.sa_handler = restore_and_die, .sa_flags = SA_RESETHAND};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
		(void)sigaction(fatal[i], &sa, NULL);
}

static const int jail_sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGWINCH,
				SIGCONT, SIGTSTP, SIGUSR1, SIGUSR2};

struct run_ctx {
	struct fdmap m;
	int maxfd;
	int status_read;
	int ctl;
	struct pty pty;
	unsigned which;
	int tty_fd;
	struct strv argv;
	const struct launch_hooks *hooks;
	struct guard *guard;       /* the protected paths' snapshot and live watch, or NULL */
	struct launch_result *r;   /* where its violations go */
	struct netns_ahead *nsa;   /* --net allow: the namespace holder (netns.h) */
	struct netns_fds ns;       /* … the namespaces it made, for the child to join */
	struct netns_listeners netl; /* … and its listeners, until net_ready takes them */
	int err_read;              /* bwrap's stderr, a pipe (bwrapmsg.h), or -1 */
	struct strbuf ids;         /* the binds' identities for init (bindcheck.h) */
	struct ovlns_req ovl;      /* --fs review: the child's part of the overlay */
	int ovl_sock;              /* … and our end of its report, or -1 */
	int pub[2];                /* --publish: the channel, [0] ours, [1] init's, or -1 */
	/* taken while bwrap builds the jail, before CTL_GO lets the command start */
	const struct strv *protect; /* the plan's protected paths */
	const char *qdir;           /* the quarantine, for the live watch */
	int init_exe;               /* agentjail-init, for the watch's unwatch helper, or -1 */
};

static void run_ctx_free(struct run_ctx *c)
{
	fdmap_close(&c->m);
	if (c->status_read >= 0)
		(void)close(c->status_read);
	if (c->ctl >= 0)
		(void)close(c->ctl);
	if (c->pty.master >= 0)
		(void)close(c->pty.master);
	if (c->pty.slave >= 0)
		(void)close(c->pty.slave);
	strv_free(&c->argv);
	netns_fds_close(&c->ns);
	netns_listeners_close(&c->netl);
	if (c->err_read >= 0)
		(void)close(c->err_read);
	c->err_read = -1;
	sb_free(&c->ids);
	ovlns_req_free(&c->ovl);
	if (c->ovl_sock >= 0)
		(void)close(c->ovl_sock);
	c->ovl_sock = -1;
	for (int i = 0; i < 2; i++)
		if (c->pub[i] >= 0)
			(void)close(c->pub[i]);
	c->pub[0] = c->pub[1] = -1;
	if (c->init_exe >= 0)
		(void)close(c->init_exe);
	c->init_exe = -1;
	guard_free(c->guard);
	c->guard = NULL;
}

/* The live watch saw something: move it aside (guard_handle) and say so at once. */
static void on_watch(void *arg)
{
	struct run_ctx *c = arg;
	size_t first = c->r->viol.n;
	size_t n = guard_handle(c->guard, &c->r->viol);
	for (size_t i = first; i < first + n; i++) {
		if (!c->hooks || !c->hooks->violation)
			continue;
		c->hooks->violation(c->hooks->arg, &c->r->viol.v[i]);
		c->r->viol.v[i].reported = true;
	}
}

/* Snapshot the protected paths and watch those missing now (the others are bound read-only):
 * the guard (core/jail/guard.h). -1 with e: no snapshot, no run. */
static int start_guard(struct run_ctx *c, struct err *e)
{
	struct guard_opts o = {.live = true};
#ifdef AJ_TEST_BUILD
	/* test builds only: no live watch, so a test reaches the check after the run */
	if (getenv("AGENTJAIL_TEST_NO_WATCH"))
		o.live = false;
#endif
	if (guard_start(c->protect, c->qdir, &o, &c->guard, &c->r->watch_err, e) < 0)
		return -1;
	c->r->watch_failed = c->r->watch_err.what[0] != '\0';
	if (guard_fd(c->guard) >= 0)
		on_watch(c); /* arms the watches */
	return 0;
}

static int setup(const struct bw_plan *plan, const char *bwrap, const struct seccomp_opts *sc,
		 struct run_ctx *c, struct err *e)
{
	strv_push(&c->argv, "bwrap");
	strv_push(&c->argv, "--args");
	strv_pushf(&c->argv, "%d", BW_FD_ARGS);
	strv_push(&c->argv, "--");
	strv_copy(&c->argv, &plan->cmd);
	c->m.argv = strv_data(&c->argv);
	(void)bwrap;
	if (prepare_fds(plan, sc, &c->m, &c->maxfd, &c->status_read, &c->ids, &c->init_exe, e) < 0)
		return -1;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return err_set(e, errno, NULL, "cannot create the control channel");
	c->ctl = sp[0];
	fdmap_add(&c->m, sp[1], BW_FD_CONTROL);
	if (BW_FD_CONTROL > c->maxfd)
		c->maxfd = BW_FD_CONTROL;
	c->which = tty_ends(&c->tty_fd);
	if (c->which && pty_open(&c->pty, c->tty_fd, e) < 0)
		return -1;
	/* bwrap's stderr: a pipe of ours until init takes the command's own (CTL_STDERR). Not
	 * when there is no stderr to give back (started with 2>&-): bwrap gets none, as before. */
	if ((c->which & PTY_STDERR) || fcntl(STDERR_FILENO, F_GETFD) >= 0) {
		int ep[2];
		if (pipe2(ep, O_CLOEXEC | O_NONBLOCK) < 0)
			return err_set(e, errno, NULL, "cannot create the pipe for bwrap's messages");
		c->err_read = ep[0];
		fdmap_add(&c->m, ep[1], STDERR_FILENO);
	}
	if (plan->net_allow) { /* last: the holder has had the longest to build it */
		if (netns_take(c->nsa, 5000, &c->netl, &c->ns, e) < 0)
			return -1;
		c->m.ns = &c->ns;
	}
	if (plan->ovl.lower) {
		if (ovlns_prepare(plan, &c->ovl, &c->ovl_sock, e) < 0)
			return -1;
		c->m.ovl = &c->ovl;
	}
	if (plan->publish && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, c->pub) < 0)
		return err_set(e, errno, NULL, "--publish: cannot create the channel to the jail's init");
	return 0;
}

/* --fs review: the identities of the sources the child took from the overlay, added to the
 * binds' table for init (the child has exec'd bwrap or failed by now: a vfork child). */
static int ovl_handover(struct run_ctx *c, const struct bw_plan *plan, struct err *e)
{
	(void)close(c->ovl.sock);
	c->ovl.sock = -1;
	struct ovlns_id *ids = xcalloc(c->ovl.n ? c->ovl.n : 1, sizeof *ids);
	int rc = ovlns_receive(c->ovl_sock, c->ovl.n, 10000, ids, e);
	for (size_t i = 0, k = 0; rc == 0 && i < plan->nops; i++) {
		const struct bw_op *o = &plan->ops[i];
		if (!o->ovl_rel)
			continue;
		if (bw_plan_bind_final(plan, i)) {
			struct bindcheck_id id = {ids[k].dev, ids[k].ino, ids[k].mode};
			bindcheck_add(&c->ids, &id, o->args.v[o->args.n - 1]);
		}
		k++;
	}
	free(ids);
	return rc;
}

/* The binds' identities to init (bindcheck.h): without them the command must not start. */
static void send_binds(struct run_ctx *c, pid_t pid)
{
	if (!c->ids.len || c->ctl < 0)
		return;
	struct err e = {0};
	int fd = data_fd("the binds' identities", c->ids.s, c->ids.len, &e);
	if (fd < 0 || (ctl_send_fd(c->ctl, CTL_BINDS, 0, fd) < 0 && errno != EPIPE &&
		       errno != ECONNRESET))
		(void)kill(pid, SIGKILL);
	if (fd >= 0)
		(void)close(fd);
}

/* --publish: init's end of the channel goes to init (before CTL_GO, like CTL_STDERR), ours to
 * the hook that serves the published ports. */
static int publish_handover(struct run_ctx *c, struct err *e)
{
	if (c->pub[0] < 0)
		return 0;
	if (!c->hooks || !c->hooks->publish)
		return err_set(e, 0, NULL, "--publish: nothing serves the published ports");
	if (c->ctl >= 0 && ctl_send_fd(c->ctl, CTL_PUBLISH, 0, c->pub[1]) < 0)
		return err_set(e, errno, NULL, "--publish: cannot hand the channel to the jail's init");
	(void)close(c->pub[1]);
	c->pub[1] = -1;
	int chan = c->pub[0];
	c->pub[0] = -1;
	return c->hooks->publish(c->hooks->arg, chan, e);
}

/* --net allow: the listeners the holder opened go to the net_ready hook after the session is
 * recorded and before the command may start (CTL_GO). */
static int net_handover(struct run_ctx *c, struct err *e)
{
	netns_fds_close(&c->ns); /* bwrap has joined them (a vfork child: it has exec'd by now) */
	netns_ahead_free(c->nsa); /* the holder exited once it had reported: reaped */
	struct netns_listeners l = c->netl;
	c->netl = NETNS_LISTENERS_NONE;
	if (!c->hooks || !c->hooks->net_ready) {
		netns_listeners_close(&l);
		return err_set(e, 0, NULL, "--net allow: nothing serves the jail's listeners");
	}
	return c->hooks->net_ready(c->hooks->arg, l.tcp4, l.tcp6, l.dns_udp, l.dns_tcp, e);
}

static void collect(const struct supervise_out *so, int ws, struct launch_result *r)
{
	r->started = so->started;
	r->term_signal = so->term_signal;
	r->killed = so->killed;
	r->landlock = so->landlock;
	r->cmd_signal = so->cmd_signal;
	r->exec_errno = so->exec_errno;
	r->notes = so->notes;
	r->bwrap_stderr = so->bwrap_stderr;
	if (so->have_status)
		r->status = so->status;
	else if (so->started && WIFSIGNALED(ws))
		r->status = 128 + WTERMSIG(ws);
	else
		r->status = 125;
	if (!so->have_status && so->started && !WIFSIGNALED(ws))
		r->started = false; /* the jail ended without telling how: treat as a failure */
}

#ifdef AJ_TEST_BUILD
/* test builds only: AGENTJAIL_TEST_BEFORE_GO=CMD runs `sh -c CMD` on the host once the jail
 * is built (init's first message, its Landlock status, comes after bwrap's last mount) and
 * before the command may start: a test changes the view in that window
 * (tests/sh/17-bindcheck.t) */
static void test_before_go(int ctl)
{
	const char *cmd = getenv("AGENTJAIL_TEST_BEFORE_GO");
	if (!cmd || ctl < 0)
		return;
	struct pollfd p = {.fd = ctl, .events = POLLIN};
	while (poll(&p, 1, 10000) < 0 && errno == EINTR)
		;
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}
#endif

static int run_jail(const char *bwrap, const struct bw_plan *plan, struct run_ctx *c,
		    struct launch_result *r, struct err *e)
{
	sigset_t set, orig;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof jail_sigs / sizeof *jail_sigs; i++)
		sigaddset(&set, jail_sigs[i]);
	/* everything blocked across vfork (no handler may run in the child, which shares our
	 * memory); the child restores `orig` before exec */
	sigset_t all;
	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, &orig) < 0)
		return err_set(e, errno, NULL, "cannot block signals");
	int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		int saved = errno;
		(void)sigprocmask(SIG_SETMASK, &orig, NULL);
		return err_set(e, saved, NULL, "cannot create a signalfd");
	}
	int top = c->maxfd > c->pty.slave ? c->maxfd : c->pty.slave;
	int ovl_fds[] = {c->ovl.sock, c->ovl.host_fd[0], c->ovl.host_fd[1], c->ovl.host_fd[2],
			 c->ovl.host_fd[3], c->ovl_sock, c->ns.userns, c->ns.netns};
	for (size_t i = 0; i < sizeof ovl_fds / sizeof *ovl_fds; i++)
		if (ovl_fds[i] > top)
			top = ovl_fds[i];
	const int base = fd_base(&c->m, top);
	c->ovl.high = base + (int)c->m.n; /* above every fd the child moves */
	pid_t pid = spawn_bwrap(bwrap, &c->m, base, &orig, c->pty.slave, c->which);
	int saved = errno;
	sigset_t keep = orig;
	for (size_t i = 0; i < sizeof jail_sigs / sizeof *jail_sigs; i++)
		sigaddset(&keep, jail_sigs[i]);
	(void)sigprocmask(SIG_SETMASK, &keep, NULL);
	if (pid < 0) {
		(void)close(sfd);
		(void)sigprocmask(SIG_SETMASK, &orig, NULL);
		return err_set(e, saved, bwrap, "cannot start bwrap (vfork)");
	}
	fdmap_close(&c->m);
	/* the command's stderr as it would be without the pipe: the pty's, or ours. EPIPE: the
	 * jail failed during setup and its end is closed (bwrap reports that); any other error
	 * would leave init running the command with bwrap's pipe for stderr: end the jail. */
	if (c->err_read >= 0 && c->ctl >= 0 &&
	    ctl_send_fd(c->ctl, CTL_STDERR, 0,
			(c->which & PTY_STDERR) ? c->pty.slave : STDERR_FILENO) < 0 &&
	    errno != EPIPE && errno != ECONNRESET)
		(void)kill(pid, SIGKILL);
	/* --fs review: the overlay mounted and its sources opened, or nothing runs */
	if (c->ovl_sock >= 0 && ovl_handover(c, plan, e) < 0) {
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		(void)close(sfd);
		(void)sigprocmask(SIG_SETMASK, &orig, NULL);
		return -1;
	}
	/* what each bind must show, checked by init before the command starts (bindcheck.h);
	 * without it the command must not start */
	send_binds(c, pid);
	if (c->pty.slave >= 0) {
		(void)close(c->pty.slave);
		c->pty.slave = -1;
	}
	/* the snapshot of the protected paths and the live watch overlap bwrap's setup (as the
	 * session's row does): the command cannot start, or write anything, before CTL_GO */
	bool snapped = start_guard(c, e) == 0;
	if (snapped && c->hooks && c->hooks->started)
		c->hooks->started(c->hooks->arg);
	if (!snapped || (plan->net_allow && net_handover(c, e) < 0) ||
	    publish_handover(c, e) < 0) {
		/* bwrap never runs the command without its snapshot or its proxy */
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		(void)close(sfd);
		(void)sigprocmask(SIG_SETMASK, &orig, NULL);
		return -1;
	}
#ifdef AJ_TEST_BUILD
	test_before_go(c->ctl);
#endif
	if (c->ctl >= 0)
		(void)ctl_send(c->ctl, CTL_GO, 0); /* a jail that failed to start never reads it */
	struct supervise_in in = {.bwrap = pid,
				  .status_fd = c->status_read,
				  .ctl = c->ctl,
				  .sfd = sfd,
				  .master = c->which ? c->pty.master : -1,
				  .in_fd = (c->which & PTY_STDIN) ? 0 : -1,
				  .out_fd = c->tty_fd == 0 && !(c->which & PTY_STDOUT)
						    ? ((c->which & PTY_STDERR) ? 2 : 0)
						    : ((c->which & PTY_STDOUT) ? 1 : 2),
				  .tty_fd = c->tty_fd,
				  .grace_ms = 10000,
				  .watch_fd = guard_fd(c->guard),
				  .err_fd = c->err_read,
				  .on_watch = guard_fd(c->guard) >= 0 ? on_watch : NULL,
				  .watch_arg = c,
				  .ext_fill = c->hooks ? c->hooks->ext_fill : NULL,
				  .ext_handle = c->hooks ? c->hooks->ext_handle : NULL,
				  .ext_arg = c->hooks ? c->hooks->ext_arg : NULL,
				  .ask = c->hooks ? c->hooks->ask : NULL,
				  .on_capture = c->hooks ? c->hooks->net_capture : NULL,
				  .capture_arg = c->hooks ? c->hooks->arg : NULL,
				  .jail = c->hooks ? c->hooks->jail : NULL};
	if (c->which & PTY_STDIN) {
		in.raw = true; /* supervise enters raw mode when (and while) we are in the foreground */
		restore_on_crash();
	}
	const char *g = getenv("AGENTJAIL_GRACE_MS");
	if (g && atoi(g) > 0)
		in.grace_ms = atoi(g);
	struct supervise_out so;
	int rc = supervise(&in, &so, e);
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	/* the jail is gone: the watch's last close goes to a helper (started now, when its exec
	 * no longer takes CPU from the jail's setup), then the watches are released (guard.h) */
	guard_unwatch_start(c->guard, c->init_exe);
	guard_disarm(c->guard);
	if (c->hooks && c->hooks->jail_gone)
		c->hooks->jail_gone(c->hooks->arg); /* --net allow: the proxy begins to stop */
	/* consume what arrived after the loop ended: unblocked, a late SIGTSTP or SIGTERM would
	 * stop or kill us now, after the jail is gone and before we report */
	struct signalfd_siginfo late;
	while (read(sfd, &late, sizeof late) == (ssize_t)sizeof late)
		;
	(void)close(sfd);
	(void)sigprocmask(SIG_SETMASK, &orig, NULL);
	if (rc < 0)
		return -1;
	collect(&so, ws, r);
	return 0;
}


/* The jail's cgroup scope, when the plan has the host make one (bwrap enters it in the child,
 * before exec). */
static int limits_scope(const struct bw_plan *plan, struct cg_scope *cg, struct fdmap *m,
			struct err *e)
{
	const struct bw_limits *l = &plan->limits;
	if ((l->mech != LIMITS_CGROUP && l->mech != LIMITS_CGROUP_V1) || !l->cgroup_parent)
		return 0;
	if (cg_scope_create(l->cgroup_parent, l->mech, l->memory, l->pids, cg, e) < 0)
		return -1;
	m->cg = cg;
	return 0;
}

/* After the run: what the scope saw, then it goes (never left behind). */
static void limits_collect(struct cg_scope *cg, struct launch_result *r)
{
	if (!cg->dir)
		return;
	r->oom_kills = cg_scope_oom_kills(cg);
	r->pids_hits = cg_scope_pids_max_hits(cg);
	if (cg_scope_destroy(cg, &r->cg_err) < 0)
		r->cgroup_left = true;
}

int launch_run(const struct bw_plan *plan, const char *bwrap, const struct seccomp_opts *sc,
	       const char *quarantine_dir, const struct launch_hooks *hooks,
	       struct netns_ahead *ahead, struct launch_result *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	r->landlock = -1;
	/* --net allow shares the network namespace bwrap starts in: without the holder's
	 * namespace and the proxy serving it, that would be the host's whole network */
	if (plan->net_allow && (!hooks || !hooks->net_ready)) {
		err_set(e, 0, NULL, "--net allow needs its egress proxy, and none was started: "
				    "nothing was run");
		err_hint(e, "use --net off, or --net on for the host's whole network");
		return -1;
	}
	struct run_ctx c = {.status_read = -1,
			    .ctl = -1,
			    .pty = {.master = -1, .slave = -1},
			    .hooks = hooks,
			    .r = r,
			    .ns = NETNS_FDS_NONE,
			    .netl = NETNS_LISTENERS_NONE,
			    .err_read = -1,
			    .ovl_sock = -1,
			    .pub = {-1, -1},
			    .init_exe = -1,
			    .ovl = {.sock = -1, .host_fd = {-1, -1, -1, -1}}};
	struct cg_scope cg = CG_SCOPE_INIT;
	/* --net allow: the holder started ahead (struct backend's ahead), else one started now */
	struct netns_ahead own = NETNS_AHEAD_NONE;
	c.nsa = ahead && ahead->sock >= 0 ? ahead : &own;
	int rc = 0;
	if (plan->net_allow && c.nsa == &own)
		rc = netns_spawn(&own, e);
	if (rc == 0)
		rc = setup(plan, bwrap, sc, &c, e);
	c.protect = &plan->watch;
	c.qdir = quarantine_dir;
	struct timespec since;
	suidscan_mark(&since);
	if (rc == 0)
		rc = limits_scope(plan, &cg, &c.m, e);
	if (rc == 0)
		rc = run_jail(bwrap, plan, &c, r, e);
	guard_disarm(c.guard);
	struct guard *g = c.guard;
	r->retired = g; /* closed last (launch_result_free) */
	c.guard = NULL;
	run_ctx_free(&c);
	netns_ahead_free(&own);
	limits_collect(&cg, r);
	struct violations after = {0};
	if (rc == 0 && guard_finish(g, &after, &r->snap_err) < 0)
		r->snapshot_failed = true;
	violations_append(&r->viol, &after);
	if (rc == 0)
		launch_scan_after(plan, quarantine_dir, &since, r);
	return rc;
}

static int seccomp_test_errno(void)
{
#ifdef AJ_TEST_BUILD
	const char *v = getenv("AGENTJAIL_TEST_SECCOMP_ERRNO");
	return v ? atoi(v) : 0;
#else
	return 0;
#endif
}

int jail_launch(const struct run_request *req, const struct jail *j, const char *bwrap,
		const char *quarantine, const struct launch_hooks *hooks, struct launch_result *r,
		struct err *e)
{
	struct seccomp_opts sc = {.allow_ptrace = req->pol.allow_ptrace,
				  .test_errno = seccomp_test_errno()};
	_cleanup_free_ char *own = quarantine ? NULL : path_join(j->hf.state_dir, "quarantine");
	return launch_run(&j->plan, bwrap, &sc, quarantine ? quarantine : own, hooks,
			  (struct netns_ahead *)j->ahead, r, e);
}
