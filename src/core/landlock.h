/* landlock: the jail's Landlock domain, applied by `__init` to itself right before it forks the
 * command (DESIGN §2, §3 "Landlock"). Defence in depth under bwrap's mounts: the writable view is
 * mirrored (a write through a leaked host fd is refused), and where the kernel has scoping
 * (ABI >= 6) abstract Unix sockets and signals are confined to the jail.
 *
 * Filesystem rights handled (everything else — read, execute, ioctl — stays unrestricted):
 *   ABI 1  WRITE_FILE REMOVE_DIR REMOVE_FILE MAKE_CHAR MAKE_DIR MAKE_REG MAKE_SOCK MAKE_FIFO
 *          MAKE_BLOCK MAKE_SYM (a rename or link across directories is always EXDEV there)
 *   ABI 2  + REFER
 *   ABI 3  + TRUNCATE
 *   ABI 5  IOCTL_DEV exists but is deliberately not handled: ioctls on ttys must keep working
 *   ABI 6  scoped: ABSTRACT_UNIX_SOCKET | SIGNAL, when asked for
 * Always writable besides the given paths (when they exist): /dev/null, /dev/zero, /dev/full,
 * /dev/tty, /dev/ptmx and the terminals under /dev/pts (opening for write, truncating only). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

struct landlock_opts {
	/* Absolute paths the jail may write beneath (a directory: create, remove, rename, write
	 * inside it; a file: write and truncate it). A path that does not exist is skipped. */
	const char *const *writable;
	size_t nwritable;
	/* Confine abstract Unix sockets and signals to the domain (needs ABI >= 6; ignored
	 * below). Processes in the domain can still signal and connect to each other. */
	bool scope;
};

struct landlock_report {
	int abi;          /* the kernel's Landlock ABI, 0 when Landlock is unavailable */
	bool fs_applied;  /* the writable view is enforced by Landlock */
	bool scoped;      /* abstract Unix sockets and signals are scoped to the domain */
};

/* The running kernel's Landlock ABI version; 0 when Landlock is not built in or disabled. */
int landlock_abi(void);

/* Restrict the calling thread (and everything it forks or execs afterwards) for good. Sets
 * no_new_privs if it is not set yet (Landlock requires it without CAP_SYS_ADMIN). With no
 * Landlock in the kernel this returns 0 and the report says nothing was applied: the caller
 * decides how loudly to say so. `r` may be NULL. Only this thread is restricted: call it while
 * the process is single-threaded. */
int landlock_apply(const struct landlock_opts *o, struct landlock_report *r, struct err *e) WUR;
