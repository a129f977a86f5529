/* llhome: the private home of the Landlock backend on disk (doc/design.md §4c): made under the
 * run's private temporary directory from the plan's entries (core/backend/landlock/llplan.h)
 * before the command starts, and, after it, what the command put in place of a writable file
 * bind's symlink written back into the bind's source (claude renames a new ~/.claude.json over
 * the old one: over bwrap's bind that rename fails and claude writes the file in place, which
 * reaches the copy; here the rename replaces the symlink). */
#pragma once
#include "core/backend/landlock/llplan.h"
#include "util/err.h"
#include "util/strv.h"

/* Make p->home (0700) and its entries. Nothing when the plan has no private home. -1 (e
 * filled) when an entry cannot be made: nothing may run then. */
int llhome_make(const struct ll_plan *p, struct err *e) WUR;

/* After the run (nothing of the command left): each writeback entry whose symlink the command
 * replaced by a regular file has that file's bytes written into the entry's target. What could
 * not be written back, or what stood there instead of a file, is described in `notes`. */
void llhome_writeback(const struct ll_plan *p, struct strv *notes);
