/* shim: `claude` on PATH as a link to agentjail, so the real one always runs in the jail. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

/* Whether this process runs inside an agentjail jail: PID 1 of our pid namespace is agentjail's
 * init (mounted at /run/agentjail/init) and we are under a seccomp filter with no_new_privs.
 * An environment variable alone cannot make this true outside a jail. */
bool shim_in_jail(void);
/* The same decision from /proc/1/cmdline's bytes and /proc/self/status's text (pure). */
bool shim_in_jail_from(const char *cmdline, size_t len, const char *status);

/* The agent a shim stands for, from argv[0] (a path or a name); NULL for agentjail itself and
 * for names that are no agent's executable (pure). */
struct profile;
const struct profile *shim_profile(const char *argv0);

/* The default shim directory: $XDG_DATA_HOME/agentjail/bin, else ~/.local/share/agentjail/bin. */
char *shim_default_dir(const char *home, const char *xdg_data_home);

enum shim_state { SHIM_ABSENT, SHIM_OURS, SHIM_FOREIGN };
/* What DIR/EXE is: nothing, a link to agentjail, or something else. */
enum shim_state shim_check(const char *dir, const char *exe);

/* Create DIR (0755, parents too) and the link DIR/EXE → self. 0 also when it is already ours
 * (then *existed is set). -1 when something else is there (never replaced). */
int shim_install(const char *dir, const char *exe, const char *self, bool *existed,
		 struct err *e) WUR;
/* Remove DIR/EXE when it is ours; 0 when absent; -1 when it is something else. */
int shim_remove(const char *dir, const char *exe, struct err *e) WUR;

/* The shell startup file and the line that puts DIR first on PATH, for a login shell path
 * like /bin/zsh (pure). */
void shim_path_hint(const char *shell, const char *dir, const char **rcfile, char **line);
