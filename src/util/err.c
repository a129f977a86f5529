#include "util/err.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 0))) static void vset(char *dst, size_t len, const char *fmt,
						 va_list ap)
{
	int n = vsnprintf(dst, len, fmt, ap);
	if (n < 0)
		dst[0] = '\0';
}

int err_set(struct err *e, int errnum, const char *path, const char *fmt, ...)
{
	if (!e)
		return -1;
	e->errnum = errnum;
	va_list ap;
	va_start(ap, fmt);
	vset(e->what, sizeof e->what, fmt, ap);
	va_end(ap);
	snprintf(e->path, sizeof e->path, "%s", path ? path : "");
	e->hint[0] = '\0';
	return -1;
}

void err_hint(struct err *e, const char *fmt, ...)
{
	if (!e)
		return;
	va_list ap;
	va_start(ap, fmt);
	vset(e->hint, sizeof e->hint, fmt, ap);
	va_end(ap);
}

void err_wrap(struct err *e, const char *fmt, ...)
{
	if (!e)
		return;
	char ctx[sizeof e->what];
	va_list ap;
	va_start(ap, fmt);
	vset(ctx, sizeof ctx, fmt, ap);
	va_end(ap);
	char both[2 * sizeof e->what + 2];
	snprintf(both, sizeof both, "%s: %s", ctx, e->what[0] ? e->what : "unknown error");
	snprintf(e->what, sizeof e->what, "%.*s", (int)sizeof e->what - 1, both);
}

void err_clear(struct err *e)
{
	if (e)
		memset(e, 0, sizeof *e);
}

/* Does `s` name `word` already, as a word of its own (not inside a longer path or option) and
 * outside parentheses (an example there is not the input)? */
static bool names(const char *s, const char *word)
{
	size_t n = strlen(word);
	int depth = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && depth)
			depth--;
		else if (!depth && !strncmp(p, word, n) &&
			 (p == s || strchr(" \t`'\"", p[-1])) && (!p[n] || strchr(" \t:;,)`'\"", p[n])))
			return true;
	}
	return false;
}

/* The message said once: the path unless the message names it already, and the hint in
 * parentheses only when that nests none (else after "; "). */
void err_format(const struct err *e, char *buf, size_t len)
{
	size_t off = 0;
	int n;
#define APPEND(...)                                                   \
	do {                                                          \
		n = snprintf(buf + off, len - off, __VA_ARGS__);      \
		if (n < 0 || (size_t)n >= len - off) {                \
			return;                                       \
		}                                                     \
		off += (size_t)n;                                     \
	} while (0)
	if (!len)
		return;
	buf[0] = '\0';
	const char *what = e->what[0] ? e->what : "unknown error";
	APPEND("%s", what);
	if (e->path[0] && !names(what, e->path))
		APPEND(": %s", e->path);
	if (e->errnum)
		APPEND(": %s", strerror(e->errnum));
	if (e->hint[0] && (strpbrk(e->hint, "()") || strchr(buf, '(') || strchr(buf, ')')))
		APPEND("; %s", e->hint);
	else if (e->hint[0])
		APPEND(" (%s)", e->hint);
#undef APPEND
}
