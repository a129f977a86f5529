#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void oom(void)
{
	static const char msg[] = "agentjail: out of memory\n";
	ssize_t r = write(2, msg, sizeof msg - 1);
	(void)r;
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		oom();
	return p;
}

char *xstrcat3(const char *a, const char *b, const char *c)
{
	size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
	char *p = xmalloc(na + nb + nc + 1);
	memcpy(p, a, na);
	memcpy(p + na, b, nb);
	memcpy(p + na + nb, c, nc + 1);
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *out = NULL;
	if (vasprintf(&out, fmt, ap) < 0)
		oom();
	return out;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *out = xvasprintf(fmt, ap);
	va_end(ap);
	return out;
}
