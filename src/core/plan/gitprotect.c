/* gitprotect: see gitprotect.h. */
#include "core/plan/gitprotect.h"

#include <string.h>

#include "util/cleanup.h"
#include "util/path.h"

const char *const git_exec_names[] = {"config", "config.worktree", "hooks",
				      "commondir", "gitdir", "info", NULL};

/* submodule names may hold slashes: modules/a/b/c is the git dir of submodule "a/b/c" */
#define MODULES_DEPTH 6

static bool is_gitdir(struct hostfacts *hf, const char *dir)
{
	_cleanup_free_ char *objects = path_join(dir, "objects");
	_cleanup_free_ char *head = path_join(dir, "HEAD");
	return hf_type(hf, objects) == HF_DIR && hf_type(hf, head) != HF_MISSING;
}

static void add_dir(struct strv *out, const char *dir)
{
	if (out->n < GITPROTECT_MAX_DIRS && !strv_contains(out, dir))
		strv_push(out, dir);
}

static void find_modules(struct hostfacts *hf, const char *dir, unsigned depth, struct strv *out)
{
	const struct strv *kids = hf_children(hf, dir);
	for (size_t i = 0; i < kids->n; i++) {
		_cleanup_free_ char *p = path_join(dir, kids->v[i]);
		if (hf_type(hf, p) != HF_DIR)
			continue;
		if (is_gitdir(hf, p))
			add_dir(out, p);
		else if (depth < MODULES_DEPTH)
			find_modules(hf, p, depth + 1, out);
	}
}

void gitprotect_gitdirs(struct hostfacts *hf, struct strv *out)
{
	const char *top[] = {hf->gitdir, hf->commondir};
	for (size_t i = 0; i < 2; i++)
		if (top[i] && hf_type(hf, top[i]) == HF_DIR)
			add_dir(out, top[i]);
	for (size_t i = 0; i < hf->nested_git.n; i++)
		if (hf_type(hf, hf->nested_git.v[i]) == HF_DIR)
			add_dir(out, hf->nested_git.v[i]);
	/* `out` grows while it is walked: each git dir found is searched in turn */
	for (size_t d = 0; d < out->n; d++) {
		_cleanup_free_ char *modules = path_join(out->v[d], "modules");
		if (hf_type(hf, modules) == HF_DIR)
			find_modules(hf, modules, 0, out);
		_cleanup_free_ char *wts = path_join(out->v[d], "worktrees");
		const struct strv *kids = hf_type(hf, wts) == HF_DIR ? hf_children(hf, wts) : NULL;
		for (size_t i = 0; kids && i < kids->n; i++) {
			_cleanup_free_ char *w = path_join(wts, kids->v[i]);
			if (hf_type(hf, w) == HF_DIR)
				add_dir(out, w);
		}
	}
}

void gitprotect_candidates(struct hostfacts *hf, struct strv *cand)
{
	struct strv dirs = STRV_INIT;
	gitprotect_gitdirs(hf, &dirs);
	for (size_t d = 0; d < dirs.n; d++)
		for (size_t i = 0; git_exec_names[i]; i++)
			strv_push_take(cand, path_join(dirs.v[d], git_exec_names[i]));
	/* an included config file is config (the builder keeps those inside a writable root) */
	strv_copy(cand, &hf->git_includes);
	for (size_t i = 0; i < hf->nested_git.n; i++) {
		enum hf_type t = hf_type(hf, hf->nested_git.v[i]);
		if (t != HF_DIR)
			strv_push(cand, hf->nested_git.v[i]);
	}
	strv_free(&dirs);
}
