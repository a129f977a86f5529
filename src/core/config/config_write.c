/* config_write: the user's configuration file, and replacing its content in one step (for
 * `agentjail log --suggest --apply`, doc/design.md §8). Never a project's file. */
#include "core/config/config_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plan/dirs.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

char *config_user_file(const struct config_env *env)
{
	_cleanup_free_ char *dir = dirs_config_dir(env->xdg_config_home, env->home);
	return path_join(dir, "config.toml");
}

int config_write_file(const char *path, const char *text, size_t len, struct err *e)
{
	/* a symlink (dotfiles) is followed: the file it names is replaced, the link kept */
	char real[PATH_MAX];
	struct stat st;
	bool exists = realpath(path, real) != NULL;
	if (!exists && errno != ENOENT)
		return err_set(e, errno, path, "cannot resolve the configuration file");
	if (!exists) {
		_cleanup_free_ char *abs = path_normalize("/", path);
		_cleanup_free_ char *dir = path_dirname(abs);
		_cleanup_free_ char *failed = NULL;
		if (fs_mkdirs(dir, 0700, &failed) < 0)
			return err_set(e, errno, failed ? failed : dir, "cannot create the "
				       "configuration directory");
		(void)snprintf(real, sizeof real, "%s", abs);
	}
	const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
	if (!strcmp(base, ".agentjail.toml"))
		return err_set(e, 0, real, "refusing to write a project's configuration file (the "
				       "user's file only)");
	if (exists && (stat(real, &st) < 0 || !S_ISREG(st.st_mode)))
		return err_set(e, errno, real, "the configuration file is not a regular file");
	mode_t mode = exists ? st.st_mode & 0777 : 0600;
	_cleanup_free_ char *dir = path_dirname(real);
	_cleanup_free_ char *tmp = path_join(dir, ".config.toml.agentjail-XXXXXX");
	int fd = mkstemp(tmp);
	if (fd < 0)
		return err_set(e, errno, dir, "cannot create a temporary file beside the "
				       "configuration file");
	int rc = 0;
	if (fchmod(fd, mode) < 0 || fs_write_all(fd, text, len) < 0 || fsync(fd) < 0)
		rc = err_set(e, errno, tmp, "cannot write the new configuration");
	if (close(fd) < 0 && rc == 0)
		rc = err_set(e, errno, tmp, "cannot write the new configuration");
	if (rc == 0 && rename(tmp, real) < 0)
		rc = err_set(e, errno, real, "cannot replace the configuration file");
	if (rc < 0)
		(void)unlink(tmp);
	return rc;
}
