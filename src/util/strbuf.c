#include "util/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static void reserve(struct strbuf *b, size_t extra)
{
	if (b->len + extra + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + extra + 1)
			cap *= 2;
		b->s = xrealloc(b->s, cap);
		b->cap = cap;
	}
}

void sb_addn(struct strbuf *b, const char *s, size_t n)
{
	reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void sb_add(struct strbuf *b, const char *s) { sb_addn(b, s, strlen(s)); }
void sb_addc(struct strbuf *b, char c) { sb_addn(b, &c, 1); }

void sb_addf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	reserve(b, (size_t)n);
	va_start(ap, fmt);
	int m = vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	if (m != n)
		abort();
	b->len += (size_t)n;
}

void sb_add_shquoted(struct strbuf *b, const char *s)
{
	int safe = *s != '\0';
	for (const char *p = s; *p; p++) {
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%^", *p)) {
			safe = 0;
			break;
		}
	}
	if (safe) {
		sb_add(b, s);
		return;
	}
	sb_addc(b, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			sb_add(b, "'\\''");
		else
			sb_addc(b, *p);
	}
	sb_addc(b, '\'');
}

const char *sb_str(struct strbuf *b) { return b->s ? b->s : ""; }

char *sb_steal(struct strbuf *b)
{
	char *s = b->s ? b->s : xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void sb_free(struct strbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}
