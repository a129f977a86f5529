/* guard: the one watcher of protected paths (see guard.h). */
#include "core/jail/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/jail/snapkeep.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- pure ---- */

char *watch_anchor(const char *path, watch_isdir_fn is_dir, void *arg)
{
	struct strbuf acc = STRBUF_INIT;
	const char *p = path;
	size_t good = 1; /* "/" */
	sb_add(&acc, "/");
	for (;;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (!n || !p[n])
			break; /* the last component is the path itself, never its own anchor */
		if (acc.len > 1)
			sb_addc(&acc, '/');
		sb_addn(&acc, p, n);
		if (!is_dir(arg, sb_str(&acc)))
			break;
		good = acc.len;
		p += n;
	}
	char *out = xstrndup(sb_str(&acc), good);
	sb_free(&acc);
	return out;
}

bool watch_event_concerns(const char *dir, const char *name, const char *path)
{
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	_cleanup_free_ char *full = path_join(dir, name);
	return path_is_under(path, full);
}

bool dirmemo_isdir(void *memo, const char *path)
{
	struct dirmemo *m = memo;
	for (size_t i = 0; i < m->path.n; i++)
		if (!strcmp(m->path.v[i], path))
			return m->dir[i];
	bool d = m->ask(m->arg, path);
	m->dir = xrealloc(m->dir, (m->path.n + 1) * sizeof *m->dir);
	m->dir[m->path.n] = d;
	strv_push(&m->path, path);
	return d;
}

void dirmemo_forget(struct dirmemo *m)
{
	strv_free(&m->path);
	free(m->dir);
	m->dir = NULL;
}

/* ---- live ---- */

/* A directory on the way to a missing path: a protected name appearing there. */
#define MISSING_WAY_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | \
			  IN_DONT_FOLLOW)
/* A directory on the way, with keep: a protected name appearing, leaving or replaced there. */
#define WAY_MASK (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | \
		  IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_MASK_ADD)
/* A protected path itself, with keep: its content, mode, entries (a directory) or the inode
 * going. */
#define SELF_MASK (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | \
		   IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | \
		   IN_DONT_FOLLOW | IN_MASK_ADD)
#define ARM_MAX 64 /* re-arm rounds for one path: at most one per directory level */

struct gwatch {
	int wd;
	char *path;
	bool self; /* a protected path itself: any event concerns it */
};

struct guard {
	int fd;
	bool keep;
	struct strv paths;   /* every protected path */
	struct strv watched; /* those watched live: every one with keep, else the missing ones */
	char *qdir;
	struct snapshot before;
	struct snapkeep kept;
	struct gwatch *w;
	size_t nw;
	bool armed;          /* the watches were armed (the first guard_handle, or guard_start) */
	bool done;           /* disarmed: nothing is watched any more */
	struct strv failed;  /* missing paths whose move aside failed: reported once, left to the end */
	pid_t unwatch;       /* the helper holding a reference to fd (guard_unwatch_start), or -1 */
	int unwatch_go;      /* our end of its pipe: closing it lets the helper exit, or -1 */
	int unwatch_pidfd;   /* the helper's pidfd, to wait for it a little (unwatch_end), or -1 */
};

static bool real_dir(void *arg, const char *path)
{
	(void)arg;
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static struct gwatch *find_wd(struct guard *g, int wd)
{
	for (size_t i = 0; i < g->nw; i++)
		if (g->w[i].wd == wd)
			return &g->w[i];
	return NULL;
}

/* 1: a new watch; 0: the inode was watched already; -1: none (the path went meanwhile: the
 * next event, or the check after the run, sees it). */
static int add(struct guard *g, const char *path, uint32_t mask, bool self)
{
	int wd = inotify_add_watch(g->fd, path, mask);
	if (wd < 0)
		return -1;
	struct gwatch *w = find_wd(g, wd);
	if (w) {
		w->self |= self;
		return 0;
	}
	g->w = xrealloc(g->w, (g->nw + 1) * sizeof *g->w);
	g->w[g->nw++] = (struct gwatch){wd, xstrdup(path), self};
	return 1;
}

static void forget(struct guard *g, int wd)
{
	for (size_t i = 0; i < g->nw; i++)
		if (g->w[i].wd == wd) {
			free(g->w[i].path);
			g->w[i] = g->w[--g->nw];
			return;
		}
}

/* One arming pass over the watched paths: most share their anchor (the workspace) and the
 * directories above it. What the walks saw is kept (a dirmemo) while every watch in place is
 * older than it: forgotten whenever a watch begins (or fails: the directory went), and after a
 * move aside. A look after the watch began is what the second walk of arm_one needs, and what
 * was seen since the last watch began is such a look for every anchor watched then; one pass
 * so sees the tree as at one moment after its watches began. Each anchor is watched once a
 * pass. */
struct arm_pass {
	struct dirmemo memo;
	struct strv added;
};

static void pass_init(struct arm_pass *p)
{
	*p = (struct arm_pass){.memo = {.path = STRV_INIT, .ask = real_dir}, .added = STRV_INIT};
}

static void pass_free(struct arm_pass *p)
{
	dirmemo_forget(&p->memo);
	strv_free(&p->added);
}

/* add, and the memo forgotten unless the inode was watched already. Whether it is watched. */
static bool pass_add(struct guard *g, struct arm_pass *p, const char *path, uint32_t mask,
		     bool self)
{
	int r = add(g, path, mask, self);
	if (r != 0)
		dirmemo_forget(&p->memo);
	return r >= 0;
}

/* Watch the deepest existing directory on the way to `path`; again when a deeper one appeared
 * meanwhile (created between the look and the watch). With keep, the path itself too. Whether
 * that directory is the path's parent (else nothing stands at the path but through a symlink
 * or not at all). */
static bool arm_one(struct guard *g, struct arm_pass *p, const char *path)
{
	if (g->fd < 0 || g->done)
		return false;
	const uint32_t way = g->keep ? WAY_MASK : MISSING_WAY_MASK;
	_cleanup_free_ char *a = watch_anchor(path, dirmemo_isdir, &p->memo);
	for (int round = 0; round < ARM_MAX; round++) {
		if (!strv_contains(&p->added, a) && pass_add(g, p, a, way, false))
			strv_push(&p->added, a);
		char *b = watch_anchor(path, dirmemo_isdir, &p->memo);
		bool same = !strcmp(a, b);
		free(a);
		a = b;
		if (same)
			break;
	}
	struct stat st;
	if (g->keep && lstat(path, &st) == 0 && !S_ISLNK(st.st_mode))
		(void)pass_add(g, p, path, SELF_MASK, true);
	_cleanup_free_ char *parent = path_dirname(path);
	return !strcmp(a, parent);
}

static void arm(struct guard *g)
{
	struct arm_pass p;
	pass_init(&p);
	for (size_t i = 0; i < g->watched.n; i++)
		(void)arm_one(g, &p, g->watched.v[i]);
	pass_free(&p);
}

static void set_what(struct violation *v, char *what)
{
	free(v->what);
	v->what = what;
}

/* A protected path that existed is gone from its place now (moved aside, or removed by the
 * command): put the original back. */
static void restore(struct guard *g, struct violation *v)
{
	const struct keep_entry *ke = snapkeep_find(&g->kept, v->path);
	struct stat st;
	if (!ke || (!ke->kept && !ke->why) || v->move_failed || lstat(v->path, &st) == 0)
		return; /* it did not exist before, or something still stands there */
	struct err e = {0};
	if (snapkeep_restore(ke, &e) == 0) {
		set_what(v, xasprintf("%s; the original was restored", v->what));
		/* the snapshot is the restored entry's from now on; had the command changed it
		 * again meanwhile, the entry matches nothing and the next check catches it */
		if (snapshot_retake(&g->before, v->path, &e) < 0 || !snapkeep_same(ke))
			snapshot_poison(&g->before, v->path);
		return;
	}
	char msg[ERR_FMT_MAX];
	err_format(&e, msg, sizeof msg);
	set_what(v, xasprintf("%s; the original could not be restored (%s)", v->what, msg));
	v->move_failed = true; /* not undone: loud, as a failed move */
}

/* Check every path against the snapshot, move aside what changed, restore what was kept. */
static int check(struct guard *g, bool live, struct violations *out, struct err *e)
{
	struct violations v = {0};
	int rc = live ? snapshot_check_live(&g->before, g->qdir, &v, e)
		      : snapshot_check(&g->before, g->qdir, &v, e);
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < v.n; i++)
		restore(g, &v.v[i]);
	size_t n = v.n;
	violations_append(out, &v);
	return (int)n;
}

/* Without keep: arm every missing path, then move aside each one that exists (after arming: one
 * created meanwhile is either seen here or raises an event). One not below its parent's watch
 * (arm_one) is not there to move: nothing, or reached through a symlink, which
 * snapshot_move_now leaves to the check after the run. */
static size_t rescan(struct guard *g, struct violations *out)
{
	size_t before = out->n;
	struct arm_pass pass;
	pass_init(&pass);
	for (size_t i = 0; i < g->watched.n; i++) {
		const char *p = g->watched.v[i];
		if (strv_contains(&g->failed, p))
			continue;
		struct stat st;
		if (!arm_one(g, &pass, p) || lstat(p, &st) < 0)
			continue;
		size_t n = out->n;
		snapshot_move_now(p, g->qdir, out);
		if (out->n > n && out->v[out->n - 1].move_failed)
			strv_push(&g->failed, p); /* once: every later event would fail it again */
		dirmemo_forget(&pass.memo); /* the tree changed */
		(void)arm_one(g, &pass, p);
	}
	pass_free(&pass);
	return out->n - before;
}

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The helpers started and not reaped yet: one exits after each run, a long-lived process (the
 * TUI) reaps them at its next run, a run's agentjail leaves them to init at its exit. */
static pid_t unwatch_left[16];

static void unwatch_reap(void)
{
	for (size_t i = 0; i < sizeof unwatch_left / sizeof *unwatch_left; i++)
		if (unwatch_left[i] > 0 && waitpid(unwatch_left[i], NULL, WNOHANG) != 0)
			unwatch_left[i] = 0; /* reaped, or not ours any more */
}

static void unwatch_forget(pid_t pid)
{
	unwatch_reap();
	for (size_t i = 0; i < sizeof unwatch_left / sizeof *unwatch_left; i++)
		if (unwatch_left[i] <= 0) {
			unwatch_left[i] = pid;
			return;
		}
}

bool guard_reaping_init(const char *comm)
{
	static const char *const reapers[] = {"systemd", "init", "tini", "dumb-init",
					      "docker-init", "catatonit", "s6-svscan",
					      "runit", "runit-init", "openrc-init", NULL};
	for (size_t i = 0; comm && reapers[i]; i++)
		if (!strcmp(comm, reapers[i]))
			return true;
	return false;
}

/* Whether this PID namespace's init is one known to reap the orphans it adopts (/proc/1/comm,
 * read once): a helper left to any other (a container's shell, `sleep infinity`, the agent
 * itself) would stay a zombie, one per run. */
static int reaped_known = -1;

void guard_assume_reaped(bool yes)
{
	reaped_known = yes;
}

static bool orphans_reaped(void)
{
	int known = reaped_known;
	if (known < 0) {
		char comm[32];
		ssize_t n = fs_read_small("/proc/1/comm", comm, sizeof comm);
		if (n > 0 && comm[n - 1] == '\n')
			comm[n - 1] = '\0';
		reaped_known = known = n > 0 && guard_reaping_init(comm);
	}
	return known == 1;
}

/* `exe __unwatch` (agentjail-init: it holds fd 1, here the inotify fd, until fd 0, a pipe
 * whose other end is ours, ends), started when the jail has ended, just before guard_disarm
 * (earlier, its exec took CPU from the jail's setup: 0.5-1.5 ms more in the quick runs). At
 * guard_disarm our own reference goes (not the last: no wait) and so does the pipe's end: the
 * helper's exit makes the last close, which waits for the kernel, while the checks after the
 * run go on; guard_free reaps it if it is done by then (unwatch_end). A vfork child: it shares our memory
 * until the exec, so every signal stays blocked (no handler of ours runs in it), and the
 * helper keeps them blocked, in a session of its own: neither the terminal's signals nor ours
 * end it early. It holds nothing else of ours. Any failure leaves the close to us, as without
 * a helper. */
void guard_unwatch_start(struct guard *g, int exe)
{
	if (!g || g->fd < 0 || g->done || g->unwatch > 0 || exe < 0 || !orphans_reaped())
		return;
	int p[2];
	sigset_t all, orig;
	sigfillset(&all);
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	if (sigprocmask(SIG_BLOCK, &all, &orig) < 0) {
		(void)close(p[0]);
		(void)close(p[1]);
		return;
	}
	pid_t pid = vfork();
	if (pid == 0) {
		char *argv[] = {"agentjail-init", "__unwatch", NULL};
		char *envp[] = {NULL};
		/* p[0] and g->fd are above 2: neither is overwritten before it is moved; "/":
		 * not the workspace, which it would keep in use */
		if (setsid() < 0 || chdir("/") < 0 || dup2(p[0], 0) < 0 || dup2(g->fd, 1) < 0 ||
		    syscall(SYS_close_range, 2U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
			_exit(127);
		syscall(SYS_execveat, exe, "", argv, envp, AT_EMPTY_PATH);
		_exit(127);
	}
	(void)close(p[0]);
	if (pid < 0 || waitpid(pid, NULL, WNOHANG) != 0) { /* the exec failed: it is gone */
		(void)close(p[1]);
	} else {
		g->unwatch = pid;
		g->unwatch_go = p[1];
		g->unwatch_pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* -1: no wait (5.3) */
	}
	(void)sigprocmask(SIG_SETMASK, &orig, NULL);
}

/* How long guard_free waits for the helper's last close, begun at guard_disarm: those that
 * find the kernel's grace period quick end within it (the checks after the run took that long
 * meanwhile; half of the runs on this loaded machine), and a helper reaped here is one init
 * does not have to. One that takes longer (a slow grace period: 1-20 ms) is left to init. */
#define UNWATCH_WAIT_US 250

static void unwatch_end(struct guard *g)
{
	pid_t r = waitpid(g->unwatch, NULL, WNOHANG);
	struct pollfd p = {.fd = g->unwatch_pidfd, .events = POLLIN};
	const struct timespec wait = {0, UNWATCH_WAIT_US * 1000L};
	if (r == 0 && g->unwatch_pidfd >= 0 && ppoll(&p, 1, &wait, NULL) > 0)
		r = waitpid(g->unwatch, NULL, WNOHANG);
	if (r == 0)
		unwatch_forget(g->unwatch);
	if (g->unwatch_pidfd >= 0)
		(void)close(g->unwatch_pidfd);
	g->unwatch_pidfd = -1;
	g->unwatch = -1;
}

int guard_start(const struct strv *paths, const char *quarantine_dir, const struct guard_opts *o,
		struct guard **out, struct err *live_err, struct err *e)
{
	*out = NULL;
	struct guard *g = xcalloc(1, sizeof *g);
	g->fd = -1;
	g->unwatch = -1;
	g->unwatch_go = -1;
	g->unwatch_pidfd = -1;
	g->keep = o->keep;
	if (snapshot_take(paths, &g->before, e) < 0) {
		free(g);
		return -1;
	}
	strv_copy(&g->paths, paths);
	for (size_t i = 0; i < g->before.n; i++)
		if (g->keep || !g->before.e[i].exists)
			strv_push(&g->watched, g->before.e[i].path);
	g->qdir = quarantine_dir ? xstrdup(quarantine_dir) : NULL;
	if (g->keep)
		snapkeep_take(&g->before, &g->kept);
	if (o->live && g->watched.n && g->qdir) {
		g->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (g->fd < 0) {
			err_set(live_err, errno, NULL,
				g->keep ? "cannot watch protected paths during the run"
					: "cannot watch missing protected paths during the run");
			err_hint(live_err, "they are still checked after the run; raise "
					   "fs.inotify.max_user_instances if this is EMFILE");
		}
	}
	if (g->keep) {
		arm(g);
		g->armed = true;
	}
	*out = g;
	return 0;
}

int guard_fd(const struct guard *g) { return g ? g->fd : -1; }

size_t guard_handle(struct guard *g, struct violations *out)
{
	if (!g || g->fd < 0 || g->done)
		return 0;
	bool need = !g->armed;
	g->armed = true;
	/* aligned as inotify wants it */
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(g->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EAGAIN: drained */
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof *ev + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				need = true;
				continue;
			}
			struct gwatch *w = find_wd(g, ev->wd);
			/* a watched directory went (arm higher up), or a protected path changed */
			if ((ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) || (w && w->self))
				need = true;
			for (size_t i = 0; w && ev->len && !need && i < g->watched.n; i++)
				need = watch_event_concerns(w->path, ev->name, g->watched.v[i]);
			if (ev->mask & IN_MOVE_SELF)
				(void)inotify_rm_watch(g->fd, ev->wd); /* its path names another now */
			if (ev->mask & (IN_IGNORED | IN_MOVE_SELF))
				forget(g, ev->wd);
		}
	}
	if (!need)
		return 0;
	if (!g->keep)
		return rescan(g, out);
	struct err e = {0};
	size_t before = out->n;
	if (check(g, true, out, &e) < 0)
		return 0; /* the check after the run reports it */
	arm(g);
	return out->n - before;
}

void guard_disarm(struct guard *g)
{
	if (!g)
		return;
	for (size_t i = 0; g->fd >= 0 && i < g->nw; i++)
		(void)inotify_rm_watch(g->fd, g->w[i].wd); /* EINVAL: already gone */
	for (size_t i = 0; i < g->nw; i++)
		free(g->w[i].path);
	g->nw = 0;
	g->done = true;
	/* with the helper: our reference goes now (not the last), then the helper makes the last
	 * close while the checks after the run go on (guard_unwatch_start) */
	if (g->unwatch_go >= 0) {
		(void)close(g->fd);
		g->fd = -1;
		(void)close(g->unwatch_go);
		g->unwatch_go = -1;
	}
}

int guard_finish(struct guard *g, struct violations *out, struct err *e)
{
	/* the watches are removed now and the fd closed at guard_free: closing one with watches
	 * waits for the kernel to release them, time better spent on the check */
	guard_disarm(g);
	return check(g, false, out, e) < 0 ? -1 : 0;
}

void guard_free(struct guard *g)
{
	if (!g)
		return;
	/* with a helper, ours is not the last reference: this close does not wait; then the
	 * helper's turn (guard_unwatch_start) */
	if (g->fd >= 0)
		(void)close(g->fd);
	if (g->unwatch_go >= 0)
		(void)close(g->unwatch_go);
	if (g->unwatch > 0)
		unwatch_end(g);
	for (size_t i = 0; i < g->nw; i++)
		free(g->w[i].path);
	free(g->w);
	strv_free(&g->paths);
	strv_free(&g->watched);
	strv_free(&g->failed);
	free(g->qdir);
	snapshot_free(&g->before);
	snapkeep_free(&g->kept);
	free(g);
}
