/* llrun: see llrun.h. */
#include "core/backend/landlock/llrun.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <linux/securebits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/confine/cgroup.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/xalloc.h"

char *llrun_mktemp(struct err *e)
{
	char *d = xstrdup("/tmp/agentjail-ll-XXXXXX");
	if (!mkdtemp(d)) {
		err_set(e, errno, "/tmp", "cannot create the private temporary directory");
		free(d);
		return NULL;
	}
	return d;
}

int llrun_listen_loopback(int *fd, unsigned short *port, struct err *e)
{
	_cleanup_close_ int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof a;
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 128) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &len) < 0)
		return err_set(e, errno, "127.0.0.1", "cannot open the proxy's listener");
	*port = ntohs(a.sin_port);
	*fd = steal_fd(&s);
	return 0;
}

/* What the child reports when it cannot confine itself (nothing was run). */
struct child_fail {
	int err;
	char what[480];
};

static _Noreturn void child_fail(int pfd, int err, const char *what)
{
	struct child_fail f = {.err = err};
	snprintf(f.what, sizeof f.what, "%s", what);
	(void)!write(pfd, &f, sizeof f);
	_exit(125);
}

/* Root keeps uid 0 (its files stay its own) but no capability, now or after an exec: securebits
 * stop the kernel from granting root's on exec, the bounding set is emptied. */
static int drop_caps(void)
{
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
					     SECBIT_NO_CAP_AMBIENT_RAISE |
					     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0) < 0 &&
	    errno != EPERM)
		return -1;
	for (int c = 0; c <= CAP_LAST_CAP; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EPERM && errno != EINVAL)
			return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -1;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};
	return (int)syscall(SYS_capset, &h, d);
}

static _Noreturn void child(const struct ll_plan *p, char **cmd, const struct seccomp_opts *sc,
			    const struct landlock_list *ll, const struct cg_scope *cg, int pfd)
{
	if (cg_scope_enter(cg) < 0)
		child_fail(pfd, errno, "cannot enter the run's cgroup");
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	for (int s = 1; s < NSIG; s++)
		(void)sigaction(s, &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	if (drop_caps() < 0)
		child_fail(pfd, errno, "cannot drop capabilities");
	struct landlock_report rep;
	struct err e = {0};
	char buf[ERR_FMT_MAX];
	if (landlock_apply_list(ll, &rep, &e) < 0 || seccomp_load_self(sc, &e) < 0) {
		err_format(&e, buf, sizeof buf);
		child_fail(pfd, e.errnum ? e.errnum : EPERM, buf);
	}
	if (chdir(p->chdir) < 0)
		child_fail(pfd, errno, "cannot enter the start directory (the workspace)");
	/* only 0-2 reach the command (and the report pipe, until the exec): an inherited
	 * directory fd would lead anywhere on the host */
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		child_fail(pfd, errno, "cannot close inherited file descriptors");
	char **env = xcalloc(p->env.n + 2, sizeof *env);
	for (size_t i = 0; i < p->env.n; i++)
		env[i] = p->env.v[i];
	char desc[64];
	snprintf(desc, sizeof desc, "AGENTJAIL_LANDLOCK=abi=%d,fs,backend%s", rep.abi,
		 rep.scoped ? ",scoped" : "");
	env[p->env.n] = desc;
	environ = env;
	execvp(cmd[0], cmd);
	int err = errno;
	fprintf(stderr, "agentjail: cannot run %s: %s\n", cmd[0], strerror(err));
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* A process's parent, from /proc/PID/stat (its name may hold spaces and parentheses: the
 * fields follow the last ')'), or -1 when it is gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	ssize_t len = fs_read_small(path, buf, sizeof buf);
	char *rp = len > 0 ? strrchr(buf, ')') : NULL;
	int ppid;
	return rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 ? (pid_t)ppid : -1;
}

/* Every process on the host with its parent, as /proc lists them now. */
struct ptab {
	struct pent {
		pid_t pid, ppid;
		bool ours; /* agentjail's descendant, not under one it had before the command */
	} *v;
	size_t n, cap;
};

static void ptab_scan(struct ptab *t)
{
	t->n = 0;
	_cleanup_closedir_ DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid_t pid = (pid_t)atoi(de->d_name), ppid = parent_of(pid);
		if (ppid < 0)
			continue;
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 512;
			t->v = xrealloc(t->v, t->cap * sizeof *t->v);
		}
		t->v[t->n++] = (struct pent){pid, ppid, false};
	}
}

static int pent_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct pent *)a)->pid, y = ((const struct pent *)b)->pid;
	return (x > y) - (x < y);
}

static bool listed(const pid_t *v, size_t n, pid_t p)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == p)
			return true;
	return false;
}

/* Whether `pid` is agentjail itself or a process marked ours (t sorted by pid). */
static bool ours_or_self(const struct ptab *t, pid_t pid)
{
	if (pid == getpid())
		return true;
	struct pent key = {.pid = pid};
	const struct pent *hit = bsearch(&key, t->v, t->n, sizeof *t->v, pent_cmp);
	return hit && hit->ours;
}

/* Mark agentjail's descendants, leaving out the children it had before the command (verify's
 * bait) and everything under them. How many. */
static size_t ptab_mark(struct ptab *t, const pid_t *before, size_t nbefore)
{
	qsort(t->v, t->n, sizeof *t->v, pent_cmp);
	size_t n = 0;
	for (bool grew = true; grew;) { /* a child listed before its parent: one more pass */
		grew = false;
		for (size_t i = 0; i < t->n; i++) {
			struct pent *p = &t->v[i];
			if (p->ours || (p->ppid == getpid() && listed(before, nbefore, p->pid)) ||
			    !ours_or_self(t, p->ppid))
				continue;
			p->ours = grew = true;
			n++;
		}
	}
	return n;
}

/* SIGKILL one of ours, through a pidfd: its pid is checked again once the pidfd holds the
 * process (still a child of agentjail or of one of ours), so a pid reused by then names nobody
 * else, and a process gone since is not looked for under its pid. By pid only on kernels
 * without pidfds (before 5.3). */
static void kill_one(const struct ptab *t, pid_t pid)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool no_pidfd = pfd < 0 && errno == ENOSYS;
	if ((pfd >= 0 || no_pidfd) && ours_or_self(t, parent_of(pid))) {
		if (no_pidfd)
			(void)kill(pid, SIGKILL);
		else
			(void)syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
	}
	if (pfd >= 0)
		(void)close(pfd);
}

/* agentjail's children now (those before the command, verify's bait, are left alone). */
static pid_t *children_now(size_t *n)
{
	struct ptab t = {0};
	ptab_scan(&t);
	pid_t *v = xcalloc(t.n + 1, sizeof *v);
	*n = 0;
	for (size_t i = 0; i < t.n; i++)
		if (t.v[i].ppid == getpid())
			v[(*n)++] = t.v[i].pid;
	free(t.v);
	return v;
}

/* Kill everything the command left (doc/design.md §4c): every descendant of agentjail, at any
 * depth, not only the orphans reparented to it. There is no PID namespace whose end would take
 * them along, so: scan /proc, kill what is ours, reap what became our zombies, and again,
 * until a whole scan finds nothing of ours, alive or dead, however many rounds that takes. A
 * process made between a scan and the kills is a child of one of ours, alive when the next
 * scan starts; a killed process's children become ours (agentjail is their subreaper). */
static void kill_leftovers(const pid_t *before, size_t nbefore)
{
	struct ptab t = {0};
	for (;;) {
		ptab_scan(&t);
		if (!ptab_mark(&t, before, nbefore))
			break;
		for (size_t i = 0; i < t.n; i++)
			if (t.v[i].ours)
				kill_one(&t, t.v[i].pid);
		bool reaped = false;
		for (size_t i = 0; i < t.n; i++)
			if (t.v[i].ours && t.v[i].ppid == getpid() &&
			    waitpid(t.v[i].pid, NULL, WNOHANG) == t.v[i].pid)
				reaped = true;
		if (!reaped) { /* only dying ones: let them die */
			struct timespec ts = {0, 1000000};
			(void)nanosleep(&ts, NULL);
		}
	}
	free(t.v);
}

/* Wait until the command ends (its pidfd readable; without one, 50 ms at most) or a signal
 * comes, serving the watch meanwhile. */
/* Until the command exits (its pidfd), the watch has something (then served), a signal comes
 * or timeout_ms pass. */
static void wait_some(const struct llrun_watch *w, int pidfd, int timeout_ms)
{
	struct pollfd pf[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = w ? w->fd : -1, .events = POLLIN}};
	int n = poll(pf, 2, pidfd >= 0 ? timeout_ms : 50);
	if (n > 0 && w && (pf[1].revents & POLLIN))
		w->on_event(w->arg);
}


static volatile sig_atomic_t got_term;
static void on_term(int s) { got_term = s; }

/* The run's cgroup scope, where the host has one for the limits (as the bwrap jail's). */
static int make_scope(const struct bw_limits *lim, struct cg_scope *cg, struct err *e)
{
	if (!lim || (lim->mech != LIMITS_CGROUP && lim->mech != LIMITS_CGROUP_V1) ||
	    !lim->cgroup_parent)
		return 0;
	return cg_scope_create(lim->cgroup_parent, lim->mech, lim->memory, lim->pids, cg, e);
}

int llrun_run(const struct ll_plan *p, const struct bw_limits *lim, char **cmd,
	      const struct seccomp_opts *sc, const struct landlock_list *ll,
	      const struct llrun_watch *w, struct llrun_result *r, struct err *e)
{
	*r = (struct llrun_result){.status = 125};
	struct cg_scope cg = CG_SCOPE_INIT;
	if (make_scope(lim, &cg, e) < 0)
		return -1;
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		(void)cg_scope_destroy(&cg, NULL);
		return err_set(e, errno, NULL, "cannot create a pipe for the command");
	}
	/* terminal signals reach the command's group (ours) directly; a kill to agentjail is
	 * passed on */
	struct sigaction ign = {.sa_handler = SIG_IGN}, term = {.sa_handler = on_term}, o_int, o_quit,
			 o_term, o_hup;
	(void)sigaction(SIGINT, &ign, &o_int);
	(void)sigaction(SIGQUIT, &ign, &o_quit);
	(void)sigaction(SIGTERM, &term, &o_term);
	(void)sigaction(SIGHUP, &term, &o_hup);
	/* what the command leaves behind (a daemon, a double fork) is reparented to us, and
	 * killed when it ends: there is no PID namespace to take it down */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	size_t nbefore;
	_cleanup_free_ pid_t *before = children_now(&nbefore);
	pid_t pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		child(p, cmd, sc, ll, &cg, pipefd[1]);
	}
	int saved = errno;
	close(pipefd[1]);
	int rc = 0;
	if (pid < 0) {
		rc = err_set(e, saved, NULL, "cannot fork the command");
	} else {
		struct child_fail f;
		ssize_t n;
		while ((n = read(pipefd[0], &f, sizeof f)) < 0 && errno == EINTR)
			;
		int ws = 0;
		bool passed = false;
		long long passed_at = 0;
		_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		const struct llrun_watch *lw = w && w->fd >= 0 ? w : NULL;
		for (;;) {
			/* a signal between the check below and the poll is seen at the next
			 * timeout: a quarter of a second at most */
			wait_some(lw, pidfd, passed ? 100 : 250);
			pid_t got = waitpid(pid, &ws, WNOHANG);
			if (got == pid || (got < 0 && errno != EINTR))
				break;
			if (got_term && !passed) {
				(void)kill(pid, got_term);
				r->term_signal = got_term;
				passed = true;
				passed_at = clock_mono_ms();
			} else if (passed && !r->killed && clock_mono_ms() - passed_at >= LLRUN_TERM_GRACE_MS) {
				(void)kill(pid, SIGKILL); /* as the bwrap jail's stop (supervise.h) */
				r->killed = true;
			}
		}
		if (n == (ssize_t)sizeof f) {
			f.what[sizeof f.what - 1] = '\0';
			rc = err_set(e, f.err, NULL, "the Landlock backend could not confine the "
						     "command: %s",
				     f.what);
		} else {
			r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
			r->cmd_signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
			r->ll.abi = landlock_abi();
			r->ll.fs_applied = true;
			r->ll.scoped = r->ll.abi >= 6;
		}
	}
	close(pipefd[0]);
	/* what the scope saw, before its teardown refuses forks (pids.max 0) */
	r->oom_kills = cg_scope_oom_kills(&cg);
	r->pids_hits = cg_scope_pids_max_hits(&cg);
	if (pid > 0) {
		cg_scope_kill(&cg); /* at once, where the scope has cgroup.kill */
		kill_leftovers(before, nbefore);
	}
	if (cg_scope_destroy(&cg, &r->cg_err) < 0)
		r->cgroup_left = true;
	(void)sigaction(SIGINT, &o_int, NULL);
	(void)sigaction(SIGQUIT, &o_quit, NULL);
	(void)sigaction(SIGTERM, &o_term, NULL);
	(void)sigaction(SIGHUP, &o_hup, NULL);
	return rc;
}
