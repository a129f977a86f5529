/* bindpath: the paths of --rw, --ro and --hide (from the flags, configuration files, agent
 * profiles and stored sessions) resolved over the host facts, and the places no jail is ever
 * given (doc/design.md §3, §3b). Pure: every question about the host goes to hostfacts.
 *
 * A path is taken lexically as given (`..` in it is the directory above, never a link's
 * target's), then every symlink on its way is followed as the kernel does. Two rules:
 *
 * - A path given inside the workspace must stay inside it. The workspace is the project's,
 *   and a cloned repository that ships `build -> ../..` would otherwise turn the usual
 *   `--rw build` into a writable $HOME. The error names the link, its target and where it
 *   leads; naming that place itself is the user's explicit choice, and allowed.
 * - Never $HOME or an ancestor of it, never agentjail's state or configuration directory or a
 *   path inside one, whatever the path given (for --rw and --ro: hiding narrows). */
#pragma once
#include <stdbool.h>

#include "core/plan/hostfacts.h"
#include "core/plan/policy.h"
#include "util/err.h"

/* Why `real` (a path with no symlink left in it) is never bound into a jail, or NULL: it is
 * /, $HOME or an ancestor of it, or lies in the state or configuration directory. Each of
 * those is compared as hostfacts names it and as it resolves. */
const char *bindpath_never(struct hostfacts *hf, const char *real);

/* The error for `opt` `given`, which is (or leads to) `real`, refused by bindpath_never for
 * `why`: -1. */
int bindpath_refuse(struct err *e, const char *opt, const char *given, const char *real,
		    const char *why);

/* Resolve `given` (absolute, normalized), named in errors by `opt` ("--rw", "rw", …), into
 * *real: every symlink followed, or `given` itself when it does not resolve (missing: the
 * caller's existence rule applies). -1 with e filled, *real NULL, when a symlink in the
 * workspace leads out of it, or (with `never`) when the result is a place bindpath_never
 * refuses. */
int bindpath_resolve(struct hostfacts *hf, const char *opt, bool never, const char *given,
		     const char *workspace, char **real, struct err *e) WUR;

/* bindpath_resolve over the policy's rw and ro (with the never rule) and hide, in place. */
int bindpath_resolve_policy(struct hostfacts *hf, struct policy *pol, struct err *e) WUR;
