/* hostfacts: what the builder needs to know about the host, as plain values.
 *
 * The argv builder never makes a syscall: it asks this table. In production the table is
 * filled lazily by a probe (lstat/readdir, see hostfacts_probe.c); in tests it is loaded from a
 * fixture and has no probe, so a path not listed is "missing". */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "util/err.h"
#include "util/strv.h"

enum hf_type { HF_MISSING = 0, HF_DIR, HF_FILE, HF_SYMLINK, HF_SOCKET, HF_CHR, HF_BLK, HF_FIFO,
	       HF_OTHER };

struct hf_stat {
	enum hf_type type;
	mode_t mode;      /* permission bits */
	uid_t uid;
	char *link;       /* target when HF_SYMLINK */
};

struct hf_entry {
	char *path;
	struct hf_stat st;
	bool listed;          /* children known (for directories) */
	struct strv children; /* names, sorted, when listed */
	bool head_known;      /* head read (for files) */
	char *head;           /* the "#!" line of a script, "" for other files, NULL unreadable */
};

/* A memo of hf_realpath (resolve.h): a normalized path, its real path (NULL: none), and the
 * links the walk passed (pairs: link, target). */
struct hf_real {
	char *path;
	char *real;
	struct strv links;
};

struct hostfacts;
typedef int (*hf_probe_fn)(struct hostfacts *hf, const char *path, struct hf_stat *out);
typedef int (*hf_list_fn)(struct hostfacts *hf, const char *path, struct strv *names);
/* The first line of a file when it starts with "#!" (without the newline), else "". */
typedef int (*hf_head_fn)(struct hostfacts *hf, const char *path, char **out);
/* The entries of a tree bound read-only that an unprivileged user could not read (etcscan.h). */
typedef int (*hf_scan_fn)(struct hostfacts *hf, const char *root, struct strv *out);

struct hf_tree {
	char *root;
	struct strv unreadable;
};

/* What a run with secrets, request rules or agents adds to the view (doc/design.md §4d), made
 * ready on the host before the plan (cmd layer); all NULL when there is nothing. */
struct hf_secrets {
	char *bundle;       /* the jail's trust bundle: the host's and agentjail's CA (a dry run:
			     * "" when the CA does not exist yet) */
	char *bundle_host;  /* the host's bundle file (real path) shown with it, or NULL */
	char *ssh_sock;     /* --ssh-agent: the filtered agent's listening socket on the host */
	char *gpg_sock;     /* --gpg-agent: gpg-agent's extra socket on the host */
	char *gpg_home;     /* --gpg-agent: the host's gpg home (its public keyring) */
};
void hf_secrets_free(struct hf_secrets *s);
void hf_secrets_copy(struct hf_secrets *dst, const struct hf_secrets *src);

struct hostfacts {
	uid_t uid;
	gid_t gid;
	char *home;            /* $HOME (normalized) */
	char *user;
	char *cwd;             /* canonical cwd */
	struct strv env;       /* the host environment, "NAME=VALUE" */
	char *state_dir;       /* agentjail's state directory */
	char *scan_dir;        /* where root's tree scans are cached (treescan_cache_dir), or NULL */
	char *config_dir;      /* agentjail's config directory */
	char *self_exe;        /* agentjail's own binary (canonical) */
	char *resolv_target;   /* canonical target of /etc/resolv.conf when it lies under /run */
	struct strv etc_unreadable; /* /etc entries without world-read (root only; scan + cache) */
	char *gitdir;          /* workspace's git dir when .git is a file (worktree) */
	char *commondir;       /* the common dir of that git dir */
	char *hooks_path;      /* core.hooksPath, absolute */
	struct strv git_includes; /* config files git includes (gitinfo.h) */
	struct strv nested_git; /* .git entries found below the workspace at start (not its own) */
	bool nested_truncated; /* that walk stopped at its bound: the list may be incomplete */
	long long nested_since; /* when that walk started (seconds since the epoch) */
	struct err *git_refused; /* a git pointer the jail must not follow (gitinfo.h), or NULL */
	char *session_id;      /* AGENTJAIL_SESSION value */
	unsigned long long mem_total; /* the host's RAM in bytes (0 unknown) */
	int limits_mech;       /* enum limits_mech (limits.h): how limits are enforced here */
	char *cgroup_parent;   /* LIMITS_CGROUP(_V1): where the jail's scope is made */
	char *limits_why;      /* one line: why that mechanism */
	struct hf_secrets sec; /* doc/design.md §4d */

	struct hf_entry **tab;
	size_t ntab, captab;
	/* tab's index by path: open addressing, slot = position in tab + 1 (0 empty), capidx a
	 * power of two at least twice ntab (a plan asks about thousands of paths; a linear search
	 * was the run's top user-space symbol) */
	size_t *idx, capidx;
	/* hf_realpath's answers (the plan asks for the same paths again and again: every tool
	 * manager's roots for every PATH entry), by path, open addressing as idx; emptied by
	 * hf_add, which may change what a walk meets */
	struct hf_real **reals;
	size_t nreals, capreals;
	hf_probe_fn probe;     /* NULL in tests */
	hf_list_fn list;       /* NULL in tests */
	hf_head_fn head;       /* NULL in tests */
	struct hf_tree **trees; /* scanned trees (root only), filled lazily by scan */
	size_t ntrees;
	hf_scan_fn scan;       /* NULL in tests: the fixture's "unreadable ROOT PATH" lines */
};

void hostfacts_init(struct hostfacts *hf);
void hostfacts_free(struct hostfacts *hf);

/* Record a fact (copies). */
void hf_add(struct hostfacts *hf, const char *path, enum hf_type type, mode_t mode, uid_t uid,
	    const char *link);
/* lstat-like lookup of a normalized absolute path. Never NULL (MISSING when unknown). */
const struct hf_stat *hf_stat(struct hostfacts *hf, const char *path);
enum hf_type hf_type(struct hostfacts *hf, const char *path);
/* Sorted names of a directory's children (empty when not a directory). */
const struct strv *hf_children(struct hostfacts *hf, const char *path);
/* true when some component of `path` strictly below `root` (or path itself) is a symlink. */
bool hf_has_symlink_below(struct hostfacts *hf, const char *root, const char *path);
/* A file's "#!" line (without "#!"-stripping), "" when it is no script, NULL when it cannot be
 * read. */
const char *hf_head(struct hostfacts *hf, const char *path);
/* The sorted entries below the read-only tree `root` that an unprivileged user could not read
 * (to mask when the jail runs as root). A tree that cannot be scanned answers itself: masked
 * whole, never shown unchecked. */
const struct strv *hf_unreadable(struct hostfacts *hf, const char *root);
/* hf_realpath's memo of the normalized path `path`, or NULL when not known (hf_add forgets
 * them all). */
const struct hf_real *hf_real_find(const struct hostfacts *hf, const char *path);
/* Remember hf_realpath's answer for `path` (copies; links may be NULL: none). */
void hf_real_store(struct hostfacts *hf, const char *path, const char *real,
		   const struct strv *links);
/* Value of a host environment variable, or NULL. */
const char *hf_getenv(const struct hostfacts *hf, const char *name);

/* Load a fixture (tests): see tests/data/README for the format. */
int hostfacts_load_fixture(struct hostfacts *hf, const char *file, struct err *e) WUR;
