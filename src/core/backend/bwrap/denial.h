/* denial: the one-line reports that blame the sandbox for a failed run (doc/design.md §6), each
 * only on evidence: a violation the jail recorded (a protected path it moved aside), or init's
 * report that it could not execute the command. Pure: the caller gathers the evidence. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "util/strv.h"

/* Why a protected path (doc/design.md §3 step 7, §3b) is read-only in the jail, and what to do
 * instead, as one clause: "git runs hooks on the host; …". Never NULL. */
const char *denial_protected_why(const char *path);

/* The line for a failed run after the jail moved aside `n` protected paths (paths[i]) it
 * wrote: names the first, why it is protected, and how many more. Caller frees. */
char *denial_moved_line(const char *const *paths, size_t n);

/* The line for a command init could not find in the jail (exit 127) that exists on the host at
 * `host_path`: the option that brings `dir` (its directory) into the jail's view. A script's
 * missing interpreter makes execve say ENOENT too: `interp` (or NULL) and its directory
 * `idir` are named then. Caller frees. */
char *denial_not_in_view(const char *cmd, const char *host_path, const char *dir,
			 const char *interp, const char *idir);

/* The hint after a run in which git tried to rewrite `path` (~/.gitconfig: `git config
 * --global`), which the jail binds read-only from the host (the rename over it fails with
 * EBUSY): why, and how to set an identity instead. Caller frees. */
char *denial_gitconfig_line(const char *path);
