/* httpflow: the client's side of an inspected tunnel (doc/design.md §4d), one request after
 * another: each head read whole with the proxy's strict parser and judged (the Host, the
 * request rules, where each secret's placeholder appears), the secret's value put in place of
 * its placeholder where it may go, then the body passed on as framed (Content-Length or
 * chunked), so the next head is found exactly where the server will look for it. Pure: bytes
 * in, bytes to send upstream out. Also the placeholder check of a plain HTTP request the proxy
 * forwards itself. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/net/httpreq.h"
#include "core/plan/httprules.h"
#include "util/secbuf.h"

/* What the flow needs to know: the run's rules and secrets, the tunnel's approved host and
 * port, whether it is TLS (a secret is added over TLS only), and the secrets' values
 * (values[i] of vlen[i] bytes for in->secrets.v[i]; NULL where they are not known: the proxy,
 * which never adds one). */
struct hflow_ctx {
	const struct inspect *in;
	const char *host;
	uint16_t port;
	bool tls;
	const char *const *values;
	const size_t *vlen;
};

/* A refused request: what the client is answered and what is logged. */
struct hflow_refusal {
	int code;            /* 400 or 403 */
	bool exfil;          /* a placeholder sent where its secret does not go */
	char method[16];
	char label[240];     /* "METHOD HOST/PATH" (query cut, printable), "" before a head */
	char reason[320];    /* one printable line: the event's and X-Proxy-Error's text */
};


enum hflow_state { HFS_HEAD, HFS_LEN, HFS_CHUNK_LINE, HFS_CHUNK_DATA, HFS_CHUNK_END,
		   HFS_TRAILER, HFS_REFUSED };

struct hflow {
	enum hflow_state st;
	uint64_t left;              /* HFS_LEN, HFS_CHUNK_DATA: bytes still to pass */
	char head[HTTP_HEAD_MAX];
	size_t headlen;
	char line[256];             /* a chunk-size or trailer line */
	size_t linelen;
	unsigned requests;          /* heads passed */
	unsigned injected;          /* secrets added */
};

void hflow_init(struct hflow *f);
/* Feed n client bytes. What is to go upstream is appended to out (it may hold a secret's value:
 * the caller wipes it, secbuf_wipe). 0: all taken (more may be
 * needed); -1: a request was refused (r says how; nothing of it or after it was appended, and
 * the flow stays refused). */
int hflow_feed(struct hflow *f, const struct hflow_ctx *c, const uint8_t *in, size_t n,
	       struct secbuf *out, struct hflow_refusal *r) WUR;
/* Wipe what the flow holds (a head may carry a secret's placeholder, never its value: values
 * go straight to out). */
void hflow_clear(struct hflow *f);

/* A head the proxy forwards as plain HTTP (buf[0, len), parsed as q): -1 with r filled when it
 * carries a placeholder (never sent in clear) or the host's request rules refuse it. */
int hflow_check_plain(const struct hflow_ctx *c, const char *buf, size_t len,
		      const struct http_req *q, struct hflow_refusal *r) WUR;
