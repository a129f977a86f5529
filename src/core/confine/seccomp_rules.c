/* seccomp_rules: the jail's syscall filter as rules for libseccomp (doc/design.md §3).
 *
 * The filter is an allow-by-default list of refusals. Every refusal returns an errno rather than
 * killing, so programs that probe a feature (clone3, the new mount API, exotic socket families)
 * fall back gracefully; only a foreign architecture is killed, because its syscall numbers mean
 * something else and would slip past every rule written for the native table.
 *
 * Not on a run's path: tools/seccomp_gen.c runs this once at build time and writes the programs
 * into the binary (core/confine/seccomp.c loads them), and tests/unit/test_seccomp.c checks that
 * what the binary holds is what this module generates. */
#include "core/confine/seccomp_rules.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>

#include "util/cleanup.h"
#include "util/xalloc.h"

/* clone(2) takes its flags as the first argument everywhere but s390, where the stack comes
 * first. */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

/* x32 syscalls are x86_64 syscalls with this bit set in the number (same AUDIT_ARCH). */
#define X32_SYSCALL_BIT 0x40000000u

enum sc_flags {
	OPTIONAL = 0,
	/* A required syscall that libseccomp cannot resolve fails the build: without it the jail
	 * would silently lose an essential refusal. Optional ones are skipped (older libseccomp,
	 * or a call the architecture does not have, e.g. modify_ldt on aarch64). */
	REQUIRED = 1,
	/* The errno is part of the interface, not a refusal: a test build keeps it (see
	 * act_errno). */
	FIXED = 2,
};

struct sc_rule {
	const char *name;
	int errnum;
	unsigned flags; /* enum sc_flags */
};

/* Refused unconditionally. */
/* clang-format off */
static const struct sc_rule deny_rules[] = {
	/* Namespaces and mounts: the jail's view of the system is bwrap's to set up, not its
	 * tenant's. */
	{"unshare", EPERM, REQUIRED},
	{"setns", EPERM, REQUIRED},
	{"mount", EPERM, REQUIRED},
	{"umount2", EPERM, REQUIRED},
	{"umount", EPERM, OPTIONAL},
	{"pivot_root", EPERM, REQUIRED},
	{"chroot", EPERM, REQUIRED},
	/* ENOSYS, not EPERM: libc treats ENOSYS from clone3 as "old kernel" and falls back to
	 * clone, whose flags we can inspect (clone3 passes them in memory, out of our reach).
	 * clone3 is required because it could otherwise create namespaces unseen, and fixed
	 * because a test build answering its distinctive errno here would break every
	 * pthread_create and posix_spawn in the jail. */
	{"clone3", ENOSYS, REQUIRED | FIXED},
	{"open_tree", ENOSYS, OPTIONAL},
	{"open_tree_attr", ENOSYS, OPTIONAL},
	{"move_mount", ENOSYS, OPTIONAL},
	{"fsopen", ENOSYS, OPTIONAL},
	{"fsconfig", ENOSYS, OPTIONAL},
	{"fsmount", ENOSYS, OPTIONAL},
	{"fspick", ENOSYS, OPTIONAL},
	{"mount_setattr", ENOSYS, OPTIONAL},
	/* Kernel keyrings are not namespaced per jail. */
	{"keyctl", EPERM, OPTIONAL},
	{"add_key", EPERM, OPTIONAL},
	{"request_key", EPERM, OPTIONAL},
	/* Large kernel attack surface with little use for an agent. io_uring also creates
	 * sockets without socket(), which would bypass the family check below. */
	{"bpf", EPERM, OPTIONAL},
	{"perf_event_open", EPERM, OPTIONAL},
	{"userfaultfd", EPERM, OPTIONAL},
	{"io_uring_setup", EPERM, OPTIONAL},
	{"io_uring_enter", EPERM, OPTIONAL},
	{"io_uring_register", EPERM, OPTIONAL},
	/* Host administration. */
	{"kexec_load", EPERM, OPTIONAL},
	{"kexec_file_load", EPERM, OPTIONAL},
	{"init_module", EPERM, OPTIONAL},
	{"finit_module", EPERM, OPTIONAL},
	{"delete_module", EPERM, OPTIONAL},
	{"reboot", EPERM, OPTIONAL},
	{"swapon", EPERM, OPTIONAL},
	{"swapoff", EPERM, OPTIONAL},
	{"syslog", EPERM, OPTIONAL},
	{"acct", EPERM, OPTIONAL},
	{"quotactl", EPERM, OPTIONAL},
	{"quotactl_fd", EPERM, OPTIONAL},
	{"sethostname", EPERM, OPTIONAL},
	{"setdomainname", EPERM, OPTIONAL},
	/* x86 legacy hardware access (absent elsewhere, hence optional). */
	{"modify_ldt", EPERM, OPTIONAL},
	{"iopl", EPERM, OPTIONAL},
	{"ioperm", EPERM, OPTIONAL},
	/* File handles bypass path-based confinement (the "shocker" escape). */
	{"open_by_handle_at", EPERM, OPTIONAL},
	{"name_to_handle_at", EPERM, OPTIONAL},
	/* Setting the clock changes it for the whole host. */
	{"settimeofday", EPERM, OPTIONAL},
	{"clock_settime", EPERM, OPTIONAL},
	{"clock_adjtime", EPERM, OPTIONAL},
	{"adjtimex", EPERM, OPTIONAL},
	{"stime", EPERM, OPTIONAL},
	/* NUMA memory policy: can move other processes' pages and pin host memory placement.
	 * get_mempolicy only reads and stays allowed. */
	{"mbind", EPERM, OPTIONAL},
	{"set_mempolicy", EPERM, OPTIONAL},
	{"set_mempolicy_home_node", EPERM, OPTIONAL},
	{"migrate_pages", EPERM, OPTIONAL},
	{"move_pages", EPERM, OPTIONAL},
};
/* clang-format on */

/* Refused unless the profile allows debugging. */
/* clang-format off */
static const struct sc_rule ptrace_rules[] = {
	{"ptrace", EPERM, REQUIRED},
	{"process_vm_readv", EPERM, OPTIONAL},
	{"process_vm_writev", EPERM, OPTIONAL},
};
/* clang-format on */

/* Namespace flags refused in clone(2). CLONE_NEWTIME (0x80) is deliberately absent: clone(2)
 * keeps the exit signal in the low byte of its flags (CSIGNAL), so that bit is a signal number
 * there, not a namespace request, and clone(2) cannot create a time namespace at all (only
 * unshare and clone3 can, and both are refused outright). */
/* clang-format off */
static const unsigned long clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
	CLONE_NEWCGROUP,
};
/* clang-format on */

/* Socket families a coding agent needs; every other one answers EAFNOSUPPORT, which programs
 * already handle ("this kernel has no such family"). Sorted. */
static const int socket_families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};

/* A full comparison (clang warns about the two-field initialiser in libseccomp's SCMP_A0). */
static struct scmp_arg_cmp cmp(unsigned arg, enum scmp_compare op, scmp_datum_t a, scmp_datum_t b)
{
	return (struct scmp_arg_cmp){.arg = arg, .op = op, .datum_a = a, .datum_b = b};
}

static void ctx_releasep(scmp_filter_ctx *c)
{
	if (*c)
		seccomp_release(*c);
}
#define _cleanup_scmp_ _cleanup_(ctx_releasep)

/* The action for a refusal. The test build's variant of the filter swaps the errno for a
 * distinctive one so a test can tell this filter's answer from the kernel's or another layer's
 * (doc/design.md §3); rules marked FIXED keep theirs. */
static uint32_t act_errno(const struct sc_rules_opts *o, int errnum)
{
	if (o->errno_override > 0)
		errnum = o->errno_override;
	return SCMP_ACT_ERRNO((uint32_t)errnum);
}

static int check_opts(const struct sc_rules_opts *o, struct err *e)
{
	/* The kernel clamps SECCOMP_RET_ERRNO data to MAX_ERRNO (4095), which libseccomp refuses. */
	if (o->errno_override < 0 || o->errno_override > 4094)
		return err_set(e, EINVAL, NULL, "seccomp errno override %d is out of range 1..4094",
		               o->errno_override);
	return 0;
}

/* Resolve a syscall name for the native architecture. *nr < 0 means "not on this arch". */
static int resolve(const char *name, bool required, int *nr, struct err *e)
{
	/* libseccomp answers __NR_SCMP_ERROR for names it does not know and a negative
	 * pseudo-number for calls that exist only on other architectures. */
	*nr = seccomp_syscall_resolve_name(name);
	if (*nr >= 0 || !required)
		return 0;
	err_set(e, ENOSYS, name, "libseccomp cannot resolve an essential syscall");
	err_hint(e, "upgrade libseccomp; the jail cannot be made safe without this rule");
	return -1;
}

static int rule_failed(struct err *e, int rc, const char *name)
{
	return err_set(e, -rc, name, "cannot add seccomp rule");
}

static int add_unconditional(scmp_filter_ctx ctx, const struct sc_rules_opts *o,
                             const struct sc_rule *rules, size_t n, struct err *e)
{
	for (size_t i = 0; i < n; i++) {
		int nr;
		if (resolve(rules[i].name, rules[i].flags & REQUIRED, &nr, e) < 0)
			return -1;
		if (nr < 0)
			continue;
		uint32_t act = (rules[i].flags & FIXED) ? SCMP_ACT_ERRNO((uint32_t)rules[i].errnum)
		                                        : act_errno(o, rules[i].errnum);
		int rc = seccomp_rule_add(ctx, act, nr, 0);
		if (rc < 0)
			return rule_failed(e, rc, rules[i].name);
	}
	return 0;
}

/* libseccomp accepts one comparison per argument in a rule, and rules for a syscall are OR-ed,
 * so "flags has any namespace bit" is one rule per bit. */
static int add_clone_rules(scmp_filter_ctx ctx, const struct sc_rules_opts *o, struct err *e)
{
	int nr;
	if (resolve("clone", true, &nr, e) < 0)
		return -1;
	for (size_t i = 0; i < sizeof clone_ns_flags / sizeof clone_ns_flags[0]; i++) {
		scmp_datum_t f = clone_ns_flags[i];
		int rc = seccomp_rule_add(ctx, act_errno(o, EPERM), nr, 1,
		                          cmp(CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ, f, f));
		if (rc < 0)
			return rule_failed(e, rc, "clone");
	}
	return 0;
}

/* TIOCSTI pushes input into a terminal (typing commands into the user's shell outside the
 * jail); TIOCLINUX can do the same on a virtual console. The kernel takes the request as an
 * unsigned int, so only the low 32 bits are compared: 0x100000000|TIOCSTI is TIOCSTI. */
static int add_ioctl_rules(scmp_filter_ctx ctx, const struct sc_rules_opts *o, struct err *e)
{
	static const scmp_datum_t reqs[] = {TIOCSTI, TIOCLINUX};
	int nr;
	if (resolve("ioctl", true, &nr, e) < 0)
		return -1;
	for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
		int rc = seccomp_rule_add(ctx, act_errno(o, EPERM), nr, 1,
		                          cmp(1, SCMP_CMP_MASKED_EQ, 0xffffffffu, reqs[i]));
		if (rc < 0)
			return rule_failed(e, rc, "ioctl");
	}
	return 0;
}

/* personality(2) is allowed only as the query (0xffffffff) or to set the default (PER_LINUX,
 * 0); anything else (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ...) weakens the process.
 *
 * The kernel reads the argument as an unsigned int, so the test is on its low 32 bits:
 * allowed iff those bits are all equal. libseccomp has no "not equal under a mask", and one
 * comparison per argument per rule, so the refusal is spelled as: some pair of adjacent bits
 * k, k+1 differs, i.e. (v & 3<<k) is 1<<k or 2<<k, for k in 0..30 (62 one-comparison rules). */
static int add_personality_rules(scmp_filter_ctx ctx, const struct sc_rules_opts *o, struct err *e)
{
	int nr;
	if (resolve("personality", true, &nr, e) < 0)
		return -1;
	for (unsigned k = 0; k < 31; k++) {
		scmp_datum_t mask = (scmp_datum_t)3 << k;
		for (scmp_datum_t d = 1; d <= 2; d++) {
			int rc = seccomp_rule_add(ctx, act_errno(o, EPERM), nr, 1,
			                          cmp(0, SCMP_CMP_MASKED_EQ, mask, d << k));
			if (rc < 0)
				return rule_failed(e, rc, "personality");
		}
	}
	return 0;
}

/* No setuid or setgid bit can be set from inside (issue 10, item 4): agentjail may run as root,
 * and a setuid-root file left in the workspace makes any local user who reaches it root. Every
 * call that takes a mode and applies it to a file is refused (EPERM) when the mode has S_ISUID or
 * S_ISGID:
 *  - chmod, fchmod, fchmodat, fchmodat2: the mode is applied as given;
 *  - creat, mknod, mknodat (mknod makes regular files too): the new file gets the mode;
 *  - open, openat: only with O_CREAT or O_TMPFILE, the only cases where the mode is used (glibc
 *    and musl pass 0 otherwise, but a raw syscall may leave garbage there: it must not fail).
 * Not filtered: mkdir/mkdirat, whose mode loses both bits in the kernel (a directory inherits
 * S_ISGID from its parent only, and it grants nothing); openat2, which is answered ENOSYS (its
 * mode is inside a struct, out of reach) so libc falls back to openat. The same goes for
 * setxattr of security.capability (file capabilities): seccomp cannot compare the name, but the
 * jail has no capability at all and the kernel requires CAP_SETFCAP for it. A setuid file made
 * any other way is stripped and reported after the run (core/jail/suidscan). Directories lose the
 * ability to get `chmod g+s` too: seccomp cannot tell a directory from a file. */
#ifndef SYS_fchmodat2_NR
#define SYS_fchmodat2_NR 452 /* the same number on every architecture (asm-generic table) */
#endif

struct mode_rule {
	const char *name;  /* NULL: use nr */
	int nr;
	unsigned mode_arg; /* index of the mode argument */
	int flags_arg;     /* index of the open flags argument, or -1 */
	unsigned flags;    /* enum sc_flags */
};

/* clang-format off */
static const struct mode_rule setid_rules[] = {
	{"chmod",     -1, 1, -1, OPTIONAL},
	{"fchmod",    -1, 1, -1, REQUIRED},
	{"fchmodat",  -1, 2, -1, REQUIRED},
	{NULL, SYS_fchmodat2_NR, 2, -1, OPTIONAL},
	{"creat",     -1, 1, -1, OPTIONAL},
	{"mknod",     -1, 1, -1, OPTIONAL},
	{"mknodat",   -1, 2, -1, REQUIRED},
	{"open",      -1, 2,  1, OPTIONAL},
	{"openat",    -1, 3,  2, REQUIRED},
};
/* clang-format on */

static int add_setid_rules(scmp_filter_ctx ctx, const struct sc_rules_opts *o, struct err *e)
{
	static const scmp_datum_t bits[] = {S_ISUID, S_ISGID};
	/* O_TMPFILE includes O_DIRECTORY: test its own bit, which only O_TMPFILE sets */
	static const scmp_datum_t creates[] = {O_CREAT, O_TMPFILE & ~O_DIRECTORY};
	for (size_t i = 0; i < sizeof setid_rules / sizeof setid_rules[0]; i++) {
		const struct mode_rule *r = &setid_rules[i];
		const char *shown = r->name ? r->name : "fchmodat2";
		int nr = r->nr;
		if (r->name && resolve(r->name, r->flags & REQUIRED, &nr, e) < 0)
			return -1;
		if (nr < 0)
			continue;
		for (size_t b = 0; b < sizeof bits / sizeof bits[0]; b++) {
			struct scmp_arg_cmp m = cmp(r->mode_arg, SCMP_CMP_MASKED_EQ, bits[b], bits[b]);
			if (r->flags_arg < 0) {
				int rc = seccomp_rule_add(ctx, act_errno(o, EPERM), nr, 1, m);
				if (rc < 0)
					return rule_failed(e, rc, shown);
				continue;
			}
			for (size_t c = 0; c < sizeof creates / sizeof creates[0]; c++) {
				struct scmp_arg_cmp f = cmp((unsigned)r->flags_arg, SCMP_CMP_MASKED_EQ,
							    creates[c], creates[c]);
				int rc = seccomp_rule_add(ctx, act_errno(o, EPERM), nr, 2, f, m);
				if (rc < 0)
					return rule_failed(e, rc, shown);
			}
		}
	}
	/* ENOSYS: libc's "old kernel" answer, after which it uses openat (filtered above). Fixed
	 * like clone3's: a test build's errno here would break that fallback. */
	int nr;
	if (resolve("openat2", false, &nr, e) < 0)
		return -1;
	if (nr >= 0) {
		int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
		if (rc < 0)
			return rule_failed(e, rc, "openat2");
	}
	return 0;
}

static bool family_allowed(int fam)
{
	for (size_t i = 0; i < sizeof socket_families / sizeof socket_families[0]; i++)
		if (socket_families[i] == fam)
			return true;
	return false;
}

/* socket(2): every family outside the allowed set is refused, as "family > highest allowed"
 * plus one equality rule per gap below it (libseccomp cannot say "not in set" in one rule).
 * The comparison is on all 64 bits, which is stricter than the kernel's int: a family with
 * high garbage bits is refused even if its low half is allowed. */
static int add_socket_rules(scmp_filter_ctx ctx, const struct sc_rules_opts *o, struct err *e)
{
	const size_t n = sizeof socket_families / sizeof socket_families[0];
	const int highest = socket_families[n - 1];
	uint32_t act = act_errno(o, EAFNOSUPPORT);
	int nr;
	if (resolve("socket", true, &nr, e) < 0)
		return -1;
	int rc = seccomp_rule_add(ctx, act, nr, 1, cmp(0, SCMP_CMP_GT, (scmp_datum_t)highest, 0));
	for (int fam = 0; rc == 0 && fam < highest; fam++)
		if (!family_allowed(fam))
			rc = seccomp_rule_add(ctx, act, nr, 1,
			                      cmp(0, SCMP_CMP_EQ, (scmp_datum_t)fam, 0));
	if (rc < 0)
		return rule_failed(e, rc, "socket");

	/* socketpair only ever makes sense for AF_UNIX. */
	if (resolve("socketpair", true, &nr, e) < 0)
		return -1;
	rc = seccomp_rule_add(ctx, act, nr, 1, cmp(0, SCMP_CMP_NE, AF_UNIX, 0));
	if (rc < 0)
		return rule_failed(e, rc, "socketpair");
	return 0;
}

static int set_attrs(scmp_filter_ctx ctx, struct err *e)
{
	/* A foreign architecture (i386 `int 0x80` on x86_64, arm32 on aarch64) has its own
	 * syscall numbers; none of the rules apply to it, so the process dies instead. */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0)
		return err_set(e, -rc, NULL, "cannot set the seccomp bad-architecture action");
	/* no_new_privs is the caller's business (bwrap sets it; tests set it explicitly). */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc < 0)
		return err_set(e, -rc, NULL, "cannot clear the seccomp no_new_privs attribute");
	/* Report the kernel's own errno from seccomp_load rather than ECANCELED. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	if (rc < 0)
		return err_set(e, -rc, NULL, "cannot set the seccomp raw-errno attribute");
	return 0;
}

/* x32 shares AUDIT_ARCH_X86_64 and differs only by X32_SYSCALL_BIT in the number, so the
 * bad-arch check cannot catch it, and libseccomp's own x86_64 program kills such calls. The
 * design asks for ENOSYS (an x32 binary fails as on a kernel without x32). Giving libseccomp an
 * x32 section with ~350 ENOSYS rules costs ~3.5 ms per build (more than half of a jail's start),
 * so instead five instructions of our own go in front of libseccomp's program: on x86_64, a
 * number with the x32 bit returns ENOSYS; everything else falls through unchanged. */
static size_t x32_prefix(const struct sc_rules_opts *o, struct sock_filter *out)
{
#if defined(__x86_64__)
	uint32_t err = act_errno(o, ENOSYS); /* the kernel's SECCOMP_RET_ERRNO encoding */
	const struct sock_filter prefix[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_SYSCALL_BIT, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, err),
	};
	memcpy(out, prefix, sizeof prefix);
	return sizeof prefix / sizeof prefix[0];
#else
	(void)o;
	(void)out;
	return 0;
#endif
}

static int build_ctx(const struct sc_rules_opts *o, scmp_filter_ctx *out, struct err *e)
{
	_cleanup_scmp_ scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return err_set(e, ENOMEM, NULL, "cannot create the seccomp filter");
	if (check_opts(o, e) < 0 || set_attrs(ctx, e) < 0)
		return -1;
	if (add_unconditional(ctx, o, deny_rules, sizeof deny_rules / sizeof deny_rules[0], e) < 0)
		return -1;
	if (!o->allow_ptrace &&
	    add_unconditional(ctx, o, ptrace_rules, sizeof ptrace_rules / sizeof ptrace_rules[0],
	                      e) < 0)
		return -1;
	if (add_clone_rules(ctx, o, e) < 0 || add_ioctl_rules(ctx, o, e) < 0 ||
	    add_personality_rules(ctx, o, e) < 0 || add_socket_rules(ctx, o, e) < 0 ||
	    add_setid_rules(ctx, o, e) < 0)
		return -1;
	/* With 62 personality rules, a binary tree over syscall numbers keeps each call's path
	 * through the filter short. */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0)
		return err_set(e, -rc, NULL, "cannot enable seccomp filter optimisation");
	*out = steal_pointer(&ctx);
	return 0;
}

int seccomp_rules_program(const struct sc_rules_opts *o, struct sock_filter **prog, size_t *len,
			 struct err *e)
{
	_cleanup_scmp_ scmp_filter_ctx ctx = NULL;
	if (build_ctx(o, &ctx, e) < 0)
		return -1;
	_cleanup_close_ int tmp = memfd_create("agentjail-seccomp-export", MFD_CLOEXEC);
	if (tmp < 0)
		return err_set(e, errno, NULL, "cannot create a memfd for the seccomp filter");
	int rc = seccomp_export_bpf(ctx, tmp);
	if (rc < 0)
		return err_set(e, -rc, NULL, "cannot export the seccomp filter");
	struct stat st;
	if (fstat(tmp, &st) < 0)
		return err_set(e, errno, NULL, "cannot stat the exported seccomp filter");
	if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) != 0)
		return err_set(e, EIO, NULL, "libseccomp exported a malformed filter");
	size_t n = (size_t)st.st_size / sizeof(struct sock_filter);
	struct sock_filter *p = xcalloc(n + 8, sizeof *p);
	size_t k = x32_prefix(o, p);
	ssize_t got = pread(tmp, p + k, (size_t)st.st_size, 0);
	if (got != (ssize_t)st.st_size) {
		free(p);
		return err_set(e, got < 0 ? errno : EIO, NULL, "cannot read the seccomp filter back");
	}
	*prog = p;
	*len = n + k;
	return 0;
}
