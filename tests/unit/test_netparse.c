/* The egress proxy's protocol parsers (doc/design.md §4): HTTP request heads, SOCKS5, DNS.
 * Good and bad inputs, byte-exact outputs, every prefix of a good input, the size caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/net/dnsmsg.h"
#include "core/net/httpreq.h"
#include "core/net/socks5.h"
#include "util/strbuf.h"

/* ---- HTTP ---- */

static int parse(const char *s, struct http_req *r) { return http_parse_request(s, strlen(s), r); }

/* Every proper prefix of the head is NEED_MORE (copied to an exact-size buffer so ASan sees
 * a read past it). */
static void prefixes_need_more(const char *s, size_t head_len)
{
	for (size_t i = 0; i < head_len; i++) {
		char *p = malloc(i ? i : 1);
		memcpy(p, s, i);
		struct http_req r;
		int rc = http_parse_request(p, i, &r);
		if (rc != HP_NEED_MORE)
			fail_msg("prefix %zu of %s: %d (%s)", i, s, rc, r.error ? r.error : "");
		assert_null(r.upstream);
		free(p);
	}
}

static void expect_bad(const char *s, const char *why)
{
	struct http_req r;
	int rc = parse(s, &r);
	if (rc != HP_BAD)
		fail_msg("%s: rc %d, want HP_BAD", s, rc);
	assert_null(r.upstream);
	assert_non_null(r.error);
	if (why && !strstr(r.error, why))
		fail_msg("%s: reason \"%s\", want \"%s\"", s, r.error, why);
}

static void http_connect(void **state)
{
	(void)state;
	static const char s[] = "CONNECT api.example.com:443 HTTP/1.1\r\n"
				"Host: api.example.com:443\r\n"
				"Proxy-Authorization: Basic eDp5\r\n\r\n"
				"\x16\x03\x01 tls bytes after the head";
	struct http_req r;
	assert_int_equal(parse(s, &r), HP_OK);
	assert_true(r.connect);
	assert_string_equal(r.method, "CONNECT");
	assert_string_equal(r.host, "api.example.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(r.head_len, strstr(s, "\r\n\r\n") + 4 - s);
	assert_null(r.upstream);
	assert_null(r.error);
	prefixes_need_more(s, r.head_len);
	http_req_free(&r);

	assert_int_equal(parse("CONNECT [2001:db8::1]:8443 HTTP/1.0\r\n\r\n", &r), HP_OK);
	assert_string_equal(r.host, "2001:db8::1");
	assert_int_equal(r.port, 8443);
	assert_int_equal(parse("CONNECT 10.0.0.1:65535 HTTP/1.1\r\n\r\n", &r), HP_OK);
	assert_string_equal(r.host, "10.0.0.1");
	assert_int_equal(r.port, 65535);

	expect_bad("CONNECT example.com HTTP/1.1\r\n\r\n", "CONNECT without a port");
	expect_bad("CONNECT [::1] HTTP/1.1\r\n\r\n", "CONNECT without a port");
	expect_bad("CONNECT example.com: HTTP/1.1\r\n\r\n", "invalid port");
	expect_bad("CONNECT example.com:0 HTTP/1.1\r\n\r\n", "invalid port");
	expect_bad("CONNECT example.com:65536 HTTP/1.1\r\n\r\n", "invalid port");
	expect_bad("CONNECT example.com:000443 HTTP/1.1\r\n\r\n", "invalid port");
	expect_bad("CONNECT example.com:44x HTTP/1.1\r\n\r\n", "invalid port");
	expect_bad("CONNECT example.com:-1 HTTP/1.1\r\n\r\n", "invalid port");
	expect_bad("CONNECT user:pw@example.com:443 HTTP/1.1\r\n\r\n", "user information");
	expect_bad("CONNECT [::1:443 HTTP/1.1\r\n\r\n", "IPv6");
	expect_bad("CONNECT [not-v6]:443 HTTP/1.1\r\n\r\n", "IPv6");
	expect_bad("CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n", "IPv6");
	expect_bad("CONNECT [::1]x443 HTTP/1.1\r\n\r\n", "IPv6");
	expect_bad("CONNECT :443 HTTP/1.1\r\n\r\n", "empty host");
	expect_bad("CONNECT exa%6dple.com:443 HTTP/1.1\r\n\r\n", "invalid character");
	expect_bad("CONNECT http://example.com:443/ HTTP/1.1\r\n\r\n", "host:port");
	expect_bad("CONNECT /x HTTP/1.1\r\n\r\n", "host:port");
	expect_bad("connect example.com:443 HTTP/1.1\r\n\r\n", "only http://");
}

static void http_plain_upstream(void **state)
{
	(void)state;
	static const char s[] =
		"POST http://Example.COM:8080/api/v1?q=a%20b&x=/ HTTP/1.1\r\n"
		"Host: wrong.example\r\n"
		"User-Agent: curl/8.0\r\n"
		"Proxy-Authorization: Basic eDp5\r\n"
		"Proxy-Connection: Keep-Alive\r\n"
		"Connection: keep-alive, X-Secret\r\n"
		"X-Secret: drop me\r\n"
		"Keep-Alive: timeout=5\r\n"
		"TE: trailers\r\n"
		"Trailer: X-T\r\n"
		"Upgrade: websocket\r\n"
		"Content-Length: 4\r\n"
		"Accept:   */*  \r\n"
		"X-Empty:\r\n"
		"\r\n"
		"body";
	static const char want[] = "POST /api/v1?q=a%20b&x=/ HTTP/1.1\r\n"
				   "Host: Example.COM:8080\r\n"
				   "User-Agent: curl/8.0\r\n"
				   "Content-Length: 4\r\n"
				   "Accept: */*\r\n"
				   "X-Empty: \r\n"
				   "Connection: close\r\n\r\n";
	struct http_req r;
	assert_int_equal(parse(s, &r), HP_OK);
	assert_false(r.connect);
	assert_string_equal(r.method, "POST");
	assert_string_equal(r.host, "Example.COM");
	assert_string_equal(r.host_header, "wrong.example"); /* the proxy refuses it (design §4) */
	assert_int_equal(r.port, 8080);
	assert_int_equal(r.head_len, strlen(s) - 4);
	assert_int_equal(r.upstream_len, strlen(want));
	assert_memory_equal(r.upstream, want, r.upstream_len);
	assert_int_equal(r.upstream[r.upstream_len], '\0');
	http_req_free(&r);
	assert_null(r.upstream);
	prefixes_need_more(s, strlen(s) - 4);

	/* default port, empty path, query only, IPv6, HTTP/1.0 kept */
	struct {
		const char *in, *want;
		uint16_t port;
	} cases[] = {
		{"GET http://example.com HTTP/1.1\r\n\r\n",
		 "GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n", 80},
		{"GET HTTP://example.com:80?x HTTP/1.0\r\n\r\n",
		 "GET /?x HTTP/1.0\r\nHost: example.com\r\nConnection: close\r\n\r\n", 80},
		{"HEAD http://[::1]:8000/a HTTP/1.1\r\nconnection: Upgrade\r\nupgrade: h2c\r\n\r\n",
		 "HEAD /a HTTP/1.1\r\nHost: [::1]:8000\r\nConnection: close\r\n\r\n", 8000},
		{"GET http://h/ HTTP/1.1\r\nHost: h\r\nHOST: H\r\nCONNECTION: close\r\n\r\n",
		 "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", 80},
		{"GET http://h/ HTTP/1.1\r\nClose: x\r\n\r\n",
		 "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", 80},
		{"DELETE http://h/x HTTP/1.1\r\nX-A:b\tc\r\nX-Utf8: \xc3\xa9\r\n\r\n",
		 "DELETE /x HTTP/1.1\r\nHost: h\r\nX-A: b\tc\r\nX-Utf8: \xc3\xa9\r\n"
		 "Connection: close\r\n\r\n", 80},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		if (parse(cases[i].in, &r) != HP_OK)
			fail_msg("%s: %s", cases[i].in, r.error);
		assert_int_equal(r.port, cases[i].port);
		assert_string_equal(r.upstream, cases[i].want);
		assert_int_equal(r.upstream_len, strlen(cases[i].want));
		http_req_free(&r);
		prefixes_need_more(cases[i].in, strlen(cases[i].in));
	}
}

static void http_refused(void **state)
{
	(void)state;
	expect_bad("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", "not a proxy request");
	expect_bad("OPTIONS * HTTP/1.1\r\n\r\n", "not a proxy request");
	expect_bad("GET https://example.com/ HTTP/1.1\r\n\r\n", "CONNECT");
	expect_bad("GET ftp://example.com/ HTTP/1.1\r\n\r\n", "only http://");
	expect_bad("GET example.com:80 HTTP/1.1\r\n\r\n", "only http://");
	expect_bad("GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n", "user information");
	expect_bad("GET http://example.com:99999/ HTTP/1.1\r\n\r\n", "invalid port");
	expect_bad("GET http://example.com:/ HTTP/1.1\r\n\r\n", "invalid port");
	expect_bad("GET http://example.com:8o/ HTTP/1.1\r\n\r\n", "invalid port");
	expect_bad("GET http:///x HTTP/1.1\r\n\r\n", "empty host");
	expect_bad("GET http://a/#frag HTTP/1.1\r\n\r\n", "fragment");
	expect_bad("GET http://a\\b/ HTTP/1.1\r\n\r\n", "invalid character");
	/* the request line */
	expect_bad("\r\nGET http://a/ HTTP/1.1\r\n\r\n", "empty request line");
	expect_bad("GET  http://a/ HTTP/1.1\r\n\r\n", "request line");
	expect_bad("GET http://a/ HTTP/1.1 \r\n\r\n", "HTTP version");
	expect_bad("GET http://a/\r\n\r\n", "request line");
	expect_bad("GET http://a/ HTTP/2.0\r\n\r\n", "HTTP version");
	expect_bad("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP version");
	expect_bad("GET http://a/ http/1.1\r\n\r\n", "HTTP version");
	expect_bad("G(T http://a/ HTTP/1.1\r\n\r\n", "method");
	expect_bad("VERYLONGMETHODNAME http://a/ HTTP/1.1\r\n\r\n", "method");
	expect_bad("GET http://a/\x7f HTTP/1.1\r\n\r\n", "target");
	expect_bad("GET http://a/\xc3\xa9 HTTP/1.1\r\n\r\n", "target");
	/* line endings and bytes */
	expect_bad("GET http://a/ HTTP/1.1\nHost: a\n\n", "bare LF");
	expect_bad("GET http://a/ HTTP/1.1\r\nHost: a\n\r\n", "bare LF");
	expect_bad("GET http://a/ HTTP/1.1\rHost: a\r\n\r\n", "bare CR");
	expect_bad("GET http://a/ HTTP/1.1\r\nX: a\rb\r\n\r\n", "bare CR");
	/* a bad byte is refused before the head is complete */
	expect_bad("GET http://a/ HTTP/1.1\r\nX: a\rb", "bare CR");
	expect_bad("GET http://a/ HTTP/1.1\r\nX: a\nb", "bare LF");
	expect_bad("GET / HTTP/1.1\r\n", "not a proxy request");
	struct http_req r;
	static const char nul[] = "GET http://a/ HTTP/1.1\r\nX: a\0b\r\n\r\n";
	assert_int_equal(http_parse_request(nul, sizeof nul - 1, &r), HP_BAD);
	assert_string_equal(r.error, "NUL byte in the request head");
	/* headers */
	expect_bad("GET http://a/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", "obsolete line folding");
	expect_bad("GET http://a/ HTTP/1.1\r\n\tX: a\r\n\r\n", "obsolete line folding");
	expect_bad("GET http://a/ HTTP/1.1\r\nX : a\r\n\r\n", "header name");
	expect_bad("GET http://a/ HTTP/1.1\r\n: a\r\n\r\n", "header name");
	expect_bad("GET http://a/ HTTP/1.1\r\nNo colon\r\n\r\n", "no colon");
	expect_bad("GET http://a/ HTTP/1.1\r\nX: a\x01\r\n\r\n", "control character");
	expect_bad("GET http://a/ HTTP/1.1\r\nX: a\x7f\r\n\r\n", "control character");
	expect_bad("GET http://a/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "Host");
	expect_bad("CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\nHost: b:443\r\n\r\n", "Host");
	expect_bad("GET http://a/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
		   "Transfer-Encoding");
	expect_bad("GET http://a/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		   "Content-Length");
	expect_bad("GET http://a/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "Content-Length");
	expect_bad("GET http://a/ HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", "Content-Length");
	expect_bad("GET http://a/ HTTP/1.1\r\nConnection: close, Content-Length\r\n\r\n",
		   "framing");
	expect_bad("GET http://a/ HTTP/1.1\r\nConnection: a b\r\n\r\n", "Connection");
	char host[300];
	memset(host, 'a', sizeof host);
	host[256] = '\0';
	char *s = NULL;
	assert_true(asprintf(&s, "CONNECT %s:443 HTTP/1.1\r\n\r\n", host) > 0);
	expect_bad(s, "longer than 255");
	free(s);
	host[255] = '\0';
	assert_true(asprintf(&s, "CONNECT %s:443 HTTP/1.1\r\n\r\n", host) > 0);
	assert_int_equal(parse(s, &r), HP_OK);
	free(s);
}

static void http_caps(void **state)
{
	(void)state;
	struct http_req r;
	/* 100 header lines are fine, 101 are not */
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, "GET http://a/ HTTP/1.1\r\n");
	for (int i = 0; i < 100; i++)
		sb_addf(&b, "X-%d: v\r\n", i);
	struct strbuf b2 = STRBUF_INIT;
	sb_add(&b2, sb_str(&b));
	sb_add(&b, "\r\n");
	assert_int_equal(http_parse_request(b.s, b.len, &r), HP_OK);
	http_req_free(&r);
	sb_add(&b2, "X-100: v\r\n");
	assert_int_equal(http_parse_request(b2.s, b2.len, &r), HP_TOO_BIG);
	assert_string_equal(r.error, "too many header lines");
	sb_free(&b);
	sb_free(&b2);

	/* a head of exactly HTTP_HEAD_MAX bytes is accepted; one byte more is 431 */
	char *big = malloc(HTTP_HEAD_MAX + 2);
	static const char pre[] = "GET http://a/ HTTP/1.1\r\nX: ";
	for (int extra = 0; extra <= 1; extra++) {
		size_t n = HTTP_HEAD_MAX + (size_t)extra;
		memcpy(big, pre, sizeof pre - 1);
		memset(big + sizeof pre - 1, 'v', n - (sizeof pre - 1) - 4);
		memcpy(big + n - 4, "\r\n\r\n", 4);
		int rc = http_parse_request(big, n, &r);
		assert_int_equal(rc, extra ? HP_TOO_BIG : HP_OK);
		if (rc == HP_OK)
			assert_int_equal(r.head_len, HTTP_HEAD_MAX);
		http_req_free(&r);
	}
	/* an unfinished head: NEED_MORE below the cap, 431 at it */
	memset(big + sizeof pre - 1, 'v', HTTP_HEAD_MAX + 2 - (sizeof pre - 1));
	assert_int_equal(http_parse_request(big, HTTP_HEAD_MAX - 1, &r), HP_NEED_MORE);
	assert_int_equal(http_parse_request(big, HTTP_HEAD_MAX, &r), HP_TOO_BIG);
	assert_string_equal(r.error, "request head larger than 16 KiB");
	free(big);
	assert_int_equal(http_parse_request("", 0, &r), HP_NEED_MORE);
}

static void http_responses(void **state)
{
	(void)state;
	size_t n;
	char *s = http_response(403, "example.org:443 is not allowed (--allow-domain example.org)", &n);
	static const char want[] =
		"HTTP/1.1 403 Forbidden\r\n"
		"X-Proxy-Error: example.org:443 is not allowed (--allow-domain example.org)\r\n"
		"Content-Type: text/plain; charset=utf-8\r\n"
		"Content-Length: 60\r\n"
		"Connection: close\r\n\r\n"
		"example.org:443 is not allowed (--allow-domain example.org)\n";
	assert_int_equal(n, strlen(want));
	assert_memory_equal(s, want, n);
	free(s);

	s = http_response(200, NULL, &n);
	assert_int_equal(n, strlen("HTTP/1.1 200 Connection established\r\n\r\n"));
	assert_string_equal(s, "HTTP/1.1 200 Connection established\r\n\r\n");
	free(s);

	/* a reason cannot add a header or a line */
	s = http_response(502, "evil\r\nSet-Cookie: x\n", &n);
	assert_string_equal(s, "HTTP/1.1 502 Bad Gateway\r\n"
			       "X-Proxy-Error: evil  Set-Cookie: x \r\n"
			       "Content-Type: text/plain; charset=utf-8\r\n"
			       "Content-Length: 21\r\n"
			       "Connection: close\r\n\r\n"
			       "evil  Set-Cookie: x \n");
	free(s);

	static const int codes[] = {400, 405, 431, 504};
	static const char *const lines[] = {"HTTP/1.1 400 Bad Request\r\n",
					    "HTTP/1.1 405 Method Not Allowed\r\n",
					    "HTTP/1.1 431 Request Header Fields Too Large\r\n",
					    "HTTP/1.1 504 Gateway Timeout\r\n"};
	for (size_t i = 0; i < 4; i++) {
		s = http_response(codes[i], "why", &n);
		assert_int_equal(strncmp(s, lines[i], strlen(lines[i])), 0);
		assert_non_null(strstr(s, "\r\nX-Proxy-Error: why\r\n"));
		assert_non_null(strstr(s, "\r\nContent-Length: 4\r\n"));
		assert_int_equal(strcmp(s + n - 8, "\r\n\r\nwhy\n"), 0);
		free(s);
	}
	/* a long reason is cut */
	char *lng = malloc(5000);
	memset(lng, 'x', 4999);
	lng[4999] = '\0';
	s = http_response(403, lng, &n);
	assert_non_null(strstr(s, "Content-Length: 1025\r\n"));
	assert_true(n < 2300);
	free(s);
	free(lng);
}

/* The first request inside a tunnel: which host it asks for (Host, and an absolute target a
 * server would route by), and whether it is HTTP at all; another protocol is told apart at
 * its first line, before any byte goes on. */
static int origin(const char *s, struct http_req *r) { return http_parse_origin(s, strlen(s), r); }

static void http_origin(void **state)
{
	(void)state;
	struct http_req r;
	static const char get[] = "GET /x?y HTTP/1.1\r\nHost: API.example.com:8080\r\n"
				  "Accept: */*\r\n\r\nbody";
	assert_int_equal(origin(get, &r), HP_OK);
	assert_string_equal(r.host_header, "API.example.com");
	assert_string_equal(r.host, "");
	assert_string_equal(r.method, "GET");
	assert_int_equal(r.head_len, strlen(get) - 4);
	assert_null(r.upstream);
	for (size_t i = 0; i < r.head_len; i++) {
		char *p = malloc(i ? i : 1);
		memcpy(p, get, i);
		struct http_req q;
		if (http_parse_origin(p, i, &q) != HP_NEED_MORE)
			fail_msg("prefix %zu: %s", i, q.error ? q.error : "");
		free(p);
	}
	/* leading empty lines are skipped, as servers skip them */
	assert_int_equal(origin("\r\n\r\nGET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", &r), HP_OK);
	assert_string_equal(r.host_header, "evil.example");
	assert_int_equal(r.head_len, 4 + 38);
	/* targets a server routes by */
	assert_int_equal(origin("GET http://evil.example/ HTTP/1.1\r\nHost: ok.example\r\n\r\n", &r),
			 HP_OK);
	assert_string_equal(r.host, "evil.example");
	assert_string_equal(r.host_header, "ok.example");
	assert_int_equal(origin("GET https://[::1]:8443/ HTTP/1.1\r\n\r\n", &r), HP_OK);
	assert_string_equal(r.host, "::1");
	assert_string_equal(r.host_header, "");
	assert_int_equal(origin("GET ftp://Evil.example HTTP/1.1\r\nHost: x\r\n\r\n", &r), HP_OK);
	assert_string_equal(r.host, "Evil.example");
	assert_int_equal(origin("CONNECT evil.example:443 HTTP/1.1\r\n\r\n", &r), HP_OK);
	assert_string_equal(r.host, "evil.example");
	assert_int_equal(origin("OPTIONS * HTTP/1.1\r\nHost: [2001:db8::1]:80\r\n\r\n", &r), HP_OK);
	assert_string_equal(r.host_header, "2001:db8::1");
	assert_int_equal(origin("GET / HTTP/1.0\r\n\r\n", &r), HP_OK); /* no Host at all */
	assert_string_equal(r.host_header, "");

	/* other protocols: told at their first line, or their first byte */
	static const char *const other[] = {
		"SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n", "\x16\x03\x01\x02\x00\x01",
		"*1\r\n$4\r\nPING\r\n", "SET key value\n", "GET /\r\n", "\x01\x02",
		"A\x01", "EHLO x", "PING",
	};
	for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
		int rc = origin(other[i], &r);
		if (i < sizeof other / sizeof *other - 2 ? rc != HP_NOT_HTTP : rc == HP_OK)
			fail_msg("%s: %d", other[i], rc);
	}
	assert_int_equal(origin("EHLO x", &r), HP_NEED_MORE); /* may still become a request */
	/* HTTP, but not what we can check or a lenient server would read otherwise: refused */
	static const char *const refused[] = {
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"GET  / HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.1\nHost: x\n\n",
		"GET\t/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET / http/1.1\r\nHost: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: user@evil.example\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
		"GET / HTTP/1.1\r\n Host: x\r\n\r\n",
		"GET evil.example HTTP/1.1\r\nHost: x\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		int rc = origin(refused[i], &r);
		if (rc != HP_BAD)
			fail_msg("%s: %d, want HP_BAD", refused[i], rc);
		assert_non_null(r.error);
		assert_string_equal(r.host_header, "");
	}
}

/* ---- SOCKS5 ---- */

static void socks_greeting(void **state)
{
	(void)state;
	size_t used;
	bool noauth;
	const uint8_t g[] = {5, 2, 2, 0, 0xAA};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(socks5_parse_greeting(g, i, &used, &noauth), SP_NEED_MORE);
		assert_int_equal(used, 0);
	}
	assert_int_equal(socks5_parse_greeting(g, sizeof g, &used, &noauth), SP_OK);
	assert_int_equal(used, 4);
	assert_true(noauth);
	const uint8_t g2[] = {5, 1, 2};
	assert_int_equal(socks5_parse_greeting(g2, 3, &used, &noauth), SP_OK);
	assert_false(noauth);
	const uint8_t g3[] = {4, 1, 0};
	assert_int_equal(socks5_parse_greeting(g3, 1, &used, &noauth), SP_BAD);
	const uint8_t g4[] = {5, 0};
	assert_int_equal(socks5_parse_greeting(g4, 2, &used, &noauth), SP_BAD);
}

static void socks_prefixes(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = malloc(i ? i : 1);
		memcpy(p, b, i);
		struct socks5_req r;
		if (socks5_parse_request(p, i, &r) != SP_NEED_MORE)
			fail_msg("prefix %zu of a good request is not NEED_MORE", i);
		free(p);
	}
}

static void socks_request(void **state)
{
	(void)state;
	struct socks5_req r;
	const uint8_t v4[] = {5, 1, 0, 1, 192, 0, 2, 7, 0x01, 0xbb, 0xEE};
	assert_int_equal(socks5_parse_request(v4, sizeof v4, &r), SP_OK);
	assert_int_equal(r.cmd, 1);
	assert_true(r.is_ip);
	assert_string_equal(r.host, "192.0.2.7");
	assert_int_equal(r.port, 443);
	assert_int_equal(r.used, 10);
	socks_prefixes(v4, 10);

	const uint8_t dom[] = {5, 1, 0, 3, 11, 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'c', 'o', 'm',
			       0, 80};
	assert_int_equal(socks5_parse_request(dom, sizeof dom, &r), SP_OK);
	assert_false(r.is_ip);
	assert_string_equal(r.host, "example.com");
	assert_int_equal(r.port, 80);
	assert_int_equal(r.used, sizeof dom);
	socks_prefixes(dom, sizeof dom);

	const uint8_t v6[] = {5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
			      0x1f, 0x90};
	assert_int_equal(socks5_parse_request(v6, sizeof v6, &r), SP_OK);
	assert_true(r.is_ip);
	assert_string_equal(r.host, "2001:db8::1");
	assert_int_equal(r.port, 8080);
	assert_int_equal(r.used, 22);
	socks_prefixes(v6, sizeof v6);

	/* a 255-byte domain fills host */
	uint8_t longd[5 + 255 + 2];
	memcpy(longd, (uint8_t[]){5, 1, 0, 3, 255}, 5);
	memset(longd + 5, 'a', 255);
	longd[260] = 1, longd[261] = 0;
	assert_int_equal(socks5_parse_request(longd, sizeof longd, &r), SP_OK);
	assert_int_equal(strlen(r.host), 255);
	assert_int_equal(r.port, 256);

	/* BIND and UDP ASSOCIATE parse (the caller replies 7) */
	const uint8_t bind[] = {5, 2, 0, 1, 1, 2, 3, 4, 0, 1};
	assert_int_equal(socks5_parse_request(bind, sizeof bind, &r), SP_OK);
	assert_int_equal(r.cmd, 2);

	struct {
		const uint8_t *b;
		size_t n;
		uint8_t rep;
	} bad[] = {
		{(const uint8_t[]){4, 1, 0, 1, 1, 2, 3, 4, 0, 1}, 10, 1},
		{(const uint8_t[]){5}, 1, 255}, /* placeholder: VER alone is NEED_MORE */
		{(const uint8_t[]){5, 9, 0, 1, 1, 2, 3, 4, 0, 1}, 10, 7},
		{(const uint8_t[]){5, 0}, 2, 7},
		{(const uint8_t[]){5, 1, 1, 1, 1, 2, 3, 4, 0, 1}, 10, 1},
		{(const uint8_t[]){5, 1, 0, 2, 1, 2, 3, 4, 0, 1}, 10, 8},
		{(const uint8_t[]){5, 1, 0, 3, 0, 0, 80}, 7, 1},
		{(const uint8_t[]){5, 1, 0, 3, 3, 'a', 0, 'b', 0, 80}, 10, 1},
		{(const uint8_t[]){5, 1, 0, 3, 3, 'a', 0}, 7, 1}, /* refused before the rest */
		{(const uint8_t[]){5, 1, 0, 3, 3, 'a', ' ', 'b', 0, 80}, 10, 1},
		{(const uint8_t[]){5, 1, 0, 3, 3, 'a', '\n', 'b', 0, 80}, 10, 1},
		{(const uint8_t[]){5, 1, 0, 1, 1, 2, 3, 4, 0, 0}, 10, 1},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int rc = socks5_parse_request(bad[i].b, bad[i].n, &r);
		if (bad[i].rep == 255) {
			assert_int_equal(rc, SP_NEED_MORE);
			continue;
		}
		if (rc != SP_BAD || r.bad_rep != bad[i].rep)
			fail_msg("bad request %zu: rc %d rep %u", i, rc, r.bad_rep);
		assert_int_equal(r.used, 0);
	}
}

static void socks_reply(void **state)
{
	(void)state;
	uint8_t out[10];
	memset(out, 0xff, sizeof out);
	assert_int_equal(socks5_reply(2, out), 10);
	const uint8_t want[] = {5, 2, 0, 1, 0, 0, 0, 0, 0, 0};
	assert_memory_equal(out, want, 10);
	socks5_reply(0, out);
	assert_int_equal(out[1], 0);
}

/* ---- DNS ---- */

/* A query: id 0xbeef, RD, one question. */
static size_t mkquery(uint8_t *b, const char *wire_name, size_t nlen, uint16_t qtype)
{
	const uint8_t hdr[] = {0xbe, 0xef, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
	memcpy(b, hdr, 12);
	memcpy(b + 12, wire_name, nlen);
	size_t o = 12 + nlen;
	b[o++] = (uint8_t)(qtype >> 8), b[o++] = (uint8_t)qtype;
	b[o++] = 0, b[o++] = 1;
	return o;
}

#define NAME_EX "\x03" "Api" "\x07" "example" "\x03" "com" "\x00"

static void dns_query_parse(void **state)
{
	(void)state;
	uint8_t b[600];
	struct dns_query q;
	size_t n = mkquery(b, NAME_EX, sizeof NAME_EX - 1, DNS_T_A);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_int_equal(q.id, 0xbeef);
	assert_true(q.rd);
	assert_int_equal(q.opcode, 0);
	assert_string_equal(q.name, "Api.example.com");
	assert_int_equal(q.qtype, DNS_T_A);
	assert_int_equal(q.qclass, DNS_C_IN);
	assert_int_equal(q.question_end, n);
	/* an EDNS OPT record after the question is not read */
	b[11] = 1;
	const uint8_t opt[] = {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0};
	memcpy(b + n, opt, sizeof opt);
	assert_int_equal(dns_parse_query(b, n + sizeof opt, &q), 0);
	assert_int_equal(q.question_end, n);
	b[11] = 0;
	/* every prefix: drop (no header) or FORMERR, never a parsed question */
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = malloc(i ? i : 1);
		memcpy(p, b, i);
		int rc = dns_parse_query(p, i, &q);
		assert_int_equal(rc, i < 12 ? -1 : 1);
		free(p);
	}
	/* the root */
	n = mkquery(b, "\x00", 1, DNS_T_AAAA);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_string_equal(q.name, "");

	/* refused shapes */
	n = mkquery(b, NAME_EX, sizeof NAME_EX - 1, DNS_T_A);
	b[2] |= 0x80; /* a response */
	assert_int_equal(dns_parse_query(b, n, &q), -1);
	assert_string_equal(q.why, "a DNS response, not a query"); /* what the log says */
	b[2] = 0x01 | (2 << 3); /* opcode STATUS */
	assert_int_equal(dns_parse_query(b, n, &q), 1);
	assert_string_equal(q.why, "not a standard query (opcode is not 0)");
	assert_int_equal(q.opcode, 2);
	assert_int_equal(q.id, 0xbeef);
	assert_int_equal(q.question_end, 0);
	b[2] = 0x01;
	b[5] = 2; /* two questions */
	assert_int_equal(dns_parse_query(b, n, &q), 1);
	assert_string_equal(q.why, "not exactly one question");
	b[5] = 0;
	assert_int_equal(dns_parse_query(b, n, &q), 1);
	b[5] = 1;
	b[7] = 1; /* an answer in a query */
	assert_int_equal(dns_parse_query(b, n, &q), 1);
	assert_string_equal(q.why, "answer or authority records in a query");
	b[7] = 0;
	b[9] = 1; /* an authority record */
	assert_int_equal(dns_parse_query(b, n, &q), 1);
	b[9] = 0;
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	assert_null(q.why);

	static const char pointer[] = "a compression pointer in the question";
	static const char byte[] = "a name with a byte other than a letter, digit, '-' or '_'";
	struct {
		const char *wire;
		size_t n;
		const char *why;
	} badnames[] = {
		{"\xc0\x0c", 2, pointer},                     /* compression pointer */
		{"\x03" "api" "\xc0\x0c", 6, pointer},        /* pointer after a label */
		{"\x40" "x", 2, "a label longer than 63 bytes"}, /* reserved label type */
		{"\x03" "a.b" "\x00", 5, byte},                /* a dot inside a label */
		{"\x03" "a\0b" "\x00", 5, byte},               /* a NUL */
		{"\x03" "a b" "\x00", 5, byte},                /* a space */
		{"\x03" "a\xc3\xa9" "\x00", 5, byte},          /* a byte over 0x7f */
		{"\x03" "abc", 4, "the question is cut short"}, /* no end */
	};
	for (size_t i = 0; i < sizeof badnames / sizeof *badnames; i++) {
		n = mkquery(b, badnames[i].wire, badnames[i].n, DNS_T_A);
		if (dns_parse_query(b, n, &q) != 1)
			fail_msg("bad name %zu parsed", i);
		assert_int_equal(q.question_end, 0);
		assert_string_equal(q.why, badnames[i].why);
	}
	/* labels of 63 are fine, 64 is not; a name of 255 wire bytes is fine, 256 is not */
	uint8_t name[300];
	name[0] = 63;
	memset(name + 1, 'a', 63);
	name[64] = 0;
	n = mkquery(b, (char *)name, 65, DNS_T_A);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	name[0] = 64;
	memset(name + 1, 'a', 64);
	name[65] = 0;
	n = mkquery(b, (char *)name, 66, DNS_T_A);
	assert_int_equal(dns_parse_query(b, n, &q), 1);
	for (int extra = 0; extra <= 1; extra++) {
		/* 3 labels of 63 and one of 61 (+extra): 4*1 + 189 + 61 + 1 = 255 */
		size_t o = 0;
		for (int l = 0; l < 4; l++) {
			size_t ln = l < 3 ? 63 : (size_t)(61 + extra);
			name[o++] = (uint8_t)ln;
			memset(name + o, 'b', ln);
			o += ln;
		}
		name[o++] = 0;
		assert_int_equal(o, 255 + (size_t)extra);
		n = mkquery(b, (char *)name, o, DNS_T_A);
		assert_int_equal(dns_parse_query(b, n, &q), extra ? 1 : 0);
		if (!extra)
			assert_int_equal(strlen(q.name), 253);
	}
	assert_int_equal(dns_parse_query(b, 11, &q), -1);
	assert_string_equal(q.why, "shorter than a DNS header");
}

static void dns_responses(void **state)
{
	(void)state;
	uint8_t b[600], out[600];
	struct dns_query q;
	size_t n = mkquery(b, NAME_EX, sizeof NAME_EX - 1, DNS_T_A);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	struct dns_answer ans[3] = {
		{AF_INET, {192, 0, 2, 1}},
		{AF_INET6, {0x20, 0x01, 0x0d, 0xb8, [15] = 1}},
		{AF_INET, {192, 0, 2, 2}},
	};
	ssize_t len = dns_build_response(&q, DNS_NOERROR, ans, 3, 300, out, sizeof out);
	static const uint8_t want[] = {
		0xbe, 0xef, 0x81, 0x80, 0, 1, 0, 2, 0, 0, 0, 0,
		3, 'A', 'p', 'i', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1,
		0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0x01, 0x2c, 0, 4, 192, 0, 2, 1,
		0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0x01, 0x2c, 0, 4, 192, 0, 2, 2,
	};
	assert_int_equal(len, sizeof want);
	assert_memory_equal(out, want, sizeof want);

	/* AAAA: only the IPv6 answers, RD clear stays clear */
	b[2] = 0;
	n = mkquery(b, NAME_EX, sizeof NAME_EX - 1, DNS_T_AAAA);
	b[2] = 0;
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	len = dns_build_response(&q, DNS_NOERROR, ans, 3, 0x01020304, out, sizeof out);
	assert_int_equal(len, n + 28);
	assert_int_equal(out[2], 0x80);
	assert_int_equal(out[3], 0x80);
	assert_int_equal(out[7], 1);
	const uint8_t rr6[] = {0xc0, 0x0c, 0, 28, 0, 1, 1, 2, 3, 4, 0, 16, 0x20, 0x01, 0x0d, 0xb8};
	assert_memory_equal(out + n, rr6, sizeof rr6);

	/* the error codes: header and question only */
	static const int rcodes[] = {DNS_NXDOMAIN, DNS_REFUSED, DNS_SERVFAIL, DNS_NOTIMP,
				     DNS_FORMERR};
	for (size_t i = 0; i < 5; i++) {
		len = dns_build_response(&q, rcodes[i], ans, 3, 300, out, sizeof out);
		assert_int_equal(len, n);
		assert_int_equal(out[3], 0x80 | rcodes[i]);
		assert_int_equal(out[5], 1);
		assert_int_equal(out[7], 0);
		assert_memory_equal(out + 12, b + 12, n - 12);
	}
	/* other types: NOERROR, no answers */
	n = mkquery(b, NAME_EX, sizeof NAME_EX - 1, 15 /* MX */);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	len = dns_build_response(&q, DNS_NOERROR, ans, 3, 300, out, sizeof out);
	assert_int_equal(len, n);
	assert_int_equal(out[7], 0);

	/* truncation: room for one A answer of two sets TC */
	n = mkquery(b, NAME_EX, sizeof NAME_EX - 1, DNS_T_A);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	len = dns_build_response(&q, DNS_NOERROR, ans, 3, 300, out, n + 16 + 15);
	assert_int_equal(len, n + 16);
	assert_int_equal(out[2], 0x81 | 0x02);
	assert_int_equal(out[7], 1);
	len = dns_build_response(&q, DNS_NOERROR, ans, 3, 300, out, n + 32);
	assert_int_equal(len, n + 32);
	assert_int_equal(out[2], 0x81);
	/* not even the question fits */
	assert_int_equal(dns_build_response(&q, DNS_NOERROR, ans, 3, 300, out, n - 1), -1);
	/* many answers in 512 bytes: as many as fit, TC */
	struct dns_answer many[40];
	for (size_t i = 0; i < 40; i++)
		many[i] = (struct dns_answer){AF_INET, {10, 0, 0, (uint8_t)i}};
	len = dns_build_response(&q, DNS_NOERROR, many, 40, 300, out, DNS_UDP_MAX);
	assert_int_equal(len, n + 16 * ((DNS_UDP_MAX - n) / 16));
	assert_true(out[2] & 0x02);

	/* FORMERR / NOTIMP for a query whose question was not read: the header alone */
	b[2] = 0x01 | (4 << 3);
	assert_int_equal(dns_parse_query(b, n, &q), 1);
	len = dns_build_response(&q, DNS_NOTIMP, NULL, 0, 0, out, sizeof out);
	const uint8_t hdr[] = {0xbe, 0xef, 0x80 | (4 << 3) | 1, 0x84, 0, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(len, 12);
	assert_memory_equal(out, hdr, 12);
	assert_int_equal(dns_build_response(&q, DNS_NOTIMP, NULL, 0, 0, out, 11), -1);

	/* the root name's answer points at the root */
	n = mkquery(b, "\x00", 1, DNS_T_A);
	assert_int_equal(dns_parse_query(b, n, &q), 0);
	len = dns_build_response(&q, DNS_NOERROR, ans, 1, 1, out, sizeof out);
	assert_int_equal(len, 12 + 5 + 16);
	assert_memory_equal(out + 12, b + 12, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(http_connect),    cmocka_unit_test(http_plain_upstream),
		cmocka_unit_test(http_refused),    cmocka_unit_test(http_caps),
		cmocka_unit_test(http_responses),  cmocka_unit_test(socks_greeting),
		cmocka_unit_test(http_origin),
		cmocka_unit_test(socks_request),   cmocka_unit_test(socks_reply),
		cmocka_unit_test(dns_query_parse), cmocka_unit_test(dns_responses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
