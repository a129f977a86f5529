/* The argv builder: golden files per case (tests/data/argv/NAME.facts → NAME.golden) and
 * property tests over generated policies and hosts. AJ_UPDATE_GOLDEN=1 rewrites the goldens. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/bindpath.h"
#include "core/plan/bwrap_argv.h"
#include "core/plan/hostfacts.h"
#include "core/plan/policy.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/xalloc.h"
#include "golden.h"

static const char *data_dir(void)
{
	return golden_dir("argv");
}

/* "# args: a b c" on the first line of a case; "%20" in one is a space */
static void case_args(const char *facts, struct strv *args)
{
	char *txt = golden_read_all(facts);
	assert_non_null(txt);
	assert_true(strncmp(txt, "# args: ", 8) == 0);
	char *nl = strchr(txt, '\n');
	*nl = '\0';
	char *save = NULL;
	for (char *t = strtok_r(txt + 8, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		for (char *sp; (sp = strstr(t, "%20"));)
			memmove(sp + 1, sp + 3, strlen(sp + 3) + 1), *sp = ' ';
		strv_push(args, t);
	}
	free(txt);
}

/* parse + validate + resolve the paths + build (jail_prepare's steps), rendered as the golden
 * text */
static char *render_case(struct hostfacts *hf, struct strv *args)
{
	struct parse_ctx ctx = {.cwd = hf->cwd, .home = hf->home};
	struct run_request req;
	struct err e = {0};
	struct bw_plan plan = {0};
	char buf[4096];
	char *out;
	int parsed = run_parse_args((int)args->n, strv_data(args), &ctx, &req, &e);
	if (parsed == 0)
		policy_secrets_activate(&req.pol, &hf->env); /* as cmd_run_request does */
	if (parsed < 0 || policy_validate(&req.pol, hf->home, &e) < 0 ||
	    bindpath_resolve_policy(hf, &req.pol, &e) < 0 ||
	    bwrap_build(&req.pol, hf, &req.cmd, &plan, &e) < 0) {
		err_format(&e, buf, sizeof buf);
		out = xasprintf("error: %s\n", buf);
	} else {
		char *pj = policy_to_json(&req.pol);
		char *txt = bw_plan_render(&plan, "/usr/bin/bwrap");
		out = xasprintf("# policy: %s\n%s", pj, txt);
		free(pj);
		free(txt);
	}
	bw_plan_free(&plan);
	run_request_free(&req);
	return out;
}

static void golden_case(void **state)
{
	const char *name = *state;
	char facts[4200];
	struct hostfacts hf;
	golden_load(data_dir(), name, &hf, facts);
	struct strv args = STRV_INIT;
	case_args(facts, &args);
	char *got = render_case(&hf, &args);
	golden_check(data_dir(), name, got);
	free(got);
	strv_free(&args);
	hostfacts_free(&hf);
}

/* ---- properties over generated policies ---- */

static const char *const pool[] = {
	"/home/u/proj/.git",	     "/home/u/proj/.git/hooks",	 "/home/u/proj/.git/config",
	"/home/u/proj/.envrc",	     "/home/u/proj/.vscode",	 "/home/u/proj/.claude",
	"/home/u/proj/.claude/commands", "/home/u/proj/.claude/settings.json",
	"/home/u/proj/src",	     "/home/u/proj/.husky",	 "/home/u/data",
	"/home/u/data/.git",	     "/home/u/data/.git/hooks",	 "/home/u/data/.bashrc",
	"/home/u/bin",		     "/home/u/.cache",		 "/srv",
	"/srv/ref",		     "/home/u/proj/secret",	 "/home/u/.local/state/agentjail",
	"/home/u/.config",	     "/home/u/.config/agentjail", NULL};

static unsigned rnd(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 0x7fff;
}

/* A fresh hf with the facts of tests/data/argv/user.inc */
static void load_user(struct hostfacts *hf)
{
	hostfacts_init(hf);
	struct err e = {0};
	char f[4200];
	snprintf(f, sizeof f, "%s/user.inc", data_dir());
	assert_int_equal(hostfacts_load_fixture(hf, f, &e), 0);
}

static void gen_host(struct hostfacts *hf, unsigned *seed)
{
	load_user(hf);
	if (rnd(seed) % 3 == 0)
		hf->uid = 0;
	for (size_t i = 0; pool[i]; i++) {
		unsigned r = rnd(seed) % 6;
		if (r == 0)
			continue;
		hf_add(hf, pool[i], r == 5 ? HF_SYMLINK : (r == 4 ? HF_FILE : HF_DIR), 0755, 1000,
		       r == 5 ? "/home/u/.ssh" : NULL);
	}
	/* parents of everything added are directories */
	hf_add(hf, "/home/u/proj", HF_DIR, 0755, 1000, NULL);
	if (rnd(seed) % 2)
		hf->hooks_path = xstrdup("/home/u/proj/.husky");
}

static void gen_args(struct strv *a, unsigned *seed)
{
	static const char *const fs[] = {"ro", "rw"};
	static const char *const net[] = {"off", "on", "allow"};
	strv_push(a, "--fs");
	strv_push(a, fs[rnd(seed) % 2]);
	strv_push(a, "--net");
	strv_push(a, net[rnd(seed) % 3]);
	static const char *const opts[] = {"--rw", "--ro", "--hide"};
	unsigned n = rnd(seed) % 5;
	for (unsigned i = 0; i < n; i++) {
		strv_push(a, opts[rnd(seed) % 3]);
		strv_push(a, pool[rnd(seed) % (sizeof pool / sizeof *pool - 1)]);
	}
	strv_push(a, "--env");
	strv_push(a, "SECRET_TOKEN=s3cr3t-value-xyz");
	strv_push(a, "--");
	strv_push(a, "bash");
}

static bool is_mount(const char *opt)
{
	static const char *const m[] = {"--bind-fd", "--ro-bind-fd", "--ro-bind", "--bind",
					"--dev-bind", "--tmpfs", "--proc", "--dev", "--symlink",
					"--ro-bind-data", NULL};
	for (size_t i = 0; m[i]; i++)
		if (!strcmp(opt, m[i]))
			return true;
	return false;
}

static const char *dest_of(const struct bw_op *o)
{
	return o->args.v[o->args.n - 1];
}

/* The option of an op past "--size N" / "--perms M". */
static const char *verb_of(const struct bw_op *o)
{
	size_t k = 0;
	while (k + 1 < o->args.n && (!strcmp(o->args.v[k], "--size") ||
				     !strcmp(o->args.v[k], "--perms")))
		k += 2;
	return o->args.v[k];
}

/* bwrap never makes a directory on the way to a destination where the view is empty (its own
 * root, a tmpfs, a directory of the plan): bwrap makes a bind's parents 0700, which as root
 * Landlock leaves unreadable (issue 26). Each such directory is an earlier "--perms 0755
 * --dir". */
static void check_parents(const struct bw_plan *p)
{
	struct strv made = STRV_INIT, fresh = STRV_INIT;
	for (size_t i = 0; i < p->nops; i++) {
		const struct bw_op *o = &p->ops[i];
		const char *v = verb_of(o);
		bool dir = !strcmp(v, "--dir");
		if (!dir && !is_mount(v))
			continue;
		const char *d = dest_of(o);
		if (dir) {
			assert_string_equal(o->args.v[0], "--perms");
			assert_string_equal(o->args.v[1], "0755");
		}
		for (const char *s = strchr(d + 1, '/'); s; s = strchr(s + 1, '/')) {
			char *a = xstrndup(d, (size_t)(s - d));
			const char *deepest = NULL;
			for (size_t k = 0; k < made.n; k++)
				if (path_is_strict_ancestor(made.v[k], a) &&
				    (!deepest || strlen(made.v[k]) >= strlen(deepest)))
					deepest = made.v[k];
			if ((!deepest || strv_contains(&fresh, deepest)) && !strv_contains(&made, a))
				fail_msg("%s: its parent %s is left to bwrap (a bind's come out 0700)", d, a);
			free(a);
		}
		strv_push(&made, d);
		if (dir || !strcmp(v, "--tmpfs"))
			strv_push(&fresh, d);
	}
	strv_free(&made);
	strv_free(&fresh);
}

static void check_plan(const struct bw_plan *p, const char *rendered)
{
	struct strv dests = STRV_INIT;
	bool seen_seccomp = false, seen_capdrop = false, seen_userns = false, root_ro = false;
	for (size_t i = 0; i < p->nops; i++) {
		const struct bw_op *o = &p->ops[i];
		const char *opt = o->args.v[0];
		if (!strcmp(opt, "--perms") || !strcmp(opt, "--size")) {
			/* "--size N --perms M --tmpfs D": the mount is the last pair */
			opt = o->args.v[o->args.n - 2];
		}
		if (!strcmp(opt, "--seccomp"))
			seen_seccomp = true;
		if (!strcmp(opt, "--cap-drop"))
			seen_capdrop = true;
		if (!strcmp(opt, "--disable-userns"))
			seen_userns = true;
		if (!strcmp(opt, "--remount-ro") && !strcmp(o->args.v[1], "/"))
			root_ro = true;
		else if (root_ro && (is_mount(opt) || !strcmp(opt, "--remount-ro")))
			fail_msg("a mount after / was made read-only: %s", dest_of(o));
		if (!is_mount(opt))
			continue;
		const char *d = dest_of(o);
		/* one mount per destination */
		if (strv_contains(&dests, d))
			fail_msg("two mounts on %s", d);
		strv_push(&dests, d);
		/* / is never bound, never writable */
		assert_string_not_equal(d, "/");
		/* no host /run: only the resolv.conf target may come from there */
		if (o->src && path_is_under(o->src, "/run"))
			assert_true(strstr(o->src, "resolv") != NULL);
		if (!strcmp(opt, "--ro-bind") && strcmp(o->args.v[1], "/dev/null") != 0)
			assert_true(path_is_under(o->args.v[1], "/proc"));
		/* a protected path: every directory between it and its writable root was
		 * self-bound before it */
		if (o->comment && strstr(o->comment, "protected:")) {
			for (size_t j = 0; j < p->nops; j++) {
				const struct bw_op *q = &p->ops[j];
				if (!q->comment || !strstr(q->comment, "rename guard"))
					continue;
				if (path_is_strict_ancestor(dest_of(q), d))
					assert_true(j < i);
			}
		}
	}
	assert_true(seen_seccomp && seen_capdrop && seen_userns && root_ro);
	check_parents(p);
	/* --net allow: in the holder's namespace, DNS to the stub, the proxy variables last */
	size_t data = 0, share = 0;
	const char *last_env = NULL;
	for (size_t i = 0; i < p->nops; i++) {
		const struct strv *a = &p->ops[i].args;
		/* "--perms 0644 --ro-bind-data FD DEST": readable in the jail */
		if (a->n == 5 && !strcmp(a->v[2], "--ro-bind-data")) {
			assert_string_equal(a->v[0], "--perms");
			assert_string_equal(a->v[1], "0644");
			data++;
		}
		share += !strcmp(a->v[0], "--share-net");
		if (!strcmp(a->v[0], "--setenv") || !strcmp(a->v[0], "--unsetenv"))
			last_env = a->v[1];
	}
	assert_int_equal(data, p->net_allow ? 1 : 0);
	if (p->net_allow) {
		assert_int_equal(share, 1);
		assert_string_equal(last_env, "GIT_SSH_COMMAND");
	}
	assert_null(strstr(rendered, "s3cr3t-value-xyz"));
	assert_null(strstr(rendered, "ghp_shouldnotleak"));
	assert_null(strstr(rendered, "awsshouldnotleak"));
	assert_null(strstr(rendered, "LD_PRELOAD"));
	assert_null(strstr(rendered, "SSH_AUTH_SOCK"));
	strv_free(&dests);
}

static void properties(void **state)
{
	(void)state;
	unsigned seed = 20261129;
	for (int iter = 0; iter < 400; iter++) {
		struct hostfacts hf;
		gen_host(&hf, &seed);
		struct strv args = STRV_INIT;
		gen_args(&args, &seed);
		struct parse_ctx ctx = {.cwd = hf.cwd, .home = hf.home};
		struct run_request req;
		struct err e = {0};
		if (run_parse_args((int)args.n, strv_data(&args), &ctx, &req, &e) == 0 &&
		    policy_validate(&req.pol, hf.home, &e) == 0) {
			struct bw_plan plan = {0};
			if (bwrap_build(&req.pol, &hf, &req.cmd, &plan, &e) < 0) {
				/* only a --rw/--ro path that is not there, or one no jail is
				 * given (agentjail's own directories: bindpath.h), is refused */
				assert_true(strstr(e.what, "path does not exist") ||
					    strstr(e.what, "needs a file or directory") ||
					    strstr(e.what, "no jail is given it"));
				bw_plan_free(&plan);
				run_request_free(&req);
				hostfacts_free(&hf);
				strv_free(&args);
				continue;
			}
			char *txt = bw_plan_render(&plan, "bwrap");
			struct strv flat = STRV_INIT;
			bw_plan_argv(&plan, &flat);
			/* the flat argv (sent through the args fd) does carry the value */
			bool found = false;
			for (size_t i = 0; i < flat.n; i++)
				found |= !strcmp(flat.v[i], "s3cr3t-value-xyz");
			assert_true(found);
			check_plan(&plan, txt);
			free(txt);
			strv_free(&flat);
			bw_plan_free(&plan);
		}
		run_request_free(&req);
		strv_free(&args);
		hostfacts_free(&hf);
	}
}

/* --net allow: bwrap shares the holder's namespace and resolv.conf names the stub, wherever
 * the host's file really is; --net on and off leave the plan's net_allow false. */
static void allow_resolv(void **state)
{
	(void)state;
	static const struct {
		const char *target;          /* resolv_target, or NULL */
		enum hf_type type;           /* /etc/resolv.conf */
		const char *link;
		const char *want;            /* where the data goes, NULL: nowhere */
	} t[] = {
		{"/run/systemd/resolve/stub-resolv.conf", HF_SYMLINK,
		 "../run/systemd/resolve/stub-resolv.conf", "/run/systemd/resolve/stub-resolv.conf"},
		{NULL, HF_FILE, NULL, "/etc/resolv.conf"},
		{NULL, HF_SYMLINK, "resolvconf/resolv.conf", "/etc/resolvconf/resolv.conf"},
		{NULL, HF_SYMLINK, "/nowhere/resolv.conf", NULL},
		{NULL, HF_MISSING, NULL, NULL},
	};
	for (size_t k = 0; k < sizeof t / sizeof *t; k++) {
		for (int net = 0; net < 3; net++) {
			struct hostfacts hf;
			load_user(&hf);
			struct err e = {0};
			free(hf.resolv_target);
			hf.resolv_target = t[k].target ? xstrdup(t[k].target) : NULL;
			hf_add(&hf, "/etc/resolv.conf", t[k].type, 0644, 0, t[k].link);
			hf_add(&hf, "/etc/resolvconf", HF_DIR, 0755, 0, NULL);
			hf_add(&hf, "/etc/resolvconf/resolv.conf", HF_FILE, 0644, 0, NULL);
			struct policy pol;
			policy_init(&pol);
			pol.net = net == 0 ? NET_OFF : net == 1 ? NET_ON : NET_ALLOW;
			pol.workspace = xstrdup("/home/u/proj");
			struct strv cmd = STRV_INIT;
			strv_push(&cmd, "true");
			struct bw_plan plan = {0};
			assert_int_equal(bwrap_build(&pol, &hf, &cmd, &plan, &e), 0);
			assert_int_equal(plan.net_allow, pol.net == NET_ALLOW);
			const struct bw_op *d = NULL;
			for (size_t i = 0; i < plan.nops; i++)
				if (plan.ops[i].args.n == 5 &&
				    !strcmp(plan.ops[i].args.v[2], "--ro-bind-data"))
					d = &plan.ops[i];
			if (pol.net != NET_ALLOW || !t[k].want) {
				assert_null(d);
			} else {
				assert_non_null(d);
				assert_string_equal(d->args.v[4], t[k].want);
				assert_int_equal(atoi(d->args.v[3]), d->fd);
				assert_null(d->src);
				assert_non_null(strstr(d->data, "\nnameserver 127.0.0.1\n"));
			}
			if (pol.net == NET_ALLOW && !t[k].want) {
				bool said = false;
				for (size_t i = 0; i < plan.skipped.n; i++)
					said |= !strncmp(plan.skipped.v[i], "/etc/resolv.conf: net allow", 27);
				assert_true(said);
			}
			bw_plan_free(&plan);
			strv_free(&cmd);
			policy_free(&pol);
			hostfacts_free(&hf);
		}
	}
}

/* The one bind on `dest`, or NULL. */
static const struct bw_op *bind_on(const struct bw_plan *p, const char *dest)
{
	const struct bw_op *found = NULL;
	for (size_t i = 0; i < p->nops; i++)
		if (p->ops[i].src && !strcmp(dest_of(&p->ops[i]), dest)) {
			assert_null(found);
			found = &p->ops[i];
		}
	return found;
}

/* claude's ~/.claude.json is a private copy wherever it is bound: in a private $HOME as in a
 * workspace that is $HOME (where, as a home file that runs code, it would otherwise be the
 * host's file or read-only); the other home files there are read-only. */
static void home_code_copy(void **state)
{
	(void)state;
	static const char *const copy = "/home/u/.local/state/agentjail/agent-copy/c.json";
	for (int ws_home = 0; ws_home < 2; ws_home++) {
		struct hostfacts hf;
		load_user(&hf);
		struct err e = {0};
		hf_add(&hf, "/home/u/.claude.json", HF_FILE, 0600, 1000, NULL);
		hf_add(&hf, "/home/u/.local/state/agentjail/agent-copy", HF_DIR, 0700, 1000, NULL);
		hf_add(&hf, copy, HF_FILE, 0600, 1000, NULL);
		struct policy pol;
		policy_init(&pol);
		pol.workspace = xstrdup(ws_home ? "/home/u" : "/home/u/proj");
		pol.workspace_explicit = ws_home;
		strv_push(&pol.agent_rw, "/home/u/.claude.json");
		strv_push(&pol.agent_copy, "/home/u/.claude.json");
		strv_push(&pol.agent_copy, copy);
		struct strv cmd = STRV_INIT;
		strv_push(&cmd, "claude");
		struct bw_plan plan = {0};
		assert_int_equal(bwrap_build(&pol, &hf, &cmd, &plan, &e), 0);
		const struct bw_op *o = bind_on(&plan, "/home/u/.claude.json");
		assert_non_null(o);
		assert_string_equal(o->src, copy);
		assert_string_equal(o->args.v[0], "--bind-fd");
		o = bind_on(&plan, "/home/u/.gitconfig");
		assert_non_null(o);
		assert_string_equal(o->args.v[0], "--ro-bind-fd");
		bw_plan_free(&plan);
		strv_free(&cmd);
		policy_free(&pol);
		hostfacts_free(&hf);
	}
}

/* The index of the op mounting at dest (the last one), or -1. */
static long op_at(const struct bw_plan *p, const char *dest)
{
	long at = -1;
	for (size_t i = 0; i < p->nops; i++) {
		const struct strv *a = &p->ops[i].args;
		if (a->n && !strcmp(a->v[a->n - 1], dest))
			at = (long)i;
	}
	return at;
}

/* An agent's private dirs (doc/agents.md): from the workspace's cache root, mounted after the
 * protection of the dir they lie in, at the real place of a symlinked one, the host's entries
 * read-only inside a private_over dir (not its hidden ones), a tmpfs when the state dir has
 * none; never the host's directory. */
static void agent_private(void **state)
{
	(void)state;
	struct hostfacts hf;
	struct err e = {0};
	load_user(&hf);
	const char *st = "/home/u/.local/state/agentjail/cache/ws/9c09f8055a26c27736ddcc04b4e693af";
	static const char *const dirs[] = {
		"/home/u/.codex", "/home/u/.codex/skills", "/home/u/.codex/skills/mine",
		"/home/u/.codex/skills/.system", "/home/u/.codex/real-tmp", "/home/u/.cache",
		"/home/u/.cache/opencode", "/home/u/.cache/opencode/bin", NULL};
	for (size_t i = 0; dirs[i]; i++)
		hf_add(&hf, dirs[i], HF_DIR, 0700, 1000, NULL);
	hf_add(&hf, "/home/u/.codex/tmp", HF_SYMLINK, 0777, 1000, "real-tmp");
	hf_add(&hf, "/home/u/.cache/opencode/bin/rg", HF_FILE, 0755, 1000, NULL);
	char src[3][512];
	snprintf(src[0], sizeof src[0], "%s/agent/x/home/u/.codex/skills", st);
	snprintf(src[1], sizeof src[1], "%s/agent/x/home/u/.cache/opencode", st);
	snprintf(src[2], sizeof src[2], "%s/agent/x/home/u/.codex/tmp", st);
	for (size_t i = 0; i < 3; i++)
		hf_add(&hf, src[i], HF_DIR, 0700, 1000, NULL);
	struct policy pol;
	policy_init(&pol);
	pol.workspace = xstrdup("/home/u/proj");
	pol.profile = xstrdup("x");
	strv_push(&pol.agent_rw, "/home/u/.codex");
	strv_push(&pol.protect, "/home/u/.codex/skills/mine/x");
	strv_push(&pol.agent_private, "/home/u/.cache/opencode");
	strv_push(&pol.agent_private, "/home/u/.codex/tmp");
	strv_push(&pol.agent_private, "/home/u/.codex/shell_snapshots");
	strv_push(&pol.agent_private_over, "/home/u/.codex/skills");
	strv_push(&pol.agent_private_over, "/home/u/.cache/opencode/bin");
	struct strv cmd = STRV_INIT;
	strv_push(&cmd, "true");
	struct bw_plan plan = {0};
	assert_int_equal(bwrap_build(&pol, &hf, &cmd, &plan, &e), 0);
	/* codex's skills/: its private dir, after the rw bind of ~/.codex; the user's skill
	 * read-only inside, after it; .system not shown */
	long rw = op_at(&plan, "/home/u/.codex"), sk = op_at(&plan, "/home/u/.codex/skills");
	long mine = op_at(&plan, "/home/u/.codex/skills/mine");
	assert_true(rw >= 0 && sk > rw && mine > sk);
	assert_string_equal(plan.ops[sk].src, src[0]);
	assert_string_equal(plan.ops[sk].args.v[0], "--bind-fd");
	assert_string_equal(plan.ops[mine].args.v[0], "--ro-bind-fd");
	assert_int_equal(op_at(&plan, "/home/u/.codex/skills/.system"), -1);
	/* a symlinked place: mounted at its real place */
	long tmp = op_at(&plan, "/home/u/.codex/real-tmp");
	assert_true(tmp > rw);
	assert_string_equal(plan.ops[tmp].src, src[2]);
	assert_int_equal(op_at(&plan, "/home/u/.codex/tmp"), -1);
	/* no directory for it in the state dir: a tmpfs, never the host's */
	long snap = op_at(&plan, "/home/u/.codex/shell_snapshots");
	assert_true(snap > rw);
	assert_string_equal(plan.ops[snap].args.v[plan.ops[snap].args.n - 2], "--tmpfs");
	/* in the home tmpfs: the private cache, then the host's rg read-only in its bin/ */
	long oc = op_at(&plan, "/home/u/.cache/opencode");
	long bin = op_at(&plan, "/home/u/.cache/opencode/bin");
	long rg = op_at(&plan, "/home/u/.cache/opencode/bin/rg");
	assert_true(oc >= 0 && bin > oc && rg > bin);
	assert_string_equal(plan.ops[oc].src, src[1]);
	assert_string_equal(plan.ops[rg].args.v[0], "--ro-bind-fd");
	bw_plan_free(&plan);
	strv_free(&cmd);
	policy_free(&pol);
	hostfacts_free(&hf);
}

/* the plan is a pure function: the same inputs give byte-identical output */
static void deterministic(void **state)
{
	(void)state;
	char *a = NULL, *b = NULL;
	for (int k = 0; k < 2; k++) {
		struct hostfacts hf;
		hostfacts_init(&hf);
		char f[4200];
		struct err e = {0};
		snprintf(f, sizeof f, "%s/protected.facts", data_dir());
		assert_int_equal(hostfacts_load_fixture(&hf, f, &e), 0);
		struct strv args = STRV_INIT;
		case_args(f, &args);
		char *r = render_case(&hf, &args);
		if (k == 0)
			a = r;
		else
			b = r;
		strv_free(&args);
		hostfacts_free(&hf);
	}
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* Issue 29: a secret's variable holds its placeholder in the argv bwrap reads (secret values
 * included), never the host's value; without --net allow it is passed as before; --gpg-agent
 * without the jail's own home is refused. */
static void secrets_plan(void **state)
{
	(void)state;
	for (int mode = 0; mode < 3; mode++) {
		struct hostfacts hf;
		char f[4200];
		golden_load(data_dir(), "user-secrets", &hf, f);
		struct strv args = STRV_INIT;
		if (mode == 0) {
			case_args(f, &args);
		} else {
			static const char *const on[] = {"--net", "on", "--env", "ANTHROPIC_API_KEY",
							 "--", "claude", NULL};
			static const char *const gpgws[] = {"--gpg-agent", "--workspace", "/home/u",
							    "--", "claude", NULL};
			for (const char *const *a = mode == 1 ? on : gpgws; *a; a++)
				strv_push(&args, *a);
		}
		struct parse_ctx ctx = {.cwd = hf.cwd, .home = hf.home};
		struct run_request req;
		struct err e = {0};
		struct bw_plan plan = {0};
		assert_int_equal(run_parse_args((int)args.n, strv_data(&args), &ctx, &req, &e), 0);
		policy_secrets_activate(&req.pol, &hf.env);
		assert_int_equal(policy_validate(&req.pol, hf.home, &e), 0);
		int rc = bwrap_build(&req.pol, &hf, &req.cmd, &plan, &e);
		if (mode == 2) {
			assert_int_equal(rc, -1);
			assert_non_null(strstr(e.what, "--gpg-agent needs the jail's own home"));
		} else {
			assert_int_equal(rc, 0);
			struct strv argv = STRV_INIT;
			bw_plan_argv(&plan, &argv);
			bool placeholder = false, value = false;
			for (size_t i = 0; i < argv.n; i++) {
				placeholder |= !strcmp(argv.v[i], "agentjail-placeholder-ANTHROPIC_API_KEY");
				value |= strstr(argv.v[i], "sk-ant-shouldnotleak") != NULL;
			}
			assert_true(placeholder == (mode == 0));
			assert_true(value == (mode == 1)); /* --net on: the value, as before */
			strv_free(&argv);
		}
		bw_plan_free(&plan);
		run_request_free(&req);
		strv_free(&args);
		hostfacts_free(&hf);
	}
}

/* bw_plan_shows: what the jail sees of the host, for the "not in the jail's view" line */
static void shows(void **state)
{
	(void)state;
	struct hostfacts hf;
	char f[4200];
	golden_load(data_dir(), "parents", &hf, f);
	struct strv args = STRV_INIT;
	case_args(f, &args);
	struct parse_ctx ctx = {.cwd = hf.cwd, .home = hf.home};
	struct run_request req;
	struct err e = {0};
	struct bw_plan plan = {0};
	assert_int_equal(run_parse_args((int)args.n, strv_data(&args), &ctx, &req, &e), 0);
	assert_int_equal(policy_validate(&req.pol, hf.home, &e), 0);
	assert_int_equal(bwrap_build(&req.pol, &hf, &req.cmd, &plan, &e), 0);
	static const struct {
		const char *path;
		bool shown;
	} t[] = {
		{"/srv/tools/tool", true},      /* --ro */
		{"/srv/work/proj/x", true},     /* the workspace */
		{"/opt2/bin/tool", true},       /* the command's own directory */
		{"/usr/lib/x", true},           /* a system tree */
		{"/bin/sh", true},              /* a merged-/usr link */
		{"/srv/other/tool", false},     /* bwrap's root: only what the plan made */
		{"/srv", false},
		{"/mnt/data/x", false},
		{"/etc/shadow", false},         /* masked */
		{"/opt/private/x", false},      /* masked (root-only) */
		{"/tmp/x", false},              /* a private tmpfs */
		{"/root/.cargo/bin/cargo", true},
		{"/root/x", false},             /* the private home */
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (bw_plan_shows(&plan, &hf, t[i].path) != t[i].shown)
			fail_msg("bw_plan_shows(%s) should be %d", t[i].path, t[i].shown);
	bw_plan_free(&plan);
	run_request_free(&req);
	strv_free(&args);
	hostfacts_free(&hf);
}

int main(void)
{
	const struct CMUnitTest extra[] = {
		cmocka_unit_test(properties),
		cmocka_unit_test(deterministic),
		cmocka_unit_test(allow_resolv),
		cmocka_unit_test(shows),
		cmocka_unit_test(secrets_plan),
		cmocka_unit_test(home_code_copy),
		cmocka_unit_test(agent_private),
	};
	return golden_main("bwrap_argv", data_dir(), golden_case, extra, sizeof extra / sizeof *extra);
}
