/* rvapply: a change set applied to the workspace (changeset.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/review/review_internal.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

void rv_apply_report_free(struct rv_apply_report *r)
{
	strv_free(&r->applied);
	strv_free(&r->held);
	strv_free(&r->failed);
}

/* One change on its way: the directory it goes in (opened without following a symlink; the
 * cache's, not its own) and, for a file or a link, the temporary name it was staged under. */
struct step {
	const struct rv_change *ch;
	int pfd;
	const char *base;
	char tmp[64];
	bool staged, done;
};

/* The directory of the last path asked for, kept open: the changes come in path order, so
 * a directory's files follow each other; one fd open at a time, however large the set. */
struct pcache {
	int top;
	char *dir;
	int fd;
};

static void pcache_drop(struct pcache *c)
{
	if (c->fd >= 0)
		(void)close(c->fd);
	c->fd = -1;
	free(c->dir);
	c->dir = NULL;
}

/* The directory holding rel below c->top (fs_open_parent), *base its last component. */
static int pcache_get(struct pcache *c, const char *rel, bool make, const char **base)
{
	const char *slash = strrchr(rel, '/');
	size_t dl = slash ? (size_t)(slash - rel) : 0;
	*base = slash ? slash + 1 : rel;
	if (c->dir && c->fd >= 0 && strlen(c->dir) == dl && !strncmp(c->dir, rel, dl))
		return c->fd;
	pcache_drop(c);
	c->fd = fs_open_parent(c->top, rel, make, 0755, base);
	if (c->fd >= 0)
		c->dir = xstrndup(rel, dl);
	return c->fd;
}

static int open_beneath(int root, const char *rel, int flags)
{
	struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
	return (int)syscall(SYS_openat2, root, rel, &how, sizeof how);
}

/* Why the change is held back, or NULL when it is applied. */
static char *held_why(const struct rv_change *ch, const struct rv_apply_opts *o,
		      const char *upper)
{
	if (ch->why)
		return xasprintf("not applied: %s", ch->why);
	if (ch->guard == RV_NEVER)
		return xasprintf("never applied: git runs or follows it; read it in %s/%s and copy "
				 "it by hand if you want it",
				 upper, ch->rel);
	bool named = o->paths && o->paths->n && review_named(ch->rel, ch->root, o->paths);
	if (ch->guard == RV_NAMED && !named && ch->op == RV_DELETE && ch->root &&
	    review_git_dir_len(ch->rel) == strlen(ch->root))
		return xasprintf("a deletion in git's own directory (history, refs): applied only "
				 "when named: agentjail apply %.8s %s",
				 o->id ? o->id : "ID", ch->rel);
	if (ch->guard == RV_NAMED && !named)
		return xasprintf("protected (%s): applied only when named: agentjail apply %.8s %s",
				 ch->root ? ch->root : ch->rel, o->id ? o->id : "ID",
				 ch->root ? ch->root : ch->rel);
	if (ch->conflict && !o->force)
		return xstrdup("conflict: the workspace changed there since the jail did (--force "
			       "applies it over that)");
	return NULL;
}

static unsigned stage_n;

/* Test builds: AGENTJAIL_TEST_APPLY_PAUSE=FILE makes apply, its files staged, create FILE and
 * wait (at most 30 s) until it is removed: a test changes the workspace in that window. */
static void test_pause(void)
{
#ifdef AJ_TEST_BUILD
	const char *f = getenv("AGENTJAIL_TEST_APPLY_PAUSE");
	int fd = f ? open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
	if (fd < 0)
		return;
	(void)close(fd);
	for (int i = 0; i < 600 && access(f, F_OK) == 0; i++)
		(void)usleep(50000);
#endif
}

/* A file or a link written beside its place under a temporary name. */
static int stage(struct step *st, int ufd)
{
	const struct rv_change *ch = st->ch;
	for (int tries = 0; tries < 100; tries++) {
		snprintf(st->tmp, sizeof st->tmp, REVIEW_TMP_PREFIX "%d.%u", (int)getpid(),
			 stage_n++);
		if (ch->op == RV_SYMLINK) {
			if (symlinkat(ch->target, st->pfd, st->tmp) == 0)
				break;
		} else {
			int out = openat(st->pfd, st->tmp,
					 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (out >= 0) {
				int in = open_beneath(ufd, ch->rel, O_RDONLY | O_NONBLOCK);
				struct stat is;
				int rc = in < 0 || fstat(in, &is) < 0 || !S_ISREG(is.st_mode) ? -1 : 0;
				if (rc == 0)
					rc = rv_copy_fd(in, out);
				if (rc == 0)
					rc = fchmod(out, ch->new_mode);
				int saved = errno;
				if (in >= 0)
					(void)close(in);
				(void)close(out);
				if (rc == 0)
					break;
				(void)unlinkat(st->pfd, st->tmp, 0);
				errno = saved ? saved : EINVAL;
				return -1;
			}
		}
		if (errno != EEXIST)
			return -1;
	}
	st->staged = true;
	return 0;
}

/* A directory's mode set, the directory opened without following a link. */
static int set_mode(int pfd, const char *base, mode_t mode, char want)
{
	struct stat st;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if ((want == 'd') != S_ISDIR(st.st_mode) || (want == 'f' && !S_ISREG(st.st_mode))) {
		errno = ESTALE;
		return -1;
	}
	int fd = openat(pfd, base,
			(want == 'd' ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK) | O_NOFOLLOW |
				O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fchmod(fd, mode);
	int saved = errno;
	(void)close(fd);
	errno = saved;
	return rc;
}

static int finish(struct step *st)
{
	const struct rv_change *ch = st->ch;
	struct stat cur;
	bool here = fstatat(st->pfd, st->base, &cur, AT_SYMLINK_NOFOLLOW) == 0;
	switch (ch->op) {
	case RV_DELETE:
		return rv_remove_at(st->pfd, st->base);
	case RV_MODE:
		return set_mode(st->pfd, st->base, ch->new_mode, ch->old_kind);
	case RV_MKDIR:
		if (here && !S_ISDIR(cur.st_mode) && rv_remove_at(st->pfd, st->base) < 0)
			return -1;
		if ((!here || !S_ISDIR(cur.st_mode)) && mkdirat(st->pfd, st->base, 0700) < 0)
			return -1;
		return set_mode(st->pfd, st->base, ch->new_mode, 'd');
	default:
		/* a directory in the way (the jail replaced it by a file or a link) goes first:
		 * rename cannot replace it */
		if (here && S_ISDIR(cur.st_mode) && rv_remove_at(st->pfd, st->base) < 0)
			return -1;
		return renameat(st->pfd, st->tmp, st->pfd, st->base);
	}
}

/* The upper layer's entry of an applied change removed (a whiteout, a file, a link). */
static void drop_upper(struct pcache *up, const struct rv_change *ch)
{
	if (ch->op == RV_MKDIR || ch->op == RV_MODE)
		return; /* directories: pruned once empty */
	const char *base;
	int pfd = pcache_get(up, ch->rel, false, &base);
	struct stat st;
	if (pfd >= 0 && fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
		(void)unlinkat(pfd, base, 0);
}

/* Empty directories of the upper layer that the workspace now has the same: gone, so the
 * change set holds only what still differs. Returns whether ufd's directory is empty now. */
static bool prune(int ufd, int wfd, int depth)
{
	struct strv names = STRV_INIT;
	if (depth > RV_MAX_DEPTH || !rv_names(ufd, &names))
		return false;
	size_t left = names.n;
	for (size_t i = 0; i < names.n; i++) {
		struct stat us, ws;
		if (fstatat(ufd, names.v[i], &us, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(us.st_mode) ||
		    wfd < 0 || fstatat(wfd, names.v[i], &ws, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(ws.st_mode))
			continue;
		int cu = rv_opendir_at(ufd, names.v[i]), cw = rv_opendir_at(wfd, names.v[i]);
		bool empty = cu >= 0 && prune(cu, cw, depth + 1);
		struct rv_xattrs xa;
		rv_xattrs_of(ufd, names.v[i], &xa);
		struct strv theirs = STRV_INIT;
		bool theirs_empty = cw >= 0 && rv_names(cw, &theirs) && theirs.n == 0;
		strv_free(&theirs);
		if (cu >= 0)
			(void)close(cu);
		if (cw >= 0)
			(void)close(cw);
		bool same_mode = review_mode(us.st_mode, true, ws.st_mode) == (ws.st_mode & 0777);
		if (empty && same_mode && !xa.foreign && (!xa.opaque || theirs_empty) &&
		    unlinkat(ufd, names.v[i], AT_REMOVEDIR) == 0)
			left--;
	}
	strv_free(&names);
	return left == 0;
}

/* Whether the workspace's entry at the step's place is still what the walk saw (the walk judged
 * the conflict): kind, inode, size, mtime. Not the ctime: apply's own rename or chmod of a
 * hard link of it moves that. A directory: its kind only (apply's steps below it change its
 * times). */
static bool still_seen(const struct step *st)
{
	const struct rv_change *ch = st->ch;
	struct stat cur;
	if (fstatat(st->pfd, st->base, &cur, AT_SYMLINK_NOFOLLOW) < 0)
		return ch->old_kind == '-';
	char k = rv_kind_of(&cur);
	if (k != ch->old_kind)
		return false;
	return k == 'd' || ((unsigned long long)cur.st_ino == ch->wino &&
			    (unsigned long long)cur.st_size == ch->wsize &&
			    rv_ns(&cur.st_mtim) == ch->wmtime_ns);
}

/* The change made, reported, and gone from the change set when it was; held back when the
 * workspace changed there while apply ran (unless forced). */
static void step_finish(struct step *st, struct pcache *up, bool force, struct rv_apply_report *r)
{
	st->done = true;
	if (!force && !still_seen(st)) {
		strv_pushf(&r->held, "%s: conflict: the workspace changed there while apply ran "
				     "(--force applies it over that)",
			   st->ch->rel);
		if (st->staged)
			(void)unlinkat(st->pfd, st->tmp, 0);
		return;
	}
	if (finish(st) < 0) {
		strv_pushf(&r->failed, "%s: %s", st->ch->rel, strerror(errno));
		if (st->staged)
			(void)unlinkat(st->pfd, st->tmp, 0);
		return;
	}
	strv_push(&r->applied, st->ch->rel);
	drop_upper(up, st->ch);
}

/* A staged file's bytes on disk (when syncfs could not). */
static int fsync_staged(struct pcache *wc, struct step *st)
{
	if (st->ch->op == RV_SYMLINK)
		return 0;
	st->pfd = pcache_get(wc, st->ch->rel, false, &st->base);
	int fd = st->pfd < 0 ? -1 : openat(st->pfd, st->tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int rc = fd < 0 ? -1 : fsync(fd);
	if (fd >= 0)
		(void)close(fd);
	return rc;
}

int rv_apply(struct rv_ctx *c, const struct rv_set *set, const struct rv_apply_opts *o,
	     struct rv_apply_report *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	_cleanup_close_ int ws = rv_opendir_path(c->workspace);
	if (ws < 0)
		return err_set(e, errno, c->workspace, "apply: cannot open the workspace");
	_cleanup_close_ int ufd = rv_opendir_path(c->p->upper);
	if (ufd < 0)
		return err_set(e, errno, c->p->upper, "apply: cannot read the change set");
	struct step *steps = xcalloc(set->n ? set->n : 1, sizeof *steps);
	size_t n = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct rv_change *ch = &set->v[i];
		if (o->paths && o->paths->n && !review_named(ch->rel, NULL, o->paths))
			continue;
		_cleanup_free_ char *why = held_why(ch, o, c->p->upper);
		if (why)
			strv_pushf(&r->held, "%s: %s", ch->rel, why);
		else
			steps[n++] = (struct step){.ch = ch, .pfd = -1};
	}
	/* first what changes the tree (deletions, directories, modes), in path order, so the
	 * files below find their directories; then the files and links staged beside their
	 * places, their bytes on disk (one syncfs), and renamed into place */
	struct pcache wc = {.top = ws, .fd = -1}, uc = {.top = ufd, .fd = -1};
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			struct step *st = &steps[i];
			const struct rv_change *ch = st->ch;
			bool file = ch->op == RV_ADD || ch->op == RV_MODIFY || ch->op == RV_SYMLINK;
			if (file != (pass == 1))
				continue;
			st->pfd = pcache_get(&wc, ch->rel, ch->op != RV_DELETE && ch->op != RV_MODE,
					     &st->base);
			if (st->pfd < 0) {
				strv_pushf(&r->failed, "%s: %s (a directory on its way is a symlink or "
						       "not a directory in the workspace)",
					   ch->rel, strerror(errno));
				st->done = true;
			} else if (file && stage(st, ufd) < 0) {
				strv_pushf(&r->failed, "%s: %s (staging it beside its place)", ch->rel,
					   strerror(errno));
				st->done = true;
			} else if (!file) {
				step_finish(st, &uc, o->force, r);
			}
		}
	}
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= steps[i].staged && !steps[i].done;
	test_pause();
	if (any && syncfs(ws) < 0)
		for (size_t i = 0; i < n; i++)
			if (steps[i].staged && !steps[i].done && fsync_staged(&wc, &steps[i]) < 0)
				break;
	for (size_t i = 0; i < n; i++) {
		struct step *st = &steps[i];
		if (!st->staged || st->done)
			continue;
		/* the same directory, opened again the same way */
		st->pfd = pcache_get(&wc, st->ch->rel, false, &st->base);
		if (st->pfd < 0) {
			strv_pushf(&r->failed, "%s: %s (its directory changed since it was staged)",
				   st->ch->rel, strerror(errno));
			st->done = true;
			continue;
		}
		step_finish(st, &uc, o->force, r);
	}
	pcache_drop(&wc);
	pcache_drop(&uc);
	free(steps);
	if (r->applied.n) {
		(void)prune(ufd, ws, 0);
		struct err ignored = {0};
		if (rv_record(c, LLONG_MAX, &ignored) < 0)
			strv_pushf(&r->failed, "(the baselines): %s", ignored.what);
	}
	return 0;
}
