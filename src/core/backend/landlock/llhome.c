/* llhome: see llhome.h. */
#include "core/backend/landlock/llhome.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"

/* A file larger than this is not written back (a copy of a config file is kilobytes). */
#define LLHOME_WRITEBACK_MAX (64u << 20)

int llhome_make(const struct ll_plan *p, struct err *e)
{
	if (!p->home)
		return 0;
	if (mkdir(p->home, 0700) < 0)
		return err_set(e, errno, p->home, "cannot create the private home");
	for (size_t i = 0; i < p->nents; i++) {
		const struct llp_home_ent *h = &p->ents[i];
		_cleanup_free_ char *at = path_join(p->home, h->rel);
		_cleanup_free_ char *dir = path_dirname(at);
		_cleanup_free_ char *failed = NULL;
		if (fs_mkdirs(dir, 0755, &failed) < 0)
			return err_set(e, errno, failed ? failed : dir,
				       "cannot create a directory of the private home");
		if (h->kind == LLH_DIR ? mkdir(at, 0755) < 0 && errno != EEXIST
				       : symlink(h->target, at) < 0)
			return err_set(e, errno, at, "cannot create this entry of the private home");
	}
	return 0;
}

/* Copy what stands at `from` (a regular file, reached without a symlink) into `to` (opened
 * without following one). 0, or -1 with the reason in notes. */
static int copy_back(const char *from, const char *to, struct strv *notes)
{
	_cleanup_close_ int in = fs_open_nofollow(from, O_RDONLY | O_NONBLOCK);
	struct stat st;
	if (in < 0 || fstat(in, &st) < 0) {
		if (errno != ENOENT && errno != ELOOP)
			strv_pushf(notes, "%s: cannot read it to write it back to %s: %s", from, to,
				   strerror(errno));
		return -1; /* a symlink (ours, or another) or nothing: nothing to write back */
	}
	if (!S_ISREG(st.st_mode)) {
		strv_pushf(notes, "%s: not a regular file; %s keeps what it had", from, to);
		return -1;
	}
	if ((unsigned long long)st.st_size > LLHOME_WRITEBACK_MAX) {
		strv_pushf(notes, "%s: %lld bytes, more than a config file holds; not written back to "
				  "%s",
			   from, (long long)st.st_size, to);
		return -1;
	}
	_cleanup_close_ int out = fs_open_nofollow(to, O_WRONLY | O_TRUNC);
	if (out < 0) {
		strv_pushf(notes, "%s: cannot open it to write back what the command left in its "
				  "place: %s",
			   to, strerror(errno));
		return -1;
	}
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || fs_write_all(out, buf, (size_t)n) < 0) {
			if (n != 0)
				strv_pushf(notes, "%s: writing it back failed half-way: %s", to,
					   strerror(errno));
			return n == 0 ? 0 : -1;
		}
	}
}

void llhome_writeback(const struct ll_plan *p, struct strv *notes)
{
	for (size_t i = 0; p->home && i < p->nents; i++) {
		const struct llp_home_ent *h = &p->ents[i];
		if (!h->writeback)
			continue;
		_cleanup_free_ char *at = path_join(p->home, h->rel);
		(void)copy_back(at, h->target, notes);
	}
}
