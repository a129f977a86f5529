/* seccomp: the jail's syscall filter (doc/design.md §3), prebuilt at build time from the rules in
 * core/confine/seccomp_rules.c and handed to `bwrap --seccomp FD` as BPF. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include <linux/filter.h>

#include "util/err.h"

struct seccomp_opts {
	bool allow_ptrace;   /* ptrace, process_vm_readv/writev allowed */
	/* Test builds only (AJ_TEST_BUILD): when non-zero every rule that would return EPERM,
	 * ENOSYS or EAFNOSUPPORT returns this errno (1..4094) instead, so a test can tell our
	 * filter's refusal from any other layer's. Exceptions: clone3 and openat2 keep ENOSYS,
	 * which libc needs to fall back to clone and openat. Ignored (treated as 0) in normal builds. */
	int test_errno;
};

/* The program for an option set, as a malloc'd copy of *len instructions: the prebuilt one, with
 * errno_override (1..4094; 0 for none) where the test build puts its distinctive errno. The
 * equality test compares it with seccomp_rules_program() for the same options. */
int seccomp_program(bool allow_ptrace, int errno_override, struct sock_filter **prog, size_t *len,
		    struct err *e) WUR;

/* Build the filter for the running architecture and write its BPF into a sealed memfd.
 * On success *fd_out is a readable fd positioned at 0. */
int seccomp_build_fd(const struct seccomp_opts *o, int *fd_out, struct err *e) WUR;

/* Load the filter into the calling thread (tests; requires no_new_privs). */
int seccomp_load_self(const struct seccomp_opts *o, struct err *e) WUR;
