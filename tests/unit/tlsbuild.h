/* Building TLS ClientHellos for the unit tests (test_tlshello, test_proxy): extensions, the
 * handshake message, records of any size. Include after <cmocka.h>. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BIG 80000

struct bytes {
	uint8_t b[BIG];
	size_t n;
};

static inline void put(struct bytes *o, const void *p, size_t n)
{
	assert_true(o->n + n <= sizeof o->b);
	memcpy(o->b + o->n, p, n);
	o->n += n;
}
static inline void put_n(struct bytes *o, size_t v, size_t width)
{
	for (size_t i = width; i-- > 0;) {
		uint8_t c = (uint8_t)(v >> (8 * i));
		put(o, &c, 1);
	}
}

/* A server_name extension (type 0) with the given entries: {type, name} pairs. */
static inline void ext_sni(struct bytes *o, const char *const *names, const uint8_t *types, size_t k)
{
	size_t list = 0;
	for (size_t i = 0; i < k; i++)
		list += 3 + strlen(names[i]);
	put_n(o, 0, 2);
	put_n(o, list + 2, 2);
	put_n(o, list, 2);
	for (size_t i = 0; i < k; i++) {
		put_n(o, types ? types[i] : 0, 1);
		put_n(o, strlen(names[i]), 2);
		put(o, names[i], strlen(names[i]));
	}
}
static inline void ext_one(struct bytes *o, const char *name) { ext_sni(o, &name, NULL, 1); }
static inline void ext_empty(struct bytes *o, unsigned type, size_t len)
{
	put_n(o, type, 2);
	put_n(o, len, 2);
	for (size_t i = 0; i < len; i++)
		put_n(o, 0, 1);
}
/* supported_versions offering GREASE 0x7a7a, TLS 1.3 and 1.2 */
static inline void ext_versions(struct bytes *o)
{
	static const uint8_t v[] = {0, 43, 0, 7, 6, 0x7a, 0x7a, 3, 4, 3, 3};
	put(o, v, sizeof v);
}

/* A ClientHello handshake message (header included) with these extensions (NULL: none). */
static inline void hello_msg(struct bytes *m, const struct bytes *exts)
{
	struct bytes *body = calloc(1, sizeof *body);
	put_n(body, 0x0303, 2);
	for (int i = 0; i < 32; i++)
		put_n(body, (size_t)i, 1);
	put_n(body, 32, 1);
	for (int i = 0; i < 32; i++)
		put_n(body, 0xa0, 1);
	put_n(body, 4, 2);
	put_n(body, 0x1301, 2);
	put_n(body, 0xc02f, 2);
	put_n(body, 1, 1);
	put_n(body, 0, 1);
	if (exts) {
		put_n(body, exts->n, 2);
		put(body, exts->b, exts->n);
	}
	m->n = 0;
	put_n(m, 1, 1);
	put_n(m, body->n, 3);
	put(m, body->b, body->n);
	free(body);
}

/* The message cut into handshake records of at most chunk bytes. */
static inline void records(struct bytes *s, const uint8_t *msg, size_t n, size_t chunk)
{
	s->n = 0;
	for (size_t at = 0; at < n; at += chunk) {
		size_t l = n - at < chunk ? n - at : chunk;
		put_n(s, 22, 1);
		put_n(s, 0x0301, 2);
		put_n(s, l, 2);
		put(s, msg + at, l);
	}
}

