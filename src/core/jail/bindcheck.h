/* bindcheck: what each bind of the jail must show, checked by the jail's init before the
 * command starts (doc/design.md §3, "Mount identity").
 *
 * agentjail opens every bind source itself (O_PATH, no symlink followed) and hands bwrap the
 * fd; bubblewrap resolves that fd to a path, mounts the path, and compares device and inode of
 * what it mounted with the fd's right after that mount. What happens to the view afterwards — a
 * later mount over the destination or above it, a directory on the way renamed on the host —
 * it does not look at again. So agentjail sends the jail's init, on the control channel, the
 * identity (device, inode, file type) of each source it opened with the destination where the
 * final view shows it, and init compares what it finds there (lstat) before it starts the
 * command; any difference refuses the run (125, naming the path).
 *
 * The table is records of "DEV INO TYPE PATH\0" (numbers in hex). Pure: the format, its
 * parser and the comparison over a stat function the caller gives (no system call of its own:
 * unit-tested over a made-up view); built into agentjail-init too (Makefile INIT_SRC). */
#pragma once
#include <stddef.h>

#include "util/err.h"
#include "util/strbuf.h"

struct bindcheck_id {
	unsigned long long dev, ino;
	unsigned type; /* the S_IFMT bits of st_mode */
};

/* Append the record for `path` to b. */
void bindcheck_add(struct strbuf *b, const struct bindcheck_id *id, const char *path);

/* lstat-like: 0 with *out filled, or -errno. */
typedef int (*bindcheck_stat_fn)(const char *path, struct bindcheck_id *out);

/* Check every record of buf[0..len) against `st`. 0 when each path shows the identity it was
 * sent with, or cannot be reached at all (EACCES: not by the command either, which has the
 * same credentials). -1 with e filled (the path, what it is and what was opened) at the first
 * that differs, is missing, or when the table is malformed. */
int bindcheck_verify(const char *buf, size_t len, bindcheck_stat_fn st, struct err *e) WUR;
