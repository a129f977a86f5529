/* secbuf: see secbuf.h. */
#include "util/secbuf.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void secbuf_reserve(struct secbuf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 512;
	while (cap < b->len + more)
		cap *= 2;
	uint8_t *q = xmalloc(cap);
	if (b->len)
		memcpy(q, b->p, b->len);
	if (b->p) {
		explicit_bzero(b->p, b->cap); /* no copy left behind */
		free(b->p);
	}
	b->p = q;
	b->cap = cap;
}

void secbuf_add(struct secbuf *b, const void *p, size_t n)
{
	if (!n)
		return;
	secbuf_reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void secbuf_consume(struct secbuf *b, size_t n)
{
	if (n > b->len)
		n = b->len;
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
	explicit_bzero(b->p + b->len, n);
}

void secbuf_wipe(struct secbuf *b)
{
	if (b->p) {
		explicit_bzero(b->p, b->cap);
		free(b->p);
	}
	memset(b, 0, sizeof *b);
}
