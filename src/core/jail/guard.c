/* guard: see guard.h. */
#include "core/jail/guard.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/jail/snapkeep.h"
#include "core/jail/watch.h"
#include "util/xalloc.h"

/* A directory on the way: a protected name appearing, leaving or replaced there. */
#define WAY_MASK (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | \
		  IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_MASK_ADD)
/* A protected path itself: its content, mode, entries (a directory) or the inode going. */
#define SELF_MASK (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | \
		   IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | \
		   IN_DONT_FOLLOW | IN_MASK_ADD)

struct gwatch {
	int wd;
	char *path;
	bool self; /* a protected path itself: any event concerns it */
};

struct guard {
	int fd;
	struct strv paths;
	char *qdir;
	struct snapshot before;
	struct snapkeep keep;
	struct gwatch *w;
	size_t nw;
	bool done; /* guard_finish: nothing is watched any more */
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

static void add(struct guard *g, const char *path, bool self)
{
	int wd = inotify_add_watch(g->fd, path, self ? SELF_MASK : WAY_MASK);
	if (wd < 0)
		return; /* gone meanwhile: the next event, or the check after the run, sees it */
	struct gwatch *w = find_wd(g, wd);
	if (w) {
		w->self |= self;
		return;
	}
	g->w = xrealloc(g->w, (g->nw + 1) * sizeof *g->w);
	g->w[g->nw++] = (struct gwatch){wd, xstrdup(path), self};
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

/* Watch every protected path (when it exists) and the deepest directory on its way. */
static void arm(struct guard *g)
{
	for (size_t i = 0; g->fd >= 0 && i < g->paths.n; i++) {
		const char *p = g->paths.v[i];
		char *a = watch_anchor(p, real_dir, NULL);
		add(g, a, false);
		free(a);
		struct stat st;
		if (lstat(p, &st) == 0 && !S_ISLNK(st.st_mode))
			add(g, p, true);
	}
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
	const struct keep_entry *ke = snapkeep_find(&g->keep, v->path);
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

/* Check every path against the snapshot, move aside what changed, restore what existed. */
static int round_(struct guard *g, bool live, struct violations *out, struct err *e)
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

int guard_start(const struct strv *paths, const char *quarantine_dir, struct guard **out,
		struct err *live_err, struct err *e)
{
	*out = NULL;
	struct guard *g = xcalloc(1, sizeof *g);
	g->fd = -1;
	if (snapshot_take(paths, &g->before, e) < 0) {
		free(g);
		return -1;
	}
	strv_copy(&g->paths, paths);
	g->qdir = xstrdup(quarantine_dir);
	snapkeep_take(&g->before, &g->keep);
	if (paths->n) {
		g->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (g->fd < 0) {
			err_set(live_err, errno, NULL,
				"cannot watch protected paths during the run");
			err_hint(live_err, "they are still checked after the run; raise "
					   "fs.inotify.max_user_instances if this is EMFILE");
		}
	}
	arm(g);
	*out = g;
	return 0;
}

int guard_fd(const struct guard *g) { return g ? g->fd : -1; }

size_t guard_handle(struct guard *g, struct violations *out)
{
	if (!g || g->fd < 0 || g->done)
		return 0;
	bool need = false;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(g->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof *ev + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				need = true;
				continue;
			}
			struct gwatch *w = find_wd(g, ev->wd);
			if (!w)
				continue;
			if (w->self || (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)))
				need = true;
			for (size_t i = 0; !need && ev->len && i < g->paths.n; i++)
				need = watch_event_concerns(w->path, ev->name, g->paths.v[i]);
			if (ev->mask & IN_MOVE_SELF)
				(void)inotify_rm_watch(g->fd, ev->wd); /* its path names another now */
			if (ev->mask & (IN_IGNORED | IN_MOVE_SELF))
				forget(g, ev->wd);
		}
	}
	if (!need)
		return 0;
	struct err e = {0};
	size_t before = out->n;
	if (round_(g, true, out, &e) < 0)
		return 0; /* the check after the run reports it */
	arm(g);
	return out->n - before;
}

int guard_finish(struct guard *g, struct violations *out, struct err *e)
{
	/* the watches are removed now and the fd closed at guard_free: closing one with watches
	 * waits for the kernel to release them (watch.h), time better spent on the check */
	for (size_t i = 0; g->fd >= 0 && i < g->nw; i++) {
		(void)inotify_rm_watch(g->fd, g->w[i].wd);
		free(g->w[i].path);
	}
	g->nw = 0;
	g->done = true;
	return round_(g, false, out, e) < 0 ? -1 : 0;
}

void guard_free(struct guard *g)
{
	if (!g)
		return;
	if (g->fd >= 0)
		(void)close(g->fd);
	for (size_t i = 0; i < g->nw; i++)
		free(g->w[i].path);
	free(g->w);
	strv_free(&g->paths);
	free(g->qdir);
	snapshot_free(&g->before);
	snapkeep_free(&g->keep);
	free(g);
}
