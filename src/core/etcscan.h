/* etcscan: the /etc entries an unprivileged user could not read (DESIGN §3 step 1).
 *
 * When agentjail runs as root, the jail's uid 0 reads every file of a read-only /etc, so entries
 * that the host keeps from ordinary users (no world-read bit) are masked. Rules:
 * - a file (or device node) without S_IROTH is listed;
 * - a directory without S_IROTH or without S_IXOTH is listed and not descended (its whole
 *   content is masked with it, so nothing below a listed directory appears separately);
 * - symlinks are skipped: their target is judged where it lives; sockets and FIFOs are skipped;
 * - an entry that cannot be examined (open or read error other than "vanished") is listed:
 *   when in doubt, mask;
 * - if etc_root itself is not world-readable and searchable, the list is just etc_root.
 *
 * The scan costs ≈ 3 ms for /etc's 1,300 entries, so its result is cached in cache_file together
 * with the device, inode, mtime and ctime (nanoseconds) of every directory met. A cached list is
 * used only while each recorded directory still has the same four values: adding, removing or
 * renaming an entry changes its parent's mtime and ctime, and a new subdirectory can only appear
 * by changing its parent. A chmod/chown of a directory changes that directory's own ctime and is
 * detected too.
 *
 * Known limit, accepted by the design: a chmod/chown of an existing FILE changes only that
 * file's ctime, not its directory's, so it does not invalidate the cache. `refresh` (used by
 * `doctor`) forces a rescan. Package managers replace files by rename, which is detected.
 *
 * Timestamps have a granularity (a kernel tick, a second on some filesystems): a directory
 * changed in the same tick as the scan could change again without moving its timestamps. So a
 * scan that met a directory whose mtime and ctime are both within two seconds of the scan (or in
 * the future) is returned but not cached; the next call scans again.
 *
 * The cache is trusted only if it is a regular file owned by the effective uid, not writable by
 * group or others, well-formed and made for the same etc_root; anything else is ignored and
 * rewritten. It is written atomically (temporary file in the same directory, mode 0600, then
 * rename); missing parent directories are created with mode 0700. Failing to write the cache is
 * not an error.
 *
 * Cache format (text, one record a line; paths escape "\" as "\\" and newline as "\n"):
 *   agentjail-etcscan 1
 *   root <path>
 *   d <dev> <ino> <mtime s> <mtime ns> <ctime s> <ctime ns> <path>     (first one is root)
 *   m <path>                                                          (a listed entry)
 *   end <number of d lines> <number of m lines>
 */
#pragma once
#include <stdbool.h>

#include "util/err.h"
#include "util/strv.h"

/* Append to `out` the sorted (strcmp order), absolute, normalized paths of the entries below
 * etc_root that have to be masked (rules above). A relative etc_root is taken from the current
 * directory. cache_file may be NULL (no caching). refresh = true ignores an existing cache and
 * rewrites it. Fails (-1, out untouched) only when etc_root itself cannot be opened or read. */
int etcscan_get(const char *etc_root, const char *cache_file, bool refresh, struct strv *out,
		struct err *e) WUR;
