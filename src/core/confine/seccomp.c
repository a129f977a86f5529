/* seccomp: the jail's syscall filter (doc/design.md §3), loaded from the programs compiled into
 * the binary at build time (core/confine/seccomp_prebuilt.h). The rules themselves, and why each
 * is there, are in core/confine/seccomp_rules.c; a run does not call libseccomp. */
#include "core/confine/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

#include "core/confine/seccomp_prebuilt.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

int seccomp_program(bool allow_ptrace, int errno_override, struct sock_filter **prog, size_t *len,
		    struct err *e)
{
	/* The kernel clamps SECCOMP_RET_ERRNO data to MAX_ERRNO (4095), which libseccomp refuses. */
	if (errno_override < 0 || errno_override > 4094)
		return err_set(e, EINVAL, NULL, "seccomp test errno %d is out of range 1..4094",
		               errno_override);
	/* Not distinctive, and libseccomp would then merge refusals the prebuilt program keeps
	 * apart: the rewritten program would differ from libseccomp's for the same rules. */
	if (errno_override == ENOSYS)
		return err_set(e, EINVAL, NULL,
			       "seccomp test errno %d is ENOSYS, which clone3 and openat2 return anyway",
			       errno_override);
	const struct seccomp_prebuilt *pb =
		&seccomp_prebuilt[seccomp_prebuilt_index(allow_ptrace, errno_override > 0)];
	struct sock_filter *p = xcalloc(pb->len, sizeof *p);
	memcpy(p, pb->insns, pb->len * sizeof *p);
	/* The test variant returns the sentinel wherever the test errno goes; nothing else in it
	 * returns that errno (the equality test compares the result with libseccomp's own). */
	const uint32_t sentinel = SECCOMP_RET_ERRNO | SECCOMP_PREBUILT_SENTINEL;
	for (size_t i = 0; errno_override > 0 && i < pb->len; i++)
		if (BPF_CLASS(p[i].code) == BPF_RET && BPF_RVAL(p[i].code) == BPF_K &&
		    p[i].k == sentinel)
			p[i].k = SECCOMP_RET_ERRNO | (uint32_t)errno_override;
	*prog = p;
	*len = pb->len;
	return 0;
}

static const struct seccomp_opts default_opts;

/* A normal build answers with the filter's own errnos whatever test_errno says. */
static int program_for(const struct seccomp_opts *o, struct sock_filter **prog, size_t *len,
		       struct err *e)
{
#ifdef AJ_TEST_BUILD
	return seccomp_program(o->allow_ptrace, o->test_errno, prog, len, e);
#else
	return seccomp_program(o->allow_ptrace, 0, prog, len, e);
#endif
}

/* Write the BPF into an anonymous file and freeze it, so nothing that later sees the fd (bwrap,
 * or anything it leaks to) can change the program between now and the load. */
int seccomp_build_fd(const struct seccomp_opts *o, int *fd_out, struct err *e)
{
	_cleanup_free_ struct sock_filter *prog = NULL;
	size_t len = 0;
	if (program_for(o ? o : &default_opts, &prog, &len, e) < 0)
		return -1;
	_cleanup_close_ int fd = memfd_create("agentjail-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return err_set(e, errno, NULL, "cannot create a memfd for the seccomp filter");
	size_t bytes = len * sizeof *prog;
	if (write(fd, prog, bytes) != (ssize_t)bytes)
		return err_set(e, errno ? errno : EIO, NULL, "cannot write the seccomp filter");
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return err_set(e, errno, NULL, "cannot seal the seccomp filter memfd");
	if (lseek(fd, 0, SEEK_SET) < 0)
		return err_set(e, errno, NULL, "cannot rewind the seccomp filter memfd");
	*fd_out = steal_fd(&fd);
	return 0;
}

int seccomp_load_self(const struct seccomp_opts *o, struct err *e)
{
	_cleanup_free_ struct sock_filter *prog = NULL;
	size_t len = 0;
	if (program_for(o ? o : &default_opts, &prog, &len, e) < 0)
		return -1;
	struct sock_fprog fprog = {.len = (unsigned short)len, .filter = prog};
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) < 0) {
		err_set(e, errno, NULL, "cannot load the seccomp filter");
		if (errno == EACCES)
			err_hint(e, "set no_new_privs first (prctl PR_SET_NO_NEW_PRIVS)");
		return -1;
	}
	return 0;
}
