/* httpreq: the proxy's HTTP request head parser and the responses it writes itself. Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 16384  /* a request head larger than this is refused (431) */

enum http_parse { HP_NEED_MORE = 0, HP_OK = 1, HP_BAD = -1, HP_TOO_BIG = -2 };

struct http_req {
	char method[16];
	bool connect;         /* "CONNECT host:port HTTP/1.x" */
	char host[256];       /* from the authority (CONNECT) or the absolute URI (http:// only),
			       * not yet normalized; an IPv6 literal without its brackets */
	uint16_t port;        /* given, or 80 for http:// (CONNECT requires one) */
	size_t head_len;      /* bytes of the head in buf, through the empty line */
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

/* A whole response: status line, "X-Proxy-Error: <reason>" (when reason), Content-Type
 * text/plain, Content-Length, "Connection: close", and the reason plus "\n" as the body.
 * code is 403, 400, 405, 431, 502 or 504 (or 200 for "Connection established", no body). */
char *http_response(int code, const char *reason, size_t *len);
