/* toolprep: private cache directories and filtered registry configuration on disk. */
#include "core/host/toolprep.h"
#include "core/plan/toolcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define CONF_MAX (1 << 20)

static int mkdirs(const char *dir, struct err *e)
{
	char *failed = NULL;
	if (fs_mkdirs(dir, 0700, &failed) < 0) {
		int saved = errno;
		err_set(e, saved, failed ? failed : dir, "cannot create agentjail's directory");
		err_hint(e, "check the permissions of agentjail's state directory "
			    "(AGENTJAIL_STATE_DIR)");
		free(failed);
		return -1;
	}
	return 0;
}

/* The host file, read without following a symlink at its last component; NULL when it is not
 * a regular file we can read. */
static char *read_conf(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > CONF_MAX)
		return NULL;
	struct strbuf b = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0 && b.len < CONF_MAX)
		sb_addn(&b, buf, (size_t)n);
	if (n < 0) {
		sb_free(&b);
		return NULL;
	}
	return sb_steal(&b);
}

/* Put `text` at dir/name by a rename, unless the copy there already says exactly that: a jail
 * still starting holds the copy it was planned with (bwrap mounts an fd's path, which a rename
 * would leave pointing at a deleted file), and most runs change nothing. */
static int write_copy(const char *dir, const char *name, const char *text, struct err *e)
{
	_cleanup_free_ char *dst = path_join(dir, name);
	_cleanup_free_ char *have = read_conf(dst);
	if (have && !strcmp(have, text))
		return 0;
	_cleanup_free_ char *tmp = xasprintf("%s.%ld.tmp", dst, (long)getpid());
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
				      0600);
	if (fd < 0)
		return err_set(e, errno, tmp, "cannot write the filtered registry configuration");
	if (fs_write_all(fd, text, strlen(text)) < 0) {
		int saved = errno;
		(void)unlink(tmp);
		return err_set(e, saved, tmp, "cannot write the filtered registry configuration");
	}
	if (rename(tmp, dst) < 0) {
		int saved = errno;
		(void)unlink(tmp);
		return err_set(e, saved, dst, "cannot put the filtered registry configuration "
					      "in place");
	}
	return 0;
}

int toolprep_prepare(const struct hostfacts *hf, struct err *e)
{
	if (!hf->state_dir || !hf->home)
		return 0;
	for (size_t i = 0; toolcaches[i].name; i++) {
		_cleanup_free_ char *d = xasprintf("%s/cache/%s", hf->state_dir, toolcaches[i].name);
		if (mkdirs(d, e) < 0)
			return -1;
	}
	_cleanup_free_ char *confdir = path_join(hf->state_dir, "toolconf");
	if (mkdirs(confdir, e) < 0)
		return -1;
	for (size_t i = 0; toolconfs[i].home_rel; i++) {
		_cleanup_free_ char *src = toolconf_host_path(hf, i);
		if (!src)
			continue;
		_cleanup_free_ char *text = read_conf(src);
		/* unreadable now (changed since the plan was made): an empty copy, never the
		 * original */
		_cleanup_free_ char *filtered = toolconf_filter(text ? text : "", NULL);
		struct stat st;
		if (!text && lstat(src, &st) < 0)
			continue;
		if (write_copy(confdir, toolconfs[i].copy, filtered, e) < 0)
			return -1;
	}
	return 0;
}

/* Walk the contents of dfd without following links: sum their size, and remove them when
 * `rm` (directories made writable first: Go's module cache is read-only). */
static int walk(int dfd, const char *shown, bool rm, uint64_t *bytes, struct err *e)
{
	int dup_fd = dup(dfd);
	if (dup_fd < 0)
		return err_set(e, errno, shown, "cannot read the cache directory");
	_cleanup_closedir_ DIR *d = fdopendir(dup_fd);
	if (!d) {
		int saved = errno;
		(void)close(dup_fd);
		return err_set(e, saved, shown, "cannot read the cache directory");
	}
	struct dirent *de;
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		*bytes += (uint64_t)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = openat(dfd, de->d_name,
							 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
								 O_CLOEXEC);
			if (sub < 0)
				return err_set(e, errno, shown, "cannot open %s in the cache",
					       de->d_name);
			if (rm && fchmod(sub, 0700) < 0)
				return err_set(e, errno, shown, "cannot make %s writable",
					       de->d_name);
			_cleanup_free_ char *inner = path_join(shown, de->d_name);
			if (walk(sub, inner, rm, bytes, e) < 0)
				return -1;
			if (rm && unlinkat(dfd, de->d_name, AT_REMOVEDIR) < 0)
				return err_set(e, errno, inner, "cannot remove");
		} else if (rm && unlinkat(dfd, de->d_name, 0) < 0) {
			return err_set(e, errno, shown, "cannot remove %s", de->d_name);
		}
	}
	if (errno)
		return err_set(e, errno, shown, "cannot read the cache directory");
	return 0;
}

static int cache_walk(const char *state_dir, bool rm, uint64_t *bytes, struct err *e)
{
	*bytes = 0;
	_cleanup_free_ char *dir = path_join(state_dir, "cache");
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return err_set(e, errno, dir, "cannot open agentjail's cache directory");
	}
	if (!rm)
		return walk(fd, dir, false, bytes, e);
	/* the per-tool directories stay (they are mount sources); their contents go */
	for (size_t i = 0; toolcaches[i].name; i++) {
		_cleanup_close_ int sub = openat(fd, toolcaches[i].name,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		_cleanup_free_ char *shown = path_join(dir, toolcaches[i].name);
		if (walk(sub, shown, true, bytes, e) < 0)
			return -1;
	}
	return 0;
}

int toolprep_cache_size(const char *state_dir, uint64_t *bytes, struct err *e)
{
	return cache_walk(state_dir, false, bytes, e);
}

int toolprep_cache_clean(const char *state_dir, uint64_t *freed, struct err *e)
{
	return cache_walk(state_dir, true, freed, e);
}
