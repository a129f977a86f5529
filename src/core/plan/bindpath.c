/* bindpath: see bindpath.h. */
#include "core/plan/bindpath.h"

#include <stdlib.h>
#include <string.h>

#include "core/plan/resolve.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

static const char never_root[] = "the root directory";
static const char never_home[] = "your home directory or one of its ancestors";
static const char never_state[] = "agentjail's state directory, or a path in it";
static const char never_config[] = "agentjail's configuration directory, or a path in it";

/* `dir` as named, then as it resolves (when it does and differs): a test on both forms. */
static bool either_form(struct hostfacts *hf, const char *dir, bool (*test)(const char *dir,
									  const char *real),
			const char *real)
{
	if (!dir)
		return false;
	if (test(dir, real))
		return true;
	_cleanup_free_ char *r = hf_realpath(hf, dir, NULL);
	return r && strcmp(r, dir) && test(r, real);
}

static bool is_at_or_above(const char *dir, const char *real) { return path_is_under(dir, real); }
static bool is_at_or_below(const char *dir, const char *real) { return path_is_under(real, dir); }

const char *bindpath_never(struct hostfacts *hf, const char *real)
{
	if (!strcmp(real, "/"))
		return never_root;
	if (either_form(hf, hf->home, is_at_or_above, real))
		return never_home;
	if (either_form(hf, hf->state_dir, is_at_or_below, real))
		return never_state;
	if (either_form(hf, hf->config_dir, is_at_or_below, real))
		return never_config;
	return NULL;
}

/* How the user names `path` for `opt`: "--rw /x" on the command line, rw = ["/x"] in a file. */
static char *spelled(const char *opt, const char *path)
{
	return !strncmp(opt, "--", 2) ? xasprintf("%s %s", opt, path)
				      : xasprintf("%s = [\"%s\"]", opt, path);
}

int bindpath_refuse(struct err *e, const char *opt, const char *given, const char *real,
			const char *why)
{
	if (strcmp(given, real))
		err_set(e, 0, given, "%s %s leads to %s, %s: no jail is given it", opt, given,
			real, why);
	else
		err_set(e, 0, given, "%s %s is %s: no jail is given it", opt, given, why);
	if (why == never_home || why == never_root)
		err_hint(e, "name the directories in it the command needs; to work in your home "
			    "itself, make it the workspace with --workspace");
	else if (why == never_state)
		err_hint(e, "it holds the sessions, the quarantine and the trusted projects: a jail "
			    "that wrote there would decide what the next one may do");
	else
		err_hint(e, "it decides what the next jail may do: edit it outside any jail");
	return -1;
}

/* The first symlink on the way from `base` (the workspace as `given` names it, whose real
 * place is ws_real) down to `given` that leads out of ws_real: *link is it as given, *target
 * its content, *to where it leads. false when there is none (or the walk meets a missing or
 * dangling component first: nothing is bound through those). */
static bool link_out(struct hostfacts *hf, const char *given, const char *base,
		     const char *ws_real, char **link, char **target, char **to)
{
	const char *rel = path_below(given, base);
	char *named = xstrdup(base);
	char *real = xstrdup(ws_real);
	bool found = false;
	while (rel && *rel && !found) {
		size_t n = strcspn(rel, "/");
		_cleanup_free_ char *comp = xstrndup(rel, n);
		rel += n + (rel[n] == '/');
		char *next_named = path_join(named, comp);
		free(named);
		named = next_named;
		char *cand = path_join(real, comp);
		const struct hf_stat *st = hf_stat(hf, cand);
		char *next_real = st->type == HF_SYMLINK ? hf_realpath(hf, cand, NULL)
			       : st->type == HF_MISSING ? NULL
							: xstrdup(cand);
		if (next_real && st->type == HF_SYMLINK && !path_is_under(next_real, ws_real)) {
			*link = xstrdup(named);
			*target = xstrdup(st->link);
			*to = xstrdup(next_real);
			found = true;
		}
		free(cand);
		free(real);
		real = next_real;
		if (!real)
			break;
	}
	free(named);
	free(real);
	return found;
}

int bindpath_resolve(struct hostfacts *hf, const char *opt, bool never, const char *given,
		     const char *workspace, char **real, struct err *e)
{
	*real = NULL;
	_cleanup_free_ char *resolved = hf_realpath(hf, given, NULL);
	_cleanup_free_ char *ws_real = workspace ? hf_realpath(hf, workspace, NULL) : NULL;
	if (workspace && !ws_real)
		ws_real = xstrdup(workspace);
	const char *base = !workspace ? NULL
			   : path_is_under(given, workspace) ? workspace
			   : path_is_under(given, ws_real)   ? ws_real
							     : NULL;
	if (base && !(resolved && path_is_under(resolved, ws_real))) {
		_cleanup_free_ char *link = NULL, *target = NULL, *to = NULL;
		if (link_out(hf, given, base, ws_real, &link, &target, &to)) {
			if (!strcmp(link, given))
				err_set(e, 0, given, "%s %s is a symlink to %s, which leads out of the "
					"workspace, to %s", opt, given, target, to);
			else
				err_set(e, 0, given, "%s %s goes through %s, a symlink to %s, which "
					"leads out of the workspace, to %s", opt, given, link, target,
					to);
			const char *place = resolved ? resolved : to;
			const char *why = bindpath_never(hf, place);
			_cleanup_free_ char *say = spelled(opt, place);
			if (never && why)
				err_hint(e, "a workspace's links are the project's, not yours; and %s "
					    "is %s, which no jail is given",
					 place, why);
			else
				err_hint(e, "a workspace's links are the project's, not yours; if you "
					    "mean %s, name it as it is: %s",
					 place, say);
			return -1;
		}
		if (resolved) {
			/* no single link to blame (the walk met a dangling one): still outside */
			err_set(e, 0, given, "%s %s leads out of the workspace, to %s", opt, given,
				resolved);
			_cleanup_free_ char *say = spelled(opt, resolved);
			err_hint(e, "if you mean %s, name it as it is: %s", resolved, say);
			return -1;
		}
	}
	if (!resolved) {
		*real = xstrdup(given);
		return 0;
	}
	const char *why = never ? bindpath_never(hf, resolved) : NULL;
	if (why)
		return bindpath_refuse(e, opt, given, resolved, why);
	*real = steal_pointer(&resolved);
	return 0;
}

static int resolve_list(struct hostfacts *hf, const char *opt, bool never, struct strv *v,
			const char *workspace, struct err *e)
{
	for (size_t i = 0; i < v->n; i++) {
		char *r;
		if (bindpath_resolve(hf, opt, never, v->v[i], workspace, &r, e) < 0)
			return -1;
		free(v->v[i]);
		v->v[i] = r;
	}
	return 0;
}

int bindpath_resolve_policy(struct hostfacts *hf, struct policy *pol, struct err *e)
{
	if (resolve_list(hf, "--rw", true, &pol->rw, pol->workspace, e) < 0 ||
	    resolve_list(hf, "--ro", true, &pol->ro, pol->workspace, e) < 0 ||
	    resolve_list(hf, "--hide", false, &pol->hide, pol->workspace, e) < 0)
		return -1;
	return 0;
}
