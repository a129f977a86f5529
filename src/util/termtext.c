/* termtext: text for a terminal (see termtext.h). */
#include "util/termtext.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/strbuf.h"

/* ---- UTF-8 ---- */

/* Decode one code point at p: its length (1-4), or 0 when the bytes there are not UTF-8
 * (truncated, overlong, a surrogate, beyond U+10FFFF). */
static size_t utf8_dec(const unsigned char *p, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2, c = p[0] & 0x1f, min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3, c = p[0] & 0x0f, min = 0x800;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4, c = p[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

struct range {
	uint32_t lo, hi;
};

static bool in(uint32_t c, const struct range *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (c >= r[i].lo && c <= r[i].hi)
			return true;
	return false;
}

/* Shown as '?': controls, and the marks that reorder what follows them on screen. */
static const struct range unsafe[] = {
	{0x00, 0x1f},	  {0x7f, 0x9f},	    {0x061c, 0x061c},
	{0x200e, 0x200f}, {0x202a, 0x202e}, {0x2066, 0x2069},
};
/* Combining marks, zero-width characters, variation selectors. */
static const struct range zero[] = {
	{0x0300, 0x036f}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff},
	{0x200b, 0x200d}, {0x20d0, 0x20ff}, {0xfe00, 0xfe0f},
	{0xfe20, 0xfe2f},
};
/* East Asian wide and fullwidth blocks, and the common emoji blocks. */
static const struct range wide[] = {
	{0x1100, 0x115f},   {0x2e80, 0x303e},	{0x3041, 0x33ff},   {0x3400, 0x4dbf},
	{0x4e00, 0x9fff},   {0xa000, 0xa4cf},	{0xac00, 0xd7a3},   {0xf900, 0xfaff},
	{0xfe30, 0xfe4f},   {0xff00, 0xff60},	{0xffe0, 0xffe6},   {0x1f300, 0x1f64f},
	{0x1f900, 0x1f9ff}, {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
};
#define N(a) (sizeof(a) / sizeof *(a))

/* The next character of s: its bytes (len), its columns (w), and whether it is shown as '?'. */
static void next_char(const char *s, size_t *len, size_t *w, bool *bad)
{
	uint32_t c = 0;
	*len = utf8_dec((const unsigned char *)s, &c);
	*bad = *len == 0 || in(c, unsafe, N(unsafe));
	if (*len == 0)
		*len = 1;
	*w = *bad ? 1 : in(c, zero, N(zero)) ? 0 : in(c, wide, N(wide)) ? 2 : 1;
}

size_t fmt_width(const char *s)
{
	size_t total = 0, len, w;
	bool bad;
	for (; s && *s; s += len) {
		next_char(s, &len, &w, &bad);
		total += w;
	}
	return total;
}

/* Append s cleaned, stopping before the character that would take it past `width` columns
 * (SIZE_MAX: all of it). Returns the columns appended. */
static size_t add_clean(struct strbuf *b, const char *s, size_t width)
{
	size_t used = 0, len, w;
	bool bad;
	for (; s && *s; s += len) {
		next_char(s, &len, &w, &bad);
		if (used + w > width)
			break;
		if (bad)
			sb_addc(b, '?');
		else
			sb_addn(b, s, len);
		used += w;
	}
	return used;
}

bool fmt_has_marks(const char *s)
{
	size_t len, w;
	bool bad;
	for (; s && *s; s += len) {
		next_char(s, &len, &w, &bad);
		uint32_t c;
		if (bad && utf8_dec((const unsigned char *)s, &c) != 0)
			return true;
	}
	return false;
}

char *fmt_clean(const char *s)
{
	struct strbuf b = STRBUF_INIT;
	add_clean(&b, s, SIZE_MAX);
	return sb_steal(&b);
}

char *fmt_cut(const char *s, size_t width)
{
	struct strbuf b = STRBUF_INIT;
	if (fmt_width(s) <= width) {
		add_clean(&b, s, SIZE_MAX);
	} else if (width > 0) {
		add_clean(&b, s, width - 1);
		sb_add(&b, "…");
	}
	return sb_steal(&b);
}

char *fmt_wrap(const char *s, size_t width, size_t indent)
{
	char *c = fmt_clean(s);
	size_t room = width > indent ? width - indent : SIZE_MAX;
	struct strbuf b = STRBUF_INIT;
	const char *line = c;
	while (*line == ' ')
		line++;
	while (*line) {
		size_t used = 0, len, w;
		bool bad;
		const char *p = line, *space = NULL;
		while (*p) {
			next_char(p, &len, &w, &bad);
			if (used + w > room && p > line)
				break;
			if (*p == ' ')
				space = p;
			used += w;
			p += len;
		}
		const char *end = p, *next = p;
		if (*p && space && space > line) {
			end = space;
			next = space + 1;
		}
		while (end > line && end[-1] == ' ')
			end--;
		if (b.len)
			sb_addc(&b, '\n');
		for (size_t i = 0; i < indent; i++)
			sb_addc(&b, ' ');
		sb_addn(&b, line, (size_t)(end - line));
		line = next;
		while (*line == ' ')
			line++;
	}
	free(c);
	return sb_steal(&b);
}
