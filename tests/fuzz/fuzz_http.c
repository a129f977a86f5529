/* Fuzz target: the proxy's HTTP request head parser and its own responses (doc/design.md §4).
 * The jail writes these bytes. Invariants: no read past len (the input is copied to a buffer
 * of exactly its size); an OK head ends in CRLFCRLF within HTTP_HEAD_MAX and every shorter
 * prefix of it is NEED_MORE; the upstream head of a plain request is origin-form, has exactly
 * one Host and one "Connection: close", no Proxy-* or hop-by-hop header, no bare CR or LF, and
 * parsing it again (put back in absolute form) gives the same head; a response is one status
 * line, headers without controls, and a body of its Content-Length. The same bytes as the first
 * request inside a tunnel (http_parse_origin): what the proxy parser takes as a request is never
 * "not HTTP"; an OK head ends in CRLFCRLF, its shorter prefixes are NEED_MORE, its hosts are
 * host characters or an IPv6 literal. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/net/httpreq.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int parse_copy(const char *s, size_t n, struct http_req *r)
{
	char *p = fuzz_dup(s, n);
	int rc = http_parse_request(p, n, r);
	free(p);
	return rc;
}

static bool starts_ci(const char *line, size_t n, const char *lit)
{
	return n >= strlen(lit) && strncasecmp(line, lit, strlen(lit)) == 0;
}

static void check_upstream(const struct http_req *r)
{
	const char *u = r->upstream;
	FUZZ_CHECK(u && r->upstream_len == strlen(u));
	FUZZ_CHECK(r->upstream_len >= 4 && memcmp(u + r->upstream_len - 4, "\r\n\r\n", 4) == 0);
	size_t ml = strlen(r->method);
	FUZZ_CHECK(strncmp(u, r->method, ml) == 0 && u[ml] == ' ' && u[ml + 1] == '/');
	int host = 0, conn = 0, lines = 0;
	const char *end = u + r->upstream_len - 2, *line = u, *hostline = NULL;
	for (int i = 0; line < end; i++) {
		const char *nl = strstr(line, "\r\n");
		FUZZ_CHECK(nl && nl < end + 1);
		size_t n = (size_t)(nl - line);
		for (size_t k = 0; k < n; k++)
			FUZZ_CHECK(line[k] != '\r' && line[k] != '\n' && line[k] != '\0');
		if (i > 0) {
			FUZZ_CHECK(!starts_ci(line, n, "proxy-"));
			FUZZ_CHECK(!starts_ci(line, n, "keep-alive:") && !starts_ci(line, n, "te:") &&
			      !starts_ci(line, n, "trailer:") && !starts_ci(line, n, "upgrade:"));
			if (starts_ci(line, n, "host:"))
				host++, hostline = line;
			if (starts_ci(line, n, "connection:")) {
				conn++;
				FUZZ_CHECK(n == 17 && memcmp(line, "Connection: close", 17) == 0);
			}
		}
		line = nl + 2;
		lines++;
	}
	FUZZ_CHECK(host == 1 && conn == 1);
	FUZZ_CHECK(strncmp(hostline, "Host: ", 6) == 0);

	/* origin-form as it is: refused as not a proxy request */
	struct http_req again;
	FUZZ_CHECK(parse_copy(u, r->upstream_len, &again) == HP_BAD);
	FUZZ_CHECK(strstr(again.error, "not a proxy request"));

	/* back in absolute form it parses to the same head */
	const char *sp = strchr(u, ' ');
	size_t hostlen = strcspn(hostline + 6, "\r");
	size_t n = r->upstream_len + 7 + hostlen;
	char *abs = malloc(n);
	FUZZ_CHECK(abs);
	size_t o = 0;
	memcpy(abs, u, (size_t)(sp + 1 - u)), o += (size_t)(sp + 1 - u);
	memcpy(abs + o, "http://", 7), o += 7;
	memcpy(abs + o, hostline + 6, hostlen), o += hostlen;
	memcpy(abs + o, sp + 1, r->upstream_len - (size_t)(sp + 1 - u)),
		o += r->upstream_len - (size_t)(sp + 1 - u);
	FUZZ_CHECK(o == n);
	if (n <= HTTP_HEAD_MAX && lines <= 101) { /* the request line and 100 headers */
		int rc = parse_copy(abs, n, &again);
		FUZZ_CHECK(rc == HP_OK);
		FUZZ_CHECK(again.port == r->port && strcmp(again.host, r->host) == 0);
		FUZZ_CHECK(again.upstream_len == r->upstream_len &&
		      memcmp(again.upstream, r->upstream, r->upstream_len) == 0);
		http_req_free(&again);
	}
	free(abs);
}

static void check_response(const uint8_t *data, size_t size)
{
	static const int codes[] = {200, 400, 403, 405, 431, 502, 504, 0};
	int code = size ? codes[data[0] % 8] : 403;
	char *reason = malloc(size + 1);
	FUZZ_CHECK(reason);
	memcpy(reason, data, size);
	reason[size] = '\0';
	size_t n;
	char *s = http_response(code, size > 1 ? reason + 1 : NULL, &n);
	FUZZ_CHECK(s && n == strlen(s));
	const char *blank = strstr(s, "\r\n\r\n");
	FUZZ_CHECK(blank);
	for (const char *p = s; p < blank; p++)
		FUZZ_CHECK(((unsigned char)*p >= 0x20 && *p != 0x7f) ||
		      (p[0] == '\r' && p[1] == '\n') || (p[0] == '\n' && p[-1] == '\r'));
	const char *cl = strstr(s, "\r\nContent-Length: ");
	if (code == 200) {
		FUZZ_CHECK(!cl && blank + 4 == s + n);
	} else {
		FUZZ_CHECK(cl && cl < blank);
		FUZZ_CHECK((size_t)strtoul(cl + 18, NULL, 10) == n - (size_t)(blank + 4 - s));
		FUZZ_CHECK(s[n - 1] == '\n' && !memchr(blank + 4, '\n', n - (size_t)(blank + 4 - s) - 1));
	}
	free(s);
	free(reason);
}

static void check_host_text(const char *h)
{
	bool v6 = strchr(h, ':') != NULL;
	for (const char *q = h; *q; q++)
		FUZZ_CHECK((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
			   (*q >= '0' && *q <= '9') || *q == '-' || *q == '.' || *q == '_' ||
			   (v6 && (*q == ':' || *q == '%')));
}

static int origin_copy(const char *s, size_t n, struct http_req *r)
{
	char *p = fuzz_dup(s, n);
	int rc = http_parse_origin(p, n, r);
	free(p);
	return rc;
}

static void check_origin(const uint8_t *data, size_t size, int proxy_rc)
{
	struct http_req r;
	int rc = origin_copy((const char *)data, size, &r);
	FUZZ_CHECK(rc == HP_OK || rc == HP_NEED_MORE || rc == HP_BAD || rc == HP_TOO_BIG ||
		   rc == HP_NOT_HTTP);
	FUZZ_CHECK(!r.upstream);
	if (proxy_rc == HP_OK)
		FUZZ_CHECK(rc == HP_OK);
	if (rc != HP_OK) {
		FUZZ_CHECK(!r.host[0] && !r.host_header[0] && (rc == HP_NEED_MORE) == !r.error);
		return;
	}
	FUZZ_CHECK(r.head_len >= 4 && r.head_len <= size &&
		   memcmp(data + r.head_len - 4, "\r\n\r\n", 4) == 0);
	check_host_text(r.host);
	check_host_text(r.host_header);
	struct http_req r2;
	FUZZ_CHECK(origin_copy((const char *)data, r.head_len - 1, &r2) == HP_NEED_MORE);
	FUZZ_CHECK(origin_copy((const char *)data, size % r.head_len, &r2) == HP_NEED_MORE);
	FUZZ_CHECK(origin_copy((const char *)data, r.head_len, &r2) == HP_OK &&
		   !strcmp(r2.host, r.host) && !strcmp(r2.host_header, r.host_header));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_req r;
	int rc = parse_copy((const char *)data, size, &r);
	FUZZ_CHECK(rc == HP_OK || rc == HP_NEED_MORE || rc == HP_BAD || rc == HP_TOO_BIG);
	check_origin(data, size, rc);
	if (rc != HP_OK) {
		FUZZ_CHECK(!r.upstream && !r.host[0] && (rc == HP_NEED_MORE) == !r.error);
		if (rc == HP_NEED_MORE)
			FUZZ_CHECK(size < HTTP_HEAD_MAX);
	} else {
		FUZZ_CHECK(!r.error && r.head_len >= 4 && r.head_len <= size &&
		      r.head_len <= HTTP_HEAD_MAX);
		FUZZ_CHECK(memcmp(data + r.head_len - 4, "\r\n\r\n", 4) == 0);
		FUZZ_CHECK(r.host[0] && r.port && strlen(r.method) < sizeof r.method);
		check_host_text(r.host_header);
		FUZZ_CHECK(r.connect == !r.upstream);
		if (!r.connect)
			check_upstream(&r);
		/* the bytes after the head change nothing; a shorter prefix is NEED_MORE */
		struct http_req r2;
		FUZZ_CHECK(parse_copy((const char *)data, r.head_len, &r2) == HP_OK);
		FUZZ_CHECK(r2.upstream_len == r.upstream_len && r2.port == r.port &&
		      (!r.upstream || memcmp(r2.upstream, r.upstream, r.upstream_len) == 0));
		http_req_free(&r2);
		FUZZ_CHECK(parse_copy((const char *)data, r.head_len - 1, &r2) == HP_NEED_MORE);
		FUZZ_CHECK(parse_copy((const char *)data, size % r.head_len, &r2) == HP_NEED_MORE);
		http_req_free(&r);
	}
	check_response(data, size);
	return 0;
}
