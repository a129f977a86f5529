/* gitscan_check: see gitscan_check.h. The move aside is snapshot_check's, given entries
 * recorded as absent before the run. */
#include "core/jail/gitscan_check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/host/gitscan.h"
#include "core/plan/gitcfg.h"
#include "core/plan/gitprotect.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Whether `path` is new since `since`: its ctime (which no unprivileged process can set back;
 * a rename updates it) is not older. */
static bool changed_since(const char *path, long long since)
{
	struct stat st;
	return lstat(path, &st) < 0 || (long long)st.st_ctim.tv_sec >= since;
}

static void entry_absent(struct snapshot *s, const char *path)
{
	s->e = xrealloc(s->e, (s->n + 1) * sizeof *s->e);
	s->e[s->n++] = (struct snap_entry){.path = xstrdup(path)};
}

static void append(struct violations *out, struct violation v)
{
	out->v = xrealloc(out->v, (out->n + 1) * sizeof *out->v);
	out->v[out->n++] = v;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ---- what of a new repository may stay ---- */

/* The content of `path` when it is a regular file of at most max bytes with one link, read
 * without following a symlink; NULL otherwise (*why says what it is instead). A second link
 * would let a file elsewhere in the workspace rewrite it in the next jail, past the read-only
 * bind of the name. */
static char *read_plain(const char *path, size_t max, size_t *len, const char **why)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
						   O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "it is not a regular file";
		return NULL;
	}
	if (st.st_nlink != 1) {
		*why = "it has another link: a file elsewhere could rewrite it";
		return NULL;
	}
	if ((unsigned long long)st.st_size > max) {
		*why = "it is larger than agentjail reads";
		return NULL;
	}
	struct strbuf b = STRBUF_INIT;
	char chunk[8192];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || b.len + (size_t)n > max) {
			bool ok = n == 0;
			if (!ok) {
				*why = n < 0 ? "it cannot be read" : "it is larger than agentjail reads";
				sb_free(&b);
				return NULL;
			}
			break;
		}
		sb_addn(&b, chunk, (size_t)n);
	}
	*len = b.len;
	sb_add(&b, ""); /* a NUL after the bytes, even when there are none */
	return sb_steal(&b);
}

/* Why the new repository's config must go (a clause), or NULL when it only sets keys known to
 * run nothing (gitcfg_judge): `git init` and the identity set after it stay. */
static char *config_why(const char *path)
{
	size_t len = 0;
	const char *why = NULL;
	_cleanup_free_ char *text = read_plain(path, GITCFG_MAX, &len, &why);
	if (!text)
		return xstrdup(why);
	struct gitcfg_judgement j;
	gitcfg_judge(text, len, &j);
	return gitcfg_explain(&j);
}

/* Whether every line of a file is blank or a comment (git's template info/exclude). */
static bool only_comments(const char *text)
{
	for (const char *l = text; *l;) {
		size_t n = strcspn(l, "\n");
		size_t lead = strspn(l, " \t");
		if (lead < n && l[lead] != '#')
			return false;
		l += n + (l[n] == '\n');
	}
	return true;
}

/* Why the new repository's hooks/ or info/ must go, or NULL when it holds only what git's
 * template puts there: sample hooks, NAME.sample (never run: a hook is run by its exact name), and an
 * info/exclude of comments. Regular files with one link only, no directory, no symlink. */
static char *template_dir_why(const char *dir, bool hooks)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return xstrdup("it is not a directory");
	DIR *d = fdopendir(fd);
	if (!d)
		return xstrdup("it cannot be listed");
	fd = -1; /* the DIR owns it */
	char *why = NULL;
	struct dirent *de;
	while (!why && (de = readdir(d)) != NULL) {
		const char *n = de->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		size_t nl = strlen(n);
		bool sample = nl > 7 && !strcmp(n + nl - 7, ".sample");
		if (hooks && !sample) {
			why = xasprintf("it holds %.64s, which git runs as a hook", n);
			continue;
		}
		if (!hooks && strcmp(n, "exclude") != 0) {
			why = xasprintf("it holds %.64s (git reads attributes and rules there)", n);
			continue;
		}
		_cleanup_free_ char *p = path_join(dir, n);
		size_t len = 0;
		const char *w = NULL;
		_cleanup_free_ char *text = read_plain(p, 1 << 20, &len, &w);
		if (!text)
			why = xasprintf("%.64s: %s", n, w);
		else if (!hooks && (strlen(text) != len || !only_comments(text)))
			why = xstrdup("its exclude file has rules, which hide files from git status");
	}
	closedir(d);
	return why;
}

/* Why a new repository's entry `name` (one of git_exec_names, or modules) must go, NULL to
 * keep it; `path` exists. */
static char *new_repo_why(const char *name, const char *path)
{
	if (!strcmp(name, "config"))
		return config_why(path);
	if (!strcmp(name, "hooks") || !strcmp(name, "info"))
		return template_dir_why(path, !strcmp(name, "hooks"));
	if (!strcmp(name, "modules"))
		return xstrdup("submodules' git directories, with config and hooks of their own");
	if (!strcmp(name, "config.worktree"))
		return xstrdup("git reads it as config");
	return xstrdup("a pointer git follows");
}

/* A new repository g's entry `name`: recorded absent (so snapshot_check moves it aside) with
 * why, unless it is missing or may stay. */
static void judge_entry(const char *g, const char *name, struct snapshot *absent,
			struct strv *whys)
{
	_cleanup_free_ char *p = path_join(g, name);
	struct stat st;
	if (lstat(p, &st) < 0)
		return; /* nothing there */
	char *why = new_repo_why(name, p);
	if (!why)
		return;
	entry_absent(absent, p);
	strv_push(whys, p);
	strv_push_take(whys, why);
}

/* Every .git and submodule git dir there is now. */
static int find_now(const struct gitscan_before *b, struct strv *now, struct violations *out,
		    struct err *e)
{
	for (size_t r = 0; r < b->roots->n; r++) {
		/* the root's own .git too: one made by `git init` in the jail is new like any other
		 * (the argv builder does not watch a missing one, see in_new_repo) */
		struct stat st;
		_cleanup_free_ char *own = path_join(b->roots->v[r], ".git");
		if (lstat(own, &st) == 0)
			strv_push(now, own);
		bool truncated = false;
		if (gitscan_walk(b->roots->v[r], GITSCAN_MAX_DIRS, now, &truncated, e) < 0)
			return -1;
		if (truncated)
			append(out, (struct violation){
					    .path = xstrdup(b->roots->v[r]),
					    .what = xasprintf("more than %d directories: nested git "
							      "repositories past that were not checked",
							      GITSCAN_MAX_DIRS),
					    .own_words = true});
	}
	for (size_t i = 0; i < b->gitdirs->n; i++)
		gitscan_modules(b->gitdirs->v[i], now);
	for (size_t i = 0, n = now->n; i < n; i++)
		if (!strv_contains(b->gitdirs, now->v[i]) && is_dir(now->v[i]))
			gitscan_modules(now->v[i], now); /* a git dir's modules/ were listed above */
	return 0;
}

int gitscan_check(const struct gitscan_before *b, const char *quarantine_dir,
		  struct violations *out, struct err *e)
{
	struct strv now = STRV_INIT;
	struct snapshot absent = {0};
	struct strv whys = STRV_INIT; /* pairs: a path moved aside, why */
	int rc = find_now(b, &now, out, e);
	for (size_t i = 0; rc == 0 && i < now.n; i++) {
		const char *g = now.v[i];
		if (strv_contains(b->known, g) || (b->truncated && !changed_since(g, b->since)))
			continue;
		if (!is_dir(g)) { /* a .git file or symlink is only a pointer: it goes itself */
			entry_absent(&absent, g);
			continue;
		}
		/* the directory stays (what the agent made there is its work); what would run a
		 * command goes, submodule git dirs included: a config with keys that run nothing
		 * (`git init`, an identity), the template's sample hooks and exclude stay */
		size_t first = absent.n;
		for (size_t k = 0; git_exec_names[k]; k++)
			judge_entry(g, git_exec_names[k], &absent, &whys);
		judge_entry(g, "modules", &absent, &whys);
		if (absent.n > first)
			append(out, (struct violation){
					    .path = xstrdup(g),
					    .what = xstrdup("a git repository created during the run: "
							    "what in it would run a command is moved "
							    "aside"),
					    .own_words = true});
	}
	struct violations moved = {0};
	if (rc == 0 && absent.n)
		rc = snapshot_check(&absent, quarantine_dir, &moved, e);
	for (size_t i = 0; i < moved.n; i++) {
		struct violation v = moved.v[i];
		const char *why = NULL;
		for (size_t k = 0; k + 1 < whys.n && !why; k += 2)
			if (!strcmp(whys.v[k], v.path))
				why = whys.v[k + 1];
		char *what = why ? xasprintf("%s in a git repository created during the run (%s)",
					     v.what, why)
				 : xasprintf("%s in a git repository created during the run", v.what);
		free(v.what);
		v.what = what;
		v.own_words = true;
		append(out, v);
	}
	free(moved.v);
	snapshot_free(&absent);
	strv_free(&whys);
	strv_free(&now);
	return rc;
}
