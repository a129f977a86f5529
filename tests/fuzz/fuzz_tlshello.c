/* Fuzz target: the proxy's ClientHello reader (doc/design.md §4). The input is a client's
 * stream. Invariants: no read past len; the answer is one of the five; a name is 1..255 bytes
 * of printable ASCII without a space; a refusal says why; a decided hello is NEED_MORE at
 * every shorter prefix (sampled) and gives the same answer when its handshake bytes are cut
 * into records of another size (the input's last byte picks it) — so splitting a hello cannot
 * change what the proxy reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/tlshello.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int parse_copy(const uint8_t *d, size_t n, struct tls_hello *h)
{
	uint8_t *p = fuzz_dup(d, n);
	int rc = tls_client_hello_sni(p, n, h);
	free(p);
	return rc;
}

/* The handshake bytes of the records in d[0, n) (a partial last one as far as it goes), cut
 * again into records of chunk bytes. The new stream's length; 0 when the hello would end past
 * TLS_HELLO_READ_MAX in it (then the answer is rightly another). */
static size_t recut(const uint8_t *d, size_t n, size_t chunk, uint8_t *out, size_t cap)
{
	static uint8_t hs[1 << 17];
	size_t m = 0;
	for (size_t at = 0; at + 5 <= n;) {
		size_t rl = (size_t)d[at + 3] << 8 | d[at + 4];
		size_t l = n - at - 5 < rl ? n - at - 5 : rl;
		memcpy(hs + m, d + at + 5, l);
		m += l;
		at += 5 + rl;
	}
	size_t need = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
	if (need + 5 * ((need + chunk - 1) / chunk) > TLS_HELLO_READ_MAX)
		return 0;
	size_t o = 0;
	for (size_t at = 0; at < m; at += chunk) {
		size_t l = m - at < chunk ? m - at : chunk;
		if (o + 5 + l > cap)
			return 0;
		memcpy(out + o, (const uint8_t[]){22, 3, 1, (uint8_t)(l >> 8), (uint8_t)l}, 5);
		memcpy(out + o + 5, hs + at, l);
		o += 5 + l;
	}
	return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tls_hello h;
	int rc = parse_copy(data, size, &h);
	FUZZ_CHECK(rc == TLS_NEED_MORE || rc == TLS_SNI || rc == TLS_NO_SNI || rc == TLS_BAD ||
		   rc == TLS_NOT_TLS);
	size_t l = strnlen(h.sni, sizeof h.sni);
	FUZZ_CHECK(l < sizeof h.sni);
	FUZZ_CHECK((rc == TLS_SNI) == (l > 0));
	for (size_t i = 0; i < l; i++)
		FUZZ_CHECK(h.sni[i] > 0x20 && h.sni[i] < 0x7f);
	FUZZ_CHECK((rc < 0) == (h.why != NULL));
	if (rc == TLS_NOT_TLS)
		FUZZ_CHECK(size > 0 && (data[0] != 22 || size < 2 || data[1] != 3 || data[2] > 4));
	if (rc != TLS_SNI && rc != TLS_NO_SNI)
		return 0;
	FUZZ_CHECK(size >= 5 + 4 + 41 && data[0] == 22 && data[5] == 1 && h.version >> 8 == 3);
	FUZZ_CHECK(h.used >= 5 + 4 + 41 && h.used <= size && h.used <= TLS_HELLO_READ_MAX);
	/* the hello's prefixes: all of them for a short one, else 64 spread over it; the hello
	 * alone gives the same answer */
	size_t step = h.used <= 2048 ? 1 : h.used / 64;
	for (size_t i = 0; i < h.used; i += step) {
		struct tls_hello p;
		FUZZ_CHECK(parse_copy(data, i, &p) == TLS_NEED_MORE);
	}
	struct tls_hello w;
	FUZZ_CHECK(parse_copy(data, h.used, &w) == rc && strcmp(w.sni, h.sni) == 0);
	static uint8_t again[TLS_HELLO_READ_MAX];
	size_t chunk = 1 + (size_t)data[size - 1] * 64 % 16384;
	size_t n = recut(data, size, chunk, again, sizeof again);
	if (n) {
		struct tls_hello r;
		FUZZ_CHECK(parse_copy(again, n, &r) == rc);
		FUZZ_CHECK(strcmp(r.sni, h.sni) == 0 && r.ech == h.ech && r.version == h.version);
	}
	return 0;
}
