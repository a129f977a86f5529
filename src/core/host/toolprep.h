/* toolprep: the files behind the tool-cache plan (syscalls; core/plan/toolcache.c plans them).
 *
 * Before a jail starts: <state>/cache/NAME for every private cache (0700) and
 * <state>/toolconf/COPY, the credential-filtered copy of each registry configuration file the
 * host has. `agentjail cache` measures and empties the caches, never following a link a jail
 * left there. */
#pragma once
#include <stdint.h>

#include "core/plan/hostfacts.h"
#include "util/err.h"

int toolprep_prepare(const struct hostfacts *hf, struct err *e) WUR;
/* Bytes used by <state>/cache (0 when absent). */
int toolprep_cache_size(const char *state_dir, uint64_t *bytes, struct err *e) WUR;
/* Empty <state>/cache/NAME for every cache (the directories stay). */
int toolprep_cache_clean(const char *state_dir, uint64_t *freed, struct err *e) WUR;
