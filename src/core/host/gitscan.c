/* gitscan: see gitscan.h. The walk reads directories with openat (never following a symlink);
 * what a run added is checked by gitscan_check (core/jail/gitscan_check.c). */
#include "core/host/gitscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plan/gitprotect.h"
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
