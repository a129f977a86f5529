/* gitscan_check: see gitscan_check.h. The move aside is snapshot_check's, given entries
 * recorded as absent before the run. */
#include "core/jail/gitscan_check.h"

#include <stdlib.h>
#include <sys/stat.h>

#include "core/host/gitscan.h"
#include "core/plan/gitprotect.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

/* Whether `path` is new since `since`: its ctime (which no unprivileged process can set back;
 * a rename updates it) is not older. */
static bool changed_since(const char *path, long long since)
{
	struct stat st;
	return lstat(path, &st) < 0 || (long long)st.st_ctim.tv_sec >= since;
}

static void entry_absent(struct snapshot *s, const char *path)
{
	s->e = xrealloc(s->e, (s->n + 1) * sizeof *s->e);
	s->e[s->n++] = (struct snap_entry){.path = xstrdup(path)};
}

static void append(struct violations *out, struct violation v)
{
	out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
	out->v[out->n++] = v;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Every .git and submodule git dir there is now. */
static int find_now(const struct gitscan_before *b, struct strv *now, struct violations *out,
		    struct err *e)
{
	for (size_t r = 0; r < b->roots->n; r++) {
		/* the root's own .git too: one made by `git init` in the jail is new like any other
		 * (the argv builder does not watch a missing one, see in_new_repo) */
		struct stat st;
		_cleanup_free_ char *own = path_join(b->roots->v[r], ".git");
		if (lstat(own, &st) == 0)
			strv_push(now, own);
		bool truncated = false;
		if (gitscan_walk(b->roots->v[r], GITSCAN_MAX_DIRS, now, &truncated, e) < 0)
			return -1;
		if (truncated)
			append(out, (struct violation){
					    .path = xstrdup(b->roots->v[r]),
					    .what = xasprintf("more than %d directories: nested git "
							      "repositories past that were not checked",
							      GITSCAN_MAX_DIRS),
					    .own_words = true});
	}
	for (size_t i = 0; i < b->gitdirs->n; i++)
		gitscan_modules(b->gitdirs->v[i], now);
	for (size_t i = 0, n = now->n; i < n; i++)
		if (!strv_contains(b->gitdirs, now->v[i]) && is_dir(now->v[i]))
			gitscan_modules(now->v[i], now); /* a git dir's modules/ were listed above */
	return 0;
}

int gitscan_check(const struct gitscan_before *b, const char *quarantine_dir,
		  struct violations *out, struct err *e)
{
	struct strv now = STRV_INIT;
	struct snapshot absent = {0};
	int rc = find_now(b, &now, out, e);
	for (size_t i = 0; rc == 0 && i < now.n; i++) {
		const char *g = now.v[i];
		if (strv_contains(b->known, g) || (b->truncated && !changed_since(g, b->since)))
			continue;
		if (!is_dir(g)) { /* a .git file or symlink is only a pointer: it goes itself */
			entry_absent(&absent, g);
			continue;
		}
		/* the directory stays (what the agent made there is its work); what would run a
		 * command goes, submodule git dirs included */
		append(out, (struct violation){.path = xstrdup(g),
					       .what = xstrdup("a git repository created during the run: "
							       "what in it would run a command is moved "
							       "aside"),
					       .own_words = true});
		for (size_t k = 0; git_exec_names[k]; k++) {
			_cleanup_free_ char *p = path_join(g, git_exec_names[k]);
			entry_absent(&absent, p);
		}
		_cleanup_free_ char *m = path_join(g, "modules");
		entry_absent(&absent, m);
	}
	struct violations moved = {0};
	if (rc == 0 && absent.n)
		rc = snapshot_check(&absent, quarantine_dir, &moved, e);
	for (size_t i = 0; i < moved.n; i++) {
		struct violation v = moved.v[i];
		char *what = xasprintf("%s in a git repository created during the run", v.what);
		free(v.what);
		v.what = what;
		v.own_words = true;
		append(out, v);
	}
	free(moved.v);
	snapshot_free(&absent);
	strv_free(&now);
	return rc;
}
