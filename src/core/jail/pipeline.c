/* pipeline: see pipeline.h. */
#include "core/jail/pipeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/confine/seccomp.h"
#include "core/host/hostfacts_probe.h"
#include "core/host/toolprep.h"
#include "core/plan/bindpath.h"
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

static int seccomp_test_errno(void)
{
#ifdef AJ_TEST_BUILD
	const char *v = getenv("AGENTJAIL_TEST_SECCOMP_ERRNO");
	return v ? atoi(v) : 0;
#else
	return 0;
#endif
}

enum jail_stage jail_prepare(struct run_request *req, const struct jail_prep *o, struct jail *j,
			     struct err *e)
{
	hostfacts_init(&j->hf);
	memset(&j->plan, 0, sizeof j->plan);
	if (req->session_id)
		j->hf.session_id = xstrdup(req->session_id);
	if (policy_canonicalize(&req->pol, e) < 0 || policy_validate(&req->pol, getenv("HOME"), e) < 0)
		return JAIL_BAD_POLICY;
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
	}
	/* the defaults are resolved here, so --dry-run shows them and the session stores them */
	if (req->pol.memory == LIMIT_UNSET)
		req->pol.memory_default = true;
	limits_resolve(&req->pol.memory, &req->pol.pids, j->hf.mem_total);
	if (bwrap_build(&req->pol, &j->hf, &req->cmd, &j->plan, e) < 0)
		return JAIL_BAD_PLAN;
#ifdef AJ_TEST_BUILD
	test_drop_deny_read(&j->plan);
#endif
	return JAIL_READY;
}

void jail_free(struct jail *j)
{
	bw_plan_free(&j->plan);
	hostfacts_free(&j->hf);
}

int jail_launch(const struct run_request *req, const struct jail *j, const char *bwrap,
		const char *quarantine, const struct launch_hooks *hooks, struct launch_result *r,
		struct err *e)
{
	struct seccomp_opts sc = {.allow_ptrace = req->pol.allow_ptrace,
				  .test_errno = seccomp_test_errno()};
	_cleanup_free_ char *own = quarantine ? NULL : path_join(j->hf.state_dir, "quarantine");
	return launch_run(&j->plan, bwrap, &sc, quarantine ? quarantine : own, hooks, r, e);
}
