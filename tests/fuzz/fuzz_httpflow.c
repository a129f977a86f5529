/* Fuzz target: the requests inside an inspected tunnel (core/net/httpflow, doc/design.md §4d).
 * The jail writes these bytes. The first byte picks the host (a secret's, one with request
 * rules, another), TLS or not and the size of the pieces fed; the rest is the stream.
 * Invariants: no read past what was fed; fed whole or in pieces, the same verdict and the same
 * bytes out; the secret's value appears in the output as many times as the flow says it put it
 * there (plus those the input itself held), and is put only over TLS to the secret's host; with
 * no placeholder put in, what goes upstream is a prefix of what came in but for CR and LF bytes
 * left out (nothing is invented); a refusal has a code, a one-line printable reason, and never
 * the value. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/httpflow.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define VALUE "sk-FUZZ-REAL-VALUE-77"

static struct inspect in;
static bool ready;

static void setup(void)
{
	if (ready)
		return;
	ready = true;
	struct secret_set ss = {0};
	struct secret_def d;
	struct err e = {0};
	struct strv h = STRV_INIT;
	strv_push(&h, "api.anthropic.com");
	FUZZ_CHECK(secret_def_make("K", &h, "x-api-key", NULL, NULL, NULL, &d, &e) == 0);
	secret_set_put(&ss, &d);
	secret_def_free(&d);
	struct strv rules = STRV_INIT;
	strv_push(&rules, "GET github.com/*");
	strv_push(&rules, "POST github.com/repos/*");
	FUZZ_CHECK(inspect_build(&rules, &ss, &in, &e) == 0);
	strv_free(&rules);
	strv_free(&h);
	secret_set_free(&ss);
}

static size_t count(const uint8_t *p, size_t n, const char *lit)
{
	size_t k = strlen(lit), c = 0;
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(p + i, lit, k))
			c++;
	return c;
}

/* Whether out is a prefix of in with some CR and LF bytes of in left out (the empty lines
 * before a request line are not sent on): nothing invented, nothing else dropped. */
static bool only_crlf_left_out(const uint8_t *out, size_t on, const uint8_t *src, size_t n)
{
	size_t j = 0;
	for (size_t i = 0; i < on; i++, j++) {
		while (j < n && src[j] != out[i] && (src[j] == '\r' || src[j] == '\n'))
			j++;
		if (j >= n || src[j] != out[i])
			return false;
	}
	return true;
}

/* Feed in pieces of `step` (0: whole); the verdict, the output, the refusal, the count put in. */
static int run(const struct hflow_ctx *c, const uint8_t *d, size_t n, size_t step,
	       struct secbuf *out, struct hflow_refusal *r, unsigned *injected)
{
	struct hflow *f = malloc(sizeof *f);
	FUZZ_CHECK(f);
	hflow_init(f);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0;) {
		size_t k = step && n - i > step ? step : n - i;
		uint8_t *piece = fuzz_dup(d + i, k);
		rc = hflow_feed(f, c, piece, k, out, r);
		free(piece);
		i += k;
	}
	*injected = f->injected;
	hflow_clear(f);
	free(f);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	if (!size)
		return 0;
	static const char *const hosts[] = {"api.anthropic.com", "github.com", "example.org"};
	const char *vals[] = {VALUE};
	const size_t vlen[] = {sizeof VALUE - 1};
	struct hflow_ctx c = {.in = &in, .host = hosts[data[0] % 3], .tls = data[0] & 4,
			      .values = vals, .vlen = vlen};
	c.port = c.tls ? 443 : 80;
	size_t step = (data[0] >> 3) % 7;
	const uint8_t *d = data + 1;
	size_t n = size - 1;
	struct secbuf a = {0}, b = {0};
	struct hflow_refusal ra, rb;
	unsigned ia = 0, ib = 0;
	int rca = run(&c, d, n, 0, &a, &ra, &ia);
	int rcb = run(&c, d, n, step + 1, &b, &rb, &ib);
	FUZZ_CHECK(rca == rcb && ia == ib && a.len == b.len && (!a.len || !memcmp(a.p, b.p, a.len)));
	size_t in_out = count(a.p, a.len, VALUE), in_in = count(d, n, VALUE);
	FUZZ_CHECK(in_out >= ia && in_out <= ia + in_in); /* a head still held has not gone yet */
	if (ia)
		FUZZ_CHECK(c.tls && c.host == hosts[0]);
	if (!ia && !count(d, n, VALUE)) /* nothing put in: the input, CR and LF bytes left out */
		FUZZ_CHECK(only_crlf_left_out(a.p, a.len, d, n));
	if (rca < 0) {
		FUZZ_CHECK(ra.code == 400 || ra.code == 403 || ra.code == 431);
		/* the value, unless the jail sent those bytes itself (a Host, a path it chose) */
		FUZZ_CHECK(ra.reason[0] && (!strstr(ra.reason, VALUE) || in_in));
		for (const char *p = ra.reason; *p; p++)
			FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	}
	secbuf_wipe(&a);
	secbuf_wipe(&b);
	return 0;
}
