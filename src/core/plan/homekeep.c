/* homekeep: see homekeep.h. */
#include "core/plan/homekeep.h"

#include <string.h>

#include "core/plan/toolcache.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

char *homekeep_root(const char *state_dir, const char *workspace)
{
	if (!state_dir || !workspace)
		return NULL;
	_cleanup_free_ char *key = toolcache_key(workspace);
	return xasprintf("%s/home/%s", state_dir, key);
}

char *homekeep_dir(const char *state_dir, const char *workspace)
{
	_cleanup_free_ char *root = homekeep_root(state_dir, workspace);
	return root ? path_join(root, HOMEKEEP_HOME) : NULL;
}

/* The index of the op binding `dir` at `home`, or p->nops. */
static size_t home_bind(const struct bw_plan *p, const char *home, const char *dir)
{
	for (size_t i = 0; i < p->nops; i++) {
		const struct bw_op *o = &p->ops[i];
		const char *d = bw_op_made_dest(o);
		if (o->src && d && !strcmp(o->src, dir) && !strcmp(d, home))
			return i;
	}
	return p->nops;
}

/* Whether op i's destination is made inside the bind of op h: no op between them made a
 * place above it (the deepest mount over its parent is op h's). */
static bool made_in(const struct bw_plan *p, size_t h, size_t i, const char *d)
{
	for (size_t j = h + 1; j < i; j++) {
		const char *m = bw_op_made_dest(&p->ops[j]);
		if (m && path_is_under(d, m))
			return false;
	}
	return true;
}

void homekeep_points(const struct bw_plan *p, struct hostfacts *hf, const char *home,
		     const char *dir, struct homekeep_points *out)
{
	*out = (struct homekeep_points){STRV_INIT, STRV_INIT, STRV_INIT};
	size_t h = home_bind(p, home, dir);
	for (size_t i = h + 1; i < p->nops; i++) {
		const struct bw_op *o = &p->ops[i];
		const char *d = bw_op_made_dest(o);
		const char *rel = d ? path_below(d, home) : NULL;
		if (!rel || !*rel || !made_in(p, h, i, d))
			continue;
		const char *verb = bw_op_verb(o);
		const char *src = o->src ? o->src : o->args.n >= 3 ? o->args.v[o->args.n - 2] : NULL;
		if (!strcmp(verb, "--symlink")) {
			strv_push(&out->links, rel);
			strv_push(&out->links, o->args.v[o->args.n - 2]);
		} else if (!strcmp(verb, "--tmpfs") || !strcmp(verb, "--dir") ||
			   !strcmp(verb, "--proc") || !strcmp(verb, "--dev")) {
			strv_push(&out->dirs, rel);
		} else if (!strcmp(verb, "--ro-bind-data") || o->data) {
			strv_push(&out->files, rel);
		} else if (src && hf_type(hf, src) == HF_DIR) {
			strv_push(&out->dirs, rel);
		} else {
			/* a file, /dev/null (a mask), or a source gone since the plan (bwrap
			 * fails then): a file's place */
			strv_push(&out->files, rel);
		}
	}
}

void homekeep_points_free(struct homekeep_points *pts)
{
	strv_free(&pts->dirs);
	strv_free(&pts->files);
	strv_free(&pts->links);
}

bool homekeep_is_home_mount(const char *home, const char *root, const char *point)
{
	if (!home || strcmp(point, home) != 0 || strcmp(path_basename(root), HOMEKEEP_HOME))
		return false;
	_cleanup_free_ char *keydir = path_dirname(root);
	_cleanup_free_ char *up = path_dirname(keydir);
	const char *key = path_basename(keydir);
	return strlen(key) == TOOLCACHE_KEY_HEX &&
	       strspn(key, "0123456789abcdef") == TOOLCACHE_KEY_HEX &&
	       !strcmp(path_basename(up), "home");
}
