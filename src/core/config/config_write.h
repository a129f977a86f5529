/* config_write: where the user's configuration file is, and replacing its content in one step
 * (for `agentjail log --suggest --apply`, doc/design.md §8). */
#pragma once
#include <stddef.h>

#include "core/config/config_load.h"
#include "util/err.h"

/* $XDG_CONFIG_HOME/agentjail/config.toml, else ~/.config/agentjail/config.toml. Allocated. */
char *config_user_file(const struct config_env *env);

/* Replace path's content with text: a temporary file beside it, written, synced and renamed
 * over it, with its mode (a new file: 0600, its directories made 0700). A symlink is followed
 * (the file it names is replaced, the link kept). A file named .agentjail.toml (a project's)
 * is refused whatever the path. -1 with e. */
int config_write_file(const char *path, const char *text, size_t len, struct err *e) WUR;
