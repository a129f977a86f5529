/* toolprep: the files behind the tool-cache plan (syscalls; core/plan/toolcache.c plans them).
 *
 * Before a jail starts: <root>/NAME for every private cache (0700), where root is the
 * workspace's <state>/cache/ws/KEY or <state>/cache/shared (toolcache_root), and
 * <state>/toolconf/COPY, the credential-filtered copy of each registry configuration file the
 * host has. `agentjail cache` lists, measures and removes the caches, never following a link
 * a jail left there. */
#pragma once
#include <stdint.h>

#include "core/plan/hostfacts.h"
#include "util/err.h"
#include "util/strv.h"

/* The private caches' directories under `root` (toolcache_root), the agent's private
 * directories `agent_dirs` (toolcache_agent_dir; may be NULL) and the filtered registry copies;
 * `workspace` (a per-workspace root) is recorded in <root>/workspace, whose time says when the
 * cache was last used. */
int toolprep_prepare(const struct hostfacts *hf, const char *root, const char *workspace,
		     const struct strv *agent_dirs, struct err *e) WUR;

#define CACHE_WORKSPACE_FILE "workspace"

/* <root>/workspace names the workspace a per-workspace directory of the state dir belongs to
 * (its caches, its persisted home: the path is only hashed in the directory's name); its time
 * says when a jail last used it. Written by a rename, unless it already says that. */
int toolprep_record_workspace(const char *root, const char *workspace, struct err *e) WUR;
/* What the directory dfd's record says: the workspace (NULL when there is none or it is not an
 * absolute path) and its time (0). */
void toolprep_read_workspace(int dfd, char **workspace, long long *used);

enum cache_kind {
	CACHE_KIND_WORKSPACE, /* <state>/cache/ws/KEY: one workspace's */
	CACHE_KIND_SHARED,    /* <state>/cache/shared: every workspace's (cache = "shared") */
	CACHE_KIND_OLD,       /* <state>/cache/NAME: an older agentjail's, shared, no longer used */
};
struct cache_entry {
	enum cache_kind kind;
	char *dir;
	char *workspace; /* CACHE_KIND_WORKSPACE: the workspace it was made for, or NULL */
	uint64_t bytes;
	long long used;  /* last use, seconds since the epoch; 0: unknown */
};
/* Every cache in <state>/cache with its size (nothing when absent), by kind (the workspaces'
 * first), then by workspace or directory. */
int toolprep_cache_list(const char *state_dir, struct cache_entry **out, size_t *n,
			struct err *e) WUR;
void toolprep_cache_list_free(struct cache_entry *v, size_t n);
/* Bytes used by <state>/cache (0 when absent). */
int toolprep_cache_size(const char *state_dir, uint64_t *bytes, struct err *e) WUR;
/* Remove a cache: a workspace's or an old one whole, the shared one's contents (its
 * directories stay). *freed: the bytes removed. */
int toolprep_cache_remove(const struct cache_entry *c, uint64_t *freed, struct err *e) WUR;
