/* toolprep: private cache directories and filtered registry configuration on disk. */
#include "core/host/toolprep.h"
#include "core/host/treewalk.h"
#include "core/plan/toolcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define CONF_MAX (1 << 20)

static int mkdirs(const char *dir, struct err *e)
{
	char *failed = NULL;
	if (fs_mkdirs(dir, 0700, &failed) < 0) {
		int saved = errno;
		err_set(e, saved, failed ? failed : dir, "cannot create agentjail's directory");
		err_hint(e, "check the permissions of agentjail's state directory "
			    "(AGENTJAIL_STATE_DIR)");
		free(failed);
		return -1;
	}
	return 0;
}

/* The host file, read without following a symlink at its last component; NULL when it is not
 * a regular file we can read, with *absent (when not NULL) true when nothing is there at all. */
static char *read_conf(const char *path, bool *absent)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (absent)
		*absent = fd < 0 && errno == ENOENT;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONF_MAX)
		return NULL;
	struct strbuf b = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0 && b.len < CONF_MAX)
		sb_addn(&b, buf, (size_t)n);
	if (n < 0) {
		sb_free(&b);
		return NULL;
	}
	return sb_steal(&b);
}

/* Put `text` at dir/name by a rename, unless the file there already says exactly that: a jail
 * still starting holds the copy it was planned with (bwrap mounts an fd's path, which a rename
 * would leave pointing at a deleted file), and most runs change nothing. `what` names the file
 * in errors. */
static int write_copy(const char *dir, const char *name, const char *text, const char *what,
		      struct err *e)
{
	_cleanup_free_ char *dst = path_join(dir, name);
	_cleanup_free_ char *have = read_conf(dst, NULL);
	if (have && !strcmp(have, text))
		return 0;
	_cleanup_free_ char *tmp = xasprintf("%s.%ld.tmp", dst, (long)getpid());
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
				      0600);
	if (fd < 0)
		return err_set(e, errno, tmp, "cannot write %s", what);
	if (fs_write_all(fd, text, strlen(text)) < 0) {
		int saved = errno;
		(void)unlink(tmp);
		return err_set(e, saved, tmp, "cannot write %s", what);
	}
	if (rename(tmp, dst) < 0) {
		int saved = errno;
		(void)unlink(tmp);
		return err_set(e, saved, dst, "cannot put %s in place", what);
	}
	return 0;
}

int toolprep_record_workspace(const char *root, const char *workspace, struct err *e)
{
	_cleanup_free_ char *text = xasprintf("%s\n", workspace);
	if (write_copy(root, CACHE_WORKSPACE_FILE, text, "the workspace's name", e) < 0)
		return -1;
	_cleanup_free_ char *f = path_join(root, CACHE_WORKSPACE_FILE);
	if (utimensat(AT_FDCWD, f, NULL, AT_SYMLINK_NOFOLLOW) < 0)
		return err_set(e, errno, f, "cannot mark the directory as used");
	return 0;
}

int toolprep_prepare(const struct hostfacts *hf, const char *root, const char *workspace,
		     const struct strv *agent_dirs, struct err *e)
{
	if (!hf->state_dir || !hf->home || !root)
		return 0;
	for (size_t i = 0; toolcaches[i].name; i++) {
		_cleanup_free_ char *d = path_join(root, toolcaches[i].name);
		if (mkdirs(d, e) < 0)
			return -1;
	}
	for (size_t i = 0; agent_dirs && i < agent_dirs->n; i++)
		if (mkdirs(agent_dirs->v[i], e) < 0)
			return -1;
	if (workspace && toolprep_record_workspace(root, workspace, e) < 0)
		return -1;
	_cleanup_free_ char *confdir = path_join(hf->state_dir, "toolconf");
	if (mkdirs(confdir, e) < 0)
		return -1;
	for (size_t i = 0; toolconfs[i].home_rel; i++) {
		_cleanup_free_ char *src = toolconf_host_path(hf, i);
		if (!src)
			continue;
		bool absent;
		_cleanup_free_ char *text = read_conf(src, &absent);
		struct stat st;
		/* nothing there (the open said so, without following a link): no copy */
		if (!text && (absent || lstat(src, &st) < 0))
			continue;
		/* unreadable now (changed since the plan was made): an empty copy, never the
		 * original */
		_cleanup_free_ char *filtered = toolconf_filter(text ? text : "", NULL);
		if (write_copy(confdir, toolconfs[i].copy, filtered,
			       "the filtered registry configuration", e) < 0)
			return -1;
	}
	return 0;
}

/* A DIR reading the directory fd (which stays the caller's), or NULL with e set. */
static DIR *dir_of(int fd, const char *shown, struct err *e)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd < 0 ? NULL : fdopendir(dup_fd);
	if (!d) {
		int saved = errno;
		if (dup_fd >= 0)
			(void)close(dup_fd);
		err_set(e, saved, shown, "cannot read the cache directory");
	}
	return d;
}

static void entry_free(struct cache_entry *c)
{
	free(c->dir);
	free(c->workspace);
}

void toolprep_cache_list_free(struct cache_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		entry_free(&v[i]);
	free(v);
}

/* The size of the directory `name` in dfd (0 when it is not one). */
static int dir_bytes(int dfd, const char *name, const char *shown, uint64_t *bytes,
		     struct err *e)
{
	*bytes = 0;
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP
			       ? 0
			       : err_set(e, errno, shown, "cannot open the cache directory");
	struct stat st;
	if (fstat(fd, &st) == 0)
		*bytes += (uint64_t)st.st_blocks * 512;
	return treewalk(fd, shown, TREEWALK_SIZE, bytes, e);
}

void toolprep_read_workspace(int dfd, char **workspace, long long *used)
{
	*workspace = NULL;
	*used = 0;
	_cleanup_close_ int fd = openat(dfd, CACHE_WORKSPACE_FILE,
					O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > 8192)
		return;
	char buf[8193];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0] == '/')
		*workspace = xstrdup(buf);
	*used = (long long)st.st_mtim.tv_sec;
}

static void push_entry(struct cache_entry **v, size_t *n, struct cache_entry c)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = c;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	const char *p = x->workspace ? x->workspace : x->dir, *q = y->workspace ? y->workspace : y->dir;
	return strcmp(p, q);
}

/* The per-workspace caches in <state>/cache/ws. */
static int list_workspaces(int cfd, const char *cdir, struct cache_entry **v, size_t *n,
			   struct err *e)
{
	_cleanup_close_ int wfd = openat(cfd, "ws", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wfd < 0)
		return errno == ENOENT ? 0 : err_set(e, errno, cdir, "cannot open ws in the cache");
	_cleanup_free_ char *ws = path_join(cdir, "ws");
	_cleanup_closedir_ DIR *d = dir_of(wfd, ws, e);
	if (!d)
		return -1;
	struct dirent *de;
	while ((errno = 0, de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		struct cache_entry c = {.kind = CACHE_KIND_WORKSPACE,
					.dir = path_join(ws, de->d_name)};
		_cleanup_close_ int fd = openat(wfd, de->d_name,
						O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			toolprep_read_workspace(fd, &c.workspace, &c.used);
		if (dir_bytes(wfd, de->d_name, c.dir, &c.bytes, e) < 0) {
			entry_free(&c);
			return -1;
		}
		push_entry(v, n, c);
	}
	if (errno)
		return err_set(e, errno, ws, "cannot read the cache directory");
	return 0;
}

int toolprep_cache_list(const char *state_dir, struct cache_entry **out, size_t *n,
			struct err *e)
{
	*out = NULL;
	*n = 0;
	_cleanup_free_ char *cdir = path_join(state_dir, "cache");
	_cleanup_close_ int cfd = open(cdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0)
		return errno == ENOENT ? 0
				       : err_set(e, errno, cdir, "cannot open agentjail's cache "
								 "directory");
	_cleanup_closedir_ DIR *d = dir_of(cfd, cdir, e);
	if (!d)
		return -1;
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, "ws"))
			continue;
		/* "shared", or a cache of an agentjail from before the per-workspace caches */
		struct cache_entry c = {.kind = strcmp(de->d_name, "shared") ? CACHE_KIND_OLD
									     : CACHE_KIND_SHARED,
					.dir = path_join(cdir, de->d_name)};
		rc = dir_bytes(cfd, de->d_name, c.dir, &c.bytes, e);
		if (rc == 0)
			push_entry(out, n, c);
		else
			entry_free(&c);
	}
	if (rc == 0 && errno)
		rc = err_set(e, errno, cdir, "cannot read agentjail's cache directory");
	if (rc == 0)
		rc = list_workspaces(cfd, cdir, out, n, e);
	if (rc < 0) {
		toolprep_cache_list_free(*out, *n);
		*out = NULL;
		*n = 0;
		return -1;
	}
	if (*n)
		qsort(*out, *n, sizeof **out, cmp_entry);
	return 0;
}

int toolprep_cache_size(const char *state_dir, uint64_t *bytes, struct err *e)
{
	struct cache_entry *v;
	size_t n;
	*bytes = 0;
	if (toolprep_cache_list(state_dir, &v, &n, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		*bytes += v[i].bytes;
	toolprep_cache_list_free(v, n);
	return 0;
}

int toolprep_cache_remove(const struct cache_entry *c, uint64_t *freed, struct err *e)
{
	*freed = 0;
	_cleanup_free_ char *parent = path_dirname(c->dir);
	const char *name = path_basename(c->dir);
	_cleanup_close_ int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return err_set(e, errno, parent, "cannot open the cache directory");
	_cleanup_close_ int fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : err_set(e, errno, c->dir, "cannot open the cache");
	/* a jail may have made its cache's top read-only (Go's module cache is) */
	if (fchmod(fd, 0700) < 0)
		return err_set(e, errno, c->dir, "cannot make it writable");
	/* the shared caches' own directories stay (a jail starting now may be binding them) */
	if (treewalk(fd, c->dir, c->kind == CACHE_KIND_SHARED ? TREEWALK_EMPTY_DIRS : TREEWALK_REMOVE,
		     freed, e) < 0)
		return -1;
	struct stat st;
	if (c->kind != CACHE_KIND_SHARED && fstat(fd, &st) == 0)
		*freed += (uint64_t)st.st_blocks * 512; /* as toolprep_cache_list counts it */
	if (c->kind != CACHE_KIND_SHARED && unlinkat(pfd, name, AT_REMOVEDIR) < 0)
		return err_set(e, errno, c->dir, "cannot remove");
	return 0;
}
