/* agentpaths: see agentpaths.h. */
#include "core/host/agentpaths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

/* mkdir `dir` 0700, and under $HOME its missing parents too (a new user has no ~/.config,
 * ~/.local/share or ~/.cache yet: without them the agent's state would be written in the jail's
 * tmpfs home and lost). Existing directories are left as they are; nothing above $HOME is made.
 * 0, or -1 with errno and *failed the directory that could not be made (the caller frees). */
static int mkdir_in_home(const char *dir, const char *home, char **failed)
{
	const char *rel = home ? path_below(dir, home) : NULL;
	char *p = xstrdup(dir);
	char *c = rel && *rel ? p + (rel - dir) : p + strlen(p);
	for (;; c++) {
		if (*c != '/' && *c != '\0')
			continue;
		char was = *c;
		*c = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST) {
			*failed = p;
			return -1;
		}
		*c = was;
		if (!was)
			break;
	}
	free(p);
	return 0;
}

/* The agent's config paths exist before the jail starts, so what it writes there lasts (in
 * the jail $HOME is a tmpfs): directories as the agent would make them (0700, with their
 * missing parents under $HOME), files only when the profile knows a valid empty content. */
void agentpaths_make(const struct profile *pr, const char *home, const struct policy *pol,
		     struct strv *failed)
{
	for (size_t i = 0; pr->rw && pr->rw[i] && i < pol->agent_rw.n; i++) {
		size_t n = strlen(pr->rw[i]);
		bool dir = n > 0 && pr->rw[i][n - 1] == '/';
		const char *p = pol->agent_rw.v[i];
		struct stat st;
		if (lstat(p, &st) == 0 || (!dir && !pr->file_init))
			continue;
		int rc, err = 0;
		_cleanup_free_ char *where = NULL;
		if (dir) {
			rc = mkdir_in_home(p, home, &where);
			err = errno;
		} else {
			int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
			rc = fd < 0 ? -1 : 0;
			err = errno;
			size_t len = strlen(pr->file_init);
			if (fd >= 0 && write(fd, pr->file_init, len) != (ssize_t)len) {
				rc = -1;
				err = errno ? errno : ENOSPC;
			}
			if (fd >= 0 && close(fd) < 0 && rc == 0) {
				rc = -1;
				err = errno;
			}
			if (fd >= 0 && rc < 0)
				(void)unlink(p); /* nothing half-written left behind */
		}
		if (rc < 0 && err != EEXIST)
			strv_push_take(failed, xasprintf("cannot create %s (%s): what %s saves in %s "
							 "will not last",
							 where ? where : p, strerror(err),
							 pr->name, p));
	}
}

/* mkdir every missing component of `dir` below `base` (which may be reached through a symlink:
 * a dotfiles manager's ~/.codex), never following one below it (a link planted there would
 * send the mkdir elsewhere). 0, or -1 with errno. */
static int mkdir_below_nofollow(const char *dir, const char *base)
{
	const char *rel = path_below(dir, base);
	if (!rel) {
		errno = EINVAL;
		return -1;
	}
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	_cleanup_free_ char *copy = xstrdup(rel);
	int rc = 0;
	for (char *save = NULL, *c = strtok_r(copy, "/", &save); c && rc == 0;
	     c = strtok_r(NULL, "/", &save)) {
		if (mkdirat(fd, c, 0700) < 0 && errno != EEXIST) {
			rc = -1;
			break;
		}
		int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int saved = errno;
		(void)close(fd);
		fd = next;
		errno = saved;
		if (fd < 0)
			rc = -1;
	}
	int saved = errno;
	if (fd >= 0)
		(void)close(fd);
	errno = saved;
	return rc;
}

void agentpaths_make_private(const struct profile *pr, const struct policy *pol,
			     struct strv *failed)
{
	_cleanup_strv_ struct strv all = STRV_INIT;
	strv_copy(&all, &pol->agent_private);
	strv_copy(&all, &pol->agent_private_over);
	for (size_t i = 0; i < all.n; i++) {
		const char *d = all.v[i];
		const char *base = NULL;
		for (size_t k = 0; k < pol->agent_rw.n && !base; k++)
			if (path_is_strict_ancestor(pol->agent_rw.v[k], d))
				base = pol->agent_rw.v[k];
		if (base && mkdir_below_nofollow(d, base) < 0)
			strv_push_take(failed, xasprintf("cannot create %s (%s): the jail needs it as "
							 "the place of %s's private directory",
							 d, strerror(errno), pr->name));
	}
}

/* The instruction and token dirs exist before the jail starts, so they can be bound read-only
 * or masked (the agent makes them itself when missing; a missing parent is left alone). */
void agentpaths_make_dirs(const struct profile *pr, const char *home, char **environ_,
			  const struct policy *pol, struct strv *failed)
{
	struct strv env = STRV_INIT, dirs = STRV_INIT;
	strv_push_all(&env, environ_);
	profile_dirs_to_make(pr, home, &env, pol->agent_writable_instructions, &dirs);
	for (size_t i = 0; i < dirs.n; i++) {
		if (mkdir(dirs.v[i], 0700) < 0 && errno != EEXIST && errno != ENOENT)
			strv_push_take(failed, xasprintf("cannot create %s (%s): it stays writable in "
							 "the jail if %s makes it there",
							 dirs.v[i], strerror(errno), pr->name));
	}
	strv_free(&dirs);
	strv_free(&env);
}
