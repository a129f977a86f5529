#include "core/config/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/hex.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

void trust_hash(const void *data, size_t len, char hex[65])
{
	struct sha256 c;
	uint8_t d[32];
	sha256_init(&c);
	sha256_update(&c, data, len);
	sha256_final(&c, d);
	hex_encode(d, sizeof d, hex);
}

static char *store_path(const char *state_dir)
{
	return path_join(state_dir, "trusted");
}

/* The store's lines (none when it does not exist). */
static int read_store(const char *state_dir, struct strv *lines, struct err *e)
{
	_cleanup_free_ char *p = store_path(state_dir);
	_cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return err_set(e, errno, p, "cannot read the trusted-projects file");
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return err_set(e, errno, p, "cannot read the trusted-projects file");
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		err_set(e, 0, p, "the trusted-projects file is not a regular file of yours, "
				 "writable by you alone");
		err_hint(e, "remove it (`rm %s`) and trust your projects again", p);
		return -1;
	}
	struct strbuf b = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		sb_addn(&b, buf, (size_t)n);
	if (n < 0) {
		sb_free(&b);
		return err_set(e, errno, p, "cannot read the trusted-projects file");
	}
	char *s = sb_steal(&b);
	for (char *line = s, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		if (strlen(line) > 66 && line[64] == '\t')
			strv_push(lines, line);
	}
	free(s);
	return 0;
}

static int write_store(const char *state_dir, const struct strv *lines, struct err *e)
{
	_cleanup_free_ char *failed = NULL;
	if (fs_mkdirs(state_dir, 0700, &failed) < 0)
		return err_set(e, errno, failed ? failed : state_dir,
			       "cannot create the state directory");
	_cleanup_free_ char *p = store_path(state_dir);
	_cleanup_free_ char *tmp = xasprintf("%s.%ld.tmp", p, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return err_set(e, errno, tmp, "cannot write the trusted-projects file");
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < lines->n; i++)
		sb_addf(&b, "%s\n", lines->v[i]);
	int rc = fs_write_all(fd, sb_str(&b), strlen(sb_str(&b)));
	sb_free(&b);
	if (rc == 0)
		rc = fsync(fd);
	int err = errno;
	if (close(fd) < 0 && rc == 0) {
		rc = -1;
		err = errno;
	}
	if (rc == 0 && rename(tmp, p) < 0) {
		rc = -1;
		err = errno;
	}
	if (rc < 0) {
		(void)unlink(tmp);
		return err_set(e, err, p, "cannot write the trusted-projects file");
	}
	return 0;
}

int trust_lookup(const char *state_dir, const char *path, const char *hex, bool *trusted,
		 struct err *e)
{
	_cleanup_strv_ struct strv lines = STRV_INIT;
	*trusted = false;
	if (read_store(state_dir, &lines, e) < 0)
		return -1;
	for (size_t i = 0; i < lines.n; i++)
		if (!strncmp(lines.v[i], hex, 64) && !strcmp(lines.v[i] + 65, path))
			*trusted = true;
	return 0;
}

/* lines without the one of path; whether it was there */
static bool drop(struct strv *lines, const char *path)
{
	struct strv keep = STRV_INIT;
	bool found = false;
	for (size_t i = 0; i < lines->n; i++) {
		if (!strcmp(lines->v[i] + 65, path))
			found = true;
		else
			strv_push(&keep, lines->v[i]);
	}
	strv_free(lines);
	*lines = keep;
	return found;
}

int trust_add(const char *state_dir, const char *path, const char *hex, struct err *e)
{
	if (strpbrk(path, "\n\t"))
		return err_set(e, 0, path, "cannot trust a path with a newline or a tab in it");
	_cleanup_strv_ struct strv lines = STRV_INIT;
	if (read_store(state_dir, &lines, e) < 0)
		return -1;
	(void)drop(&lines, path);
	strv_pushf(&lines, "%s\t%s", hex, path);
	return write_store(state_dir, &lines, e);
}

int trust_remove(const char *state_dir, const char *path, struct err *e)
{
	_cleanup_strv_ struct strv lines = STRV_INIT;
	if (read_store(state_dir, &lines, e) < 0)
		return -1;
	if (!drop(&lines, path))
		return 0;
	return write_store(state_dir, &lines, e) < 0 ? -1 : 1;
}

int trust_list(const char *state_dir, struct strv *out, struct err *e)
{
	return read_store(state_dir, out, e);
}
