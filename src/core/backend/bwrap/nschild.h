/* nschild: what the child about to exec bwrap does to build a namespace of its own before it
 * (the --net allow holder, core/jail/netns.c; the --fs review overlay, core/backend/bwrap/ovlns.c). It
 * may be a vfork child: these make system calls and touch only their own stack. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* s appended to buf at `at` (NUL-terminated, cut at cap); the new length. */
size_t nsc_put_str(char *buf, size_t at, size_t cap, const char *s);
/* v in decimal, the same way. */
size_t nsc_put_uint(char *buf, size_t at, size_t cap, unsigned long v);

/* A step a test build makes fail (with EPERM): the name it starts with, or "" for none. */
struct nsc_inject {
	char step[32];
};
/* Whether `step` is the one to fail (errno is then EPERM). */
bool nsc_injected(const struct nsc_inject *inj, const char *step);

/* A user namespace of its own (with `flags`, more CLONE_NEW* to unshare with it) where uid and
 * gid map to themselves (root stays 0, a user is never made 0): made dumpable for the time it
 * writes its maps (a non-dumpable process cannot open its own /proc files as a user; set back
 * at once, since a vfork child shares the parent's mm), setgroups denied. 0, or -1 with errno
 * and *step the step that failed. */
int nsc_userns(uid_t uid, gid_t gid, int flags, const struct nsc_inject *inj, const char **step);
