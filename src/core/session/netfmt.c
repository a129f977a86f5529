/* netfmt: the egress proxy's decisions as text. Pure (see netfmt.h). */
#include "core/session/netfmt.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/session/sessfmt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define HOST_MAX_COLS 64

/* A fixed-size text field of a net_event, up to its NUL or its size, cleaned. */
static char *field(const char *f, size_t size)
{
	char *raw = xstrndup(f, strnlen(f, size));
	char *c = fmt_clean(raw);
	free(raw);
	return c;
}
#define FIELD(f) field((f), sizeof(f))

char *netfmt_hostport(const char *host, size_t hostsize, int port)
{
	char *raw = xstrndup(host, strnlen(host, hostsize));
	char *h = fmt_cut(raw, HOST_MAX_COLS);
	free(raw);
	char *out;
	if (port == 0 && !h[0])
		out = xstrdup("(malformed DNS request)"); /* netevent.h: no name could be read */
	else if (port == 0)
		out = xasprintf("%s (dns)", h);
	else if (strchr(h, ':'))
		out = xasprintf("[%s]:%d", h, port);
	else
		out = xasprintf("%s:%d", h[0] ? h : "?", port);
	free(h);
	return out;
}

char *netfmt_bytes(unsigned long long n)
{
	static const char units[] = "KMGTPE";
	if (n < 1000)
		return xasprintf("%llu", n);
	double v = (double)n;
	size_t u = 0;
	v /= 1024;
	while (v >= 999.5 && u + 1 < sizeof units - 1) {
		v /= 1024;
		u++;
	}
	return v < 9.95 ? xasprintf("%.1f%c", v, units[u]) : xasprintf("%.0f%c", v, units[u]);
}

static void plural(struct strbuf *b, long long n, const char *one, const char *many)
{
	sb_addf(b, "%lld %s", n, n == 1 ? one : many);
}

/* "a:443 ×2, b:80, … 3 more" appended to b, as much as fits in `room` columns (0: all). */
static void add_list(struct strbuf *b, const struct net_count *v, size_t n, long long total,
		     size_t room)
{
	long long listed = 0;
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		char *hp = netfmt_hostport(v[i].host ? v[i].host : "", SIZE_MAX, v[i].port);
		char *item = v[i].n > 1 ? xasprintf("%s ×%lld", hp, v[i].n) : xstrdup(hp);
		free(hp);
		size_t w = fmt_width(item) + (i ? 2 : 0);
		/* keep room for the "… N more" a later cut would need */
		size_t tail = i + 1 < n || listed + v[i].n < total ? 14 : 0;
		if (room && used + w + tail > room && i > 0) {
			free(item);
			break;
		}
		if (i)
			sb_add(b, ", ");
		sb_add(b, item);
		used += w;
		free(item);
		listed += v[i].n;
	}
	if (total > listed)
		sb_addf(b, "%s… %lld more", listed ? ", " : "", total - listed);
}

char *netfmt_denied_line(const struct net_count *v, size_t n, long long conns,
			 long long lookups, long long malformed, size_t width)
{
	long long c[3] = {conns > 0 ? conns : 0, lookups > 0 ? lookups : 0,
			  malformed > 0 ? malformed : 0};
	static const char *const one[3] = {"connection", "name lookup", "malformed DNS request"};
	static const char *const many[3] = {"connections", "name lookups",
					     "malformed DNS requests"};
	if (c[0] + c[1] + c[2] == 0)
		return xstrdup("");
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, "denied ");
	for (int i = 0, said = 0, left = (c[0] > 0) + (c[1] > 0) + (c[2] > 0); i < 3; i++) {
		if (!c[i])
			continue;
		if (said)
			sb_add(&b, said + 1 == left ? " and " : ", ");
		plural(&b, c[i], one[i], many[i]);
		said++;
	}
	if (c[0] + c[1] == 0) { /* malformed requests alone: no names to list */
		char *out = fmt_clean(sb_str(&b));
		sb_free(&b);
		return out;
	}
	sb_add(&b, ": ");
	size_t head = fmt_width(sb_str(&b));
	add_list(&b, v, n, c[0] + c[1], width ? (width > head + 20 ? width - head : 20) : 0);
	char *out = width && fmt_width(sb_str(&b)) > width ? fmt_cut(sb_str(&b), width)
							  : fmt_clean(sb_str(&b));
	sb_free(&b);
	return out;
}

char *netfmt_summary(long long allowed, long long denied, const struct net_count *v, size_t n,
		     size_t width)
{
	if (allowed <= 0 && denied <= 0)
		return xstrdup("none");
	struct strbuf b = STRBUF_INIT;
	sb_addf(&b, "%lld allowed, %lld denied", allowed, denied);
	if (denied > 0 && n > 0) {
		sb_add(&b, " (");
		size_t head = fmt_width(sb_str(&b));
		add_list(&b, v, n, denied, width ? (width > head + 21 ? width - head - 1 : 20) : 0);
		sb_add(&b, ")");
	}
	char *out = width && fmt_width(sb_str(&b)) > width ? fmt_cut(sb_str(&b), width)
							  : fmt_clean(sb_str(&b));
	sb_free(&b);
	return out;
}

char *netfmt_cell(long long allowed, long long denied)
{
	if (allowed <= 0 && denied <= 0)
		return xstrdup("-");
	if (denied <= 0)
		return xasprintf("%lld ok", allowed);
	if (allowed <= 0)
		return xasprintf("%lld denied", denied);
	return xasprintf("%lld ok, %lld denied", allowed, denied);
}

/* ---- log lines ---- */

/* Columns: the widths of TIME PROTO ACTION HOST ADDR UP DOWN TOOK (left-aligned text padded,
 * numbers right-aligned); what follows (the rule or reason) is not padded. */
enum { W_TIME = 19, W_PROTO = 7, W_ACTION = 6, W_HOST = 32, W_ADDR = 15, W_NUM = 5 };

static void cell(struct strbuf *b, const char *s, size_t w, bool right)
{
	size_t sw = fmt_width(s);
	size_t padn = sw < w ? w - sw : 0;
	if (right)
		for (size_t i = 0; i < padn; i++)
			sb_addc(b, ' ');
	sb_add(b, s);
	if (!right)
		for (size_t i = 0; i < padn; i++)
			sb_addc(b, ' ');
	sb_add(b, "  ");
}

static char *finish(struct strbuf *b, size_t width)
{
	while (b->len && b->s[b->len - 1] == ' ')
		b->s[--b->len] = '\0';
	char *out = width && fmt_width(sb_str(b)) > width ? fmt_cut(sb_str(b), width)
							 : xstrdup(sb_str(b));
	sb_free(b);
	return out;
}

char *netfmt_log_header(size_t width)
{
	struct strbuf b = STRBUF_INIT;
	cell(&b, "TIME", W_TIME, false);
	cell(&b, "PROTO", W_PROTO, false);
	cell(&b, "ACTION", W_ACTION, false);
	cell(&b, "HOST", W_HOST, false);
	cell(&b, "ADDR", W_ADDR, false);
	cell(&b, "UP", W_NUM, true);
	cell(&b, "DOWN", W_NUM, true);
	cell(&b, "TOOK", W_NUM, true);
	sb_add(&b, "RULE / REASON");
	return finish(&b, width);
}

char *netfmt_log_line(const struct net_event *ev, long utc_offset_s, size_t width)
{
	struct strbuf b = STRBUF_INIT;
	char *t = sessfmt_time(ev->at_ms, utc_offset_s);
	char *hp = netfmt_hostport(ev->host, sizeof ev->host, ev->port);
	char *addr = FIELD(ev->addr);
	char *rule = FIELD(ev->rule);
	char *error = FIELD(ev->error);
	char *up = netfmt_bytes(ev->bytes_up), *down = netfmt_bytes(ev->bytes_down);
	char *took = sessfmt_duration(ev->dur_ms);
	cell(&b, t, W_TIME, false);
	cell(&b, net_proto_name(ev->proto), W_PROTO, false);
	cell(&b, ev->allowed ? "ALLOW" : "DENY", W_ACTION, false);
	cell(&b, hp, W_HOST, false);
	cell(&b, addr[0] ? addr : "-", W_ADDR, false);
	cell(&b, up, W_NUM, true);
	cell(&b, down, W_NUM, true);
	cell(&b, took, W_NUM, true);
	sb_add(&b, rule[0] ? rule : "-");
	if (error[0])
		sb_addf(&b, " — error: %s", error);
	free(t), free(hp), free(addr), free(rule), free(error), free(up), free(down), free(took);
	return finish(&b, width);
}

char *netfmt_log_violation(const struct event *ev, long utc_offset_s, size_t width)
{
	struct strbuf b = STRBUF_INIT;
	char *t = sessfmt_time(ev->at_ms, utc_offset_s);
	cell(&b, t, W_TIME, false);
	free(t);
	cell(&b, "-", W_PROTO, false);
	cell(&b, "VIOL", W_ACTION, false);
	json_t *d = ev->detail_json ? json_loads(ev->detail_json, 0, NULL) : NULL;
	const char *path = json_string_value(json_object_get(d, "path"));
	const char *what = json_string_value(json_object_get(d, "what"));
	const char *moved = json_string_value(json_object_get(d, "moved_to"));
	struct strbuf txt = STRBUF_INIT;
	sb_add(&txt, ev->kind ? ev->kind : "violation");
	if (path)
		sb_addf(&txt, " %s", path);
	if (what)
		sb_addf(&txt, ": %s", what);
	if (moved)
		sb_addf(&txt, " (moved to %s)", moved);
	if (!path && !what && ev->detail_json)
		sb_addf(&txt, " %s", ev->detail_json);
	json_decref(d);
	char *c = fmt_clean(sb_str(&txt));
	sb_free(&txt);
	sb_add(&b, c);
	free(c);
	return finish(&b, width);
}
