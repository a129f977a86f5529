/* snapshot: protected paths before and after a run, and the quarantine for what changed
 * (doc/design.md §3 step 7).
 *
 * The read-only binds are the protection; this is the second line. Everything here runs on the
 * host after the jail is gone, possibly as root, over a tree an agent could write: nothing follows
 * a symlink below a protected path, every walk is bounded, and nothing is ever deleted unless an
 * identical copy was made and synced first.
 *
 * This file takes snapshots and compares them; snapshot_quarantine.c moves what changed aside,
 * snapshot_walk.c is the bounded walk both use. */
#include "core/jail/snapshot_internal.h"

/* ------------------------------------------------------------------------------------------------
 * Digests.
 */

static void hash_u64(struct sha256 *c, uint64_t v)
{
	uint8_t b[8];
	for (unsigned i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (56 - 8 * i));
	sha256_update(c, b, sizeof b);
}

static uint8_t type_tag(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return 'f';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFIFO: return 'p';
	case S_IFSOCK: return 's';
	default: return '?';
	}
}

/* Type and permission bits open every digest: a hook made executable, or a file turned into a
 * directory, is a change even when the bytes are the same. */
static void hash_head(struct sha256 *c, const struct stat *st)
{
	uint8_t tag = type_tag(st->st_mode);
	sha256_update(c, &tag, 1);
	hash_u64(c, st->st_mode & 07777);
}

static int hash_at(struct walk *w, int dfd, const char *name, const struct stat *st,
		   unsigned depth, uint8_t out[32]);

static int hash_file_at(struct walk *w, int dfd, const char *name, const struct stat *st,
			struct sha256 *c)
{
	/* O_NONBLOCK: had the file been swapped for a FIFO, open must fail the check, not hang */
	_cleanup_close_ int fd =
		openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return snap_walk_err(w, errno, "cannot open protected file");
	if (snap_walk_same_entry(w, fd, st) < 0)
		return -1;
	uint8_t buf[65536];
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return snap_walk_err(w, errno, "cannot read protected file");
		if (r == 0)
			return 0;
		sha256_update(c, buf, (size_t)r);
	}
}

static int hash_link_at(struct walk *w, int dfd, const char *name, const struct stat *st,
			struct sha256 *c)
{
	_cleanup_free_ char *target = snap_read_link_at(dfd, name, st->st_size);
	if (!target)
		return snap_walk_err(w, errno, "cannot read protected symlink");
	sha256_update(c, target, strlen(target));
	return 0;
}

/* A directory is its sorted listing: per entry the name (length-prefixed, so names cannot run
 * into each other), type, device and inode (a file swapped for an identical copy is a change)
 * and the entry's own digest. */
static int hash_dir_at(struct walk *w, int dfd, const char *name, const struct stat *st,
		       unsigned depth, struct sha256 *c)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_strv_ struct strv names = STRV_INIT;
	if (snap_walk_enter_dir(w, depth) < 0 || snap_walk_list_dir(w, dfd, name, st, &d, &names) < 0)
		return -1;
	for (size_t i = 0; i < names.n; i++) {
		const char *child = names.v[i];
		size_t old = snap_walk_push(w, child);
		struct stat cst;
		uint8_t digest[32];
		if (fstatat(dirfd(d), child, &cst, AT_SYMLINK_NOFOLLOW) < 0)
			return snap_walk_err(w, errno, "cannot inspect protected path");
		if (hash_at(w, dirfd(d), child, &cst, depth + 1, digest) < 0)
			return -1;
		snap_walk_pop(w, old);
		hash_u64(c, strlen(child));
		sha256_update(c, child, strlen(child));
		hash_u64(c, cst.st_mode & S_IFMT);
		hash_u64(c, (uint64_t)cst.st_dev);
		hash_u64(c, (uint64_t)cst.st_ino);
		sha256_update(c, digest, sizeof digest);
	}
	return 0;
}

static int hash_at(struct walk *w, int dfd, const char *name, const struct stat *st,
		   unsigned depth, uint8_t out[32])
{
	struct sha256 c;
	int r = 0;
	sha256_init(&c);
	hash_head(&c, st);
	if (S_ISREG(st->st_mode))
		r = hash_file_at(w, dfd, name, st, &c);
	else if (S_ISLNK(st->st_mode))
		r = hash_link_at(w, dfd, name, st, &c);
	else if (S_ISDIR(st->st_mode))
		r = hash_dir_at(w, dfd, name, st, depth, &c);
	else
		hash_u64(&c, (uint64_t)st->st_rdev); /* sockets, FIFOs, devices: no content */
	if (r < 0)
		return -1;
	sha256_final(&c, out);
	return 0;
}

static bool is_git(const char *path) { return strcmp(path_basename(path), ".git") == 0; }

/* A .git directory is recorded by kind and inode only: git rewrites its contents all the time
 * (objects, index, refs) and its dangerous parts (hooks, config) are protected paths of their own.
 * A .git file or symlink (worktree, submodule) is hashed: its few bytes say where the repository
 * is, and pointing them elsewhere is how hooks would be planted. */
static bool kind_only(const char *path, const struct stat *st)
{
	return is_git(path) && S_ISDIR(st->st_mode);
}

static int digest_entry(struct snap_entry *se, const struct stat *st, struct err *e)
{
	if (kind_only(se->path, st)) {
		struct sha256 c;
		uint8_t tag = type_tag(st->st_mode);
		sha256_init(&c);
		sha256_update(&c, &tag, 1);
		sha256_final(&c, se->digest);
		return 0;
	}
	struct walk w;
	snap_walk_init(&w, se->path, e);
	int r = hash_at(&w, AT_FDCWD, se->path, st, 0, se->digest);
	sb_free(&w.path);
	return r;
}

/* ------------------------------------------------------------------------------------------------
 * Taking a snapshot.
 */

/* lstat into id; a missing entry, or a parent that is not a directory, is "does not exist". */
static int lstat_id(const char *path, struct snap_id *id, struct stat *st)
{
	*id = (struct snap_id){0};
	if (lstat(path, st) == 0) {
		*id = (struct snap_id){true, st->st_mode & S_IFMT, st->st_dev, st->st_ino};
		return 0;
	}
	return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

static bool same_id(const struct snap_id *a, const struct snap_id *b)
{
	if (a->exists != b->exists)
		return false;
	return !a->exists || (a->type == b->type && a->dev == b->dev && a->ino == b->ino);
}

static void entry_free(struct snap_entry *se)
{
	free(se->path);
	free(se->anc);
	*se = (struct snap_entry){0};
}

/* One pass's lstat of the ancestors (a snapshot's, a check's): protected paths share most of
 * theirs (the workspace and its parents, .claude, .git), so each is asked once a pass, not once
 * a path. One pass sees each ancestor as it was at one moment, which is what the paths asked
 * at that same moment would have seen. */
struct anc_memo {
	struct strv path;
	struct snap_id *id;
	int *err; /* errno of an lstat that failed otherwise than "does not exist" */
};

static void anc_memo_free(struct anc_memo *m)
{
	strv_free(&m->path);
	free(m->id);
	free(m->err);
	*m = (struct anc_memo){.path = STRV_INIT};
}

/* lstat_id of the ancestor `path`, through the memo (NULL: none). -1 with errno as lstat_id. */
static int anc_id(struct anc_memo *m, const char *path, struct snap_id *id)
{
	for (size_t i = 0; m && i < m->path.n; i++)
		if (!strcmp(m->path.v[i], path)) {
			*id = m->id[i];
			errno = m->err[i];
			return m->err[i] ? -1 : 0;
		}
	struct stat st;
	int r = lstat_id(path, id, &st);
	if (m) {
		m->id = xrealloc(m->id, (m->path.n + 1) * sizeof *m->id);
		m->err = xrealloc(m->err, (m->path.n + 1) * sizeof *m->err);
		m->id[m->path.n] = *id;
		m->err[m->path.n] = r < 0 ? errno : 0;
		strv_push(&m->path, path);
	}
	return r;
}

/* Nothing can stand below an ancestor that does not exist or is neither a directory nor a
 * symlink (lstat would say ENOENT or ENOTDIR there): no need to ask. */
static bool anc_dead_end(const struct snap_id *id)
{
	return !id->exists || (id->type != S_IFDIR && id->type != S_IFLNK);
}

/* Where `path` (normalized, absolute) stands now, without reading any content: the lstat of each
 * strict ancestor (through the pass's memo, NULL for none) and of the path itself. */
static int probe(const char *path, struct snap_entry *se, struct stat *st, struct anc_memo *m,
		 struct err *e)
{
	_cleanup_free_ char *buf = xstrdup(path);
	size_t n = 0;
	se->path = xstrdup(path);
	for (const char *p = path + 1; *p; p++)
		n += *p == '/';
	se->anc = n ? xcalloc(n, sizeof *se->anc) : NULL;
	bool dead = false; /* an ancestor above rules out everything below it */
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (!dead && anc_id(m, buf, &se->anc[se->nanc]) < 0)
			return err_set(e, errno, buf, "cannot inspect a parent of protected path");
		dead = dead || anc_dead_end(&se->anc[se->nanc]);
		se->nanc++;
		*p = '/';
	}
	struct snap_id id = {0};
	if (!dead && lstat_id(path, &id, st) < 0)
		return err_set(e, errno, path, "cannot inspect protected path");
	se->exists = id.exists;
	se->type = id.type;
	se->dev = id.dev;
	se->ino = id.ino;
	return 0;
}

static int take_one(const char *raw, struct snap_entry *se, struct anc_memo *m, struct err *e)
{
	if (raw[0] != '/' || strcmp(raw, "/") == 0) {
		err_set(e, EINVAL, raw, "protected path must be absolute and not /");
		err_hint(e, "protected paths are given as absolute paths below a writable root");
		return -1;
	}
	_cleanup_free_ char *path = path_normalize(NULL, raw);
	struct stat st;
	if (probe(path, se, &st, m, e) < 0)
		return -1;
	if (se->exists && digest_entry(se, &st, e) < 0) {
		err_hint(e, "make it readable by the user running agentjail, or unprotect it");
		return -1;
	}
	return 0;
}

int snapshot_take(const struct strv *paths, struct snapshot *out, struct err *e)
{
	*out = (struct snapshot){0};
	if (!paths->n)
		return 0;
	out->e = xcalloc(paths->n, sizeof *out->e);
	struct anc_memo m = {.path = STRV_INIT};
	for (size_t i = 0; i < paths->n; i++) {
		/* counted first so snapshot_free releases a half-filled entry */
		out->n++;
		if (take_one(paths->v[i], &out->e[i], &m, e) < 0) {
			anc_memo_free(&m);
			snapshot_free(out);
			return -1;
		}
	}
	anc_memo_free(&m);
	return 0;
}

void snapshot_free(struct snapshot *s)
{
	for (size_t i = 0; i < s->n; i++)
		entry_free(&s->e[i]);
	free(s->e);
	*s = (struct snapshot){0};
}

void violations_free(struct violations *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->v[i].path);
		free(v->v[i].what);
		free(v->v[i].moved_to);
	}
	free(v->v);
	*v = (struct violations){0};
}

void violations_append(struct violations *to, struct violations *from)
{
	if (from->n) {
		to->v = xrealloc(to->v, (to->n + from->n) * sizeof *to->v);
		memcpy(to->v + to->n, from->v, from->n * sizeof *from->v);
		to->n += from->n;
	}
	free(from->v);
	*from = (struct violations){0};
}

/* ------------------------------------------------------------------------------------------------
 * Checking.
 */

static void add_violation(struct check *ck, const char *path, char *what, char *move_src)
{
	struct violations *out = ck->out;
	out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
	out->v[out->n] = (struct violation){.path = xstrdup(path), .what = what};
	if (move_src) {
		ck->pend = xrealloc(ck->pend, (ck->npend + 1) * sizeof *ck->pend);
		ck->pend[ck->npend++] = (struct pending){out->n, move_src};
	}
	out->n++;
}

/* The first ancestor that is a symlink now and was not that same symlink before: the agent put it
 * there, and whatever the path resolves to through it is outside the protected tree. */
static char *planted_symlink(const struct snap_entry *before, const struct snap_entry *now)
{
	for (size_t i = 0; i < now->nanc && i < before->nanc; i++) {
		if (!now->anc[i].exists || now->anc[i].type != S_IFLNK ||
		    same_id(&before->anc[i], &now->anc[i]))
			continue;
		/* ancestor i ends at the (i + 2)-th slash of the path */
		const char *p = before->path;
		for (size_t slashes = 0; *p; p++)
			if (*p == '/' && ++slashes == i + 2)
				break;
		return xstrndup(before->path, (size_t)(p - before->path));
	}
	return NULL;
}

static char *classify(const struct snap_entry *b, struct snap_entry *now, const struct stat *st,
		      const char *via)
{
	if (!now->exists)
		return b->exists ? xstrdup("removed") : NULL;
	if (via)
		return xasprintf("%s (through a symlink planted at %s)",
				 b->exists ? "replaced" : "appeared", via);
	if (!b->exists)
		return xstrdup("appeared");
	if (now->type != b->type)
		return xstrdup(is_git(b->path) ? ".git changed kind" : "replaced");
	if (now->dev != b->dev || now->ino != b->ino)
		return xstrdup("replaced");
	struct err e = {0};
	if (digest_entry(now, st, &e) < 0) {
		/* it was readable before the run: unreadable now is a change made to hide one */
		char msg[ERR_FMT_MAX];
		err_format(&e, msg, sizeof msg);
		return xasprintf("changed (cannot read it now: %s)", msg);
	}
	return memcmp(now->digest, b->digest, sizeof b->digest) ? xstrdup("changed") : NULL;
}

static void check_one(struct check *ck, const struct snap_entry *b, struct anc_memo *m)
{
	struct snap_entry now = {0};
	struct stat st;
	struct err e = {0};
	if (probe(b->path, &now, &st, m, &e) < 0) {
		char msg[ERR_FMT_MAX];
		err_format(&e, msg, sizeof msg);
		add_violation(ck, b->path, xasprintf("could not be checked (%s)", msg), NULL);
		entry_free(&now);
		return;
	}
	char *via = planted_symlink(b, &now);
	char *what = classify(b, &now, &st, via);
	if (what && now.exists) {
		/* through a planted symlink, the symlink moves: never what it points to */
		add_violation(ck, b->path, what, via ? steal_pointer(&via) : xstrdup(b->path));
	} else if (what) {
		add_violation(ck, b->path, what, NULL);
	}
	free(via);
	entry_free(&now);
}

static void check_free(struct check *ck)
{
	for (size_t i = 0; i < ck->npend; i++)
		free(ck->pend[i].src);
	free(ck->pend);
	free(ck->stamp);
	if (ck->stampfd >= 0)
		close(ck->stampfd);
}

void snapshot_move_now(const char *path, const char *quarantine_dir, struct violations *out)
{
	/* only what is there, reached without a symlink anywhere on the way */
	_cleanup_close_ int fd = fs_open_nofollow(path, O_PATH | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return;
	struct check ck = {.qdir = quarantine_dir, .stampfd = -1, .out = out, .live = true};
	add_violation(&ck, path,
		      xstrdup(S_ISLNK(st.st_mode) ? "appeared (a symlink)" : "appeared"),
		      xstrdup(path));
	snap_move_all(&ck);
	check_free(&ck);
}

static int check_all(const struct snapshot *before, const char *quarantine_dir, bool live,
		     struct violations *out, struct err *e)
{
	*out = (struct violations){0};
	if (!quarantine_dir || !quarantine_dir[0])
		return err_set(e, EINVAL, "", "no quarantine directory to move violations into");
	struct check ck = {.qdir = quarantine_dir, .stampfd = -1, .out = out, .live = live};
	/* every path is compared before anything moves: a move must not change another's verdict */
	struct anc_memo m = {.path = STRV_INIT};
	for (size_t i = 0; i < before->n; i++)
		check_one(&ck, &before->e[i], &m);
	anc_memo_free(&m);
	snap_move_all(&ck);
	check_free(&ck);
	return 0;
}

int snapshot_check(const struct snapshot *before, const char *quarantine_dir,
		   struct violations *out, struct err *e)
{
	return check_all(before, quarantine_dir, false, out, e);
}

int snapshot_check_live(const struct snapshot *before, const char *quarantine_dir,
			struct violations *out, struct err *e)
{
	return check_all(before, quarantine_dir, true, out, e);
}

int snapshot_retake(struct snapshot *s, const char *path, struct err *e)
{
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->e[i].path, path) != 0)
			continue;
		struct snap_entry now = {0};
		if (take_one(path, &now, NULL, e) < 0) {
			entry_free(&now);
			return -1;
		}
		entry_free(&s->e[i]);
		s->e[i] = now;
		return 0;
	}
	return err_set(e, ENOENT, path, "not a path of this snapshot");
}

void snapshot_poison(struct snapshot *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->e[i].path, path)) {
			s->e[i].exists = true; /* whatever stands there now differs */
			s->e[i].ino = 0;
			memset(s->e[i].digest, 0xff, sizeof s->e[i].digest);
		}
}
