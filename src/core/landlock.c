/* landlock: see landlock.h. Raw syscalls over <linux/landlock.h>: Debian 12's headers predate
 * ABI 3, so every constant newer than REFER, and the ruleset attribute with its `scoped` field,
 * are defined here (values from the kernel's uapi, which never renumbers them). */
#include "core/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

/* Our own names, so the header's age does not matter (ABI that introduced each in brackets). */
#define LL_FS_WRITE_FILE (1ULL << 1)   /* [1] */
#define LL_FS_REMOVE_DIR (1ULL << 4)   /* [1] */
#define LL_FS_REMOVE_FILE (1ULL << 5)  /* [1] */
#define LL_FS_MAKE_CHAR (1ULL << 6)    /* [1] */
#define LL_FS_MAKE_DIR (1ULL << 7)     /* [1] */
#define LL_FS_MAKE_REG (1ULL << 8)     /* [1] */
#define LL_FS_MAKE_SOCK (1ULL << 9)    /* [1] */
#define LL_FS_MAKE_FIFO (1ULL << 10)   /* [1] */
#define LL_FS_MAKE_BLOCK (1ULL << 11)  /* [1] */
#define LL_FS_MAKE_SYM (1ULL << 12)    /* [1] */
#define LL_FS_REFER (1ULL << 13)       /* [2] */
#define LL_FS_TRUNCATE (1ULL << 14)    /* [3] */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* [6] */
#define LL_SCOPE_SIGNAL (1ULL << 1)        /* [6] */

#define LL_VERSION_FLAG 1U /* LANDLOCK_CREATE_RULESET_VERSION */
#define LL_RULE_PATH_BENEATH 1 /* LANDLOCK_RULE_PATH_BENEATH */

/* struct landlock_ruleset_attr as of ABI 6. The kernel reads only the size we pass, so older
 * kernels get the prefix they know (they reject a larger size unless the tail is zero; passing
 * the exact size keeps that rule out of the picture). */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;  /* ABI 1 */
	uint64_t handled_access_net; /* ABI 4; left 0: the network is bwrap's and §4's job */
	uint64_t scoped;             /* ABI 6 */
};

/* Same layout as the uapi's packed struct landlock_path_beneath_attr (12 bytes). */
struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

_Static_assert(sizeof(struct ll_path_beneath) == 12, "landlock_path_beneath_attr is 12 bytes");
_Static_assert(sizeof(struct ll_ruleset_attr) == 24, "landlock_ruleset_attr (ABI 6) is 24 bytes");

/* Devices a terminal program writes to whatever its policy: discarding output, reopening its
 * terminal, allocating a pty. */
static const char *const always_writable[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/ptmx",
};

int landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0UL, LL_VERSION_FLAG);
	/* ENOSYS: not built in; EOPNOTSUPP: built in but disabled at boot. Anything else (a
	 * seccomp filter refusing the call) leaves us just as unable to use it. */
	return v > 0 ? (int)v : 0;
}

/* Every write-type right this ABI knows. Read and execute are left alone (the mounts decide
 * what is visible), and so is IOCTL_DEV (ABI 5): handling it would break terminal ioctls. */
static uint64_t write_rights(int abi)
{
	uint64_t r = LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR |
		     LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO |
		     LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;
	if (abi >= 2)
		r |= LL_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	return r;
}

/* The subset that means something on a non-directory: the kernel refuses (EINVAL) a rule on a
 * file that grants rights only a directory can carry. */
static uint64_t file_rights(int abi)
{
	return LL_FS_WRITE_FILE | (abi >= 3 ? LL_FS_TRUNCATE : 0);
}

/* The attribute size this kernel understands. */
static size_t attr_size(int abi)
{
	if (abi >= 6)
		return sizeof(struct ll_ruleset_attr);
	if (abi >= 4)
		return offsetof(struct ll_ruleset_attr, scoped);
	return offsetof(struct ll_ruleset_attr, handled_access_net);
}

static int create_ruleset(int abi, bool scope, int *fd_out, struct err *e)
{
	struct ll_ruleset_attr attr = {
		.handled_access_fs = write_rights(abi),
		.scoped = scope && abi >= 6 ? LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL : 0,
	};
	long fd = syscall(SYS_landlock_create_ruleset, &attr, attr_size(abi), 0U);
	if (fd < 0) {
		err_set(e, errno, NULL, "cannot create the Landlock ruleset (ABI %d)", abi);
		err_hint(e, "the kernel refused a ruleset of its own ABI: `agentjail doctor` "
			    "shows what it supports");
		return -1;
	}
	*fd_out = (int)fd;
	return 0;
}

/* Grant dir_rights beneath `path` if it is a directory, file_only if it is anything else. A
 * missing path is no error: the jail's view decides what exists, and there is nothing to write
 * where nothing is mounted. */
static int allow_path(int ruleset, const char *path, uint64_t dir_rights, uint64_t file_only,
		      struct err *e)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return err_set(e, errno, path, "cannot open a writable path for Landlock");
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return err_set(e, errno, path, "cannot stat a writable path for Landlock");
	struct ll_path_beneath rule = {
		.allowed_access = S_ISDIR(st.st_mode) ? dir_rights : file_only,
		.parent_fd = fd,
	};
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0U) < 0)
		return err_set(e, errno, path, "cannot add a Landlock rule for a writable path");
	return 0;
}

static int add_rules(int ruleset, int abi, const struct landlock_opts *o, struct err *e)
{
	uint64_t all = write_rights(abi), file = file_rights(abi);
	for (size_t i = 0; i < o->nwritable; i++) {
		const char *p = o->writable[i];
		/* A relative path would be resolved against whatever the cwd happens to be. */
		if (!p || p[0] != '/')
			return err_set(e, EINVAL, p ? p : "(null)",
				       "a Landlock writable path must be absolute");
		if (allow_path(ruleset, p, all, file, e) < 0)
			return -1;
	}
	/* Devices get file rights even where the entry is a directory (/dev/pts): the terminals
	 * inside need opening for write, nobody needs to create or remove entries there. */
	for (size_t i = 0; i < sizeof always_writable / sizeof *always_writable; i++)
		if (allow_path(ruleset, always_writable[i], file, file, e) < 0)
			return -1;
	return 0;
}

static int ensure_no_new_privs(struct err *e)
{
	int v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (v < 0)
		return err_set(e, errno, NULL, "cannot read no_new_privs");
	if (v == 1)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_set(e, errno, NULL, "cannot set no_new_privs (needed by Landlock)");
	return 0;
}

int landlock_apply(const struct landlock_opts *o, struct landlock_report *r, struct err *e)
{
	static const struct landlock_opts none = {0};
	struct landlock_report dummy;
	if (!r)
		r = &dummy;
	if (!o)
		o = &none;
	*r = (struct landlock_report){.abi = landlock_abi()};
	if (r->abi == 0)
		return 0;

	_cleanup_close_ int ruleset = -1;
	if (create_ruleset(r->abi, o->scope, &ruleset, e) < 0 ||
	    add_rules(ruleset, r->abi, o, e) < 0 || ensure_no_new_privs(e) < 0)
		return -1;
	if (syscall(SYS_landlock_restrict_self, ruleset, 0U) < 0)
		return err_set(e, errno, NULL, "cannot enforce the Landlock ruleset");
	r->fs_applied = true;
	r->scoped = o->scope && r->abi >= 6;
	return 0;
}
