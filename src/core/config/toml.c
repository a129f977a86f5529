/* toml: the strict TOML subset described in toml.h (doc/design.md §8). Pure: text in, tree out.
 *
 * Positions: lines and columns count from 1; a column counts BYTES from the start of the line
 * (a tab is one column, a multi-byte UTF-8 character counts each of its bytes).
 *
 * The whole text is checked first (UTF-8, no NUL, no control character but tab, no bare CR), so
 * the parser proper sees only valid UTF-8 lines. While parsing, a table's `i` (unused for tables
 * in the tree handed out) records how the table came to exist, for the redefinition rules of
 * TOML 1.0; it is zeroed before toml_parse returns:
 *   IMPLICIT  named as a prefix of a [header]: a later [header] may define it once;
 *   HEADER    defined by its own [header];
 *   DOTTED    created by a dotted key (a.b = 1); only dotted keys of the same section may add
 *             to it, no [header] may define it (sub-tables [a.b.c] are allowed, as in TOML);
 *   INLINE    { … }: closed.
 * We are stricter than TOML in one corner: a dotted key may not reach into a table created by
 * a [header] (TOML forbids it for defined tables, leaves implicit ones unclear). */
#include "core/config/toml.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

/* The parts of a key, and the depth of a table: bounds toml_free's recursion, and any table can
 * be named by one [header]. */
#define KEY_PARTS_MAX 32

enum origin { O_ROOT = 1, O_IMPLICIT, O_HEADER, O_DOTTED, O_INLINE };

struct parser {
	const char *s;
	size_t len, pos;
	int line;
	size_t bol; /* offset of the first byte of the current line */
	const char *file;
	struct err *e;
	int64_t section; /* counts the [headers] seen: a dotted table remembers its own */
	struct toml_value *root, *cur;
	int cur_depth;   /* the parts of cur's name */
};

struct keypart {
	char *name;
	size_t pos;
};

struct key {
	struct keypart part[KEY_PARTS_MAX];
	int n;
};

/* ---- errors ---- */

__attribute__((format(printf, 3, 4))) static int fail_at(struct parser *p, size_t pos,
							  const char *fmt, ...)
{
	char what[sizeof p->e->what], where[sizeof p->e->path];
	va_list ap;
	va_start(ap, fmt);
	if (vsnprintf(what, sizeof what, fmt, ap) < 0)
		what[0] = '\0';
	va_end(ap);
	snprintf(where, sizeof where, "%s:%d:%zu", p->file, p->line, pos - p->bol + 1);
	return err_set(p->e, 0, where, "%s", what);
}

int toml_verr_at(struct err *e, const char *file, int line, int col, const char *fmt,
		 va_list ap)
{
	char what[sizeof e->what], where[sizeof e->path];
	if (vsnprintf(what, sizeof what, fmt, ap) < 0)
		what[0] = '\0';
	snprintf(where, sizeof where, "%s:%d:%d", file, line, col);
	return err_set(e, 0, where, "%s", what);
}

int toml_err_at(struct err *e, const char *file, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = toml_verr_at(e, file, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

static bool at_eol(const struct parser *p)
{
	return p->pos >= p->len || p->s[p->pos] == '\n' || p->s[p->pos] == '\r';
}

/* What stands at pos, for "found …" (buf holds a quoted character). */
static const char *found(const struct parser *p, size_t pos, char buf[8])
{
	if (pos >= p->len)
		return "end of file";
	unsigned char c = (unsigned char)p->s[pos];
	if (c == '\n' || c == '\r')
		return "end of line";
	if (c == ' ' || c == '\t')
		return c == ' ' ? "a space" : "a tab";
	if (c >= 0x80)
		return "a non-ASCII character";
	snprintf(buf, 8, c == '`' ? "'%c'" : "`%c`", c);
	return buf;
}

/* A key for messages: its parts joined by dots, control characters shown as '?'. */
static const char *key_show(const struct key *k, int upto, char *buf, size_t size)
{
	struct strbuf b = STRBUF_INIT;
	for (int i = 0; i < upto && i < k->n; i++) {
		if (i)
			sb_addc(&b, '.');
		for (const char *c = k->part[i].name; *c; c++)
			sb_addc(&b, (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
	}
	snprintf(buf, size, "%s", sb_str(&b));
	sb_free(&b);
	return buf;
}

const char *toml_type_name(enum toml_type t)
{
	switch (t) {
	case TOML_TABLE: return "table";
	case TOML_STRING: return "string";
	case TOML_INT: return "integer";
	case TOML_BOOL: return "boolean";
	case TOML_ARRAY: return "array";
	}
	return "value";
}

/* ---- the text as a whole ---- */

/* The length of the valid UTF-8 sequence at s (n bytes available), 0 when invalid (overlong,
 * surrogate, beyond U+10FFFF, truncated). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], cp, min;
	size_t k;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		k = 2, cp = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		k = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

static int prescan(struct parser *p)
{
	const unsigned char *s = (const unsigned char *)p->s;
	for (size_t i = 0; i < p->len;) {
		if (s[i] == '\n') {
			p->line++;
			p->bol = ++i;
		} else if (s[i] == '\r') {
			if (i + 1 >= p->len || s[i + 1] != '\n')
				return fail_at(p, i, "a carriage return must be followed by a line feed");
			i++;
		} else if (s[i] == 0) {
			return fail_at(p, i, "a NUL byte is not allowed in a configuration file");
		} else if ((s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f) {
			return fail_at(p, i, "control character U+%04X is not allowed: only tab and "
				       "newline may appear", s[i]);
		} else {
			size_t k = utf8_len(s + i, p->len - i);
			if (!k)
				return fail_at(p, i, "invalid UTF-8 (byte 0x%02x): the file must be UTF-8 "
					       "text", s[i]);
			i += k;
		}
	}
	p->line = 1;
	p->bol = 0;
	return 0;
}

/* ---- whitespace, comments, line ends ---- */

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
		p->pos++;
}

static void skip_comment(struct parser *p)
{
	if (p->pos < p->len && p->s[p->pos] == '#')
		while (!at_eol(p))
			p->pos++;
}

/* Past a line end (LF or CRLF; the prescan refused a bare CR). */
static void newline(struct parser *p)
{
	if (p->pos < p->len && p->s[p->pos] == '\r')
		p->pos++;
	if (p->pos < p->len && p->s[p->pos] == '\n') {
		p->pos++;
		p->line++;
		p->bol = p->pos;
	}
}

/* Spaces, comments and line ends (inside an array). */
static void skip_blank(struct parser *p)
{
	for (;;) {
		skip_ws(p);
		skip_comment(p);
		if (p->pos >= p->len || !at_eol(p))
			return;
		newline(p);
	}
}

/* After a value or a header: spaces, maybe a comment, then the end of the line. */
static int end_of_line(struct parser *p, const char *after)
{
	char b[8];
	skip_ws(p);
	skip_comment(p);
	if (!at_eol(p))
		return fail_at(p, p->pos, "expected the end of the line after %s, found %s", after,
			       found(p, p->pos, b));
	newline(p);
	return 0;
}

/* ---- strings ---- */

static void utf8_put(struct strbuf *b, uint32_t cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6), n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12), n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18), n = 4;
	}
	for (size_t i = 1; i < n; i++)
		u[i] = (char)(0x80 | ((cp >> (6 * (n - 1 - i))) & 0x3f));
	sb_addn(b, u, n);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* \uXXXX or \UXXXXXXXX: p->pos is on the u or U. */
static int unicode_escape(struct parser *p, struct strbuf *b)
{
	size_t esc = p->pos - 1;
	char u = p->s[p->pos++];
	int ndig = u == 'u' ? 4 : 8;
	uint32_t cp = 0;
	for (int i = 0; i < ndig; i++, p->pos++) {
		int d = p->pos < p->len ? hexval(p->s[p->pos]) : -1;
		char fb[8];
		if (d < 0)
			return fail_at(p, p->pos, "expected %d hexadecimal digits after `\\%c`, found %s",
				       ndig, u, found(p, p->pos, fb));
		cp = cp << 4 | (uint32_t)d;
	}
	if (cp >= 0xd800 && cp <= 0xdfff)
		return fail_at(p, esc, "\\%c%0*X is a surrogate, not a character: write the character "
			       "itself", u, ndig, cp);
	if (cp > 0x10ffff)
		return fail_at(p, esc, "\\%c%0*X is beyond U+10FFFF, the last Unicode character", u,
			       ndig, cp);
	if (cp == 0)
		return fail_at(p, esc, "a NUL character (\\%c%0*X) is not allowed in a string", u, ndig,
			       cp);
	utf8_put(b, cp);
	return 0;
}

/* After a backslash in a basic string: p->pos is on the character after it. */
static int escape(struct parser *p, struct strbuf *b)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	char c = p->pos < p->len ? p->s[p->pos] : '\0';
	if (c == 'u' || c == 'U')
		return unicode_escape(p, b);
	const char *k = c ? strchr(from, c) : NULL;
	if (!k) {
		char fb[8];
		return fail_at(p, p->pos - 1, "unknown escape `\\` followed by %s: expected one of "
			       "\\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX",
			       found(p, p->pos, fb));
	}
	sb_addc(b, to[k - from]);
	p->pos++;
	return 0;
}

/* A single-line basic ("…") or literal ('…') string at p->pos into *out. */
static int string(struct parser *p, char **out)
{
	size_t start = p->pos;
	char q = p->s[start];
	if (p->len - start >= 3 && p->s[start + 1] == q && p->s[start + 2] == q)
		return fail_at(p, start, "multi-line strings are not supported: write a single-line "
			       "string%s", q == '"' ? " with \\n escapes" : "");
	p->pos++;
	struct strbuf b = STRBUF_INIT;
	sb_addn(&b, "", 0);
	for (;;) {
		if (at_eol(p)) {
			char fb[8];
			sb_free(&b);
			return fail_at(p, p->pos, "unterminated string: expected `%c` before %s", q,
				       found(p, p->pos, fb));
		}
		char c = p->s[p->pos];
		if (c == q)
			break;
		if (c == '\\' && q == '"') {
			p->pos++;
			if (escape(p, &b) < 0) {
				sb_free(&b);
				return -1;
			}
			continue;
		}
		sb_addc(&b, c);
		p->pos++;
	}
	p->pos++;
	*out = sb_steal(&b);
	return 0;
}

/* ---- keys ---- */

static bool bare_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

static int key_part(struct parser *p, char **out)
{
	if (p->pos < p->len && (p->s[p->pos] == '"' || p->s[p->pos] == '\''))
		return string(p, out);
	size_t start = p->pos;
	while (p->pos < p->len && bare_char(p->s[p->pos]))
		p->pos++;
	if (p->pos == start) {
		char fb[8];
		return fail_at(p, start, "expected a key (letters, digits, `_`, `-`, or a quoted "
			       "string), found %s", found(p, start, fb));
	}
	*out = xstrndup(p->s + start, p->pos - start);
	return 0;
}

static void key_free(struct key *k)
{
	for (int i = 0; i < k->n; i++)
		free(k->part[i].name);
	k->n = 0;
}

/* A key, dotted or not, with the spaces around its dots. */
static int parse_key(struct parser *p, struct key *k)
{
	k->n = 0;
	for (;;) {
		if (k->n == KEY_PARTS_MAX)
			return fail_at(p, p->pos, "a key may have at most %d parts", KEY_PARTS_MAX);
		k->part[k->n].pos = p->pos;
		if (key_part(p, &k->part[k->n].name) < 0)
			return -1;
		k->n++;
		skip_ws(p);
		if (p->pos >= p->len || p->s[p->pos] != '.')
			return 0;
		p->pos++;
		skip_ws(p);
	}
}

/* ---- the tree ---- */

/* Room for one more item (capacity: the next power of two). */
static void grow(struct toml_value *v)
{
	size_t n = v->n;
	if (n && (n & (n - 1)))
		return;
	size_t cap = n ? 2 * n : 1;
	v->items = xrealloc(v->items, cap * sizeof *v->items);
	if (v->type == TOML_TABLE) {
		v->keys = xrealloc(v->keys, cap * sizeof *v->keys);
		v->key_line = xrealloc(v->key_line, cap * sizeof *v->key_line);
		v->key_col = xrealloc(v->key_col, cap * sizeof *v->key_col);
	}
}

static struct toml_value *find(const struct toml_value *t, const char *key, size_t *idx)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->keys[i], key) == 0) {
			*idx = i;
			return &t->items[i];
		}
	return NULL;
}

const struct toml_value *toml_get(const struct toml_value *table, const char *key)
{
	size_t i;
	if (!table || table->type != TOML_TABLE)
		return NULL;
	return find(table, key, &i);
}

static int col_at(const struct parser *p, size_t pos) { return (int)(pos - p->bol + 1); }

/* A new zeroed item in table t for the key part (a copy of its name). */
static struct toml_value *add_key(struct parser *p, struct toml_value *t,
				  const struct keypart *kp)
{
	grow(t);
	t->keys[t->n] = xstrdup(kp->name);
	t->key_line[t->n] = p->line;
	t->key_col[t->n] = col_at(p, kp->pos);
	struct toml_value *v = &t->items[t->n++];
	memset(v, 0, sizeof *v);
	v->line = p->line;
	v->col = col_at(p, kp->pos);
	return v;
}

static struct toml_value *add_table(struct parser *p, struct toml_value *t,
				    const struct keypart *kp, enum origin o)
{
	struct toml_value *v = add_key(p, t, kp);
	v->type = TOML_TABLE;
	v->i = (int64_t)o + 8 * p->section;
	return v;
}

static enum origin origin_of(const struct toml_value *t) { return (enum origin)(t->i % 8); }

static void clear_bookkeeping(struct toml_value *v)
{
	if (v->type != TOML_TABLE)
		return;
	v->i = 0;
	for (size_t i = 0; i < v->n; i++)
		clear_bookkeeping(&v->items[i]);
}

void toml_free(struct toml_value *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		toml_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->s);
	free(v->items);
	free(v->keys);
	free(v->key_line);
	free(v->key_col);
	memset(v, 0, sizeof *v);
}

/* ---- values ---- */

static bool at_word(const struct parser *p, const char *w)
{
	size_t n = strlen(w);
	return p->len - p->pos >= n && memcmp(p->s + p->pos, w, n) == 0;
}

static bool is_digit(const struct parser *p, size_t pos)
{
	return pos < p->len && p->s[pos] >= '0' && p->s[pos] <= '9';
}

static int string_value(struct parser *p, struct toml_value *v)
{
	v->type = TOML_STRING;
	v->line = p->line;
	v->col = col_at(p, p->pos);
	return string(p, &v->s);
}

/* A bare word where a value should be (`memory = 4G`, `net = off`, `rw = [~/src]`): its length
 * when it runs from start to a blank, a comment, `,`, `]`, `}` or the end of the line, else 0.
 * quote_hint adds the hint to quote it and returns -1 (the error is already set). */
static size_t bare_word(const struct parser *p, size_t start)
{
	size_t end = start;
	while (end < p->len && end - start < 64 && p->s[end] > ' ' && p->s[end] < 0x7f &&
	       !strchr("#,]}\"'=[{", p->s[end]))
		end++;
	char c = end < p->len ? p->s[end] : '\n';
	bool ends = c == ' ' || c == '\t' || c == '\r' || c == '\n' || strchr("#,]}", c);
	return ends ? end - start : 0;
}

static int quote_hint(struct parser *p, size_t start)
{
	size_t n = bare_word(p, start);
	if (n)
		err_hint(p->e, "quote it: \"%.*s\"", (int)n, p->s + start);
	return -1;
}

/* The digits of a decimal integer (p->pos on the first), '_' only between two digits. */
static int digits(struct parser *p, size_t start, uint64_t *mag, int *ndig)
{
	*mag = 0;
	*ndig = 0;
	for (; p->pos < p->len; p->pos++) {
		char c = p->s[p->pos];
		if (c == '_') {
			if (!is_digit(p, p->pos - 1) || !is_digit(p, p->pos + 1))
				return fail_at(p, p->pos, "`_` in an integer must stand between two digits");
			continue;
		}
		if (c < '0' || c > '9')
			return 0;
		unsigned d = (unsigned)(c - '0');
		if (*mag > (UINT64_C(1) << 63) / 10 ||
		    *mag * 10 + d > (UINT64_C(1) << 63))
			return fail_at(p, start, "integer out of range: it must fit in 64 bits, signed");
		*mag = *mag * 10 + d;
		(*ndig)++;
	}
	return 0;
}

static int int_value(struct parser *p, struct toml_value *v)
{
	size_t start = p->pos;
	bool sign = p->s[start] == '+' || p->s[start] == '-', neg = p->s[start] == '-';
	p->pos += sign;
	if (p->s[p->pos] == '0' && p->pos + 1 < p->len && strchr("xob", p->s[p->pos + 1]))
		return fail_at(p, start, "hexadecimal, octal and binary integers are not supported: "
			       "write a decimal integer");
	uint64_t mag;
	int ndig;
	size_t first = p->pos;
	if (digits(p, start, &mag, &ndig) < 0)
		return -1;
	char next = p->pos < p->len ? p->s[p->pos] : '\0';
	if (next == '.' || next == 'e' || next == 'E') {
		fail_at(p, start, "floats are not supported: write an integer or a string");
		return quote_hint(p, start);
	}
	if ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z')) {
		size_t n = bare_word(p, start);
		fail_at(p, start, "expected an integer, found `%.*s`",
			(int)(n ? n : p->pos + 1 - start), p->s + start);
		return quote_hint(p, start);
	}
	if (!sign && (next == '-' || next == ':'))
		return fail_at(p, start, "dates and times are not supported: write a string");
	if (p->s[first] == '0' && ndig > 1)
		return fail_at(p, start, "leading zeros are not allowed in an integer");
	if (!neg && mag > INT64_MAX)
		return fail_at(p, start, "integer out of range: it must fit in 64 bits, signed");
	v->type = TOML_INT;
	v->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return 0;
}

static int array_value(struct parser *p, struct toml_value *v)
{
	char fb[8];
	v->type = TOML_ARRAY;
	p->pos++;
	for (;;) {
		skip_blank(p);
		if (p->pos >= p->len)
			return fail_at(p, p->pos, "unterminated array: expected `]`, found end of file");
		char c = p->s[p->pos];
		if (c == ']')
			break;
		if (c != '"' && c != '\'') {
			fail_at(p, p->pos, "arrays may hold only strings here, found %s",
				found(p, p->pos, fb));
			return quote_hint(p, p->pos);
		}
		grow(v);
		struct toml_value *item = &v->items[v->n];
		memset(item, 0, sizeof *item);
		v->n++;
		if (string_value(p, item) < 0)
			return -1;
		skip_blank(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == ']')
			break;
		return fail_at(p, p->pos, "expected `,` or `]` after an array item, found %s",
			       found(p, p->pos, fb));
	}
	p->pos++;
	return 0;
}

/* One `key = "string"` of an inline table (p->pos on the key). */
static int inline_entry(struct parser *p, struct toml_value *t)
{
	char fb[8], kb[256];
	struct key k = {.n = 1};
	k.part[0].pos = p->pos;
	if (key_part(p, &k.part[0].name) < 0)
		return -1;
	int rc = -1;
	size_t idx;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '.')
		fail_at(p, p->pos, "dotted keys are not supported inside an inline table");
	else if (p->pos >= p->len || p->s[p->pos] != '=')
		fail_at(p, p->pos, "expected `=` after the key `%s`, found %s",
			key_show(&k, 1, kb, sizeof kb), found(p, p->pos, fb));
	else if (find(t, k.part[0].name, &idx))
		fail_at(p, k.part[0].pos, "key `%s` is defined twice (first at column %d)",
			key_show(&k, 1, kb, sizeof kb), t->key_col[idx]);
	else
		rc = 0;
	if (rc == 0) {
		p->pos++;
		skip_ws(p);
		if (p->pos >= p->len || (p->s[p->pos] != '"' && p->s[p->pos] != '\''))
			rc = fail_at(p, p->pos, "inline tables may hold only strings here, found %s",
				     found(p, p->pos, fb));
		else
			rc = string_value(p, add_key(p, t, &k.part[0]));
	}
	key_free(&k);
	return rc;
}

static int inline_value(struct parser *p, struct toml_value *v)
{
	char fb[8];
	v->type = TOML_TABLE;
	v->inline_table = true;
	v->i = O_INLINE;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == '}') {
		p->pos++;
		return 0;
	}
	for (;;) {
		if (inline_entry(p, v) < 0)
			return -1;
		skip_ws(p);
		char c = p->pos < p->len ? p->s[p->pos] : '\0';
		p->pos += c == ',' || c == '}';
		if (c == '}')
			return 0;
		if (c != ',')
			return fail_at(p, p->pos, "expected `,` or `}` in the inline table (on one "
				       "line), found %s", found(p, p->pos, fb));
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == '}')
			return fail_at(p, p->pos, "a trailing comma is not allowed in an inline table");
	}
}

/* The value after `=` (p->pos on its first character). */
static int value(struct parser *p, struct toml_value *v)
{
	char fb[8];
	v->line = p->line;
	v->col = col_at(p, p->pos);
	char c = p->pos < p->len ? p->s[p->pos] : '\0';
	if (c == '"' || c == '\'')
		return string_value(p, v);
	if (c == '[')
		return array_value(p, v);
	if (c == '{')
		return inline_value(p, v);
	if (at_word(p, "true") || at_word(p, "false")) {
		v->type = TOML_BOOL;
		v->b = c == 't';
		p->pos += v->b ? 4 : 5;
		return 0;
	}
	size_t start = p->pos;
	p->pos += c == '+' || c == '-';
	if (is_digit(p, p->pos)) {
		p->pos = start;
		return int_value(p, v);
	}
	if (at_word(p, "inf") || at_word(p, "nan"))
		return fail_at(p, start, "floats are not supported: write an integer or a string");
	fail_at(p, start, "expected a value after `=` (a string, an integer, true, false, […] or "
		"{…}), found %s", found(p, start, fb));
	return quote_hint(p, start);
}

/* ---- lines ---- */

static const char *origin_text(enum origin o)
{
	return o == O_DOTTED ? "dotted keys" : o == O_INLINE ? "an inline table" : "a [header]";
}

/* Walk the first n-1 parts of k from t, creating the missing tables (implicit ones for a
 * [header], dotted ones for a key); the table reached in *out. */
static int walk(struct parser *p, struct toml_value *t, struct key *k, bool header,
		struct toml_value **out)
{
	char kb[256];
	if (!header && p->cur_depth + k->n - 1 > KEY_PARTS_MAX)
		return fail_at(p, k->part[0].pos, "tables may nest at most %d deep: this key reaches "
			       "%d", KEY_PARTS_MAX, p->cur_depth + k->n - 1);
	for (int i = 0; i < k->n - 1; i++) {
		size_t idx;
		struct toml_value *c = find(t, k->part[i].name, &idx);
		if (!c) {
			t = add_table(p, t, &k->part[i], header ? O_IMPLICIT : O_DOTTED);
			continue;
		}
		key_show(k, i + 1, kb, sizeof kb);
		if (c->type != TOML_TABLE)
			return fail_at(p, k->part[i].pos, "key `%s` is already %s %s (line %d), not a "
				       "table", kb, c->type == TOML_INT || c->type == TOML_ARRAY ? "an" : "a",
				       toml_type_name(c->type), t->key_line[idx]);
		enum origin o = origin_of(c);
		if (o == O_INLINE)
			return fail_at(p, k->part[i].pos, "cannot add to `%s`, an inline table (line %d): "
				       "an inline table is closed", kb, c->line);
		if (!header && (o != O_DOTTED || c->i / 8 != p->section))
			return fail_at(p, k->part[i].pos, "cannot add to table `%s` with a dotted key "
				       "here: it was made by %s at line %d", kb, origin_text(o), c->line);
		t = c;
	}
	*out = t;
	return 0;
}

static int header_define(struct parser *p, struct toml_value *t, struct key *k, size_t start)
{
	char kb[256];
	struct keypart *last = &k->part[k->n - 1];
	size_t idx;
	struct toml_value *c = find(t, last->name, &idx);
	key_show(k, k->n, kb, sizeof kb);
	if (!c) {
		c = add_table(p, t, last, O_HEADER);
	} else if (c->type != TOML_TABLE) {
		return fail_at(p, last->pos, "key `%s` is already %s %s (line %d), not a table", kb,
			       c->type == TOML_INT || c->type == TOML_ARRAY ? "an" : "a",
			       toml_type_name(c->type), t->key_line[idx]);
	} else if (origin_of(c) == O_IMPLICIT) {
		c->i = O_HEADER;
	} else {
		return fail_at(p, start, "table [%s] is defined twice (first by %s at line %d)", kb,
			       origin_text(origin_of(c)), c->line);
	}
	c->line = p->line;
	c->col = col_at(p, start);
	p->cur = c;
	p->cur_depth = k->n;
	return 0;
}

static int header(struct parser *p)
{
	char fb[8];
	size_t start = p->pos++;
	if (p->pos < p->len && p->s[p->pos] == '[')
		return fail_at(p, start, "arrays of tables ([[…]]) are not supported");
	skip_ws(p);
	struct key k;
	int rc = parse_key(p, &k);
	struct toml_value *t = NULL;
	if (rc == 0 && (p->pos >= p->len || p->s[p->pos] != ']'))
		rc = fail_at(p, p->pos, "expected `]` after the table name, found %s",
			     found(p, p->pos, fb));
	if (rc == 0) {
		p->pos++;
		p->section++;
		rc = walk(p, p->root, &k, true, &t);
	}
	if (rc == 0)
		rc = header_define(p, t, &k, start);
	key_free(&k);
	return rc < 0 ? -1 : end_of_line(p, "the table header");
}

static int keyval(struct parser *p)
{
	char fb[8], kb[256];
	struct key k;
	struct toml_value *t = NULL;
	size_t idx;
	int rc = parse_key(p, &k);
	if (rc == 0 && (p->pos >= p->len || p->s[p->pos] != '='))
		rc = fail_at(p, p->pos, "expected `=` after the key `%s`, found %s",
			     key_show(&k, k.n, kb, sizeof kb), found(p, p->pos, fb));
	if (rc == 0) {
		p->pos++;
		skip_ws(p);
		rc = walk(p, p->cur, &k, false, &t);
	}
	struct keypart *last = rc == 0 ? &k.part[k.n - 1] : NULL;
	if (rc == 0 && find(t, last->name, &idx))
		rc = fail_at(p, last->pos, "key `%s` is defined twice (first at line %d)",
			     key_show(&k, k.n, kb, sizeof kb), t->key_line[idx]);
	if (rc == 0)
		rc = value(p, add_key(p, t, last));
	key_free(&k);
	return rc < 0 ? -1 : end_of_line(p, "the value");
}

int toml_parse(const char *text, size_t len, const char *file, struct toml_value *out,
	       struct err *e)
{
	struct parser p = {.s = text, .len = len, .line = 1, .file = file, .e = e, .root = out};
	memset(out, 0, sizeof *out);
	out->type = TOML_TABLE;
	out->line = out->col = 1;
	out->i = O_ROOT;
	p.cur = out;
	if (prescan(&p) < 0) {
		toml_free(out);
		return -1;
	}
	while (p.pos < p.len) {
		skip_ws(&p);
		skip_comment(&p);
		int rc = 0;
		if (at_eol(&p))
			newline(&p);
		else if (p.s[p.pos] == '[')
			rc = header(&p);
		else
			rc = keyval(&p);
		if (rc < 0) {
			toml_free(out);
			return -1;
		}
	}
	clear_bookkeeping(out);
	return 0;
}
