/* probes, category "namespaces": unshare, clone, clone3, setns, chroot. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Namespaces (each probe runs in a child of its own: a namespace it creates dies with it)  */

static void unshare_probe(struct probe_out *o, int flag, const char *name)
{
	long rc = unshare(flag);
	int err = errno;
	char what[64];
	snprintf(what, sizeof what, "unshare(%s)", name);
	pr_judge_fails(o, what, rc, err);
}

void p_unshare_user(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	unshare_probe(o, CLONE_NEWUSER, "CLONE_NEWUSER");
}

void p_unshare_mnt(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	unshare_probe(o, CLONE_NEWNS, "CLONE_NEWNS");
}

void p_unshare_net(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	unshare_probe(o, CLONE_NEWNET, "CLONE_NEWNET");
}

/* The new process exits at once; the parent reaps it. */
static void judge_clone(struct probe_out *o, const char *what, long pid, int err)
{
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
			;
		pr_set(o, PROBE_FAIL, "%s created a process in a new user namespace", what);
		return;
	}
	pr_set(o, PROBE_PASS, "%s: %s", what, pr_ename(err));
}

void p_clone_newuser(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL,
			   NULL);
	judge_clone(o, "clone(CLONE_NEWUSER)", pid, errno);
}

/* struct clone_args (linux/sched.h, v0: 64 bytes) */
struct clone_args_v0 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

void p_clone3_newuser(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	struct clone_args_v0 ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	judge_clone(o, "clone3(CLONE_NEWUSER)", pid, errno);
}

/* Joining a namespace: our own user namespace (the kernel says EINVAL when it gets that far)
 * and our own mount namespace (which needs CAP_SYS_ADMIN, and then works). */
void p_setns(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	int fu = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	int fm = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fu < 0 || fm < 0) {
		pr_set(o, PROBE_SKIP, "cannot open /proc/self/ns: %s", pr_ename(errno));
		return;
	}
	long ru = setns(fu, CLONE_NEWUSER);
	int eu = errno;
	long rm = setns(fm, CLONE_NEWNS);
	int em = errno;
	if (rm == 0)
		pr_set(o, PROBE_FAIL, "setns(mount namespace) succeeded");
	else if (ru == 0)
		pr_set(o, PROBE_FAIL, "setns(user namespace) succeeded");
	else
		pr_set(o, PROBE_PASS, "setns: user %s, mnt %s", pr_ename(eu), pr_ename(em));
}

void p_chroot(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = chroot("/");
	pr_judge_fails(o, "chroot(\"/\")", rc, errno);
}

