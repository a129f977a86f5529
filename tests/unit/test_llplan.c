/* llplan: the Landlock backend's ruleset derived from a bwrap plan (doc/design.md §4c), on a
 * fixture host (tests/data/argv/user.inc) with a workspace holding protected and masked paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/bwrap_argv.h"
#include "core/plan/hostfacts.h"
#include "core/backend/landlock/llplan.h"
#include "core/plan/policy.h"
#include "core/plan/profile.h"
#include "util/path.h"
#include "util/strv.h"
#include "golden.h"

#define WS "/home/u/proj"
#define TMP "/tmp/agentjail-ll-T"

struct fx {
	struct hostfacts hf;
	struct run_request req;
	struct bw_plan bp;
	struct ll_plan lp;
};

/* The profile to apply after parsing (an agent command's run), or NULL. */
static const char *fx_profile;

static void build(struct fx *f, const char *const *args, size_t nargs)
{
	struct err e = {0};
	char file[4200];
	hostfacts_init(&f->hf);
	snprintf(file, sizeof file, "%s/user.inc", golden_dir("argv"));
	assert_int_equal(hostfacts_load_fixture(&f->hf, file, &e), 0);
	hf_add(&f->hf, WS "/.git", HF_DIR, 0755, 1000, NULL);
	hf_add(&f->hf, WS "/.git/config", HF_FILE, 0644, 1000, NULL);
	hf_add(&f->hf, WS "/.git/hooks", HF_DIR, 0755, 1000, NULL);
	hf_add(&f->hf, WS "/.git/objects", HF_DIR, 0755, 1000, NULL);
	hf_add(&f->hf, WS "/.git/HEAD", HF_FILE, 0644, 1000, NULL);
	hf_add(&f->hf, WS "/src", HF_DIR, 0755, 1000, NULL);
	hf_add(&f->hf, WS "/README", HF_FILE, 0644, 1000, NULL);
	hf_add(&f->hf, WS "/.env", HF_FILE, 0600, 1000, NULL);
	hf_add(&f->hf, WS "/ssh", HF_SYMLINK, 0777, 1000, "/home/u/.ssh");
	hf_add(&f->hf, "/home/u/data", HF_DIR, 0755, 1000, NULL);
	hf_add(&f->hf, "/home/u/data/in", HF_FILE, 0644, 1000, NULL);
	struct strv a = STRV_INIT;
	for (size_t i = 0; i < nargs; i++)
		strv_push(&a, args[i]);
	struct parse_ctx ctx = {.cwd = f->hf.cwd, .home = f->hf.home};
	assert_int_equal(run_parse_args((int)a.n, strv_data(&a), &ctx, &f->req, &e), 0);
	if (fx_profile) {
		hf_add(&f->hf, "/home/u/.claude", HF_DIR, 0700, 1000, NULL);
		hf_add(&f->hf, "/home/u/.claude/ide", HF_DIR, 0700, 1000, NULL);
		hf_add(&f->hf, "/home/u/.claude/settings.json", HF_FILE, 0600, 1000, NULL);
		struct strv env = STRV_INIT;
		profile_apply(profile_find(fx_profile), f->hf.home, &env, &f->req.pol);
		strv_free(&env);
	}
	assert_int_equal(bwrap_build(&f->req.pol, &f->hf, &f->req.cmd, &f->bp, &e), 0);
	assert_int_equal(llplan_build(&f->bp, &f->req.pol, &f->hf, TMP, &f->lp, &e), 0);
	strv_free(&a);
}

static void fx_free(struct fx *f)
{
	ll_plan_free(&f->lp);
	bw_plan_free(&f->bp);
	run_request_free(&f->req);
	hostfacts_free(&f->hf);
}

/* The right granted on exactly path, or -1. */
static int right_of(const struct ll_plan *p, const char *path)
{
	int r = -1;
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->rules[i].path, path))
			r = (int)p->rules[i].right;
	return r;
}

/* No rule reaching `path` grants more than `max` (LIST reaches nothing beneath its own dir). */
static void assert_at_most(const struct ll_plan *p, const char *path, int max)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct llp_rule *r = &p->rules[i];
		if (!path_is_under(path, r->path) || r->right == LLP_LIST)
			continue;
		if ((int)r->right > max)
			fail_msg("%s is reached by a %s rule on %s", path, llp_right_name(r->right),
				 r->path);
	}
}

static void workspace_with_exceptions(void **state)
{
	(void)state;
	static const char *const args[] = {"--hide", WS "/.env", "--", "make"};
	struct fx f = {0};
	build(&f, args, 4);
	if (getenv("AJ_SHOW")) {
		char *t = bw_plan_render(&f.bp, "bwrap");
		fputs(t, stderr);
		free(t);
		t = ll_plan_render(&f.lp);
		fputs(t, stderr);
		free(t);
	}
	/* the workspace holds a masked path (--hide): only listed; its other children writable */
	assert_int_equal(right_of(&f.lp, WS), LLP_LIST);
	assert_int_equal(right_of(&f.lp, WS "/src"), LLP_WRITE);
	assert_int_equal(right_of(&f.lp, WS "/README"), LLP_WRITE);
	/* protected paths are no exception (a new file's write right comes from its directory):
	 * .git is writable whole, the guard keeps .git/config and .git/hooks (core/jail/guard.h) */
	assert_int_equal(right_of(&f.lp, WS "/.git"), LLP_WRITE);
	assert_int_equal(right_of(&f.lp, WS "/.git/config"), LLP_READ);
	/* masked: no right at all */
	assert_int_equal(right_of(&f.lp, WS "/.env"), -1);
	assert_at_most(&f.lp, WS "/.env", LLP_LIST);
	/* a symlink gets no rule (its target is judged where it lies) */
	assert_int_equal(right_of(&f.lp, WS "/ssh"), -1);
	/* $HOME (a private tmpfs under bwrap) is unreachable; its git identity readable */
	assert_at_most(&f.lp, "/home/u", LLP_LIST);
	assert_int_equal(right_of(&f.lp, "/home/u/.gitconfig"), LLP_READ);
	/* system files, the private TMPDIR */
	assert_int_equal(right_of(&f.lp, "/usr"), LLP_READ);
	assert_int_equal(right_of(&f.lp, TMP), LLP_WRITE);
	assert_true(strv_contains(&f.lp.env, "TMPDIR=" TMP));
	assert_string_equal(f.lp.chdir, WS);
	/* no scratch tmpfs of the host: /tmp itself is not granted */
	assert_at_most(&f.lp, "/tmp/x", LLP_LIST);
	fx_free(&f);
}

static void workspace_without_mask_is_writable(void **state)
{
	(void)state;
	static const char *const args[] = {"--", "make"};
	struct fx f = {0};
	build(&f, args, 2);
	/* protected paths (.git/config, .git/hooks, missing .envrc) do not split the workspace:
	 * touch, mkdir and git commit work at its top and in .git (issue 19) */
	assert_int_equal(right_of(&f.lp, WS), LLP_WRITE);
	assert_int_equal(right_of(&f.lp, WS "/src"), -1);
	fx_free(&f);
}

static void read_only_workspace(void **state)
{
	(void)state;
	static const char *const args[] = {"--fs", "read-only", "--", "make"};
	struct fx f = {0};
	build(&f, args, 4);
	for (size_t i = 0; i < f.lp.n; i++)
		if (f.lp.rules[i].right == LLP_WRITE)
			assert_string_equal(f.lp.rules[i].path, TMP);
	assert_int_equal(right_of(&f.lp, WS), LLP_READ);
	fx_free(&f);
}

static void extra_rw_is_writable(void **state)
{
	(void)state;
	static const char *const args[] = {"--rw", "/home/u/data", "--", "make"};
	struct fx f = {0};
	build(&f, args, 4);
	/* a writable root holds protected names too (§3 step 7): no exception under Landlock, the
	 * guard keeps them; it is writable whole */
	assert_int_equal(right_of(&f.lp, "/home/u/data"), LLP_WRITE);
	assert_int_equal(right_of(&f.lp, "/home/u/data/in"), -1);
	fx_free(&f);
}

/* An agent's run (issue 28): $HOME is a private directory of links to what bwrap binds in
 * its tmpfs; the config dir writable whole (a new file at its top must be possible), what
 * bwrap puts inside it said as a gap, the private copy a link written back after the run. */
static void agent_home_view(void **state)
{
	(void)state;
	static const char *const args[] = {"--", "claude"};
	struct fx f = {0};
	fx_profile = "claude";
	build(&f, args, 2);
	fx_profile = NULL;
	assert_non_null(f.lp.home);
	assert_string_equal(f.lp.home, TMP "/home");
	assert_true(strv_contains(&f.lp.env, "HOME=" TMP "/home"));
	bool claude = false, gitconfig = false;
	for (size_t i = 0; i < f.lp.nents; i++) {
		const struct llp_home_ent *h = &f.lp.ents[i];
		if (!strcmp(h->rel, ".claude") && h->kind == LLH_LINK)
			claude = !strcmp(h->target, "/home/u/.claude");
		if (!strcmp(h->rel, ".gitconfig") && h->kind == LLH_LINK)
			gitconfig = !strcmp(h->target, "/home/u/.gitconfig") && !h->writeback;
	}
	assert_true(claude);
	assert_true(gitconfig);
	assert_int_equal(right_of(&f.lp, "/home/u/.claude"), LLP_WRITE);
	assert_int_equal(right_of(&f.lp, "/home/u/.gitconfig"), LLP_READ);
	/* the real $HOME stays out of reach */
	assert_at_most(&f.lp, "/home/u", LLP_LIST);
	/* the IDE tokens and the private dirs: said, never an exception that splits ~/.claude */
	bool ide = false;
	for (size_t i = 0; i < f.lp.gaps.n; i++)
		ide |= strstr(f.lp.gaps.v[i], "~/.claude/ide: masked under bwrap; readable here") !=
		       NULL;
	assert_true(ide);
	assert_int_not_equal(right_of(&f.lp, "/home/u/.claude"), LLP_LIST);
	fx_free(&f);
}

/* --home persist: refused before anything is made (this backend has no mounts, so no $HOME
 * but the real one) */
static void home_persist_refused(void **state)
{
	(void)state;
	struct policy p;
	policy_init(&p);
	struct err e = {0};
	assert_int_equal(llplan_policy_check(&p, &e), 0);
	p.home = HOME_PERSIST;
	assert_int_equal(llplan_policy_check(&p, &e), -1);
	assert_non_null(strstr(e.what, "landlock backend cannot give a jail its persisted home"));
	assert_non_null(strstr(e.hint, "--backend local"));
	policy_free(&p);
}

/* --net ask (nobody to ask: no terminal of agentjail's, no supervising loop for the control
 * socket) and --publish (no network of its own) are refused before anything is made */
static void ask_and_publish_refused(void **state)
{
	(void)state;
	struct policy p;
	policy_init(&p);
	struct err e = {0};
	p.net = NET_ALLOW;
	assert_int_equal(llplan_policy_check(&p, &e), 0);
	p.ask = true;
	assert_int_equal(llplan_policy_check(&p, &e), -1);
	assert_non_null(strstr(e.what, "--net ask cannot be used with --backend landlock"));
	assert_non_null(strstr(e.hint, "--net allow"));
	p.ask = false;
	strv_push(&p.publish, "3000");
	assert_int_equal(llplan_policy_check(&p, &e), -1);
	assert_non_null(strstr(e.what, "--publish cannot be used with --backend landlock"));
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(home_persist_refused),
		cmocka_unit_test(ask_and_publish_refused),
		cmocka_unit_test(workspace_with_exceptions),
		cmocka_unit_test(workspace_without_mask_is_writable),
		cmocka_unit_test(read_only_workspace),
		cmocka_unit_test(extra_rw_is_writable),
		cmocka_unit_test(agent_home_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
