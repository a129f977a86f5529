/* launch: host self-hardening, trusted bwrap lookup, fd plumbing, and waiting for the jail. */
#include "core/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static int close_from(unsigned first)
{
	if (syscall(SYS_close_range, first, ~0U, 0) == 0)
		return 0;
	/* kernels before 5.9: walk /proc/self/fd */
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int dfd = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && fd >= (int)first && fd != dfd)
			(void)close(fd);
	}
	(void)closedir(d);
	return 0;
}

int launch_harden_self(bool nnp, struct err *e)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return err_set(e, errno, NULL, "cannot make agentjail non-dumpable");
	struct rlimit rl = {0, 0};
	if (setrlimit(RLIMIT_CORE, &rl) < 0)
		return err_set(e, errno, NULL, "cannot disable core dumps");
	/* an inherited session keyring is readable from a new user namespace: start a fresh one.
	 * Where keyrings are unavailable (ENOSYS, or refused in a container) there is nothing
	 * to inherit either. */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS &&
	    errno != EPERM && errno != EACCES && errno != EDQUOT)
		return err_set(e, errno, NULL, "cannot join a fresh session keyring");
	if (close_from(3) < 0)
		return err_set(e, errno, "/proc/self/fd", "cannot close inherited file descriptors");
	if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_set(e, errno, NULL, "cannot set no_new_privs");
	return 0;
}

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

/* Open a bind source without following any symlink on the way. */
static int open_nofollow(const char *path, struct err *e)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	if (fd >= 0)
		return (int)fd;
	if (errno != ENOSYS) {
		err_set(e, errno, path, "cannot open bind source without following symlinks");
		err_hint(e, errno == ELOOP ? "a symlink appeared on the way since the jail was "
					     "planned; agentjail does not follow it"
					   : "the path changed while the jail was being set up");
		return -1;
	}
	/* pre-5.6 kernels: walk component by component with O_NOFOLLOW */
	int cur = open("/", O_PATH | O_CLOEXEC | O_DIRECTORY);
	if (cur < 0)
		return err_set(e, errno, "/", "cannot open /");
	_cleanup_free_ char *copy = xstrdup(path);
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next = openat(cur, c, O_PATH | O_CLOEXEC | O_NOFOLLOW);
		int saved = errno;
		(void)close(cur);
		if (next < 0)
			return err_set(e, saved, path, "cannot open bind source");
		struct stat st;
		if (fstat(next, &st) == 0 && S_ISLNK(st.st_mode)) {
			(void)close(next);
			return err_set(e, ELOOP, path, "bind source is reached through a symlink");
		}
		cur = next;
	}
	return cur;
}

static int args_fd(const struct bw_plan *plan, struct err *e)
{
	struct strv argv = STRV_INIT;
	bw_plan_argv(plan, &argv);
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < argv.n; i++)
		sb_addn(&b, argv.v[i], strlen(argv.v[i]) + 1);
	strv_free(&argv);
	int fd = memfd_create("agentjail-bwrap-args", MFD_CLOEXEC);
	if (fd < 0) {
		sb_free(&b);
		return err_set(e, errno, NULL, "cannot create the memfd for bwrap's arguments");
	}
	size_t off = 0;
	while (off < b.len) {
		ssize_t n = write(fd, b.s + off, b.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int saved = errno;
			(void)close(fd);
			sb_free(&b);
			return err_set(e, saved, NULL, "cannot write bwrap's arguments");
		}
		off += (size_t)n;
	}
	sb_free(&b);
	if (lseek(fd, 0, SEEK_SET) < 0) {
		int saved = errno;
		(void)close(fd);
		return err_set(e, saved, NULL, "cannot rewind bwrap's arguments");
	}
	return fd;
}

/* fds the child must find at fixed numbers */
struct fdmap {
	int *src;
	int *dst;
	size_t n;
	char **argv; /* bwrap --args N -- COMMAND… */
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
static void child_exec(const char *bwrap, const struct fdmap *m, int base, const sigset_t *mask)
{
	static const char msg[] = "agentjail: cannot start bwrap\n";
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(125);
	for (size_t i = 0; i < m->n; i++)
		if (dup3(m->src[i], base + (int)i, O_CLOEXEC) < 0)
			_exit(125);
	for (size_t i = 0; i < m->n; i++)
		if (dup2(base + (int)i, m->dst[i]) < 0) /* dup2 clears CLOEXEC on the copy */
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

static volatile sig_atomic_t pending_sig;

static void on_signal(int sig) { pending_sig = sig; }

/* Parse bwrap's JSON lines: we only need two integers, so a small scan is enough. */
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

static void install_handlers(struct sigaction *old)
{
	static const int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
	struct sigaction sa = {0};
	sa.sa_handler = on_signal; /* no SA_RESTART: a blocking read returns EINTR */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < 4; i++)
		(void)sigaction(sigs[i], &sa, &old[i]);
}

static void restore_handlers(const struct sigaction *old)
{
	static const int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < 4; i++)
		(void)sigaction(sigs[i], &old[i], NULL);
}

/* Forward a signal we received to the jail's init (it passes it to the command). Terminal
 * signals (INT, QUIT) already reached the whole foreground group, the jail included. */
static void forward(int sig, pid_t jail_pid, pid_t bwrap_pid)
{
	if (sig == SIGINT || sig == SIGQUIT)
		return;
	if (jail_pid > 0)
		(void)kill(jail_pid, sig);
	else
		(void)kill(bwrap_pid, SIGKILL);
}

static int wait_jail(pid_t child, int status_fd, struct launch_result *r)
{
	struct strbuf buf = STRBUF_INIT;
	long jail_pid = -1, code = -1;
	for (;;) {
		char tmp[512];
		ssize_t n = read(status_fd, tmp, sizeof tmp);
		if (n < 0 && errno == EINTR) {
			int sig = pending_sig;
			pending_sig = 0;
			if (sig)
				forward(sig, (pid_t)jail_pid, child);
			continue;
		}
		if (n <= 0)
			break;
		sb_addn(&buf, tmp, (size_t)n);
		if (jail_pid < 0)
			(void)json_int(sb_str(&buf), "child-pid", &jail_pid);
	}
	bool have_code = json_int(sb_str(&buf), "exit-code", &code);
	sb_free(&buf);
	int ws = 0;
	while (waitpid(child, &ws, 0) < 0) {
		if (errno != EINTR)
			return -1;
		int sig = pending_sig;
		pending_sig = 0;
		if (sig)
			forward(sig, (pid_t)jail_pid, child);
	}
	r->started = jail_pid > 0;
	if (have_code)
		r->status = (int)code;
	else if (r->started && WIFSIGNALED(ws))
		r->status = 128 + WTERMSIG(ws);
	else
		r->status = 125;
	if (!have_code && r->started && !WIFSIGNALED(ws))
		r->started = false; /* the jail ended without telling how: treat as a failure */
	return 0;
}

/* Every fd the child needs, at the number the plan gave it. */
static int prepare_fds(const struct bw_plan *plan, const struct seccomp_opts *sc,
		       struct fdmap *m, int *maxfd, int *status_read, struct err *e)
{
	*maxfd = BW_FD_BIND0;
	int fd = args_fd(plan, e);
	if (fd < 0)
		return -1;
	fdmap_add(m, fd, BW_FD_ARGS);
	if (seccomp_build_fd(sc, &fd, e) < 0)
		return -1;
	fdmap_add(m, fd, BW_FD_SECCOMP);
	fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, errno, "/proc/self/exe", "cannot open agentjail's own binary");
	fdmap_add(m, fd, BW_FD_INIT);
	for (size_t i = 0; i < plan->nops; i++) {
		const struct bw_op *o = &plan->ops[i];
		if (!o->src)
			continue;
		fd = open_nofollow(o->src, e);
		if (fd < 0)
			return -1;
		fdmap_add(m, fd, o->fd);
		if (o->fd > *maxfd)
			*maxfd = o->fd;
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
						    int base, const sigset_t *mask)
{
	pid_t pid = vfork();
	if (pid == 0)
		child_exec(bwrap, m, base, mask);
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

static int fork_and_wait(const char *bwrap, struct fdmap *m, int maxfd, int status_read,
			 struct launch_result *r, struct err *e)
{
	const int base = fd_base(m, maxfd);
	struct sigaction old[4];
	install_handlers(old);
	/* no handler may run in the vfork child (it shares our memory): block everything until
	 * the child has exec'd; the child restores the original mask just before execve */
	sigset_t all, orig;
	sigfillset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, &orig);
	pid_t pid = spawn_bwrap(bwrap, m, base, &orig);
	int saved = errno;
	(void)sigprocmask(SIG_SETMASK, &orig, NULL);
	if (pid < 0) {
		restore_handlers(old);
		return err_set(e, saved, NULL, "cannot start bwrap (vfork)");
	}
	fdmap_close(m);
	int rc = wait_jail(pid, status_read, r);
	restore_handlers(old);
	if (rc < 0)
		return err_set(e, errno, bwrap, "lost track of the jail");
	return 0;
}

int launch_run(const struct bw_plan *plan, const char *bwrap, const struct seccomp_opts *sc,
	       const char *quarantine_dir, struct launch_result *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	struct fdmap m = {0};
	int maxfd = 0;
	_cleanup_close_ int status_read = -1;
	struct snapshot before = {0};
	struct strv argv = STRV_INIT;
	strv_push(&argv, "bwrap");
	strv_push(&argv, "--args");
	strv_pushf(&argv, "%d", BW_FD_ARGS);
	strv_push(&argv, "--");
	strv_copy(&argv, &plan->cmd);
	m.argv = strv_data(&argv);
	int rc = prepare_fds(plan, sc, &m, &maxfd, &status_read, e);
	if (rc == 0)
		rc = snapshot_take(&plan->watch, &before, e);
	if (rc == 0)
		rc = fork_and_wait(bwrap, &m, maxfd, status_read, r, e);
	fdmap_close(&m);
	if (rc == 0 && snapshot_check(&before, quarantine_dir, &r->viol, &r->snap_err) < 0)
		r->snapshot_failed = true;
	snapshot_free(&before);
	strv_free(&argv);
	return rc;
}

void launch_result_free(struct launch_result *r) { violations_free(&r->viol); }

int launch_unjailed(char **argv, struct err *e)
{
	struct sigaction old[4];
	install_handlers(old);
	pid_t pid = fork();
	if (pid < 0) {
		restore_handlers(old);
		err_set(e, errno, NULL, "cannot fork");
		return 125;
	}
	if (pid == 0) {
		restore_handlers(old);
		execvp(argv[0], argv);
		int saved = errno;
		fprintf(stderr, "agentjail: cannot run %s: %s\n", argv[0], strerror(saved));
		_exit(saved == ENOENT ? 127 : 126);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0) {
		if (errno != EINTR) {
			restore_handlers(old);
			err_set(e, errno, argv[0], "lost track of the command");
			return 125;
		}
		int sig = pending_sig;
		pending_sig = 0;
		if (sig && sig != SIGINT && sig != SIGQUIT)
			(void)kill(pid, sig);
	}
	restore_handlers(old);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}
