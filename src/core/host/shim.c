/* shim: install, remove and recognise agent shims; tell a jail from the host. */
#include "core/host/shim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plan/bwrap_argv.h"
#include "core/plan/profile.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

bool shim_in_jail_from(const char *cmdline, size_t len, const char *status)
{
	/* PID 1 is agentjail's init, run from where only a jail mounts it */
	static const char want[] = BW_INIT_PATH "\0__init";
	if (len < sizeof want || memcmp(cmdline, want, sizeof want) != 0)
		return false;
	/* and this process is confined as every process in a jail is */
	return status && strstr(status, "\nNoNewPrivs:\t1\n") && strstr(status, "\nSeccomp:\t2\n");
}

bool shim_in_jail(void)
{
	char buf[64];
	ssize_t n = fs_read_small("/proc/1/cmdline", buf, sizeof buf);
	if (n <= 0)
		return false;
	char st[8192];
	return fs_read_small("/proc/self/status", st, sizeof st) > 0 &&
	       shim_in_jail_from(buf, (size_t)n, st);
}

const struct profile *shim_profile(const char *argv0)
{
	if (!argv0 || !*argv0)
		return NULL;
	const char *base = path_basename(argv0);
	if (!strcmp(base, "agentjail"))
		return NULL;
	return profile_by_exe(base);
}

char *shim_default_dir(const char *home, const char *xdg_data_home)
{
	if (xdg_data_home && xdg_data_home[0] == '/')
		return path_join(xdg_data_home, "agentjail/bin");
	return path_join(home, ".local/share/agentjail/bin");
}

enum shim_state shim_check(const char *dir, const char *exe)
{
	_cleanup_free_ char *p = path_join(dir, exe);
	struct stat st;
	if (lstat(p, &st) < 0)
		return SHIM_ABSENT;
	if (!S_ISLNK(st.st_mode))
		return SHIM_FOREIGN;
	char buf[4096];
	ssize_t n = readlink(p, buf, sizeof buf - 1);
	if (n < 0)
		return SHIM_FOREIGN;
	buf[n] = '\0';
	/* ours: a link to a binary named agentjail (an older install's path included) */
	return !strcmp(path_basename(buf), "agentjail") ? SHIM_OURS : SHIM_FOREIGN;
}

static int make_shim_dir(const char *dir, struct err *e)
{
	_cleanup_free_ char *d = path_normalize("/", dir);
	char *failed = NULL;
	if (fs_mkdirs(d, 0755, &failed) < 0) {
		err_set(e, errno, failed, "cannot create the shim directory");
		free(failed);
		return -1;
	}
	struct stat st;
	if (stat(d, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(e, ENOTDIR, d, "the shim directory is not a directory");
	return 0;
}

int shim_install(const char *dir, const char *exe, const char *self, bool *existed,
		 struct err *e)
{
	*existed = false;
	if (make_shim_dir(dir, e) < 0)
		return -1;
	_cleanup_free_ char *p = path_join(dir, exe);
	switch (shim_check(dir, exe)) {
	case SHIM_OURS: {
		char buf[4096];
		ssize_t n = readlink(p, buf, sizeof buf - 1);
		if (n >= 0) {
			buf[n] = '\0';
			if (!strcmp(buf, self)) {
				*existed = true;
				return 0;
			}
		}
		/* an older agentjail's path: point it at this one */
		if (unlink(p) < 0)
			return err_set(e, errno, p, "cannot replace the old shim");
		break;
	}
	case SHIM_FOREIGN:
		err_set(e, EEXIST, p, "exists and is not an agentjail shim: left alone");
		err_hint(e, "move it away, or install the shims elsewhere with --dir");
		return -1;
	case SHIM_ABSENT:
		break;
	}
	if (symlink(self, p) < 0)
		return err_set(e, errno, p, "cannot create the shim");
	return 0;
}

int shim_remove(const char *dir, const char *exe, struct err *e)
{
	_cleanup_free_ char *p = path_join(dir, exe);
	switch (shim_check(dir, exe)) {
	case SHIM_ABSENT:
		return 0;
	case SHIM_FOREIGN:
		err_set(e, 0, p, "is not an agentjail shim: left alone");
		return -1;
	case SHIM_OURS:
		break;
	}
	if (unlink(p) < 0)
		return err_set(e, errno, p, "cannot remove the shim");
	return 0;
}

void shim_path_hint(const char *shell, const char *dir, const char **rcfile, char **line)
{
	const char *sh = shell ? path_basename(shell) : "sh";
	if (!strcmp(sh, "zsh")) {
		*rcfile = "~/.zshrc";
		*line = xasprintf("export PATH=\"%s:$PATH\"", dir);
	} else if (!strcmp(sh, "fish")) {
		*rcfile = "~/.config/fish/config.fish";
		*line = xasprintf("fish_add_path --move --prepend %s", dir);
	} else if (!strcmp(sh, "bash")) {
		*rcfile = "~/.bashrc";
		*line = xasprintf("export PATH=\"%s:$PATH\"", dir);
	} else {
		*rcfile = "~/.profile";
		*line = xasprintf("export PATH=\"%s:$PATH\"", dir);
	}
}
