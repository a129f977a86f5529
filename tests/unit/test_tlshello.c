/* The proxy's ClientHello reader (doc/design.md §4): real hellos (openssl 1.3 and 1.2, curl,
 * python, in tests/fuzz/corpus/fuzz_tlshello), every prefix of each, each cut into records of
 * every size, and built ones an attacker would send: two names, a name with a NUL, a hello
 * larger than one record, one too large, records of the wrong type, SSLv2, not TLS at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/tlshello.h"

#include "tlsbuild.h"

/* Parse a copy of exactly n bytes (ASan sees a read past n). */
__attribute__((noinline)) static int parse_n(const uint8_t *p, size_t n, struct tls_hello *h)
{
	uint8_t *c = malloc(n ? n : 1);
	if (n)
		memcpy(c, p, n);
	int rc = tls_client_hello_sni(c, n, h);
	free(c);
	return rc;
}

/* A stream of one record holding a hello with these extensions. */
static struct bytes *stream_of(const struct bytes *exts)
{
	struct bytes *m = calloc(1, sizeof *m), *s = calloc(1, sizeof *s);
	hello_msg(m, exts);
	records(s, m->b, m->n, 16384);
	free(m);
	return s;
}

static int parse_exts(const struct bytes *exts, struct tls_hello *h)
{
	struct bytes *s = stream_of(exts);
	int rc = parse_n(s->b, s->n, h);
	free(s);
	return rc;
}

static void expect_bad_exts(const struct bytes *exts, const char *why)
{
	struct tls_hello h;
	int rc = parse_exts(exts, &h);
	if (rc != TLS_BAD || !h.why || !strstr(h.why, why))
		fail_msg("rc %d (%s), want TLS_BAD \"%s\"", rc, h.why ? h.why : "", why);
	assert_string_equal(h.sni, "");
}

/* Every proper prefix is NEED_MORE; the whole gives rc (and name when TLS_SNI). */
static void expect_stream(const uint8_t *s, size_t n, int rc, const char *name)
{
	struct tls_hello h;
	for (size_t i = 0; i < n; i++) {
		int r = parse_n(s, i, &h);
		if (r != TLS_NEED_MORE)
			fail_msg("prefix %zu of %zu: %d (%s)", i, n, r, h.why ? h.why : "");
	}
	int r = parse_n(s, n, &h);
	if (r != rc)
		fail_msg("%zu bytes: %d (%s), want %d", n, r, h.why ? h.why : "", rc);
	assert_string_equal(h.sni, name ? name : "");
}

static struct bytes *corpus(const char *name)
{
	const char *src = getenv("AJ_SRC");
	char path[4096];
	snprintf(path, sizeof path, "%s/tests/fuzz/corpus/fuzz_tlshello/%s", src ? src : ".", name);
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: cannot open (run from the source tree or set AJ_SRC)", path);
	struct bytes *b = calloc(1, sizeof *b);
	b->n = fread(b->b, 1, sizeof b->b, f);
	fclose(f);
	assert_true(b->n > 5);
	return b;
}

/* Real clients' hellos: whole, every prefix, and re-cut into records of 1 to 300 bytes (a
 * client may send its hello in pieces; a hostile one will). */
static void real_hellos(void **state)
{
	(void)state;
	static const struct {
		const char *file, *sni;
		uint16_t version;
	} cases[] = {
		{"openssl13_sni", "api.example.com", 0x0304},
		{"openssl12_sni", "api.example.com", 0x0303},
		{"openssl13_nosni", NULL, 0x0304},
		{"curl_sni", "api.example.com", 0x0304},
		{"python_sni", "api.example.com", 0x0304},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct bytes *s = corpus(cases[i].file);
		int want = cases[i].sni ? TLS_SNI : TLS_NO_SNI;
		expect_stream(s->b, s->n, want, cases[i].sni);
		struct tls_hello h;
		assert_int_equal(parse_n(s->b, s->n, &h), want);
		assert_int_equal(h.version, cases[i].version);
		assert_int_equal(h.used, s->n);
		assert_false(h.ech);
		assert_null(h.why);
		/* the handshake message alone, re-cut */
		size_t mlen = s->n - 5;
		struct bytes *r = calloc(1, sizeof *r);
		for (size_t chunk = 1; chunk <= 300; chunk++) {
			records(r, s->b + 5, mlen, chunk);
			if (parse_n(r->b, r->n, &h) != want)
				fail_msg("%s cut in records of %zu: %s", cases[i].file, chunk,
					 h.why ? h.why : "need more");
			assert_string_equal(h.sni, cases[i].sni ? cases[i].sni : "");
		}
		expect_stream(r->b, r->n, want, cases[i].sni); /* 300-byte records, every prefix */
		free(r);
		free(s);
	}
}

static void names_as_sent(void **state)
{
	(void)state;
	struct tls_hello h;
	const char *names[] = {"API.Example.COM", "api.example.com.", "xn--bcher-kva.example",
			       "a", "_dmarc.example", "1.2.3.4"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct bytes e = {.n = 0};
		ext_one(&e, names[i]);
		assert_int_equal(parse_exts(&e, &h), TLS_SNI);
		assert_string_equal(h.sni, names[i]);
	}
	char longest[256];
	memset(longest, 'a', 255);
	longest[255] = '\0';
	struct bytes e = {.n = 0};
	ext_one(&e, longest);
	assert_int_equal(parse_exts(&e, &h), TLS_SNI);
	assert_int_equal(strlen(h.sni), 255);

	/* versions: GREASE ignored; TLS 1.2 without supported_versions */
	e.n = 0;
	ext_one(&e, "x.example");
	ext_versions(&e);
	assert_int_equal(parse_exts(&e, &h), TLS_SNI);
	assert_int_equal(h.version, 0x0304);
	/* no extensions at all, or none naming a server */
	assert_int_equal(parse_exts(NULL, &h), TLS_NO_SNI);
	assert_int_equal(h.version, 0x0303);
	e.n = 0;
	ext_versions(&e);
	assert_int_equal(parse_exts(&e, &h), TLS_NO_SNI);
	assert_string_equal(h.sni, "");
}

/* ECH: the outer name is returned, the flag says an inner one exists; 0-RTT is flagged. */
static void ech_and_early_data(void **state)
{
	(void)state;
	struct tls_hello h;
	struct bytes e = {.n = 0};
	ext_one(&e, "public.example");
	ext_empty(&e, 0xfe0d, 40);
	ext_empty(&e, 42, 0);
	assert_int_equal(parse_exts(&e, &h), TLS_SNI);
	assert_string_equal(h.sni, "public.example");
	assert_true(h.ech);
	assert_true(h.early_data);
	e.n = 0;
	ext_empty(&e, 0xfe0d, 40);
	assert_int_equal(parse_exts(&e, &h), TLS_NO_SNI);
	assert_true(h.ech);
}

/* Whatever could make a server read a name other than the one returned is refused. */
static void ambiguous_names(void **state)
{
	(void)state;
	struct bytes e = {.n = 0};
	const char *two[] = {"allowed.example", "evil.example"};
	ext_sni(&e, two, NULL, 2);
	expect_bad_exts(&e, "more than one server name");
	e.n = 0;
	ext_one(&e, "allowed.example");
	ext_one(&e, "evil.example");
	expect_bad_exts(&e, "two server_name extensions");
	e.n = 0;
	static const uint8_t other[] = {1};
	const char *one[] = {"allowed.example"};
	ext_sni(&e, one, other, 1);
	expect_bad_exts(&e, "other than host_name");
	const char *bad_bytes[] = {"allowed.example\x01", "a b", "caf\xc3\xa9.example", "x\x7f"};
	for (size_t i = 0; i < sizeof bad_bytes / sizeof bad_bytes[0]; i++) {
		e.n = 0;
		ext_one(&e, bad_bytes[i]);
		expect_bad_exts(&e, "not printable ASCII");
	}
	/* a NUL inside: "allowed.example\0.evil.example" */
	static const char nul[] = "allowed.example\0.evil.example";
	e.n = 0;
	put_n(&e, 0, 2);
	put_n(&e, sizeof nul - 1 + 5, 2);
	put_n(&e, sizeof nul - 1 + 3, 2);
	put_n(&e, 0, 1);
	put_n(&e, sizeof nul - 1, 2);
	put(&e, nul, sizeof nul - 1);
	expect_bad_exts(&e, "not printable ASCII");
	/* the list's length, the name's length */
	static const uint8_t lens[][12] = {
		{0, 0, 0, 8, 0, 5, 0, 0, 2, 'a', 'b', 0},  /* list 5, one entry of 5 */
		{0, 0, 0, 8, 0, 6, 0, 0, 3, 'a', 'b', 0},  /* name claims 3, list has 2 */
		{0, 0, 0, 5, 0, 3, 0, 0, 0, 0, 0, 0},      /* empty name */
		{0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0},      /* empty list */
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},      /* empty extension */
	};
	const size_t lens_n[] = {10, 10, 9, 6, 4};
	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		e.n = 0;
		put(&e, lens[i], lens_n[i]);
		struct tls_hello h;
		if (parse_exts(&e, &h) != TLS_BAD)
			fail_msg("server_name case %zu: not refused", i);
	}
	e.n = 0;
	ext_one(&e, "x.example");
	ext_empty(&e, 13, 4);
	ext_empty(&e, 13, 4);
	expect_bad_exts(&e, "an extension sent twice");
}

/* The hello's own structure */
static void malformed(void **state)
{
	(void)state;
	struct bytes e = {.n = 0};
	ext_one(&e, "x.example");
	struct bytes *s = stream_of(&e);
	struct tls_hello h;
	size_t ext_at = s->n - e.n - 2;

	/* trailing bytes after the extensions (the message and record lengths grown to match) */
	struct bytes *t = calloc(1, sizeof *t);
	*t = *s;
	put_n(t, 0, 1);
	t->b[4]++, t->b[8]++;
	assert_int_equal(parse_n(t->b, t->n, &h), TLS_BAD);
	assert_non_null(strstr(h.why, "extensions' length"));
	/* an extension longer than what is left */
	*t = *s;
	t->b[ext_at + 5] = 0xff;
	assert_int_equal(parse_n(t->b, t->n, &h), TLS_BAD);
	/* version 2.0, a session id of 33, odd cipher suites, no compression methods */
	*t = *s;
	t->b[9] = 2;
	assert_int_equal(parse_n(t->b, t->n, &h), TLS_BAD);
	*t = *s;
	t->b[5 + 4 + 34] = 33;
	assert_int_equal(parse_n(t->b, t->n, &h), TLS_BAD);
	*t = *s;
	t->b[5 + 4 + 35 + 32 + 1] = 3;
	assert_int_equal(parse_n(t->b, t->n, &h), TLS_BAD);
	/* a message length shorter than its body: the extensions run past it */
	*t = *s;
	t->b[8] -= 3;
	assert_int_equal(parse_n(t->b, t->n, &h), TLS_BAD);

	/* record and message headers: refused as soon as the byte arrives */
	static const struct {
		uint8_t b[10];
		size_t n;
		int rc;
		const char *why;
	} heads[] = {
		{{22, 3, 1, 0, 0}, 5, TLS_BAD, "empty handshake record"},
		{{22, 3, 1, 0x40, 1}, 5, TLS_BAD, "a record over 16 KiB"},
		{{22, 3, 1, 0, 10, 2}, 6, TLS_BAD, "not a ClientHello"},
		{{22, 3, 1, 0, 10, 1, 0, 0, 5}, 9, TLS_BAD, "too short"},
		{{22, 2}, 2, TLS_NOT_TLS, "not a TLS"},
		{{22, 3, 9}, 3, TLS_NOT_TLS, "not a TLS"},
		{"GET / HT", 8, TLS_NOT_TLS, "not a TLS"},
		{"SSH-2.0-", 8, TLS_NOT_TLS, "not a TLS"},
		{{0x80, 0x2e, 1, 3, 1}, 3, TLS_BAD, "SSLv2"},
		{{0x80, 0x2e, 4}, 3, TLS_NOT_TLS, "not a TLS"},
	};
	for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
		int rc = parse_n(heads[i].b, heads[i].n, &h);
		if (rc != heads[i].rc || !strstr(h.why, heads[i].why))
			fail_msg("head %zu: %d (%s), want %d %s", i, rc, h.why ? h.why : "",
				 heads[i].rc, heads[i].why);
	}
	assert_int_equal(parse_n((const uint8_t *)"\x80", 1, &h), TLS_NEED_MORE);
	assert_int_equal(parse_n(NULL, 0, &h), TLS_NEED_MORE);

	/* another record type after the first, inside the hello: a ChangeCipherSpec */
	struct bytes *m = calloc(1, sizeof *m);
	hello_msg(m, &e);
	records(t, m->b, m->n, 50);
	t->b[55] = 20;
	assert_int_equal(parse_n(t->b, t->n, &h), TLS_BAD);
	assert_non_null(strstr(h.why, "other than handshake"));
	free(m);
	free(t);
	free(s);
}

/* Sizes: a hello over one record is read across two; one over the cap is refused as soon as
 * its length is known; a record that claims 16 KiB but stops is waited for (the proxy bounds
 * the wait); a hello complete inside a partial record is decided at once. */
static void sizes(void **state)
{
	(void)state;
	struct tls_hello h;
	struct bytes *e = calloc(1, sizeof *e), *m = calloc(1, sizeof *m), *s = calloc(1, sizeof *s);
	ext_one(e, "big.example");
	ext_empty(e, 21, 20000); /* padding */
	hello_msg(m, e);
	records(s, m->b, m->n, 16384);
	assert_true(s->n > 16384 + 5);
	assert_int_equal(parse_n(s->b, s->n, &h), TLS_SNI);
	assert_string_equal(h.sni, "big.example");
	assert_int_equal(h.used, s->n);
	assert_int_equal(parse_n(s->b, s->n - 1, &h), TLS_NEED_MORE);
	assert_int_equal(parse_n(s->b, 16384 + 5, &h), TLS_NEED_MORE);

	/* 32 KiB of padding: refused with only the first 9 bytes read */
	e->n = 0;
	ext_one(e, "big.example");
	ext_empty(e, 21, 32768);
	hello_msg(m, e);
	records(s, m->b, m->n, 16384);
	assert_int_equal(parse_n(s->b, 9, &h), TLS_BAD);
	assert_non_null(strstr(h.why, "longer than 32768"));
	/* the same bound when tiny records would carry a small hello past it */
	e->n = 0;
	ext_one(e, "x.example");
	ext_empty(e, 21, 6000);
	hello_msg(m, e);
	records(s, m->b, m->n, 1);
	assert_int_equal(parse_n(s->b, s->n, &h), TLS_BAD);
	assert_non_null(strstr(h.why, "longer than 32768"));
	records(s, m->b, m->n, 4);
	assert_int_equal(parse_n(s->b, s->n, &h), TLS_SNI);

	/* one record that claims 16 KiB and holds the whole hello in its first bytes */
	e->n = 0;
	ext_one(e, "x.example");
	hello_msg(m, e);
	records(s, m->b, m->n, 16384);
	s->b[3] = 0x40, s->b[4] = 0;
	assert_int_equal(parse_n(s->b, s->n - 1, &h), TLS_NEED_MORE);
	assert_int_equal(parse_n(s->b, s->n, &h), TLS_SNI);
	assert_string_equal(h.sni, "x.example");
	assert_int_equal(h.used, s->n);
	free(e);
	free(m);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_hellos),     cmocka_unit_test(names_as_sent),
		cmocka_unit_test(ech_and_early_data), cmocka_unit_test(ambiguous_names),
		cmocka_unit_test(malformed),       cmocka_unit_test(sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
