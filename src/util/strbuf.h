/* strbuf: a growable string. */
#pragma once
#include <stddef.h>

struct strbuf {
	char *s;
	size_t len;
	size_t cap;
};

#define STRBUF_INIT {0}

void sb_add(struct strbuf *b, const char *s);
void sb_addn(struct strbuf *b, const char *s, size_t n);
void sb_addc(struct strbuf *b, char c);
void sb_addf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s quoted for a POSIX shell (bare when safe, else single quotes). */
void sb_add_shquoted(struct strbuf *b, const char *s);
const char *sb_str(struct strbuf *b); /* never NULL */
char *sb_steal(struct strbuf *b);
void sb_free(struct strbuf *b);
