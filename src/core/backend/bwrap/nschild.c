/* nschild: see nschild.h. */
#include "core/backend/bwrap/nschild.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

size_t nsc_put_str(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		buf[at++] = *s++;
	buf[at] = '\0';
	return at;
}

size_t nsc_put_uint(char *buf, size_t at, size_t cap, unsigned long v)
{
	char tmp[24];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && at + 1 < cap)
		buf[at++] = tmp[--n];
	buf[at] = '\0';
	return at;
}

bool nsc_injected(const struct nsc_inject *inj, const char *step)
{
	if (!inj || !inj->step[0])
		return false;
	size_t n = strnlen(inj->step, sizeof inj->step);
	if (strncmp(step, inj->step, n) != 0)
		return false;
	errno = EPERM;
	return true;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = strlen(text);
	ssize_t w = write(fd, text, len);
	int saved = errno;
	(void)close(fd);
	if (w == (ssize_t)len)
		return 0;
	errno = w < 0 ? saved : EIO;
	return -1;
}

/* "ID ID 1\n": the id mapped to itself */
static int write_map(const char *path, unsigned long id)
{
	char map[64];
	size_t n = nsc_put_uint(map, 0, sizeof map, id);
	n = nsc_put_str(map, n, sizeof map, " ");
	n = nsc_put_uint(map, n, sizeof map, id);
	(void)nsc_put_str(map, n, sizeof map, " 1\n");
	return write_file(path, map);
}

int nsc_userns(uid_t uid, gid_t gid, int flags, const struct nsc_inject *inj, const char **step)
{
	*step = "make the holder dumpable (prctl)";
	if (nsc_injected(inj, *step) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return -1;
	*step = flags == CLONE_NEWNET ? "unshare(CLONE_NEWUSER|CLONE_NEWNET)"
		: flags == CLONE_NEWNS ? "unshare(CLONE_NEWUSER|CLONE_NEWNS)"
				       : "unshare(CLONE_NEWUSER)";
	int rc = nsc_injected(inj, *step) || unshare(CLONE_NEWUSER | flags) < 0 ? -1 : 0;
	if (rc == 0) {
		*step = "write /proc/self/setgroups";
		rc = nsc_injected(inj, *step) || write_file("/proc/self/setgroups", "deny\n") < 0
			     ? -1 : 0;
	}
	if (rc == 0) {
		*step = "write /proc/self/uid_map";
		rc = nsc_injected(inj, *step) || write_map("/proc/self/uid_map", uid) < 0 ? -1 : 0;
	}
	if (rc == 0) {
		*step = "write /proc/self/gid_map";
		rc = nsc_injected(inj, *step) || write_map("/proc/self/gid_map", gid) < 0 ? -1 : 0;
	}
	/* the maps are written (or not): no reason left to be dumpable (the parent shares this
	 * mm when the child is a vfork child) */
	int saved = errno;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		*step = "make the holder non-dumpable again (prctl)";
		return -1;
	}
	errno = saved;
	return rc;
}
