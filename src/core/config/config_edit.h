/* config_edit: add strings to a list key of a configuration file's text, keeping every other
 * byte of it (comments, order, spacing), for `agentjail log --suggest --apply` (doc/design.md
 * §8). Pure: the caller reads and writes the file. */
#pragma once
#include <stddef.h>

#include "util/err.h"
#include "util/strv.h"

/* Add the strings of add that the list does not hold yet to the list `key` of the table at
 * path[0..depth) (e.g. {"agent", "claude"}, {"policy"}): into the list where it is written;
 * else as a key line right after the table's [header]; else as a new table, header (its text,
 * e.g. "[agent.claude]"), at the end. The result is parsed again (toml.c) and must hold what
 * the text held plus the new strings at the end of that list, nothing else changed: else -1
 * and nothing is returned. text may be empty (a new file). 0 with *out (NUL-terminated,
 * *out_len bytes) and *added (how many were new; 0: *out is the text unchanged); -1 with e
 * naming file (a parse error: FILE:LINE:COL; a key that is not a list). */
int config_add_to_list(const char *text, size_t len, const char *file, const char *const *path,
		       size_t depth, const char *header, const char *key,
		       const struct strv *add, char **out, size_t *out_len, size_t *added,
		       struct err *e) WUR;
