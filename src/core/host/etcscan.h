/* etcscan: the entries of a read-only tree (/etc, /usr, /opt, a toolchain under $HOME) that an
 * unprivileged user could not read (doc/design.md §3 step 1). One scanner for every tree.
 *
 * When agentjail runs as root, the jail's uid 0 passes the owner check of every root-owned file
 * (it has no capabilities, so permission bits still apply), so entries the host keeps from
 * ordinary users are masked. Rules (scan_hidden decides from mode and owner):
 * - a file (or device node) without S_IROTH is listed when the scanning uid could read it: its
 *   owner bits when it owns it, else any group or other read bit (a group the jail is in, or a
 *   POSIX ACL entry, is not resolved: counted as readable — when in doubt, mask);
 * - a directory without S_IROTH or without S_IXOTH is not descended; it is listed (its whole
 *   content masked with one mount) when the scanning uid could list or enter it by the same
 *   rule. One that uid cannot enter either (0700 of another user) needs no mask;
 * - symlinks are skipped: their target is judged where it lives; sockets and FIFOs are skipped;
 * - an entry that cannot be examined (open or read error other than "vanished") is listed:
 *   when in doubt, mask;
 * - if the root itself is not world-readable and searchable, the list is just the root;
 * - a root that is a file (bound on its own) is judged like any file: listed or not, no cache;
 * - `skip` paths (subtrees scanned as trees of their own, e.g. /usr/local in /usr) are passed.
 *
 * The scan costs ≈ 3 ms for /etc's 1,300 entries but ≈ 1 s for /usr (156,000 entries, 17,000
 * directories on a Debian 12 development machine), so its result is cached in cache_file and a
 * cached list is used only while what it recorded is unchanged. What is recorded — and so which
 * host changes are noticed — depends on the tree's size (scan_choose_check):
 * - ENTRIES (at most entry_budget entries): the device, inode, mtime and ctime (nanoseconds) of
 *   every directory AND every other entry. Sound: adding, removing or renaming an entry moves
 *   its parent's timestamps; a chmod/chown moves the entry's own ctime.
 * - DIRS (larger, at most dir_budget directories, or any size when stamps are not allowed — /etc
 *   as before): every directory. Known limit: a chmod/chown of an existing FILE changes only that
 *   file's ctime, so it does not invalidate the cache until a refresh (`doctor`) or a change in
 *   its directory. Package managers replace files by rename, which is detected.
 * - STAMPS (a tree too large to stat every directory per run: /usr): the root and its direct
 *   subdirectories, the package managers' databases (`stamps`: a dpkg/rpm/pacman/apk transaction,
 *   dpkg-statoverride included, rewrites them), and an age limit (max_age). Residual risk, taken
 *   knowingly: a file or directory made root-only BY HAND deep in such a tree (chmod, or created
 *   there without a package manager) stays readable in root's jails until the cache is older
 *   than max_age, or `doctor` refreshes it. Checking every directory of /usr costs ≈ 90 ms a run
 *   here (lstat ≈ 5 µs), every entry ≈ 650 ms; the run's whole startup budget is ~1 ms. The
 *   places an administrator puts things by hand (/usr/local, /opt, /etc) are trees of their own
 *   and get the stronger checks while they are small.
 *
 * A tree whose options allow stamps (one bound read-only: /usr, /opt, a toolchain) is scanned
 * on every CPU (4 at most) past its first level: the first pass reads the root and its
 * directories and queues the directories below them, which threads then scan whole by the
 * same rules, each opened relative to its parent's fd; the results are merged. /etc (≈ 3 ms)
 * is scanned on one thread.
 *
 * Timestamps have a granularity (a kernel tick, a second on some filesystems): an entry changed
 * in the same tick as the scan could change again without moving its timestamps. So a scan that
 * recorded an entry whose mtime and ctime are both within the window of the scan (or in the
 * future) is returned but not cached; the next call scans again.
 *
 * The cache is trusted only if it is a regular file owned by the effective uid, not writable by
 * group or others, well-formed and made for the same root; anything else is ignored and
 * rewritten. It is written atomically (temporary file in the same directory, mode 0600, then
 * rename); missing parent directories are created with mode 0700. Failing to write the cache is
 * not an error.
 *
 * Cache format (text, one record a line; paths escape "\" as "\\" and newline as "\n"):
 *   agentjail-treescan 1
 *   root <path>
 *   check <1 entries|2 dirs|3 stamps> <scan time, s>
 *   d <dev> <ino> <mtime s> <mtime ns> <ctime s> <ctime ns> <path>   (a directory; first: root)
 *   f <dev> <ino> <mtime s> <mtime ns> <ctime s> <ctime ns> <path>   (another entry)
 *   p <dev> <ino> <mtime s> <mtime ns> <ctime s> <ctime ns> <path>   (a package database stamp)
 *   m <path>                                                        (a listed entry)
 *   end <number of d, f and p lines> <number of m lines>
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/err.h"
#include "util/strv.h"

enum scan_check {
	SCAN_CHECK_ENTRIES = 1,
	SCAN_CHECK_DIRS = 2,
	SCAN_CHECK_STAMPS = 3,
};

/* Defaults (a zero field in scan_opts means the default). At ≈ 0.5 µs an lstat on ordinary
 * hardware (5 µs on a loaded VM), a few hundred per tree keep a cached run well under 1 ms. */
#define SCAN_ENTRY_BUDGET 256
#define SCAN_DIR_BUDGET 128
#define SCAN_MAX_AGE 3600

struct scan_opts {
	const char *const *skip;   /* NULL-terminated absolute paths not descended, or NULL */
	bool allow_stamps;         /* a large tree may be checked by STAMPS (else DIRS at most) */
	const char *const *stamps; /* NULL-terminated package-database paths for STAMPS, or NULL */
	size_t entry_budget;       /* ENTRIES up to this many entries */
	size_t dir_budget;         /* DIRS up to this many directories (when stamps are allowed) */
	long max_age;              /* seconds a STAMPS cache is trusted */
};

struct scan_info {
	enum scan_check check; /* how the answer's cache is (or would be) checked */
	bool from_cache;       /* the cache answered */
	bool stored;           /* a scan was made and its cache written */
	bool aging;            /* a STAMPS cache answered, past half its age limit: refresh it
				* before it expires (treescan_refresh_detached) */
	size_t nentries;       /* entries judged by the scan (0 when the cache answered) */
	size_t ndirs;          /* directories met by the scan */
};

/* Whether an entry with this st_mode and owner is to be masked for a jail running as `self`:
 * others cannot read it (list and enter it, for a directory) and `self` could (rules above). */
bool scan_hidden(mode_t mode, uid_t owner, uid_t self);
/* How a scan of that many entries and directories is checked when cached (NULL: defaults). */
enum scan_check scan_choose_check(size_t nentries, size_t ndirs, const struct scan_opts *o);

/* Append to `out` the sorted (strcmp order), absolute, normalized paths of the entries below
 * root that have to be masked (rules above). A relative root is taken from the current
 * directory. cache_file may be NULL (no caching); o and info may be NULL. refresh = true ignores
 * an existing cache and rewrites it. Fails (-1, out untouched) only when root itself cannot be
 * opened or read. */
int treescan_get(const char *root, const char *cache_file, bool refresh,
		 const struct scan_opts *o, struct strv *out, struct scan_info *info,
		 struct err *e) WUR;
/* /etc's scan: treescan_get with the defaults (never STAMPS). */
int etcscan_get(const char *etc_root, const char *cache_file, bool refresh, struct strv *out,
		struct err *e) WUR;

/* The cache file of a tree: <state_dir>/treescan-<root, "/" as %2F>.cache; NULL when the name
 * would be too long (no cache then). */
char *treescan_cache_path(const char *state_dir, const char *root);

/* Where root's scan caches are kept: TREESCAN_MACHINE_DIR, made 0700 when missing, as long as
 * it is a directory of root's that nobody else can write; else state_dir (as for any other
 * uid). What a tree holds does not depend on the state directory, so a new one (a first run,
 * AGENTJAIL_STATE_DIR, a test's or a bench's) does not rescan /usr (doc/design.md §3b). NULL
 * when state_dir is NULL and the machine's directory cannot be used. */
#define TREESCAN_MACHINE_DIR "/var/cache/agentjail"
char *treescan_cache_dir(const char *state_dir);

/* Rescan root in a detached process of the lowest priority (`self_exe __rescan CACHE_DIR ROOT`,
 * treescan_rescan), its standard fds on /dev/null and no other fd inherited, so that the
 * caller neither waits for it nor keeps a pipe open through it. The caller has used a cache
 * that is still valid: this only renews it before it expires. */
void treescan_refresh_detached(const char *self_exe, const char *cache_dir, const char *root);
/* treescan_bound(refresh) of root into cache_dir, one at a time per tree (a lock file beside
 * the cache; 0 at once when another holds it). */
int treescan_rescan(const char *cache_dir, const char *root) WUR;

/* A tree bound read-only into root's jails, scanned with agentjail's settings: stamps allowed
 * (the package databases), and /usr without /usr/local, which is scanned as a tree of its own
 * (an administrator's, where the stronger checks apply while it is small) and merged in.
 * Caches in cache_dir (treescan_cache_dir). info (may be NULL) describes the weakest check of the parts. */
int treescan_bound(const char *cache_dir, const char *root, bool refresh, struct strv *out,
		   struct scan_info *info, struct err *e) WUR;
