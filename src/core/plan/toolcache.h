/* toolcache: what a jail gets instead of the host's package caches and registry configuration
 * (pure: planned over the host-facts table; toolprep.c makes the files).
 *
 * Package caches are jail-private: a persistent directory <ROOT>/NAME mounted where each tool
 * expects its cache, so a trojaned crate or wheel written by a jail never reaches the host's
 * next build. ROOT is the workspace's own (<state>/cache/ws/KEY), so neither does it reach
 * another project's jail; `cache = "shared"` in the user's configuration makes it one for all
 * (<state>/cache/shared). Registry configuration (~/.npmrc, cargo's
 * config.toml, pip.conf, uv.toml) is passed as a filtered copy without credential lines; the
 * variables naming mirrors pass through, never their token siblings. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/plan/hostfacts.h"
#include "core/plan/policy.h"
#include "util/strv.h"

/* ---- private package caches (doc/design.md §3b: a jail never writes the host's caches) ---- */
/* The hex digits of a workspace's key: the first 128 bits of the SHA-256 of its canonical
 * path. A project does not choose where it is cloned, so it cannot choose another's key. */
#define TOOLCACHE_KEY_HEX 32
/* The directory of a jail's private caches: <state>/cache/ws/KEY for `workspace` (absolute,
 * canonical), or <state>/cache/shared. NULL without a state dir. */
char *toolcache_root(const char *state_dir, const char *workspace, enum cache_mode mode);
/* The key of a workspace (TOOLCACHE_KEY_HEX lowercase hex digits). */
char *toolcache_key(const char *workspace);

/* Where an agent's private directory `dest` (absolute; profile.private_dirs) lives under a
 * cache root: <root>/agent/<profile><dest>. */
char *toolcache_agent_dir(const char *root, const char *profile, const char *dest);

struct toolcache {
	const char *name;     /* <root>/<name> */
	const char *tool;     /* the program whose presence on PATH asks for it */
	const char *home_rel; /* where the tool expects it, relative to $HOME */
	const char *var;      /* the variable pointing the tool at it, or NULL */
	bool cargo_home;      /* relative to CARGO_HOME (~/.cargo) rather than $HOME */
};
extern const struct toolcache toolcaches[];
/* pairs (cache source <root>/NAME, mount point) for the tools on PATH whose cache directory
 * exists (toolprep makes them before the plan is built); pairs (VAR, mount point) for their
 * variables; skipped lines when a cache cannot be placed. root NULL: none. */
void toolcache_plan(struct hostfacts *hf, const char *path_env, const char *root,
		    struct strv *mounts, struct strv *vars, struct strv *skipped);

/* ---- registry configuration, passed as filtered copies ---- */
struct toolconf {
	const char *home_rel; /* the host file, relative to $HOME */
	const char *copy;     /* the filtered copy: <state>/toolconf/<copy> */
	bool cargo_home;      /* relative to CARGO_HOME */
};
extern const struct toolconf toolconfs[];
/* The host file of entry i (NULL when it cannot be placed) */
char *toolconf_host_path(const struct hostfacts *hf, size_t i);
/* The registry configuration minus every line that carries a credential: keys naming a token,
 * password, auth or credential provider, URLs with a user:password@, and in TOML the body of a
 * multi-line value begun on such a line. *removed counts the lines dropped. */
char *toolconf_filter(const char *text, int *removed);

/* Host variables that point the tools at mirrors and registries: passed through, never their
 * *_TOKEN / *_PASSWORD siblings, nor a value with credentials in its URL. */
bool toolenv_mirror_var(const char *name);
bool toolenv_value_has_credentials(const char *value);

/* Whether a mount (mountinfo's root and mount point) is one of the private caches: its source
 * ends in /cache/shared/NAME or /cache/ws/KEY/NAME and it sits where that tool expects its
 * cache under `home` (verify's writable-mount probe allows exactly these). */
bool toolcache_is_private_mount(const char *home, const char *root, const char *point);
