/* secretsrc: where a secret's value comes from on the host (doc/design.md §4d): a variable of
 * agentjail's own environment, or a command run on the host (no shell) before the jail starts.
 * The value is checked (secret_value_check) and handed to the caller, who wipes it; it is
 * never in an error, which names the secret and its source only. */
#pragma once
#include <stddef.h>

#include "core/plan/secrets.h"
#include "util/err.h"
#include "util/strv.h"

/* The value of d: from env ("NAME=VALUE" strings) for SS_ENV, else its command's stdout (one
 * trailing newline removed; stdin and stderr the user's, so a password manager can ask; at most
 * SECRET_COMMAND_SECONDS and SECRET_VALUE_MAX bytes). Allocated, NUL-terminated, *len bytes;
 * -1 with e. */
int secretsrc_read(const struct secret_def *d, const struct strv *env, char **value, size_t *len,
		   struct err *e) WUR;
/* Zero and free a value. */
void secretsrc_wipe(char *value, size_t len);
