#include "util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

int fs_mkdirs(const char *dir, mode_t mode, char **failed)
{
	char *p = xstrdup(dir);
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
