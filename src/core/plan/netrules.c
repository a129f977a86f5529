/* netrules: normalizing host names, parsing --allow-domain / --deny-domain / --map-host, the
 * checks the egress proxy makes before any DNS lookup, and the classes of the addresses it may
 * connect to (doc/design.md §4). */
#include "core/plan/netrules.h"

#include <arpa/inet.h>
#include <idn2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/plan/bwrap_argv.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- host names ---- */

static bool is_ldh(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* LDH labels of 1..63 characters, 253 in all. */
static int check_labels(const char *h, const char *in, struct err *e)
{
	size_t n = strlen(h);
	if (n == 0)
		return err_set(e, 0, in, "empty host name");
	if (n > NET_HOST_MAX)
		return err_set(e, 0, in, "host name longer than %d characters", NET_HOST_MAX);
	size_t label = 0;
	for (const char *p = h;; p++) {
		if (*p == '.' || *p == '\0') {
			if (label == 0)
				return err_set(e, 0, in, "host name with an empty label (\"..\" or a "
							 "leading dot)");
			if (label > 63)
				return err_set(e, 0, in, "host name with a label longer than 63 "
							 "characters");
			if (*p == '\0')
				return 0;
			label = 0;
			continue;
		}
		if (!is_ldh(*p))
			return err_set(e, 0, in, "host name with a character outside letters, "
						 "digits, '-' and '.'");
		label++;
	}
}

/* An IP literal in canonical text: IPv4 dotted quad, IPv6 as inet_ntop prints it, an
 * IPv4-mapped IPv6 address as its IPv4. 1 parsed, 0 not an IP. */
static int parse_ip(const char *s, int *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = AF_INET;
		return 1;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		if (!memcmp(addr, v4mapped, 12)) {
			memmove(addr, addr + 12, 4);
			memset(addr + 4, 0, 12);
			*family = AF_INET;
		} else {
			*family = AF_INET6;
		}
		return 1;
	}
	return 0;
}

static char *ip_text(int family, const uint8_t *addr)
{
	char buf[INET6_ADDRSTRLEN];
	if (!inet_ntop(family, addr, buf, sizeof buf))
		abort(); /* cannot fail for these families and this size */
	return xstrdup(buf);
}

/* The last label is a number ("127.1", "0x7f.1", "2130706433"): what resolvers and URL parsers
 * take for an IPv4 address, so it is one or nothing (never a name that reaches the loopback). */
static bool ends_in_number(const char *h)
{
	const char *l = strrchr(h, '.');
	l = l ? l + 1 : h;
	if (!*l)
		return false;
	if (l[0] == '0' && l[1] == 'x')
		return true;
	for (; *l; l++)
		if (*l < '0' || *l > '9')
			return false;
	return true;
}

int net_host_normalize(const char *in, char **out, struct err *e)
{
	*out = NULL;
	size_t n = strlen(in);
	if (n > 1024)
		return err_set(e, 0, "", "host name longer than %d characters", NET_HOST_MAX);
	char *s;
	if (n >= 2 && in[0] == '[' && in[n - 1] == ']') {
		s = xstrndup(in + 1, n - 2);
		int fam;
		uint8_t a[16];
		if (strchr(s, ':') && parse_ip(s, &fam, a)) {
			*out = ip_text(fam, a);
			free(s);
			return 0;
		}
		free(s);
		return err_set(e, 0, in, "not an IPv6 address inside [ ]");
	}
	s = xstrdup(in);
	if (n > 0 && s[n - 1] == '.')
		s[n - 1] = '\0'; /* one trailing dot: the root */
	int fam;
	uint8_t a[16];
	if (parse_ip(s, &fam, a)) {
		*out = ip_text(fam, a);
		free(s);
		return 0;
	}
	bool ascii = true;
	for (char *p = s; *p; p++) {
		if ((unsigned char)*p >= 0x80)
			ascii = false;
		else if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	}
	if (!ascii) {
		/* UTS #46 non-transitional (ß stays ß), to A-labels; pure ASCII is left alone:
		 * libidn2 refuses real names such as "r3---sn-x.googlevideo.com" */
		char *idn = NULL;
		int rc = idn2_lookup_u8((const uint8_t *)s, (uint8_t **)&idn,
					IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
		free(s);
		if (rc != IDN2_OK) {
			free(idn);
			return err_set(e, 0, in, "not a valid international host name (%s)",
				       idn2_strerror(rc));
		}
		s = idn;
		for (char *p = s; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
		n = strlen(s);
		if (n > 0 && s[n - 1] == '.')
			s[n - 1] = '\0'; /* a trailing "。" became a dot */
	}
	if (check_labels(s, in, e) < 0) {
		free(s);
		return -1;
	}
	if (ends_in_number(s)) {
		struct in_addr ia;
		if (inet_aton(s, &ia) == 0) {
			free(s);
			return err_set(e, 0, in, "ends in a number but is not an IPv4 address");
		}
		free(s);
		*out = ip_text(AF_INET, (const uint8_t *)&ia);
		return 0;
	}
	*out = s;
	return 0;
}

/* ---- rules ---- */

/* "PORT" after the host: 1..65535, digits only. */
static int parse_port(const char *p, const char *spec, int *out, struct err *e)
{
	long v = 0;
	if (!*p)
		return err_set(e, 0, spec, "empty port after ':'");
	for (const char *c = p; *c; c++) {
		if (*c < '0' || *c > '9' || v > 65535)
			return err_set(e, 0, spec, "port is not a number from 1 to 65535");
		v = v * 10 + (*c - '0');
	}
	if (v < 1 || v > 65535)
		return err_set(e, 0, spec, "port is not a number from 1 to 65535");
	*out = (int)v;
	return 0;
}

/* Split "host", "host:port", "[v6]", "[v6]:port", "v6" into host text and port (0: none). */
static int split_host_port(const char *spec, char **host, int *port, struct err *e)
{
	*port = 0;
	*host = NULL;
	const char *colon = strchr(spec, ':');
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close)
			return err_set(e, 0, spec, "'[' without ']' around an IPv6 address");
		if (close[1] == ':') {
			if (parse_port(close + 2, spec, port, e) < 0)
				return -1;
		} else if (close[1]) {
			return err_set(e, 0, spec, "unexpected text after ']' (want [ADDR]:PORT)");
		}
		*host = xstrndup(spec, (size_t)(close - spec) + 1);
		return 0;
	}
	if (colon && !strchr(colon + 1, ':')) {
		if (parse_port(colon + 1, spec, port, e) < 0)
			return -1;
		*host = xstrndup(spec, (size_t)(colon - spec));
		return 0;
	}
	*host = xstrdup(spec); /* no colon, or a bare IPv6 address */
	return 0;
}

/* "/tls" or "/http" at the end of spec: what its port carries; *len the length before it. */
static int split_carries(const char *spec, size_t *len, enum netrule_carries *c, struct err *e)
{
	const char *slash = strrchr(spec, '/');
	*len = strlen(spec);
	*c = NC_ANY;
	if (!slash)
		return 0;
	if (!strcmp(slash, "/tls"))
		*c = NC_TLS;
	else if (!strcmp(slash, "/http"))
		*c = NC_HTTP;
	else
		return err_set(e, 0, spec, "unknown '%.40s' (after a port: /tls or /http, what the "
					   "port carries)", slash);
	*len = (size_t)(slash - spec);
	return 0;
}

int netrule_parse(const char *spec, struct netrule *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	char *h = NULL;
	int port;
	size_t len;
	enum netrule_carries carries;
	if (split_carries(spec, &len, &carries, e) < 0)
		return -1;
	char *hp = xstrndup(spec, len);
	int split = split_host_port(hp, &h, &port, e);
	free(hp);
	if (split < 0) {
		char what[sizeof e->what];
		snprintf(what, sizeof what, "%s", e ? e->what : "");
		return err_set(e, 0, spec, "%s", what);
	}
	if (carries != NC_ANY && !port) {
		free(h);
		return err_set(e, 0, spec, "%s needs a port before it (80 and 443 are judged as HTTP "
					   "and TLS already): example.com:8443/tls",
			       carries == NC_TLS ? "/tls" : "/http");
	}
	bool wild = !strncmp(h, "*.", 2);
	if (!strcmp(h, "*") || (!wild && strchr(h, '*'))) {
		free(h);
		return err_set(e, 0, spec, "'*' only as the first label: *.example.com (subdomains "
					   "of example.com)");
	}
	char *norm = NULL;
	int rc = net_host_normalize(wild ? h + 2 : h, &norm, e);
	free(h);
	if (rc < 0) {
		char what[sizeof e->what];
		snprintf(what, sizeof what, "%s", e ? e->what : "");
		return err_set(e, 0, spec, "%s", what); /* the whole entry, not its host */
	}
	int fam;
	uint8_t a[16];
	bool ip = parse_ip(norm, &fam, a);
	if (wild && (ip || !strchr(norm, '.'))) {
		free(norm);
		return err_set(e, 0, spec, ip ? "a wildcard needs a domain, not an address"
					      : "a wildcard needs at least two labels after '*.' "
						"(*.example.com, not *.com)");
	}
	out->kind = wild ? NR_WILDCARD : !ip ? NR_NAME : fam == AF_INET ? NR_IPV4 : NR_IPV6;
	if (ip)
		memcpy(out->addr, a, sizeof out->addr);
	out->host = norm;
	out->port = port;
	out->carries = carries;
	out->spec = xstrdup(spec);
	return 0;
}

int netrule_parse_deny(const char *spec, struct netrule *out, struct err *e)
{
	if (netrule_parse(spec, out, e) < 0)
		return -1;
	if (out->carries == NC_ANY)
		return 0;
	netrule_free(out);
	return err_set(e, 0, spec, "/tls and /http say what an allowed port carries; a deny entry "
				   "refuses every byte (drop the suffix)");
}

void netrule_free(struct netrule *r)
{
	free(r->host);
	free(r->spec);
	memset(r, 0, sizeof *r);
}

int netmap_parse(const char *spec, struct netmap *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	const char *eq = strchr(spec, '=');
	if (!eq)
		return err_set(e, 0, spec, "--map-host needs NAME=ADDR (e.g. api.test=127.0.0.1)");
	char *name = xstrndup(spec, (size_t)(eq - spec));
	char *host = NULL;
	int rc = net_host_normalize(name, &host, e);
	free(name);
	int fam;
	uint8_t a[16];
	if (rc < 0) {
		char what[sizeof e->what];
		snprintf(what, sizeof what, "NAME: %.480s", e ? e->what : "");
		return err_set(e, 0, spec, "%s", what);
	}
	if (parse_ip(host, &fam, a)) {
		free(host);
		return err_set(e, 0, spec, "--map-host NAME is an address; it needs a host name");
	}
	const char *addr = eq + 1;
	size_t n = strlen(addr);
	char *bare = n >= 2 && addr[0] == '[' && addr[n - 1] == ']' ? xstrndup(addr + 1, n - 2)
								   : xstrdup(addr);
	bool ok = parse_ip(bare, &fam, a) && (addr[0] != '[' || strchr(bare, ':'));
	free(bare);
	if (!ok) {
		free(host);
		return err_set(e, 0, spec, "--map-host ADDR is not an IPv4 or IPv6 address");
	}
	out->host = host;
	out->family = fam;
	memcpy(out->addr, a, sizeof out->addr);
	out->spec = xstrdup(spec);
	return 0;
}

void netmap_free(struct netmap *m)
{
	free(m->host);
	free(m->spec);
	memset(m, 0, sizeof *m);
}

static int rules_from(const struct strv *v, struct netrule **out, size_t *n, const char *flag,
		      struct err *e)
{
	*out = v && v->n ? xcalloc(v->n, sizeof **out) : NULL;
	*n = 0;
	for (size_t i = 0; v && i < v->n; i++) {
		bool deny = !strcmp(flag, "--deny-domain");
		if ((deny ? netrule_parse_deny(v->v[i], &(*out)[i], e)
			  : netrule_parse(v->v[i], &(*out)[i], e)) < 0) {
			err_wrap(e, "%s", flag);
			return -1;
		}
		(*n)++;
	}
	return 0;
}

int netrules_build(const struct strv *allow, const struct strv *deny, const struct strv *map,
		   struct netrules *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (rules_from(allow, &out->allow, &out->n_allow, "--allow-domain", e) < 0 ||
	    rules_from(deny, &out->deny, &out->n_deny, "--deny-domain", e) < 0)
		goto fail;
	out->map = map && map->n ? xcalloc(map->n, sizeof *out->map) : NULL;
	for (size_t i = 0; map && i < map->n; i++) {
		if (netmap_parse(map->v[i], &out->map[i], e) < 0)
			goto fail;
		out->n_map++;
	}
	return 0;
fail:
	netrules_free(out);
	return -1;
}

void netrules_free(struct netrules *r)
{
	for (size_t i = 0; i < r->n_allow; i++)
		netrule_free(&r->allow[i]);
	for (size_t i = 0; i < r->n_deny; i++)
		netrule_free(&r->deny[i]);
	for (size_t i = 0; i < r->n_map; i++)
		netmap_free(&r->map[i]);
	free(r->allow);
	free(r->deny);
	free(r->map);
	memset(r, 0, sizeof *r);
}

/* ---- matching ---- */

bool netrule_host_matches(const struct netrule *r, const char *host)
{
	if (r->kind != NR_WILDCARD)
		return !strcmp(r->host, host);
	size_t hn = strlen(host), sn = strlen(r->host);
	return hn > sn + 1 && host[hn - sn - 1] == '.' && !strcmp(host + hn - sn, r->host);
}

/* port 0 in an allow rule (and a mapping): the default ports, 80 and 443 */
static bool default_port(uint16_t port)
{
	return port == 80 || port == 443;
}

char *net_suggest_entry(const char *host, int port)
{
	if (port == 0 || default_port((uint16_t)port))
		return xstrdup(host);
	struct strbuf b = STRBUF_INIT;
	sb_addf(&b, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
	return sb_steal(&b);
}

/* Port 0 asks about the name alone (the DNS stub): allowed when an allow rule or a mapping
 * names it, at whatever port, and no deny rule without a port refuses it. */
enum net_verdict netrules_check(const struct netrules *r, const char *host, uint16_t port,
				struct net_decision *d)
{
	memset(d, 0, sizeof *d);
	/* a deny rule without a port refuses every port of that host */
	for (size_t i = 0; i < r->n_deny; i++) {
		const struct netrule *x = &r->deny[i];
		if (netrule_host_matches(x, host) && (x->port == 0 || (port && x->port == port))) {
			d->rule = x;
			return d->v = NV_DENY_LISTED;
		}
	}
	for (size_t i = 0; i < r->n_map; i++)
		if (!strcmp(r->map[i].host, host)) {
			d->mapped = &r->map[i];
			break;
		}
	const struct netrule *named = NULL;
	for (size_t i = 0; i < r->n_allow; i++) {
		const struct netrule *x = &r->allow[i];
		if (!netrule_host_matches(x, host))
			continue;
		if (!port || (x->port ? x->port == port : default_port(port))) {
			d->rule = x;
			return d->v = NV_ALLOW;
		}
		if (!named)
			named = x;
	}
	if (d->mapped && (!port || default_port(port)))
		return d->v = NV_ALLOW;
	if (named || d->mapped) {
		d->rule = named;
		return d->v = NV_BAD_PORT;
	}
	return d->v = NV_NOT_ALLOWED;
}

enum netrule_carries netrules_carries(const struct netrules *r, const char *host, uint16_t port)
{
	enum netrule_carries c = NC_ANY;
	for (size_t i = 0; i < r->n_allow; i++) {
		const struct netrule *x = &r->allow[i];
		if (x->carries == NC_ANY || x->port != port || !netrule_host_matches(x, host))
			continue;
		if (x->carries == NC_TLS)
			return NC_TLS;
		c = NC_HTTP;
	}
	return c;
}

/* ---- addresses ---- */

static bool in4(const uint8_t *a, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3, int bits)
{
	uint32_t x = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	uint32_t y = (uint32_t)b0 << 24 | (uint32_t)b1 << 16 | (uint32_t)b2 << 8 | b3;
	uint32_t mask = bits ? ~0u << (32 - bits) : 0;
	return (x & mask) == (y & mask);
}

static enum netaddr_class classify4(const uint8_t *a)
{
	if (in4(a, 0, 0, 0, 0, 32))
		return NA_UNSPECIFIED;
	if (in4(a, 169, 254, 169, 254, 32) || in4(a, 100, 100, 100, 200, 32))
		return NA_METADATA; /* AWS/GCP/Azure/OpenStack; Alibaba */
	if (in4(a, 127, 0, 0, 0, 8))
		return NA_LOOPBACK;
	if (in4(a, 10, 0, 0, 0, 8) || in4(a, 172, 16, 0, 0, 12) || in4(a, 192, 168, 0, 0, 16) ||
	    in4(a, 100, 64, 0, 0, 10))
		return NA_PRIVATE;
	if (in4(a, 169, 254, 0, 0, 16))
		return NA_LINKLOCAL;
	if (in4(a, 224, 0, 0, 0, 4))
		return NA_MULTICAST;
	if (in4(a, 0, 0, 0, 0, 8) || in4(a, 240, 0, 0, 0, 4) || in4(a, 192, 0, 0, 0, 24) ||
	    in4(a, 192, 0, 2, 0, 24) || in4(a, 198, 51, 100, 0, 24) ||
	    in4(a, 203, 0, 113, 0, 24) || in4(a, 198, 18, 0, 0, 15) || in4(a, 192, 88, 99, 0, 24))
		return NA_RESERVED; /* this network, future use and broadcast, IETF, docs,
				     * benchmarks, the old 6to4 relay */
	return NA_PUBLIC;
}

static bool pfx6(const uint8_t *a, const uint8_t *p, int bits)
{
	int full = bits / 8, rest = bits % 8;
	if (memcmp(a, p, (size_t)full))
		return false;
	return !rest || ((a[full] ^ p[full]) & (0xff << (8 - rest))) == 0;
}

static enum netaddr_class classify6(const uint8_t *a)
{
	static const uint8_t zero[16] = {0}, one[16] = {[15] = 1},
			     v4mapped[12] = {[10] = 0xff, [11] = 0xff},
			     nat64[12] = {0, 0x64, 0xff, 0x9b},
			     metadata[16] = {0xfd, 0, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54},
			     six2four[2] = {0x20, 0x02}, docs[4] = {0x20, 0x01, 0x0d, 0xb8},
			     nat64local[6] = {0, 0x64, 0xff, 0x9b, 0, 1}, teredo[4] = {0x20, 0x01},
			     discard[8] = {0x01, 0x00}, ula[1] = {0xfc}, ll[2] = {0xfe, 0x80},
			     sitelocal[2] = {0xfe, 0xc0}, mc[1] = {0xff}, global[1] = {0x20};
	if (!memcmp(a, zero, 16))
		return NA_UNSPECIFIED;
	if (!memcmp(a, one, 16))
		return NA_LOOPBACK;
	/* an IPv4 address inside: judged as that address (mapped, NAT64, 6to4) */
	if (!memcmp(a, v4mapped, 12) || !memcmp(a, nat64, 12))
		return classify4(a + 12);
	if (pfx6(a, six2four, 16))
		return classify4(a + 2);
	if (!memcmp(a, metadata, 16))
		return NA_METADATA;
	if (pfx6(a, ula, 7) || pfx6(a, sitelocal, 10) || pfx6(a, nat64local, 48))
		return NA_PRIVATE;
	if (pfx6(a, ll, 10))
		return NA_LINKLOCAL;
	if (pfx6(a, mc, 8))
		return NA_MULTICAST;
	if (pfx6(a, docs, 32) || pfx6(a, teredo, 32) || pfx6(a, discard, 64) || pfx6(a, zero, 96))
		return NA_RESERVED;
	return pfx6(a, global, 3) ? NA_PUBLIC : NA_RESERVED; /* outside 2000::/3: unallocated */
}

enum netaddr_class netaddr_classify(int family, const uint8_t *addr)
{
	if (family == AF_INET)
		return classify4(addr);
	if (family == AF_INET6)
		return classify6(addr);
	return NA_RESERVED;
}

bool netaddr_on_loopback(int family, const uint8_t *addr)
{
	static const uint8_t one[16] = {[15] = 1}, v4mapped[12] = {[10] = 0xff, [11] = 0xff};
	if (family == AF_INET)
		return addr[0] == 127;
	return family == AF_INET6 &&
	       (!memcmp(addr, one, 16) || (!memcmp(addr, v4mapped, 12) && addr[12] == 127));
}

const char *netaddr_class_name(enum netaddr_class c)
{
	switch (c) {
	case NA_PUBLIC:
		return "public";
	case NA_LOOPBACK:
		return "loopback";
	case NA_PRIVATE:
		return "private";
	case NA_LINKLOCAL:
		return "link-local";
	case NA_METADATA:
		return "cloud metadata";
	case NA_UNSPECIFIED:
		return "unspecified";
	case NA_MULTICAST:
		return "multicast";
	case NA_RESERVED:
		return "reserved";
	}
	return "?";
}

/* IPv4-mapped IPv6 as IPv4 (4 bytes, AF_INET); anything else unchanged. */
static void unmap(int *family, const uint8_t *addr, uint8_t out[16])
{
	static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};
	memset(out, 0, 16);
	if (*family == AF_INET6 && !memcmp(addr, v4mapped, 12)) {
		*family = AF_INET;
		memcpy(out, addr + 12, 4);
	} else {
		memcpy(out, addr, *family == AF_INET ? 4 : 16);
	}
}

static bool same_addr(int fa, const uint8_t *a, int fb, const uint8_t *b)
{
	return fa == fb && !memcmp(a, b, fa == AF_INET ? 4 : 16);
}

bool netrules_addr_ok(const struct netrules *r, const struct net_decision *d, int family,
		      const uint8_t *addr)
{
	(void)r;
	if (d->v != NV_ALLOW || (family != AF_INET && family != AF_INET6))
		return false;
	uint8_t a[16];
	unmap(&family, addr, a);
	if (d->mapped) /* a mapped name goes to its address and nowhere else */
		return same_addr(family, a, d->mapped->family, d->mapped->addr);
	if (netaddr_classify(family, a) == NA_PUBLIC)
		return true;
	const struct netrule *x = d->rule;
	if (!x || (x->kind != NR_IPV4 && x->kind != NR_IPV6))
		return false;
	return same_addr(family, a, x->kind == NR_IPV4 ? AF_INET : AF_INET6, x->addr);
}

/* ---- messages ---- */

/* host:port as a flag takes it: "[v6]:port" for IPv6, the port only when not a default one */
static void add_hostport(struct strbuf *b, const char *host, uint16_t port, bool always_port)
{
	bool v6 = strchr(host, ':') != NULL;
	bool with_port = always_port || !default_port(port);
	if (v6 && with_port)
		sb_addf(b, "[%s]", host);
	else
		sb_add(b, host);
	if (with_port)
		sb_addf(b, ":%u", (unsigned)port);
}

char *net_deny_reason(const struct net_decision *d, const char *host, uint16_t port)
{
	/* the host may come from the jail: no control characters in a line we print */
	char *h = xstrndup(host, NET_HOST_MAX + 3);
	for (char *p = h; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	struct strbuf b = STRBUF_INIT;
	add_hostport(&b, h, port, true);
	switch (d->v) {
	case NV_DENY_LISTED:
		sb_addf(&b, " is refused by --deny-domain %s", d->rule ? d->rule->spec : "?");
		break;
	case NV_NOT_ALLOWED:
		sb_add(&b, " is not on the allow list (add --allow-domain ");
		add_hostport(&b, h, port, false);
		sb_add(&b, ")");
		break;
	case NV_BAD_PORT:
		sb_addf(&b, ": port %u is not allowed for %s (add --allow-domain ", (unsigned)port,
			d->rule ? d->rule->spec : h);
		add_hostport(&b, h, port, true);
		sb_add(&b, ")");
		break;
	case NV_ALLOW:
		sb_add(&b, " is allowed by the rules");
		break;
	}
	free(h);
	return sb_steal(&b);
}

/* ---- the name inside an approved connection ---- */

enum net_name_match netrules_name_check(const struct netrules *r, const struct net_decision *d,
					const char *host, uint16_t port, const char *name,
					char **norm)
{
	if (norm)
		*norm = NULL;
	int fam;
	uint8_t a[16];
	if (!name)
		return parse_ip(host, &fam, a) ? NM_NONE_OK : NM_MISSING;
	char *n = NULL;
	struct err e = {0};
	if (net_host_normalize(name, &n, &e) < 0)
		return NM_INVALID;
	enum net_name_match m = NM_MISMATCH;
	struct net_decision d2;
	if (!strcmp(n, host))
		m = NM_SAME;
	else if (d->rule && d->rule->kind == NR_WILDCARD && netrule_host_matches(d->rule, n) &&
		 netrules_check(r, n, port, &d2) == NV_ALLOW)
		m = NM_WILDCARD;
	if (norm)
		*norm = n;
	else
		free(n);
	return m;
}

char *net_name_reason(enum net_name_match m, const char *what, const char *host, uint16_t port,
		      const char *name)
{
	struct strbuf b = STRBUF_INIT;
	if (m == NM_MISSING) {
		sb_addf(&b, "no %s sent for ", what);
		add_hostport(&b, host, port, true);
		sb_add(&b, " (a connection allowed by name must name it)");
		return sb_steal(&b);
	}
	/* name came from the jail: printable, bounded */
	char shown[NET_HOST_MAX + 4];
	size_t i = 0;
	for (; name && name[i] && i < sizeof shown - 1; i++) {
		unsigned char c = (unsigned char)name[i];
		shown[i] = c > 0x20 && c < 0x7f ? (char)c : '?';
	}
	shown[i] = '\0';
	sb_addf(&b, "%s %s %s ", what, shown,
		m == NM_INVALID ? "is not a valid host name; this connection was allowed for"
				: "does not match");
	add_hostport(&b, host, port, true);
	if (m != NM_INVALID)
		sb_add(&b, ", the name this connection was allowed for");
	return sb_steal(&b);
}

/* ---- the environment inside ---- */

#define NR_STR(x) #x
#define NR_XSTR(x) NR_STR(x)
#define PROXY_HOSTPORT "127.0.0.1:" NR_XSTR(NET_PROXY_PORT)
#define PROXY_URL "http://" PROXY_HOSTPORT

/* What each honours: curl (http_proxy lower case only, HTTPS_PROXY/https_proxy, ALL_PROXY,
 * NO_PROXY), wget (lower case), git over https (libcurl's), python (urllib, requests, pip),
 * Go, Rust's reqwest (codex), Ruby; Node only with NODE_USE_ENV_PROXY=1 (22.21+/24), Claude
 * Code and Gemini CLI read HTTPS_PROXY themselves; npm, pnpm and yarn 1 read npm_config_* (over
 * any .npmrc), yarn 2+ YARN_HTTP(S)_PROXY, pip PIP_PROXY (over pip.conf), gRPC https_proxy,
 * rsync:// RSYNC_PROXY (host:port, CONNECT); git over ssh runs GIT_SSH_COMMAND (over
 * core.sshCommand and GIT_SSH) with the init helper as its ProxyCommand (`__connect`). */
static const char *const proxy_env[] = {
	"HTTP_PROXY=" PROXY_URL,
	"HTTPS_PROXY=" PROXY_URL,
	"ALL_PROXY=" PROXY_URL,
	"http_proxy=" PROXY_URL,
	"https_proxy=" PROXY_URL,
	"all_proxy=" PROXY_URL,
	"NO_PROXY=localhost,127.0.0.1,::1",
	"no_proxy=localhost,127.0.0.1,::1",
	"NODE_USE_ENV_PROXY=1",
	"npm_config_proxy=" PROXY_URL,
	"npm_config_https_proxy=" PROXY_URL,
	"YARN_HTTP_PROXY=" PROXY_URL,
	"YARN_HTTPS_PROXY=" PROXY_URL,
	"PIP_PROXY=" PROXY_URL,
	"RSYNC_PROXY=" PROXY_HOSTPORT,
	"GIT_SSH_COMMAND=ssh -o ProxyCommand='" BW_INIT_PATH " __connect %h %p'",
	NULL};

/* Proxy settings a jail may have been handed (--env NAME, a profile) that would send traffic
 * elsewhere or around the proxy; the ones net_proxy_env sets are replaced anyway. */
static const char *const proxy_clear[] = {
	"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY", "SOCKS_PROXY",
	"WS_PROXY", "WSS_PROXY", "GRPC_PROXY", "http_proxy", "https_proxy", "all_proxy",
	"no_proxy", "ftp_proxy", "socks_proxy", "ws_proxy", "wss_proxy", "grpc_proxy",
	"SOCKS5_SERVER", "SOCKS_SERVER", "NODE_USE_ENV_PROXY", "GLOBAL_AGENT_HTTP_PROXY",
	"GLOBAL_AGENT_HTTPS_PROXY", "GLOBAL_AGENT_NO_PROXY", "npm_config_proxy",
	"npm_config_https_proxy", "npm_config_noproxy", "NPM_CONFIG_PROXY",
	"NPM_CONFIG_HTTPS_PROXY", "NPM_CONFIG_NOPROXY", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY",
	"PIP_PROXY", "CARGO_HTTP_PROXY", "RSYNC_PROXY", "RSYNC_CONNECT_PROG", "GIT_PROXY_COMMAND",
	"GIT_SSH", "GIT_SSH_COMMAND", NULL};

const char *const *net_proxy_env(void)
{
	return proxy_env;
}

const char *const *net_proxy_env_clear(void)
{
	return proxy_clear;
}

bool net_spec_is_wildcard(const char *spec)
{
	struct netrule r = {0};
	struct err e = {0};
	bool w = netrule_parse(spec, &r, &e) == 0 && r.kind == NR_WILDCARD;
	netrule_free(&r);
	return w;
}

char *net_wildcard_note(const struct strv *allow)
{
	struct strbuf specs = STRBUF_INIT;
	char *first = NULL; /* the first wildcard's domain, for the example */
	size_t n = 0;
	for (size_t i = 0; allow && i < allow->n; i++) {
		struct netrule r = {0};
		struct err e = {0};
		if (netrule_parse(allow->v[i], &r, &e) == 0 && r.kind == NR_WILDCARD) {
			sb_addf(&specs, "%s*.%s", n ? ", " : "", r.host);
			if (!n)
				first = xstrdup(r.host);
			n++;
		}
		netrule_free(&r);
	}
	if (!n) {
		sb_free(&specs);
		return NULL;
	}
	char *note = n == 1 ? xasprintf("%s: any name under %s is looked up by the host's resolver, "
					"which asks %s's name servers: a jail can send them data in "
					"the names it looks up (exact names, such as api.%s, close "
					"that)",
					sb_str(&specs), first, first, first)
			    : xasprintf("%s: any name under these domains is looked up by the host's "
					"resolver, which asks their name servers: a jail can send "
					"them data in the names it looks up (exact names, such as "
					"api.%s, close that)",
					sb_str(&specs), first);
	free(first);
	sb_free(&specs);
	return note;
}
