/* trust: the projects whose .agentjail.toml the user trusted (`agentjail trust`, doc/design.md
 * §8). One small file, <state>/trusted (0600, replaced atomically), one line per project file:
 * its SHA-256 in hex, a tab, its canonical path. A file whose content changed no longer matches
 * its line: it is untrusted again until trusted anew. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"
#include "util/strv.h"

/* The hex SHA-256 of len bytes (65 bytes with the NUL). */
void trust_hash(const void *data, size_t len, char hex[65]);
/* Whether path (canonical) is trusted with this hash. A store that exists but cannot be read,
 * or that someone else could have written, is an error (-1 with e). */
int trust_lookup(const char *state_dir, const char *path, const char *hex, bool *trusted,
		 struct err *e) WUR;
/* Record path with hex (replacing an older line of that path). */
int trust_add(const char *state_dir, const char *path, const char *hex, struct err *e) WUR;
/* Forget path: 1 when it was there, 0 when not, -1 with e. */
int trust_remove(const char *state_dir, const char *path, struct err *e) WUR;
/* The lines as "HEX\tPATH" (none when there is no store). */
int trust_list(const char *state_dir, struct strv *out, struct err *e) WUR;
