/* Fuzz target: the configuration files are TOML (core/config/toml), and a project's
 * .agentjail.toml is written by whoever wrote the project. The parser must never crash, leak or
 * read out of bounds; an error names FILE:LINE:COL inside the text and says what on one line;
 * an accepted document, printed again by the small printer below and parsed again, gives the
 * same tree (so what the parser accepts it also describes faithfully). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config/toml.h"
#include "fuzzutil.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put_str(struct strbuf *b, const char *s)
{
	sb_addc(b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			sb_addf(b, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			sb_addf(b, "\\u%04X", c);
		else
			sb_addc(b, (char)c);
	}
	sb_addc(b, '"');
}

static void put_value(struct strbuf *b, const struct toml_value *v)
{
	switch (v->type) {
	case TOML_STRING: put_str(b, v->s); return;
	case TOML_INT: sb_addf(b, "%lld", (long long)v->i); return;
	case TOML_BOOL: sb_add(b, v->b ? "true" : "false"); return;
	case TOML_ARRAY:
	case TOML_TABLE: break;
	}
	FUZZ_CHECK(v->type == TOML_ARRAY || v->inline_table);
	sb_add(b, v->type == TOML_ARRAY ? "[" : "{");
	for (size_t i = 0; i < v->n; i++) {
		sb_add(b, i ? ", " : "");
		if (v->type == TOML_TABLE) {
			put_str(b, v->keys[i]);
			sb_add(b, " = ");
		}
		put_value(b, &v->items[i]);
	}
	sb_add(b, v->type == TOML_ARRAY ? "]" : "}");
}

/* Values first, then each sub-table under its own [header] (path: its quoted dotted name). */
static void put_table(struct strbuf *b, const struct toml_value *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->items[i].type == TOML_TABLE && !t->items[i].inline_table)
			continue;
		put_str(b, t->keys[i]);
		sb_add(b, " = ");
		put_value(b, &t->items[i]);
		sb_addc(b, '\n');
	}
	for (size_t i = 0; i < t->n; i++) {
		if (t->items[i].type != TOML_TABLE || t->items[i].inline_table)
			continue;
		struct strbuf sub = STRBUF_INIT;
		sb_addf(&sub, "%s%s", path, *path ? "." : "");
		put_str(&sub, t->keys[i]);
		sb_addf(b, "[%s]\n", sb_str(&sub));
		put_table(b, &t->items[i], sb_str(&sub));
		sb_free(&sub);
	}
}

static int same(const struct toml_value *a, const struct toml_value *b)
{
	if (a->type != b->type || a->n != b->n)
		return 0;
	switch (a->type) {
	case TOML_STRING: return strcmp(a->s, b->s) == 0;
	case TOML_INT: return a->i == b->i;
	case TOML_BOOL: return a->b == b->b;
	case TOML_ARRAY:
		for (size_t i = 0; i < a->n; i++)
			if (!same(&a->items[i], &b->items[i]))
				return 0;
		return 1;
	case TOML_TABLE: break;
	}
	if (a->inline_table != b->inline_table)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct toml_value *o = toml_get(b, a->keys[i]);
		if (!o || !same(&a->items[i], o))
			return 0;
	}
	return 1;
}

/* Positions inside the text, arrays of strings only, keys unique, bookkeeping cleared. */
static void check_tree(const struct toml_value *v, int lines)
{
	FUZZ_CHECK(v->line >= 1 && v->line <= lines && v->col >= 1);
	if (v->type == TOML_ARRAY)
		for (size_t i = 0; i < v->n; i++)
			FUZZ_CHECK(v->items[i].type == TOML_STRING);
	if (v->type == TOML_STRING)
		FUZZ_CHECK(v->s);
	if (v->type != TOML_TABLE && v->type != TOML_ARRAY)
		return;
	if (v->type == TOML_TABLE)
		FUZZ_CHECK(v->i == 0);
	for (size_t i = 0; i < v->n; i++) {
		if (v->type == TOML_TABLE) {
			FUZZ_CHECK(!v->inline_table || v->items[i].type == TOML_STRING);
			FUZZ_CHECK(v->key_line[i] >= 1 && v->key_line[i] <= lines && v->key_col[i] >= 1);
			FUZZ_CHECK(toml_get(v, v->keys[i]) == &v->items[i]);
		}
		check_tree(&v->items[i], lines);
	}
}

static void check_error(const struct err *e, int lines)
{
	int line = 0, col = 0, end = 0;
	FUZZ_CHECK(sscanf(e->path, "fuzz.toml:%d:%d%n", &line, &col, &end) == 2);
	FUZZ_CHECK(e->path[end] == '\0' && line >= 1 && line <= lines && col >= 1);
	FUZZ_CHECK(e->what[0] && !strchr(e->what, '\n'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_dup(data, size);
	int lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	struct toml_value t, again;
	struct err e = {0};
	if (toml_parse(text, size, "fuzz.toml", &t, &e) < 0) {
		check_error(&e, lines);
		FUZZ_CHECK(t.n == 0 && !t.items);
		free(text);
		return 0;
	}
	check_tree(&t, lines);
	struct strbuf b = STRBUF_INIT;
	put_table(&b, &t, "");
	const char *printed = sb_str(&b);
	if (toml_parse(printed, b.len, "printed.toml", &again, &e) < 0) {
		fprintf(stderr, "printed:\n%s\nrefused: %s: %s\n", printed, e.path, e.what);
		FUZZ_CHECK(!"the printed document parses");
	}
	FUZZ_CHECK(same(&t, &again));
	toml_free(&again);
	toml_free(&t);
	sb_free(&b);
	free(text);
	return 0;
}
