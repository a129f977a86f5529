/* llplan: see llplan.h. */
#include "core/backend/landlock/llplan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/netrules.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* The devices of bwrap's minimal /dev that a program needs; nothing else under /dev (a disk
 * node is readable by its owner, and root stays its owner without capabilities). */
static const char *const devices[] = {"/dev/null", "/dev/zero",	 "/dev/full", "/dev/random",
				      "/dev/urandom", "/dev/tty", "/dev/pts", "/dev/ptmx", NULL};

/* Where bwrap mounts a scratch tmpfs: the private temporary directory stands in for all. */
static const char *const scratch[] = {"/tmp", "/var/tmp", "/dev/shm", "/run", NULL};

const char *llp_right_name(enum llp_right r)
{
	switch (r) {
	case LLP_LIST:
		return "list";
	case LLP_READ:
		return "read";
	case LLP_WRITE:
		return "write";
	case LLP_DEVICE:
		return "device";
	}
	return "?";
}

/* What the bwrap plan says about paths, before the expansion. */
struct grants {
	struct strv read, write, device; /* trees granted whole (until an exception) */
	struct strv deny;                /* masked: no right at all */
	struct strv protect;             /* read-only inside a writable tree */
};

static void grants_free(struct grants *g)
{
	strv_free(&g->read);
	strv_free(&g->write);
	strv_free(&g->device);
	strv_free(&g->deny);
	strv_free(&g->protect);
}

static void push_rule(struct ll_plan *p, const char *path, enum llp_right r)
{
	/* no de-duplication: a rule given twice is harmless to Landlock, a quadratic scan over a
	 * large workspace's entries is not */
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->rules = xrealloc(p->rules, p->cap * sizeof *p->rules);
	}
	p->rules[p->n++] = (struct llp_rule){xstrdup(path), r};
}

static bool in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

/* An exception strictly below path: a denied (masked) path, or (when writing) a read-only bind.
 * A protected path of §3 step 7 is none (see llplan.h; drop_watched takes them out). */
static bool has_exception_below(const struct grants *g, const char *path, bool writing)
{
	for (size_t i = 0; i < g->deny.n; i++)
		if (path_is_strict_ancestor(path, g->deny.v[i]))
			return true;
	for (size_t i = 0; writing && i < g->protect.n; i++)
		if (path_is_strict_ancestor(path, g->protect.v[i]))
			return true;
	return false;
}

/* The protected paths of §3 step 7 (the plan's watch list), bound read-only by bwrap, are no
 * exception here: under Landlock a new file's write right can only come from its directory's
 * rule, so a directory on the way to one must be writable as a whole for the user's tools to
 * work (git's index.lock, a new file at the workspace's top), and that right reaches the
 * protected path too. core/jail/guard.h keeps them instead (doc/design.md §4c). */
static void drop_watched(struct grants *g, const struct strv *watch)
{
	size_t k = 0;
	for (size_t i = 0; i < g->protect.n; i++) {
		if (strv_contains(watch, g->protect.v[i]))
			free(g->protect.v[i]);
		else
			g->protect.v[k++] = g->protect.v[i];
	}
	g->protect.n = k;
	if (g->protect.v)
		g->protect.v[k] = NULL;
}

/* Grant r on path, child by child where an exception lies below it. Symlinks get no rule (the
 * kernel cannot hold one on a symlink; the target is judged where it lies). */
static void expand(struct ll_plan *p, const struct grants *g, struct hostfacts *hf,
		   const char *path, enum llp_right r)
{
	if (strv_contains(&g->deny, path))
		return;
	bool writing = r == LLP_WRITE;
	if (writing && strv_contains(&g->protect, path)) {
		expand(p, g, hf, path, LLP_READ);
		return;
	}
	enum hf_type t = hf_type(hf, path);
	if (t == HF_MISSING || t == HF_SYMLINK)
		return;
	if (t != HF_DIR || !has_exception_below(g, path, writing)) {
		push_rule(p, path, r);
		return;
	}
	push_rule(p, path, LLP_LIST);
	const struct strv *kids = hf_children(hf, path);
	for (size_t i = 0; i < kids->n; i++) {
		_cleanup_free_ char *c = path_join(path, kids->v[i]);
		p->listed++;
		expand(p, g, hf, c, r);
	}
}

static const char *arg_after(const struct bw_op *o, const char *opt)
{
	for (size_t i = 0; i + 1 < o->args.n; i++)
		if (!strcmp(o->args.v[i], opt))
			return o->args.v[i + 1];
	return NULL;
}

static bool has_arg(const struct bw_op *o, const char *a)
{
	for (size_t i = 0; i < o->args.n; i++)
		if (!strcmp(o->args.v[i], a))
			return true;
	return false;
}

static void setenv_in(struct strv *env, const char *name, const char *val)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < env->n; i++)
		if (!strncmp(env->v[i], name, n) && env->v[i][n] == '=') {
			free(env->v[i]);
			env->v[i] = xasprintf("%s=%s", name, val);
			return;
		}
	strv_pushf(env, "%s=%s", name, val);
}

static void unsetenv_in(struct strv *env, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < env->n; i++)
		if (!strncmp(env->v[i], name, n) && env->v[i][n] == '=') {
			free(env->v[i]);
			memmove(&env->v[i], &env->v[i + 1], (env->n - i) * sizeof *env->v);
			env->n--;
			return;
		}
}

/* A bind: the same path on both sides is the host's file, shown as is; a source elsewhere
 * (a private cache, a filtered copy) has no equivalent without mounts. */
static void bind_op(struct ll_plan *p, struct grants *g, const struct bw_op *o, bool writable)
{
	const char *dest = o->args.v[o->args.n - 1];
	const char *src = o->src ? o->src : o->args.v[1];
	if (!strcmp(dest, BW_INIT_PATH))
		return;
	if (!strcmp(dest, BW_SELF_PATH)) { /* verify runs agentjail itself, where it lies */
		strv_push(&g->read, src);
		return;
	}
	if (!strncmp(dest, "/proc/", 6) && strcmp(src, dest) != 0) {
		/* /proc is granted whole: expanded, it would hold only the PIDs of now */
		strv_pushf(&p->notes, "%s: masked under bwrap; here the host's (root-only files "
				      "stay so: no capabilities)",
			   dest);
		return;
	}
	if (!strcmp(src, "/dev/null")) {
		strv_push(&g->deny, dest);
		return;
	}
	if (strcmp(src, dest) != 0) {
		strv_pushf(&p->notes, "%s: bwrap shows %s there; without mounts the host's own "
				      "is not made reachable",
			   dest, src);
		return;
	}
	if (!strncmp(dest, "/proc/", 6))
		return; /* /proc is read-only here as a whole */
	if (!writable && strv_contains(&g->write, dest))
		return;
	strv_push(writable ? &g->write : &g->read, dest);
	if (!writable)
		strv_push(&g->protect, dest);
}

static void tmpfs_op(struct ll_plan *p, struct grants *g, const struct bw_op *o)
{
	const char *dest = arg_after(o, "--tmpfs");
	const char *perms = arg_after(o, "--perms");
	if (perms && !strcmp(perms, "0000") && strncmp(dest, "/proc/", 6) != 0) {
		strv_push(&g->deny, dest); /* a masked directory */
		return;
	}
	if (in_list(scratch, dest))
		strv_pushf(&p->notes, "%s: not private (no mounts): unreadable and unwritable; "
				      "TMPDIR is the private %s",
			   dest, p->tmpdir);
	else
		strv_pushf(&p->notes, "%s: an empty private directory under bwrap; here unreadable",
			   dest);
}

static int read_op(struct ll_plan *p, struct grants *g, const struct bw_op *o, struct err *e)
{
	const char *a = o->args.v[0];
	if (!strcmp(a, "--ro-bind-fd") || !strcmp(a, "--ro-bind"))
		bind_op(p, g, o, false);
	else if (!strcmp(a, "--bind-fd") || !strcmp(a, "--bind"))
		bind_op(p, g, o, true);
	else if (!strcmp(a, "--dev-bind"))
		strv_push(&g->device, o->args.v[2]);
	else if (has_arg(o, "--tmpfs"))
		tmpfs_op(p, g, o);
	else if (!strcmp(a, "--proc"))
		strv_push(&g->read, "/proc");
	else if (!strcmp(a, "--dev"))
		for (size_t i = 0; devices[i]; i++)
			strv_push(&g->device, devices[i]);
	else if (!strcmp(a, "--clearenv"))
		strv_free(&p->env);
	else if (!strcmp(a, "--setenv"))
		setenv_in(&p->env, o->args.v[1], o->args.v[2]);
	else if (!strcmp(a, "--unsetenv"))
		unsetenv_in(&p->env, o->args.v[1]);
	else if (!strcmp(a, "--chdir"))
		p->chdir = xstrdup(o->args.v[1]);
	else if (!strcmp(a, "--ro-bind-data"))
		strv_pushf(&p->notes, "%s: a generated file under bwrap; here the host's (if "
				      "readable at all)",
			   o->args.v[o->args.n - 1]);
	else if (!strcmp(a, "--symlink") || !strcmp(a, "--remount-ro") || !strcmp(a, "--perms") ||
		 !strcmp(a, "--size") || a[0] != '-' || !strncmp(a, "--unshare", 9) ||
		 !strcmp(a, "--disable-userns") || !strcmp(a, "--cap-drop") ||
		 !strcmp(a, "--die-with-parent") || !strcmp(a, "--as-pid-1") ||
		 !strcmp(a, "--hostname") || !strcmp(a, "--seccomp") ||
		 !strcmp(a, "--json-status-fd") || !strcmp(a, "--share-net"))
		return 0; /* namespaces, mounts' details and bwrap's own plumbing */
	else
		return err_set(e, EINVAL, a, "the Landlock backend cannot mirror this jail option");
	return 0;
}

int llplan_policy_check(const struct policy *p, struct err *e)
{
	if (p->home != HOME_PERSIST)
		return 0;
	err_set(e, 0, "--home persist", "the landlock backend cannot give a jail its persisted home");
	err_hint(e, "the persisted home is mounted at $HOME, and this backend has no mounts: its "
		    "$HOME is out of reach (the real home is never given); run with --backend "
		    "local, or --home tmp");
	return -1;
}

int llplan_build(const struct bw_plan *bp, struct hostfacts *hf, const char *tmpdir,
		 struct ll_plan *out, struct err *e)
{
	*out = (struct ll_plan){.tmpdir = xstrdup(tmpdir)};
	_cleanup_(grants_free) struct grants g = {0};
	for (size_t i = 0; i < bp->nops; i++)
		if (bp->ops[i].args.n > 0 && read_op(out, &g, &bp->ops[i], e) < 0) {
			ll_plan_free(out);
			return -1;
		}
	drop_watched(&g, &bp->watch);
	for (size_t i = 0; i < g.read.n; i++)
		expand(out, &g, hf, g.read.v[i], LLP_READ);
	for (size_t i = 0; i < g.write.n; i++)
		expand(out, &g, hf, g.write.v[i], LLP_WRITE);
	for (size_t i = 0; i < g.device.n; i++)
		if (hf_type(hf, g.device.v[i]) != HF_MISSING)
			push_rule(out, g.device.v[i], LLP_DEVICE);
	push_rule(out, tmpdir, LLP_WRITE);
	static const char *const tmpvars[] = {LLP_TMP_VARS};
	for (size_t i = 0; i < sizeof tmpvars / sizeof *tmpvars; i++)
		setenv_in(&out->env, tmpvars[i], tmpdir);
	if (!out->chdir)
		out->chdir = xstrdup("/");
	return 0;
}

void llplan_proxy_port(struct ll_plan *p, unsigned port)
{
	_cleanup_free_ char *from = xasprintf("127.0.0.1:%d", NET_PROXY_PORT);
	_cleanup_free_ char *to = xasprintf("127.0.0.1:%u", port);
	for (size_t i = 0; i < p->env.n; i++) {
		char *hit = strstr(p->env.v[i], from);
		if (!hit)
			continue;
		char *v = xasprintf("%.*s%s%s", (int)(hit - p->env.v[i]), p->env.v[i], to,
				    hit + strlen(from));
		free(p->env.v[i]);
		p->env.v[i] = v;
	}
	unsetenv_in(&p->env, "GIT_SSH_COMMAND");
	strv_pushf(&p->notes, "GIT_SSH_COMMAND: not set (git over ssh has no proxy command here)");
}

void ll_plan_free(struct ll_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->rules[i].path);
	free(p->rules);
	strv_free(&p->env);
	strv_free(&p->notes);
	free(p->chdir);
	free(p->tmpdir);
	*p = (struct ll_plan){0};
}

char *ll_plan_render(const struct ll_plan *p)
{
	struct strbuf b = {0};
	for (size_t i = 0; i < p->n; i++)
		sb_addf(&b, "landlock %-6s %s\n", llp_right_name(p->rules[i].right),
			p->rules[i].path);
	sb_addf(&b, "# %zu rules; the expansion around exceptions looked at %zu entries\n", p->n,
		p->listed);
	for (size_t i = 0; i < p->notes.n; i++)
		sb_addf(&b, "# differs from the bwrap jail: %s\n", p->notes.v[i]);
	return sb_steal(&b);
}
