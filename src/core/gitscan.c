/* gitscan: see gitscan.h. The walk reads directories with openat (never following a symlink);
 * the move aside is snapshot_check's, given entries recorded as absent before the run. */
#include "core/gitscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/gitprotect.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

/* d_type, or lstat's when the filesystem does not say */
static unsigned char entry_type(int dfd, const char *name, unsigned char d_type)
{
	if (d_type != DT_UNKNOWN)
		return d_type;
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
}

/* Call fn for each entry of the directory `dir` (not . and ..), read with getdents64 straight
 * from an O_NOFOLLOW fd (four system calls a directory where opendir takes seven; the kernel's
 * reading of the directory is most of the cost either way). */
static void each_entry(const char *dir, void (*fn)(const char *dir, int dfd, const char *name,
						   unsigned char type, void *ctx),
		       void *ctx)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return; /* vanished, or unreadable: git on the host could not use it either */
	char buf[8192] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = getdents64(fd, buf, sizeof buf);
		if (n <= 0)
			return;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			off += de->d_reclen;
			const char *name = de->d_name;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			fn(dir, fd, name, entry_type(fd, name, de->d_type), ctx);
		}
	}
}

struct walk_ctx {
	bool top;
	struct strv *stack, *found;
	unsigned bare; /* which of HEAD, objects/, refs/ the directory holds: all three make it a
			* bare repository, which git uses when run inside it (safe.bareRepository
			* defaults to "all"), its config and hooks included */
};

static void walk_entry(const char *dir, int dfd, const char *name, unsigned char type, void *ctx)
{
	struct walk_ctx *w = ctx;
	if (!strcmp(name, "HEAD") && type != DT_DIR)
		w->bare |= 1;
	else if (!strcmp(name, "objects") && type == DT_DIR)
		w->bare |= 2;
	else if (!strcmp(name, "refs") && type == DT_DIR)
		w->bare |= 4;
	if (!strcmp(name, ".git")) {
		if (!w->top) /* the workspace's own: gitinfo and the snapshot watch it */
			strv_push_take(w->found, path_join(dir, name));
	} else if (type == DT_DIR) {
		strv_push_take(w->stack, path_join(dir, name));
	}
}

int gitscan_walk(const char *root, size_t max_dirs, struct strv *found, bool *truncated,
		 struct err *e)
{
	*truncated = false;
	if (root[0] != '/')
		return err_set(e, EINVAL, root, "the scan root must be an absolute path");
	struct strv stack = STRV_INIT;
	strv_push(&stack, root);
	size_t seen = 0;
	while (stack.n) {
		if (seen == max_dirs) {
			*truncated = true;
			break;
		}
		char *dir = stack.v[--stack.n];
		stack.v[stack.n] = NULL;
		struct walk_ctx w = {.top = seen == 0, .stack = &stack, .found = found};
		each_entry(dir, walk_entry, &w);
		if (w.bare == 7 && !w.top)
			strv_push(found, dir);
		seen++;
		free(dir);
	}
	strv_free(&stack);
	return 0;
}

/* Directory levels below a modules/, counting both a submodule name's slashes and submodules of
 * submodules: the recursion (and the stack) stays bounded whatever the jail built there. */
#define MODULES_DEPTH 8

static void modules_in(const char *dir, unsigned depth, struct strv *found);

/* a submodule's git dir has submodules of its own in its modules/ */
static void modules_in_gitdir(const char *gitdir, unsigned depth, struct strv *found)
{
	_cleanup_free_ char *m = path_join(gitdir, "modules");
	modules_in(m, depth, found);
}

static bool has_entry(int dfd, const char *name, bool dir)
{
	struct stat st;
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (!dir || S_ISDIR(st.st_mode));
}

struct mod_ctx {
	unsigned depth;
	struct strv *found;
};

static void modules_entry(const char *dir, int dfd, const char *name, unsigned char type,
			  void *ctx)
{
	struct mod_ctx *m = ctx;
	if (type != DT_DIR)
		return;
	_cleanup_free_ char *p = path_join(dir, name);
	_cleanup_close_ int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return;
	bool gitdir = has_entry(sub, "HEAD", false) && has_entry(sub, "objects", true);
	if (gitdir)
		strv_push(m->found, p);
	if (m->depth >= MODULES_DEPTH)
		return;
	if (gitdir)
		modules_in_gitdir(p, m->depth + 1, m->found);
	else
		modules_in(p, m->depth + 1, m->found);
}

static void modules_in(const char *dir, unsigned depth, struct strv *found)
{
	struct mod_ctx m = {depth, found};
	each_entry(dir, modules_entry, &m);
}

void gitscan_modules(const char *gitdir, struct strv *found) { modules_in_gitdir(gitdir, 0, found); }

/* Whether `path` is new since `since`: its ctime (which no unprivileged process can set back;
 * a rename updates it) is not older. */
static bool changed_since(const char *path, long long since)
{
	struct stat st;
	return lstat(path, &st) < 0 || (long long)st.st_ctim.tv_sec >= since;
}

static void entry_absent(struct snapshot *s, const char *path)
{
	s->e = xrealloc(s->e, (s->n + 1) * sizeof *s->e);
	s->e[s->n++] = (struct snap_entry){.path = xstrdup(path)};
}

static void append(struct violations *out, struct violation v)
{
	out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
	out->v[out->n++] = v;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Every .git and submodule git dir there is now. */
static int find_now(const struct gitscan_before *b, struct strv *now, struct violations *out,
		    struct err *e)
{
	for (size_t r = 0; r < b->roots->n; r++) {
		/* the root's own .git too: one made by `git init` in the jail is new like any other
		 * (the argv builder does not watch a missing one, see in_new_repo) */
		struct stat st;
		_cleanup_free_ char *own = path_join(b->roots->v[r], ".git");
		if (lstat(own, &st) == 0)
			strv_push(now, own);
		bool truncated = false;
		if (gitscan_walk(b->roots->v[r], GITSCAN_MAX_DIRS, now, &truncated, e) < 0)
			return -1;
		if (truncated)
			append(out, (struct violation){
					    .path = xstrdup(b->roots->v[r]),
					    .what = xasprintf("more than %d directories: nested git "
							      "repositories past that were not checked",
							      GITSCAN_MAX_DIRS),
					    .own_words = true});
	}
	for (size_t i = 0; i < b->gitdirs->n; i++)
		gitscan_modules(b->gitdirs->v[i], now);
	for (size_t i = 0, n = now->n; i < n; i++)
		if (!strv_contains(b->gitdirs, now->v[i]) && is_dir(now->v[i]))
			gitscan_modules(now->v[i], now); /* a git dir's modules/ were listed above */
	return 0;
}

int gitscan_check(const struct gitscan_before *b, const char *quarantine_dir,
		  struct violations *out, struct err *e)
{
	struct strv now = STRV_INIT;
	struct snapshot absent = {0};
	int rc = find_now(b, &now, out, e);
	for (size_t i = 0; rc == 0 && i < now.n; i++) {
		const char *g = now.v[i];
		if (strv_contains(b->known, g) || (b->truncated && !changed_since(g, b->since)))
			continue;
		if (!is_dir(g)) { /* a .git file or symlink is only a pointer: it goes itself */
			entry_absent(&absent, g);
			continue;
		}
		/* the directory stays (what the agent made there is its work); what would run a
		 * command goes, submodule git dirs included */
		append(out, (struct violation){.path = xstrdup(g),
					       .what = xstrdup("a git repository created during the run: "
							       "what in it would run a command is moved "
							       "aside"),
					       .own_words = true});
		for (size_t k = 0; git_exec_names[k]; k++) {
			_cleanup_free_ char *p = path_join(g, git_exec_names[k]);
			entry_absent(&absent, p);
		}
		_cleanup_free_ char *m = path_join(g, "modules");
		entry_absent(&absent, m);
	}
	struct violations moved = {0};
	if (rc == 0 && absent.n)
		rc = snapshot_check(&absent, quarantine_dir, &moved, e);
	for (size_t i = 0; i < moved.n; i++) {
		struct violation v = moved.v[i];
		char *what = xasprintf("%s in a git repository created during the run", v.what);
		free(v.what);
		v.what = what;
		v.own_words = true;
		append(out, v);
	}
	free(moved.v);
	snapshot_free(&absent);
	strv_free(&now);
	return rc;
}
