/* capfilter: the capture's seccomp program and its installation (see capfilter.h). */
#include "core/confine/capfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#if defined(__x86_64__)
#define CF_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CF_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif
#ifndef TCP_FASTOPEN_NO_COOKIE
#define TCP_FASTOPEN_NO_COOKIE 34
#endif

/* The low 32 bits of argument i (the kernel reads these int arguments from them alone). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

/* A small assembler: jumps name a label (or NEXT, the next instruction), resolved at the end,
 * so the program reads as its logic rather than as counted offsets. */
enum { NEXT = -1, L_FLAGS3, L_FLAGS2, L_ALLOW, L_NOTIFY, L_NOTSUP, L_NOPROTO, L_N };

struct cf_asm {
	struct sock_filter *p;
	size_t n;
	size_t at[L_N];
	struct {
		size_t i;
		int t, f;
	} fix[CAPFILTER_MAX];
	size_t nfix;
};

static void ld(struct cf_asm *a, uint32_t off)
{
	a->p[a->n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, off);
}

static void jump(struct cf_asm *a, uint16_t op, uint32_t k, int t, int f)
{
	a->fix[a->nfix].i = a->n;
	a->fix[a->nfix].t = t;
	a->fix[a->nfix++].f = f;
	a->p[a->n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 0);
}

static void mark(struct cf_asm *a, int l)
{
	a->at[l] = a->n;
}

static void ret(struct cf_asm *a, int l, uint32_t v)
{
	mark(a, l);
	a->p[a->n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, v);
}

/* Jumps only go forward: a label's offset from the instruction after the jump. */
static uint8_t offset(const struct cf_asm *a, size_t from, int l)
{
	return l == NEXT ? 0 : (uint8_t)(a->at[l] - from - 1);
}

size_t capfilter_program(struct sock_filter *out)
{
	return capfilter_program_ret(out, SECCOMP_RET_USER_NOTIF);
}

size_t capfilter_program_ret(struct sock_filter *out, uint32_t on_call)
{
#ifdef CF_ARCH
	struct cf_asm a = {.p = out};
	ld(&a, offsetof(struct seccomp_data, arch));
	jump(&a, BPF_JEQ, CF_ARCH, NEXT, L_ALLOW);
	ld(&a, offsetof(struct seccomp_data, nr));
	jump(&a, BPF_JEQ, __NR_connect, L_NOTIFY, NEXT);
	jump(&a, BPF_JEQ, __NR_listen, L_NOTIFY, NEXT);
	jump(&a, BPF_JEQ, __NR_sendto, L_FLAGS3, NEXT);   /* (fd, buf, len, flags, addr, alen) */
	jump(&a, BPF_JEQ, __NR_sendmmsg, L_FLAGS3, NEXT); /* (fd, vec, n, flags) */
	jump(&a, BPF_JEQ, __NR_sendmsg, L_FLAGS2, NEXT);  /* (fd, msg, flags) */
	jump(&a, BPF_JEQ, __NR_setsockopt, NEXT, L_ALLOW); /* (fd, level, name, val, len) */
	ld(&a, ARG_LO(1));
	jump(&a, BPF_JEQ, IPPROTO_TCP, NEXT, L_ALLOW);
	ld(&a, ARG_LO(2));
	jump(&a, BPF_JEQ, TCP_FASTOPEN_CONNECT, L_NOPROTO, NEXT);
	jump(&a, BPF_JEQ, TCP_FASTOPEN_NO_COOKIE, L_NOPROTO, L_ALLOW);
	mark(&a, L_FLAGS3);
	ld(&a, ARG_LO(3));
	jump(&a, BPF_JSET, MSG_FASTOPEN, L_NOTSUP, L_ALLOW);
	mark(&a, L_FLAGS2);
	ld(&a, ARG_LO(2));
	jump(&a, BPF_JSET, MSG_FASTOPEN, L_NOTSUP, L_ALLOW);
	ret(&a, L_ALLOW, SECCOMP_RET_ALLOW);
	ret(&a, L_NOTIFY, on_call);
	ret(&a, L_NOTSUP, SECCOMP_RET_ERRNO | EOPNOTSUPP);
	ret(&a, L_NOPROTO, SECCOMP_RET_ERRNO | ENOPROTOOPT);
	for (size_t i = 0; i < a.nfix; i++) {
		size_t at = a.fix[i].i;
		a.p[at].jt = offset(&a, at, a.fix[i].t);
		a.p[at].jf = offset(&a, at, a.fix[i].f);
	}
	return a.n;
#else
	(void)out;
	(void)on_call;
	return 0;
#endif
}

/* The program with on_call for connect and listen, installed with flags: its result (the
 * listener's fd with SECCOMP_FILTER_FLAG_NEW_LISTENER, else 0), or -1 with e. */
static long install(uint32_t on_call, unsigned flags, struct err *e)
{
	struct sock_filter f[CAPFILTER_MAX];
	size_t n = capfilter_program_ret(f, on_call);
	if (!n)
		return err_set(e, ENOSYS, "", "connection capture: this architecture is not supported "
				     "(x86_64 and aarch64 are)");
	struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	if (r < 0)
		return err_set(e, errno, "", "connection capture: cannot install its seccomp filter");
	return r;
}

int capfilter_install(int *listener, struct err *e)
{
	long fd = install(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER, e);
	if (fd < 0)
		return -1;
	*listener = (int)fd; /* the kernel makes it close-on-exec */
	return 0;
}

int capfilter_refuse(struct err *e)
{
	return install(SECCOMP_RET_ERRNO | EACCES, 0, e) < 0 ? -1 : 0;
}
