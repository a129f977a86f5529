/* httpreq: the proxy's HTTP request head parser and the responses it writes itself. Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 16384  /* a request head larger than this is refused (431) */

enum http_parse { HP_NEED_MORE = 0, HP_OK = 1, HP_BAD = -1, HP_TOO_BIG = -2, HP_NOT_HTTP = -3 };

struct http_req {
	char method[16];
	bool connect;         /* "CONNECT host:port HTTP/1.x" */
	char host[256];       /* from the authority (CONNECT) or the absolute URI (http:// only),
			       * not yet normalized; an IPv6 literal without its brackets */
	uint16_t port;        /* given, or 80 for http:// (CONNECT requires one) */
	char host_header[256];/* the host of the Host header ("" when there is none), not yet
			       * normalized, without its port or brackets */
	size_t head_len;      /* bytes of the head in buf, through the empty line */
	size_t target_off, target_len; /* the request target in buf */
	/* the body's framing (doc/design.md §4d: requests are followed one after another inside
	 * an inspected tunnel): Content-Length (has_clen, clen) or Transfer-Encoding (te; chunked
	 * when its value is exactly "chunked"); upgrade: an Upgrade header */
	bool has_clen, te, chunked, upgrade;
	uint64_t clen;
	/* plain HTTP only: the head to send upstream — origin-form target, Proxy-* and hop-by-hop
	 * headers (Connection and the ones it names, Keep-Alive, TE, Trailer, Upgrade) removed,
	 * Host set from the URI, "Connection: close" added — so one connection reaches one host */
	char *upstream;
	size_t upstream_len;
	const char *error;    /* HP_BAD / HP_TOO_BIG: a short static reason */
};

/* Parse the head at the start of buf. HP_NEED_MORE when no complete head yet (and len <
 * HTTP_HEAD_MAX). On HP_OK the caller owns out->upstream (http_req_free). Strict (limits in
 * doc/design.md §4): a bad byte, request line or header line is HP_BAD as soon as it has
 * arrived, so a prefix of a valid head is always HP_NEED_MORE; more than 100 header lines is
 * HP_TOO_BIG. On anything but HP_OK only out->error is set. */
int http_parse_request(const char *buf, size_t len, struct http_req *out);
void http_req_free(struct http_req *r);

/* The first request head of a stream sent to a server (inside a tunnel the proxy approved),
 * to check the name it asks for. Leading empty lines are skipped (servers do). HP_NEED_MORE
 * until the first line is whole (a prefix already impossible for a request line is
 * HP_NOT_HTTP at once); HP_NOT_HTTP when that line is not "TOKEN SP … HTTP/…" (another
 * protocol, or HTTP/0.9, which names no host); otherwise the head as http_parse_request reads
 * it, but any target: HP_OK with out->host_header, and out->host (with out->port when given)
 * for an absolute-form or authority-form target (a server routes by it over Host), "" for
 * origin-form; HP_BAD for another version than HTTP/1.0 and 1.1 (HTTP/2's preface among
 * them), a malformed line, disagreeing Host headers, a Host that is not host[:port].
 * out->head_len counts the skipped lines; out->upstream stays NULL. */
int http_parse_origin(const char *buf, size_t len, struct http_req *out);

/* A whole response: status line, "X-Proxy-Error: <reason>" (when reason), Content-Type
 * text/plain, Content-Length, "Connection: close", and the reason plus "\n" as the body.
 * code is 403, 400, 405, 431, 502 or 504 (or 200 for "Connection established", no body). */
char *http_response(int code, const char *reason, size_t *len);
