/* initbin: where the jail's init is (doc/design.md §2, §7). agentjail never runs a jail with
 * itself as PID 1: the init is the small static `agentjail-init`, found beside agentjail (the
 * build tree: build/rel/agentjail-init) or, for agentjail installed at PREFIX/bin, at
 * PREFIX/libexec/agentjail/init. A missing one is an error, never a fallback. */
#pragma once
#include "core/plan/initpath.h"
#include "util/err.h"

/* Open the init of the running agentjail (O_PATH, close-on-exec): the first of
 * initpath_candidates (core/plan/initpath.h) that exists. It must be a regular, executable
 * file owned by root or by agentjail's own owner and writable by no one else (it runs as the
 * jail's PID 1 and holds the control channel). Returns the fd and sets *path (the caller frees
 * it; NULL allowed), or -1 with e naming every place looked at and the fix. */
int initbin_open(char **path, struct err *e) WUR;
/* The same for helper h (core/plan/initpath.h): its places, the same checks (it runs with
 * agentjail's rights: the remote backend holds the service's API key). */
int helperbin_open(const struct helperpath *h, char **path, struct err *e) WUR;
