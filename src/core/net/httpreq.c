/* httpreq: the proxy's HTTP request head parser (RFC 9112, strictly) and the responses the
 * proxy writes itself. Pure: no syscalls. Limits in doc/design.md §4. */
#include "core/net/httpreq.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

#define HTTP_HEADERS_MAX 100 /* header lines; more is refused (431) */

struct span {
	const char *p;
	size_t n;
};

struct header {
	struct span name, value; /* value without the surrounding whitespace */
};

struct head {
	struct span method, target, version;
	struct header h[HTTP_HEADERS_MAX];
	size_t nh;
};

static int bad(struct http_req *out, int rc, const char *why)
{
	out->error = why;
	return rc;
}

/* tchar of RFC 9110 §5.6.2 */
static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_token(struct span s)
{
	if (!s.n)
		return false;
	for (size_t i = 0; i < s.n; i++)
		if (!is_tchar((unsigned char)s.p[i]))
			return false;
	return true;
}

static bool span_ieq(struct span s, const char *lit)
{
	return s.n == strlen(lit) && strncasecmp(s.p, lit, s.n) == 0;
}

static bool span_iprefix(struct span s, const char *lit)
{
	return s.n >= strlen(lit) && strncasecmp(s.p, lit, strlen(lit)) == 0;
}

/* "METHOD SP TARGET SP HTTP/1.x", single spaces, nothing else. */
static int parse_request_line(struct span l, struct head *h, struct http_req *out)
{
	const char *sp1 = memchr(l.p, ' ', l.n);
	if (!sp1)
		return bad(out, HP_BAD, "malformed request line");
	const char *rest = sp1 + 1;
	size_t restn = l.n - (size_t)(rest - l.p);
	const char *sp2 = memchr(rest, ' ', restn);
	if (!sp2)
		return bad(out, HP_BAD, "malformed request line");
	h->method = (struct span){l.p, (size_t)(sp1 - l.p)};
	h->target = (struct span){rest, (size_t)(sp2 - rest)};
	h->version = (struct span){sp2 + 1, l.n - (size_t)(sp2 + 1 - l.p)};
	if (!is_token(h->method))
		return bad(out, HP_BAD, "malformed request line: bad method");
	if (h->method.n >= sizeof out->method)
		return bad(out, HP_BAD, "method name too long");
	if (!h->target.n)
		return bad(out, HP_BAD, "malformed request line: empty target");
	for (size_t i = 0; i < h->target.n; i++) {
		unsigned char c = (unsigned char)h->target.p[i];
		if (c <= 0x20 || c >= 0x7f)
			return bad(out, HP_BAD, "malformed request line: bad character in target");
	}
	if (!(h->version.n == 8 && memcmp(h->version.p, "HTTP/1.", 7) == 0 &&
	      (h->version.p[7] == '0' || h->version.p[7] == '1')))
		return bad(out, HP_BAD, "unsupported HTTP version (HTTP/1.0 and 1.1 only)");
	return HP_OK;
}

/* "name: value": name a token immediately followed by ':', value of visible characters,
 * spaces and tabs (obs-text allowed), no controls. */
static int parse_header(struct span l, struct header *hd, struct http_req *out)
{
	if (l.p[0] == ' ' || l.p[0] == '\t')
		return bad(out, HP_BAD, "obsolete line folding in a header");
	const char *colon = memchr(l.p, ':', l.n);
	if (!colon)
		return bad(out, HP_BAD, "malformed header line (no colon)");
	hd->name = (struct span){l.p, (size_t)(colon - l.p)};
	if (!is_token(hd->name))
		return bad(out, HP_BAD, "malformed header name");
	const char *v = colon + 1, *end = l.p + l.n;
	for (const char *q = v; q < end; q++) {
		unsigned char c = (unsigned char)*q;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return bad(out, HP_BAD, "control character in a header value");
	}
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	hd->value = (struct span){v, (size_t)(end - v)};
	return HP_OK;
}

/* Port digits: 1..65535, at most 5 digits, nothing else. */
static bool parse_port(struct span s, uint16_t *port)
{
	if (!s.n || s.n > 5)
		return false;
	unsigned v = 0;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s.p[i] - '0');
	}
	if (v == 0 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

static bool is_host_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

/* "host[:port]" or "[v6][:port]" into host (256 bytes; v6 without brackets) and *port_out
 * (left alone when absent; *has_port says whether it was given). */
static int parse_authority_to(struct span a, struct http_req *out, char *host_out,
			      uint16_t *port_out, bool *has_port)
{
	if (memchr(a.p, '@', a.n))
		return bad(out, HP_BAD, "user information in the request target is refused");
	struct span host, port = {NULL, 0};
	*has_port = false;
	if (a.n && a.p[0] == '[') {
		const char *rb = memchr(a.p, ']', a.n);
		if (!rb)
			return bad(out, HP_BAD, "unterminated IPv6 literal in the request target");
		host = (struct span){a.p + 1, (size_t)(rb - a.p - 1)};
		size_t after = a.n - (size_t)(rb + 1 - a.p);
		if (after) {
			if (rb[1] != ':')
				return bad(out, HP_BAD, "malformed authority after an IPv6 literal");
			port = (struct span){rb + 2, after - 1};
			*has_port = true;
		}
		char tmp[INET6_ADDRSTRLEN];
		unsigned char bin[16];
		if (!host.n || host.n >= sizeof tmp)
			return bad(out, HP_BAD, "invalid IPv6 literal in the request target");
		memcpy(tmp, host.p, host.n);
		tmp[host.n] = '\0';
		if (inet_pton(AF_INET6, tmp, bin) != 1)
			return bad(out, HP_BAD, "invalid IPv6 literal in the request target");
	} else {
		const char *colon = memchr(a.p, ':', a.n);
		host = (struct span){a.p, colon ? (size_t)(colon - a.p) : a.n};
		if (colon) {
			port = (struct span){colon + 1, a.n - host.n - 1};
			*has_port = true;
		}
		if (!host.n)
			return bad(out, HP_BAD, "empty host in the request target");
		for (size_t i = 0; i < host.n; i++)
			if (!is_host_char((unsigned char)host.p[i]))
				return bad(out, HP_BAD, "invalid character in the host name");
	}
	if (host.n >= sizeof out->host)
		return bad(out, HP_BAD, "host name longer than 255 characters");
	if (*has_port && !parse_port(port, port_out))
		return bad(out, HP_BAD, "invalid port (a number from 1 to 65535)");
	memcpy(host_out, host.p, host.n);
	host_out[host.n] = '\0';
	return HP_OK;
}

/* The request target's authority into out->host and out->port. */
static int parse_authority(struct span a, struct http_req *out, bool *has_port)
{
	return parse_authority_to(a, out, out->host, &out->port, has_port);
}

/* Does the comma-separated token list of a Connection header name `name`? -1: not a list. */
static int conn_lists(struct span list, struct span name)
{
	size_t i = 0;
	int found = 0;
	while (i <= list.n) {
		size_t j = i;
		while (j < list.n && list.p[j] != ',')
			j++;
		struct span el = {list.p + i, j - i};
		while (el.n && (el.p[0] == ' ' || el.p[0] == '\t'))
			el.p++, el.n--;
		while (el.n && (el.p[el.n - 1] == ' ' || el.p[el.n - 1] == '\t'))
			el.n--;
		if (el.n && !is_token(el))
			return -1;
		if (el.n && el.n == name.n && strncasecmp(el.p, name.p, el.n) == 0)
			found = 1;
		i = j + 1;
	}
	return found;
}

static bool is_hop_by_hop(const struct head *h, struct span name)
{
	/* "Close" is a reserved field name (RFC 9110 §18.4): with our "Connection: close" the
	 * server would take it for a connection option, so it never crosses either */
	static const char *const fixed[] = {"Connection", "Keep-Alive", "TE", "Trailer",
					    "Upgrade", "Host", "Close"};
	if (span_iprefix(name, "Proxy-"))
		return true;
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
		if (span_ieq(name, fixed[i]))
			return true;
	for (size_t i = 0; i < h->nh; i++)
		if (span_ieq(h->h[i].name, "Connection") && conn_lists(h->h[i].value, name) == 1)
			return true;
	return false;
}

/* Checks across the headers: agreeing Host headers, a well-formed Connection list that does
 * not name the message's framing, no Content-Length together with Transfer-Encoding and no
 * two Content-Lengths that disagree. */
static int check_headers(const struct head *h, struct http_req *out)
{
	const struct header *host = NULL, *clen = NULL;
	bool te = false;
	for (size_t i = 0; i < h->nh; i++) {
		const struct header *x = &h->h[i];
		if (span_ieq(x->name, "Host")) {
			if (host && (host->value.n != x->value.n ||
				     strncasecmp(host->value.p, x->value.p, x->value.n) != 0))
				return bad(out, HP_BAD, "two Host headers that disagree");
			host = x;
		} else if (span_ieq(x->name, "Connection")) {
			if (conn_lists(x->value, (struct span){"", 0}) < 0)
				return bad(out, HP_BAD, "malformed Connection header");
			if (conn_lists(x->value, (struct span){"content-length", 14}) ||
			    conn_lists(x->value, (struct span){"transfer-encoding", 17}))
				return bad(out, HP_BAD, "Connection header names the message framing");
		} else if (span_ieq(x->name, "Content-Length")) {
			bool digits = x->value.n && x->value.n <= 18;
			for (size_t k = 0; digits && k < x->value.n; k++)
				digits = x->value.p[k] >= '0' && x->value.p[k] <= '9';
			if (!digits)
				return bad(out, HP_BAD, "invalid Content-Length");
			if (clen && (clen->value.n != x->value.n ||
				     memcmp(clen->value.p, x->value.p, x->value.n) != 0))
				return bad(out, HP_BAD, "two Content-Length headers that disagree");
			clen = x;
			out->has_clen = true;
			out->clen = 0;
			for (size_t k = 0; k < x->value.n; k++)
				out->clen = out->clen * 10 + (uint64_t)(x->value.p[k] - '0');
		} else if (span_ieq(x->name, "Transfer-Encoding")) {
			out->chunked = !te && span_ieq(x->value, "chunked");
			te = true;
		} else if (span_ieq(x->name, "Upgrade")) {
			out->upgrade = true;
		}
	}
	if (te && clen)
		return bad(out, HP_BAD, "both Content-Length and Transfer-Encoding");
	out->te = te;
	if (host && host->value.n) {
		uint16_t port;
		bool has_port;
		if (parse_authority_to(host->value, out, out->host_header, &port, &has_port) !=
		    HP_OK)
			return bad(out, HP_BAD, "invalid Host header (host[:port] expected)");
	}
	return HP_OK;
}

/* The request target of a non-CONNECT request: absolute-form "http://authority[path][?q]". */
static int parse_absolute(const struct head *h, struct http_req *out, struct span *path)
{
	struct span t = h->target;
	if (t.p[0] == '/')
		return bad(out, HP_BAD,
			   "not a proxy request: an origin-form target (\"GET /path\") was sent to "
			   "the proxy; use http://host/path or CONNECT");
	if (span_ieq(t, "*"))
		return bad(out, HP_BAD, "not a proxy request: asterisk-form target");
	if (!span_iprefix(t, "http://")) {
		if (span_iprefix(t, "https://"))
			return bad(out, HP_BAD, "https:// URIs go through CONNECT, not plain HTTP");
		return bad(out, HP_BAD, "only http:// absolute URIs are proxied (https through CONNECT)");
	}
	struct span rest = {t.p + 7, t.n - 7};
	size_t an = 0;
	while (an < rest.n && rest.p[an] != '/' && rest.p[an] != '?' && rest.p[an] != '#')
		an++;
	if (memchr(rest.p, '#', rest.n))
		return bad(out, HP_BAD, "fragment in the request target");
	bool has_port;
	int rc = parse_authority((struct span){rest.p, an}, out, &has_port);
	if (rc != HP_OK)
		return rc;
	if (!has_port)
		out->port = 80;
	*path = (struct span){rest.p + an, rest.n - an};
	return HP_OK;
}

/* The method and target: CONNECT host:port, or another method with an http:// URI. */
static int parse_target(const struct head *h, struct http_req *out, struct span *path)
{
	memcpy(out->method, h->method.p, h->method.n);
	out->method[h->method.n] = '\0';
	out->connect = h->method.n == 7 && memcmp(h->method.p, "CONNECT", 7) == 0;
	if (!out->connect)
		return parse_absolute(h, out, path);
	if (h->target.p[0] == '/' || span_iprefix(h->target, "http://"))
		return bad(out, HP_BAD, "CONNECT needs host:port as its target");
	bool has_port;
	int rc = parse_authority(h->target, out, &has_port);
	if (rc == HP_OK && !has_port)
		rc = bad(out, HP_BAD, "CONNECT without a port");
	return rc;
}

/* ---- a request sent to a server (inside a tunnel) ---- */

/* Is the first line (without its line end) "TOKEN SP-or-HTAB … HTTP/…" (in any case)? Loose,
 * so that a line a lenient server would take as a request is never waved through as another
 * protocol; it is parsed strictly after. */
static bool looks_http(struct span l)
{
	size_t i = 0;
	while (i < l.n && is_tchar((unsigned char)l.p[i]))
		i++;
	if (i == 0 || i == l.n || (l.p[i] != ' ' && l.p[i] != '\t'))
		return false;
	for (; i + 5 <= l.n; i++)
		if (strncasecmp(l.p + i, "HTTP/", 5) == 0)
			return true;
	return false;
}

/* The first line of a stream sent to a server: HP_NOT_HTTP when it is not a request line, or
 * cannot start one yet (a token, then a space or tab, then no control byte); HP_NEED_MORE when
 * it may be one (scan_lines then reads it strictly). */
static int first_line(const char *buf, size_t len, struct http_req *out)
{
	const char *lf = len ? memchr(buf, '\n', len) : NULL;
	if (lf) {
		struct span l = {buf, (size_t)(lf - buf)};
		if (l.n && l.p[l.n - 1] == '\r')
			l.n--;
		return looks_http(l) ? HP_NEED_MORE : bad(out, HP_NOT_HTTP, "not an HTTP request");
	}
	size_t i = 0;
	while (i < len && is_tchar((unsigned char)buf[i]))
		i++;
	if (i < len && (i == 0 || (buf[i] != ' ' && buf[i] != '\t')))
		return bad(out, HP_NOT_HTTP, "not an HTTP request");
	for (; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
			return bad(out, HP_NOT_HTTP, "not an HTTP request");
	}
	return HP_NEED_MORE;
}

/* The target of a request sent to a server: origin-form and "*" name no host; absolute-form
 * (any scheme) and CONNECT's authority-form do. */
static int origin_target(const struct head *h, struct http_req *out)
{
	memcpy(out->method, h->method.p, h->method.n);
	out->method[h->method.n] = '\0';
	out->connect = h->method.n == 7 && memcmp(h->method.p, "CONNECT", 7) == 0;
	struct span t = h->target;
	bool has_port;
	if (out->connect)
		return parse_authority(t, out, &has_port);
	if (t.p[0] == '/' || span_ieq(t, "*"))
		return HP_OK;
	const char *sep = NULL;
	for (size_t i = 0; i + 3 <= t.n && !sep; i++)
		if (memcmp(t.p + i, "://", 3) == 0)
			sep = t.p + i;
	if (!sep)
		return bad(out, HP_BAD, "malformed request target");
	struct span rest = {sep + 3, t.n - (size_t)(sep + 3 - t.p)};
	size_t an = 0;
	while (an < rest.n && rest.p[an] != '/' && rest.p[an] != '?' && rest.p[an] != '#')
		an++;
	return parse_authority((struct span){rest.p, an}, out, &has_port);
}

static void build_upstream(const struct head *h, struct span path, struct http_req *out)
{
	struct strbuf b = STRBUF_INIT;
	sb_addn(&b, h->method.p, h->method.n);
	sb_add(&b, " ");
	if (!path.n || path.p[0] != '/')
		sb_add(&b, "/");
	sb_addn(&b, path.p, path.n);
	sb_add(&b, " ");
	sb_addn(&b, h->version.p, h->version.n);
	sb_add(&b, "\r\nHost: ");
	bool v6 = strchr(out->host, ':') != NULL;
	sb_addf(&b, "%s%s%s", v6 ? "[" : "", out->host, v6 ? "]" : "");
	if (out->port != 80)
		sb_addf(&b, ":%u", (unsigned)out->port);
	sb_add(&b, "\r\n");
	for (size_t i = 0; i < h->nh; i++) {
		if (is_hop_by_hop(h, h->h[i].name))
			continue;
		sb_addn(&b, h->h[i].name.p, h->h[i].name.n);
		sb_add(&b, ": ");
		sb_addn(&b, h->h[i].value.p, h->h[i].value.n);
		sb_add(&b, "\r\n");
	}
	sb_add(&b, "Connection: close\r\n\r\n");
	out->upstream_len = b.len;
	out->upstream = sb_steal(&b);
}

/* Split the bytes into CRLF lines; validate each complete one as it comes (so a bad request
 * line is refused before the rest arrives). Returns HP_OK with the head's end in *end. */
static int scan_lines(const char *buf, size_t len, bool origin, struct head *h,
		      struct http_req *out, struct span *path, size_t *end)
{
	size_t lim = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	size_t start = 0, nlines = 0;
	for (size_t i = 0; i < lim; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c == '\0')
			return bad(out, HP_BAD, "NUL byte in the request head");
		if (c == '\r') {
			if (i + 1 < len && buf[i + 1] != '\n')
				return bad(out, HP_BAD, "bare CR in the request head");
			continue;
		}
		if (c != '\n')
			continue;
		if (i == 0 || buf[i - 1] != '\r')
			return bad(out, HP_BAD, "bare LF in the request head (lines end with CRLF)");
		struct span l = {buf + start, i - 1 - start};
		start = i + 1;
		if (nlines == 0) {
			if (!l.n)
				return bad(out, HP_BAD, "empty request line");
			int rc = parse_request_line(l, h, out);
			if (rc == HP_OK)
				rc = origin ? origin_target(h, out) : parse_target(h, out, path);
			if (rc != HP_OK)
				return rc;
		} else if (!l.n) {
			*end = i + 1;
			return HP_OK;
		} else {
			if (h->nh == HTTP_HEADERS_MAX)
				return bad(out, HP_TOO_BIG, "too many header lines");
			int rc = parse_header(l, &h->h[h->nh++], out);
			if (rc != HP_OK)
				return rc;
		}
		nlines++;
	}
	if (len >= HTTP_HEAD_MAX)
		return bad(out, HP_TOO_BIG, "request head larger than 16 KiB");
	return HP_NEED_MORE;
}

static int parse_head(const char *buf, size_t len, bool origin, struct http_req *out)
{
	memset(out, 0, sizeof *out);
	struct head hb; /* filled as the lines are read: only nh needs a start */
	struct head *h = &hb;
	h->nh = 0;
	size_t skip = 0, end = 0;
	while (origin && skip < len && (buf[skip] == '\r' || buf[skip] == '\n'))
		skip++;
	if (skip >= HTTP_HEAD_MAX)
		return bad(out, HP_TOO_BIG, "request head larger than 16 KiB");
	struct span path = {NULL, 0};
	int rc = origin ? first_line(buf + skip, len - skip, out) : HP_NEED_MORE;
	if (rc == HP_NEED_MORE)
		rc = scan_lines(buf + skip, len - skip, origin, h, out, &path, &end);
	if (rc == HP_OK)
		rc = check_headers(h, out);
	if (rc == HP_OK) {
		out->head_len = skip + end;
		out->target_off = (size_t)(h->target.p - buf);
		out->target_len = h->target.n;
		if (!origin && !out->connect)
			build_upstream(h, path, out);
	} else { /* nothing half-filled: only error is meaningful */
		struct http_req z = {.error = out->error};
		*out = z;
	}
	return rc;
}

int http_parse_request(const char *buf, size_t len, struct http_req *out)
{
	return parse_head(buf, len, false, out);
}

int http_parse_origin(const char *buf, size_t len, struct http_req *out)
{
	return parse_head(buf, len, true, out);
}

void http_req_free(struct http_req *r)
{
	free(r->upstream);
	r->upstream = NULL;
	r->upstream_len = 0;
}

static const char *status_text(int code)
{
	switch (code) {
	case 200: return "Connection established";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 504: return "Gateway Timeout";
	default: return "Error";
	}
}

#define HTTP_REASON_MAX 1024 /* a longer reason is cut */

char *http_response(int code, const char *reason, size_t *len)
{
	struct strbuf b = STRBUF_INIT;
	if (code < 100 || code > 599)
		code = 502;
	sb_addf(&b, "HTTP/1.1 %d %s\r\n", code, status_text(code));
	if (code == 200) {
		sb_add(&b, "\r\n");
		*len = b.len;
		return sb_steal(&b);
	}
	/* one line, no controls, bounded: the reason may carry a host name the jail chose */
	char clean[HTTP_REASON_MAX + 1];
	const char *r = reason ? reason : status_text(code);
	size_t n = 0;
	for (; r[n] && n < HTTP_REASON_MAX; n++) {
		unsigned char c = (unsigned char)r[n];
		clean[n] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	clean[n] = '\0';
	if (reason)
		sb_addf(&b, "X-Proxy-Error: %s\r\n", clean);
	sb_addf(&b,
		"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
		"Connection: close\r\n\r\n%s\n",
		n + 1, clean);
	*len = b.len;
	return sb_steal(&b);
}
