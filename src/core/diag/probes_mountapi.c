/* probes, category "mount-api": mount, umount2, pivot_root and the new mount API. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* The mount API. Arguments are chosen so that a call that gets past the permission checks
 * fails right after (a missing path, a bad fd, an unknown tmpfs option): nothing is ever
 * mounted, even where nothing refuses the call.                                           */

#define NO_PATH "/nonexistent-agentjail-verify"

/* A directory of our own that is not a mount point (never "/": unmounting the root remounts
 * its superblock read-only, the host's included). */
bool pr_scratch_target(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->scratch)
		return true;
	pr_set(o, PROBE_SKIP, "no temporary directory of our own to aim the call at");
	return false;
}

void p_mount(const struct probe_ctx *c, struct probe_out *o)
{
	if (!pr_scratch_target(c, o))
		return;
	long rc = mount("none", c->scratch, "tmpfs", MS_NOSUID, "agentjail_verify_no_such_option");
	pr_judge(o, "mount(tmpfs)", rc, errno, false);
}

void p_umount2(const struct probe_ctx *c, struct probe_out *o)
{
	if (!pr_scratch_target(c, o))
		return;
	long rc = umount2(c->scratch, 0); /* not a mount point: EINVAL past the checks */
	pr_judge(o, "umount2", rc, errno, false);
}

void p_pivot_root(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_pivot_root, NO_PATH "-a", NO_PATH "-b");
	pr_judge(o, "pivot_root", rc, errno, false);
}

void p_open_tree(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long fd = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	pr_judge(o, "open_tree(OPEN_TREE_CLONE)", fd, err, true);
}

void p_move_mount(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_move_mount, -1, "", AT_FDCWD, NO_PATH, MOVE_MOUNT_F_EMPTY_PATH);
	pr_judge(o, "move_mount", rc, errno, true);
}

void p_fsopen(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long fd = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	pr_judge(o, "fsopen(tmpfs)", fd, err, true);
}

void p_fsconfig(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_fsconfig, -1, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	pr_judge(o, "fsconfig", rc, errno, true);
}

void p_fsmount(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_fsmount, -1, FSMOUNT_CLOEXEC, 0);
	pr_judge(o, "fsmount", rc, errno, true);
}

void p_fspick(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_fspick, AT_FDCWD, NO_PATH, FSPICK_CLOEXEC);
	pr_judge(o, "fspick", rc, errno, true);
}

void p_mount_setattr(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	/* with nothing to change the kernel returns 0 before looking: ask for read-only */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
	long rc = syscall(SYS_mount_setattr, AT_FDCWD, NO_PATH, 0, &attr, sizeof attr);
	pr_judge(o, "mount_setattr", rc, errno, true);
}

