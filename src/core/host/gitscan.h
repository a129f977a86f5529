/* gitscan: the git repositories nested below the workspace (doc/design.md §3 step 7). A repository
 * the jail creates is one git on the host runs in: the outer `git status` recurses into a
 * gitlink, and any git command run in that directory reads its config and hooks. Those found
 * before the run are protected like the workspace's own (gitprotect); one that appears during
 * the run is reported and what in it would run a command is moved into the quarantine
 * (core/jail/gitscan_check.h). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"
#include "util/strv.h"

/* The walk's bound, in directories read. Measured on the CI-like VM (ext4, 2 cores, load ~7):
 * a workspace holding a node_modules of 20000 directories costs 0.19 s of system time per walk
 * (about 10 us a directory, most of it the kernel reading the directory; opendir/readdir or raw
 * getdents64 make no real difference), 0.3-0.6 s wall under that load; a workspace without one
 * (a few hundred directories) costs no measurable time. 50000 directories covers a large
 * JavaScript project while keeping the worst case near half a second before and after a run.
 * Past the bound: before the run, the nested repositories not seen are not protected and are
 * told apart afterwards by ctime (no process can set it back); after the run, the directories
 * not read are reported as a violation, never passed silently. */
#define GITSCAN_MAX_DIRS 50000

/* Every `.git` entry (directory, file or symlink) strictly below `root`, root/.git excluded,
 * and every directory shaped like a bare repository (HEAD, objects/, refs/), without following
 * symlinks or descending into a .git directory. *truncated when the bound
 * was reached (the list is then partial). A directory that cannot be read is skipped. */
int gitscan_walk(const char *root, size_t max_dirs, struct strv *found, bool *truncated,
		 struct err *e) WUR;

/* The submodule git dirs below gitdir/modules (a directory with HEAD and objects/; submodule
 * names may hold slashes, and submodules have submodules: up to 8 levels), appended to found. */
void gitscan_modules(const char *gitdir, struct strv *found);
