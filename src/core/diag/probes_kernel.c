/* probes, category "kernel": the kernel's attack surface (keys, bpf, perf, userfaultfd,
 * io_uring, personality, handles, modules, kexec, vsock, syslog). */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Kernel attack surface                                                                   */

void p_keyctl(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	pr_judge(o, "keyctl(GET_KEYRING_ID)", rc, errno, false);
}

void p_add_key(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	/* into the probe's own process keyring, which ends with it */
	long rc = syscall(SYS_add_key, "user", BAIT_PREFIX "key", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	pr_judge(o, "add_key", rc, errno, false);
}

void p_request_key(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_request_key, "user", BAIT_PREFIX "no-such-key", NULL, 0);
	pr_judge(o, "request_key", rc, errno, false);
}

void p_bpf(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	pr_judge(o, "bpf(BPF_MAP_CREATE)", fd, err, false);
}

void p_perf_event_open(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof a;
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0UL);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	pr_judge(o, "perf_event_open", fd, err, false);
}

void p_userfaultfd(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	pr_judge(o, "userfaultfd", fd, err, false);
}

/* struct io_uring_params is 120 bytes; zeroed means "defaults". */
void p_io_uring(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	uint8_t params[120] = {0};
	long fd = syscall(SYS_io_uring_setup, 1, params);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	pr_judge(o, "io_uring_setup", fd, err, false);
}

void p_personality(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = personality(PER_LINUX | ADDR_NO_RANDOMIZE);
	int err = errno;
	if (rc != -1 && (personality(0xffffffff) & ADDR_NO_RANDOMIZE))
		pr_set(o, PROBE_FAIL,
		    "personality(ADDR_NO_RANDOMIZE) accepted: address space "
		    "randomization can be turned off");
	else
		pr_set(o, PROBE_PASS, "personality(ADDR_NO_RANDOMIZE): %s",
		    rc == -1 ? pr_ename(err) : "not applied");
}

/* name_to_handle_at / open_by_handle_at reach any inode of a file system by number, past the
 * mounts that hide it (the "shocker" escape). */
void p_open_by_handle(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	memset(&h, 0, sizeof h);
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	int mount_id;
	long nr = name_to_handle_at(AT_FDCWD, "/", &h.fh, &mount_id, 0);
	int nerr = errno;
	if (nr < 0) { /* a made-up handle still reaches the call */
		h.fh.handle_bytes = 8;
		h.fh.handle_type = 1;
	}
	int mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC);
	int err = errno;
	if (fd >= 0) {
		(void)close((int)fd);
		pr_set(o, PROBE_FAIL, "open_by_handle_at opened \"/\" by its handle");
		return;
	}
	if (err == EPERM || err == EACCES)
		pr_set(o, PROBE_PASS, "open_by_handle_at: %s (name_to_handle_at: %s)", pr_ename(err),
		    nr < 0 ? pr_ename(nerr) : "ok");
	else
		pr_judge(o, "open_by_handle_at", -1, err, false);
}

void p_init_module(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_init_module, NULL, 0UL, ""); /* an empty image: ENOEXEC at worst */
	pr_judge(o, "init_module", rc, errno, false);
}

void p_finit_module(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_finit_module, -1, "", 0);
	pr_judge(o, "finit_module", rc, errno, false);
}

void p_kexec_load(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	/* 17 segments is one more than the kernel accepts: EINVAL right after the permission
	 * check (0 segments would unload a loaded kexec image) */
	long rc = syscall(SYS_kexec_load, 0UL, 17UL, NULL, 0UL);
	pr_judge(o, "kexec_load", rc, errno, false);
}

void p_af_vsock(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	/* created only, never connected: the host's vsock services are not touched */
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = errno;
	if (fd >= 0) {
		(void)close(fd);
		pr_set(o, PROBE_FAIL, "socket(AF_VSOCK) created: a channel to the hypervisor's host");
	} else if (err == EAFNOSUPPORT || err == EPERM || err == EACCES) {
		pr_set(o, PROBE_PASS, "socket(AF_VSOCK): %s", pr_ename(err));
	} else {
		pr_set(o, PROBE_FAIL, "socket(AF_VSOCK) reached the kernel (%s)", pr_ename(err));
	}
}

void p_syslog(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	pr_judge(o, "syslog(SIZE_BUFFER)", rc, errno, false);
}

