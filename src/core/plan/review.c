/* review: the pure parts of --fs review (review.h). */
#include "core/plan/review.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/plan/bwrap_argv.h"
#include "core/plan/gitprotect.h"
#include "core/plan/relname.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

char *review_dir(const char *state_dir, const char *id)
{
	_cleanup_free_ char *top = path_join(state_dir, REVIEW_DIR);
	return path_join(top, id);
}

bool review_ckpt_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64 || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '.' || c == '_' || c == '-';
		if (!ok)
			return false;
	}
	return true;
}

const char *rv_guard_name(enum rv_guard g)
{
	return g == RV_NAMED ? "protected" : g == RV_NEVER ? "never applied" : "";
}

void rv_rules_free(struct rv_rules *r)
{
	strv_free(&r->named);
	strv_free(&r->never);
}

/* ---- protection ---- */

/* a relative path equal to root or below it ("" is the top: everything is below it) */
static bool rel_under(const char *rel, const char *root)
{
	size_t l = strlen(root);
	return l == 0 || (!strncmp(rel, root, l) && (rel[l] == '\0' || rel[l] == '/'));
}

static bool comp_is(const char *c, size_t l, const char *name)
{
	return strlen(name) == l && !strncasecmp(c, name, l);
}

static bool comp_in(const char *c, size_t l, const char *const *names)
{
	for (size_t i = 0; names[i]; i++)
		if (comp_is(c, l, names[i]))
			return true;
	return false;
}

/* what git keeps in a git dir and never runs: a commit in the jail is these */
static const char *const git_free[] = {
	"objects", "refs", "logs", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG",
	"MERGE_MODE", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "index",
	"COMMIT_EDITMSG", "TAG_EDITMSG", "packed-refs", "description", "shallow", NULL};
/* what git runs or follows from a git dir: gitprotect's names, the submodules' and linked
 * worktrees' own git dirs, and the todo lists a `rebase --continue` executes (exec lines) */
static const char *const git_never[] = {"modules", "worktrees", "rebase-merge", "rebase-apply",
					"sequencer", NULL};

static enum rv_guard set_root(enum rv_guard g, const char *rel, size_t len, char **root)
{
	if (root)
		*root = xstrndup(rel, len);
	return g;
}

/* the rules for the names below each .git component of rel */
static enum rv_guard git_component(const char *rel, bool is_dir, char **root, bool *done)
{
	*done = true;
	for (const char *p = rel;;) {
		const char *q = strchrnul(p, '/');
		if (comp_is(p, (size_t)(q - p), ".git")) {
			if (!*q)
				return is_dir ? (*done = false, RV_FREE)
					      : set_root(RV_NEVER, rel, strlen(rel), root);
			const char *s = q + 1;
			const char *t = strchrnul(s, '/');
			size_t l = (size_t)(t - s);
			size_t upto = (size_t)(t - rel);
			if (comp_in(s, l, git_exec_names) || comp_in(s, l, git_never))
				return set_root(RV_NEVER, rel, upto, root);
			if (!comp_in(s, l, git_free))
				return set_root(RV_NAMED, rel, upto, root);
			/* alternates: git reads objects from wherever they point */
			if (comp_is(s, l, "objects") && *t && !strncasecmp(t + 1, "info", 4) &&
			    (t[5] == '\0' || t[5] == '/'))
				return set_root(RV_NAMED, rel, upto + 5, root);
		}
		if (!*q)
			break;
		p = q + 1;
	}
	*done = false;
	return RV_FREE;
}

enum rv_guard review_guard(const char *rel, bool is_dir, const struct rv_rules *r,
			   rv_has_head_fn has_head, void *arg, char **root)
{
	if (root)
		*root = NULL;
	bool done;
	enum rv_guard g = git_component(rel, is_dir, root, &done);
	if (done)
		return g;
	/* D/config, D/hooks/… with a D/HEAD: a git dir planted without the name .git */
	size_t lens[8];
	size_t k = has_head ? relname_exec_dirs(rel, lens, 8) : 0;
	for (size_t i = 0; i < k; i++) {
		_cleanup_free_ char *d = xstrndup(rel, lens[i]);
		if (!has_head(arg, d))
			continue;
		const char *n = rel + lens[i] + (lens[i] ? 1 : 0);
		return set_root(RV_NEVER, rel, (size_t)(strchrnul(n, '/') - rel), root);
	}
	for (size_t i = 0; r && i < r->never.n; i++)
		if (rel_under(rel, r->never.v[i]))
			return set_root(RV_NEVER, r->never.v[i], strlen(r->never.v[i]), root);
	const char *top = bw_protected_prefix(rel);
	if (top)
		return set_root(RV_NAMED, rel, strlen(top), root);
	if (!strncasecmp(rel, ".claude/", 8) && !strchr(rel + 8, '/') &&
	    fnmatch("settings*.json", rel + 8, FNM_CASEFOLD) == 0)
		return set_root(RV_NAMED, rel, strlen(rel), root);
	for (size_t i = 0; r && i < r->named.n; i++)
		if (rel_under(rel, r->named.v[i]))
			return set_root(RV_NAMED, r->named.v[i], strlen(r->named.v[i]), root);
	return RV_FREE;
}

size_t review_git_dir_len(const char *rel)
{
	for (const char *p = rel;;) {
		const char *q = strchrnul(p, '/');
		if (comp_is(p, (size_t)(q - p), ".git"))
			return (size_t)(q - rel);
		if (!*q)
			return 0;
		p = q + 1;
	}
}

bool review_named(const char *rel, const char *root, const struct strv *paths)
{
	for (size_t i = 0; i < paths->n; i++) {
		const char *p = paths->v[i];
		if (rel_under(rel, p) && (!root || rel_under(p, root)))
			return true;
	}
	return false;
}

mode_t review_mode(mode_t upper, bool had, mode_t workspace)
{
	mode_t m = upper & 0755;
	if (had)
		m |= upper & workspace & 0022;
	return m;
}

char *review_link_lands(const char *rel, const char *target)
{
	if (!target[0] || target[0] == '/')
		return NULL;
	/* a top of our own: ".." past it is clamped at "/", which is not under it */
	_cleanup_free_ char *at = xasprintf("/rv-top/%s", rel);
	_cleanup_free_ char *parent = path_dirname(at);
	_cleanup_free_ char *joined = xasprintf("%s/%s", parent, target);
	_cleanup_free_ char *norm = path_normalize("/", joined);
	const char *below = path_below(norm, "/rv-top");
	return below ? xstrdup(below) : NULL;
}

bool review_link_inside(const char *rel, const char *target)
{
	_cleanup_free_ char *at = review_link_lands(rel, target);
	return at != NULL;
}

/* ---- baselines ---- */

void rv_manifest_free(struct rv_manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].rel);
	free(m->v);
	memset(m, 0, sizeof *m);
}

void rv_manifest_add(struct rv_manifest *m, const struct rv_base *b)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->v = xrealloc(m->v, m->cap * sizeof *m->v);
	}
	m->v[m->n] = *b;
	m->v[m->n].rel = xstrdup(b->rel);
	m->n++;
	m->sorted = false;
}

static int cmp_base(const void *a, const void *b)
{
	return strcmp(((const struct rv_base *)a)->rel, ((const struct rv_base *)b)->rel);
}

const struct rv_base *rv_manifest_find(struct rv_manifest *m, const char *rel)
{
	if (!m->n)
		return NULL;
	if (!m->sorted) {
		qsort(m->v, m->n, sizeof *m->v, cmp_base);
		m->sorted = true;
	}
	struct rv_base key = {.rel = (char *)rel};
	return bsearch(&key, m->v, m->n, sizeof *m->v, cmp_base);
}

static const char hexd[] = "0123456789abcdef";

char *rv_manifest_format(const struct rv_manifest *m, size_t *len)
{
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < m->n; i++) {
		const struct rv_base *r = &m->v[i];
		char hash[65];
		for (int k = 0; k < 32; k++) {
			hash[2 * k] = hexd[r->hash[k] >> 4];
			hash[2 * k + 1] = hexd[r->hash[k] & 15];
		}
		hash[64] = '\0';
		sb_addn(&b, r->rel, strlen(r->rel) + 1);
		sb_addf(&b, "%c %llu %llu %lld %lld %d %s", r->kind, r->size, r->ino, r->mtime_ns,
			r->ctime_ns, r->during ? 1 : 0, hash);
		sb_addc(&b, '\0');
	}
	*len = b.len;
	return b.s ? sb_steal(&b) : xstrdup("");
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int parse_fields(const char *f, struct rv_base *r)
{
	char kind;
	int during;
	char hash[65];
	int used = 0;
	if (sscanf(f, "%c %llu %llu %lld %lld %d %64s%n", &kind, &r->size, &r->ino, &r->mtime_ns,
		   &r->ctime_ns, &during, hash, &used) != 7 ||
	    f[used] != '\0' || strlen(hash) != 64 || !strchr("-fdlo", kind) || kind == '\0' ||
	    (during != 0 && during != 1))
		return -1;
	for (int k = 0; k < 32; k++) {
		int hi = hexval(hash[2 * k]), lo = hexval(hash[2 * k + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		r->hash[k] = (unsigned char)(hi << 4 | lo);
	}
	r->kind = kind;
	r->during = during == 1;
	return 0;
}

int rv_manifest_parse(const char *buf, size_t len, const char *what, struct rv_manifest *out,
		      struct err *e)
{
	memset(out, 0, sizeof *out);
	size_t i = 0;
	while (i < len) {
		const char *rel = buf + i;
		const char *z1 = memchr(rel, '\0', len - i);
		const char *f = z1 ? z1 + 1 : NULL;
		const char *z2 = f && f < buf + len ? memchr(f, '\0', (size_t)(buf + len - f)) : NULL;
		struct rv_base r = {0};
		if (!z2 || z1 == rel || parse_fields(f, &r) < 0) {
			rv_manifest_free(out);
			err_set(e, 0, what, "the change set's baselines are damaged (record at byte "
					    "%zu)",
				i);
			err_hint(e, "the change set cannot be compared with the workspace: `agentjail "
				    "apply --force` applies it anyway, `agentjail discard` drops it");
			return -1;
		}
		r.rel = (char *)rel;
		rv_manifest_add(out, &r);
		i = (size_t)(z2 - buf) + 1;
	}
	return 0;
}

bool rv_base_same(const struct rv_base *then, const struct rv_base *now)
{
	if (then->kind != now->kind)
		return false;
	if (then->kind == '-')
		return true;
	if (then->kind == 'f' && then->size == now->size && then->ino == now->ino &&
	    then->mtime_ns == now->mtime_ns)
		return true;
	return !memcmp(then->hash, now->hash, sizeof then->hash);
}
