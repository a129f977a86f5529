/* landlock: see landlock.h. Raw syscalls over <linux/landlock.h>: Debian 12's headers predate
 * ABI 3, so every constant newer than REFER, and the ruleset attribute with its `scoped` field,
 * are defined here (values from the kernel's uapi, which never renumbers them). */
#include "core/confine/landlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

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
#define LL_FS_READ_FILE (1ULL << 2)    /* [1] */
#define LL_FS_READ_DIR (1ULL << 3)     /* [1] */
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

#define LL_READ (LL_FS_READ_FILE | LL_FS_READ_DIR)

/* Devices a terminal program writes to whatever its policy: discarding output, reopening its
 * terminal, allocating a pty. */
static const char *const always_writable[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/ptmx",
};

int landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0UL, LL_VERSION_FLAG);
#ifdef AJ_TEST_BUILD
	/* test builds: AGENTJAIL_TEST_LANDLOCK_ABI=N makes this kernel look older (backend auto's
	 * choice where Landlock is missing, tests/sh/99-backend-auto.t) */
	const char *cap = getenv("AGENTJAIL_TEST_LANDLOCK_ABI");
	if (cap && *cap >= '0' && *cap <= '9' && v > atol(cap))
		v = atol(cap);
#endif
	/* ENOSYS: not built in; EOPNOTSUPP: built in but disabled at boot. Anything else (a
	 * seccomp filter refusing the call) leaves us just as unable to use it. */
	return v > 0 ? (int)v : 0;
}

/* Every write-type right this ABI knows. Execute is left alone, and so is reading unless a
 * read-deny list asks for it (the mounts decide what is visible), and so is IOCTL_DEV (ABI 5):
 * handling it would break terminal ioctls. */
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

/* The identity of a file, whatever the path it was reached by. */
struct inode_id {
	dev_t dev;
	ino_t ino;
};

/* The descriptors rules were added on wait here, and are closed together (close_range over
 * each run of consecutive numbers) when this many wait and when the ruleset is done: a root
 * jail adds ≈ 200 rules, each on a descriptor of its own (doc/design.md §7, issue 31). */
#define CLOSE_BATCH 128

/* One ruleset being built, and what the rules are made from. */
struct build {
	int ruleset;
	int abi;
	const struct landlock_opts *o;
	bool deny; /* a read-deny list was given: reading is handled too */
	bool root; /* geteuid() == 0 (asked once: it is the same for every entry) */
	size_t nrules;
	/* The denied paths and the directories above them, as the inodes a rule must not land
	 * on: a rule on any of them would grant reading the denied path itself. */
	struct inode_id *aliases;
	size_t naliases, aliases_cap;
	int closing[CLOSE_BATCH];
	size_t nclosing;
	/* The walk's current path: the directory walked, then its entry being visited. A walked
	 * directory lies above a denied path (shorter than PATH_MAX), and a name is at most
	 * NAME_MAX. */
	char path[PATH_MAX + NAME_MAX + 2];
	size_t depth; /* of the walk: directories being listed */
	struct err *e;
};

/* Close every waiting descriptor: one close_range per run of consecutive numbers (all of them
 * ours: each was opened here and is not closed yet). */
static void flush_closes(struct build *b)
{
	int saved = errno;
	/* insertion sort: the numbers come nearly in order (the lowest free one is taken) */
	for (size_t i = 1; i < b->nclosing; i++) {
		int fd = b->closing[i];
		size_t j = i;
		for (; j > 0 && b->closing[j - 1] > fd; j--)
			b->closing[j] = b->closing[j - 1];
		b->closing[j] = fd;
	}
	for (size_t i = 0, j; i < b->nclosing; i = j) {
		for (j = i + 1; j < b->nclosing && b->closing[j] == b->closing[j - 1] + 1; j++)
			;
		if (syscall(SYS_close_range, (unsigned)b->closing[i], (unsigned)b->closing[j - 1],
			    0U) < 0)
			for (size_t k = i; k < j; k++)
				(void)close(b->closing[k]);
	}
	b->nclosing = 0;
	errno = saved;
}

/* fd is no longer needed (a rule on it is in the ruleset already): closed with the next batch. */
static void defer_close(struct build *b, int fd)
{
	if (fd < 0)
		return;
	if (b->nclosing == CLOSE_BATCH)
		flush_closes(b);
	b->closing[b->nclosing++] = fd;
}

/* openat, close-on-exec; out of descriptors, the waiting ones are closed and it is tried once
 * more. */
static int open_at(struct build *b, int dirfd, const char *name, int flags)
{
	int fd = openat(dirfd, name, flags | O_CLOEXEC);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE) && b->nclosing) {
		flush_closes(b);
		fd = openat(dirfd, name, flags | O_CLOEXEC);
	}
	return fd;
}

static void build_free(struct build *b)
{
	flush_closes(b);
	closep(&b->ruleset);
	free(b->aliases);
}

/* A ruleset of attr for this ABI: its fd, or -1 (e filled). Shared by the jail's init
 * (landlock_apply) and the Landlock backend (landlock_apply_list). */
static int new_ruleset(const struct ll_ruleset_attr *attr, int abi, struct err *e)
{
	long fd = syscall(SYS_landlock_create_ruleset, attr, attr_size(abi), 0U);
	if (fd < 0) {
		err_set(e, errno, NULL, "cannot create the Landlock ruleset (ABI %d)", abi);
		err_hint(e, "the kernel refused a ruleset of its own ABI: `agentjail doctor` "
			    "shows what it supports");
		return -1;
	}
	return (int)fd;
}

/* Grant rights beneath the file or directory open as fd (named path for errors). */
static int path_rule(int ruleset, int fd, uint64_t rights, const char *path, struct err *e)
{
	struct ll_path_beneath rule = {.allowed_access = rights, .parent_fd = fd};
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0U) < 0)
		return err_set(e, errno, path, "cannot add a Landlock rule");
	return 0;
}

static int create_ruleset(struct build *b)
{
	struct ll_ruleset_attr attr = {
		.handled_access_fs = write_rights(b->abi) | (b->deny ? LL_READ : 0),
		.scoped = b->o->scope && b->abi >= 6 ? LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL : 0,
	};
	b->ruleset = new_ruleset(&attr, b->abi, b->e);
	return b->ruleset < 0 ? -1 : 0;
}

/* Grant `rights` beneath the file or directory open as fd (named `path` for errors). The budget
 * keeps a deny list next to a huge directory from turning the jail's start into a crawl. */
static int add_rule(struct build *b, int fd, uint64_t rights, const char *path)
{
	if (b->nrules >= LANDLOCK_MAX_RULES) {
		err_set(b->e, E2BIG, path, "more than %d Landlock rules would be needed",
			LANDLOCK_MAX_RULES);
		err_hint(b->e, "a read-denied path lies in a directory with too many entries: "
			       "deny a directory above it instead");
		return -1;
	}
	if (path_rule(b->ruleset, fd, rights, path, b->e) < 0)
		return -1;
	b->nrules++;
	return 0;
}

static bool is_alias(const struct build *b, const struct stat *st)
{
	for (size_t i = 0; i < b->naliases; i++)
		if (b->aliases[i].dev == st->st_dev && b->aliases[i].ino == st->st_ino)
			return true;
	return false;
}

static void push_alias(struct build *b, const struct stat *st)
{
	if (b->naliases == b->aliases_cap) {
		b->aliases_cap = b->aliases_cap ? 2 * b->aliases_cap : 16;
		b->aliases = xrealloc(b->aliases, b->aliases_cap * sizeof *b->aliases);
	}
	b->aliases[b->naliases++] = (struct inode_id){st->st_dev, st->st_ino};
}

/* Record "/", every directory along a denied path and the denied path itself (not following
 * a final symlink: its target is judged where it lies). What cannot be reached is left out:
 * nothing beneath it exists to alias. A directory the previous denied path already passed
 * through (the list is sorted: /etc/ssh/a then /etc/ssh/b) is not looked at again: it is
 * recorded already. */
static void collect_aliases(struct build *b)
{
	struct stat st;
	if (lstat("/", &st) == 0)
		push_alias(b, &st);
	const char *prev = NULL;
	size_t prev_dirs = 0; /* prev's directories up to this length are recorded */
	for (size_t i = 0; i < b->o->ndeny_read; i++) {
		const char *d = b->o->deny_read[i];
		char buf[PATH_MAX];
		size_t n = strlen(d); /* < PATH_MAX: checked before */
		memcpy(buf, d, n + 1);
		size_t dirs = 0;
		for (char *s = buf + 1;;) {
			char *slash = strchr(s, '/');
			if (!slash) {
				if (lstat(buf, &st) == 0)
					push_alias(b, &st);
				break;
			}
			size_t end = (size_t)(slash - buf);
			if (!prev || end > prev_dirs || prev[end] != '/' || memcmp(prev, buf, end)) {
				*slash = '\0';
				int r = lstat(buf, &st);
				*slash = '/';
				if (r < 0 || !S_ISDIR(st.st_mode))
					break;
				push_alias(b, &st);
			}
			dirs = end;
			s = slash + 1;
		}
		prev = d;
		prev_dirs = dirs;
	}
}

/* The denied path that p equals, lies above or lies below; NULL when there is none. */
static const char *deny_conflict(const struct landlock_opts *o, const char *p)
{
	for (size_t i = 0; i < o->ndeny_read; i++)
		if (path_is_under(p, o->deny_read[i]) || path_is_under(o->deny_read[i], p))
			return o->deny_read[i];
	return NULL;
}

/* Open `path` for a rule, following symlinks (the rule belongs on what the jail reaches): 1 with
 * *fd and *st set, 0 when it does not exist. A missing path is no error: the jail's view decides
 * what exists, and there is nothing to write where nothing is mounted. The fstat is of the
 * opened inode: the rights follow its type (the kernel refuses directory rights on a file). */
static int open_for_rule(struct build *b, const char *path, int *fd, struct stat *st)
{
	int f = open_at(b, AT_FDCWD, path, O_PATH);
	if (f < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return err_set(b->e, errno, path, "cannot open a path for a Landlock rule");
	}
	if (fstat(f, st) < 0) {
		err_set(b->e, errno, path, "cannot stat a path for a Landlock rule");
		closep(&f);
		return -1;
	}
	*fd = f;
	return 1;
}

/* A directory gets every write right, anything else the file ones (the kernel refuses, EINVAL,
 * a rule on a file with rights only a directory can carry). Under a deny list a writable path
 * is readable too: writing where one cannot read back helps nobody. */
static int writable_rule(struct build *b, const char *path, int fd, const struct stat *st)
{
	bool dir = S_ISDIR(st->st_mode);
	uint64_t rights = dir ? write_rights(b->abi) : file_rights(b->abi);
	if (b->deny) {
		/* the names were checked against the deny list; this catches another mount or
		 * a hard link of a denied path or of a directory above one */
		if (is_alias(b, st))
			return err_set(b->e, EINVAL, path,
				       "a writable path is the same file as a read-denied path or "
				       "a directory above one");
		rights |= dir ? LL_READ : LL_FS_READ_FILE;
	}
	return add_rule(b, fd, rights, path);
}

static int allow_writable(struct build *b, const char *path)
{
	/* A relative path would be resolved against whatever the cwd happens to be. */
	if (!path || path[0] != '/')
		return err_set(b->e, EINVAL, path ? path : "(null)",
			       "a Landlock writable path must be absolute");
	int fd = -1;
	struct stat st;
	int found = open_for_rule(b, path, &fd, &st);
	if (found <= 0)
		return found;
	int rc = writable_rule(b, path, fd, &st);
	defer_close(b, fd);
	return rc;
}

/* Devices get file rights even where the entry is a directory (/dev/pts): the terminals inside
 * need opening for write, nobody needs to create or remove entries there. Reading them is
 * normally granted by the rule on /dev, an entry of "/" above no denied path; it is added here
 * too for the case of a denied path inside /dev, unless the device is (or holds) one. */
static int allow_device(struct build *b, const char *path)
{
	int fd = -1;
	struct stat st;
	int found = open_for_rule(b, path, &fd, &st);
	if (found <= 0)
		return found;
	uint64_t rights = file_rights(b->abi);
	if (b->deny && !deny_conflict(b->o, path) && !is_alias(b, &st))
		rights |= S_ISDIR(st.st_mode) ? LL_READ : LL_FS_READ_FILE;
	int rc = add_rule(b, fd, rights, path);
	defer_close(b, fd);
	return rc;
}

/* ---- the read-deny list ---- */

static int check_deny_path(const char *p, struct err *e)
{
	if (!p || p[0] != '/')
		return err_set(e, EINVAL, p ? p : "(null)", "a read-denied path must be absolute");
	if (strlen(p) >= PATH_MAX)
		return err_set(e, ENAMETOOLONG, p, "a read-denied path is too long");
	if (strcmp(p, "/") == 0)
		return err_set(e, EINVAL, p, "reading cannot be denied on the whole filesystem");
	/* The walk compares the names it lists: "/etc//shadow" would match none, and the file it
	 * means would stay readable. */
	_cleanup_free_ char *norm = path_normalize(NULL, p);
	if (strcmp(norm, p) != 0)
		return err_set(e, EINVAL, p, "a read-denied path must be normalized (as %s)", norm);
	return 0;
}

/* The prefixes of writable paths already seen not to be symlinks (readlink said EINVAL): realpath
 * asks again for each path's every component, and the writable paths share most of theirs
 * (/home/u, /home/u/.npm, /home/u/.m2). Each entry is the first n bytes of a writable path. */
struct plain_dirs {
	struct plain {
		const char *s;
		size_t n;
	} *v;
	size_t len, cap;
};

static bool plain_known(const struct plain_dirs *p, const char *s, size_t n)
{
	for (size_t i = 0; i < p->len; i++)
		if (p->v[i].n == n && memcmp(p->v[i].s, s, n) == 0)
			return true;
	return false;
}

/* What realpath(w) answers, for a normalized w, with a readlink only for the prefixes not in
 * `plain`: a path whose every prefix exists and is no symlink is its own real path; any other
 * (a symlink on the way, a component missing or not a directory) is realpath's to answer. */
static char *real_path(const char *w, struct plain_dirs *plain)
{
	size_t n = strlen(w);
	char buf[PATH_MAX];
	if (n < 2 || n >= sizeof buf)
		return realpath(w, NULL);
	memcpy(buf, w, n + 1);
	for (size_t end = 2; end <= n; end++) {
		if (buf[end] != '/' && buf[end] != '\0')
			continue;
		if (plain_known(plain, w, end))
			continue;
		char c;
		buf[end] = '\0';
		bool plain_here = readlink(buf, &c, 1) < 0 && errno == EINVAL;
		buf[end] = w[end];
		if (!plain_here)
			return realpath(w, NULL);
		if (plain->len == plain->cap) {
			plain->cap = plain->cap ? 2 * plain->cap : 16;
			plain->v = xrealloc(plain->v, plain->cap * sizeof *plain->v);
		}
		plain->v[plain->len++] = (struct plain){w, end};
	}
	return xstrdup(w);
}

/* A writable path gets reading beneath it, so it cannot hold a denied path; one at or inside a
 * denied path would undo the deny there. Checked as given and as resolved: the rule lands on
 * whatever a symlink leads to. */
static int check_writable_vs_deny(const struct landlock_opts *o, const char *w,
				  struct plain_dirs *plain, struct err *e)
{
	if (!w || w[0] != '/')
		return 0; /* refused with its own message when its rule is added */
	_cleanup_free_ char *norm = path_normalize(NULL, w);
	_cleanup_free_ char *real = strcmp(norm, w) == 0 ? real_path(w, plain) : realpath(w, NULL);
	const char *d = deny_conflict(o, norm);
	if (!d && real)
		d = deny_conflict(o, real);
	if (!d)
		return 0;
	err_set(e, EINVAL, w, "a writable path cannot lie above, at or below the read-denied %s",
		d);
	err_hint(e, "drop one of the two: a writable path must be readable");
	return -1;
}

static int check_deny_list(const struct landlock_opts *o, struct err *e)
{
	if (o->ndeny_read == 0)
		return 0;
	if (!o->deny_read)
		return err_set(e, EINVAL, NULL, "the read-deny list is NULL but counts %zu paths",
			       o->ndeny_read);
	if (o->ndeny_read > LANDLOCK_MAX_DENY_READ)
		return err_set(e, E2BIG, NULL, "%zu read-denied paths, more than %d",
			       o->ndeny_read, LANDLOCK_MAX_DENY_READ);
	for (size_t i = 0; i < o->ndeny_read; i++)
		if (check_deny_path(o->deny_read[i], e) < 0)
			return -1;
	struct plain_dirs plain = {0};
	int rc = 0;
	for (size_t i = 0; i < o->nwritable && rc == 0; i++)
		rc = check_writable_vs_deny(o, o->writable[i], &plain, e);
	free(plain.v);
	return rc;
}

enum deny_rel { REL_NONE, REL_DENIED, REL_ABOVE };

/* What the entry `name` (nlen bytes) of a walked directory is to the denied paths, given what
 * lies below that directory of each of them (below[0..n): "shadow", "ssh/ssh_host_rsa_key"):
 * denied itself, above one, or neither. */
static enum deny_rel entry_relation(const char *const *below, size_t n, const char *name,
				    size_t nlen)
{
	enum deny_rel rel = REL_NONE;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(below[i], name, nlen) != 0)
			continue;
		if (below[i][nlen] == '\0')
			return REL_DENIED;
		if (below[i][nlen] == '/')
			rel = REL_ABOVE;
	}
	return rel;
}

/* The denied paths strictly below the directory b->path (len bytes), each as what follows
 * the directory and its slash; their count in *n. */
static const char **denied_below(const struct build *b, size_t len, size_t *n)
{
	const char **v = xmalloc((b->o->ndeny_read + 1) * sizeof *v);
	*n = 0;
	for (size_t i = 0; i < b->o->ndeny_read; i++) {
		const char *d = b->o->deny_read[i];
		if (len == 1) /* "/": every denied path ("/" itself is refused) */
			v[(*n)++] = d + 1;
		else if (strncmp(d, b->path, len) == 0 && d[len] == '/')
			v[(*n)++] = d + len + 1;
	}
	return v;
}

/* Linux's struct linux_dirent64, as getdents64 fills it. */
struct ll_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* getdents64's buffer: a directory of ≈ 250 entries in one call (this /etc: 157, 5 KB). */
#define DENTS_BUF 8192
#define DENTS_STACK_LEVELS 4

static int walk_dir(struct build *b, int dirfd, bool listable, size_t len);

/* An entry beside a denied path, open as fd (O_PATH, no symlink followed) and fstat'ed as st:
 * the rule's rights follow the type of the inode opened, not the listing's d_type, and the
 * alias check and root's check of its mode need the inode too. */
static int judge_entry(struct build *b, int fd, const struct stat *st, enum deny_rel rel,
		       size_t plen)
{
	if (S_ISLNK(st->st_mode)) {
		/* no rule can sit on a symlink; its target is judged where it lies */
		if (rel != REL_ABOVE)
			return 0;
		err_set(b->e, ELOOP, b->path, "a read-denied path must not pass through a symlink");
		err_hint(b->e, "deny the path the symlink leads to");
		return -1;
	}
	/* a non-directory "above" a denied path is an entry like the others: nothing lies in it */
	if (rel == REL_ABOVE && S_ISDIR(st->st_mode))
		return walk_dir(b, fd, false, plen);
	if (is_alias(b, st))
		return 0;
	/* As root (owner checks hold for root's files), an entry beside a denied one that others
	 * could not read gets no rule either: the file that replaces a secret by rename is made
	 * under another name first (shadow+, passwd.1234), and a rule on it would follow its
	 * inode onto the secret's name. */
	if (b->root && !(st->st_mode & S_IROTH))
		return 0;
	return add_rule(b, fd, S_ISDIR(st->st_mode) ? LL_READ : LL_FS_READ_FILE, b->path);
}

/* One entry of a directory above a denied path (b->path, plen bytes with the entry's name, the
 * entry being `name` in dirfd, listed with type d_type): skipped if denied, walked if above
 * one, else granted reading beneath it. Opened without following symlinks, so a denied path
 * cannot be walked through one (its rules would land on the target's tree, wherever that
 * is). */
static int visit_named(struct build *b, int dirfd, const char *name, unsigned char d_type,
		       enum deny_rel rel, size_t plen)
{
	if (rel == REL_DENIED)
		return 0;
	/* listed as a symlink: no rule, as when it is opened and found one (what is renamed in
	 * after the listing gets no rule either way) */
	if (d_type == DT_LNK && rel != REL_ABOVE)
		return 0;
	if (rel == REL_ABOVE && (d_type == DT_DIR || d_type == DT_UNKNOWN)) {
		/* a directory to walk: opened once, for its rule and its listing; anything else (no
		 * longer a directory, a symlink, one that cannot be listed) is opened as below */
		int fd = open_at(b, dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (fd >= 0) {
			int rc = walk_dir(b, fd, true, plen);
			defer_close(b, fd);
			return rc;
		}
	}
	int fd = open_at(b, dirfd, name, O_PATH | O_NOFOLLOW);
	/* ENOENT: gone since it was listed. EACCES: a directory an unprivileged caller can list
	 * but not search; the entry gets no rule, which denies more than asked, never less. */
	if (fd < 0 && (errno == ENOENT || errno == EACCES))
		return 0;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		err_set(b->e, errno, b->path, "cannot open an entry beside a read-denied path");
		defer_close(b, fd);
		return -1;
	}
	int rc = judge_entry(b, fd, &st, rel, plen);
	defer_close(b, fd);
	return rc;
}

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* The entries of the directory listed by lfd (b->path, len bytes; dirfd the one they are
 * opened in), each visited, with buf (DENTS_BUF) to list them in. */
static int list_entries(struct build *b, int dirfd, int lfd, size_t len, char *buf)
{
	size_t nbelow;
	_cleanup_free_ const char **below = denied_below(b, len, &nbelow);
	size_t base = len == 1 ? 0 : len; /* "/" + name, or the directory + "/" + name */
	for (;;) {
		long n = syscall(SYS_getdents64, lfd, buf, DENTS_BUF);
		if (n < 0)
			return err_set(b->e, errno, b->path,
				       "cannot list a directory above a read-denied path");
		if (n == 0)
			return 0;
		for (long off = 0; off < n;) {
			const struct ll_dirent64 *de = (const struct ll_dirent64 *)(buf + off);
			off += de->d_reclen;
			if (is_dot_or_dotdot(de->d_name))
				continue;
			size_t nlen = strlen(de->d_name);
			if (base + 1 + nlen >= sizeof b->path)
				return err_set(b->e, ENAMETOOLONG, b->path,
					       "an entry's name beside a read-denied path is too long");
			b->path[base] = '/';
			memcpy(b->path + base + 1, de->d_name, nlen + 1);
			int rc = visit_named(b, dirfd, de->d_name, de->d_type,
					     entry_relation(below, nbelow, de->d_name, nlen),
					     base + 1 + nlen);
			b->path[len] = '\0';
			if (rc < 0)
				return -1;
		}
	}
}

/* list_entries with a buffer on the stack: the walk's first DENTS_STACK_LEVELS depths (a
 * buffer on the heap would be mapped and unmapped for each directory). */
static __attribute__((noinline)) int list_on_stack(struct build *b, int dirfd, int lfd,
						   size_t len)
{
	char buf[DENTS_BUF] __attribute__((aligned(8)));
	return list_entries(b, dirfd, lfd, len, buf);
}

static int visit_entries(struct build *b, int dirfd, int lfd, size_t len)
{
	b->depth++;
	int rc;
	if (b->depth <= DENTS_STACK_LEVELS) {
		rc = list_on_stack(b, dirfd, lfd, len);
	} else {
		_cleanup_free_ char *buf = xmalloc(DENTS_BUF);
		rc = list_entries(b, dirfd, lfd, len, buf);
	}
	b->depth--;
	return rc;
}

/* A directory above a denied path (b->path, len bytes; open as dirfd, which can be listed
 * when `listable`, else an O_PATH one): it may be listed (READ_DIR, which reaches beneath it
 * too: denied directories can be listed, not read), and each entry is visited. */
static int walk_dir(struct build *b, int dirfd, bool listable, size_t len)
{
	if (add_rule(b, dirfd, LL_FS_READ_DIR, b->path) < 0)
		return -1;
	if (listable)
		return visit_entries(b, dirfd, dirfd, len);
	int lfd = open_at(b, dirfd, ".", O_RDONLY | O_DIRECTORY);
	if (lfd < 0) {
		/* An unprivileged caller may be unable to list it: then no entry in it gets a rule,
		 * which denies more than asked, never less. */
		if (errno == EACCES)
			return 0;
		return err_set(b->e, errno, b->path,
			       "cannot list a directory above a read-denied path");
	}
	int rc = visit_entries(b, dirfd, lfd, len);
	defer_close(b, lfd);
	return rc;
}

/* Reading is granted beneath everything that exists now but the denied paths: walked from "/"
 * down every directory above a denied path, since Landlock can only grant, never subtract. */
static int deny_reads(struct build *b)
{
	memcpy(b->path, "/", 2);
	int root = open_at(b, AT_FDCWD, "/", O_RDONLY | O_DIRECTORY);
	bool listable = root >= 0;
	if (!listable)
		root = open_at(b, AT_FDCWD, "/", O_PATH | O_DIRECTORY);
	if (root < 0)
		return err_set(b->e, errno, "/", "cannot open the root directory for Landlock");
	int rc = walk_dir(b, root, listable, 1);
	defer_close(b, root);
	return rc;
}

static int add_rules(struct build *b)
{
	/* before any rule: the writable paths and devices are checked against them too */
	if (b->deny) {
		b->root = geteuid() == 0;
		collect_aliases(b);
	}
	for (size_t i = 0; i < b->o->nwritable; i++)
		if (allow_writable(b, b->o->writable[i]) < 0)
			return -1;
	for (size_t i = 0; i < sizeof always_writable / sizeof *always_writable; i++)
		if (allow_device(b, always_writable[i]) < 0)
			return -1;
	int rc = b->deny ? deny_reads(b) : 0;
	flush_closes(b);
	return rc;
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
	if (o->keep_ruleset)
		*o->keep_ruleset = -1;
	*r = (struct landlock_report){.abi = landlock_abi()};
	if (r->abi == 0)
		return 0;

	if (check_deny_list(o, e) < 0)
		return -1;
	_cleanup_(build_free) struct build b = {
		.ruleset = -1, .abi = r->abi, .o = o, .deny = o->ndeny_read > 0, .e = e,
	};
	if (create_ruleset(&b) < 0 || add_rules(&b) < 0 || ensure_no_new_privs(e) < 0)
		return -1;
	if (syscall(SYS_landlock_restrict_self, b.ruleset, 0U) < 0)
		return err_set(e, errno, NULL, "cannot enforce the Landlock ruleset");
	if (o->keep_ruleset)
		*o->keep_ruleset = steal_fd(&b.ruleset);
	r->fs_applied = true;
	r->scoped = o->scope && r->abi >= 6;
	r->read_denied = b.deny;
	return 0;
}

/* ---- the Landlock backend: see landlock.h ---- */

#define LL_FS_EXECUTE (1ULL << 0)         /* [1] */
#define LL_NET_BIND_TCP (1ULL << 0)       /* [4] */
#define LL_NET_CONNECT_TCP (1ULL << 1)    /* [4] */
#define LL_RULE_NET_PORT 2                /* LANDLOCK_RULE_NET_PORT */

struct ll_net_port { /* struct landlock_net_port_attr */
	uint64_t allowed_access;
	uint64_t port;
};

static uint64_t list_rights(enum llp_right r, bool dir, int abi)
{
	uint64_t rd = LL_FS_EXECUTE | LL_FS_READ_FILE | (dir ? LL_FS_READ_DIR : 0);
	switch (r) {
	case LLP_LIST:
		return dir ? LL_FS_READ_DIR : 0;
	case LLP_READ:
		return rd;
	case LLP_WRITE:
		return rd | (dir ? write_rights(abi) : file_rights(abi));
	case LLP_DEVICE:
		return LL_FS_READ_FILE | (dir ? LL_FS_READ_DIR : 0) | file_rights(abi);
	}
	return 0;
}

static int list_rule(int ruleset, const struct llp_rule *rule, int abi, struct err *e)
{
	_cleanup_close_ int fd = open(rule->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
		return 0; /* gone since it was planned, or out of the caller's reach anyway */
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return err_set(e, errno, rule->path, "cannot open a path for a Landlock rule");
	if (S_ISLNK(st.st_mode))
		return 0; /* no rule can sit on a symlink */
	uint64_t rights = list_rights(rule->right, S_ISDIR(st.st_mode), abi);
	if (!rights)
		return 0;
	return path_rule(ruleset, fd, rights, rule->path, e);
}

int landlock_apply_list(const struct landlock_list *l, struct landlock_report *r, struct err *e)
{
	*r = (struct landlock_report){.abi = landlock_abi()};
	int need = l->handle_net && l->min_abi < 4 ? 4 : l->min_abi;
	if (r->abi < (need > 1 ? need : 1)) {
		err_set(e, ENOTSUP, NULL, "the kernel's Landlock ABI is %d; this policy needs %d",
			r->abi, need > 1 ? need : 1);
		err_hint(e, r->abi ? "use a newer kernel, or the bwrap backend"
				   : "Landlock is not enabled in this kernel (lsm= boot parameter); "
				     "use the bwrap backend");
		return -1;
	}
	struct ll_ruleset_attr attr = {
		.handled_access_fs = LL_FS_EXECUTE | LL_READ | write_rights(r->abi),
		.handled_access_net = l->handle_net ? LL_NET_BIND_TCP | LL_NET_CONNECT_TCP : 0,
		.scoped = r->abi >= 6 ? LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL : 0,
	};
	_cleanup_close_ int rs = new_ruleset(&attr, r->abi, e);
	if (rs < 0)
		return -1;
	for (size_t i = 0; i < l->n; i++)
		if (list_rule(rs, &l->rules[i], r->abi, e) < 0)
			return -1;
	for (size_t i = 0; l->handle_net && i < l->nports; i++) {
		struct ll_net_port np = {.allowed_access = LL_NET_CONNECT_TCP, .port = l->ports[i]};
		if (syscall(SYS_landlock_add_rule, rs, LL_RULE_NET_PORT, &np, 0U) < 0)
			return err_set(e, errno, NULL, "cannot add the Landlock rule for port %u",
				       l->ports[i]);
	}
	if (ensure_no_new_privs(e) < 0)
		return -1;
	if (syscall(SYS_landlock_restrict_self, rs, 0U) < 0)
		return err_set(e, errno, NULL, "cannot enforce the Landlock ruleset");
	r->fs_applied = true;
	r->scoped = r->abi >= 6;
	r->read_denied = true;
	return 0;
}
