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
	struct strv home_binds;          /* binds made directly in the private home (their dests) */
	struct strv home_srcs;           /* … and their sources, in the same order */
	const struct policy *pol;
};

static void grants_free(struct grants *g)
{
	strv_free(&g->read);
	strv_free(&g->write);
	strv_free(&g->device);
	strv_free(&g->deny);
	strv_free(&g->protect);
	strv_free(&g->home_binds);
	strv_free(&g->home_srcs);
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

/* ---- the private home (doc/design.md §4c) ----
 * bwrap's $HOME is an empty tmpfs into which the plan binds what the command may see (the
 * agent's config dir, its private copy, the private caches, ~/.gitconfig, PATH directories).
 * Without mounts, a private directory stands in for it and $HOME points there: each bind made
 * directly in the tmpfs becomes a symlink to the bind's source, which gets the bind's right;
 * the directories bwrap makes on the way are directories. What bwrap puts inside such a bind
 * (a mask, a private directory, a private copy) cannot be put in place: it is a gap, said. */

static void push_ent(struct ll_plan *p, const char *dest, enum llp_home_kind k, const char *target,
		     bool writeback)
{
	p->ents = xrealloc(p->ents, (p->nents + 1) * sizeof *p->ents);
	p->ents[p->nents++] = (struct llp_home_ent){xstrdup(path_below(dest, p->host_home)), k,
						    target ? xstrdup(target) : NULL, writeback};
}

/* The bind made in the private home that holds dest, or -1. */
static int home_bind_of(const struct grants *g, const char *dest)
{
	for (size_t i = 0; i < g->home_binds.n; i++)
		if (path_is_under(dest, g->home_binds.v[i]))
			return (int)i;
	return -1;
}

/* Whether path lies in one of the user's own writable places (the workspace, a --rw path),
 * whose exceptions (a --hide, a --ro) hold as everywhere, at the cost of the expansion. */
static bool users_own(const struct grants *g, const char *path)
{
	if (g->pol->workspace && path_is_under(path, g->pol->workspace))
		return true;
	for (size_t i = 0; i < g->pol->rw.n; i++)
		if (path_is_under(path, g->pol->rw.v[i]))
			return true;
	return false;
}

/* Where an op at dest lies: 0 not below the private home (or in the user's own places), 1
 * directly in it, 2 inside one of the binds made in it (a gap). */
static int home_place(const struct ll_plan *p, const struct grants *g, const char *dest)
{
	if (!p->home || !path_is_strict_ancestor(p->host_home, dest))
		return 0;
	int in = home_bind_of(g, dest);
	if (in >= 0 && users_own(g, g->home_binds.v[in]))
		return 0;
	return in >= 0 ? 2 : 1;
}

char *llplan_home_path(const struct ll_plan *p, const char *host_path)
{
	const char *rel = p->home ? path_below(host_path, p->host_home) : NULL;
	if (!rel)
		return NULL;
	return *rel ? path_join(p->home, rel) : xstrdup(p->home);
}

/* The place a comment or a gap names: "~/.claude/ide" for a path below the host's $HOME. */
static char *shown(const struct ll_plan *p, const char *path)
{
	const char *rel = p->host_home ? path_below(path, p->host_home) : NULL;
	return rel && *rel ? xasprintf("~/%s", rel) : xstrdup(path);
}

/* A private directory inside the agent's config dir: what the run leaves there is swept after it
 * (core/jail/sweep.h) */
#define PRIVATE_DIR_GAP                                                                          \
	"the workspace's own under bwrap; here the host's directory, writable during the run; "  \
	"after it, what the run wrote there is moved aside (an unjailed run of the agent "       \
	"meanwhile could use it)"

/* A bind inside a bind of the private home: what bwrap gives there and this backend cannot. */
static void home_gap(struct ll_plan *p, const char *dest, const char *src, bool writable,
		     struct hostfacts *hf)
{
	_cleanup_free_ char *d = shown(p, dest);
	if (!strcmp(src, "/dev/null")) {
		strv_pushf(&p->gaps, "%s: masked under bwrap; readable here (Landlock cannot take a "
				     "path out of a writable directory)",
			   d);
	} else if (writable && (hf_type(hf, src) == HF_FILE || hf_type(hf, dest) == HF_FILE)) {
		strv_pushf(&p->gaps, "%s: a private copy under bwrap; here the host's file, kept by "
				     "the guard: a change is moved aside and the original put back, so "
				     "what the agent saves there does not last",
			   d);
		strv_push(&p->guard_extra, dest);
	} else {
		strv_pushf(&p->gaps, "%s: %s", d, PRIVATE_DIR_GAP);
		strv_push(&p->sweep, dest);
	}
}

/* A bind: the same path on both sides is the host's file, shown as is; a source elsewhere
 * (a private cache, a filtered copy) has no equivalent without mounts, except directly in the
 * private home, where a symlink leads to it. */
static void bind_op(struct ll_plan *p, struct grants *g, const struct bw_op *o, bool writable,
		    struct hostfacts *hf)
{
	const char *dest = o->args.v[o->args.n - 1];
	const char *src = o->src ? o->src : o->args.v[1];
	if (!strcmp(dest, BW_INIT_PATH))
		return;
	int place = home_place(p, g, dest);
	if (place == 2 && strcmp(src, dest) != 0) {
		home_gap(p, dest, src, writable, hf);
		return;
	}
	int in = place == 2 ? home_bind_of(g, dest) : -1;
	if (in >= 0 && strcmp(g->home_binds.v[in], g->home_srcs.v[in]) != 0) {
		/* the host's entry inside the workspace's own directory (opencode's config dir):
		 * the symlink leads to that directory alone */
		_cleanup_free_ char *d = shown(p, dest);
		strv_pushf(&p->gaps, "%s: the host's, shown read-only inside the workspace's own "
				     "directory under bwrap; not shown here",
			   d);
		return;
	}
	if (place == 1) {
		if (!strcmp(src, "/dev/null"))
			return; /* a masked file: nothing stands there */
		bool file = hf_type(hf, src) == HF_FILE || hf_type(hf, dest) == HF_FILE;
		push_ent(p, dest, LLH_LINK, src, writable && file);
		strv_push(&g->home_binds, dest);
		strv_push(&g->home_srcs, src);
		if (!writable && strv_contains(&g->write, src))
			return;
		strv_push(writable ? &g->write : &g->read, src);
		if (!writable)
			strv_push(&g->protect, src);
		return;
	}
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
	bool mask = perms && !strcmp(perms, "0000");
	if (p->home && !strcmp(dest, p->host_home)) {
		strv_pushf(&p->notes, "%s: an empty private tmpfs under bwrap; here the private "
				      "directory %s ($HOME points there)",
			   dest, p->home);
		return;
	}
	int place = home_place(p, g, dest);
	if (place == 1) {
		if (!mask)
			push_ent(p, dest, LLH_DIR, NULL, false);
		return;
	}
	if (place == 2) {
		_cleanup_free_ char *d = shown(p, dest);
		strv_pushf(&p->gaps,
			   mask ? "%s: masked under bwrap; readable here (Landlock cannot take a "
				  "path out of a writable directory)"
				: "%s: " PRIVATE_DIR_GAP,
			   d);
		if (!mask)
			strv_push(&p->sweep, dest);
		return;
	}
	if (mask && strncmp(dest, "/proc/", 6) != 0) {
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

static int read_op(struct ll_plan *p, struct grants *g, const struct bw_op *o,
		   struct hostfacts *hf, struct err *e)
{
	const char *a = o->args.v[0];
	if (!strcmp(a, "--ro-bind-fd") || !strcmp(a, "--ro-bind"))
		bind_op(p, g, o, false, hf);
	else if (!strcmp(a, "--bind-fd") || !strcmp(a, "--bind"))
		bind_op(p, g, o, true, hf);
	else if ((!strcmp(a, "--dir") || (!strcmp(a, "--perms") && o->args.n == 4 &&
					  !strcmp(o->args.v[2], "--dir"))) &&
		 home_place(p, g, o->args.v[o->args.n - 1]) == 1)
		push_ent(p, o->args.v[o->args.n - 1], LLH_DIR, NULL, false);
	else if (!strcmp(a, "--symlink") && home_place(p, g, o->args.v[2]) == 1)
		push_ent(p, o->args.v[2], LLH_LINK, o->args.v[1], false);
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
	else if (!strcmp(a, "--setenv") && p->home && !strcmp(o->args.v[1], "HOME"))
		setenv_in(&p->env, "HOME", p->home);
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
	if (p->fs == FS_REVIEW) {
		err_set(e, 0, "--fs review", "the landlock backend cannot run --fs review: its "
					     "overlay needs a mount namespace, which this backend does "
					     "not have");
		err_hint(e, "run with --backend local (the bwrap jail), or --fs workspace-write");
		return -1;
	}
	if (p->publish.n) {
		/* no network namespace: the jail's loopback is the host's, where any program of
		 * the host reaches a server at once, on its own port only; and Landlock lets it
		 * bind no port (doc/design.md §4c) */
		err_set(e, 0, p->publish.v[0], "--publish cannot be used with --backend landlock: it "
					       "has no network of its own");
		err_hint(e, "a server there would listen on the host's own loopback, and binding a "
			    "port is refused there; run it in the bwrap jail (--backend local)");
		return -1;
	}
	if (p->ask) {
		/* its proxy asks nobody: no terminal of agentjail's between the command and the
		 * user, no supervising loop to serve the questions' control socket */
		err_set(e, 0, "--net ask", "--net ask cannot be used with --backend landlock: it has "
					   "nobody to ask");
		err_hint(e, "run with --net allow (what is not listed is refused), or in the bwrap "
			    "jail (--backend local)");
		return -1;
	}
	if (p->home != HOME_PERSIST)
		return 0;
	err_set(e, 0, "--home persist", "the landlock backend cannot give a jail its persisted home");
	err_hint(e, "the persisted home is mounted at $HOME, and this backend has no mounts: its "
		    "$HOME is out of reach (the real home is never given); run with --backend "
		    "local, or --home tmp");
	return -1;
}

/* The plan's $HOME, when it is a tmpfs of bwrap's (not the real home, bound when it is the
 * workspace): then the private home stands in for it. */
static void find_home(const struct bw_plan *bp, struct ll_plan *p)
{
	const char *home = NULL;
	for (size_t i = 0; i < bp->nops; i++) {
		const struct bw_op *o = &bp->ops[i];
		if (o->args.n == 3 && !strcmp(o->args.v[0], "--setenv") &&
		    !strcmp(o->args.v[1], "HOME"))
			home = o->args.v[2];
	}
	for (size_t i = 0; home && strcmp(home, "/") != 0 && i < bp->nops; i++) {
		const char *t = arg_after(&bp->ops[i], "--tmpfs");
		if (t && !strcmp(t, home)) {
			p->host_home = xstrdup(home);
			p->home = path_join(p->tmpdir, "home");
			return;
		}
	}
}

int llplan_build(const struct bw_plan *bp, const struct policy *pol, struct hostfacts *hf,
		 const char *tmpdir, struct ll_plan *out, struct err *e)
{
	*out = (struct ll_plan){.tmpdir = xstrdup(tmpdir)};
	find_home(bp, out);
	_cleanup_(grants_free) struct grants g = {.pol = pol};
	for (size_t i = 0; i < bp->nops; i++)
		if (bp->ops[i].args.n > 0 && read_op(out, &g, &bp->ops[i], hf, e) < 0) {
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
	free(p->home);
	free(p->host_home);
	for (size_t i = 0; i < p->nents; i++) {
		free(p->ents[i].rel);
		free(p->ents[i].target);
	}
	free(p->ents);
	strv_free(&p->gaps);
	strv_free(&p->guard_extra);
	strv_free(&p->sweep);
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
	for (size_t i = 0; i < p->nents; i++) {
		const struct llp_home_ent *h = &p->ents[i];
		if (h->kind == LLH_DIR)
			sb_addf(&b, "home   %s/%s/\n", p->home, h->rel);
		else
			sb_addf(&b, "home   %s/%s -> %s%s\n", p->home, h->rel, h->target,
				h->writeback ? "  # a file put in its place is written back there"
					     : "");
	}
	for (size_t i = 0; i < p->notes.n; i++)
		sb_addf(&b, "# differs from the bwrap jail: %s\n", p->notes.v[i]);
	for (size_t i = 0; i < p->gaps.n; i++)
		sb_addf(&b, "# not given by this backend: %s\n", p->gaps.v[i]);
	return sb_steal(&b);
}
