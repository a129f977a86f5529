/* watch: live inotify watch of missing protected paths (see watch.h). */
#include "core/jail/watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
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

/* ---- live ---- */

#define WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | \
		    IN_DONT_FOLLOW)
#define WATCH_MAX_ARM 64 /* re-arm rounds for one path: at most one per directory level */

struct wdir {
	int wd;
	char *path;
};

struct watch {
	int fd;
	struct strv paths;
	char *qdir;
	struct wdir *dirs;
	size_t ndirs;
	bool armed; /* the first watch_handle arms every path */
	bool disarmed; /* watch_disarm: the run is over, nothing is armed again */
	struct strv failed; /* paths whose move aside failed: reported once, left to the end */
};

static bool real_dir(void *arg, const char *path)
{
	(void)arg;
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *dir_of(const struct watch *w, int wd)
{
	for (size_t i = 0; i < w->ndirs; i++)
		if (w->dirs[i].wd == wd)
			return w->dirs[i].path;
	return NULL;
}

static void forget(struct watch *w, int wd)
{
	for (size_t i = 0; i < w->ndirs; i++) {
		if (w->dirs[i].wd != wd)
			continue;
		free(w->dirs[i].path);
		w->dirs[i] = w->dirs[--w->ndirs];
		return;
	}
}

/* Watch the deepest existing directory on the way to `path`; again when a deeper one appeared
 * meanwhile (created between the look and the watch). */
static void arm(struct watch *w, const char *path)
{
	_cleanup_free_ char *a = watch_anchor(path, real_dir, NULL);
	for (int round = 0; round < WATCH_MAX_ARM; round++) {
		int wd = inotify_add_watch(w->fd, a, WATCH_MASK);
		if (wd >= 0 && !dir_of(w, wd)) {
			w->dirs = xrealloc(w->dirs, (w->ndirs + 1) * sizeof *w->dirs);
			w->dirs[w->ndirs++] = (struct wdir){wd, xstrdup(a)};
		}
		char *b = watch_anchor(path, real_dir, NULL);
		bool same = !strcmp(a, b);
		free(a);
		a = b;
		if (same)
			break;
	}
}

/* Arm every path, then move aside each one that exists (after arming: one created meanwhile is
 * either seen here or raises an event). */
static size_t rescan(struct watch *w, struct violations *out)
{
	size_t before = out->n;
	for (size_t i = 0; i < w->paths.n; i++) {
		const char *p = w->paths.v[i];
		if (strv_contains(&w->failed, p))
			continue;
		arm(w, p);
		struct stat st;
		if (lstat(p, &st) < 0)
			continue;
		size_t n = out->n;
		snapshot_move_now(p, w->qdir, out);
		if (out->n > n && out->v[out->n - 1].move_failed)
			strv_push(&w->failed, p); /* once: every later event would fail it again */
		arm(w, p);
	}
	return out->n - before;
}

int watch_start(const struct strv *paths, const char *quarantine_dir, struct watch **out,
		struct err *e)
{
	*out = NULL;
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0) {
		err_set(e, errno, NULL, "cannot watch missing protected paths during the run");
		err_hint(e, "they are still checked after the run; raise fs.inotify.max_user_instances "
			    "if this is EMFILE");
		return -1;
	}
	struct watch *w = xcalloc(1, sizeof *w);
	w->fd = fd;
	strv_copy(&w->paths, paths);
	w->qdir = xstrdup(quarantine_dir);
	*out = w;
	return 0;
}

int watch_fd(const struct watch *w) { return w ? w->fd : -1; }

size_t watch_handle(struct watch *w, struct violations *out)
{
	if (w->disarmed)
		return 0;
	bool need = !w->armed;
	w->armed = true;
	/* aligned as inotify wants it */
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EAGAIN: drained */
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof *ev + ev->len;
			if (ev->mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
				need = true; /* a directory on the way went: arm higher up */
			if (ev->mask & IN_MOVE_SELF)
				(void)inotify_rm_watch(w->fd, ev->wd); /* its path names another now */
			if (ev->mask & (IN_IGNORED | IN_MOVE_SELF)) {
				forget(w, ev->wd);
				continue;
			}
			const char *dir = dir_of(w, ev->wd);
			for (size_t i = 0; dir && ev->len && !need && i < w->paths.n; i++)
				need = watch_event_concerns(dir, ev->name, w->paths.v[i]);
		}
	}
	return need ? rescan(w, out) : 0;
}

void watch_disarm(struct watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->ndirs; i++) {
		(void)inotify_rm_watch(w->fd, w->dirs[i].wd); /* EINVAL: already gone */
		free(w->dirs[i].path);
	}
	w->ndirs = 0;
	w->disarmed = true;
}

void watch_stop(struct watch *w)
{
	if (!w)
		return;
	(void)close(w->fd);
	strv_free(&w->paths);
	strv_free(&w->failed);
	free(w->qdir);
	for (size_t i = 0; i < w->ndirs; i++)
		free(w->dirs[i].path);
	free(w->dirs);
	free(w);
}
