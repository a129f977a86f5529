/* dirs: where agentjail keeps its state and its configuration (doc/design.md §5, §7). Pure:
 * the rules take the environment's values as arguments, so `run`, `doctor`, the host facts and
 * the tests find the same directories without one depending on another. */
#pragma once

/* agentjail's state directory the way `run` finds it: $AGENTJAIL_STATE_DIR when absolute, else
 * $XDG_STATE_HOME/agentjail when that is absolute, else HOME/.local/state/agentjail. Each
 * argument may be NULL. Normalized, not resolved. */
char *dirs_state_dir(const char *env_state_dir, const char *xdg_state_home, const char *home);
/* $XDG_CONFIG_HOME/agentjail when absolute, else HOME/.config/agentjail. */
char *dirs_config_dir(const char *xdg_config_home, const char *home);
