/* gitprotect: which paths inside the git directories a jail can reach make git run a command on
 * the host, and so must be read-only inside the jail (or, when absent, watched). Pure: every
 * question about the host goes to the hostfacts table.
 *
 * What git reads from a git dir that can run a command: `config` (core.fsmonitor, core.pager,
 * core.sshCommand, aliases, filter and diff drivers, credential helpers…), `config.worktree`
 * (with extensions.worktreeConfig), `hooks/` (githooks(5)), `commondir` (which config and
 * hooks are used), `gitdir` (a linked worktree's way back), `info/` (attributes select filter
 * and diff drivers; sparse-checkout and exclude change what git reads). */
#pragma once
#include "core/plan/hostfacts.h"
#include "util/strv.h"

/* The names above, NULL-terminated. */
extern const char *const git_exec_names[];

/* Every git dir in reach, each once: the workspace's git dir and common dir (hf->gitdir,
 * hf->commondir), each nested repository's .git directory (hf->nested_git), and inside each of
 * them the submodule git dirs under modules/ (names with slashes included, bounded) and the
 * linked worktrees' git dirs under worktrees/. Bounded (GITPROTECT_MAX_DIRS). */
#define GITPROTECT_MAX_DIRS 256
void gitprotect_gitdirs(struct hostfacts *hf, struct strv *out);

/* The paths to protect: git_exec_names inside each git dir in reach, each config file git
 * includes (hf->git_includes), and each nested .git that is a file or symlink (a pointer to a
 * git dir, rewritten to point at a planted one). Missing ones are included: they are watched. */
void gitprotect_candidates(struct hostfacts *hf, struct strv *cand);
