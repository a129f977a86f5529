/* etcscan: see etcscan.h for the rules, the cache format and its known limit. */
#include "core/host/etcscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define CACHE_MAGIC "agentjail-treescan 1"
/* The cache for /etc is about 10 KiB, for /usr 2 KiB; anything much larger is not ours. */
#define CACHE_MAX ((off_t)8 << 20)
/* Deeper directories are masked whole: bounds the number of directory fds held open. */
#define MAX_DEPTH 64
/* A timestamp this close to the scan may not move on the next change (see etcscan.h). */
#define RACY_SEC 2

struct dirrec {
	char *path;
	dev_t dev;
	ino_t ino;
	struct timespec mtim, ctim;
};

struct recs {
	struct dirrec *v;
	size_t n, cap;
};

/* A large tree is scanned by several threads: the first pass lists the root and its
 * directories, and hands each directory it meets at PAR_DEPTH (/usr/lib/x86_64-linux-gnu,
 * /usr/share/doc, …) to a queue, which PAR_THREADS_MAX threads at most (one per CPU) then scan
 * whole, each into a scan of its own; their findings are merged. The rules are the same:
 * each directory is still opened relative to its parent's fd (held open until the threads
 * are done), and recorded before it is read. */
#define PAR_DEPTH 1
#define PAR_THREADS_MAX 4

struct work {
	int parent; /* the directory it is in, open (held in workq.fds) */
	char *name, *path;
	struct stat lst;
};

struct workq {
	struct work *v;
	size_t n, cap;
	size_t next; /* the next to take, under mu */
	pthread_mutex_t mu;
	int *fds; /* the parents' fds */
	size_t nfds, capfds;
};

struct scan {
	struct strv masked;
	struct recs d;      /* every directory met */
	struct recs f;      /* other entries, while they fit the entry budget */
	struct recs p;      /* package database stamps, taken before the scan */
	size_t nentries;    /* entries judged */
	size_t entry_budget;
	uid_t self;
	const char *const *skip;
	struct strbuf path; /* the entry being judged */
	struct workq *q;    /* the first pass of a parallel scan: directories at PAR_DEPTH go
			     * there (NULL: scanned here) */
	int q_parent;       /* the held fd of the directory being read at PAR_DEPTH, or -1 */
};

static void recs_free(struct recs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].path);
	free(r->v);
	memset(r, 0, sizeof *r);
}

static void scan_free(struct scan *s)
{
	strv_free(&s->masked);
	recs_free(&s->d);
	recs_free(&s->f);
	recs_free(&s->p);
	sb_free(&s->path);
}

static void record(struct recs *r, const char *path, const struct stat *st)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	r->v[r->n++] = (struct dirrec){
		.path = xstrdup(path),
		.dev = st->st_dev,
		.ino = st->st_ino,
		.mtim = st->st_mtim,
		.ctim = st->st_ctim,
	};
}

static void record_dir(struct scan *s, const char *path, const struct stat *st)
{
	record(&s->d, path, st);
}

static void mask_here(struct scan *s) { strv_push(&s->masked, sb_str(&s->path)); }

/* Forget what was found after the given counts (a directory that could not be read whole). */
static void rollback(struct scan *s, size_t nmasked, size_t nd, size_t nf)
{
	while (s->masked.n > nmasked)
		free(s->masked.v[--s->masked.n]);
	if (s->masked.v)
		s->masked.v[s->masked.n] = NULL;
	while (s->d.n > nd)
		free(s->d.v[--s->d.n].path);
	while (s->f.n > nf)
		free(s->f.v[--s->f.n].path);
}

/* An unprivileged user can list and enter it: otherwise everything inside is out of reach. */
static bool dir_is_open(const struct stat *st)
{
	return (st->st_mode & S_IROTH) && (st->st_mode & S_IXOTH);
}

bool scan_hidden(mode_t mode, uid_t owner, uid_t self)
{
	if (S_ISDIR(mode)) {
		if ((mode & S_IROTH) && (mode & S_IXOTH))
			return false;
		/* the owner class alone applies to the owner; anyone else may reach it through a
		 * group (or an ACL entry, whose mask the group bits show) or the others bits */
		mode_t reach = owner == self ? (S_IRUSR | S_IXUSR)
					     : (S_IRGRP | S_IXGRP | S_IROTH | S_IXOTH);
		return (mode & reach) != 0;
	}
	if (mode & S_IROTH)
		return false;
	return (mode & (owner == self ? S_IRUSR : S_IRGRP)) != 0;
}

enum scan_check scan_choose_check(size_t nentries, size_t ndirs, const struct scan_opts *o)
{
	size_t eb = o && o->entry_budget ? o->entry_budget : SCAN_ENTRY_BUDGET;
	size_t db = o && o->dir_budget ? o->dir_budget : SCAN_DIR_BUDGET;
	if (nentries <= eb)
		return SCAN_CHECK_ENTRIES;
	if (!(o && o->allow_stamps) || ndirs <= db)
		return SCAN_CHECK_DIRS;
	return SCAN_CHECK_STAMPS;
}

static bool is_skipped(const struct scan *s, const char *path)
{
	for (size_t i = 0; s->skip && s->skip[i]; i++)
		if (!strcmp(s->skip[i], path))
			return true;
	return false;
}

static int scan_dir(struct scan *s, int fd, int depth);

static void defer(struct scan *s, const char *name, const struct stat *lst)
{
	struct workq *q = s->q;
	if (q->n == q->cap) {
		q->cap = q->cap ? 2 * q->cap : 256;
		q->v = xrealloc(q->v, q->cap * sizeof *q->v);
	}
	q->v[q->n++] = (struct work){.parent = s->q_parent, .name = xstrdup(name),
				     .path = xstrdup(sb_str(&s->path)), .lst = *lst};
}

static void judge_dir(struct scan *s, int dfd, const char *name, const struct stat *lst,
		      int depth)
{
	if (is_skipped(s, sb_str(&s->path)))
		return; /* a tree of its own, scanned on its own */
	if (!dir_is_open(lst) || depth >= MAX_DEPTH) {
		/* recorded so that a chmod making it readable (its ctime) forces a rescan */
		record_dir(s, sb_str(&s->path), lst);
		if (depth >= MAX_DEPTH || scan_hidden(lst->st_mode, lst->st_uid, s->self))
			mask_here(s);
		return;
	}
	if (s->q && depth == PAR_DEPTH && s->q_parent >= 0) {
		defer(s, name, lst); /* judged as here by a thread, with its parent's fd */
		return;
	}
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			mask_here(s);
		return;
	}
	/* Record what we opened, before reading it: a change made while we read moves these
	 * timestamps past the recorded ones. */
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		mask_here(s);
		return;
	}
	record_dir(s, sb_str(&s->path), &st);
	if (!dir_is_open(&st)) {
		close(fd);
		if (scan_hidden(st.st_mode, st.st_uid, s->self))
			mask_here(s);
		return;
	}
	if (scan_dir(s, fd, depth + 1) < 0)
		mask_here(s);
}

/* Judge the entry `name` of the directory open at dfd; s->path is its full path. */
static void judge(struct scan *s, int dfd, const char *name, int depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT) /* vanished since readdir: nothing to mask */
			mask_here(s);
		return;
	}
	if (S_ISLNK(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode))
		return; /* a symlink's target is judged where it lives */
	s->nentries++;
	if (S_ISDIR(st.st_mode)) {
		judge_dir(s, dfd, name, &st, depth);
		return;
	}
	/* beyond the budget the tree is not checked entry by entry: stop keeping them */
	if (s->f.n < s->entry_budget)
		record(&s->f, sb_str(&s->path), &st);
	if (scan_hidden(st.st_mode, st.st_uid, s->self))
		mask_here(s);
}

/* Judge every entry of the directory open at fd (taken). -1 (errno set) when it cannot be read
 * whole: what was found in it is dropped and the caller masks the directory instead. */
static int scan_dir(struct scan *s, int fd, int depth)
{
	size_t nmasked = s->masked.n, nd = s->d.n, nf = s->f.n, nq = s->q ? s->q->n : 0;
	DIR *d = fdopendir(fd);
	if (!d) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	_cleanup_closedir_ DIR *dir = d;
	if (s->q && depth == PAR_DEPTH) {
		/* its subdirectories are deferred: their parent's fd outlives this call */
		struct workq *q = s->q;
		s->q_parent = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (s->q_parent >= 0) {
			if (q->nfds == q->capfds) {
				q->capfds = q->capfds ? 2 * q->capfds : 32;
				q->fds = xrealloc(q->fds, q->capfds * sizeof *q->fds);
			}
			q->fds[q->nfds++] = s->q_parent;
		}
	}
	size_t base = s->path.len;
	int rerr;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(dir);
		if (!de) {
			rerr = errno;
			break;
		}
		const char *n = de->d_name;
		if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
			continue;
		/* /etc is mostly symlinks (alternatives, rc?.d): skip them without a stat */
		if (de->d_type == DT_LNK || de->d_type == DT_SOCK || de->d_type == DT_FIFO)
			continue;
		sb_addc(&s->path, '/');
		sb_add(&s->path, n);
		judge(s, dirfd(dir), n, depth);
		s->path.len = base;
		s->path.s[base] = '\0';
	}
	if (rerr) {
		rollback(s, nmasked, nd, nf);
		/* what it deferred goes too: the caller masks this directory whole */
		while (s->q && s->q->n > nq) {
			s->q->n--;
			free(s->q->v[s->q->n].name);
			free(s->q->v[s->q->n].path);
		}
		errno = rerr;
		return -1;
	}
	return 0;
}

/* ---- the parallel pass ---- */

struct worker {
	struct scan s;
	struct workq *q;
	pthread_t tid;
	bool started;
};

static void *work_loop(void *arg)
{
	struct worker *w = arg;
	for (;;) {
		pthread_mutex_lock(&w->q->mu);
		size_t i = w->q->next < w->q->n ? w->q->next++ : w->q->n;
		pthread_mutex_unlock(&w->q->mu);
		if (i == w->q->n)
			return NULL;
		const struct work *it = &w->q->v[i];
		w->s.path.len = 0;
		sb_add(&w->s.path, it->path);
		judge_dir(&w->s, it->parent, it->name, &it->lst, PAR_DEPTH);
	}
}

static void recs_move(struct recs *to, struct recs *from)
{
	for (size_t i = 0; i < from->n; i++) {
		if (to->n == to->cap) {
			to->cap = to->cap ? 2 * to->cap : 64;
			to->v = xrealloc(to->v, to->cap * sizeof *to->v);
		}
		to->v[to->n++] = from->v[i];
	}
	from->n = 0;
}

static size_t cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > PAR_THREADS_MAX ? PAR_THREADS_MAX : (size_t)n;
}

/* Scan what the first pass queued, on as many threads as there are CPUs (this one among
 * them), and merge what they found into s. */
static void run_queue(struct scan *s, struct workq *q)
{
	size_t n = cpus();
	struct worker *w = xmalloc(n * sizeof *w);
	for (size_t i = 0; i < n; i++) {
		w[i] = (struct worker){.q = q};
		w[i].s = (struct scan){.self = s->self, .skip = s->skip,
				       .entry_budget = s->entry_budget, .q_parent = -1};
	}
	for (size_t i = 1; i < n && q->n > 1; i++)
		w[i].started = pthread_create(&w[i].tid, NULL, work_loop, &w[i]) == 0;
	(void)work_loop(&w[0]);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && w[i].started)
			(void)pthread_join(w[i].tid, NULL);
		for (size_t k = 0; k < w[i].s.masked.n; k++)
			strv_push_take(&s->masked, steal_pointer(&w[i].s.masked.v[k]));
		w[i].s.masked.n = 0;
		recs_move(&s->d, &w[i].s.d);
		recs_move(&s->f, &w[i].s.f);
		s->nentries += w[i].s.nentries;
		scan_free(&w[i].s);
	}
	free(w);
}

static void workq_free(struct workq *q)
{
	for (size_t i = 0; i < q->n; i++) {
		free(q->v[i].name);
		free(q->v[i].path);
	}
	free(q->v);
	for (size_t i = 0; i < q->nfds; i++)
		close(q->fds[i]);
	free(q->fds);
	pthread_mutex_destroy(&q->mu);
}

static int do_scan(const char *root, struct scan *s, bool parallel, struct err *e)
{
	_cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, errno, root, "cannot open the directory to scan");
	struct stat st;
	if (fstat(fd, &st) < 0)
		return err_set(e, errno, root, "cannot stat the directory to scan");
	record_dir(s, root, &st);
	if (!dir_is_open(&st)) {
		if (scan_hidden(st.st_mode, st.st_uid, s->self))
			strv_push(&s->masked, root);
		return 0;
	}
	/* children of "/" are "/name", not "//name" */
	sb_add(&s->path, strcmp(root, "/") == 0 ? "" : root);
	struct workq q = {.mu = PTHREAD_MUTEX_INITIALIZER};
	s->q = parallel ? &q : NULL;
	s->q_parent = -1;
	int rc = scan_dir(s, steal_fd(&fd), 0);
	int saved = errno;
	s->q = NULL;
	if (rc == 0)
		run_queue(s, &q);
	workq_free(&q);
	if (rc < 0)
		return err_set(e, saved, root, "cannot read the directory to scan");
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_strv(struct strv *v)
{
	if (v->n > 1)
		qsort(v->v, v->n, sizeof *v->v, cmp_str);
}

/* True when a change made now could leave t where it is: within `window` ns of now. */
static bool is_recent(const struct timespec *t, const struct timespec *now, long long window)
{
	long long dt = (long long)(now->tv_sec - t->tv_sec) * 1000000000LL +
		       (now->tv_nsec - t->tv_nsec);
	return dt < window;
}

/* What a cache made now records, in the order it is written. */
struct sel {
	char kind; /* 'd', 'f' or 'p' */
	const struct dirrec *r;
};

/* The root itself, or an entry directly in it. */
static bool is_top(const char *path, const char *root)
{
	const char *rest = path_below(path, root);
	return !rest || !*rest || !strchr(rest, '/');
}

static size_t select_records(const struct scan *s, enum scan_check check, const char *root,
			     struct sel **out)
{
	size_t cap = s->d.n + s->f.n + s->p.n, n = 0;
	struct sel *v = xmalloc((cap ? cap : 1) * sizeof *v);
	for (size_t i = 0; i < s->d.n; i++)
		if (check != SCAN_CHECK_STAMPS || is_top(s->d.v[i].path, root))
			v[n++] = (struct sel){'d', &s->d.v[i]};
	if (check == SCAN_CHECK_ENTRIES)
		for (size_t i = 0; i < s->f.n; i++)
			v[n++] = (struct sel){'f', &s->f.v[i]};
	if (check == SCAN_CHECK_STAMPS)
		for (size_t i = 0; i < s->p.n; i++)
			v[n++] = (struct sel){'p', &s->p.v[i]};
	*out = v;
	return n;
}

/* A later change sets both mtime and ctime to the time of that change (a chmod only the ctime,
 * which a recorded mtime that old cannot hide: the chmod's new ctime differs from the recorded
 * one): it goes unnoticed only if both recorded values could equal it. How close "could" is
 * depends on the filesystem's timestamps: with nanoseconds (ext4, xfs, btrfs, tmpfs) a few clock
 * ticks (the kernel stamps with a coarse clock), with whole seconds RACY_SEC. */
static bool scan_is_racy(const struct sel *v, size_t n, const struct timespec *start)
{
	bool fine = false;
	for (size_t i = 0; i < n && !fine; i++)
		fine = v[i].r->mtim.tv_nsec != 0 || v[i].r->ctim.tv_nsec != 0;
	long long window = fine ? 50LL * 1000000 : RACY_SEC * 1000000000LL;
	for (size_t i = 0; i < n; i++)
		if (is_recent(&v[i].r->mtim, start, window) &&
		    is_recent(&v[i].r->ctim, start, window))
			return true;
	return false;
}

/* ---- cache file ---- */

static void add_escaped(struct strbuf *b, const char *p)
{
	for (; *p; p++) {
		if (*p == '\\')
			sb_add(b, "\\\\");
		else if (*p == '\n')
			sb_add(b, "\\n");
		else
			sb_addc(b, *p);
	}
}

/* The inverse of add_escaped, or NULL for an unknown escape. (One allocation: a cache check
 * unescapes a path per record, hundreds a run.) */
static char *unescape(const char *p)
{
	char *out = xmalloc(strlen(p) + 1), *o = out;
	for (; *p; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		p++;
		if (*p == '\\') {
			*o++ = '\\';
		} else if (*p == 'n') {
			*o++ = '\n';
		} else {
			free(out);
			return NULL;
		}
	}
	*o = '\0';
	return out;
}

static int open_temp(const char *file, char **tmpl)
{
	*tmpl = xasprintf("%s.tmp.XXXXXX", file);
	return mkostemp(*tmpl, O_CLOEXEC);
}

/* Best effort: a state directory that cannot be written costs a rescan next time, nothing else. */
static void write_atomically(const char *file, const struct strbuf *content)
{
	_cleanup_free_ char *tmpl = NULL;
	int fd = open_temp(file, &tmpl);
	if (fd < 0 && errno == ENOENT) {
		_cleanup_free_ char *dir = path_dirname(file);
		if (fs_mkdirs(dir, 0700, NULL) < 0)
			return;
		free(tmpl);
		fd = open_temp(file, &tmpl);
	}
	if (fd < 0)
		return;
	int rc = fchmod(fd, 0600);
	if (rc == 0)
		rc = fs_write_all(fd, content->s, content->len);
	if (close(fd) < 0)
		rc = -1;
	if (rc == 0)
		rc = rename(tmpl, file);
	if (rc < 0)
		(void)unlink(tmpl);
}

static void cache_store(const char *file, const char *root, enum scan_check check,
			const struct timespec *start, const struct sel *v, size_t n,
			const struct strv *masked)
{
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, CACHE_MAGIC "\nroot ");
	add_escaped(&b, root);
	sb_addf(&b, "\ncheck %d %jd\n", (int)check, (intmax_t)start->tv_sec);
	for (size_t i = 0; i < n; i++) {
		const struct dirrec *d = v[i].r;
		sb_addf(&b, "%c %ju %ju %jd %ld %jd %ld ", v[i].kind, (uintmax_t)d->dev,
			(uintmax_t)d->ino, (intmax_t)d->mtim.tv_sec, d->mtim.tv_nsec,
			(intmax_t)d->ctim.tv_sec, d->ctim.tv_nsec);
		add_escaped(&b, d->path);
		sb_addc(&b, '\n');
	}
	for (size_t i = 0; i < masked->n; i++) {
		sb_add(&b, "m ");
		add_escaped(&b, masked->v[i]);
		sb_addc(&b, '\n');
	}
	sb_addf(&b, "end %zu %zu\n", n, masked->n);
	write_atomically(file, &b);
	sb_free(&b);
}

/* The cache's text, NUL-terminated, if it is ours and nobody else could have written it. */
static char *read_trusted(const char *file)
{
	_cleanup_close_ int fd =
		open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    st.st_size > CACHE_MAX)
		return NULL;
	size_t cap = (size_t)st.st_size + 1, len = 0;
	_cleanup_free_ char *buf = xmalloc(cap + 1);
	for (;;) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return NULL;
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap) /* grew while we read it: not a finished cache */
			return NULL;
	}
	buf[len] = '\0';
	if (memchr(buf, '\0', len))
		return NULL;
	return steal_pointer(&buf);
}

/* Parse "<digits> " (at most lim) and step past the space: what strtoumax with its ERANGE check
 * accepted, without its locale and whitespace handling (six numbers a record, hundreds of
 * records a run). */
static bool take_digits(char **p, uintmax_t lim, uintmax_t *v)
{
	char *c = *p;
	if (!(*c >= '0' && *c <= '9'))
		return false;
	uintmax_t n = 0;
	for (; *c >= '0' && *c <= '9'; c++) {
		unsigned d = (unsigned)(*c - '0');
		if (n > (lim - d) / 10)
			return false;
		n = n * 10 + d;
	}
	if (*c != ' ')
		return false;
	*v = n;
	*p = c + 1;
	return true;
}

static bool take_u(char **p, uintmax_t *v)
{
	return take_digits(p, UINTMAX_MAX, v);
}

/* Parse "[-]<digits> " (seconds may be before 1970) and step past the space. */
static bool take_s(char **p, intmax_t *v)
{
	bool neg = **p == '-';
	char *q = neg ? *p + 1 : *p;
	uintmax_t u;
	if (!take_digits(&q, neg ? (uintmax_t)INTMAX_MAX + 1 : (uintmax_t)INTMAX_MAX, &u))
		return false;
	*v = neg ? (u == (uintmax_t)INTMAX_MAX + 1 ? INTMAX_MIN : -(intmax_t)u) : (intmax_t)u;
	*p = q;
	return true;
}

/* A "d", "f" or "p" record ("<dev> <ino> <ms> <mns> <cs> <cns> <path>") still describes what is
 * on disk: a directory (d, not following a symlink), another entry (f, likewise) or anything
 * (p, followed: a package database may be reached through a merged-/usr link). *path receives
 * the unescaped path. */
static bool rec_unchanged(char kind, char *rec, char **path)
{
	uintmax_t dev, ino, mns, cns;
	intmax_t ms, cs;
	if (!take_u(&rec, &dev) || !take_u(&rec, &ino) || !take_s(&rec, &ms) ||
	    !take_u(&rec, &mns) || !take_s(&rec, &cs) || !take_u(&rec, &cns))
		return false;
	*path = unescape(rec);
	if (!*path)
		return false;
	struct stat st;
	if ((kind == 'p' ? stat(*path, &st) : lstat(*path, &st)) < 0)
		return false;
	if ((kind == 'd' && !S_ISDIR(st.st_mode)) || (kind == 'f' && S_ISDIR(st.st_mode)))
		return false;
	return st.st_dev == dev && st.st_ino == ino && st.st_mtim.tv_sec == ms &&
	       (uintmax_t)st.st_mtim.tv_nsec == mns && st.st_ctim.tv_sec == cs &&
	       (uintmax_t)st.st_ctim.tv_nsec == cns;
}

/* A cached entry must be a normalized path below root. */
static bool valid_entry(const char *p, const char *root)
{
	return p[0] == '/' && path_below(p, root) && path_is_normal(p);
}

/* Which records a cache checked this way may hold. */
static bool kind_fits(char kind, enum scan_check check)
{
	return kind == 'd' || (kind == 'f' && check == SCAN_CHECK_ENTRIES) ||
	       (kind == 'p' && check == SCAN_CHECK_STAMPS);
}

/* Parse the lines after the header; fills masked when every record is unchanged. */
static bool parse_records(char *line, const char *root, enum scan_check check,
			  struct strv *masked)
{
	size_t nd = 0;
	for (;;) {
		char *nl = strchr(line, '\n');
		if (!nl)
			return false; /* truncated: the last line has no newline */
		*nl = '\0';
		char kind = line[0];
		if ((kind == 'd' || kind == 'f' || kind == 'p') && line[1] == ' ' &&
		    masked->n == 0) {
			_cleanup_free_ char *path = NULL;
			if (!kind_fits(kind, check) || (nd == 0 && kind != 'd') ||
			    !rec_unchanged(kind, line + 2, &path))
				return false;
			if (nd == 0 ? strcmp(path, root) != 0
				    : kind == 'p' ? !path_is_normal(path) : !valid_entry(path, root))
				return false;
			nd++;
		} else if (strncmp(line, "m ", 2) == 0 && nd > 0) {
			char *path = unescape(line + 2);
			if (!path || !valid_entry(path, root)) {
				free(path);
				return false;
			}
			strv_push_take(masked, path);
		} else {
			_cleanup_free_ char *end = xasprintf("end %zu %zu", nd, masked->n);
			return nd > 0 && strcmp(line, end) == 0 && nl[1] == '\0';
		}
		line = nl + 1;
	}
}

/* The "check <n> <time>" line: *check set, and *p past it, when it is well-formed and (for
 * STAMPS, which the options must allow) the cache is younger than the age limit. */
static bool parse_check(char **p, const struct scan_opts *o, enum scan_check *check,
			long *age)
{
	if (strncmp(*p, "check ", 6) != 0)
		return false;
	char *q = *p + 6;
	uintmax_t c;
	if (!take_u(&q, &c) || c < SCAN_CHECK_ENTRIES || c > SCAN_CHECK_STAMPS)
		return false;
	char *end;
	errno = 0;
	intmax_t t = strtoimax(q, &end, 10);
	if (errno || end == q || *end != '\n')
		return false;
	*check = (enum scan_check)c;
	*p = end + 1;
	if (c != SCAN_CHECK_STAMPS)
		return true;
	if (!(o && o->allow_stamps))
		return false;
	long max_age = o->max_age > 0 ? o->max_age : SCAN_MAX_AGE;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	*age = (long)((intmax_t)now.tv_sec - t);
	return t <= (intmax_t)now.tv_sec && (intmax_t)now.tv_sec - t < max_age;
}

/* 0 with the cached list appended to out when the cache is trustworthy and current. */
static int cache_load(const char *file, const char *root, const struct scan_opts *o,
		      struct strv *out, enum scan_check *check, long *age)
{
	_cleanup_free_ char *text = read_trusted(file);
	if (!text)
		return -1;
	struct strbuf head = STRBUF_INIT;
	sb_add(&head, CACHE_MAGIC "\nroot ");
	add_escaped(&head, root);
	sb_addc(&head, '\n');
	bool same = strncmp(text, head.s, head.len) == 0;
	char *rest = text + head.len;
	sb_free(&head);
	struct strv masked = STRV_INIT;
	if (!same || !parse_check(&rest, o, check, age) ||
	    !parse_records(rest, root, *check, &masked)) {
		strv_free(&masked);
		return -1;
	}
	sort_strv(&masked);
	for (size_t i = 0; i < masked.n; i++)
		strv_push_take(out, steal_pointer(&masked.v[i]));
	free(masked.v);
	return 0;
}

/* Absolute and normalized; NULL when p is relative and the cwd is unknown. */
static char *absolute(const char *p)
{
	if (p[0] == '/')
		return path_normalize("/", p);
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	return cwd ? path_normalize(cwd, p) : NULL;
}

/* The package databases as they are before the scan: a transaction during it moves them. */
static void take_stamps(struct scan *s, const struct scan_opts *o)
{
	for (size_t i = 0; o && o->allow_stamps && o->stamps && o->stamps[i]; i++) {
		struct stat st;
		if (o->stamps[i][0] == '/' && stat(o->stamps[i], &st) == 0)
			record(&s->p, o->stamps[i], &st);
	}
}

int treescan_get(const char *root_in, const char *cache_file, bool refresh,
		 const struct scan_opts *o, struct strv *out, struct scan_info *info,
		 struct err *e)
{
	struct scan_info dummy;
	if (!info)
		info = &dummy;
	memset(info, 0, sizeof *info);
	_cleanup_free_ char *root = absolute(root_in);
	if (!root)
		return err_set(e, errno, root_in, "cannot make the scan root absolute");
	struct stat rst;
	if (lstat(root, &rst) == 0 && !S_ISDIR(rst.st_mode) && !S_ISLNK(rst.st_mode)) {
		/* a single file bound on its own (a toolchain's binary): judged as it is now, no
		 * cache (one lstat is what a cache would cost) */
		info->check = SCAN_CHECK_ENTRIES;
		info->nentries = 1;
		if (scan_hidden(rst.st_mode, rst.st_uid, geteuid()))
			strv_push(out, root);
		return 0;
	}
	_cleanup_free_ char *cache = cache_file ? absolute(cache_file) : NULL;
	long age = 0;
	if (cache && !refresh && cache_load(cache, root, o, out, &info->check, &age) == 0) {
		info->from_cache = true;
		long max_age = o && o->max_age > 0 ? o->max_age : SCAN_MAX_AGE;
		info->aging = info->check == SCAN_CHECK_STAMPS && age >= max_age / 2;
		return 0;
	}

	struct timespec start;
	clock_gettime(CLOCK_REALTIME, &start);
	size_t eb = o && o->entry_budget ? o->entry_budget : SCAN_ENTRY_BUDGET;
	struct scan s = {.self = geteuid(), .skip = o ? o->skip : NULL, .entry_budget = eb};
	take_stamps(&s, o);
	/* the trees that may be large (a tree bound read-only: /usr, a toolchain) on every CPU;
	 * /etc on one (≈ 3 ms) */
	if (do_scan(root, &s, o && o->allow_stamps, e) < 0) {
		scan_free(&s);
		return -1;
	}
	sort_strv(&s.masked);
	info->nentries = s.nentries;
	info->ndirs = s.d.n;
	info->check = scan_choose_check(s.nentries, s.d.n, o);
	if (cache) {
		struct sel *v = NULL;
		size_t n = select_records(&s, info->check, root, &v);
		if (!scan_is_racy(v, n, &start)) {
			cache_store(cache, root, info->check, &start, v, n, &s.masked);
			info->stored = true;
		}
		free(v);
	}
	for (size_t i = 0; i < s.masked.n; i++)
		strv_push_take(out, steal_pointer(&s.masked.v[i]));
	scan_free(&s);
	return 0;
}

int etcscan_get(const char *etc_root, const char *cache_file, bool refresh, struct strv *out,
		struct err *e)
{
	return treescan_get(etc_root, cache_file, refresh, NULL, out, NULL, e);
}

char *treescan_cache_path(const char *state_dir, const char *root)
{
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, "treescan-");
	for (const char *c = root; *c; c++) {
		if (*c == '/')
			sb_add(&b, "%2F");
		else if (*c == '%')
			sb_add(&b, "%25");
		else
			sb_addc(&b, *c);
	}
	sb_add(&b, ".cache");
	if (b.len > 250) { /* NAME_MAX is 255 */
		sb_free(&b);
		return NULL;
	}
	char *p = path_join(state_dir, sb_str(&b));
	sb_free(&b);
	return p;
}

/* The package managers' databases: a transaction (install, upgrade, removal, dpkg-statoverride)
 * rewrites a file in them by rename, which moves the directory's timestamps. */
static const char *const pkg_stamps[] = {
	"/var/lib/dpkg", "/var/lib/dpkg/info", "/var/lib/rpm", "/usr/lib/sysimage/rpm",
	"/var/lib/pacman/local", "/lib/apk/db", NULL,
};

static int scan_part(const char *cache_dir, const char *root, const char *const *skip,
		     bool refresh, struct strv *out, struct scan_info *info, struct err *e)
{
	struct scan_opts o = {.skip = skip, .allow_stamps = true, .stamps = pkg_stamps};
	_cleanup_free_ char *cache = treescan_cache_path(cache_dir, root);
	struct scan_info part;
	if (treescan_get(root, cache, refresh, &o, out, &part, e) < 0)
		return -1;
	if (part.check > info->check)
		info->check = part.check;
	info->from_cache = info->from_cache && part.from_cache;
	info->aging = info->aging || part.aging;
	info->stored = info->stored || part.stored;
	info->nentries += part.nentries;
	info->ndirs += part.ndirs;
	return 0;
}

int treescan_bound(const char *cache_dir, const char *root, bool refresh, struct strv *out,
		   struct scan_info *info, struct err *e)
{
	struct scan_info dummy;
	if (!info)
		info = &dummy;
	memset(info, 0, sizeof *info);
	info->from_cache = true;
	static const char *const usr_skip[] = {"/usr/local", NULL};
	bool usr = strcmp(root, "/usr") == 0;
	struct strv list = STRV_INIT;
	if (scan_part(cache_dir, root, usr ? usr_skip : NULL, refresh, &list, info, e) < 0) {
		strv_free(&list);
		return -1;
	}
	struct stat st;
	if (usr && lstat("/usr/local", &st) == 0 && S_ISDIR(st.st_mode) &&
	    scan_part(cache_dir, "/usr/local", NULL, refresh, &list, info, e) < 0) {
		strv_free(&list);
		return -1;
	}
	sort_strv(&list);
	for (size_t i = 0; i < list.n; i++)
		strv_push_take(out, steal_pointer(&list.v[i]));
	free(list.v);
	return 0;
}

char *treescan_cache_dir(const char *state_dir)
{
	if (geteuid() == 0) {
		struct stat st;
		if (mkdir(TREESCAN_MACHINE_DIR, 0700) < 0 && errno != EEXIST)
			goto fallback;
		if (lstat(TREESCAN_MACHINE_DIR, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
		    !(st.st_mode & (S_IWGRP | S_IWOTH)))
			return xstrdup(TREESCAN_MACHINE_DIR);
	}
fallback:
	return state_dir ? xstrdup(state_dir) : NULL;
}

void treescan_refresh_detached(const char *self_exe, const char *cache_dir, const char *root)
{
	if (!self_exe || !cache_dir)
		return;
	pid_t pid = fork();
	if (pid < 0)
		return;
	if (pid > 0) {
		/* the child forks the scanner and exits at once: reaped here, never a zombie */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return;
	}
	if (fork() != 0)
		_exit(0);
	/* the scanner: its own session, nothing of the caller's open, the lowest priority, and a
	 * command line of its own (a fork would keep the run's, which a pattern looking for the
	 * run's processes would match) */
	(void)setsid();
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; null >= 0 && fd < 3; fd++)
		(void)dup2(null, fd);
	(void)close_range(3, ~0U, 0);
	(void)setpriority(PRIO_PROCESS, 0, 19);
	struct sched_param sp = {0};
	(void)sched_setscheduler(0, SCHED_IDLE, &sp);
	char *argv[] = {"agentjail", "__rescan", (char *)cache_dir, (char *)root, NULL};
	char *envp[] = {NULL};
	execve(self_exe, argv, envp);
	_exit(127);
}

int treescan_rescan(const char *cache_dir, const char *root)
{
	_cleanup_free_ char *cache = treescan_cache_path(cache_dir, root);
	if (!cache)
		return -1;
	_cleanup_free_ char *lock = xasprintf("%s.refresh", cache);
	_cleanup_close_ int lfd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) < 0)
		return 0; /* another run's refresh is under way */
	struct strv out = STRV_INIT;
	struct err e = {0};
	int rc = treescan_bound(cache_dir, root, true, &out, NULL, &e);
	err_clear(&e);
	strv_free(&out);
	return rc;
}
