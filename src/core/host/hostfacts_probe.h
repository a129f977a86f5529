/* hostfacts_probe: fill hostfacts from the running system. */
#pragma once
#include "core/plan/hostfacts.h"
#include "core/plan/policy.h"

/* Resolve the workspace and the --dev paths on the host (symlinks the user typed are followed
 * here, once; what is derived later never follows one). The workspace must exist: -1
 * otherwise. --rw, --ro and --hide are resolved once the host facts are gathered, with their
 * rules (core/plan/bindpath.h). */
int policy_canonicalize(struct policy *pol, struct err *e) WUR;

/* The facts a path's rules need (core/plan/bindpath.h): the live probe, the uid, $HOME and
 * agentjail's state and configuration directories, found as a run finds them. */
int hostfacts_for_paths(struct hostfacts *hf, struct err *e) WUR;

/* Gather the facts for a run of `cmd` under `pol` (already canonicalized). Installs the lazy
 * lstat/readdir probe. */
int hostfacts_gather(struct hostfacts *hf, struct policy *pol, const struct strv *cmd,
		     char **environ_, struct err *e) WUR;

/* Answer the fact table's questions from the live filesystem (lstat, readdir, a file's "#!"). */
void hostfacts_use_host(struct hostfacts *hf);

/* resolve_command over the live filesystem, PATH taken from the environment. */
struct resolved;
int hostfacts_resolve(const char *name, const char *home, const char *cwd, const char *skip_real,
		      struct resolved *out, struct err *e) WUR;
