/* toolmgr: the tool managers behind the PATH, over the host-facts table (pure). */
#include "core/plan/toolmgr.h"
#include "core/plan/resolve.h"

#include <ctype.h>
#include <fnmatch.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

struct mgr {
	const char *name;
	const char *env;          /* the variable naming its root, when set */
	const char *roots[6];     /* default roots, relative to $HOME */
	const char *marker;       /* or: the nearest ancestor of a path holding this is a root */
	const char *binds[4];     /* relative to the root: "" the root itself; "D/ *" (no space) the child of
				   * D that holds the path (one version, not all of them) */
	const char *home_binds[2]; /* relative to $HOME, bound when present */
	const char *needs;        /* relative to the root: without it the manager is broken */
	const char *companion;    /* recognised along with this one */
	const char *secrets[3];   /* manager-specific credential files at a bind's top */
};

/* More specific roots first: a root that lies inside another manager's root comes before it. */
static const struct mgr mgrs[] = {
	{"pyenv", "PYENV_ROOT", {".pyenv"}, NULL, {""}, {NULL}, "libexec/pyenv", NULL, {NULL}},
	/* the proxies in ~/.cargo/bin are rustup: they read settings.toml and the toolchains */
	{"cargo", "CARGO_HOME", {".cargo"}, NULL, {"bin"}, {NULL}, NULL, "rustup", {NULL}},
	{"rustup", "RUSTUP_HOME", {".rustup"}, NULL, {"settings.toml", "toolchains",
	 "update-hashes"}, {NULL}, "settings.toml", NULL, {NULL}},
	{"nvm", "NVM_DIR", {".nvm"}, NULL, {"versions/node/*"}, {NULL}, NULL, NULL, {NULL}},
	{"fnm", "FNM_DIR", {".local/share/fnm", ".fnm"}, NULL, {"node-versions/*"}, {NULL}, NULL,
	 NULL, {NULL}},
	/* volta's shims are one binary that reads its tools tree */
	{"volta", "VOLTA_HOME", {".volta"}, NULL, {"bin", "tools"}, {NULL}, NULL, NULL, {NULL}},
	/* asdf's shims run `asdf exec`, which reads the whole data dir and the global
	 * .tool-versions */
	{"asdf", "ASDF_DATA_DIR", {".asdf"}, NULL, {""}, {".tool-versions"}, NULL, NULL, {NULL}},
	{"mise", "MISE_DATA_DIR", {".local/share/mise"}, NULL, {""}, {".tool-versions"}, NULL,
	 NULL, {NULL}},
	{"sdkman", "SDKMAN_DIR", {".sdkman"}, NULL, {"candidates"}, {NULL}, NULL, NULL, {NULL}},
	{"bun", "BUN_INSTALL", {".bun"}, NULL, {"bin", "install/global"}, {NULL}, NULL, NULL,
	 {NULL}},
	{"deno", "DENO_INSTALL", {".deno"}, NULL, {"bin"}, {NULL}, NULL, NULL, {NULL}},
	{"uv", "UV_TOOL_DIR", {".local/share/uv/tools"}, NULL, {"*"}, {NULL}, NULL, NULL, {NULL}},
	{"uv-python", "UV_PYTHON_INSTALL_DIR", {".local/share/uv/python"}, NULL, {"*"}, {NULL},
	 NULL, NULL, {NULL}},
	{"pipx", "PIPX_HOME", {".local/share/pipx", ".local/pipx"}, NULL, {"venvs/*", "shared"},
	 {NULL}, NULL, NULL, {NULL}},
	{"poetry", "POETRY_HOME", {".local/share/pypoetry", ".poetry"}, NULL, {""}, {NULL}, NULL,
	 NULL, {NULL}},
	{"go", "GOROOT", {NULL}, "pkg/tool", {""}, {NULL}, "bin/go", NULL, {NULL}},
	{"gopath", "GOPATH", {"go"}, NULL, {"bin"}, {NULL}, NULL, NULL, {NULL}},
	/* conda, miniforge, mamba: the nearest prefix (an environment is self-contained) */
	{"conda", "CONDA_PREFIX", {NULL}, "conda-meta", {""}, {NULL}, NULL, NULL, {".condarc"}},
};
#define NMGRS (sizeof mgrs / sizeof *mgrs)

/* Credentials-like names masked at the top of any bound tree. */
static const char *const secret_globs[] = {
	".netrc", ".git-credentials", ".pypirc", ".npmrc", ".env", "credentials",
	"credentials.*", "*token*", "*.key", "*.pem", "id_rsa*", "id_ed25519*", "id_ecdsa*",
	"auth.json", "*secret*", NULL};

void toolmgr_plan_free(struct toolmgr_plan *t)
{
	strv_free(&t->found);
	strv_free(&t->binds);
	strv_free(&t->masks);
	strv_free(&t->warnings);
	strv_free(&t->env);
}

static bool exists(struct hostfacts *hf, const char *p)
{
	enum hf_type t = hf_type(hf, p);
	return t == HF_DIR || t == HF_FILE;
}

/* A root of manager m that holds `real`, real itself (NULL when none). */
static char *root_holding(struct hostfacts *hf, const struct mgr *m, const char *real)
{
	const char *env = m->env ? hf_getenv(hf, m->env) : NULL;
	if (env && env[0] == '/') {
		_cleanup_free_ char *norm = path_normalize("/", env);
		char *r = hf_realpath(hf, norm, NULL);
		if (r && path_is_under(real, r))
			return r;
		free(r);
	}
	for (size_t i = 0; hf->home && m->roots[i]; i++) {
		_cleanup_free_ char *d = path_join(hf->home, m->roots[i]);
		char *r = hf_realpath(hf, d, NULL);
		if (r && path_is_under(real, r))
			return r;
		free(r);
	}
	if (m->marker) {
		/* the nearest ancestor holding the marker, never $HOME or above */
		_cleanup_free_ char *d = xstrdup(real);
		for (int depth = 0; depth < 4 && strcmp(d, "/"); depth++) {
			if (hf->home && path_is_under(hf->home, d))
				break;
			_cleanup_free_ char *mk = path_join(d, m->marker);
			if (exists(hf, mk))
				return xstrdup(d);
			char *up = path_dirname(d);
			free(d);
			d = up;
		}
	}
	return NULL;
}

/* The root of manager m when nothing on PATH lies in it (a companion). */
static char *default_root(struct hostfacts *hf, const struct mgr *m)
{
	const char *env = m->env ? hf_getenv(hf, m->env) : NULL;
	if (env && env[0] == '/') {
		_cleanup_free_ char *norm = path_normalize("/", env);
		return hf_realpath(hf, norm, NULL);
	}
	for (size_t i = 0; hf->home && m->roots[i]; i++) {
		_cleanup_free_ char *d = path_join(hf->home, m->roots[i]);
		char *r = hf_realpath(hf, d, NULL);
		if (r && hf_type(hf, r) == HF_DIR)
			return r;
		free(r);
	}
	return NULL;
}

static const struct mgr *mgr_named(const char *name)
{
	for (size_t i = 0; i < NMGRS; i++)
		if (!strcmp(mgrs[i].name, name))
			return &mgrs[i];
	return NULL;
}

static bool pair_has(const struct strv *pairs, const char *first)
{
	for (size_t i = 0; i + 1 < pairs->n; i += 2)
		if (!strcmp(pairs->v[i], first))
			return true;
	return false;
}

/* Where credentials and agentjail's own files live: never bound from a manager. */
static const char *refused(const struct hostfacts *hf, const char *p)
{
	static const char *const secret[] = {".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud",
					     ".kube", ".docker", ".password-store", NULL};
	if (!strcmp(p, "/") || (hf->home && path_is_under(hf->home, p)))
		return "is $HOME or above it";
	if ((hf->state_dir && path_is_under(hf->state_dir, p)) ||
	    (hf->config_dir && path_is_under(hf->config_dir, p)))
		return "holds agentjail's own state or config";
	for (size_t i = 0; hf->home && secret[i]; i++) {
		_cleanup_free_ char *d = path_join(hf->home, secret[i]);
		if (path_is_under(p, d))
			return "lies where credentials live";
		if (path_is_under(d, p))
			return "holds a directory where credentials live";
	}
	return NULL;
}

static void add_masks(struct hostfacts *hf, const struct mgr *m, const char *dir,
		      struct toolmgr_plan *out)
{
	const struct strv *kids = hf_children(hf, dir);
	for (size_t i = 0; i < kids->n; i++) {
		bool hit = false;
		for (size_t g = 0; !hit && secret_globs[g]; g++)
			hit = fnmatch(secret_globs[g], kids->v[i], 0) == 0;
		for (size_t g = 0; !hit && g < 3 && m->secrets[g]; g++)
			hit = !strcmp(m->secrets[g], kids->v[i]);
		if (!hit)
			continue;
		_cleanup_free_ char *p = path_join(dir, kids->v[i]);
		if (!pair_has(&out->masks, p)) {
			strv_push(&out->masks, p);
			strv_push(&out->masks, m->name);
		}
	}
}

static void bind_one(struct hostfacts *hf, const struct mgr *m, const char *p,
		     struct toolmgr_plan *out)
{
	if (!exists(hf, p) || pair_has(&out->binds, p))
		return;
	const char *why = refused(hf, p);
	if (why) {
		strv_pushf(&out->warnings, "%s: %s %s: not bound", m->name, p, why);
		return;
	}
	if (!resolve_needs_showing(hf, p))
		return; /* a system directory: the jail sees it already */
	strv_push(&out->binds, p);
	strv_push(&out->binds, m->name);
	if (hf_type(hf, p) == HF_DIR)
		add_masks(hf, m, p, out);
}

static bool recognise(struct hostfacts *hf, const char *real, const char *shown,
		      struct toolmgr_plan *out, int depth);

/* A virtualenv (pipx, uv tools, poetry) links its python to a base interpreter elsewhere
 * (pyenv, uv's pythons): that one's tree is needed too. */
static void venv_follow(struct hostfacts *hf, const char *dir, const char *root,
			struct toolmgr_plan *out, int depth)
{
	static const char *const py[] = {"bin/python", "venv/bin/python", NULL};
	for (size_t i = 0; depth < 2 && py[i]; i++) {
		_cleanup_free_ char *p = path_join(dir, py[i]);
		if (hf_type(hf, p) != HF_SYMLINK)
			continue;
		_cleanup_free_ char *r = hf_realpath(hf, p, NULL);
		if (r && !path_is_under(r, root))
			recognise(hf, r, p, out, depth + 1);
	}
}

/* The binds of manager m at `root` for a path `real` in it (NULL: no path, a companion). */
static void mgr_binds(struct hostfacts *hf, const struct mgr *m, const char *root,
		      const char *real, struct toolmgr_plan *out, int depth)
{
	for (size_t i = 0; i < 4 && m->binds[i]; i++) {
		const char *b = m->binds[i];
		size_t n = strlen(b);
		if (n && b[n - 1] == '*') {
			/* "D/ *" (no space): the child of root/D that holds real */
			_cleanup_free_ char *dsub = xstrndup(b, n > 1 ? n - 2 : 0);
			_cleanup_free_ char *d = dsub[0] ? path_join(root, dsub) : xstrdup(root);
			const char *below = real ? path_below(real, d) : NULL;
			if (!below || !below[0])
				continue;
			_cleanup_free_ char *name = xstrndup(below, strcspn(below, "/"));
			_cleanup_free_ char *p = path_join(d, name);
			bind_one(hf, m, p, out);
			venv_follow(hf, p, root, out, depth);
			continue;
		}
		_cleanup_free_ char *p = b[0] ? path_join(root, b) : xstrdup(root);
		bind_one(hf, m, p, out);
		if (!b[0])
			venv_follow(hf, p, root, out, depth);
	}
	for (size_t i = 0; hf->home && i < 2 && m->home_binds[i]; i++) {
		_cleanup_free_ char *p = path_join(hf->home, m->home_binds[i]);
		if (hf_type(hf, p) == HF_FILE || hf_type(hf, p) == HF_DIR)
			bind_one(hf, m, p, out);
	}
}

/* Recognise `real` (a PATH directory or a program, real path); depth limits venv hops. */
static bool recognise(struct hostfacts *hf, const char *real, const char *shown,
		      struct toolmgr_plan *out, int depth)
{
	for (size_t i = 0; i < NMGRS; i++) {
		const struct mgr *m = &mgrs[i];
		_cleanup_free_ char *root = root_holding(hf, m, real);
		if (!root)
			continue;
		bool known = false;
		for (size_t k = 0; k + 1 < out->found.n; k += 2)
			known |= !strcmp(out->found.v[k], m->name) &&
				 !strcmp(out->found.v[k + 1], root);
		if (m->needs) {
			_cleanup_free_ char *need = path_join(root, m->needs);
			if (!exists(hf, need)) {
				/* once per manager, however many PATH entries lead to it */
				bool said = false;
				for (size_t k = 0; k < out->warnings.n; k++)
					said |= strstr(out->warnings.v[k], need) != NULL;
				if (!said)
					strv_pushf(&out->warnings,
						   "%s: %s looks like %s's, but %s is missing: "
						   "nothing of %s is bound",
						   m->name, shown, m->name, need, m->name);
				return true;
			}
		}
		if (!known) {
			strv_push(&out->found, m->name);
			strv_push(&out->found, root);
			const char *env = m->env ? hf_getenv(hf, m->env) : NULL;
			if (env) {
				_cleanup_free_ char *kv = xasprintf("%s=%s", m->env, env);
				if (!strv_contains(&out->env, kv))
					strv_push(&out->env, kv);
			}
		}
		mgr_binds(hf, m, root, real, out, depth);
		const struct mgr *c = m->companion ? mgr_named(m->companion) : NULL;
		_cleanup_free_ char *croot = c ? default_root(hf, c) : NULL;
		_cleanup_free_ char *proxy = c ? path_join(root, "bin/rustup") : NULL;
		if (c && croot && exists(hf, proxy))
			recognise(hf, croot, proxy, out, depth + 1);
		return true;
	}
	return false;
}

void toolmgr_recognise(struct hostfacts *hf, const char *path_env, struct toolmgr_plan *out)
{
	memset(out, 0, sizeof *out);
	_cleanup_free_ char *copy = xstrdup(path_env ? path_env : "");
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (d[0] != '/')
			continue;
		_cleanup_free_ char *dir = path_normalize("/", d);
		_cleanup_free_ char *real = hf_realpath(hf, dir, NULL);
		if (!real || hf_type(hf, real) != HF_DIR)
			continue;
		if (!strcmp(real, "/") || (hf->home && path_is_under(hf->home, real)))
			continue;
		if (recognise(hf, real, dir, out, 0))
			continue;
		if (!hf->home || !path_is_under(real, hf->home))
			continue;
		/* a plain PATH directory under $HOME (~/.local/bin): its links lead to pipx, uv
		 * and poetry installs */
		const struct strv *kids = hf_children(hf, real);
		for (size_t i = 0; i < kids->n; i++) {
			_cleanup_free_ char *p = path_join(real, kids->v[i]);
			if (hf_type(hf, p) != HF_SYMLINK)
				continue;
			_cleanup_free_ char *t = hf_realpath(hf, p, NULL);
			if (t && !path_is_under(t, real) && path_is_under(t, hf->home))
				recognise(hf, t, p, out, 0);
		}
	}
}

bool toolmgr_binds_for(struct hostfacts *hf, const char *real, struct strv *binds)
{
	struct toolmgr_plan t = {0};
	bool hit = recognise(hf, real, real, &t, 0);
	for (size_t i = 0; i + 1 < t.binds.n; i += 2)
		if (!strv_contains(binds, t.binds.v[i]))
			strv_push(binds, t.binds.v[i]);
	toolmgr_plan_free(&t);
	return hit;
}

const char *toolmgr_bind_name(const struct toolmgr_plan *t, const char *path)
{
	for (size_t i = 0; i + 1 < t->binds.n; i += 2)
		if (!strcmp(t->binds.v[i], path))
			return t->binds.v[i + 1];
	return NULL;
}
