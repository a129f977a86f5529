/* snapkeep: the bytes of protected paths before a run, to put them back (doc/design.md §4c).
 *
 * The Landlock backend cannot make a protected path read-only (core/backend/landlock/llplan.h), so
 * what the command replaced or removed there is moved aside (core/jail/snapshot.h) and the original
 * is restored from what this kept: files (content, mode, owner), symlinks and directories of them.
 * Protected paths are small (git config, hooks, rc files, agent settings); past the bounds below
 * a path is not kept and its violation says it could not be restored. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "core/jail/snapshot.h"
#include "util/err.h"

#define KEEP_MAX_BYTES ((size_t)16 << 20) /* over every kept path together */
#define KEEP_MAX_ENTRIES ((size_t)10000)
#define KEEP_MAX_DEPTH 32u

struct keep_node {
	char *name;
	mode_t mode;  /* type and permission bits */
	uid_t uid;
	gid_t gid;
	struct timespec mtime;
	char *data;   /* a file's bytes, a symlink's target */
	size_t len;
	struct keep_node *kids; /* a directory's entries */
	size_t nkids;
};

struct keep_entry {
	char *path;
	bool kept;
	char *why;     /* why not kept (NULL when kept or when it did not exist) */
	struct keep_node node;
};

struct snapkeep {
	struct keep_entry *e;
	size_t n;
	size_t bytes, entries; /* what is held */
};

/* Keep every existing entry of the snapshot (a .git directory, recorded by kind only, is not
 * kept: it is the repository). Never fails: an entry that cannot be kept says why. */
void snapkeep_take(const struct snapshot *s, struct snapkeep *out);
/* The kept entry for path, or NULL. */
const struct keep_entry *snapkeep_find(const struct snapkeep *k, const char *path);
/* Put the kept entry back at its path, which must not exist now; its parent is opened with no
 * symlink on the way. On a failure half-way the half-made entry stays (never deleted: its name
 * may hold what the command swapped in by then) and the error says so. */
int snapkeep_restore(const struct keep_entry *ke, struct err *e) WUR;
/* Whether what stands at the entry's path now is what was kept (type, mode, content, entries;
 * not owners or inodes). */
bool snapkeep_same(const struct keep_entry *ke);
void snapkeep_free(struct snapkeep *k);
