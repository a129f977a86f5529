/* initbin: find and open the jail's init or another helper program (initbin.h). */
#include "core/jail/initbin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plan/initpath.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* The file at fd may be helper h: 0, or -1 with e set. */
static int check_helper(const struct helperpath *h, int fd, const char *path,
			const struct stat *self, struct err *e)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return err_set(e, errno, path, "cannot read %s", h->what);
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR))
		return err_set(e, 0, path, "%s is not an executable file", h->what);
	if (st.st_uid != 0 && st.st_uid != self->st_uid) {
		err_set(e, 0, path, "%s is owned by uid %u, neither root nor agentjail's "
				    "owner (uid %u): refusing to %s",
			h->what, (unsigned)st.st_uid, (unsigned)self->st_uid, h->role);
		err_hint(e, "reinstall agentjail (make install), or chown the file");
		return -1;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		err_set(e, 0, path, "%s is writable by group or others: refusing to %s", h->what,
			h->role);
		err_hint(e, "chmod go-w %s", path);
		return -1;
	}
	return 0;
}

int initbin_open(char **path, struct err *e)
{
	return helperbin_open(&HELPER_INIT, path, e);
}

int helperbin_open(const struct helperpath *h, char **path, struct err *e)
{
	if (path)
		*path = NULL;
	_cleanup_free_ char *self = fs_self_exe();
	struct stat sst;
	if (!self || stat(self, &sst) < 0)
		return err_set(e, errno, "/proc/self/exe", "cannot find agentjail's own binary");
	_cleanup_strv_ struct strv cand = STRV_INIT;
	helperpath_candidates(h, self, &cand);
	for (size_t i = 0; i < cand.n; i++) {
		int fd = open(cand.v[i], O_PATH | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue;
			return err_set(e, errno, cand.v[i], "cannot open %s", h->what);
		}
		if (check_helper(h, fd, cand.v[i], &sst, e) < 0) {
			(void)close(fd);
			return -1;
		}
		if (path)
			*path = xstrdup(cand.v[i]);
		return fd;
	}
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < cand.n; i++)
		sb_addf(&b, "%s%s", i ? " nor " : "", cand.v[i]);
	err_set(e, ENOENT, NULL, "cannot find %s (%s): not at %s", h->what, h->sibling, sb_str(&b));
	sb_free(&b);
	err_hint(e, "%s", h->missing);
	return -1;
}
