/* firstbytes: the name inside an approved connection (TLS server name, HTTP Host) against the
 * name it was approved for. Pure. doc/design.md §4. */
#include "core/net/firstbytes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/httpreq.h"
#include "core/net/tlshello.h"

/* record: alert (21), TLS 1.0, length 2; level fatal (2), access_denied (49) */
const uint8_t fb_tls_alert[7] = {21, 3, 1, 0, 2, 2, 49};

enum fb_kind fb_kind_for_port(uint16_t port)
{
	return port == 443 ? FB_TLS : port == 80 ? FB_HTTP : FB_SNIFF;
}

enum fb_kind fb_kind_for(const struct netrules *r, const char *host, uint16_t port)
{
	enum netrule_carries c = netrules_carries(r, host, port);
	return c == NC_TLS ? FB_TLS : c == NC_HTTP ? FB_HTTP : fb_kind_for_port(port);
}

/* Refuse with "HOST:PORT " then the rest. */
__attribute__((format(printf, 4, 5))) static void refuse(struct fb_result *o, const char *host,
							  uint16_t port, const char *fmt, ...)
{
	o->state = FB_REFUSE;
	bool v6 = strchr(host, ':') != NULL;
	int n = snprintf(o->reason, sizeof o->reason, "%s%s%s:%u ", v6 ? "[" : "", host,
			 v6 ? "]" : "", (unsigned)port);
	if (n < 0 || (size_t)n >= sizeof o->reason)
		return;
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(o->reason + n, sizeof o->reason - (size_t)n, fmt, ap);
	va_end(ap);
}

/* The name against the approval; a refusal's reason names both. */
static void judge_name(const struct netrules *r, const struct net_decision *d, const char *host,
		       uint16_t port, const char *what, const char *name, struct fb_result *o)
{
	enum net_name_match m = netrules_name_check(r, d, host, port, name, NULL);
	if (net_name_ok(m)) {
		o->state = FB_PASS;
		return;
	}
	char *why = net_name_reason(m, what, host, port, name);
	o->state = FB_REFUSE;
	(void)snprintf(o->reason, sizeof o->reason, "%s", why);
	free(why);
}

/* must: the port carries TLS only; else (sniffing) what turns out not to be TLS goes on. */
static void judge_tls(const struct netrules *r, const struct net_decision *d, const char *host,
		      uint16_t port, const uint8_t *buf, size_t len, bool final, bool must,
		      struct fb_result *o)
{
	struct tls_hello h;
	int rc = tls_client_hello_sni(buf, len, &h);
	o->tls = rc != TLS_NOT_TLS;
	o->max = TLS_HELLO_READ_MAX;
	switch (rc) {
	case TLS_NEED_MORE: /* waiting; nothing sent yet on a sniffed port passes at the end */
		if (final && !must && len == 0)
			o->state = FB_PASS;
		else if (final)
			refuse(o, host, port, "%s", len ? "got part of a TLS ClientHello, then "
							  "nothing more" : "got no TLS ClientHello");
		return;
	case TLS_SNI:
	case TLS_NO_SNI:
		judge_name(r, d, host, port,
			   h.ech ? "TLS server name (the outer one of an ECH hello)" : "TLS server name",
			   rc == TLS_SNI ? h.sni : NULL, o);
		return;
	case TLS_BAD:
		refuse(o, host, port, "got a ClientHello the proxy cannot check: %s", h.why);
		return;
	default:
		if (must)
			refuse(o, host, port, "got bytes that are not TLS (this port carries TLS only)");
		else
			o->state = FB_PASS;
		return;
	}
}

static void judge_http(const struct netrules *r, const struct net_decision *d, const char *host,
		       uint16_t port, const uint8_t *buf, size_t len, bool final,
		       struct fb_result *o)
{
	struct http_req q;
	int rc = http_parse_origin((const char *)buf, len, &q);
	o->max = HTTP_HEAD_MAX;
	o->http = rc != HP_NOT_HTTP;
	switch (rc) {
	case HP_NEED_MORE:
		if (final)
			refuse(o, host, port, "%s", len ? "got part of an HTTP request head, then "
							  "nothing more" : "got no HTTP request");
		return;
	case HP_NOT_HTTP:
		refuse(o, host, port, "got bytes that are not an HTTP/1.x request (this port "
				      "carries HTTP only)");
		return;
	case HP_OK:
		break;
	default:
		refuse(o, host, port, "got a request the proxy cannot check: %s", q.error);
		return;
	}
	/* a server routes by an absolute target over Host: both must name the approved host */
	if (q.host[0]) {
		judge_name(r, d, host, port, "HTTP request target", q.host, o);
		if (o->state == FB_REFUSE)
			return;
	}
	judge_name(r, d, host, port, "HTTP Host", q.host_header[0] ? q.host_header : NULL, o);
}

void fb_judge(const struct netrules *r, const struct net_decision *d, const char *host,
	      uint16_t port, enum fb_kind kind, const uint8_t *buf, size_t len, bool final,
	      struct fb_result *out)
{
	memset(out, 0, sizeof *out);
	out->state = FB_WAIT;
	if (!len)
		buf = (const uint8_t *)""; /* nothing read yet: no buffer either */
	if (kind == FB_HTTP)
		judge_http(r, d, host, port, buf, len, final, out);
	else
		judge_tls(r, d, host, port, buf, len, final, kind == FB_TLS, out);
}
