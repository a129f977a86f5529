/* osb_names: the sandbox's names, judged before anything comes back (osb_names.h). */
#include "core/backend/remote/osb_names.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/plan/bwrap_argv.h"
#include "core/plan/gitprotect.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

enum osb_name_fault osb_name_check(const char *s, size_t n, char **aim)
{
	enum osb_name_fault f = (enum osb_name_fault)relname_check(s, n, aim);
	if (f != OSB_NAME_OK)
		return f;
	const char *slash = memchr(s, '/', n); /* s is n bytes, not a C string */
	size_t l = slash ? (size_t)(slash - s) : n;
	if ((l == strlen(OSB_UP_NAME) && !memcmp(s, OSB_UP_NAME, l)) ||
	    (l >= strlen(OSB_STAGING_PREFIX) &&
	     !memcmp(s, OSB_STAGING_PREFIX, strlen(OSB_STAGING_PREFIX))))
		return OSB_NAME_RESERVED;
	return OSB_NAME_OK;
}

const char *osb_name_fault_str(enum osb_name_fault f)
{
	return f == OSB_NAME_RESERVED ? "a name agentjail uses for its own staging"
				      : relname_fault_str((enum relname_fault)f);
}

char *osb_name_shown(const char *s, size_t n)
{
	return relname_shown(s, n);
}

/* ---- protection ---- */

static bool comp_is(const char *c, size_t l, const char *name)
{
	return strlen(name) == l && !strncasecmp(c, name, l);
}

bool osb_protected(const char *rel)
{
	static const char *const more[] = {".claude/settings.json", ".claude/settings.local.json",
					   NULL};
	for (const char *p = rel;;) {
		const char *q = strchrnul(p, '/');
		if (comp_is(p, (size_t)(q - p), ".git"))
			return true;
		if (!*q)
			break;
		p = q + 1;
	}
	if (bw_protected_prefix(rel))
		return true;
	for (const char *const *n = more; *n; n++) {
		size_t l = strlen(*n);
		if (!strncasecmp(rel, *n, l) && (rel[l] == '\0' || rel[l] == '/'))
			return true;
	}
	return false;
}

size_t osb_exec_dirs(const char *rel, size_t *lens, size_t max)
{
	return relname_exec_dirs(rel, lens, max);
}

/* ---- the listing ---- */

struct mode_line {
	char *rel;
	unsigned mode;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct osb_entry *)a)->rel, ((const struct osb_entry *)b)->rel);
}

static int cmp_mode(const void *a, const void *b)
{
	return strcmp(((const struct mode_line *)a)->rel, ((const struct mode_line *)b)->rel);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* qsort and bsearch, for arrays that may be empty (and NULL then) */
static void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

static void *search(const void *key, const void *v, size_t n, size_t size,
		    int (*cmp)(const void *, const void *))
{
	return n ? bsearch(key, v, n, size, cmp) : NULL;
}

static void refuse(struct osb_listing *out, const char *name, size_t n, const char *why,
		   const char *aim)
{
	if (aim && osb_protected(aim) && !strv_contains(&out->aimed, aim) &&
	    out->aimed.n < OSB_REFUSED_SHOWN)
		strv_push(&out->aimed, aim);
	if (out->refused.n >= OSB_REFUSED_SHOWN) {
		out->refused_more++;
		return;
	}
	_cleanup_free_ char *shown = osb_name_shown(name, n);
	strv_pushf(&out->refused, "%s: %s; not brought back", shown, why);
}

/* A name of the listing: true when it is checked, else refused (and reported) here. */
static bool name_ok(struct osb_listing *out, const char *name)
{
	_cleanup_free_ char *aim = NULL;
	size_t n = strlen(name);
	enum osb_name_fault f = osb_name_check(name, n, &aim);
	if (f == OSB_NAME_OK)
		return true;
	_cleanup_free_ char *why = xasprintf("not a plain relative path: %s", osb_name_fault_str(f));
	refuse(out, name, n, why, aim);
	return false;
}

/* "HEX  ./NAME": 0 with the hash and the name (into line), -1 for anything else. */
static int sum_line(const char *line, unsigned char sha[32], const char **name)
{
	for (int i = 0; i < 64; i++)
		if (!isxdigit((unsigned char)line[i]) || isupper((unsigned char)line[i]))
			return -1;
	if (strncmp(line + 64, "  ./", 4))
		return -1;
	for (int i = 0; i < 32; i++) {
		char h[3] = {line[2 * i], line[2 * i + 1], 0};
		sha[i] = (unsigned char)strtoul(h, NULL, 16);
	}
	*name = line + 68;
	return 0;
}

/* "MODE NAME": 0 with the mode and the name, -1 for anything else. */
static int mode_line(const char *l, unsigned *mode, const char **name)
{
	const char *p = l;
	unsigned m = 0;
	while (*p >= '0' && *p <= '7' && p - l < 6)
		m = m * 8 + (unsigned)(*p++ - '0');
	if (p == l || *p != ' ')
		return -1;
	*mode = m;
	*name = p + 1;
	return 0;
}

/* Whether D/HEAD (any ASCII case) is among the sorted, lower-cased names. */
static bool has_head(char **folded, size_t n, const char *rel, size_t dlen)
{
	_cleanup_free_ char *key = dlen ? xasprintf("%.*s/head", (int)dlen, rel) : xstrdup("head");
	for (char *c = key; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return search(&key, folded, n, sizeof *folded, cmp_str) != NULL;
}

static void mark_gitdirs(struct osb_listing *out)
{
	char **folded = NULL;
	size_t nf = 0;
	for (size_t i = 0; i < out->n; i++) {
		struct osb_entry *e = &out->v[i];
		size_t lens[8];
		size_t k = e->protected_ ? 0 : osb_exec_dirs(e->rel, lens, 8);
		if (k && !folded) {
			folded = xcalloc(out->n + out->links.n + 1, sizeof *folded);
			for (size_t j = 0; j < out->n + out->links.n; j++) {
				folded[nf] = xstrdup(j < out->n ? out->v[j].rel
								: out->links.v[j - out->n]);
				for (char *c = folded[nf]; *c; c++)
					*c = (char)tolower((unsigned char)*c);
				nf++;
			}
			sort(folded, nf, sizeof *folded, cmp_str);
		}
		for (size_t j = 0; j < k && !e->protected_; j++)
			e->protected_ = has_head(folded, nf, e->rel, lens[j]);
	}
	for (size_t j = 0; j < nf; j++)
		free(folded[j]);
	free(folded);
}

void osb_listing_parse(const struct strv *lines, struct osb_listing *out)
{
	memset(out, 0, sizeof *out);
	struct mode_line *modes = NULL;
	size_t nm = 0, capm = 0, cap = 0;
	for (size_t i = 0; i < lines->n; i++) {
		const char *l = lines->v[i], *name;
		unsigned mode;
		unsigned char sha[32];
		if (!*l)
			continue;
		if (!strncmp(l, "L ", 2)) {
			if (name_ok(out, l + 2))
				strv_push(&out->links, l + 2);
		} else if (!strncmp(l, "M ", 2) && mode_line(l + 2, &mode, &name) == 0) {
			/* a refused name is reported by its hash line */
			if (osb_name_check(name, strlen(name), NULL) != OSB_NAME_OK)
				continue;
			if (nm == capm)
				modes = xrealloc(modes, (capm = capm ? 2 * capm : 64) * sizeof *modes);
			modes[nm++] = (struct mode_line){xstrdup(name), mode};
		} else if (sum_line(l, sha, &name) == 0) {
			if (!name_ok(out, name))
				continue;
			if (out->n == cap)
				out->v = xrealloc(out->v, (cap = cap ? 2 * cap : 64) * sizeof *out->v);
			struct osb_entry *e = &out->v[out->n++];
			memset(e, 0, sizeof *e);
			e->rel = xstrdup(name);
			memcpy(e->sha, sha, 32);
		} else {
			/* sha256sum escapes a name with a newline or backslash: "\\HEX  ./NAME" */
			bool esc = l[0] == '\\' && strlen(l) > 69;
			refuse(out, esc ? l + 69 : l, strlen(esc ? l + 69 : l),
			       esc ? "a name with a newline or backslash (escaped by sha256sum)"
				   : "not a line of the listing",
			       NULL);
		}
	}
	sort(out->links.v, out->links.n, sizeof *out->links.v, cmp_str);
	sort(out->v, out->n, sizeof *out->v, cmp_entry);
	sort(modes, nm, sizeof *modes, cmp_mode);
	/* each name once: a name listed twice, or as a file and a symlink, is refused */
	size_t kept = 0;
	for (size_t i = 0; i < out->n;) {
		size_t j = i + 1;
		while (j < out->n && !strcmp(out->v[j].rel, out->v[i].rel))
			j++;
		const char *why = j - i > 1			       ? "listed more than once"
				  : osb_listing_link(out, out->v[i].rel) ? "listed as a file and a symlink"
									 : NULL;
		if (why) {
			refuse(out, out->v[i].rel, strlen(out->v[i].rel), why, out->v[i].rel);
			strv_push(&out->dups, out->v[i].rel); /* in order: sorted */
			for (size_t k = i; k < j; k++)
				free(out->v[k].rel);
		} else {
			out->v[kept++] = out->v[i];
		}
		i = j;
	}
	out->n = kept;
	for (size_t i = 0; i < out->n; i++) {
		struct osb_entry *e = &out->v[i];
		struct mode_line key = {e->rel, 0};
		struct mode_line *m = search(&key, modes, nm, sizeof *modes, cmp_mode);
		e->mode = 0644;
		if (m) {
			/* every line of the name counts: the least permissive wins */
			while (m > modes && !strcmp(m[-1].rel, e->rel))
				m--;
			e->mode = 0755;
			for (; m < modes + nm && !strcmp(m->rel, e->rel); m++)
				e->mode &= m->mode;
		}
		e->protected_ = osb_protected(e->rel);
	}
	mark_gitdirs(out);
	for (size_t i = 0; i < nm; i++)
		free(modes[i].rel);
	free(modes);
}

void osb_listing_free(struct osb_listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].rel);
	free(l->v);
	strv_free(&l->links);
	strv_free(&l->dups);
	strv_free(&l->aimed);
	strv_free(&l->refused);
	memset(l, 0, sizeof *l);
}

const struct osb_entry *osb_listing_file(const struct osb_listing *l, const char *rel)
{
	struct osb_entry key = {.rel = (char *)rel};
	return search(&key, l->v, l->n, sizeof *l->v, cmp_entry);
}

bool osb_listing_link(const struct osb_listing *l, const char *rel)
{
	return search(&rel, l->links.v, l->links.n, sizeof *l->links.v, cmp_str) != NULL;
}

bool osb_listing_dup(const struct osb_listing *l, const char *rel)
{
	return search(&rel, l->dups.v, l->dups.n, sizeof *l->dups.v, cmp_str) != NULL;
}
