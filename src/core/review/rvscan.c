/* rvscan: the change set against the workspace, and its baselines (changeset.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/plan/relname.h"
#include "core/review/review_internal.h"
#include "util/hex.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/termtext.h"
#include "util/xalloc.h"

#define BASELINE_MAX (256u << 20) /* bytes of the baselines file */
#define TREE_MAX 100000           /* entries of a directory's listing in its baseline */

int rv_load_baselines(struct rv_ctx *c, struct err *e)
{
	memset(&c->base, 0, sizeof c->base);
	int fd = fs_open_nofollow(c->p->baseline, O_RDONLY);
	if (fd < 0)
		return errno == ENOENT ? 0 : err_set(e, errno, c->p->baseline, "cannot read the "
									       "change set's "
									       "baselines");
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (unsigned long long)st.st_size >
								  BASELINE_MAX) {
		(void)close(fd);
		return err_set(e, EINVAL, c->p->baseline, "the change set's baselines are not a "
							  "file agentjail wrote");
	}
	size_t got;
	char *buf = rv_read_fd(fd, (size_t)st.st_size, &got);
	(void)close(fd);
	int rc = rv_manifest_parse(buf, got, c->p->baseline, &c->base, e);
	free(buf);
	return rc;
}

void rv_ctx_free(struct rv_ctx *c)
{
	rv_manifest_free(&c->base);
}

/* ---- baselines ---- */

static void hash_fd(int fd, unsigned char out[32])
{
	struct sha256 h;
	sha256_init(&h);
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		sha256_update(&h, buf, (size_t)n);
	}
	sha256_final(&h, out);
}

struct tree {
	struct sha256 h;
	size_t n;
};

static bool tree_visit(void *arg, int dirfd, const char *name, const char *rel,
		       const struct stat *st, bool *stop)
{
	struct tree *t = arg;
	char line[128];
	int l = snprintf(line, sizeof line, "%o %lld %lld", st->st_mode, (long long)st->st_size,
			 rv_ns(&st->st_mtim));
	sha256_update(&t->h, rel, strlen(rel) + 1);
	sha256_update(&t->h, line, (size_t)l + 1);
	*stop = ++t->n >= TREE_MAX;
	return true;
}

/* what the workspace holds at name below dirfd; the hash only when `hash` (a directory's:
 * its listing, only when `tree`) */
static void base_of(int dirfd, const char *name, const char *rel, bool hash, bool tree,
		    struct rv_base *out)
{
	memset(out, 0, sizeof *out);
	out->rel = (char *)rel;
	out->kind = '-';
	struct stat st;
	if (dirfd < 0 || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	out->size = (unsigned long long)st.st_size;
	out->ino = (unsigned long long)st.st_ino;
	out->mtime_ns = rv_ns(&st.st_mtim);
	out->ctime_ns = rv_ns(&st.st_ctim);
	if (S_ISREG(st.st_mode)) {
		out->kind = 'f';
		int fd = hash ? openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
			      : -1;
		if (fd >= 0) {
			hash_fd(fd, out->hash);
			(void)close(fd);
		}
	} else if (S_ISLNK(st.st_mode)) {
		out->kind = 'l';
		char target[4096];
		ssize_t n = readlinkat(dirfd, name, target, sizeof target);
		struct sha256 h;
		sha256_init(&h);
		if (n > 0)
			sha256_update(&h, target, (size_t)n);
		sha256_final(&h, out->hash);
	} else if (S_ISDIR(st.st_mode)) {
		out->kind = 'd';
		out->size = out->ino = 0;
		out->mtime_ns = 0;
		int fd = hash && tree ? rv_opendir_at(dirfd, name) : -1;
		if (fd >= 0) {
			struct tree t = {.n = 0};
			sha256_init(&t.h);
			rv_walk(fd, "", tree_visit, &t);
			sha256_final(&t.h, out->hash);
			(void)close(fd);
		}
	} else {
		out->kind = 'o';
	}
}

void rv_base_of(int dirfd, const char *name, const char *rel, struct rv_base *out)
{
	base_of(dirfd, name, rel, true, true, out);
}

/* ---- the walk ---- */

struct scan {
	struct rv_ctx *c;
	struct rv_set *out;
	int upper, ws;           /* the tops */
	size_t entries;
	bool record;             /* rv_record: every entry that shadows the workspace gets a
				  * baseline instead of being judged */
	long long since;
	struct rv_manifest fresh; /* rv_record: the baselines of this walk */
	struct stat cur;          /* the upper entry being judged (has_cur), for add() */
	bool has_cur;
};

static struct rv_change *add(struct scan *s, const char *rel, enum rv_op op)
{
	struct rv_set *o = s->out;
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 256;
		o->v = xrealloc(o->v, o->cap * sizeof *o->v);
	}
	struct rv_change *ch = &o->v[o->n++];
	memset(ch, 0, sizeof *ch);
	ch->rel = xstrdup(rel);
	ch->op = op;
	ch->old_kind = '-';
	if (s->has_cur) {
		ch->uino = (unsigned long long)s->cur.st_ino;
		ch->umtime_ns = rv_ns(&s->cur.st_mtim);
		ch->uctime_ns = rv_ns(&s->cur.st_ctim);
	}
	return ch;
}

static void refuse(struct scan *s, const char *rel, enum rv_op op, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void refuse(struct scan *s, const char *rel, enum rv_op op, const char *fmt, ...)
{
	if (s->record)
		return;
	struct rv_change *ch = add(s, rel, op);
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&ch->why, fmt, ap) < 0)
		ch->why = xstrdup("refused");
	va_end(ap);
}

static long stat_beneath(int root, const char *rel, struct stat *st)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
	long fd = syscall(SYS_openat2, root, rel, &how, sizeof how);
	if (fd < 0)
		return -1;
	long rc = fstat((int)fd, st);
	(void)close((int)fd);
	return rc;
}

/* dir/HEAD in the merged view: the change set's (not a whiteout), else the workspace's */
static bool has_head(void *arg, const char *dir)
{
	struct scan *s = arg;
	_cleanup_free_ char *head = dir[0] ? xasprintf("%s/HEAD", dir) : xstrdup("HEAD");
	struct stat st;
	if (stat_beneath(s->upper, head, &st) == 0)
		return !(S_ISCHR(st.st_mode) && st.st_rdev == 0);
	return stat_beneath(s->ws, head, &st) == 0;
}

/* rv_record: the entry's baseline, kept from before or taken now. A workspace path changed
 * since the run started is marked (a conflict), and so is one whose change set entry is older
 * than the run (uctime, its ctime): its own run's baseline was lost (it did not end normally),
 * and what the workspace holds now may be a change of the host's since. */
static void keep_base(struct scan *s, int wfd, const char *name, const char *rel, bool tree,
		      long long uctime)
{
	const struct rv_base *b = rv_manifest_find(&s->c->base, rel);
	if (b) {
		rv_manifest_add(&s->fresh, b);
		return;
	}
	struct rv_base now;
	base_of(wfd, name, rel, true, tree, &now);
	now.during = now.kind != '-' && (now.ctime_ns >= s->since || uctime < s->since);
	rv_manifest_add(&s->fresh, &now);
}

/* The workspace's tree below a deleted directory: its entries counted, its strongest
 * protection (a deletion is never "never": removing a hook runs nothing, so at most "when
 * named"). */
static void judge_tree(struct scan *s, int dirfd, const char *rel, int depth, struct rv_change *ch)
{
	struct strv names = STRV_INIT;
	if (depth > RV_MAX_DEPTH || !rv_names(dirfd, &names)) {
		ch->guard = RV_NAMED;
		return;
	}
	for (size_t i = 0; i < names.n; i++) {
		if (++ch->files > TREE_MAX) {
			ch->guard = RV_NAMED; /* too large to look through: named, to be sure */
			break;
		}
		_cleanup_free_ char *sub = xasprintf("%s/%s", rel, names.v[i]);
		struct stat st;
		bool dir = fstatat(dirfd, names.v[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			   S_ISDIR(st.st_mode);
		char *root = NULL;
		enum rv_guard g = review_guard(sub, dir, s->c->rules, has_head, s, &root);
		if (g != RV_FREE && ch->guard == RV_FREE) {
			ch->guard = RV_NAMED;
			ch->root = root ? xstrdup(rel) : NULL;
		}
		free(root);
		if (!dir)
			continue;
		int fd = rv_opendir_at(dirfd, names.v[i]);
		if (fd >= 0) {
			judge_tree(s, fd, sub, depth + 1, ch);
			(void)close(fd);
		}
	}
	strv_free(&names);
}

/* The guard and the conflict of a change at name below the workspace's wfd. */
static void judge(struct scan *s, struct rv_change *ch, int wfd, const char *name, bool is_dir)
{
	ch->guard = review_guard(ch->rel, is_dir, s->c->rules, has_head, s, &ch->root);
	if (ch->op == RV_DELETE && ch->guard == RV_NEVER)
		ch->guard = RV_NAMED;
	size_t git = ch->op == RV_DELETE && ch->guard == RV_FREE ? review_git_dir_len(ch->rel) : 0;
	if (git && git < strlen(ch->rel)) { /* below a .git: history and refs, named to go */
		ch->guard = RV_NAMED;
		ch->root = xstrndup(ch->rel, git);
	}
	/* a directory of the workspace removed, or replaced by a file or a link: as protected
	 * as what it holds */
	if (ch->old_kind == 'd' && ch->op != RV_MODE) {
		int fd = rv_opendir_at(wfd, name);
		if (fd >= 0) {
			judge_tree(s, fd, ch->rel, 0, ch);
			(void)close(fd);
		}
		if (ch->guard != RV_FREE && !ch->root)
			ch->root = xstrdup(ch->rel);
	}
	const struct rv_base *b = rv_manifest_find(&s->c->base, ch->rel);
	bool tree = ch->op == RV_DELETE && ch->old_kind == 'd';
	struct rv_base now;
	base_of(wfd, name, ch->rel, false, false, &now);
	if (!b) {
		/* no baseline (the run did not end normally): only a path the workspace does not
		 * have is safe to write */
		ch->conflict = now.kind != '-';
		return;
	}
	if (b->during || b->kind != now.kind) {
		ch->conflict = true;
		return;
	}
	if (now.kind == 'f' && b->size == now.size && b->ino == now.ino &&
	    b->mtime_ns == now.mtime_ns)
		return;
	if (now.kind == '-' || (now.kind == 'd' && !tree))
		return;
	base_of(wfd, name, ch->rel, true, tree, &now);
	ch->conflict = !rv_base_same(b, &now);
}

/* The target of rel when it is a symlink in the merged view (the change set's entry, else the
 * workspace's), or NULL. */
static char *merged_link(struct scan *s, const char *rel)
{
	for (int top = 0; top < 2; top++) {
		struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
						  RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
		int fd = (int)syscall(SYS_openat2, top ? s->ws : s->upper, rel, &how, sizeof how);
		if (fd < 0)
			continue; /* not there (or under a link: the caller follows that one first) */
		struct stat st;
		char t[4096];
		ssize_t n = fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)
				    ? readlinkat(fd, "", t, sizeof t - 1)
				    : -1;
		(void)close(fd);
		if (n < 0)
			return NULL; /* there, and not a link (a whiteout too) */
		t[n] = '\0';
		return xstrdup(t);
	}
	return NULL;
}

/* Where the link rel -> target lands in the merged view, every link on the way followed (each
 * taken lexically from its directory, at most 40): the path inside the workspace, or NULL
 * when it leaves it. */
static char *link_lands(struct scan *s, const char *rel, const char *target)
{
	char *cur = review_link_lands(rel, target);
	for (int hops = 0; cur && cur[0]; hops++) {
		bool followed = false;
		for (char *p = cur;; p++) {
			if (*p != '/' && *p != '\0')
				continue;
			char saved = *p;
			*p = '\0';
			char *t = merged_link(s, cur);
			char *next = t ? review_link_lands(cur, t) : NULL;
			*p = saved;
			if (t) {
				char *rest = saved ? xstrdup(p + 1) : NULL;
				free(cur);
				cur = !next ? NULL
				      : rest && next[0] ? xasprintf("%s/%s", next, rest)
				      : rest		 ? xstrdup(rest)
							 : xstrdup(next);
				free(next);
				free(rest);
				free(t);
				followed = true;
				break;
			}
			if (!saved)
				break;
		}
		if (!followed)
			return cur;
		if (hops >= 40) {
			free(cur);
			return NULL;
		}
	}
	return cur;
}

/* A symlink is as protected as where it lands (link_lands): a host tool that writes the
 * link's name writes there. Leaving the workspace through another link: refused; into what
 * git runs: refused; into a protected path: applied only when the link is named. */
static void link_guard(struct scan *s, struct rv_change *ch)
{
	_cleanup_free_ char *at = link_lands(s, ch->rel, ch->target);
	if (!at) {
		ch->why = xasprintf("a symlink leading out of the workspace through another link, "
				    "or through more than 40 (to %s)",
				    ch->target);
		return;
	}
	if (!at[0])
		return;
	struct stat st;
	bool dir = (stat_beneath(s->upper, at, &st) == 0 || stat_beneath(s->ws, at, &st) == 0) &&
		   S_ISDIR(st.st_mode);
	_cleanup_free_ char *root = NULL;
	enum rv_guard g = review_guard(at, dir, s->c->rules, has_head, s, &root);
	if (g == RV_NEVER) {
		ch->why = xasprintf("a symlink into what git runs (to %s)", ch->target);
	} else if (g == RV_NAMED && ch->guard == RV_FREE) {
		ch->guard = RV_NAMED;
		free(ch->root);
		ch->root = xstrdup(ch->rel);
	}
}

/* Whether two regular files hold the same bytes. */
static bool same_bytes(int ufd, int wfd, const char *name, off_t size)
{
	int a = openat(ufd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	int b = openat(wfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	bool same = a >= 0 && b >= 0;
	static char x[65536], y[65536];
	for (off_t done = 0; same && done < size;) {
		ssize_t n = read(a, x, sizeof x);
		if (n <= 0)
			break;
		ssize_t got = 0;
		while (got < n) {
			ssize_t m = read(b, y + got, (size_t)(n - got));
			if (m <= 0)
				break;
			got += m;
		}
		same = got == n && !memcmp(x, y, (size_t)n);
		done += n;
	}
	if (a >= 0)
		(void)close(a);
	if (b >= 0)
		(void)close(b);
	return same;
}

char rv_kind_of(const struct stat *st)
{
	return S_ISREG(st->st_mode) ? 'f' : S_ISDIR(st->st_mode) ? 'd' : S_ISLNK(st->st_mode) ? 'l'
													: 'o';
}

/* What the workspace held at the change's place when the walk saw it. */
static void seen(struct rv_change *ch, const struct stat *ws)
{
	ch->old_kind = rv_kind_of(ws);
	ch->old_mode = ws->st_mode & 07777;
	ch->wino = (unsigned long long)ws->st_ino;
	ch->wsize = (unsigned long long)ws->st_size;
	ch->wmtime_ns = rv_ns(&ws->st_mtim);
}

static void scan_dir(struct scan *s, int ufd, int wfd, const char *rel, bool opaque, int depth);

/* What the jail removed: a whiteout, or an entry an opaque directory hides (uctime: the
 * ctime of the whiteout or of that directory). */
static void deleted(struct scan *s, int wfd, const char *name, const char *rel, long long uctime)
{
	struct stat ws;
	if (wfd < 0 || fstatat(wfd, name, &ws, AT_SYMLINK_NOFOLLOW) < 0)
		return; /* the workspace no longer has it: nothing to remove */
	if (s->record) {
		keep_base(s, wfd, name, rel, S_ISDIR(ws.st_mode), uctime);
		return;
	}
	struct rv_change *ch = add(s, rel, RV_DELETE);
	seen(ch, &ws);
	judge(s, ch, wfd, name, S_ISDIR(ws.st_mode));
}

/* Only the mode of a file or a directory changed. */
static void mode_change(struct scan *s, int wfd, const char *name, const char *rel,
			const struct stat *us, const struct stat *ws, mode_t m)
{
	struct rv_change *ch = add(s, rel, RV_MODE);
	seen(ch, ws);
	ch->new_mode = m;
	ch->bits_dropped = (us->st_mode & 07777) != m;
	judge(s, ch, wfd, name, S_ISDIR(ws->st_mode));
}

static void entry(struct scan *s, int ufd, int wfd, const char *name, const char *rel, int depth)
{
	struct stat us, ws;
	if (fstatat(ufd, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	s->cur = us;
	s->has_cur = true;
	bool had = wfd >= 0 && fstatat(wfd, name, &ws, AT_SYMLINK_NOFOLLOW) == 0;
	struct rv_xattrs xa;
	rv_xattrs_of(ufd, name, &xa);
	if (xa.foreign) {
		refuse(s, rel, RV_REFUSED, "an overlay attribute agentjail never mounts with (%s)",
		       xa.what);
		return;
	}
	if (S_ISCHR(us.st_mode) && us.st_rdev == makedev(0, 0)) {
		deleted(s, wfd, name, rel, rv_ns(&us.st_ctim));
		return;
	}
	if (!S_ISREG(us.st_mode) && !S_ISDIR(us.st_mode) && !S_ISLNK(us.st_mode)) {
		refuse(s, rel, RV_REFUSED, "%s",
		       S_ISFIFO(us.st_mode)  ? "a FIFO"
		       : S_ISSOCK(us.st_mode) ? "a socket"
					      : "a device node");
		return;
	}
	if (S_ISDIR(us.st_mode) && had && S_ISDIR(ws.st_mode)) {
		mode_t m = review_mode(us.st_mode, true, ws.st_mode);
		if (s->record && xa.opaque)
			keep_base(s, wfd, name, rel, false, rv_ns(&us.st_ctim));
		if (!s->record && m != (ws.st_mode & 0777))
			mode_change(s, wfd, name, rel, &us, &ws, m);
		int cu = rv_opendir_at(ufd, name), cw = rv_opendir_at(wfd, name);
		if (cu >= 0)
			scan_dir(s, cu, cw, rel, xa.opaque, depth + 1);
		if (cu >= 0)
			(void)close(cu);
		if (cw >= 0)
			(void)close(cw);
		return;
	}
	if (s->record) {
		keep_base(s, wfd, name, rel, false, rv_ns(&us.st_ctim));
		if (S_ISDIR(us.st_mode)) {
			int cu = rv_opendir_at(ufd, name);
			if (cu >= 0) {
				scan_dir(s, cu, -1, rel, false, depth + 1);
				(void)close(cu);
			}
		}
		return;
	}
	mode_t m = review_mode(us.st_mode, had, had ? ws.st_mode : 0);
	if (S_ISREG(us.st_mode) && had && S_ISREG(ws.st_mode) && us.st_size == ws.st_size &&
	    same_bytes(ufd, wfd, name, us.st_size)) {
		if (m != (ws.st_mode & 0777)) /* else copied up, not changed */
			mode_change(s, wfd, name, rel, &us, &ws, m);
		return;
	}
	char target[4096] = "";
	if (S_ISLNK(us.st_mode)) {
		ssize_t n = readlinkat(ufd, name, target, sizeof target - 1);
		target[n > 0 ? n : 0] = '\0';
		char wt[4096];
		ssize_t k = had && S_ISLNK(ws.st_mode) ? readlinkat(wfd, name, wt, sizeof wt - 1) : -1;
		if (k == n && n > 0 && !memcmp(wt, target, (size_t)n))
			return; /* the same link */
	}
	enum rv_op op = S_ISDIR(us.st_mode) ? RV_MKDIR
			: S_ISLNK(us.st_mode) ? RV_SYMLINK
			: had		     ? RV_MODIFY
					     : RV_ADD;
	struct rv_change *ch = add(s, rel, op);
	if (had)
		seen(ch, &ws);
	ch->new_mode = S_ISLNK(us.st_mode) ? 0777 : m;
	ch->bits_dropped = !S_ISLNK(us.st_mode) && (us.st_mode & 07777) != m;
	ch->size = (unsigned long long)us.st_size;
	if (op == RV_SYMLINK) {
		ch->target = xstrdup(target);
		if (!review_link_inside(rel, target))
			ch->why = xasprintf("a symlink leading out of the workspace (to %s)", target);
	}
	judge(s, ch, wfd, name, S_ISDIR(us.st_mode));
	if (op == RV_SYMLINK && !ch->why)
		link_guard(s, ch);
	if (op == RV_MKDIR) {
		int cu = rv_opendir_at(ufd, name);
		if (cu >= 0) {
			scan_dir(s, cu, -1, rel, false, depth + 1);
			(void)close(cu);
		}
	}
}

static void scan_dir(struct scan *s, int ufd, int wfd, const char *rel, bool opaque, int depth)
{
	struct strv names = STRV_INIT;
	if (depth > RV_MAX_DEPTH) {
		s->out->truncated = true;
		return;
	}
	(void)rv_names(ufd, &names);
	if (opaque && wfd >= 0) {
		struct strv theirs = STRV_INIT;
		(void)rv_names(wfd, &theirs);
		struct stat od;
		bool have = fstat(ufd, &od) == 0;
		long long octime = have ? rv_ns(&od.st_ctim) : 0;
		for (size_t i = 0; i < theirs.n; i++) {
			if (strv_contains(&names, theirs.v[i]))
				continue;
			s->has_cur = have;
			if (have)
				s->cur = od;
			_cleanup_free_ char *r = rel[0] ? xasprintf("%s/%s", rel, theirs.v[i])
							: xstrdup(theirs.v[i]);
			deleted(s, wfd, theirs.v[i], r, octime);
		}
		strv_free(&theirs);
	}
	for (size_t i = 0; i < names.n; i++) {
		if (++s->entries > RV_MAX_ENTRIES) {
			s->out->truncated = true;
			break;
		}
		const char *name = names.v[i];
		s->has_cur = false;
		_cleanup_free_ char *r = rel[0] ? xasprintf("%s/%s", rel, name) : xstrdup(name);
		if (!rel[0] && !strncmp(name, REVIEW_TMP_PREFIX, strlen(REVIEW_TMP_PREFIX)))
			continue; /* never ours to apply */
		if (relname_check(r, strlen(r), NULL) != RELNAME_OK) {
			_cleanup_free_ char *shown = relname_shown(r, strlen(r));
			refuse(s, r, RV_REFUSED, "a name with a control character (%s)", shown);
			continue;
		}
		if (fmt_has_marks(name)) {
			/* U+202E and its kind: "x<RLO>txt.sh" looks like "xhs.txt" in a file list */
			_cleanup_free_ char *shown = fmt_clean(name);
			refuse(s, r, RV_REFUSED, "a name with a mark that reorders text on a terminal (%s)",
			       shown);
			continue;
		}
		entry(s, ufd, wfd, name, r, depth);
	}
	strv_free(&names);
}

static int cmp_change(const void *a, const void *b)
{
	return strcmp(((const struct rv_change *)a)->rel, ((const struct rv_change *)b)->rel);
}

static int open_tops(struct rv_ctx *c, int *upper, int *ws, struct err *e)
{
	*upper = rv_opendir_path(c->p->upper);
	if (*upper < 0)
		return err_set(e, errno, c->p->upper, "cannot read the change set");
	*ws = rv_opendir_path(c->workspace);
	if (*ws < 0) {
		int saved = errno;
		(void)close(*upper);
		return err_set(e, saved, c->workspace, "cannot read the workspace");
	}
	return 0;
}

int rv_scan(struct rv_ctx *c, struct rv_set *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	struct scan s = {.c = c, .out = out};
	if (open_tops(c, &s.upper, &s.ws, e) < 0)
		return -1;
	scan_dir(&s, s.upper, s.ws, "", false, 0);
	(void)close(s.upper);
	(void)close(s.ws);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, cmp_change);
	return 0;
}

void rv_set_digest(const struct rv_set *set, const struct strv *paths,
		   char out[RV_DIGEST_LEN + 1])
{
	struct sha256 h;
	sha256_init(&h);
	for (size_t i = 0; i < set->n; i++) {
		const struct rv_change *ch = &set->v[i];
		if (paths && paths->n && !review_named(ch->rel, NULL, paths))
			continue;
		char line[160];
		int l = snprintf(line, sizeof line, "%d %c %o %llu %llu %lld %lld", (int)ch->op,
				 ch->old_kind, (unsigned)ch->new_mode, ch->size, ch->uino,
				 ch->umtime_ns, ch->uctime_ns);
		sha256_update(&h, ch->rel, strlen(ch->rel) + 1);
		sha256_update(&h, line, (size_t)l + 1);
		const char *t = ch->target ? ch->target : "";
		sha256_update(&h, t, strlen(t) + 1);
	}
	unsigned char d[32];
	sha256_final(&h, d);
	hex_encode(d, RV_DIGEST_LEN / 2, out);
}

int rv_record(struct rv_ctx *c, long long since_ns, struct err *e)
{
	struct rv_set unused = {0};
	struct scan s = {.c = c, .out = &unused, .record = true, .since = since_ns};
	if (open_tops(c, &s.upper, &s.ws, e) < 0)
		return -1;
	scan_dir(&s, s.upper, s.ws, "", false, 0);
	(void)close(s.upper);
	(void)close(s.ws);
	rv_set_free(&unused);
	size_t len;
	_cleanup_free_ char *text = rv_manifest_format(&s.fresh, &len);
	rv_manifest_free(&c->base);
	c->base = s.fresh;
	_cleanup_free_ char *tmp = xasprintf("%s.new", c->p->baseline);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fs_write_all(fd, text, len) < 0 || fsync(fd) < 0) {
		int saved = errno;
		if (fd >= 0)
			(void)close(fd);
		return err_set(e, saved, tmp, "cannot write the change set's baselines");
	}
	(void)close(fd);
	if (rename(tmp, c->p->baseline) < 0)
		return err_set(e, errno, c->p->baseline, "cannot write the change set's baselines");
	return 0;
}

/* ---- reading ---- */

static int open_beneath(int root, const char *rel, int flags)
{
	struct open_how how = {.flags = (unsigned long long)(flags | O_CLOEXEC),
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					  RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
	return (int)syscall(SYS_openat2, root, rel, &how, sizeof how);
}

char *rv_read(const struct rv_ctx *c, bool upper, const char *rel, size_t max, size_t *len)
{
	*len = 0;
	int top = rv_opendir_path(upper ? c->p->upper : c->workspace);
	int fd = top >= 0 ? open_beneath(top, rel, O_RDONLY | O_NONBLOCK) : -1;
	if (top >= 0)
		(void)close(top);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		if (fd >= 0)
			(void)close(fd);
		return NULL;
	}
	char *buf = rv_read_fd(fd, (size_t)st.st_size, len);
	(void)close(fd);
	return buf;
}

static bool file_visit(void *arg, int dirfd, const char *name, const char *rel,
		       const struct stat *st, bool *stop)
{
	struct strv *out = arg;
	if (!S_ISDIR(st->st_mode))
		strv_push(out, rel);
	*stop = out->n >= TREE_MAX;
	return true;
}

void rv_ws_files(const struct rv_ctx *c, const char *rel, struct strv *out)
{
	int top = rv_opendir_path(c->workspace);
	int fd = top >= 0 ? open_beneath(top, rel, O_RDONLY | O_DIRECTORY) : -1;
	if (top >= 0)
		(void)close(top);
	if (fd < 0)
		return;
	rv_walk(fd, rel, file_visit, out);
	(void)close(fd);
}
