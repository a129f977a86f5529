/* snapkeep: see snapkeep.h. */
#include "core/jail/snapkeep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/xalloc.h"

static void node_free(struct keep_node *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		node_free(&n->kids[i]);
	free(n->kids);
	free(n->name);
	free(n->data);
	*n = (struct keep_node){0};
}

struct kwalk {
	struct snapkeep *k;
	const char *why;
};

static int read_fd_all(int fd, size_t size, struct keep_node *n)
{
	n->data = xmalloc(size ? size : 1);
	size_t got = 0;
	while (got < size) {
		ssize_t r = read(fd, n->data + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1; /* shrank or failed meanwhile: not kept */
		got += (size_t)r;
	}
	n->len = got;
	return 0;
}

static int keep_at(struct kwalk *w, int dfd, const char *name, unsigned depth,
		   struct keep_node *n);

static int keep_dir(struct kwalk *w, int fd, unsigned depth, struct keep_node *n)
{
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	if (!d) {
		(void)close(fd);
		return w->why = "cannot list it", -1;
	}
	_cleanup_strv_ struct strv names = STRV_INIT;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			strv_push(&names, de->d_name);
	n->kids = names.n ? xcalloc(names.n, sizeof *n->kids) : NULL;
	for (size_t i = 0; i < names.n; i++) {
		n->nkids++;
		if (keep_at(w, dirfd(d), names.v[i], depth + 1, &n->kids[i]) < 0)
			return -1;
	}
	return 0;
}

static int keep_at(struct kwalk *w, int dfd, const char *name, unsigned depth,
		   struct keep_node *n)
{
	n->name = xstrdup(name);
	if (depth > KEEP_MAX_DEPTH || ++w->k->entries > KEEP_MAX_ENTRIES)
		return w->why = "too many entries to keep", -1;
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return w->why = "cannot inspect it", -1;
	n->mode = st.st_mode;
	n->uid = st.st_uid;
	n->gid = st.st_gid;
	n->mtime = st.st_mtim;
	if (S_ISLNK(st.st_mode)) {
		n->data = xcalloc(1, PATH_MAX + 1);
		ssize_t l = readlinkat(dfd, name, n->data, PATH_MAX);
		if (l < 0)
			return w->why = "cannot read the symlink", -1;
		n->len = (size_t)l;
		return 0;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return w->why = "neither a file, a directory nor a symlink", -1;
	int fd = openat(dfd, name,
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
				(S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	struct stat fst;
	if (fd < 0 || fstat(fd, &fst) < 0 || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev) {
		if (fd >= 0)
			(void)close(fd);
		return w->why = "cannot open it", -1;
	}
	if (S_ISDIR(st.st_mode))
		return keep_dir(w, fd, depth, n);
	_cleanup_close_ int ffd = fd;
	w->k->bytes += (size_t)st.st_size;
	if (w->k->bytes > KEEP_MAX_BYTES)
		return w->why = "too large to keep", -1;
	if (read_fd_all(ffd, (size_t)st.st_size, n) < 0)
		return w->why = "cannot read it", -1;
	return 0;
}

static void keep_one(struct snapkeep *k, const struct snap_entry *se, struct keep_entry *ke)
{
	ke->path = xstrdup(se->path);
	if (!se->exists)
		return;
	if (se->type == S_IFDIR && !strcmp(path_basename(se->path), ".git")) {
		ke->why = xstrdup("the repository itself is not kept");
		return;
	}
	_cleanup_free_ char *parent = path_dirname(se->path);
	_cleanup_close_ int pfd = fs_open_nofollow(parent, O_PATH | O_DIRECTORY);
	struct kwalk w = {.k = k};
	size_t bytes = k->bytes, entries = k->entries;
	if (pfd < 0)
		w.why = "cannot open its directory";
	else if (keep_at(&w, pfd, path_basename(se->path), 0, &ke->node) == 0) {
		ke->kept = true;
		return;
	}
	node_free(&ke->node);
	k->bytes = bytes, k->entries = entries;
	ke->why = xstrdup(w.why);
}

void snapkeep_take(const struct snapshot *s, struct snapkeep *out)
{
	*out = (struct snapkeep){0};
	out->e = s->n ? xcalloc(s->n, sizeof *out->e) : NULL;
	for (size_t i = 0; i < s->n; i++) {
		out->n++;
		keep_one(out, &s->e[i], &out->e[i]);
	}
}

const struct keep_entry *snapkeep_find(const struct snapkeep *k, const char *path)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->e[i].path, path))
			return &k->e[i];
	return NULL;
}

/* Owner (root only: a user's files are theirs already), permission bits and modification time,
 * after the content. */
static int finish(int fd, const struct keep_node *n)
{
	struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, n->mtime};
	if (geteuid() == 0 && fchown(fd, n->uid, n->gid) < 0)
		return -1;
	return fchmod(fd, n->mode & 07777) < 0 ? -1 : futimens(fd, ts);
}

static int make_at(int dfd, const struct keep_node *n, struct err *e)
{
	if (S_ISLNK(n->mode)) {
		_cleanup_free_ char *t = xstrndup(n->data, n->len);
		if (symlinkat(t, dfd, n->name) < 0)
			return err_set(e, errno, n->name, "cannot restore the symlink");
		if (geteuid() == 0 &&
		    fchownat(dfd, n->name, n->uid, n->gid, AT_SYMLINK_NOFOLLOW) < 0)
			return err_set(e, errno, n->name, "cannot restore the symlink's owner");
		return 0;
	}
	if (S_ISREG(n->mode)) {
		_cleanup_close_ int fd = openat(dfd, n->name,
						O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
						0600);
		if (fd < 0)
			return err_set(e, errno, n->name, "cannot restore the file");
		if (fs_write_all(fd, n->data, n->len) < 0 || finish(fd, n) < 0 || fsync(fd) < 0)
			return err_set(e, errno, n->name, "cannot restore the file");
		return 0;
	}
	if (mkdirat(dfd, n->name, 0700) < 0)
		return err_set(e, errno, n->name, "cannot restore the directory");
	_cleanup_close_ int fd =
		openat(dfd, n->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, errno, n->name, "cannot open the restored directory");
	for (size_t i = 0; i < n->nkids; i++)
		if (make_at(fd, &n->kids[i], e) < 0)
			return -1;
	if (finish(fd, n) < 0)
		return err_set(e, errno, n->name, "cannot restore the directory's owner or mode");
	return 0;
}

int snapkeep_restore(const struct keep_entry *ke, struct err *e)
{
	if (!ke->kept)
		return err_set(e, 0, ke->path, "its content was not kept (%s)",
			       ke->why ? ke->why : "it did not exist");
	_cleanup_free_ char *parent = path_dirname(ke->path);
	_cleanup_close_ int pfd = fs_open_nofollow(parent, O_RDONLY | O_DIRECTORY);
	if (pfd < 0)
		return err_set(e, errno, parent, "cannot open the directory to restore into");
	/* A half-made entry is left where it is, never removed: by now its name may hold what
	 * the command swapped in, which the host (root, with every capability) must not delete
	 * for it. The caller reports the failure loudly; the check after the run sees the entry
	 * differ and moves it aside (a rename, nothing deleted). */
	if (make_at(pfd, &ke->node, e) < 0) {
		if (e->errnum != EEXIST)
			err_hint(e, "the restore stopped half-way: check %s against the kept original",
				 ke->path);
		return -1;
	}
	return 0;
}

static bool same_at(int dfd, const struct keep_node *n, unsigned depth)
{
	struct stat st;
	if (depth > KEEP_MAX_DEPTH || fstatat(dfd, n->name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_mode != n->mode)
		return false;
	if (S_ISLNK(st.st_mode)) {
		char buf[PATH_MAX + 1];
		ssize_t l = readlinkat(dfd, n->name, buf, sizeof buf);
		return l >= 0 && (size_t)l == n->len && !memcmp(buf, n->data, n->len);
	}
	_cleanup_close_ int fd =
		openat(dfd, n->name,
		       O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
			       (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	if (fd < 0)
		return false;
	if (S_ISREG(st.st_mode)) {
		if ((size_t)st.st_size != n->len)
			return false;
		struct keep_node now = {0};
		bool same = read_fd_all(fd, n->len, &now) == 0 &&
			    (!n->len || !memcmp(now.data, n->data, n->len));
		char extra;
		same = same && read(fd, &extra, 1) == 0;
		free(now.data);
		return same;
	}
	size_t count = 0;
	int dfd2 = dup(fd);
	_cleanup_closedir_ DIR *d = dfd2 >= 0 ? fdopendir(dfd2) : NULL;
	if (!d) {
		if (dfd2 >= 0)
			(void)close(dfd2);
		return false;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		count += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (count != n->nkids)
		return false;
	for (size_t i = 0; i < n->nkids; i++)
		if (!same_at(fd, &n->kids[i], depth + 1))
			return false;
	return true;
}

bool snapkeep_same(const struct keep_entry *ke)
{
	if (!ke->kept)
		return false;
	_cleanup_free_ char *parent = path_dirname(ke->path);
	_cleanup_close_ int pfd = fs_open_nofollow(parent, O_PATH | O_DIRECTORY);
	return pfd >= 0 && same_at(pfd, &ke->node, 0);
}

void snapkeep_free(struct snapkeep *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->e[i].path);
		free(k->e[i].why);
		node_free(&k->e[i].node);
	}
	free(k->e);
	*k = (struct snapkeep){0};
}
