/* landlock: the jail's Landlock domain, applied by `__init` to itself right before it forks the
 * command (doc/design.md §2, §3 "Landlock"). Defence in depth under bwrap's mounts: the
 * writable view is mirrored (a write through a leaked host fd is refused), and where the kernel has
 * scoping (ABI >= 6) abstract Unix sockets and signals are confined to the jail.
 *
 * Filesystem rights handled (everything else — execute, ioctl, and read unless a read-deny list
 * is given — stays unrestricted):
 *   ABI 1  WRITE_FILE REMOVE_DIR REMOVE_FILE MAKE_CHAR MAKE_DIR MAKE_REG MAKE_SOCK MAKE_FIFO
 *          MAKE_BLOCK MAKE_SYM (a rename or link across directories is always EXDEV there)
 *          + READ_FILE READ_DIR with a read-deny list
 *   ABI 2  + REFER
 *   ABI 3  + TRUNCATE
 *   ABI 5  IOCTL_DEV exists but is deliberately not handled: ioctls on ttys must keep working
 *   ABI 6  scoped: ABSTRACT_UNIX_SOCKET | SIGNAL, when asked for
 * Always writable besides the given paths (when they exist): /dev/null, /dev/zero, /dev/full,
 * /dev/tty, /dev/ptmx and the terminals under /dev/pts (opening for write, truncating only).
 *
 * The read-deny list backs the masks over host secrets (a /dev/null or empty tmpfs mounted over
 * /etc/shadow and the like). A mask alone does not last: the kernel detaches a mount whose
 * mountpoint is renamed over or unlinked in another mount namespace, so the host rewriting
 * /etc/shadow the usual way (write shadow+, rename it over shadow) unmasks the new file in
 * every running jail. Landlock rules attach to inodes instead, and reading is granted only
 * where a rule says so: beneath every entry that existed when the jail started, except the
 * denied paths. Along each denied path, every directory is walked from "/" and each entry
 * that is neither denied nor above a denied path gets a rule granting read beneath it; the
 * directories on the way get READ_DIR. What follows from that:
 *   - a file renamed into place later is a new inode no rule covers: unreadable, as wanted;
 *   - so is anything created later directly in one of those directories (a new file in /etc
 *     after the jail started), a price accepted for the above;
 *   - a denied directory can still be listed (READ_DIR granted on "/" reaches everything
 *     beneath it): the names inside show, their contents do not;
 *   - the deny is by path: a denied file reachable by another path that is read-allowed (a
 *     hard link elsewhere, another mount of it or of a directory above it) is readable there.
 *     An entry next to a denied path that is the very same inode as a denied path or as a
 *     directory above one (a hard link beside it, a second mount of /etc) gets no rule, since
 *     a rule on it would open the denied path itself;
 *   - symlinks get no rule (the kernel cannot put one on them): a symlink is followed to its
 *     target, which is judged where it lies;
 *   - a file already open when Landlock is applied stays readable through that descriptor. */
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
	/* Absolute, normalized paths (as seen inside the jail) that must not be read: a file is
	 * unreadable, a directory's contents are. Nothing on them may be a symlink but the last
	 * component (ELOOP otherwise); a path that does not exist is fine and stays unreadable if
	 * it appears later. A writable path may not equal, lie above or lie below one (EINVAL).
	 * At most LANDLOCK_MAX_DENY_READ entries, and the whole domain at most LANDLOCK_MAX_RULES
	 * rules (E2BIG): keep denied paths out of huge directories. */
	const char *const *deny_read;
	size_t ndeny_read;
	/* NULL, or where the enforced ruleset's descriptor (close-on-exec) is left for the caller
	 * to close when it suits it (-1 when none was made): closing it frees every rule, which
	 * init does after the command's fork rather than before. */
	int *keep_ruleset;
};

#define LANDLOCK_MAX_DENY_READ 1024
#define LANDLOCK_MAX_RULES 4096

struct landlock_report {
	int abi;          /* the kernel's Landlock ABI, 0 when Landlock is unavailable */
	bool fs_applied;  /* the writable view is enforced by Landlock */
	bool scoped;      /* abstract Unix sockets and signals are scoped to the domain */
	bool read_denied; /* reading is handled too: the deny_read paths are unreadable */
};

/* The running kernel's Landlock ABI version; 0 when Landlock is not built in or disabled. */
int landlock_abi(void);

/* Restrict the calling thread (and everything it forks or execs afterwards) for good. Sets
 * no_new_privs if it is not set yet (Landlock requires it without CAP_SYS_ADMIN). With no
 * Landlock in the kernel this returns 0 and the report says nothing was applied: the caller
 * decides how loudly to say so. `r` may be NULL. Only this thread is restricted: call it while
 * the process is single-threaded. */
int landlock_apply(const struct landlock_opts *o, struct landlock_report *r, struct err *e) WUR;

/* ---- the Landlock backend (`run --backend landlock`, doc/design.md §4c) ----
 * Here Landlock is the whole filesystem boundary, not a second layer under mounts: reading and
 * executing are handled too, and granted only by the rules given (core/plan/llrule.h; the
 * ruleset is built by core/backend/landlock/llplan.h). */
#include "core/plan/llrule.h"

struct landlock_list {
	const struct llp_rule *rules;
	size_t n;
	int min_abi;             /* refuse (ENOTSUP) a kernel below this ABI */
	bool handle_net;         /* TCP bind and connect handled (ABI >= 4): only `ports` connect */
	const unsigned short *ports;
	size_t nports;
};

/* Restrict the calling thread for good with exactly these rules (and abstract sockets and
 * signals scoped where ABI >= 6). No Landlock, or an ABI below min_abi (or below 4 with
 * handle_net): -1, nothing applied. Sets no_new_privs. */
int landlock_apply_list(const struct landlock_list *l, struct landlock_report *r,
			struct err *e) WUR;
