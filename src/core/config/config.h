/* config: the configuration's schema, its layers and the project-trust rules (doc/design.md §8).
 * Pure: it takes parsed TOML trees (core/config/toml.h) and plain values; reading the files, their
 * ownership and the trust store are core/config/config_load.
 *
 * Layers, lowest first: built-in defaults, /etc/agentjail/config.toml (CFG_SYSTEM), the user's
 * config.toml (CFG_USER), the workspace's .agentjail.toml (CFG_PROJECT), AGENTJAIL_* variables
 * (CFG_ENV), command-line flags. A scalar (fs, net, memory, pids, home, ask, ask_timeout,
 * ssh_agent, gpg_agent, bwrap, state_dir) of a later layer replaces the earlier one; a list (rw,
 * ro, hide, devices, env, allow_domains, deny_domains, hosts, publish, allow_http) only grows: no
 * layer can remove what a lower one added. Every value keeps
 * its origin ("FILE:LINE", "env NAME", "flag", "default"). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/config/osb_settings.h"
#include "core/plan/policy.h"
#include "core/plan/secrets.h"
#include "util/err.h"
#include "util/strv.h"

struct toml_value;
struct profile;

enum cfg_layer { CFG_SYSTEM, CFG_USER, CFG_PROJECT };

/* The keys of [policy] and [agent.NAME]: scalars first, then lists. */
enum cfg_key { CK_FS, CK_NET, CK_MEMORY, CK_PIDS, CK_HOME, CK_ASK, CK_ASK_TIMEOUT, CK_SSH_AGENT,
	       CK_GPG_AGENT, CK_RW, CK_RO, CK_HIDE, CK_DEVICES, CK_ENV, CK_ALLOW_DOMAINS,
	       CK_DENY_DOMAINS, CK_HOSTS, CK_PUBLISH, CK_ALLOW_HTTP, CK__N };
#define CFG_NSCALAR 9
#define CFG_NLIST (CK__N - CFG_NSCALAR)

struct cfg_val {
	char *v;      /* NULL: not set by any layer */
	char *origin; /* "FILE:LINE", "env NAME", … */
};
struct cfg_list {
	struct strv v;      /* entries as written (hosts: NAME=ADDR) */
	struct strv origin; /* origin of each entry */
};
struct cfg_pol {
	struct cfg_val s[CFG_NSCALAR];
	struct cfg_list l[CFG_NLIST];
};
struct cfg_agent {
	char *name;
	char *origin; /* where its table was first written */
	struct cfg_pol pol;
};

struct config {
	struct cfg_val bwrap, state_dir;
	struct cfg_val backend;         /* "local" (default), "landlock" (doc/design.md §4c) or
					 * "opensandbox" (§4b) */
	struct cfg_val cache;           /* "workspace" (default) or "shared" (§3 step 5) */
	struct cfg_val osb[OK__N];      /* [opensandbox] (core/config/osb_settings.h) */
	struct secret_set secrets;      /* [secret.NAME] (doc/design.md §4d): origin FILE:LINE */
	struct cfg_pol policy;
	struct cfg_agent *agents;
	size_t n_agents;
	struct profile **profiles; /* [profile.NAME] of the system and user files */
	size_t n_profiles;
	struct strv files;         /* the files read, as "PATH" */
};

const char *cfg_key_name(enum cfg_key k);

void config_init(struct config *c);
void config_free(struct config *c);

/* Apply one parsed file. For CFG_PROJECT: bwrap, state_dir, backend, cache, [opensandbox],
 * [profile.*], [secret.*] and devices are refused whatever the trust; unless trusted, each widening key
 * (see config.c) is left out and named in *widening as "FILE:LINE: `KEY` in [TABLE] WHY".
 * net_default is the network mode the command
 * uses when no layer sets one (off for run, allow for agents): a project's net is compared with
 * it. -1 with e ("FILE:LINE:COL", what, a suggestion) on an unknown key, a wrong type or value;
 * nothing of the file is applied then. */
int config_apply(struct config *c, const struct toml_value *root, const char *file,
		 enum cfg_layer layer, bool trusted, enum net_mode net_default,
		 struct strv *widening, struct err *e) WUR;

/* Record AGENTJAIL_FS/NET/MEMORY/PIDS/BWRAP/STATE_DIR (NULL or "" = unset) as the env layer, so
 * `agentjail config` shows them; `run` parses them itself (run_parse_args). */
void config_apply_env(struct config *c, const char *fs, const char *net, const char *memory,
		      const char *pids, const char *bwrap, const char *state_dir);

/* The [policy] values merged with those of [agent.NAME] (agent NULL: [policy] only), as a base
 * policy for run_parse_args: paths expanded (~) and made absolute against cwd. fs_set and net_set
 * say whether a layer set the mode. -1 with e on a value that cannot be used. */
int config_base_policy(const struct config *c, const char *agent, const char *cwd,
		       const char *home, struct policy *out, bool *fs_set, bool *net_set,
		       struct err *e) WUR;

/* The effective configuration with the origin of each value: text, or JSON when json. */
char *config_render(const struct config *c, bool json);

/* [agent.NAME] tables must name an agent (built-in or [profile.NAME]): -1 with e otherwise. */
int config_check_agents(const struct config *c, const char *const *names, struct err *e) WUR;
