/* toolcache: what a jail gets instead of the host's package caches and registry configuration
 * (pure: planned over the host-facts table; toolprep.c makes the files).
 *
 * Package caches are jail-private: a persistent, per-user directory <state>/cache/NAME, shared
 * by jails and mounted where each tool expects its cache, so a trojaned crate or wheel written
 * by a jail never reaches the host's next build. Registry configuration (~/.npmrc, cargo's
 * config.toml, pip.conf, uv.toml) is passed as a filtered copy without credential lines; the
 * variables naming mirrors pass through, never their token siblings. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/plan/hostfacts.h"
#include "util/strv.h"

/* ---- private package caches (doc/design.md §3b: a jail never writes the host's caches) ---- */
struct toolcache {
	const char *name;     /* <state>/cache/<name> */
	const char *tool;     /* the program whose presence on PATH asks for it */
	const char *home_rel; /* where the tool expects it, relative to $HOME */
	const char *var;      /* the variable pointing the tool at it, or NULL */
	bool cargo_home;      /* relative to CARGO_HOME (~/.cargo) rather than $HOME */
};
extern const struct toolcache toolcaches[];
/* pairs (cache source <state>/cache/NAME, mount point) for the tools on PATH whose cache
 * directory exists (toolprep makes them before the plan is built); pairs (VAR, mount point) for
 * their variables; skipped lines when a cache cannot be placed. */
void toolcache_plan(struct hostfacts *hf, const char *path_env, struct strv *mounts,
		    struct strv *vars, struct strv *skipped);

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
 * ends in /cache/NAME and it sits where that tool expects its cache under `home` (verify's
 * writable-mount probe allows exactly these). */
bool toolcache_is_private_mount(const char *home, const char *root, const char *point);
