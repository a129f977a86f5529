/* resolve: find a command the way the jail will, and say what of $HOME it needs to run.
 *
 * Pure over the host-facts table (lstat facts with symlink targets, a script's "#!" line), so
 * every install layout is tested from fixtures: native installers (~/.local/bin/claude →
 * ~/.local/share/claude/versions/V), npm global prefixes and nvm/fnm node under $HOME, volta and
 * asdf shims, `#!/usr/bin/env node` scripts whose interpreter must resolve in the jail too, and
 * symlink chains through any component. */
#pragma once
#include <stdbool.h>

#include "core/plan/hostfacts.h"
#include "util/err.h"
#include "util/strv.h"

struct resolved {
	char *path;          /* where it was found (absolute, as on PATH) */
	char *real;          /* the file after every symlink */
	char *interp;        /* the interpreter's real file when it is a script, else NULL */
	struct strv binds;   /* what must be bound read-only: files or dirs the jail does not
			      * show otherwise (under $HOME, or outside the system directories) */
	struct strv links;   /* pairs (link path, its target as read): such symlinks on the way,
			      * recreated in the jail with --symlink */
};

void resolved_free(struct resolved *r);

/* Find `name` (a bare name searched on `path_env`, or a path relative to hf->cwd) and collect
 * what it needs. A candidate whose real file is `skip_real` (agentjail itself, seen through a
 * shim) is passed over. -1 with e filled when nothing executable is found, or when a script's
 * interpreter cannot be found. */
int resolve_command(struct hostfacts *hf, const char *name, const char *path_env,
		    const char *skip_real, struct resolved *out, struct err *e) WUR;

/* Follow every symlink in `path` (absolute, normalized) over the fact table. Symlinks met are
 * appended to `links` as (path, target) pairs when links is not NULL. NULL when a component is
 * missing or the chain is too long. */
char *hf_realpath(struct hostfacts *hf, const char *path, struct strv *links);

/* Whether the jail must be shown `p` explicitly: anything outside the system directories the
 * jail sees read-only (under $HOME, or a tool tree in /srv); never $HOME itself, an ancestor of
 * it, or the kernel's filesystems. */
bool resolve_needs_showing(const struct hostfacts *hf, const char *p);

/* The directory (or file) that holds a program's files: the package root for node_modules
 * installs, versions/V for versioned installs, else the program's directory. */
char *resolve_install_root(const char *real);
