/* resolve: command lookup over the host-facts table (pure). */
#include "core/plan/resolve.h"
#include "core/plan/toolmgr.h"

#include <errno.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

#define MAX_LINKS 40
#define MAX_INTERP_DEPTH 4

void resolved_free(struct resolved *r)
{
	free(r->path);
	free(r->real);
	free(r->interp);
	strv_free(&r->binds);
	strv_free(&r->links);
	memset(r, 0, sizeof *r);
}

/* The rest of a walk after a symlink: its target, then what followed the link. */
static char *after_link(const char *target, const char *rest)
{
	return *rest ? xstrcat3(target, "/", rest) : xstrdup(target);
}

/* As the kernel walks a path: a component is looked up in the real directory reached so far
 * (never a symlink), a symlink's target is walked the same way from its directory (or "/"), and
 * ".." takes the parent of where the walk really is, so a `..` after a link leaves the link's
 * target, not the link's directory. */
static char *walk_real(struct hostfacts *hf, const char *path, struct strv *links)
{
	char *todo = xstrdup(path);
	char *acc = xstrdup("/");
	const char *p = todo;
	int hops = 0;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, "/");
		_cleanup_free_ char *comp = xstrndup(p, n);
		p += n;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *up = path_dirname(acc);
			free(acc);
			acc = up;
			continue;
		}
		char *next = path_join(acc, comp);
		const struct hf_stat *st = hf_stat(hf, next);
		bool more = strspn(p, "/") < strlen(p);
		if (st->type == HF_MISSING || (st->type == HF_SYMLINK && ++hops > MAX_LINKS) ||
		    (more && st->type != HF_DIR && st->type != HF_SYMLINK)) {
			free(next);
			free(acc);
			acc = NULL; /* missing, not a directory on the way, or a loop */
			break;
		}
		if (st->type != HF_SYMLINK) {
			free(acc);
			acc = next;
			continue;
		}
		if (links) {
			strv_push(links, next);
			strv_push(links, st->link);
		}
		free(next);
		while (*p == '/')
			p++;
		char *again = after_link(st->link, p);
		if (st->link[0] == '/') {
			free(acc);
			acc = xstrdup("/");
		}
		free(todo);
		todo = again;
		p = todo;
	}
	free(todo);
	return acc;
}

/* The walk, once per path while the facts stay the same (hostfacts.h's memo). */
char *hf_realpath(struct hostfacts *hf, const char *path, struct strv *links)
{
	_cleanup_free_ char *norm = path_normalize("/", path);
	const struct hf_real *m = hf_real_find(hf, norm);
	if (!m) {
		struct strv walked = STRV_INIT;
		char *real = walk_real(hf, norm, &walked);
		hf_real_store(hf, norm, real, &walked);
		strv_free(&walked);
		free(real);
		m = hf_real_find(hf, norm);
	}
	if (links)
		strv_copy(links, &m->links);
	return m->real ? xstrdup(m->real) : NULL;
}

char *resolve_install_root(const char *real)
{
	const char *nm = strstr(real, "/node_modules/");
	if (nm && !(nm - real >= 4 && !strncmp(nm - 4, "/lib", 4))) {
		/* a project's node_modules (npm install --prefix DIR): dependencies are hoisted
		 * beside the package (codex's native binary is a sibling package), so the whole
		 * tree */
		return xstrndup(real, (size_t)(nm - real) + strlen("/node_modules"));
	}
	if (nm) {
		/* a global prefix (PREFIX/lib/node_modules/PKG): dependencies live inside PKG */
		const char *pkg = nm + strlen("/node_modules/");
		const char *end = strchr(pkg, '/');
		if (end && pkg[0] == '@')
			end = strchr(end + 1, '/');
		if (end)
			return xstrndup(real, (size_t)(end - real));
	}
	/* nvm: versions/node/V (one node version, not all of them) */
	const char *nvm = strstr(real, "/.nvm/versions/node/");
	if (nvm) {
		const char *v = nvm + strlen("/.nvm/versions/node/");
		const char *end = strchr(v, '/');
		return end ? xstrndup(real, (size_t)(end - real)) : xstrdup(real);
	}
	const char *ver = strstr(real, "/versions/");
	if (ver) {
		const char *v = ver + strlen("/versions/");
		const char *end = strchr(v, '/');
		/* versions/V/...: the version's tree; versions/V itself a file (a native
		 * installer's single binary): that file */
		return end ? xstrndup(real, (size_t)(end - real)) : xstrdup(real);
	}
	return path_dirname(real);
}

static void push_pair_once(struct strv *pairs, const char *a, const char *b)
{
	for (size_t i = 0; i + 1 < pairs->n; i += 2)
		if (!strcmp(pairs->v[i], a))
			return;
	strv_push(pairs, a);
	strv_push(pairs, b);
}

/* Whether the jail must be shown `p` explicitly: the jail sees the system directories
 * read-only and nothing else of the host, so anything outside them (under $HOME, or a tool
 * tree in /srv or /data) is bound; never $HOME itself, an ancestor of it, or the kernel's
 * filesystems. */
bool resolve_needs_showing(const struct hostfacts *hf, const char *p)
{
	static const char *const visible[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
					      "/libx32", "/opt", "/etc", NULL};
	static const char *const never[] = {"/proc", "/sys", "/dev", "/run", "/var/run", NULL};
	if (!strcmp(p, "/") || (hf->home && path_is_under(hf->home, p)))
		return false;
	for (size_t i = 0; visible[i]; i++)
		if (path_is_under(p, visible[i]))
			return false;
	for (size_t i = 0; never[i]; i++)
		if (path_is_under(p, never[i]))
			return false;
	return true;
}

static void bind_once(struct strv *binds, const char *p)
{
	if (!strv_contains(binds, p))
		strv_push(binds, p);
}

/* Where credentials live: a program found there is never shown to a jail (its directory
 * would come along). NULL when `p` is not in one. */
static const char *secret_dir(const struct hostfacts *hf, const char *p)
{
	static const char *const secret[] = {".ssh",	       ".gnupg",	   ".aws",
					     ".azure",	       ".config/gcloud",  ".kube",
					     ".docker",	       ".password-store", ".netrc",
					     ".git-credentials", ".pki",		   NULL};
	for (size_t i = 0; hf->home && secret[i]; i++) {
		_cleanup_free_ char *d = path_join(hf->home, secret[i]);
		if (path_is_under(p, d))
			return secret[i];
	}
	return NULL;
}

static int collect(struct hostfacts *hf, const struct strv *links, const char *real,
		   struct resolved *out, struct err *e)
{
	const char *sec = secret_dir(hf, real);
	for (size_t i = 0; !sec && i + 1 < links->n; i += 2)
		sec = secret_dir(hf, links->v[i]);
	if (sec) {
		err_set(e, EACCES, real, "lies in ~/%s, which agentjail never shows a jail", sec);
		err_hint(e, "install the program elsewhere (e.g. ~/.local/bin)");
		return -1;
	}
	for (size_t i = 0; i + 1 < links->n; i += 2)
		if (resolve_needs_showing(hf, links->v[i]))
			push_pair_once(&out->links, links->v[i], links->v[i + 1]);
	if (!resolve_needs_showing(hf, real))
		return 0;
	/* a version manager's shims need more than their own directory (core/plan/toolmgr) */
	if (toolmgr_binds_for(hf, real, &out->binds))
		return 0;
	_cleanup_free_ char *root = resolve_install_root(real);
	if (resolve_needs_showing(hf, root))
		bind_once(&out->binds, root);
	return 0;
}

/* The interpreter a "#!" line names: a path, or a bare name for `env` to find on PATH. */
static char *shebang_interp(const char *head)
{
	if (strncmp(head, "#!", 2) != 0)
		return NULL;
	_cleanup_free_ char *copy = xstrdup(head + 2);
	char *save = NULL;
	char *w = strtok_r(copy, " \t", &save);
	if (!w)
		return NULL;
	if (strcmp(path_basename(w), "env") != 0)
		return xstrdup(w);
	/* env [-S] [-i] [NAME=VALUE]... PROGRAM */
	while ((w = strtok_r(NULL, " \t", &save))) {
		if (w[0] == '-' || strchr(w, '='))
			continue;
		return xstrdup(w);
	}
	return NULL;
}

static int find_one(struct hostfacts *hf, const char *name, const char *path_env,
		    const char *skip_real, char **path_out, char **real_out, struct strv *links)
{
	struct strv cands = STRV_INIT;
	if (strchr(name, '/')) {
		strv_push_take(&cands, path_normalize(hf->cwd ? hf->cwd : "/", name));
	} else {
		_cleanup_free_ char *copy = xstrdup(path_env ? path_env : "");
		for (char *save = NULL, *d = strtok_r(copy, ":", &save); d;
		     d = strtok_r(NULL, ":", &save)) {
			if (d[0] != '/')
				continue; /* relative entries mean nothing across the jail's chdir */
			_cleanup_free_ char *dir = path_normalize("/", d);
			strv_push_take(&cands, path_join(dir, name));
		}
	}
	int rc = -1;
	for (size_t i = 0; i < cands.n && rc < 0; i++) {
		struct strv l = STRV_INIT;
		char *real = hf_realpath(hf, cands.v[i], &l);
		const struct hf_stat *st = real ? hf_stat(hf, real) : NULL;
		if (st && st->type == HF_FILE && (st->mode & 0111) &&
		    !(skip_real && !strcmp(real, skip_real))) {
			*path_out = xstrdup(cands.v[i]);
			*real_out = real;
			strv_copy(links, &l);
			rc = 0;
		} else {
			free(real);
		}
		strv_free(&l);
	}
	strv_free(&cands);
	return rc;
}

int resolve_command(struct hostfacts *hf, const char *name, const char *path_env,
		    const char *skip_real, struct resolved *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	struct strv links = STRV_INIT;
	if (find_one(hf, name, path_env, skip_real, &out->path, &out->real, &links) < 0) {
		err_set(e, ENOENT, name, "command not found%s",
			strchr(name, '/') ? "" : " on PATH");
		err_hint(e, "install it, or give its full path");
		strv_free(&links);
		return -1;
	}
	int c = collect(hf, &links, out->real, out, e);
	strv_free(&links);
	if (c < 0) {
		resolved_free(out);
		return -1;
	}

	/* a script needs its interpreter inside the jail too (and that one may be a script) */
	char *cur = xstrdup(out->real);
	for (int depth = 0; depth < MAX_INTERP_DEPTH; depth++) {
		const char *head = hf_head(hf, cur);
		_cleanup_free_ char *in = head ? shebang_interp(head) : NULL;
		if (!in)
			break;
		char *ipath = NULL, *ireal = NULL;
		struct strv il = STRV_INIT;
		if (find_one(hf, in, path_env, NULL, &ipath, &ireal, &il) < 0) {
			err_set(e, ENOENT, out->path, "is a script for `%s`, which %s", in,
				strchr(in, '/') ? "does not exist" : "is not on PATH");
			err_hint(e, "install %s, or put its directory on PATH", path_basename(in));
			free(cur);
			strv_free(&il);
			resolved_free(out);
			return -1;
		}
		int ci = collect(hf, &il, ireal, out, e);
		strv_free(&il);
		if (ci < 0) {
			free(ipath);
			free(ireal);
			free(cur);
			resolved_free(out);
			return -1;
		}
		free(ipath);
		free(out->interp);
		out->interp = xstrdup(ireal);
		free(cur);
		cur = ireal;
	}
	free(cur);
	return 0;
}
