/* config_edit: strings added to a list in a TOML configuration text, the rest kept byte for
 * byte, the result checked by parsing it again. Pure. doc/design.md §8. */
#include "core/config/config_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config/toml.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* The byte offset of LINE:COL (from 1, COL in bytes) in text. */
static size_t offset_of(const char *text, size_t len, int line, int col)
{
	size_t i = 0;
	for (int l = 1; l < line && i < len; i++)
		if (text[i] == '\n')
			l++;
	return i + (size_t)col - 1 <= len ? i + (size_t)col - 1 : len;
}

/* A TOML basic string of s. */
static void add_quoted(struct strbuf *b, const char *s)
{
	sb_addc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			sb_addf(b, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			sb_addf(b, "\\u%04x", *p);
		else
			sb_addc(b, (char)*p);
	}
	sb_addc(b, '"');
}

struct list_shape {
	size_t open, close;  /* offsets of '[' and ']' */
	size_t last_end;     /* just past the last string or comma ('[' + 1 when empty) */
	char last;           /* 's' a string, ',' a comma, '[' nothing */
};

/* The list written at '[' (text parsed already: strings on one line, comments to the end of
 * their line, no nested lists). */
static void scan_list(const char *t, size_t len, size_t open, struct list_shape *s)
{
	*s = (struct list_shape){.open = open, .close = len, .last_end = open + 1, .last = '['};
	for (size_t i = open + 1; i < len;) {
		char c = t[i];
		if (c == ']') {
			s->close = i;
			return;
		}
		if (c == '#') {
			while (i < len && t[i] != '\n')
				i++;
		} else if (c == '"' || c == '\'') {
			for (i++; i < len && t[i] != c; i++)
				if (c == '"' && t[i] == '\\')
					i++;
			s->last_end = ++i;
			s->last = 's';
		} else if (c == ',') {
			s->last_end = ++i;
			s->last = ',';
		} else {
			i++;
		}
	}
}

/* The new strings into the list at '[': on their own lines when the list ends on a line of its
 * own, else after its last entry on that line. */
static void into_list(const char *t, size_t len, size_t open, const struct strv *items,
		      struct strbuf *o)
{
	struct list_shape s;
	scan_list(t, len, open, &s);
	const char *nl = memchr(t + s.last_end, '\n', s.close - s.last_end);
	if (!nl) {
		sb_addn(o, t, s.last_end);
		sb_add(o, s.last == 's' ? ", " : s.last == ',' ? " " : "");
		for (size_t i = 0; i < items->n; i++) {
			if (i)
				sb_add(o, ", ");
			add_quoted(o, items->v[i]);
		}
		sb_addn(o, t + s.last_end, len - s.last_end);
		return;
	}
	/* the indentation of the list's first line after '[' */
	const char *first = memchr(t + open, '\n', s.close - open);
	size_t ind = 0;
	while (first && first + 1 + ind < t + s.close && (first[1 + ind] == ' ' || first[1 + ind] == '\t'))
		ind++;
	size_t line_start = s.close;
	while (line_start > s.last_end && t[line_start - 1] != '\n')
		line_start--;
	sb_addn(o, t, s.last_end);
	if (s.last == 's')
		sb_addc(o, ',');
	sb_addn(o, t + s.last_end, line_start - s.last_end);
	for (size_t i = 0; i < items->n; i++) {
		if (ind)
			sb_addn(o, first + 1, ind);
		else
			sb_add(o, "  ");
		add_quoted(o, items->v[i]);
		sb_add(o, ",\n");
	}
	sb_addn(o, t + line_start, len - line_start);
}

static void key_line(struct strbuf *o, const char *key, const struct strv *items)
{
	sb_addf(o, "%s = [", key);
	for (size_t i = 0; i < items->n; i++) {
		if (i)
			sb_add(o, ", ");
		add_quoted(o, items->v[i]);
	}
	sb_add(o, "]\n");
}

/* Every value as a line "PATH\tVALUE" (empty tables and lists too), for comparing two trees. */
static void flatten(const struct toml_value *v, struct strbuf *path, struct strv *out)
{
	size_t at = path->len;
	switch (v->type) {
	case TOML_TABLE:
		if (!v->n)
			strv_pushf(out, "%s\t{}", sb_str(path));
		for (size_t i = 0; i < v->n; i++) {
			sb_addf(path, "\x1f%s", v->keys[i]);
			flatten(&v->items[i], path, out);
			path->len = at;
			path->s[at] = '\0';
		}
		return;
	case TOML_ARRAY:
		if (!v->n)
			strv_pushf(out, "%s\t[]", sb_str(path));
		for (size_t i = 0; i < v->n; i++)
			strv_pushf(out, "%s[%zu]\ts:%s", sb_str(path), i, v->items[i].s);
		return;
	case TOML_STRING:
		strv_pushf(out, "%s\ts:%s", sb_str(path), v->s);
		return;
	case TOML_INT:
		strv_pushf(out, "%s\ti:%lld", sb_str(path), (long long)v->i);
		return;
	case TOML_BOOL:
		strv_pushf(out, "%s\tb:%d", sb_str(path), v->b);
		return;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Are the trees' values the same, but for the list's new entries? */
static bool same_but(const struct toml_value *before, const struct toml_value *after,
		     const char *list_path, size_t old_n, const struct strv *items)
{
	struct strv a = STRV_INIT, b = STRV_INIT;
	struct strbuf p = STRBUF_INIT;
	sb_add(&p, "");
	flatten(before, &p, &a);
	flatten(after, &p, &b);
	sb_free(&p);
	/* the list, its table or a table above were empty: their markers go */
	struct strv want = STRV_INIT;
	size_t ll = strlen(list_path);
	for (size_t i = 0; i < a.n; i++) {
		size_t pl = (size_t)(strchr(a.v[i], '\t') - a.v[i]);
		const char *val = a.v[i] + pl;
		bool above = pl <= ll && !strncmp(a.v[i], list_path, pl) &&
			     (pl == ll || list_path[pl] == '\x1f');
		if (!(above && (!strcmp(val, "\t[]") || !strcmp(val, "\t{}"))))
			strv_push(&want, a.v[i]);
	}
	for (size_t i = 0; i < items->n; i++)
		strv_pushf(&want, "%s[%zu]\ts:%s", list_path, old_n + i, items->v[i]);
	bool same = want.n == b.n;
	if (same) {
		qsort(want.v, want.n, sizeof *want.v, cmp_str);
		qsort(b.v, b.n, sizeof *b.v, cmp_str);
		for (size_t i = 0; same && i < b.n; i++)
			same = !strcmp(want.v[i], b.v[i]);
	}
	strv_free(&a);
	strv_free(&b);
	strv_free(&want);
	return same;
}

/* The edited text into o; items: the strings to add (not in the list yet). */
static void edit(const char *text, size_t len, const struct toml_value *t,
		 const struct toml_value *list, const char *header, const char *key,
		 const struct strv *items, struct strbuf *o)
{
	if (!items->n) {
		sb_addn(o, text, len);
		return;
	}
	if (list) {
		into_list(text, len, offset_of(text, len, list->line, list->col), items, o);
		return;
	}
	size_t h = t ? offset_of(text, len, t->line, t->col) : len;
	if (h < len && text[h] == '[') { /* the table's own [header]: the key right under it */
		const char *nl = memchr(text + h, '\n', len - h);
		size_t at = nl ? (size_t)(nl - text) + 1 : len;
		sb_addn(o, text, at);
		if (!nl)
			sb_addc(o, '\n');
		key_line(o, key, items);
		sb_addn(o, text + at, len - at);
		return;
	}
	sb_addn(o, text, len);
	if (len && text[len - 1] != '\n')
		sb_addc(o, '\n');
	sb_addf(o, "%s%s\n", len ? "\n" : "", header);
	key_line(o, key, items);
}

/* The table at path and its list key (either may be absent). -1 when one is the wrong type. */
static int find_list(const struct toml_value *root, const char *const *path, size_t depth,
		     const char *key, const char *header, const char *file,
		     const struct toml_value **table, const struct toml_value **list,
		     struct err *e)
{
	const struct toml_value *t = root;
	for (size_t i = 0; i < depth && t; i++) {
		t = toml_get(t, path[i]);
		if (t && t->type != TOML_TABLE)
			return err_set(e, 0, file, "%s is not a table here: add the entries yourself",
				       header);
	}
	*table = t;
	*list = t ? toml_get(t, key) : NULL;
	if (*list && (*list)->type != TOML_ARRAY)
		return err_set(e, 0, file, "`%s` in %s is not a list: add the entries yourself",
			       key, header);
	return 0;
}

int config_add_to_list(const char *text, size_t len, const char *file, const char *const *path,
		       size_t depth, const char *header, const char *key,
		       const struct strv *add, char **out, size_t *out_len, size_t *added,
		       struct err *e)
{
	*out = NULL;
	*out_len = *added = 0;
	struct toml_value root, again;
	memset(&root, 0, sizeof root);
	memset(&again, 0, sizeof again);
	if (toml_parse(text, len, file, &root, e) < 0)
		return -1;
	const struct toml_value *t = NULL, *list = NULL;
	if (find_list(&root, path, depth, key, header, file, &t, &list, e) < 0) {
		toml_free(&root);
		return -1;
	}
	struct strv items = STRV_INIT;
	for (size_t i = 0; i < add->n; i++) {
		bool have = strv_contains(&items, add->v[i]);
		for (size_t k = 0; list && k < list->n && !have; k++)
			have = !strcmp(list->items[k].s, add->v[i]);
		if (!have)
			strv_push(&items, add->v[i]);
	}
	struct strbuf o = STRBUF_INIT, lp = STRBUF_INIT;
	for (size_t i = 0; i < depth; i++)
		sb_addf(&lp, "\x1f%s", path[i]);
	sb_addf(&lp, "\x1f%s", key);
	edit(text, len, t, list, header, key, &items, &o);
	int rc = -1;
	if (toml_parse(sb_str(&o), o.len, file, &again, e) < 0) {
		err_wrap(e, "the edited file would not parse: add the entries yourself");
	} else if (!same_but(&root, &again, sb_str(&lp), list ? list->n : 0, &items)) {
		err_set(e, 0, file, "the edit would change more than %s's `%s`: add the entries "
				    "yourself", header, key);
	} else {
		*added = items.n;
		*out_len = o.len;
		*out = sb_steal(&o);
		rc = 0;
	}
	sb_free(&o);
	sb_free(&lp);
	strv_free(&items);
	toml_free(&root);
	toml_free(&again);
	return rc;
}
