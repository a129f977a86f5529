/* inspectmsg: the proxy ⇄ agentjail-tls messages (inspectmsg.h). */
#include "core/net/inspectmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* ---- building ---- */

void im_begin(struct imsg *m, enum im_type t)
{
	m->b.len = 0;
	secbuf_add(&m->b, (uint8_t[]){(uint8_t)t}, 1);
}

void im_put(struct imsg *m, uint8_t tag, const void *v, size_t n)
{
	uint8_t h[5] = {tag, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
	secbuf_add(&m->b, h, 5);
	secbuf_add(&m->b, v, n);
}

void im_put_str(struct imsg *m, uint8_t tag, const char *s)
{
	im_put(m, tag, s ? s : "", s ? strlen(s) : 0);
}

void im_put_u64(struct imsg *m, uint8_t tag, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	im_put(m, tag, b, 8);
}

void im_wipe(struct imsg *m)
{
	secbuf_wipe(&m->b);
}

/* ---- reading ---- */

int im_open(const uint8_t *buf, size_t n, enum im_type *type, struct im_iter *it)
{
	if (!n || n > IM_MAX)
		return -1;
	*type = (enum im_type)buf[0];
	*it = (struct im_iter){.p = buf, .n = n, .off = 1};
	return 0;
}

void im_end(struct imsg *m)
{
	im_put(m, IM_TAG_END, NULL, 0);
}

int im_next(struct im_iter *it, struct im_field *f)
{
	if (it->n - it->off < 5)
		return -1; /* the end field is missing: a message cut short */
	const uint8_t *h = it->p + it->off;
	size_t len = (size_t)h[1] | (size_t)h[2] << 8 | (size_t)h[3] << 16 | (size_t)h[4] << 24;
	if (len > it->n - it->off - 5)
		return -1;
	f->tag = h[0];
	f->v = h + 5;
	f->n = len;
	it->off += 5 + len;
	if (f->tag == IM_TAG_END) /* last, and empty */
		return !len && it->off == it->n ? 0 : -1;
	return 1;
}

char *im_strdup(const struct im_field *f)
{
	if (memchr(f->v, 0, f->n))
		return NULL;
	return xstrndup((const char *)f->v, f->n);
}

bool im_u64(const struct im_field *f, uint64_t *v)
{
	if (f->n != 8)
		return false;
	*v = 0;
	for (int i = 7; i >= 0; i--)
		*v = *v << 8 | f->v[i];
	return true;
}

/* A string field into a fixed buffer: false when it holds a NUL or does not fit. */
static bool str_into(const struct im_field *f, char *dst, size_t cap)
{
	if (f->n >= cap || memchr(f->v, 0, f->n))
		return false;
	memcpy(dst, f->v, f->n);
	dst[f->n] = '\0';
	return true;
}

/* ---- the configuration ---- */

enum { CT_VERSION = 1, CT_CA_DIR, CT_SECRET, CT_HEADER, CT_HOST, CT_VALUE, CT_RULE, CT_ALLOW,
       CT_DENY, CT_MAP, CT_SSH_SOCK, CT_KNOWN_HOSTS };

void im_config_add_secret(struct im_config *c, const struct secret_def *d, const char *value,
			  size_t vlen)
{
	size_t before = c->secrets.n, i = 0;
	secret_set_put(&c->secrets, d);
	if (c->secrets.n > before) {
		i = before;
		c->values = xrealloc(c->values, c->secrets.n * sizeof *c->values);
		c->vlen = xrealloc(c->vlen, c->secrets.n * sizeof *c->vlen);
	} else { /* the same name again: its value replaced, at its place */
		while (strcmp(c->secrets.v[i].name, d->name))
			i++;
		explicit_bzero(c->values[i], c->vlen[i]);
		free(c->values[i]);
	}
	c->values[i] = xmalloc(vlen + 1);
	memcpy(c->values[i], value, vlen);
	c->values[i][vlen] = '\0';
	c->vlen[i] = vlen;
}

static void put_strv(struct imsg *m, uint8_t tag, const struct strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		im_put_str(m, tag, v->v[i]);
}

void im_config_encode(const struct im_config *c, struct imsg *m)
{
	im_begin(m, IM_CONFIG);
	im_put_str(m, CT_VERSION, IM_VERSION);
	im_put_str(m, CT_CA_DIR, c->ca_dir);
	for (size_t i = 0; i < c->secrets.n; i++) {
		const struct secret_def *d = &c->secrets.v[i];
		im_put_str(m, CT_SECRET, d->name);
		im_put_str(m, CT_HEADER, d->header);
		put_strv(m, CT_HOST, &d->hosts);
		im_put(m, CT_VALUE, c->values[i], c->vlen[i]);
	}
	put_strv(m, CT_RULE, &c->allow_http);
	put_strv(m, CT_ALLOW, &c->allow);
	put_strv(m, CT_DENY, &c->deny);
	put_strv(m, CT_MAP, &c->map);
	if (c->ssh_auth_sock)
		im_put_str(m, CT_SSH_SOCK, c->ssh_auth_sock);
	put_strv(m, CT_KNOWN_HOSTS, &c->known_hosts);
	im_end(m);
}

void im_config_free(struct im_config *c)
{
	for (size_t i = 0; i < c->secrets.n && c->values; i++) {
		explicit_bzero(c->values[i], c->vlen[i]);
		free(c->values[i]);
	}
	free(c->values);
	free(c->vlen);
	secret_set_free(&c->secrets);
	free(c->ca_dir);
	strv_free(&c->allow_http);
	strv_free(&c->allow);
	strv_free(&c->deny);
	strv_free(&c->map);
	free(c->ssh_auth_sock);
	strv_free(&c->known_hosts);
	memset(c, 0, sizeof *c);
}

/* The secret being read: its fields until its value closes it. */
struct pending {
	char *name, *header;
	struct strv hosts;
};

static void pending_free(struct pending *p)
{
	free(p->name);
	free(p->header);
	strv_free(&p->hosts);
	memset(p, 0, sizeof *p);
}

static int bad_config(struct im_config *out, struct pending *p, struct err *e, const char *why)
{
	pending_free(p);
	im_config_free(out);
	return err_set(e, 0, "agentjail-tls", "a malformed configuration message: %s", why);
}

int im_config_decode(const uint8_t *buf, size_t n, struct im_config *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	enum im_type t;
	struct im_iter it;
	struct im_field f;
	struct pending p = {0};
	bool version = false;
	if (im_open(buf, n, &t, &it) < 0 || t != IM_CONFIG)
		return bad_config(out, &p, e, "not a configuration");
	int rc;
	while ((rc = im_next(&it, &f)) > 0) {
		if (f.tag == CT_VALUE) {
			struct secret_def d;
			struct err e2 = {0};
			if (p.name && secret_set_find(&out->secrets, p.name))
				return bad_config(out, &p, e, "a secret twice");
			if (!p.name || secret_def_make(p.name, &p.hosts, p.header, NULL, NULL, "run",
						       &d, &e2) < 0)
				return bad_config(out, &p, e, "a value without its secret");
			im_config_add_secret(out, &d, (const char *)f.v, f.n);
			secret_def_free(&d);
			pending_free(&p);
			continue;
		}
		char *s = im_strdup(&f);
		if (!s)
			return bad_config(out, &p, e, "a NUL in a string");
		switch (f.tag) {
		case CT_VERSION:
			version = !strcmp(s, IM_VERSION);
			free(s);
			break;
		case CT_CA_DIR:
			free(out->ca_dir);
			out->ca_dir = s;
			break;
		case CT_SECRET:
			pending_free(&p);
			p.name = s;
			break;
		case CT_HEADER:
			free(p.header);
			p.header = s;
			break;
		case CT_HOST:
			strv_push_take(&p.hosts, s);
			break;
		case CT_RULE:
			strv_push_take(&out->allow_http, s);
			break;
		case CT_ALLOW:
			strv_push_take(&out->allow, s);
			break;
		case CT_DENY:
			strv_push_take(&out->deny, s);
			break;
		case CT_MAP:
			strv_push_take(&out->map, s);
			break;
		case CT_SSH_SOCK:
			free(out->ssh_auth_sock);
			out->ssh_auth_sock = s;
			break;
		case CT_KNOWN_HOSTS:
			strv_push_take(&out->known_hosts, s);
			break;
		default:
			free(s);
			return bad_config(out, &p, e, "an unknown field");
		}
	}
	if (rc < 0)
		return bad_config(out, &p, e, "a field past the message's end");
	if (!version)
		return bad_config(out, &p, e, "another version (agentjail and agentjail-tls are "
					      "from different builds: reinstall them together)");
	if (p.name || p.header || p.hosts.n)
		return bad_config(out, &p, e, "a secret without its value");
	if (!out->ca_dir)
		return bad_config(out, &p, e, "no CA directory");
	return 0;
}

/* ---- a tunnel ---- */

enum { TT_ID = 1, TT_HOST, TT_PORT, TT_AT, TT_T0, TT_PROTO, TT_TLS, TT_RULE, TT_ADDR, TT_HELD,
       TT_TO_CLIENT };

void im_tunnel_encode(const struct im_tunnel *t, struct imsg *m)
{
	im_begin(m, IM_TUNNEL);
	im_put_u64(m, TT_ID, t->id);
	im_put_str(m, TT_HOST, t->host);
	im_put_u64(m, TT_PORT, t->port);
	im_put_u64(m, TT_AT, (uint64_t)t->at_ms);
	im_put_u64(m, TT_T0, (uint64_t)t->t0_mono_ms);
	im_put_u64(m, TT_PROTO, (uint64_t)t->proto);
	im_put_u64(m, TT_TLS, t->tls);
	im_put_str(m, TT_RULE, t->rule);
	im_put_str(m, TT_ADDR, t->addr);
	im_put(m, TT_HELD, t->held, t->held_len);
	im_put(m, TT_TO_CLIENT, t->to_client, t->to_client_len);
	im_end(m);
}

int im_tunnel_decode(const uint8_t *buf, size_t n, struct im_tunnel *out)
{
	memset(out, 0, sizeof *out);
	enum im_type t;
	struct im_iter it;
	struct im_field f;
	if (im_open(buf, n, &t, &it) < 0 || t != IM_TUNNEL)
		return -1;
	int rc;
	unsigned seen = 0;
	while ((rc = im_next(&it, &f)) > 0) {
		uint64_t v = 0;
		bool ok = f.tag < 32 && !(seen & 1u << f.tag); /* each field once */
		switch (ok ? f.tag : 0) {
		case 0:
			ok = false;
			break;
		case TT_ID:
			ok = im_u64(&f, &out->id);
			break;
		case TT_HOST:
			ok = str_into(&f, out->host, sizeof out->host) && out->host[0];
			break;
		case TT_PORT:
			ok = im_u64(&f, &v) && v && v <= 65535;
			out->port = (uint16_t)v;
			break;
		case TT_AT:
			ok = im_u64(&f, &v);
			out->at_ms = (int64_t)v;
			break;
		case TT_T0:
			ok = im_u64(&f, &v);
			out->t0_mono_ms = (int64_t)v;
			break;
		case TT_PROTO:
			/* a tunnel's kinds: CONNECT, plain HTTP, SOCKS, a captured connection */
			ok = im_u64(&f, &v) && (v == NP_CONNECT || v == NP_HTTP || v == NP_SOCKS ||
						 v == NP_TCP);
			out->proto = (enum net_proto)v;
			break;
		case TT_TLS:
			ok = im_u64(&f, &v) && v <= 1;
			out->tls = v;
			break;
		case TT_RULE:
			ok = str_into(&f, out->rule, sizeof out->rule);
			break;
		case TT_ADDR:
			ok = str_into(&f, out->addr, sizeof out->addr);
			break;
		case TT_HELD:
			out->held = f.v;
			out->held_len = f.n;
			break;
		case TT_TO_CLIENT:
			out->to_client = f.v;
			out->to_client_len = f.n;
			break;
		default:
			ok = false;
		}
		if (!ok)
			return -1;
		seen |= 1u << f.tag;
	}
	return rc < 0 || !(seen & 1u << TT_HOST) || !(seen & 1u << TT_PORT) ? -1 : 0;
}

/* ---- an event ---- */

enum { ET_AT = 1, ET_PROTO, ET_HOST, ET_PORT, ET_ALLOWED, ET_FAILED, ET_RULE, ET_ADDR, ET_UP,
       ET_DOWN, ET_DUR, ET_ERROR };

void im_event_encode(const struct net_event *ev, struct imsg *m)
{
	im_begin(m, IM_EVENT);
	im_put_u64(m, ET_AT, (uint64_t)ev->at_ms);
	im_put_u64(m, ET_PROTO, (uint64_t)ev->proto);
	im_put_str(m, ET_HOST, ev->host);
	im_put_u64(m, ET_PORT, ev->port);
	im_put_u64(m, ET_ALLOWED, ev->allowed);
	im_put_u64(m, ET_FAILED, ev->failed);
	im_put_str(m, ET_RULE, ev->rule);
	im_put_str(m, ET_ADDR, ev->addr);
	im_put_u64(m, ET_UP, ev->bytes_up);
	im_put_u64(m, ET_DOWN, ev->bytes_down);
	im_put_u64(m, ET_DUR, (uint64_t)ev->dur_ms);
	im_put_str(m, ET_ERROR, ev->error);
	im_end(m);
}

/* What agentjail-tls says is the jail's choice of bytes as much as a host the proxy read: one
 * line, no control byte (what is shown is cleaned again there, doc/design.md §6). */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			*s = '?';
}

int im_event_decode(const uint8_t *buf, size_t n, struct net_event *ev)
{
	memset(ev, 0, sizeof *ev);
	enum im_type t;
	struct im_iter it;
	struct im_field f;
	if (im_open(buf, n, &t, &it) < 0 || t != IM_EVENT)
		return -1;
	int rc;
	unsigned seen = 0;
	while ((rc = im_next(&it, &f)) > 0) {
		uint64_t v = 0;
		bool ok = f.tag < 32 && !(seen & 1u << f.tag); /* each field once */
		switch (ok ? f.tag : 0) {
		case 0:
			ok = false;
			break;
		case ET_AT:
			ok = im_u64(&f, &v);
			ev->at_ms = (int64_t)v;
			break;
		case ET_PROTO:
			ok = im_u64(&f, &v) && v < NP__N;
			ev->proto = (enum net_proto)v;
			break;
		case ET_HOST:
			ok = str_into(&f, ev->host, sizeof ev->host);
			break;
		case ET_PORT:
			ok = im_u64(&f, &v) && v <= 65535;
			ev->port = (uint16_t)v;
			break;
		case ET_ALLOWED:
		case ET_FAILED:
			ok = im_u64(&f, &v) && v <= 1;
			*(f.tag == ET_ALLOWED ? &ev->allowed : &ev->failed) = v;
			break;
		case ET_RULE:
			ok = str_into(&f, ev->rule, sizeof ev->rule);
			break;
		case ET_ADDR:
			ok = str_into(&f, ev->addr, sizeof ev->addr);
			break;
		case ET_UP:
			ok = im_u64(&f, &ev->bytes_up);
			break;
		case ET_DOWN:
			ok = im_u64(&f, &ev->bytes_down);
			break;
		case ET_DUR:
			ok = im_u64(&f, &v);
			ev->dur_ms = (int64_t)v;
			break;
		case ET_ERROR:
			ok = str_into(&f, ev->error, sizeof ev->error);
			break;
		default:
			ok = false;
		}
		if (!ok)
			return -1;
		seen |= 1u << f.tag;
	}
	if (rc < 0)
		return -1;
	printable(ev->host);
	printable(ev->rule);
	printable(ev->addr);
	printable(ev->error);
	return 0;
}
