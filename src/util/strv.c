#include "util/strv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static void grow(struct strv *s)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
}

void strv_push_take(struct strv *s, char *str)
{
	grow(s);
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void strv_push(struct strv *s, const char *str) { strv_push_take(s, xstrdup(str)); }

void strv_pushf(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strv_push_take(s, xvasprintf(fmt, ap));
	va_end(ap);
}

bool strv_contains(const struct strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], str) == 0)
			return true;
	return false;
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

void strv_copy(struct strv *dst, const struct strv *src)
{
	for (size_t i = 0; i < src->n; i++)
		strv_push(dst, src->v[i]);
}

char **strv_data(struct strv *s)
{
	if (!s->v) {
		grow(s);
		s->v[0] = NULL;
	}
	return s->v;
}

void strv_push_all(struct strv *dst, char *const *v)
{
	for (; v && *v; v++)
		strv_push(dst, *v);
}
