/* xalloc: allocation that aborts on exhaustion (a CLI cannot do anything useful without memory). */
#pragma once
#include <stddef.h>
#include <stdarg.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* New string a + b + c (no format: the plan joins thousands of paths, and vasprintf was its
 * top cost after strcmp). */
char *xstrcat3(const char *a, const char *b, const char *c);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
