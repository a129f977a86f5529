/* seccomp_prebuilt: the jail's seccomp programs, generated at build time by tools/seccomp_gen.c
 * from core/confine/seccomp_rules.c (doc/design.md §3). The generated C file lives in the build
 * tree ($(BUILD)/gen/seccomp_prebuilt.c); this header is its interface. */
#pragma once
#include <stddef.h>

#include <linux/filter.h>

/* The errno the test variants return where a test build returns its distinctive one; a run
 * rewrites it (core/confine/seccomp.c). Not an errno any rule uses for itself. */
#define SECCOMP_PREBUILT_SENTINEL 4094

struct seccomp_prebuilt {
	const struct sock_filter *insns;
	size_t len;
};

/* The network variants: the bwrap jail's (its network namespace does the work), then the Landlock
 * backend's --net off, allow and on (doc/design.md §4c). */
enum { SECCOMP_NET_JAIL, SECCOMP_NET_LL_OFF, SECCOMP_NET_LL_ALLOW, SECCOMP_NET_LL_ON,
       SECCOMP_NET_N };
/* Each variant's socket options: deny_inet, deny_unix, inet_stream_only. */
static const struct {
	unsigned char deny_inet, deny_unix, inet_stream_only;
} seccomp_prebuilt_nets[SECCOMP_NET_N] = {{0, 0, 0}, {1, 1, 0}, {0, 1, 1}, {0, 1, 0}};

/* Indexed by seccomp_prebuilt_index(). */
enum { SECCOMP_PREBUILT_N = 4 * SECCOMP_NET_N };
extern const struct seccomp_prebuilt seccomp_prebuilt[SECCOMP_PREBUILT_N];
/* The architecture the programs were generated for (an AUDIT_ARCH_* value). */
extern const unsigned seccomp_prebuilt_arch;

/* Which program serves an option set: allow_ptrace, whether refusals return the sentinel, and
 * the network variant (SECCOMP_NET_*). */
static inline size_t seccomp_prebuilt_index(int allow_ptrace, int sentinel, int net)
{
	return (size_t)(allow_ptrace ? 1 : 0) + (size_t)(sentinel ? 2 : 0) + 4 * (size_t)net;
}
