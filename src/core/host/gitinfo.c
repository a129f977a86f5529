/* gitinfo: see gitinfo.h. The config syntax follows git's own reader (config.c) as documented
 * in git-config(1): where git would reject a file, the walk stops. */
#include "core/host/gitinfo.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* git's own files are small; a bigger one is not what it claims to be */
#define READ_MAX (1 << 20)
/* git refuses deeper include chains too (they are usually cycles) */
#define INCLUDE_DEPTH 10
#define SYSTEM_CONFIG "/etc/gitconfig"

/* ---- pure parsing ---- */

char *git_parse_gitfile(const char *content)
{
	static const char prefix[] = "gitdir: ";
	if (strncmp(content, prefix, sizeof prefix - 1) != 0)
		return NULL;
	const char *p = content + sizeof prefix - 1;
	size_t n = strlen(p);
	/* like git: only line ends are trimmed; anything else belongs to the path */
	while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r'))
		n--;
	return n ? xstrndup(p, n) : NULL;
}

struct get_ctx {
	const char *section, *key;
	char *value;
};

static int get_one(const char *section, const char *sub, const char *key, const char *value,
		   void *ctx)
{
	struct get_ctx *g = ctx;
	if (!sub && strcasecmp(section, g->section) == 0 && strcasecmp(key, g->key) == 0) {
		free(g->value);
		g->value = xstrdup(value ? value : "true");
	}
	return 0;
}

char *git_config_get(const char *text, const char *section, const char *key)
{
	struct get_ctx g = {.section = section, .key = key};
	(void)git_config_each(text, get_one, &g); /* values before a syntax error count */
	return g.value;
}

/* ---- reading the workspace ---- */

/* A small regular file's content. 0: read; 1: it does not exist; -1: e filled. follow = false
 * refuses a symlink as the last component (a file the jail could have planted). */
static int read_small(const char *path, bool follow, char **out, struct err *e)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW);
	_cleanup_close_ int fd = open(path, flags);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return 1;
	if (fd < 0 && errno == ELOOP && !follow) {
		err_set(e, ELOOP, path, "refusing to follow a symlink in a git directory");
		err_hint(e, "a symlink there could redirect git to a file the jail can write; "
			    "replace it with the file it points to");
		return -1;
	}
	if (fd < 0)
		return err_set(e, errno, path, "cannot open git file");
	struct stat st;
	if (fstat(fd, &st) < 0)
		return err_set(e, errno, path, "cannot stat git file");
	if (!S_ISREG(st.st_mode))
		return err_set(e, 0, path, "git file is not a regular file");
	if (st.st_size > READ_MAX)
		return err_set(e, EFBIG, path, "git file larger than %d bytes", READ_MAX);
	struct strbuf b = STRBUF_INIT;
	char chunk[16384];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			break;
		int en = n < 0 ? errno : b.len + (size_t)n > READ_MAX ? EFBIG : 0;
		if (en) { /* EFBIG: it grew past the bound while we read */
			sb_free(&b);
			return err_set(e, en, path, "cannot read git file");
		}
		sb_addn(&b, chunk, (size_t)n);
	}
	if (memchr(sb_str(&b), '\0', b.len)) {
		sb_free(&b);
		return err_set(e, 0, path, "git file contains a NUL byte");
	}
	*out = sb_steal(&b);
	return 0;
}

static int read_commondir(struct git_info *gi, struct err *e)
{
	_cleanup_free_ char *p = path_join(gi->gitdir, "commondir");
	_cleanup_free_ char *text = NULL;
	int rc = read_small(p, false, &text, e);
	if (rc)
		return rc < 0 ? -1 : 0;
	size_t n = strlen(text);
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	text[n] = '\0';
	if (n)
		gi->commondir = path_normalize(gi->gitdir, text);
	return 0;
}

/* Examine <ws>/.git without following it. */
static int find_gitdir(const char *ws, struct git_info *gi, struct err *e)
{
	_cleanup_free_ char *dotgit = path_join(ws, ".git");
	struct stat st;
	if (lstat(dotgit, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return err_set(e, errno, dotgit, "cannot examine the workspace's .git");
	}
	if (S_ISLNK(st.st_mode)) {
		gi->dotgit_kind = xstrdup("symlink");
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		gi->dotgit_kind = xstrdup("dir");
		gi->gitdir = steal_pointer(&dotgit);
		return read_commondir(gi, e);
	}
	if (!S_ISREG(st.st_mode)) {
		gi->dotgit_kind = xstrdup("other");
		return 0;
	}
	gi->dotgit_kind = xstrdup("file");
	_cleanup_free_ char *text = NULL;
	int rc = read_small(dotgit, false, &text, e);
	if (rc)
		return rc < 0 ? -1 : 0;
	_cleanup_free_ char *target = git_parse_gitfile(text);
	if (!target)
		return 0; /* git refuses such a repository: nothing behind it to protect */
	gi->gitdir = path_normalize(ws, target);
	return read_commondir(gi, e);
}

struct cfg_walk {
	const char *home;
	const char *dir;      /* the directory of the file being walked, for relative includes */
	bool follow;          /* it may be a symlink: the user's own config, not the repo's */
	int depth;
	char *hooks;          /* the last core.hooksPath seen; "" disables hooks */
	struct strv *includes; /* the included files, in order */
	bool worktree_config; /* extensions.worktreeConfig */
	struct err *e;
};

/* git's boolean: a bare key, true/yes/on, or a nonzero number. */
static bool cfg_bool(const char *v)
{
	if (!v || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
	    strcasecmp(v, "on") == 0)
		return true;
	char *end;
	long n = strtol(v, &end, 10);
	return *v && *end == '\0' && n != 0;
}

/* What a callback returns when it failed and filled w->e (distinct from a syntax error). */
#define WALK_FAILED 2

static int walk_file(struct cfg_walk *w, const char *path);

static int on_include(struct cfg_walk *w, const char *value)
{
	if (w->depth >= INCLUDE_DEPTH) {
		err_set(w->e, ELOOP, value, "git config includes nested more than %d deep",
			INCLUDE_DEPTH);
		return WALK_FAILED;
	}
	_cleanup_free_ char *expanded = path_expand_home(w->home, value);
	_cleanup_free_ char *p = path_normalize(w->dir, expanded);
	if (!strv_contains(w->includes, p))
		strv_push(w->includes, p);
	w->depth++;
	int rc = walk_file(w, p);
	w->depth--;
	return rc < 0 ? WALK_FAILED : 0;
}

static int on_variable(const char *section, const char *sub, const char *key, const char *value,
		       void *ctx)
{
	struct cfg_walk *w = ctx;
	bool plain = sub == NULL;
	if (plain && strcmp(section, "extensions") == 0 && strcmp(key, "worktreeconfig") == 0)
		w->worktree_config = cfg_bool(value);
	if (!value) /* git rejects a bare hooksPath or include path: nothing to take */
		return 0;
	if (plain && strcmp(section, "core") == 0 && strcmp(key, "hookspath") == 0) {
		free(w->hooks);
		w->hooks = xstrdup(value);
	} else if (strcmp(key, "path") == 0 && ((plain && strcmp(section, "include") == 0) ||
						(!plain && strcmp(section, "includeif") == 0))) {
		return on_include(w, value);
	}
	return 0;
}

/* Walk one config file (absolute, normalized); a missing one is fine, a syntax error ends it
 * quietly (git would refuse to run at all). */
static int walk_file(struct cfg_walk *w, const char *path)
{
	_cleanup_free_ char *text = NULL;
	int rc = read_small(path, w->follow, &text, w->e);
	if (rc)
		return rc < 0 ? -1 : 0;
	_cleanup_free_ char *dir = path_dirname(path);
	const char *outer = w->dir;
	w->dir = dir;
	rc = git_config_each(text, on_variable, w);
	w->dir = outer;
	return rc == WALK_FAILED ? -1 : 0;
}

static int walk_in(struct cfg_walk *w, const char *dir, const char *name)
{
	_cleanup_free_ char *p = path_join(dir, name);
	return walk_file(w, p);
}

/* core.hooksPath in git's order, last wins (see gitinfo.h). */
static int find_hooks_path(const char *ws, const char *home, struct git_info *gi, struct err *e)
{
	struct cfg_walk w = {.home = home, .follow = true, .includes = &gi->includes, .e = e};
	_cleanup_free_ char *h = home ? path_normalize("/", home) : NULL;
	/* a symlinked .git is not protected by the caller, but git on the host reads through it */
	_cleanup_free_ char *via_link = gi->dotgit_kind && strcmp(gi->dotgit_kind, "symlink") == 0
						? path_join(ws, ".git")
						: NULL;
	const char *gitdir = gi->gitdir ? gi->gitdir : via_link;
	const char *repo = gi->commondir ? gi->commondir : gitdir;
	int rc = walk_file(&w, SYSTEM_CONFIG);
	if (rc == 0 && h)
		rc = walk_in(&w, h, ".config/git/config");
	if (rc == 0 && h)
		rc = walk_in(&w, h, ".gitconfig");
	w.follow = false;
	w.worktree_config = false; /* an extension counts only in the repository's config */
	if (rc == 0 && repo)
		rc = walk_in(&w, repo, "config");
	if (rc == 0 && gitdir && w.worktree_config)
		rc = walk_in(&w, gitdir, "config.worktree");
	if (rc == 0 && w.hooks && w.hooks[0]) {
		_cleanup_free_ char *expanded = path_expand_home(h, w.hooks);
		gi->hooks_path = path_normalize(ws, expanded);
	}
	free(w.hooks);
	return rc;
}

int git_resolve(const char *workspace, const char *home, struct git_info *out, struct err *e)
{
	*out = (struct git_info){0};
	if (workspace[0] != '/')
		return err_set(e, EINVAL, workspace, "the workspace must be an absolute path");
	_cleanup_free_ char *ws = path_normalize("/", workspace);
	struct git_info gi = {0};
	if (find_gitdir(ws, &gi, e) < 0 || find_hooks_path(ws, home, &gi, e) < 0) {
		git_info_free(&gi);
		return -1;
	}
	*out = gi;
	return 0;
}

/* ---- validating the pointers (see gitinfo.h) ---- */

/* The real path of an existing directory, or NULL. */
static char *real_dir(const char *p)
{
	char *r = realpath(p, NULL);
	struct stat st;
	if (r && (stat(r, &st) < 0 || !S_ISDIR(st.st_mode))) {
		free(r);
		r = NULL;
	}
	return r;
}

/* A pointer file's one line, trailing CR/LF trimmed, resolved against `dir`; NULL when absent,
 * empty or unreadable (a symlink included). */
static char *read_pointer(const char *dir, const char *name)
{
	_cleanup_free_ char *p = path_join(dir, name);
	_cleanup_free_ char *text = NULL;
	struct err ignored = {0};
	if (read_small(p, false, &text, &ignored) != 0)
		return NULL;
	size_t n = strcspn(text, "\r\n");
	text[n] = '\0';
	return n ? path_normalize(dir, text) : NULL;
}

/* The first of `forbidden` that `dir` is, or holds. */
static const char *holds_forbidden(const char *dir, const char *const *forbidden)
{
	for (size_t i = 0; forbidden && forbidden[i]; i++)
		if (forbidden[i][0] && path_is_under(forbidden[i], dir))
			return forbidden[i];
	return NULL;
}

/* C/worktrees/NAME whose gitdir file names <ws>/.git (git writes it with real paths). */
static bool links_back(const char *gitdir, const char *dotgit)
{
	_cleanup_free_ char *parent = path_dirname(gitdir);
	if (strcmp(path_basename(parent), "worktrees") != 0)
		return false;
	_cleanup_free_ char *back = read_pointer(gitdir, "gitdir");
	if (!back)
		return false;
	if (!strcmp(back, dotgit))
		return true;
	_cleanup_free_ char *real = realpath(back, NULL);
	return real && !strcmp(real, dotgit);
}

/* A submodule's git dir: S/.git/modules/... with the workspace below S, or a core.worktree
 * that names the workspace. */
static bool submodule_of(const char *gitdir, const char *ws)
{
	const char *m = strstr(gitdir, "/.git/modules/");
	if (m) {
		_cleanup_free_ char *super = xstrndup(gitdir, (size_t)(m - gitdir));
		if (path_is_strict_ancestor(super[0] ? super : "/", ws))
			return true;
	}
	_cleanup_free_ char *cfg = path_join(gitdir, "config");
	_cleanup_free_ char *text = NULL;
	struct err ignored = {0};
	if (read_small(cfg, false, &text, &ignored) != 0)
		return false;
	_cleanup_free_ char *wt = git_config_get(text, "core", "worktree");
	if (!wt)
		return false;
	_cleanup_free_ char *norm = path_normalize(gitdir, wt);
	_cleanup_free_ char *real = realpath(norm, NULL);
	return !strcmp(norm, ws) || (real && !strcmp(real, ws));
}

/* A directory git would take as a repository: objects/ and refs/ (HEAD lives per worktree). */
static bool looks_like_gitdir(const char *dir)
{
	static const char *const need[] = {"objects", "refs"};
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *p = path_join(dir, need[i]);
		struct stat st;
		if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode))
			return false;
	}
	return true;
}

static int refuse(struct err *e, const char *file, const char *target, const char *why,
		  const char *hint)
{
	err_set(e, 0, file, "refusing a git pointer that names %s, %s; the pointer", target, why);
	err_hint(e, "%s", hint);
	return -1;
}

static int refuse_forbidden(struct err *e, const char *file, const char *target, const char *bad,
			    const char *hint)
{
	_cleanup_free_ char *why = xasprintf("which is, or holds, %s (never bound into a jail)", bad);
	return refuse(e, file, target, why, hint);
}

#define HINT_SUSPECT "a jailed run could have written it; look at it, then "

static int check_gitfile(const char *ws, const char *dotgit, const char *const *forbidden,
			 struct git_info *gi, struct err *e)
{
	_cleanup_free_ char *real = real_dir(gi->gitdir);
	if (!real)
		return 0; /* nothing there to bind: the builder skips it */
	free(gi->gitdir);
	gi->gitdir = xstrdup(real);
	const char *bad = holds_forbidden(real, forbidden);
	if (bad)
		return refuse_forbidden(e, dotgit, real, bad,
			      HINT_SUSPECT "point it at the repository's git dir or remove it");
	if (path_is_under(real, ws))
		return 0;
	bool linked = links_back(real, dotgit);
	if (linked || submodule_of(real, ws))
		return 0;
	return refuse(e, dotgit, real,
		      "outside the workspace and neither a linked worktree's git dir that points back "
		      "here nor a submodule's git dir",
		      HINT_SUSPECT "repair it (`git worktree repair` in the main repository, "
				   "`git submodule absorbgitdirs` in the super-project) or remove it");
}

static int check_commondir(const char *ws, const char *const *forbidden, struct git_info *gi,
			   bool plain, struct err *e)
{
	_cleanup_free_ char *file = path_join(gi->gitdir, "commondir");
	_cleanup_free_ char *real = real_dir(gi->commondir);
	static const char hint[] =
		HINT_SUSPECT "remove it (git writes a commondir only in a linked worktree's git dir, "
			     "C/worktrees/NAME, where it holds ../..)";
	if (!real)
		return refuse(e, file, gi->commondir, "which is not a directory", hint);
	free(gi->commondir);
	gi->commondir = xstrdup(real);
	const char *bad = holds_forbidden(real, forbidden);
	if (bad)
		return refuse_forbidden(e, file, real, bad, hint);
	if (path_is_under(real, ws) && looks_like_gitdir(real))
		return 0;
	_cleanup_free_ char *wt = path_join(real, "worktrees");
	_cleanup_free_ char *parent = path_dirname(gi->gitdir);
	if (!plain && !strcmp(parent, wt))
		return 0; /* the repository this worktree's git dir belongs to */
	return refuse(e, file, real,
		      plain ? "which is not a git dir inside the workspace"
			    : "which is not the repository holding this git dir "
			      "(C for C/worktrees/NAME) nor a git dir inside the workspace",
		      hint);
}

int git_check_pointers(const char *workspace, const char *const *forbidden, struct git_info *gi,
		       struct err *e)
{
	if (!gi->gitdir || !gi->dotgit_kind)
		return 0;
	_cleanup_free_ char *ws = path_normalize("/", workspace);
	_cleanup_free_ char *dotgit = path_join(ws, ".git");
	bool plain = strcmp(gi->dotgit_kind, "dir") == 0;
	if (!plain && check_gitfile(ws, dotgit, forbidden, gi, e) < 0)
		return -1;
	if (plain) {
		const char *bad = holds_forbidden(gi->gitdir, forbidden);
		if (bad)
			return refuse_forbidden(e, dotgit, gi->gitdir, bad,
						"use a workspace that does not hold it");
	}
	if (gi->commondir && check_commondir(ws, forbidden, gi, plain, e) < 0)
		return -1;
	return 0;
}

void git_info_free(struct git_info *gi)
{
	if (!gi)
		return;
	free(gi->dotgit_kind);
	free(gi->gitdir);
	free(gi->commondir);
	free(gi->hooks_path);
	strv_free(&gi->includes);
	*gi = (struct git_info){0};
}
