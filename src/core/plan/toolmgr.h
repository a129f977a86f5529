/* toolmgr: recognise the developer tool managers behind the PATH (pyenv, rustup + cargo, nvm,
 * fnm, volta, asdf, mise, conda, sdkman, bun, deno, uv, pipx, Go, poetry) and say exactly which
 * of their trees a jail needs, read-only; and what private package caches and registry
 * configuration go with them.
 *
 * Pure over the host-facts table (one table of managers, no syscalls), so every layout is
 * tested from fixtures (tests/data/toolmgr). A PATH directory, or a symlink in one (pipx, uv
 * tools, poetry in ~/.local/bin), is matched to the manager whose root holds its real path;
 * the manager's install tree is bound, nothing else of $HOME. A manager whose required file is
 * missing (a pyenv shim without its root) is reported once and binds nothing. */
#pragma once
#include <stdbool.h>

#include "core/plan/hostfacts.h"
#include "util/strv.h"

struct toolmgr_plan {
	struct strv found;    /* pairs (manager, root): recognised, in PATH order */
	struct strv binds;    /* pairs (path, manager): bind read-only (real paths) */
	struct strv masks;    /* pairs (path, manager): credentials-like files inside a bind */
	struct strv warnings; /* one line each: broken managers, trees left out */
	struct strv env;      /* variables naming manager roots, passed through: NAME=VALUE */
};

void toolmgr_plan_free(struct toolmgr_plan *t);
/* Recognise the managers behind `path_env` (the host's PATH). */
void toolmgr_recognise(struct hostfacts *hf, const char *path_env, struct toolmgr_plan *out);
/* The manager whose tree holds `real` (a resolved program): its binds are appended to
 * `binds` (no duplicates). false when no manager holds it (agent lookup, resolve.c). */
bool toolmgr_binds_for(struct hostfacts *hf, const char *real, struct strv *binds);
/* The manager that asked for bind `path`, or NULL. */
const char *toolmgr_bind_name(const struct toolmgr_plan *t, const char *path);
