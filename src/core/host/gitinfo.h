/* gitinfo: the git facts of a workspace that decide what must be protected
 * (doc/design.md §3 steps 6 and 7): where the git directory really is (worktrees and submodules keep it outside the work
 * tree), its common directory, and the hooks directory named by core.hooksPath. A hook planted
 * in any of them runs on the host the next time the user runs git, so the jail must not be able
 * to write there. */
#pragma once
#include <stdbool.h>

#include "core/plan/gitcfg.h" /* git_config_each, the config syntax */
#include "util/err.h"
#include "util/strv.h"

struct git_info {
	char *dotgit_kind; /* "dir", "file", "symlink", "other" (a fifo…), NULL when absent */
	char *gitdir;      /* absolute, normalized: <ws>/.git when a directory; the target named by
			    * a .git file (worktree, submodule); NULL when absent, a symlink, or a
			    * malformed .git file */
	char *commondir;   /* gitdir/commondir's content resolved against gitdir, or NULL */
	char *hooks_path;  /* core.hooksPath, absolute and normalized, or NULL */
	struct strv includes; /* every file an include.path or includeIf.*.path named, absolute and
			       * normalized: one inside the workspace is git config the jail could
			       * write (core.fsmonitor…), so it is protected like .git/config */
};

/* The path named by a .git file ("gitdir: <path>", trailing CR/LF allowed), possibly relative
 * (to the directory holding the .git file). NULL when malformed or empty. */
char *git_parse_gitfile(const char *content);

/* The last value of section.key in a config text (section and key case-insensitive; only a
 * plain [section] matches, not [section "sub"]); "true" for a key without "="; NULL when not
 * set. Variables before a syntax error count: a path wrongly protected costs nothing, a missed
 * one does. */
char *git_config_get(const char *text, const char *section, const char *key);

/* Resolve the git facts of `workspace` (absolute; taken as the work tree root). home is the
 * user's home directory (may be NULL).
 *
 * The .git entry is examined without following it. Files inside the workspace and the git
 * directory are opened with O_NOFOLLOW (a planted symlink there is refused, not followed) and
 * size-bounded. A missing .git is not an error.
 *
 * core.hooksPath follows git's order, last wins: /etc/gitconfig, $home/.config/git/config,
 * $home/.gitconfig, the repository's config (commondir/config, else gitdir/config), then
 * gitdir/config.worktree when extensions.worktreeConfig is on. include.path is followed
 * (relative to the including file, ~/ expanded, depth ≤ 10); includeIf.*.path is followed as
 * if its condition held, since evaluating it is not worth the code: the one wrong answer is a
 * conditional hooksPath that does not apply overriding an earlier one. The user's own config
 * files (outside the workspace) may be symlinks, as dotfile managers make them. When .git is a
 * symlink, its config is still read through it: the result only widens protection. The global
 * configs apply even without a .git (a `git init` in the jail would use them).
 * A relative hooksPath is relative to the workspace; a leading ~/ expands with home; an empty
 * one disables hooks (NULL).
 *
 * Errors (-1): a relative workspace, a file that exists but cannot be read (permissions, too
 * large, not a regular file, a symlink where none is followed), or includes nested too deep. */
int git_resolve(const char *workspace, const char *home, struct git_info *out,
		struct err *e) WUR;

/* Validate the pointers git_resolve followed (the .git file and <gitdir>/commondir) before
 * anything is bound from them: a jailed run can rewrite them, and the next jail binds what they
 * name, writable (doc/design.md §3 step 6). Accepted:
 *   - a git dir (or common dir) inside the workspace that is a real directory;
 *   - outside the workspace, a linked worktree's git dir C/worktrees/NAME whose `gitdir` file
 *     points back at <workspace>/.git and whose commondir is C;
 *   - outside the workspace, a submodule's git dir S/.git/modules/... where S holds the
 *     workspace, or whose core.worktree names the workspace.
 * Never a directory that is, or holds, one of `forbidden` ($HOME, agentjail's state and config
 * dirs; NULL-terminated, NULL entries skipped). Paths are compared after realpath: a symlink on
 * the way is judged where it leads (gi->gitdir and gi->commondir are replaced by their real
 * paths). Errors (-1): e names the pointer file, where it points and how to repair it. */
int git_check_pointers(const char *workspace, const char *const *forbidden, struct git_info *gi,
		       struct err *e) WUR;
void git_info_free(struct git_info *gi);
