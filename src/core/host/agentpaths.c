/* agentpaths: see agentpaths.h. */
#include "core/host/agentpaths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

/* The agent's config paths exist before the jail starts, so what it writes there lasts (in
 * the jail $HOME is a tmpfs): directories as the agent would make them (0700), files only when
 * the profile knows a valid empty content. */
void agentpaths_make(const struct profile *pr, const struct policy *pol, struct strv *failed)
{
	for (size_t i = 0; pr->rw && pr->rw[i] && i < pol->agent_rw.n; i++) {
		size_t n = strlen(pr->rw[i]);
		bool dir = n > 0 && pr->rw[i][n - 1] == '/';
		const char *p = pol->agent_rw.v[i];
		struct stat st;
		if (lstat(p, &st) == 0 || (!dir && !pr->file_init))
			continue;
		int rc, err = 0;
		if (dir) {
			rc = mkdir(p, 0700);
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
			strv_push_take(failed, xasprintf("cannot create %s (%s): what %s saves there "
							 "will not last",
							 p, strerror(err), pr->name));
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
