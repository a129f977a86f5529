/* gitscan_check: after the run, the git repositories that appeared below the workspace
 * (doc/design.md §3 step 7, §3b). Walks again with gitscan (core/host/gitscan.h) and moves aside
 * what in a new repository would run a command, through snapshot_check. */
#pragma once
#include <stdbool.h>

#include "core/jail/snapshot.h"
#include "util/err.h"
#include "util/strv.h"

struct gitscan_before {
	const struct strv *roots;  /* walked before the run (the writable workspace) */
	const struct strv *gitdirs; /* git dirs whose modules/ was scanned before the run */
	const struct strv *known;  /* the .git entries found then */
	bool truncated;            /* that walk was partial */
	long long since;           /* when it started (seconds since the epoch) */
};

/* After the run: walk the roots again (and the modules/ of `gitdirs` and of each git
 * directory found); a .git, bare repository or submodule git dir not known before (when the first walk was
 * partial: one whose inode changed since `since`) is a violation appended to `out`: for a
 * directory, git_exec_names and modules/ inside it are moved aside into `quarantine_dir`; a .git
 * file or symlink (a pointer) is moved aside itself. */
int gitscan_check(const struct gitscan_before *b, const char *quarantine_dir,
		  struct violations *out, struct err *e) WUR;
