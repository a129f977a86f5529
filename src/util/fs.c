#include "util/fs.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/xalloc.h"

/* mkdir of p, then of its missing parents and p again when p's parent is missing (p is cut
 * and restored in place): true when p exists now. The common case, a directory an earlier run
 * made, costs one mkdir instead of one per component from "/" down. */
static bool mkdir_up(char *p, mode_t mode)
{
	if (mkdir(p, mode) == 0 || errno == EEXIST)
		return true;
	char *slash = strrchr(p, '/');
	if (errno != ENOENT || !slash || slash == p)
		return false;
	*slash = '\0';
	bool up = mkdir_up(p, mode);
	*slash = '/';
	return up && (mkdir(p, mode) == 0 || errno == EEXIST);
}

int fs_mkdirs(const char *dir, mode_t mode, char **failed)
{
	char *p = xstrdup(dir);
	if (p[0] == '/' && mkdir_up(p, mode)) {
		free(p);
		return 0;
	}
	/* the walk from "/" down says which component fails, and why */
	for (char *q = p + 1;; q++) {
		if (*q != '/' && *q != '\0')
			continue;
		char c = *q;
		*q = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			int saved = errno;
			if (failed)
				*failed = p;
			else
				free(p);
			errno = saved;
			return -1;
		}
		*q = c;
		if (c == '\0')
			break;
	}
	free(p);
	return 0;
}

char *fs_self_exe(void)
{
	static char *known;
	if (known)
		return xstrdup(known);
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
	struct stat named, self;
	char *r = NULL;
	if (n > 0 && buf[0] == '/') {
		buf[n] = '\0';
		if (stat(buf, &named) == 0 && stat("/proc/self/exe", &self) == 0 &&
		    named.st_dev == self.st_dev && named.st_ino == self.st_ino)
			r = xstrdup(buf);
	}
	if (!r && !(r = realpath("/proc/self/exe", NULL)))
		return NULL;
	known = r;
	return xstrdup(known);
}

ssize_t fs_read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off + 1 < n) {
		ssize_t r = read(fd, buf + off, n - 1 - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	int saved = errno;
	(void)close(fd);
	errno = saved;
	buf[off] = '\0';
	return (ssize_t)off;
}

int fs_open_nofollow(const char *path, int flags)
{
	struct open_how how = {.flags = (unsigned)(flags | O_CLOEXEC),
			       .resolve = RESOLVE_NO_SYMLINKS};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
	if (fd >= 0 || errno != ENOSYS)
		return (int)fd;
	/* pre-5.6 kernels: one component at a time, none of them a symlink */
	int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -1;
	char *copy = xstrdup(path);
	char *save = NULL;
	char *c = strtok_r(copy, "/", &save);
	while (c && cur >= 0) {
		char *next_c = strtok_r(NULL, "/", &save);
		int next = openat(cur, c, (next_c ? O_PATH | O_DIRECTORY : flags) | O_NOFOLLOW |
						  O_CLOEXEC);
		int saved = errno;
		(void)close(cur);
		errno = saved;
		cur = next;
		c = next_c;
	}
	free(copy);
	return cur;
}

int fs_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

int fs_remove_tree(const char *dir)
{
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

int fs_open_parent(int top, const char *rel, bool make, mode_t mode, const char **base)
{
	const char *slash = strrchr(rel, '/');
	*base = slash ? slash + 1 : rel;
	int fd = fcntl(top, F_DUPFD_CLOEXEC, 0);
	for (const char *c = rel; fd >= 0 && slash && c <= slash;) {
		size_t l = strcspn(c, "/");
		if (!l || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.') ||
		    l > 255) {
			(void)close(fd);
			errno = EINVAL;
			return -1;
		}
		char name[256];
		memcpy(name, c, l);
		name[l] = '\0';
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && make && mkdirat(fd, name, mode) == 0)
			next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		(void)close(fd);
		errno = saved;
		fd = next;
		c += l + 1;
	}
	if (fd >= 0 && (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))) {
		(void)close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}
