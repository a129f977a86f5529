/* config_load: the configuration files read from the host, layered (core/config/config.h,
 * doc/design.md §8). A file is read only when it is a regular file owned by the user or root and
 * writable by no one else, in a directory of the same kind; otherwise it is an error naming the
 * file and the fix, never skipped. The project's file is trusted when its canonical path and
 * the SHA-256 of the bytes read are in the trust store (core/config/trust.h). */
#pragma once
#include <stdbool.h>

#include "core/config/config.h"
#include "core/plan/policy.h"
#include "util/err.h"
#include "util/strv.h"

struct config_env {
	const char *home;
	const char *xdg_config_home;
	const char *xdg_state_home;
	const char *env_state_dir;  /* AGENTJAIL_STATE_DIR */
	const char *system_file;    /* NULL: /etc/agentjail/config.toml */
	const char *workspace;      /* where .agentjail.toml is looked for; NULL: no project layer */
	enum net_mode net_default;  /* off for run, allow for agents (config_apply) */
};

/* env from this process's environment: HOME, XDG_CONFIG_HOME, XDG_STATE_HOME,
 * AGENTJAIL_STATE_DIR (and, in the tests' build only, AGENTJAIL_SYSTEM_CONFIG for the system
 * file). */
void config_env_from_process(struct config_env *env, const char *workspace,
			     enum net_mode net_default);

struct config_loaded {
	struct strv considered;    /* every file looked for, found or not */
	struct strv widening;      /* the untrusted project's widening keys (left out) */
	char *project;             /* the project file's canonical path, when there is one */
	char hash[65];             /* and the SHA-256 of what was read */
	bool project_trusted;
	char *state_dir;           /* AGENTJAIL_STATE_DIR, else state_dir, else the default */
};
void config_loaded_free(struct config_loaded *r);

/* Read and layer the system, user and project files into c (config_init'ed). -1 with e on
 * the first file that cannot be used (its path, or FILE:LINE:COL). Widening keys of an
 * untrusted project are not an error here: they are listed in r->widening. */
int config_load(struct config *c, const struct config_env *env, struct config_loaded *r,
		struct err *e) WUR;

/* Read a configuration file after the ownership checks: 1 when it does not exist, 0 with
 * *text (NUL-terminated, *len bytes), -1 with e. nofollow refuses a symlink (project files). */
int config_read_file(const char *path, bool nofollow, char **text, size_t *len,
		     struct err *e) WUR;

/* The canonical path of DIR/.agentjail.toml and the hash of its content (for `agentjail
 * trust`), after the same checks. -1 with e (also when there is no such file). */
int config_project_id(const char *dir, char **canon, char hex[65], struct err *e) WUR;
