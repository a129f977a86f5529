/* Tests for core/net/httpflow: requests inside an inspected tunnel (doc/design.md §4d) — heads
 * judged one after another, a secret's value put in place of its placeholder only in its
 * header on its host over TLS, exfiltration refused, request rules, body framing (so no request
 * hides in a body), fed whole or a byte at a time. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/httpflow.h"
#include "util/base64.h"

#define KEY "sk-ant-REAL-value-0123"
#define PH "agentjail-placeholder-ANTHROPIC_API_KEY"

static struct inspect in;
static const char *const vals[] = {KEY, "ghp_REALTOKEN"};
static const size_t vlens[] = {sizeof KEY - 1, sizeof "ghp_REALTOKEN" - 1};

static int setup(void **state)
{
	(void)state;
	struct secret_set ss = {0};
	struct secret_def d;
	struct err e = {0};
	struct strv h1 = STRV_INIT, h2 = STRV_INIT;
	strv_push(&h1, "api.anthropic.com");
	strv_push(&h2, "github.com");
	assert_int_equal(secret_def_make("ANTHROPIC_API_KEY", &h1, "x-api-key", NULL, NULL, NULL,
					 &d, &e), 0);
	secret_set_put(&ss, &d);
	secret_def_free(&d);
	assert_int_equal(secret_def_make("GH_TOKEN", &h2, "Authorization", NULL, NULL, NULL, &d,
					 &e), 0);
	secret_set_put(&ss, &d);
	secret_def_free(&d);
	struct strv rules = STRV_INIT;
	strv_push(&rules, "GET github.com/*");
	strv_push(&rules, "POST github.com/repos/*/git/*");
	assert_int_equal(inspect_build(&rules, &ss, &in, &e), 0);
	strv_free(&rules);
	strv_free(&h1);
	strv_free(&h2);
	secret_set_free(&ss);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	inspect_free(&in);
	return 0;
}

static struct hflow_ctx ctx(const char *host, bool tls)
{
	return (struct hflow_ctx){.in = &in, .host = host, .port = tls ? 443 : 80, .tls = tls,
				  .values = vals, .vlen = vlens};
}

/* Feed all of s, whole (step 0) or in pieces of `step` bytes; the output as a string. */
static int feed(const struct hflow_ctx *c, const char *s, size_t step, char **out,
		struct hflow_refusal *r)
{
	struct hflow *f = malloc(sizeof *f);
	hflow_init(f);
	struct secbuf b = {0};
	size_t n = strlen(s), i = 0;
	int rc = 0;
	while (i < n && rc == 0) {
		size_t k = step && n - i > step ? step : n - i;
		rc = hflow_feed(f, c, (const uint8_t *)s + i, k, &b, r);
		i += k;
	}
	*out = calloc(1, b.len + 1);
	if (b.len)
		memcpy(*out, b.p, b.len);
	secbuf_wipe(&b);
	hflow_clear(f);
	free(f);
	return rc;
}

static void both(const struct hflow_ctx *c, const char *in_s, const char *want)
{
	for (size_t step = 0; step < 4; step += 1) {
		char *out;
		struct hflow_refusal r;
		if (feed(c, in_s, step, &out, &r) != 0)
			fail_msg("refused (step %zu): %s", step, r.reason);
		assert_string_equal(out, want);
		free(out);
	}
}

static void refused(const struct hflow_ctx *c, const char *in_s, int code, const char *why)
{
	for (size_t step = 0; step < 3; step += 2) {
		char *out;
		struct hflow_refusal r;
		if (feed(c, in_s, step, &out, &r) != -1)
			fail_msg("passed: %s", in_s);
		assert_int_equal(r.code, code);
		if (!strstr(r.reason, why))
			fail_msg("reason `%s` lacks `%s`", r.reason, why);
		assert_null(strstr(r.reason, KEY));
		free(out);
	}
}

static void inject(void **state)
{
	(void)state;
	struct hflow_ctx c = ctx("api.anthropic.com", true);
	both(&c,
	     "POST /v1/messages?beta=true HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: " PH
	     "\r\nContent-Length: 5\r\n\r\nhelloGET /v1/models HTTP/1.1\r\nHost: API.anthropic.com."
	     "\r\nX-API-Key: " PH "\r\n\r\n",
	     "POST /v1/messages?beta=true HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: " KEY
	     "\r\nContent-Length: 5\r\n\r\nhelloGET /v1/models HTTP/1.1\r\nHost: API.anthropic.com."
	     "\r\nX-API-Key: " KEY "\r\n\r\n");
	/* Basic credentials (git over https with a token): decoded, replaced, encoded */
	struct hflow_ctx g = ctx("github.com", true);
	char b64[256], want64[256];
	base64_encode((const uint8_t *)"x-access-token:agentjail-placeholder-GH_TOKEN", 45, b64);
	base64_encode((const uint8_t *)"x-access-token:ghp_REALTOKEN", 28, want64);
	char req[512], want[512];
	snprintf(req, sizeof req, "GET /o/r.git/info/refs HTTP/1.1\r\nHost: github.com\r\n"
				  "Authorization: Basic %s\r\n\r\n", b64);
	snprintf(want, sizeof want, "GET /o/r.git/info/refs HTTP/1.1\r\nHost: github.com\r\n"
				    "Authorization: Basic %s\r\n\r\n", want64);
	both(&g, req, want);
	/* a placeholder in a body is not read: it passes as it is (bodies are not inspected) */
	both(&c, "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\nContent-Length: 39\r\n\r\n" PH,
	     "POST /v1/messages HTTP/1.1\r\nHost: api.anthropic.com\r\nContent-Length: 39\r\n\r\n" PH);
}

static void exfiltration(void **state)
{
	(void)state;
	struct hflow_ctx c = ctx("api.anthropic.com", true);
	/* another host (inspected for its rules) */
	struct hflow_ctx g = ctx("github.com", true);
	refused(&g, "GET /x HTTP/1.1\r\nHost: github.com\r\nx-api-key: " PH "\r\n\r\n", 403,
		"exfiltration attempt: the placeholder of secret ANTHROPIC_API_KEY sent to "
		"github.com:443 in header x-api-key");
	/* its own host, another header, the request line */
	refused(&c, "GET /x HTTP/1.1\r\nHost: api.anthropic.com\r\nx-note: " PH "\r\n\r\n", 403,
		"in header x-note");
	refused(&c, "GET /x?k=" PH " HTTP/1.1\r\nHost: api.anthropic.com\r\n\r\n", 403,
		"in the request line");
	/* over plain HTTP (port 80 in a tunnel): never */
	struct hflow_ctx p = ctx("api.anthropic.com", false);
	refused(&p, "GET /x HTTP/1.1\r\nHost: api.anthropic.com\r\nx-api-key: " PH "\r\n\r\n", 403,
		"over plain HTTP");
	/* hidden in Basic credentials to another host */
	char b64[128], req[256];
	base64_encode((const uint8_t *)"u:" PH, 2 + sizeof PH - 1, b64);
	snprintf(req, sizeof req, "GET /x HTTP/1.1\r\nHost: github.com\r\nAuthorization: Basic %s"
				  "\r\n\r\n", b64);
	refused(&g, req, 403, "ANTHROPIC_API_KEY");
	/* the second request of a kept-alive tunnel is judged too, and nothing of it goes */
	char *out;
	struct hflow_refusal r;
	assert_int_equal(feed(&c, "GET /a HTTP/1.1\r\nHost: api.anthropic.com\r\n\r\nGET /b HTTP/1.1\r\n"
				  "Host: api.anthropic.com\r\nx-leak: " PH "\r\n\r\n", 0, &out, &r), -1);
	assert_string_equal(out, "GET /a HTTP/1.1\r\nHost: api.anthropic.com\r\n\r\n");
	assert_true(r.exfil);
	free(out);
}

static void rules_and_framing(void **state)
{
	(void)state;
	struct hflow_ctx g = ctx("github.com", true);
	both(&g, "GET /a/b HTTP/1.1\r\nHost: github.com\r\n\r\n",
	     "GET /a/b HTTP/1.1\r\nHost: github.com\r\n\r\n");
	refused(&g, "POST /gists HTTP/1.1\r\nHost: github.com\r\nContent-Length: 2\r\n\r\nhi", 403,
		"POST github.com/gists is not allowed by the request rules for github.com (add "
		"--allow-http 'POST github.com/gists')");
	/* a chunked body: framed, then the next head is judged */
	both(&g, "POST /repos/o/git/refs HTTP/1.1\r\nHost: github.com\r\nTransfer-Encoding: chunked"
		 "\r\n\r\n5;x=1\r\nhello\r\n0\r\nT: v\r\n\r\nGET /z HTTP/1.1\r\nHost: github.com\r\n\r\n",
	     "POST /repos/o/git/refs HTTP/1.1\r\nHost: github.com\r\nTransfer-Encoding: chunked"
	     "\r\n\r\n5;x=1\r\nhello\r\n0\r\nT: v\r\n\r\nGET /z HTTP/1.1\r\nHost: github.com\r\n\r\n");
	/* a request smuggled in a body by a length the server would not read is the next head */
	refused(&g, "GET /a HTTP/1.1\r\nHost: github.com\r\nContent-Length: 0\r\n\r\nPOST /gists "
		    "HTTP/1.1\r\nHost: github.com\r\n\r\n", 403, "POST github.com/gists");
	refused(&g, "POST /repos/o/git/x HTTP/1.1\r\nHost: github.com\r\nTransfer-Encoding: chunked"
		    "\r\n\r\nzz\r\n", 400, "chunk size");
	/* a chunk line is judged whole before any of it goes (fed in pieces too: refused() feeds
	 * it whole and two bytes at a time) */
	refused(&g, "POST /repos/o/git/x HTTP/1.1\r\nHost: github.com\r\nTransfer-Encoding: chunked"
		    "\r\n\r\n3\r|\nabc\r\n", 400, "chunked");
	refused(&g, "POST /repos/o/git/x HTTP/1.1\r\nHost: github.com\r\nTransfer-Encoding: chunked"
		    "\r\n\r\n0\r\nX\x01Y: 1\r\n\r\n", 400, "trailer");
	refused(&g, "GET / HTTP/1.1\r\nHost: github.com\r\nContent-Length: 1\r\nTransfer-Encoding: "
		    "chunked\r\n\r\n", 400, "Content-Length and Transfer-Encoding");
	refused(&g, "POST /repos/o/git/x HTTP/1.1\r\nHost: github.com\r\nTransfer-Encoding: gzip"
		    "\r\n\r\n", 400, "other than chunked");
	refused(&g, "GET /ws HTTP/1.1\r\nHost: github.com\r\nUpgrade: websocket\r\nConnection: "
		    "Upgrade\r\n\r\n", 403, "Upgrade");
	refused(&g, "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", 403,
		"CONNECT");
	refused(&g, "GET https://evil.example/ HTTP/1.1\r\nHost: github.com\r\n\r\n", 400,
		"origin-form");
	refused(&g, "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", 403, "HTTP Host evil.example");
	refused(&g, "GET /a/../gists HTTP/1.1\r\nHost: github.com\r\n\r\n", 403, "plain paths");
	refused(&g, "NOT HTTP\r\n\r\n", 400, "cannot read");
	refused(&g, "GET / HTTP/2.0\r\n\r\n", 400, "cannot read");
	/* the empty lines before a request line (CR and LF, any order, as the parser skips them)
	 * are not sent on: a bare LF first made a line of (size_t)-1 bytes (fuzz_httpflow: ASan,
	 * a read past the head in find_in) */
	both(&g, "\nGET /a HTTP/1.1\r\nHost: github.com\r\n\r\n\r\r\n\nGET /b HTTP/1.1\r\n"
		 "Host: github.com\r\n\r\n",
	     "GET /a HTTP/1.1\r\nHost: github.com\r\n\r\nGET /b HTTP/1.1\r\nHost: github.com\r\n"
	     "\r\n");
	refused(&g, "\n\rPOST /gists HTTP/1.1\r\nHost: github.com\r\n\r\n", 403, "POST github.com/gists");
	/* a host without rules: any method, any path */
	struct hflow_ctx c = ctx("api.anthropic.com", true);
	both(&c, "DELETE /v1/x/../y HTTP/1.1\r\nHost: api.anthropic.com\r\n\r\n",
	     "DELETE /v1/x/../y HTTP/1.1\r\nHost: api.anthropic.com\r\n\r\n");
}

static void plain(void **state)
{
	(void)state;
	struct hflow_ctx c = {.in = &in, .host = "example.org", .port = 80};
	const char *h = "GET http://example.org/x HTTP/1.1\r\nHost: example.org\r\nX-K: " PH "\r\n\r\n";
	struct http_req q;
	assert_int_equal(http_parse_request(h, strlen(h), &q), HP_OK);
	struct hflow_refusal r;
	assert_int_equal(hflow_check_plain(&c, h, strlen(h), &q, &r), -1);
	assert_true(r.exfil);
	assert_non_null(strstr(r.reason, "over plain HTTP"));
	http_req_free(&q);
	h = "POST http://github.com/gists HTTP/1.1\r\nHost: github.com\r\n\r\n";
	c.host = "github.com";
	assert_int_equal(http_parse_request(h, strlen(h), &q), HP_OK);
	assert_int_equal(hflow_check_plain(&c, h, strlen(h), &q, &r), -1);
	assert_non_null(strstr(r.reason, "add --allow-http 'POST github.com/gists'"));
	http_req_free(&q);
	h = "GET http://github.com/a HTTP/1.1\r\nHost: github.com\r\n\r\n";
	assert_int_equal(http_parse_request(h, strlen(h), &q), HP_OK);
	assert_int_equal(hflow_check_plain(&c, h, strlen(h), &q, &r), 0);
	http_req_free(&q);
}

static void b64(void **state)
{
	(void)state;
	uint8_t out[64];
	char enc[64];
	assert_int_equal(base64_decode("aGVsbG8=", 8, out), 5);
	assert_memory_equal(out, "hello", 5);
	assert_int_equal(base64_decode("aGVsbG9=", 8, out), -1); /* not canonical */
	assert_int_equal(base64_decode("aGVsbG8", 7, out), -1);
	assert_int_equal(base64_decode("a=Vs", 4, out), -1);
	assert_int_equal(base64_encode((const uint8_t *)"hi", 2, enc), 4);
	assert_string_equal(enc, "aGk=");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(inject),
		cmocka_unit_test(exfiltration),
		cmocka_unit_test(rules_and_framing),
		cmocka_unit_test(plain),
		cmocka_unit_test(b64),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
