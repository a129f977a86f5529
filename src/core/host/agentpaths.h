/* agentpaths: what an agent's profile needs on the host before its jail starts (doc/design.md
 * §3 step 5): its config paths, so what it saves there lasts (in the jail $HOME is a tmpfs), and
 * its instruction and token directories, so they can be bound read-only or masked. Nothing
 * here fails the run: each path that cannot be made is described in `failed` ("cannot create
 * PATH (why): what it costs") for the command layer to say. */
#pragma once
#include "core/plan/policy.h"
#include "core/plan/profile.h"
#include "util/strv.h"

/* The profile's writable config paths (pol->agent_rw): directories 0700 with their missing
 * parents below `home` (0700 too: ~/.config, ~/.local/share for a new user), files 0600 with
 * the profile's empty content (only when it has one); nothing half-written is left behind. */
void agentpaths_make(const struct profile *pr, const char *home, const struct policy *pol,
		     struct strv *failed);
/* The places of the profile's private directories (pol->agent_private) that lie inside its
 * writable dirs, 0700, so they can be mount points (codex's skills/.system inside a read-only
 * skills/); no symlink below the writable dir is followed. */
void agentpaths_make_private(const struct profile *pr, const struct policy *pol,
			     struct strv *failed);
/* The instruction and token directories of the profile under `home`, 0700 (a missing parent is
 * left alone: the agent makes them itself). */
void agentpaths_make_dirs(const struct profile *pr, const char *home, char **environ_,
			  const struct policy *pol, struct strv *failed);
