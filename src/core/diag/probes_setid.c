/* probes, category "setid": no call may set a setuid or setgid bit from inside. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Setuid and setgid bits: no call may set them from inside (issue 10, item 4). Each probe works
 * on a file of its own in the jail's scratch directory and removes it.                    */

enum setid_how { SETID_CHMOD, SETID_FCHMODAT, SETID_OPEN, SETID_MKNOD };

static long setid_call(enum setid_how how, const char *path, mode_t mode)
{
	switch (how) {
	case SETID_CHMOD:
		return chmod(path, mode);
	case SETID_FCHMODAT:
		return fchmodat(AT_FDCWD, path, mode, 0);
	case SETID_OPEN: {
		int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd >= 0)
			(void)close(fd);
		return fd;
	}
	case SETID_MKNOD:
		return mknod(path, S_IFREG | mode, 0);
	}
	errno = EINVAL;
	return -1;
}

/* PASS when the call is refused or the bit does not stick; FAIL when a file with it exists. */
static void judge_setid(const struct probe_ctx *c, struct probe_out *o, enum setid_how how,
			const char *what, mode_t mode)
{
	if (!c->scratch) {
		pr_set(o, PROBE_SKIP, "no writable temporary directory in the jail");
		return;
	}
	_cleanup_free_ char *p = xasprintf("%s/." BAIT_PREFIX "setid-%s", c->scratch,
					   c->token ? c->token : "probe");
	(void)unlink(p);
	if (how == SETID_CHMOD || how == SETID_FCHMODAT) {
		int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0700);
		if (fd < 0) {
			pr_set(o, PROBE_SKIP, "cannot create a file in %s: %s", c->scratch, pr_ename(errno));
			return;
		}
		(void)close(fd);
	}
	long rc = setid_call(how, p, mode);
	int err = errno;
	struct stat st;
	bool stuck = rc >= 0 && lstat(p, &st) == 0 && (st.st_mode & mode & (S_ISUID | S_ISGID));
	(void)unlink(p);
	if (stuck)
		pr_set(o, PROBE_FAIL, "%s made a file with mode %04o", what, (unsigned)(st.st_mode & 07777));
	else if (rc >= 0)
		pr_set(o, PROBE_PASS, "%s succeeded but the bit was dropped", what);
	else
		pr_set(o, PROBE_PASS, "%s: %s", what, pr_ename(err));
}

void p_setid_chmod(const struct probe_ctx *c, struct probe_out *o)
{
	judge_setid(c, o, SETID_CHMOD, "chmod(04755)", 04755);
}

void p_setid_fchmodat(const struct probe_ctx *c, struct probe_out *o)
{
	judge_setid(c, o, SETID_FCHMODAT, "fchmodat(02755)", 02755);
}

void p_setid_open(const struct probe_ctx *c, struct probe_out *o)
{
	judge_setid(c, o, SETID_OPEN, "open(O_CREAT, 04755)", 04755);
}

void p_setid_mknod(const struct probe_ctx *c, struct probe_out *o)
{
	judge_setid(c, o, SETID_MKNOD, "mknod(S_IFREG|04755)", 04755);
}

