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

/* Indexed by seccomp_prebuilt_index(). */
enum { SECCOMP_PREBUILT_N = 4 };
extern const struct seccomp_prebuilt seccomp_prebuilt[SECCOMP_PREBUILT_N];
/* The architecture the programs were generated for (an AUDIT_ARCH_* value). */
extern const unsigned seccomp_prebuilt_arch;

/* Which program serves an option set: allow_ptrace, and whether refusals return the sentinel. */
static inline size_t seccomp_prebuilt_index(int allow_ptrace, int sentinel)
{
	return (size_t)(allow_ptrace ? 1 : 0) + (size_t)(sentinel ? 2 : 0);
}
