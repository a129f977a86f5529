/* agentcopy: a private copy in, only safe keys back out (doc/design.md §3b). */
#include "core/host/agentcopy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

/* Read a whole regular file opened as fd, refusing more than JM_MAX_BYTES (a sparse giant is
 * not read at all). */
static int read_fd(int fd, const char *path, char **out, size_t *n, struct stat *st,
		   struct err *e)
{
	if (fstat(fd, st) < 0)
		return err_set(e, errno, path, "cannot stat");
	if (!S_ISREG(st->st_mode))
		return err_set(e, 0, path, "is not a regular file: nothing merged");
	if ((unsigned long long)st->st_size > JM_MAX_BYTES)
		return err_set(e, 0, path, "is %lld bytes, more than the %u merged: nothing merged",
			       (long long)st->st_size, JM_MAX_BYTES);
	size_t cap = (size_t)st->st_size + 1, len = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (len + 1 >= cap) {
			if (cap > JM_MAX_BYTES) {
				free(buf);
				return err_set(e, 0, path, "grew past %u bytes while read: nothing "
							   "merged", JM_MAX_BYTES);
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t r = read(fd, buf + len, cap - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;
			free(buf);
			return err_set(e, err, path, "cannot read");
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*out = buf;
	*n = len;
	return 0;
}

static int read_path(const char *path, int flags, char **out, size_t *n, struct stat *st,
		     struct err *e)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);
	if (fd < 0)
		return err_set(e, errno, path, "cannot open");
	return read_fd(fd, path, out, n, st, e);
}

int agentcopy_make(const char *host, const char *state_dir, const struct jm_rules *rules,
		   struct agentcopy *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	struct stat st;
	char *base = NULL;
	size_t nbase = 0;
	if (read_path(host, 0, &base, &nbase, &st, e) < 0) {
		err_hint(e, "the jail gets a private copy of this file; fix or remove it");
		return -1;
	}
	_cleanup_free_ char *dir = path_join(state_dir, "agent-copy");
	char *failed = NULL;
	if (fs_mkdirs(dir, 0700, &failed) < 0) {
		int err = errno;
		err_set(e, err, failed ? failed : dir, "cannot create the private-copy directory");
		free(failed);
		free(base);
		return -1;
	}
	const char *name = path_basename(host);
	char *copy = xasprintf("%s/%s.XXXXXX", dir, name[0] == '.' ? name + 1 : name);
	int fd = mkostemp(copy, O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		err_set(e, err, copy, "cannot create the private copy");
		free(copy);
		free(base);
		return -1;
	}
	int rc = fchmod(fd, 0600) < 0 || fs_write_all(fd, base, nbase) < 0 || fsync(fd) < 0 ? -1 : 0;
	int err = errno;
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc < 0) {
		(void)unlink(copy);
		err_set(e, err, copy, "cannot write the private copy");
		free(copy);
		free(base);
		return -1;
	}
	out->host = xstrdup(host);
	out->real = realpath(host, NULL); /* read through it above: NULL only if it just vanished */
	out->copy = copy;
	out->base = base;
	out->nbase = nbase;
	out->rules = rules;
	return 0;
}

/* Replace `real` by `text`: a temporary file beside it with its mode (and owner, as root),
 * fsync, rename, fsync of the directory. */
static int replace_file(const char *real, const struct stat *st, const char *text,
			struct err *e)
{
	_cleanup_free_ char *dir = path_dirname(real);
	const char *base = path_basename(real);
	_cleanup_free_ char *tmp = xasprintf("%s/.%s.agentjail-XXXXXX", dir, base);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return err_set(e, errno, tmp, "cannot create a temporary file to merge into");
	size_t n = strlen(text);
	int rc = fchmod(fd, st->st_mode & 07777) < 0 ||
				 (geteuid() == 0 && fchown(fd, st->st_uid, st->st_gid) < 0) ||
				 fs_write_all(fd, text, n) < 0 || fs_write_all(fd, "\n", 1) < 0 ||
				 fsync(fd) < 0
			 ? -1
			 : 0;
	int err = errno;
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc == 0 && rename(tmp, real) < 0) {
		rc = -1;
		err = errno;
	}
	if (rc < 0) {
		(void)unlink(tmp);
		return err_set(e, err, real, "cannot write the merged file (unchanged)");
	}
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		(void)fsync(dfd);
	return 0;
}

int agentcopy_finish(struct agentcopy *c, struct strv *dropped, struct err *e)
{
	if (!c->copy)
		return 0;
	_cleanup_free_ char *jail = NULL, *host = NULL, *merged = NULL, *real = NULL;
	size_t njail = 0, nhost = 0;
	struct stat jst, hst;
	int rc = -1;
	/* the copy: the jail could only write its content (the bind is a mount point) */
	if (read_path(c->copy, O_NOFOLLOW, &jail, &njail, &jst, e) < 0)
		goto out;
	/* the host file now, just before the merge: what a host claude wrote meanwhile stays */
	real = realpath(c->host, NULL);
	if (!real) {
		err_set(e, errno, c->host, "is gone: nothing merged back");
		goto out;
	}
	/* the file may lie in a directory the jail could write (CLAUDE_CONFIG_DIR): a link it
	 * planted there must not send the merge into another of the user's files */
	if (!c->real || strcmp(real, c->real) != 0) {
		err_set(e, 0, c->host, "now leads to %s, not to %s as before the run: nothing merged "
				       "back", real, c->real ? c->real : "(unknown)");
		err_hint(e, "look at %s: a jailed run may have replaced it with a link", c->host);
		goto out;
	}
	if (read_path(real, O_NOFOLLOW, &host, &nhost, &hst, e) < 0)
		goto out;
	rc = jsonmerge(c->rules, c->base, c->nbase, jail, njail, host, nhost, c->host, &merged,
		       dropped, e);
	if (rc == 1 && replace_file(real, &hst, merged, e) < 0)
		rc = -1;
out:
	if (unlink(c->copy) < 0 && errno != ENOENT && rc >= 0) {
		err_set(e, errno, c->copy, "cannot remove the private copy");
		rc = -1;
	}
	free(c->copy);
	c->copy = NULL;
	return rc;
}

void agentcopy_free(struct agentcopy *c)
{
	if (c->copy)
		(void)unlink(c->copy);
	free(c->host);
	free(c->real);
	free(c->copy);
	free(c->base);
	memset(c, 0, sizeof *c);
}
