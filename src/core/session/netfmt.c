/* netfmt: the egress proxy's decisions as text. Pure (see netfmt.h). */
#include "core/session/netfmt.h"
#include "core/session/evdetail.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/session/sessfmt.h"
#include "util/cleanup.h"
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
	else if (port == 0 && !strcmp(h, "-"))
		out = xstrdup("-"); /* netevent.h: an ssh-agent request of no bound session */
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

/* The text after a reason's leading "HOST:PORT" (or "[HOST]:PORT"), or NULL when it does not
 * start so: the proxy's reasons name the host first, and a line that names it already does
 * not say it twice. */
static const char *after_hostport(const char *why, const char *host)
{
	size_t hl = strlen(host);
	const char *p = why;
	bool v6 = p[0] == '[';
	if (v6)
		p++;
	if (!hl || strncmp(p, host, hl) != 0)
		return NULL;
	p += hl;
	if (v6 && *p++ != ']')
		return NULL;
	if (*p++ != ':' || *p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	return p;
}

/* One host of an end-of-run line: "evil.example:443 ×2 is not on the allow list (add
 * --allow-domain evil.example)", "pypi.org:443 ×7 could not resolve: …". */
static void add_item(struct strbuf *b, const struct net_count *c)
{
	const char *host = c->host ? c->host : "";
	char *hp = netfmt_hostport(host, SIZE_MAX, c->port);
	sb_add(b, hp);
	free(hp);
	if (c->n > 1)
		sb_addf(b, " ×%lld", c->n);
	if (!c->why || !c->why[0])
		return;
	const char *rest = after_hostport(c->why, host);
	if (rest && (rest[0] == ' ' || rest[0] == ':'))
		sb_add(b, rest); /* " is not on the allow list …", ": port 8080 is not …" */
	else
		sb_addf(b, " %s", c->why);
}

/* "ITEM; ITEM; and N more (MORE)": the first NETFMT_LINE_HOSTS entries whole, the rest
 * counted; then the line is cleaned. */
static char *end_line(struct strbuf *b, const struct net_count *v, size_t n, long long total,
		      const char *more)
{
	long long listed = 0;
	size_t i = 0;
	for (; i < n && i < NETFMT_LINE_HOSTS; i++) {
		sb_add(b, i ? "; " : ": ");
		add_item(b, &v[i]);
		listed += v[i].n;
	}
	if (total > listed) {
		sb_addf(b, "%s %lld more", i ? "; and" : ": and", total - listed);
		if (more && more[0])
			sb_addf(b, " (%s)", more);
	}
	char *out = fmt_clean(sb_str(b));
	sb_free(b);
	return out;
}

char *netfmt_denied_line(const struct net_count *v, size_t n, long long conns,
			 long long lookups, long long malformed, const char *more)
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
	return end_line(&b, v, n, c[0] + c[1], more);
}

char *netfmt_failed_line(const struct net_count *v, size_t n, long long allowed,
			 long long failed, const char *more)
{
	if (failed <= 0)
		return xstrdup("");
	struct strbuf b = STRBUF_INIT;
	sb_addf(&b, "%lld allowed, %lld failed upstream", allowed, failed);
	return end_line(&b, v, n, failed, more);
}

char *netfmt_summary(long long allowed, long long failed, long long denied,
		     const struct net_count *fv, size_t fn, const struct net_count *dv, size_t dn,
		     size_t width)
{
	if (allowed <= 0 && denied <= 0)
		return xstrdup("none");
	struct strbuf b = STRBUF_INIT;
	sb_addf(&b, "%lld allowed", allowed);
	if (failed > 0) {
		sb_addf(&b, ", %lld failed upstream", failed);
		if (fn > 0) {
			long long listed = 0;
			for (size_t i = 0; i < fn; i++) {
				sb_add(&b, i ? "; " : " (");
				add_item(&b, &fv[i]);
				listed += fv[i].n;
			}
			if (failed > listed)
				sb_addf(&b, "; … %lld more", failed - listed);
			sb_add(&b, ")");
		}
	}
	sb_addf(&b, ", %lld denied", denied);
	if (denied > 0 && dn > 0) {
		sb_add(&b, " (");
		add_list(&b, dv, dn, denied, 0);
		sb_add(&b, ")");
	}
	char *out = width && fmt_width(sb_str(&b)) > width ? fmt_cut(sb_str(&b), width)
							  : fmt_clean(sb_str(&b));
	sb_free(&b);
	return out;
}

char *netfmt_cell(long long allowed, long long failed, long long denied)
{
	if (allowed <= 0 && denied <= 0)
		return xstrdup("-");
	if (failed < 0)
		failed = 0;
	if (failed > allowed)
		failed = allowed;
	struct strbuf b = STRBUF_INIT;
	if (allowed - failed > 0)
		sb_addf(&b, "%lld ok", allowed - failed);
	if (failed > 0)
		sb_addf(&b, "%s%lld failed", b.len ? ", " : "", failed);
	if (denied > 0)
		sb_addf(&b, "%s%lld denied", b.len ? ", " : "", denied);
	return sb_steal(&b);
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

/* Where a log line's rule or reason goes on lines of its own: this far in. */
#define LOG_WRAP_INDENT 4

/* The line b (its columns) with why under RULE / REASON: never cut; where the line is too
 * narrow for it, it follows on lines of its own. Takes b. */
static char *with_reason(struct strbuf *b, const char *why, size_t width)
{
	if (width && fmt_width(sb_str(b)) + fmt_width(why) > width) {
		char *head = finish(b, width);
		char *wrapped = fmt_wrap(why, width, LOG_WRAP_INDENT);
		char *out = xasprintf("%s\n%s", head, wrapped);
		free(head);
		free(wrapped);
		return out;
	}
	sb_add(b, why);
	return finish(b, width);
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
	cell(&b, !ev->allowed ? "DENY" : ev->failed ? "FAIL" : "ALLOW", W_ACTION, false);
	cell(&b, hp, W_HOST, false);
	cell(&b, addr[0] ? addr : "-", W_ADDR, false);
	cell(&b, up, W_NUM, true);
	cell(&b, down, W_NUM, true);
	cell(&b, took, W_NUM, true);
	struct strbuf why = STRBUF_INIT;
	sb_add(&why, rule[0] ? rule : "-");
	if (error[0])
		sb_addf(&why, " — error: %s", error);
	free(t), free(hp), free(addr), free(rule), free(error), free(up), free(down), free(took);
	/* the reason and its fix are never cut */
	char *out = with_reason(&b, sb_str(&why), width);
	sb_free(&why);
	return out;
}

char *netfmt_log_violation(const struct event *ev, long utc_offset_s, size_t width)
{
	struct strbuf b = STRBUF_INIT;
	char *t = sessfmt_time(ev->at_ms, utc_offset_s);
	cell(&b, t, W_TIME, false);
	free(t);
	cell(&b, "-", W_PROTO, false);
	/* a violation, or another event of the session's (net.ask, session.exec, session.stop) */
	bool viol = !ev->kind || !strncmp(ev->kind, "violation", strlen("violation"));
	cell(&b, viol ? "VIOL" : "EVENT", W_ACTION, false);
	/* no host, address, bytes or duration: its text goes under RULE / REASON (issue 26: it
	 * stood under HOST) */
	cell(&b, "-", W_HOST, false);
	cell(&b, "-", W_ADDR, false);
	for (int i = 0; i < 3; i++)
		cell(&b, "-", W_NUM, true);
	json_t *d = ev->detail_json ? json_loads(ev->detail_json, 0, NULL) : NULL;
	_cleanup_free_ char *path = evdetail_get(d, "path");
	_cleanup_free_ char *what = evdetail_get(d, "what");
	_cleanup_free_ char *moved = evdetail_get(d, "moved_to");
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
	char *out = with_reason(&b, c, width);
	free(c);
	return out;
}
