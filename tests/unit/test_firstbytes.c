/* The judge of a tunnel's first bytes (doc/design.md §4): which ports are checked how, and what
 * each state becomes when no more bytes will come. The proxy's use of it is in test_proxy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/firstbytes.h"
#include "core/net/httpreq.h"
#include "core/net/tlshello.h"
#include "util/strv.h"

#include "tlsbuild.h"

static struct netrules rules;

static int setup(void **state)
{
	(void)state;
	struct strv allow = STRV_INIT, deny = STRV_INIT;
	strv_push(&allow, "api.example.com");
	strv_push(&allow, "*.cdn.example");
	strv_push(&allow, "git.example.com:22");
	strv_push(&allow, "api.example.com:8443/tls");
	strv_push(&allow, "*.cdn.example:8080/http");
	strv_push(&deny, "bad.cdn.example");
	struct err e = {0};
	int rc = netrules_build(&allow, &deny, NULL, &rules, &e);
	strv_free(&allow);
	strv_free(&deny);
	return rc;
}

static int teardown(void **state)
{
	(void)state;
	netrules_free(&rules);
	return 0;
}

static void judge(const char *host, uint16_t port, const void *b, size_t n, bool final,
		  struct fb_result *r)
{
	struct net_decision d;
	assert_int_equal(netrules_check(&rules, host, port, &d), NV_ALLOW);
	fb_judge(&rules, &d, host, port, fb_kind_for(&rules, host, port), b, n, final, r);
}

static struct bytes *hello(const char *sni, bool ech)
{
	struct bytes *e = calloc(1, sizeof *e), *m = calloc(1, sizeof *m), *s = calloc(1, sizeof *s);
	if (sni)
		ext_one(e, sni);
	if (ech)
		ext_empty(e, 0xfe0d, 32);
	hello_msg(m, e);
	records(s, m->b, m->n, 16384);
	free(e);
	free(m);
	return s;
}

static void tls(void **state)
{
	(void)state;
	struct fb_result r;
	struct bytes *h = hello("API.example.com.", false);
	judge("api.example.com", 443, h->b, h->n, false, &r);
	assert_int_equal(r.state, FB_PASS);
	judge("api.example.com", 443, h->b, h->n - 1, false, &r);
	assert_int_equal(r.state, FB_WAIT);
	assert_true(r.tls);
	assert_int_equal(r.max, TLS_HELLO_READ_MAX);
	judge("api.example.com", 443, h->b, h->n - 1, true, &r); /* and then nothing */
	assert_int_equal(r.state, FB_REFUSE);
	assert_string_equal(r.reason, "api.example.com:443 got part of a TLS ClientHello, then "
				      "nothing more");
	free(h);
	/* ECH: the outer name is what is checked, and the reason says it was the outer one */
	h = hello("public.example", true);
	judge("api.example.com", 443, h->b, h->n, false, &r);
	assert_int_equal(r.state, FB_REFUSE);
	assert_true(r.tls);
	assert_string_equal(r.reason, "TLS server name (the outer one of an ECH hello) public.example "
				      "does not match api.example.com:443, the name this connection "
				      "was allowed for");
	free(h);
	/* a wildcard approval takes another name it allows, not a denied one */
	h = hello("b.cdn.example", false);
	judge("a.cdn.example", 443, h->b, h->n, false, &r);
	assert_int_equal(r.state, FB_PASS);
	free(h);
	h = hello("bad.cdn.example", false);
	judge("a.cdn.example", 443, h->b, h->n, false, &r);
	assert_int_equal(r.state, FB_REFUSE);
	free(h);
	/* port 443 carries TLS only; nothing at all within the wait is refused too */
	judge("api.example.com", 443, "SSH-2.0-x\r\n", 11, false, &r);
	assert_int_equal(r.state, FB_REFUSE);
	assert_false(r.tls);
	judge("api.example.com", 443, "", 0, false, &r);
	assert_int_equal(r.state, FB_WAIT);
	judge("api.example.com", 443, "", 0, true, &r);
	assert_int_equal(r.state, FB_REFUSE);
	assert_string_equal(r.reason, "api.example.com:443 got no TLS ClientHello");
}

/* Another port: TLS is checked when the bytes are TLS; anything else goes on at its first
 * byte; a silent client (a server that speaks first) waits without a bound. */
static void sniffed(void **state)
{
	(void)state;
	struct fb_result r;
	judge("git.example.com", 22, "SSH-2.0-OpenSSH_9.2\r\n", 21, false, &r);
	assert_int_equal(r.state, FB_PASS);
	judge("git.example.com", 22, "x", 1, false, &r);
	assert_int_equal(r.state, FB_PASS);
	judge("git.example.com", 22, "", 0, false, &r);
	assert_int_equal(r.state, FB_WAIT);
	judge("git.example.com", 22, "", 0, true, &r);
	assert_int_equal(r.state, FB_PASS);
	judge("git.example.com", 22, "\x16", 1, false, &r);
	assert_int_equal(r.state, FB_WAIT);
	judge("git.example.com", 22, "\x16\x03\x01\x00\x05\x02", 6, false, &r);
	assert_int_equal(r.state, FB_REFUSE);
	judge("git.example.com", 22, "\x80\x2e\x07", 3, false, &r); /* not SSLv2 after all */
	assert_int_equal(r.state, FB_PASS);
	judge("git.example.com", 22, "\x80\x2e\x01", 3, false, &r); /* an SSLv2 hello */
	assert_int_equal(r.state, FB_REFUSE);
	struct bytes *h = hello("evil.example", false);
	judge("git.example.com", 22, h->b, h->n, false, &r);
	assert_int_equal(r.state, FB_REFUSE);
	free(h);
	h = hello("git.example.com", false);
	judge("git.example.com", 22, h->b, h->n, false, &r);
	assert_int_equal(r.state, FB_PASS);
	free(h);
}

static void http(void **state)
{
	(void)state;
	struct fb_result r;
	static const char ok[] = "GET / HTTP/1.1\r\nHost: API.example.com:80\r\n\r\n";
	judge("api.example.com", 80, ok, sizeof ok - 1, false, &r);
	assert_int_equal(r.state, FB_PASS);
	judge("api.example.com", 80, ok, 10, false, &r);
	assert_int_equal(r.state, FB_WAIT);
	assert_int_equal(r.max, HTTP_HEAD_MAX);
	judge("api.example.com", 80, ok, 10, true, &r);
	assert_int_equal(r.state, FB_REFUSE);
	static const char *const bad[] = {
		"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n",
		"GET http://evil.example/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n",
		"\r\nGET / HTTP/1.1\r\nHost: evil.example\r\n\r\n",
		"GET / HTTP/1.0\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"SSH-2.0-x\r\n",
	};
	const char *want[] = {
		("HTTP Host evil.example does not match api.example.com:80, the name this "
		 "connection was allowed for"),
		"HTTP request target evil.example does not match api.example.com:80",
		"HTTP Host evil.example does not match",
		"no HTTP Host sent for api.example.com:80",
		"api.example.com:80 got a request the proxy cannot check: unsupported HTTP version",
		"api.example.com:80 got bytes that are not an HTTP/1.x request",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		judge("api.example.com", 80, bad[i], strlen(bad[i]), false, &r);
		if (r.state != FB_REFUSE || strncmp(r.reason, want[i], strlen(want[i])))
			fail_msg("%zu: %d %s", i, r.state, r.reason);
		assert_false(r.tls);
		assert_true(r.http == (i < 5));
	}
}

/* A port an allow entry names as TLS or HTTP is judged as 443 or 80 is. */
static void named(void **state)
{
	(void)state;
	assert_int_equal(fb_kind_for(&rules, "api.example.com", 443), FB_TLS);
	assert_int_equal(fb_kind_for(&rules, "api.example.com", 80), FB_HTTP);
	assert_int_equal(fb_kind_for(&rules, "api.example.com", 8443), FB_TLS);
	assert_int_equal(fb_kind_for(&rules, "git.example.com", 22), FB_SNIFF);
	assert_int_equal(fb_kind_for(&rules, "a.cdn.example", 8080), FB_HTTP);
	struct fb_result r;
	judge("api.example.com", 8443, "SSH-2.0-x\r\n", 11, false, &r);
	assert_int_equal(r.state, FB_REFUSE);
	assert_string_equal(r.reason, "api.example.com:8443 got bytes that are not TLS (this port "
				      "carries TLS only)");
	judge("api.example.com", 8443, "", 0, true, &r);
	assert_int_equal(r.state, FB_REFUSE);
	struct bytes *h = hello("evil.example", false);
	judge("api.example.com", 8443, h->b, h->n, false, &r);
	assert_int_equal(r.state, FB_REFUSE);
	free(h);
	h = hello("api.example.com", false);
	judge("api.example.com", 8443, h->b, h->n, false, &r);
	assert_int_equal(r.state, FB_PASS);
	free(h);
	static const char foreign[] = "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n";
	judge("a.cdn.example", 8080, foreign, sizeof foreign - 1, false, &r);
	assert_int_equal(r.state, FB_REFUSE);
	assert_true(r.http);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tls),
		cmocka_unit_test(sniffed),
		cmocka_unit_test(http),
		cmocka_unit_test(named),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
