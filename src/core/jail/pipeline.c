/* pipeline: see pipeline.h. */
#include "core/jail/pipeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/host/homeprep.h"
#include "core/host/hostfacts_probe.h"
#include "core/host/toolprep.h"
#include "core/plan/bindpath.h"
#include "core/plan/homekeep.h"
#include "core/plan/initargs.h"
#include "core/plan/limits.h"
#include "core/plan/toolcache.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

extern char **environ;

#ifdef AJ_TEST_BUILD
/* test builds only: the mask-only jail, so a test can show the read-deny is what holds */
static void test_drop_deny_read(struct bw_plan *plan)
{
	if (!getenv("AGENTJAIL_TEST_NO_DENY_READ"))
		return;
	struct strv *c = &plan->cmd;
	size_t w = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (!strcmp(c->v[i], INIT_OPT_DENY_READ) && i + 1 < c->n) {
			free(c->v[i]);
			free(c->v[++i]);
			continue;
		}
		c->v[w++] = c->v[i];
	}
	c->n = w;
	c->v[w] = NULL;
}
#endif

/* --home persist: the workspace's home made and locked for this run (homeprep.h). Without a
 * state dir nothing is made: the plan refuses the policy (bwrap_argv's check_persist). */
static int take_home(const struct run_request *req, struct jail *j, struct err *e)
{
	_cleanup_free_ char *root = homekeep_root(j->hf.state_dir, req->pol.workspace);
	if (req->pol.home != HOME_PERSIST || !root)
		return 0;
	return homeprep_prepare(root, req->pol.workspace, req->session_id, &j->home_lock, e);
}

/* The way cleared for bwrap in the locked home: what an earlier jail left where this plan's
 * mount points go is renamed aside (bwrap would follow it out of the home). */
static int clear_home(const struct run_request *req, struct jail *j, struct err *e)
{
	_cleanup_free_ char *dir = homekeep_dir(j->hf.state_dir, req->pol.workspace);
	struct homekeep_points pts;
	homekeep_points(&j->plan, &j->hf, j->hf.home, dir, &pts);
	int rc = homeprep_clear(dir, &pts, &j->home_moved, e);
	homekeep_points_free(&pts);
	return rc;
}

enum jail_stage jail_prepare(struct run_request *req, const struct jail_prep *o, struct jail *j,
			     struct err *e)
{
	hostfacts_init(&j->hf);
	memset(&j->plan, 0, sizeof j->plan);
	j->home_lock = -1;
	j->home_moved = (struct strv)STRV_INIT;
	if (req->session_id)
		j->hf.session_id = xstrdup(req->session_id);
	j->ahead = NULL;
	j->ahead_free = NULL;
	if (policy_canonicalize(&req->pol, e) < 0 || policy_validate(&req->pol, getenv("HOME"), e) < 0)
		return JAIL_BAD_POLICY;
	if (o->ahead)
		o->ahead(j, &req->pol);
	if (hostfacts_gather(&j->hf, &req->pol, &req->cmd, environ, e) < 0)
		return JAIL_NO_FACTS;
	if (o->sec)
		hf_secrets_copy(&j->hf.sec, o->sec);
	/* --rw, --ro and --hide followed through the host's links, with the rules of §3b; the
	 * contradictions are checked again on what they resolved to */
	if (bindpath_resolve_policy(&j->hf, &req->pol, e) < 0 ||
	    policy_validate(&req->pol, getenv("HOME"), e) < 0)
		return JAIL_BAD_POLICY;
	struct stat st;
	if (o->no_new_state_dir && j->hf.state_dir && lstat(j->hf.state_dir, &st) < 0 &&
	    errno == ENOENT) {
		free(j->hf.state_dir);
		j->hf.state_dir = NULL;
	}
	/* the private package caches and filtered registry configuration, before the plan that
	 * binds them; when they cannot be made the plan goes without them (the caches stay in the
	 * jail's tmpfs home) and the session store, in the same state dir, gives the one warning */
	if (o->make_caches) {
		struct err ignored = {0};
		_cleanup_free_ char *root = toolcache_root(j->hf.state_dir, req->pol.workspace,
							   req->pol.cache);
		const char *ws = req->pol.cache == CACHE_WORKSPACE ? req->pol.workspace : NULL;
		_cleanup_strv_ struct strv agent = STRV_INIT;
		_cleanup_strv_ struct strv dirs = STRV_INIT;
		strv_copy(&dirs, &req->pol.agent_private);
		strv_copy(&dirs, &req->pol.agent_private_over);
		for (size_t i = 0; root && req->pol.profile && i < dirs.n; i++)
			strv_push_take(&agent, toolcache_agent_dir(root, req->pol.profile, dirs.v[i]));
		if (toolprep_prepare(&j->hf, root, ws, &agent, &ignored) < 0)
			err_clear(&ignored);
		if (take_home(req, j, e) < 0)
			return JAIL_NO_HOME;
	}
	/* the defaults are resolved here, so --dry-run shows them and the session stores them */
	if (req->pol.memory == LIMIT_UNSET)
		req->pol.memory_default = true;
	limits_resolve(&req->pol.memory, &req->pol.pids, j->hf.mem_total);
	if (bwrap_build(&req->pol, &j->hf, &req->cmd, &j->plan, e) < 0)
		return JAIL_BAD_PLAN;
	if (j->home_lock >= 0 && clear_home(req, j, e) < 0)
		return JAIL_NO_HOME;
#ifdef AJ_TEST_BUILD
	test_drop_deny_read(&j->plan);
#endif
	return JAIL_READY;
}

void jail_free(struct jail *j)
{
	bw_plan_free(&j->plan);
	hostfacts_free(&j->hf);
	if (j->home_lock >= 0)
		(void)close(j->home_lock);
	j->home_lock = -1;
	strv_free(&j->home_moved);
	if (j->ahead && j->ahead_free)
		j->ahead_free(j->ahead);
	j->ahead = NULL;
	j->ahead_free = NULL;
}
