/* treewalk: measure or empty a tree in agentjail's state directory that jails wrote (a private
 * cache, a persisted home): never following a symlink, never leaving the tree, with a fixed
 * number of descriptors and no recursion whatever its depth (a jail makes a tree 100,000
 * directories deep in a second; one descriptor per level ran out at ~500, and one stack frame
 * per level would overflow the stack: `agentjail cache|home` must still measure and remove
 * it). It goes down by openat(name, O_NOFOLLOW) and back up by "..", checked to be the
 * directory it came from (device and inode), so a tree changed under it is an error, never a
 * walk elsewhere. */
#pragma once
#include <stdint.h>

#include "util/err.h"

enum treewalk_do {
	TREEWALK_SIZE,       /* add up the sizes (st_blocks); a directory the user cannot read (a
			      * jail's chmod 000) is left out */
	TREEWALK_REMOVE,     /* and remove everything inside (directories made 0700 first: Go's
			      * module cache is read-only, a jail may leave a directory 0000) */
	TREEWALK_EMPTY_DIRS, /* and remove the files here and what is in the directories here,
			      * keeping those directories */
};

/* Walk what is inside the directory `dfd` (which stays the caller's; the directory itself is
 * neither counted nor removed); `shown` names it in errors. *bytes grows by what was found. */
int treewalk(int dfd, const char *shown, enum treewalk_do what, uint64_t *bytes,
	     struct err *e) WUR;
