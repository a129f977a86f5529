/* secbuf: a growable byte buffer that wipes what it held (a request with a secret's value in
 * it, a message carrying values: doc/design.md §4d). When it grows, the old block is zeroed
 * before it is freed; secbuf_consume zeroes what it drops; secbuf_wipe zeroes all of it. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct secbuf {
	uint8_t *p;
	size_t len, cap;
};
void secbuf_reserve(struct secbuf *b, size_t more); /* room for `more` bytes after len */
void secbuf_add(struct secbuf *b, const void *p, size_t n);
void secbuf_consume(struct secbuf *b, size_t n); /* drop the first n bytes */
void secbuf_wipe(struct secbuf *b);              /* zero, free, empty */
