/* seccomp_rules: the jail's syscall filter written as libseccomp rules (doc/design.md §3). Used
 * at build time by tools/seccomp_gen.c, which writes the programs into the binary, and by the
 * test that proves the prebuilt programs equal these; a run never calls libseccomp. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include <linux/filter.h>

#include "util/err.h"

/* The inputs that change the program (the architecture is the build's own). */
struct sc_rules_opts {
	bool allow_ptrace;  /* ptrace, process_vm_readv/writev allowed */
	/* When non-zero (1..4094), every refusal whose errno is not part of the interface (all
	 * but clone3's and openat2's ENOSYS) returns this errno instead: the test build's
	 * variant. */
	int errno_override;
};

/* The complete program for the native architecture (agentjail's x32 prefix, then libseccomp's
 * export) in a malloc'd array of *len instructions. */
int seccomp_rules_program(const struct sc_rules_opts *o, struct sock_filter **prog, size_t *len,
			  struct err *e) WUR;
