/* probes, category "ptrace": a child, the jail's PID 1 and its memory. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* ptrace                                                                                  */

/* What a child probe should see: denied by default, working under --allow-ptrace. */
static void judge_policy(const struct probe_ctx *c, struct probe_out *o, const char *what,
			 bool works, int err)
{
	if (works && c->allow_ptrace)
		pr_set(o, PROBE_PASS, "%s works, as --allow-ptrace says", what);
	else if (works)
		pr_set(o, PROBE_FAIL, "%s works", what);
	else if (c->allow_ptrace)
		pr_set(o, PROBE_FAIL, "%s fails (%s) although --allow-ptrace is set", what,
		    pr_ename(err));
	else
		pr_set(o, PROBE_PASS, "%s: %s", what, pr_ename(err));
}

static bool attach_detach(pid_t pid, int *err)
{
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0) {
		*err = errno;
		return false;
	}
	int ws;
	while (waitpid(pid, &ws, __WALL) < 0 && errno == EINTR)
		;
	(void)ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return true;
}

void p_ptrace_child(const struct probe_ctx *c, struct probe_out *o)
{
	pid_t pid = pr_spawn_sleeper();
	if (pid < 0) {
		pr_set(o, PROBE_SKIP, "cannot fork: %s", pr_ename(errno));
		return;
	}
	int err = 0;
	bool works = attach_detach(pid, &err);
	pr_reap(pid);
	judge_policy(c, o, "PTRACE_ATTACH to a child", works, err);
}

static volatile uint64_t vm_marker = 0x616a2d7665726966ULL;

void p_vm_readv_child(const struct probe_ctx *c, struct probe_out *o)
{
	pid_t pid = pr_spawn_sleeper();
	if (pid < 0) {
		pr_set(o, PROBE_SKIP, "cannot fork: %s", pr_ename(errno));
		return;
	}
	uint64_t got = 0;
	struct iovec l = {&got, sizeof got}, r = {(void *)&vm_marker, sizeof got};
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	int err = errno;
	pr_reap(pid);
	judge_policy(c, o, "process_vm_readv of a child",
		     n == (ssize_t)sizeof got && got == vm_marker, err);
}

/* PID 1 is touched only when it is a jail's own init (ours, or bwrap's): never a host's. */
static bool pid1_touchable(struct probe_out *o, char *comm, size_t n)
{
	char argv0[256];
	pr_proc_names(1, argv0, sizeof argv0, comm, n);
	if (!strcmp(argv0, BW_INIT_PATH) || !strcmp(comm, "bwrap"))
		return true;
	pr_set(o, PROBE_SKIP, "PID 1 is %s, not a jail's init: not touched (see pid.init)",
	    comm[0] ? comm : "unreadable");
	return false;
}

void p_ptrace_pid1(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char comm[32];
	if (!pid1_touchable(o, comm, sizeof comm))
		return;
	int err = 0;
	if (attach_detach(1, &err))
		pr_set(o, PROBE_FAIL, "PTRACE_ATTACH to PID 1 (%s) works", comm);
	else
		pr_set(o, PROBE_PASS, "PTRACE_ATTACH to PID 1 (%s): %s", comm, pr_ename(err));
}

/* Address 0 is never mapped: EFAULT means the permission check passed, and nothing is read. */
void p_vm_readv_pid1(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char comm[32];
	if (!pid1_touchable(o, comm, sizeof comm))
		return;
	char b;
	struct iovec l = {&b, 1}, r = {NULL, 1};
	ssize_t n = process_vm_readv(1, &l, 1, &r, 1, 0);
	int err = errno;
	if (n >= 0 || err == EFAULT)
		pr_set(o, PROBE_FAIL, "process_vm_readv of PID 1 (%s) passes the permission check",
		    comm);
	else
		pr_set(o, PROBE_PASS, "process_vm_readv of PID 1 (%s): %s", comm, pr_ename(err));
}

/* /proc/1/mem is ptrace by another door: opening it (nothing is read) needs the same right. */
void p_pid1_mem(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char comm[32];
	if (!pid1_touchable(o, comm, sizeof comm))
		return;
	int fd = open("/proc/1/mem", O_RDONLY | O_CLOEXEC);
	int err = errno;
	if (fd >= 0) {
		(void)close(fd);
		pr_set(o, PROBE_FAIL,
		    "/proc/1/mem of PID 1 (%s) opens: its memory can be read and "
		    "written (nothing was read)",
		    comm);
	} else {
		pr_set(o, PROBE_PASS, "/proc/1/mem of PID 1 (%s): %s", comm, pr_ename(err));
	}
}

