/* httpflow: requests inside an inspected tunnel (httpflow.h, doc/design.md §4d). */
#include "core/net/httpflow.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/base64.h"
#include "util/xalloc.h"

/* ---- refusals ---- */

void hflow_init(struct hflow *f)
{
	memset(f, 0, sizeof *f);
	f->st = HFS_HEAD;
}

void hflow_clear(struct hflow *f)
{
	explicit_bzero(f, sizeof *f);
}

__attribute__((format(printf, 4, 5))) static int refuse(struct hflow *f, struct hflow_refusal *r,
							 int code, const char *fmt, ...)
{
	r->code = code;
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(r->reason, sizeof r->reason, fmt, ap);
	va_end(ap);
	for (char *c = r->reason; *c; c++) /* one printable line (it names what the jail sent) */
		if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
			*c = '?';
	if (f)
		f->st = HFS_REFUSED;
	return -1;
}

/* ---- placeholders ---- */

struct line {
	const char *p;
	size_t n;
};

static const char *find_in(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; k && i + k <= n; i++)
		if (!memcmp(hay + i, needle, k))
			return hay + i;
	return NULL;
}

/* The header line's name, or n 0 for the request line. */
static struct line header_name(struct line l, bool first)
{
	if (first)
		return (struct line){l.p, 0};
	const char *colon = memchr(l.p, ':', l.n);
	return (struct line){l.p, colon ? (size_t)(colon - l.p) : 0};
}

static bool name_is(struct line name, const char *lit)
{
	return name.n == strlen(lit) && !strncasecmp(name.p, lit, name.n);
}

/* The value of a header line, without its blanks. */
static struct line header_value(struct line l, struct line name)
{
	const char *v = l.p + name.n + 1, *end = l.p + l.n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return (struct line){v, (size_t)(end - v)};
}

/* An "Authorization: Basic B64" value decoded (allocated, NUL-terminated), or NULL. */
static char *basic_decoded(struct line name, struct line value, size_t *n)
{
	if (!name_is(name, "Authorization") || value.n < 7 || strncasecmp(value.p, "Basic ", 6))
		return NULL;
	struct line b = {value.p + 6, value.n - 6};
	while (b.n && b.p[0] == ' ')
		b.p++, b.n--;
	char *out = xmalloc(b.n / 4 * 3 + 1);
	long k = base64_decode(b.p, b.n, (uint8_t *)out);
	if (k < 0) {
		free(out);
		return NULL;
	}
	out[k] = '\0';
	*n = (size_t)k;
	return out;
}

static void wipe_free(char *p, size_t n)
{
	if (p) {
		explicit_bzero(p, n);
		free(p);
	}
}

/* Which secret's placeholder the text holds first (an index), or -1. */
static int placeholder_in(const struct inspect *in, const char *t, size_t n)
{
	for (size_t i = 0; in && i < in->placeholders.n; i++)
		if (find_in(t, n, in->placeholders.v[i]))
			return (int)i;
	return -1;
}

/* Copy t[0, n) to out with each placeholder of secret i replaced by its value. */
static unsigned replace_into(struct secbuf *out, const char *t, size_t n, const char *ph,
			     const char *val, size_t vlen)
{
	unsigned k = 0;
	size_t phn = strlen(ph);
	while (n) {
		const char *at = find_in(t, n, ph);
		if (!at) {
			secbuf_add(out, t, n);
			break;
		}
		secbuf_add(out, t, (size_t)(at - t));
		secbuf_add(out, val, vlen);
		k++;
		n -= (size_t)(at - t) + phn;
		t = at + phn;
	}
	return k;
}

/* The refusal of placeholder i found where it may not go. */
static int exfil(struct hflow *f, const struct hflow_ctx *c, struct hflow_refusal *r, int i,
		 struct line name)
{
	const struct secret_def *d = &c->in->secrets.v[i];
	r->exfil = true;
	char where[96];
	if (!name.n)
		(void)snprintf(where, sizeof where, "the request line");
	else
		(void)snprintf(where, sizeof where, "header %.*s", (int)(name.n < 64 ? name.n : 64),
			       name.p);
	bool v6 = strchr(c->host, ':') != NULL;
	return refuse(f, r, 403,
		      "exfiltration attempt: the placeholder of secret %s sent to %s%s%s:%u in %s "
		      "%s(it goes only to %s%s in header %s%s)",
		      d->name, v6 ? "[" : "", c->host, v6 ? "]" : "", (unsigned)c->port, where,
		      c->tls ? "" : "over plain HTTP ", d->hosts.v[0], d->hosts.n > 1 ? " …" : "",
		      d->header, c->values ? "" : ", over TLS");
}

/* May secret i's placeholder be replaced in header `name` of a request to c->host? */
static bool goes_here(const struct hflow_ctx *c, int i, struct line name)
{
	const struct secret_def *d = &c->in->secrets.v[i];
	return c->tls && c->values && name.n && name_is(name, d->header) &&
	       secret_for_host(d, c->host);
}

/* One line of a head (request line when first): checked for placeholders and copied to out,
 * each allowed one replaced by its value. */
static int pass_line(struct hflow *f, const struct hflow_ctx *c, struct line l, bool first,
		     struct secbuf *out, struct hflow_refusal *r)
{
	struct line name = header_name(l, first);
	size_t dn = 0;
	char *dec = name.n ? basic_decoded(name, header_value(l, name), &dn) : NULL;
	int i = placeholder_in(c->in, l.p, l.n);
	int j = dec ? placeholder_in(c->in, dec, dn) : -1;
	if ((i >= 0 && !goes_here(c, i, name)) || (j >= 0 && !goes_here(c, j, name))) {
		wipe_free(dec, dn);
		return exfil(f, c, r, i >= 0 && !goes_here(c, i, name) ? i : j, name);
	}
	if (i < 0 && j < 0) {
		secbuf_add(out, l.p, l.n);
	} else if (i >= 0) {
		unsigned k = replace_into(out, l.p, l.n, c->in->placeholders.v[i], c->values[i],
					  c->vlen[i]);
		if (f)
			f->injected += k;
	} else { /* Basic: the credentials decoded, the value put in, encoded again */
		struct secbuf plain = {0};
		unsigned k = replace_into(&plain, dec, dn, c->in->placeholders.v[j], c->values[j],
					  c->vlen[j]);
		char *enc = xmalloc(base64_encoded_len(plain.len) + 1);
		size_t en = base64_encode(plain.p, plain.len, enc);
		secbuf_add(out, l.p, name.n);
		secbuf_add(out, ": Basic ", 8);
		secbuf_add(out, enc, en);
		wipe_free(enc, en + 1);
		secbuf_wipe(&plain);
		if (f)
			f->injected += k;
	}
	wipe_free(dec, dn);
	secbuf_add(out, "\r\n", 2);
	return 0;
}

/* ---- a head ---- */

/* The request's Host against the approved host: the same name once normalized. */
static bool host_ok(const struct hflow_ctx *c, const struct http_req *q)
{
	if (!q->host_header[0])
		return true; /* HTTP/1.0 without Host: it goes to the approved host anyway */
	char *norm = NULL;
	struct err e = {0};
	bool ok = net_host_normalize(q->host_header, &norm, &e) == 0 && !strcmp(norm, c->host);
	free(norm);
	return ok;
}

static void fill_label(struct hflow_refusal *r, const struct hflow_ctx *c, const char *method,
		       const char *target, size_t tlen)
{
	(void)snprintf(r->method, sizeof r->method, "%s", method);
	char *label = http_request_label(method, c->host, target, tlen, sizeof r->label - 1);
	(void)snprintf(r->label, sizeof r->label, "%s", label);
	free(label);
}

static int pass_lines(struct hflow *f, const struct hflow_ctx *c, const char *head,
		      const struct http_req *q, struct secbuf *out, struct hflow_refusal *r);

/* Judge a whole head (head[0, q->head_len)) and write it to out. */
static int pass_head(struct hflow *f, const struct hflow_ctx *c, const char *head,
		     const struct http_req *q, struct secbuf *out, struct hflow_refusal *r)
{
	const char *target = head + q->target_off;
	fill_label(r, c, q->method, target, q->target_len);
	if (q->connect || q->upgrade)
		return refuse(f, r, 403, "%s: %s is refused on an inspected host (its bytes could "
					 "not be read)",
			      r->label, q->connect ? "CONNECT" : "a protocol upgrade (Upgrade)");
	if (q->target_len == 0 || (target[0] != '/' && !(q->target_len == 1 && target[0] == '*')))
		return refuse(f, r, 400, "%s: only origin-form targets (/path) inside an inspected "
					 "tunnel", r->label);
	if (q->te && !q->chunked)
		return refuse(f, r, 400, "%s: a Transfer-Encoding other than chunked", r->label);
	if (!host_ok(c, q))
		return refuse(f, r, 403, "%s: HTTP Host %s is not the host this connection was "
					 "allowed for", r->label, q->host_header);
	/* a placeholder where it does not go is refused first: it is the attempt to log, whatever
	 * the rules say of the request */
	struct secbuf scratch = {0};
	if (pass_lines(NULL, c, head, q, &scratch, r) < 0) {
		secbuf_wipe(&scratch);
		if (f)
			f->st = HFS_REFUSED;
		return -1;
	}
	secbuf_wipe(&scratch);
	char *why = NULL;
	if (inspect_request(c->in, q->method, c->host, target, q->target_len, NULL, &why) < 0) {
		int rc = refuse(f, r, 403, "%s", why);
		free(why);
		return rc;
	}
	size_t mark = out->len;
	if (pass_lines(f, c, head, q, out, r) < 0) {
		explicit_bzero(out->p + mark, out->len - mark);
		out->len = mark; /* nothing of a refused request goes */
		return -1;
	}
	f->requests++;
	return 0;
}

/* Each line of the head (valid: CRLF lines, no bare CR or LF) through pass_line into out. The
 * CR and LF bytes before the request line, which the parser skips in any order (empty lines
 * servers skip), are not sent on: the server gets the request line first. */
static int pass_lines(struct hflow *f, const struct hflow_ctx *c, const char *head,
		      const struct http_req *q, struct secbuf *out, struct hflow_refusal *r)
{
	size_t start = 0;
	while (start < q->head_len && (head[start] == '\r' || head[start] == '\n'))
		start++;
	bool first = true;
	while (start < q->head_len) {
		const char *lf = memchr(head + start, '\n', q->head_len - start);
		size_t end = (size_t)(lf - head);
		struct line l = {head + start, end - 1 - start};
		start = end + 1;
		if (!l.n) { /* leading empty lines servers skip, or the head's end */
			secbuf_add(out, "\r\n", 2);
			continue;
		}
		if (pass_line(f, c, l, first, out, r) < 0)
			return -1;
		first = false;
	}
	return 0;
}

/* ---- bodies ---- */

/* A chunk-size line "HEX[;ext]": its size, or -1. */
static int chunk_size(const char *l, size_t n, uint64_t *size)
{
	size_t i = 0;
	uint64_t v = 0;
	for (; i < n; i++) {
		char ch = l[i];
		int d = ch >= '0' && ch <= '9'   ? ch - '0'
			: ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
			: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
						 : -1;
		if (d < 0)
			break;
		if (i >= 15)
			return -1; /* larger than we carry */
		v = v * 16 + (uint64_t)d;
	}
	if (i == 0 || (i < n && l[i] != ';' && l[i] != ' ' && l[i] != '\t'))
		return -1;
	for (; i < n; i++)
		if ((unsigned char)l[i] < 0x20 && l[i] != '\t')
			return -1;
	*size = v;
	return 0;
}

/* A trailer line: "name: value", the name a token, no control byte but tab. */
static bool trailer_ok(const char *l, size_t n)
{
	size_t i = 0;
	while (i < n && l[i] != ':' && (unsigned char)l[i] > 0x20 && l[i] != 0x7f &&
	       !strchr("\"(),/;<=>?@[\\]{}", l[i]))
		i++;
	if (i == 0 || i == n || l[i] != ':')
		return false;
	for (; i < n; i++)
		if (((unsigned char)l[i] < 0x20 && l[i] != '\t') || l[i] == 0x7f)
			return false;
	return true;
}

/* Take one line (through its CRLF) into f->line; 1 when whole, 0 when more is needed, -1 when
 * too long or malformed. *used counts what was taken. */
static int take_line(struct hflow *f, const uint8_t *in, size_t n, size_t *used)
{
	for (size_t i = 0; i < n; i++) {
		if (f->linelen == sizeof f->line)
			return -1;
		f->line[f->linelen++] = (char)in[i];
		if (in[i] == '\n') {
			*used = i + 1;
			if (f->linelen < 2 || f->line[f->linelen - 2] != '\r')
				return -1;
			return 1;
		}
	}
	*used = n;
	return 0;
}

int hflow_feed(struct hflow *f, const struct hflow_ctx *c, const uint8_t *in, size_t n,
	       struct secbuf *out, struct hflow_refusal *r)
{
	memset(r, 0, sizeof *r);
	while (n) {
		size_t used = 0;
		switch (f->st) {
		case HFS_REFUSED:
			return refuse(NULL, r, 400, "%s", "bytes after a refused request");
		case HFS_HEAD: {
			size_t room = sizeof f->head - f->headlen, k = n < room ? n : room;
			memcpy(f->head + f->headlen, in, k);
			f->headlen += k;
			struct http_req q;
			int rc = http_parse_origin(f->head, f->headlen, &q);
			if (rc == HP_NEED_MORE && f->headlen < sizeof f->head) {
				used = k;
				break;
			}
			if (rc != HP_OK)
				return refuse(f, r, rc == HP_TOO_BIG ? 431 : 400,
					      "a request the inspector cannot read: %s",
					      q.error ? q.error : "request head too large");
			if (pass_head(f, c, f->head, &q, out, r) < 0)
				return -1;
			/* what followed the head in this chunk is the body's */
			size_t rest = f->headlen - q.head_len;
			used = k - rest;
			explicit_bzero(f->head, f->headlen);
			f->headlen = 0;
			f->st = q.chunked ? HFS_CHUNK_LINE : q.has_clen && q.clen ? HFS_LEN : HFS_HEAD;
			f->left = q.clen;
			break;
		}
		case HFS_LEN:
		case HFS_CHUNK_DATA: {
			used = n < f->left ? n : (size_t)f->left;
			secbuf_add(out, in, used);
			f->left -= used;
			if (!f->left)
				f->st = f->st == HFS_LEN ? HFS_HEAD : HFS_CHUNK_END;
			break;
		}
		case HFS_CHUNK_LINE:
		case HFS_CHUNK_END:
		case HFS_TRAILER: {
			int rc = take_line(f, in, n, &used);
			if (rc < 0)
				return refuse(f, r, 400, "%s", "a malformed chunked body");
			if (rc == 0)
				break; /* held until whole: a line goes on only once it is judged */
			size_t ln = f->linelen - 2;
			f->linelen = 0;
			if (f->st == HFS_CHUNK_END) {
				if (ln)
					return refuse(f, r, 400, "%s", "a chunk not followed by CRLF");
				f->st = HFS_CHUNK_LINE;
			} else if (f->st == HFS_TRAILER) {
				if (!ln)
					f->st = HFS_HEAD;
				else if (!trailer_ok(f->line, ln))
					return refuse(f, r, 400, "%s", "a malformed trailer line");
				else if (placeholder_in(c->in, f->line, ln) >= 0)
					return refuse(f, r, 403, "%s", "a secret's placeholder in a "
								       "trailer");
			} else if (chunk_size(f->line, ln, &f->left) < 0) {
				return refuse(f, r, 400, "%s", "a malformed chunk size");
			} else {
				f->st = f->left ? HFS_CHUNK_DATA : HFS_TRAILER;
			}
			secbuf_add(out, f->line, ln + 2);
			break;
		}
		}
		in += used;
		n -= used;
	}
	return 0;
}

int hflow_check_plain(const struct hflow_ctx *c, const char *buf, size_t len,
		      const struct http_req *q, struct hflow_refusal *r)
{
	memset(r, 0, sizeof *r);
	/* the path of an absolute target: after "scheme://authority" */
	const char *t = buf + q->target_off;
	size_t tn = q->target_len;
	const char *sep = find_in(t, tn, "://");
	if (sep) {
		size_t skip = (size_t)(sep + 3 - t);
		size_t an = skip;
		while (an < tn && t[an] != '/' && t[an] != '?')
			an++;
		t += an;
		tn -= an;
	}
	const char *target = tn ? t : "/";
	size_t tlen = tn ? tn : 1;
	fill_label(r, c, q->method, target, tlen);
	char *why = NULL;
	if (inspect_request(c->in, q->method, c->host, target, tlen, NULL, &why) < 0) {
		int rc = refuse(NULL, r, 403, "%s", why);
		free(why);
		return rc;
	}
	size_t start = 0;
	bool first = true;
	while (start < len && start < q->head_len) {
		const char *lf = memchr(buf + start, '\n', q->head_len - start);
		if (!lf)
			break;
		size_t end = (size_t)(lf - buf);
		struct line l = {buf + start, end > start ? end - 1 - start : 0};
		start = end + 1;
		if (!l.n)
			continue;
		struct line name = header_name(l, first);
		first = false;
		size_t dn = 0;
		char *dec = name.n ? basic_decoded(name, header_value(l, name), &dn) : NULL;
		int i = placeholder_in(c->in, l.p, l.n);
		if (i < 0 && dec)
			i = placeholder_in(c->in, dec, dn);
		wipe_free(dec, dn);
		if (i >= 0)
			return exfil(NULL, c, r, i, name);
	}
	return 0;
}
