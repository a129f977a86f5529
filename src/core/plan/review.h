/* review: the pure parts of `--fs review` (doc/design.md §3c). A review session's jail writes
 * into the upper layer of an overlay of the workspace, kept in the state directory; the real
 * workspace is written only by `agentjail apply`. Here: where a session's change set lives,
 * which of its paths are protected and how far, the mode a file is applied with, whether a
 * symlink stays inside the workspace, the baselines a change is compared with (the
 * workspace's state when the jail changed it: a conflict is a workspace changed since), and
 * the unified diff of a file. The walk of the upper layer, the apply and the checkpoints make
 * system calls: core/review/. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"
#include "util/strbuf.h"
#include "util/strv.h"

/* <state>/review/<session id>/ and what it holds */
#define REVIEW_DIR "review"
#define REVIEW_UPPER "upper"         /* the overlay's upper layer: the change set */
#define REVIEW_WORK "work"           /* overlayfs's work directory (same file system) */
#define REVIEW_MNT "mnt"             /* where the namespace holder mounts the overlay */
#define REVIEW_BASELINE "baseline"   /* the baselines (rv_manifest_format) */
#define REVIEW_LOCK "lock"           /* flock'ed by the run while the overlay is mounted */
#define REVIEW_CKPTS "checkpoints"   /* checkpoints/NAME/{upper,baseline} */
/* the temporary names apply writes beside a file before renaming it into place */
#define REVIEW_TMP_PREFIX ".agentjail-apply."

/* <state>/review/<id> (new string) */
char *review_dir(const char *state_dir, const char *id);
/* Whether NAME is a usable checkpoint name: 1 to 64 of [A-Za-z0-9._-], not starting with '.'. */
bool review_ckpt_name_ok(const char *name);

/* ---- protection ---- */

enum rv_guard {
	RV_FREE,  /* applied like any change */
	RV_NAMED, /* protected (doc/design.md §3 step 7, §3b): applied only when an `apply` PATH
		   * names it, or names a path inside its protected root that holds it */
	RV_NEVER, /* what git runs or follows (hooks, config, info/, commondir, gitdir, modules/,
		   * a .git pointer file, core.hooksPath): never applied, even when named */
};
const char *rv_guard_name(enum rv_guard g); /* "", "protected", "never applied" */

struct rv_rules {
	struct strv named; /* relative paths the plan protects inside the workspace (its
			    * read-only binds and watched paths), each covering what is below it */
	struct strv never; /* relative paths git runs from (core.hooksPath inside the workspace) */
};
void rv_rules_free(struct rv_rules *r);

/* Whether dir/HEAD exists (in the change set or the workspace): a directory shaped like a git
 * dir, whose config, hooks/, info/ … git would run ("" is the workspace's top). */
typedef bool (*rv_has_head_fn)(void *arg, const char *dir);

/* How far rel (a checked relative name, relname_check) is protected: the names of a git dir
 * (any .git component, ASCII case ignored: objects/, refs/, logs/, HEAD, index … are free,
 * objects/info/ and names git does not keep there are protected, hooks, config, info/,
 * commondir, gitdir, modules/, worktrees/, config.worktree never applied), a .git that is not
 * a directory (a pointer: never), the same names in a directory with a HEAD (a bare
 * repository planted file by file), the protected names at the top (bw_protected_names,
 * .claude/settings*.json), and r's paths. *root (may be NULL) gets the protected path that
 * covers rel (malloc'd; NULL when RV_FREE). */
enum rv_guard review_guard(const char *rel, bool is_dir, const struct rv_rules *r,
			   rv_has_head_fn has_head, void *arg, char **root);

/* Whether one of `paths` (relative, normalized) names rel for `apply`: a path equal to rel or
 * above it, and, when rel is protected (root not NULL), at or below its protected root. */
bool review_named(const char *rel, const char *root, const struct strv *paths);

/* The length of rel's prefix up to and including its first component named .git (any case),
 * 0 when it has none: "sub/.git/refs/x" → 8. A deletion below it (a ref, git's objects) is
 * applied only when named: removing them loses history, and a jail's `git gc` or `branch -D`
 * held back leaves a whole repository (doc/design.md §3c). */
size_t review_git_dir_len(const char *rel);

/* The mode a file or directory is applied with: its permission bits without setuid, setgid
 * and sticky, group and other write only where the workspace's copy had them too. */
mode_t review_mode(mode_t upper, bool had, mode_t workspace);

/* Whether a symlink at rel with this target stays inside the workspace: relative, and its
 * target, taken lexically from rel's directory, does not leave the top. */
bool review_link_inside(const char *rel, const char *target);
/* Where it lands, taken the same way: the path relative to the top ("" for the top itself;
 * a new string), or NULL when it leaves it. */
char *review_link_lands(const char *rel, const char *target);

/* ---- baselines ---- */

/* What the workspace held at a path when the jail first changed it (recorded after the run:
 * the workspace is the lower layer, and only the host writes it). */
struct rv_base {
	char *rel;
	char kind;                 /* '-' absent, 'f' file, 'd' directory, 'l' symlink, 'o' other */
	unsigned long long size, ino;
	long long mtime_ns, ctime_ns;
	bool during;               /* changed in the workspace during the run that recorded it */
	unsigned char hash[32];    /* a file's content, a link's target, a directory's listing */
};

struct rv_manifest {
	struct rv_base *v;
	size_t n, cap;
	bool sorted;
};
void rv_manifest_free(struct rv_manifest *m);
/* Append a copy of b (its rel copied). */
void rv_manifest_add(struct rv_manifest *m, const struct rv_base *b);
/* The entry of rel, or NULL (sorts m first when needed). */
const struct rv_base *rv_manifest_find(struct rv_manifest *m, const char *rel);
/* The records, "REL\0KIND SIZE INO MTIME CTIME DURING HASH\0" each; *len its length. */
char *rv_manifest_format(const struct rv_manifest *m, size_t *len);
/* Read what rv_manifest_format wrote. -1 with e (naming `what`) when it is malformed. */
int rv_manifest_parse(const char *buf, size_t len, const char *what, struct rv_manifest *out,
		      struct err *e) WUR;
/* Whether the workspace still holds what the baseline recorded: the same kind, and the same
 * size, mtime and inode or the same hash. */
bool rv_base_same(const struct rv_base *then, const struct rv_base *now);

/* ---- diff ---- */

struct rv_diffstat {
	unsigned long ins, del;
	bool binary;
};
/* A NUL byte in the first 8000 bytes (git's test). */
bool rv_is_binary(const char *b, size_t n);
/* The unified diff of old → new (NULL: absent) with three lines of context: "--- a/REL",
 * "+++ b/REL" (or /dev/null), hunks; one "Binary files … differ" line for binary content.
 * The names are written as they are (the caller cleans what goes to a terminal). Appends to
 * out (NULL: only counts); st gets the counts. */
void rv_unified(struct strbuf *out, const char *rel, const char *old, size_t olen,
		const char *neu, size_t nlen, struct rv_diffstat *st);
