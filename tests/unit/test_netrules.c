/* Tests for core/plan/netrules: host normalization (IDNA, case, trailing dot, IP literals),
 * parsing of --allow-domain / --deny-domain / --map-host, matching (exact, wildcard, ports,
 * deny first, mappings), address classes, the address check after resolution, the one-line
 * reasons, and the proxy environment. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/net/netevent.h"
#include "core/plan/netrules.h"

static void norm_is(const char *in, const char *want)
{
	char *out = NULL;
	struct err e = {0};
	int rc = net_host_normalize(in, &out, &e);
	if (rc < 0)
		fail_msg("normalize %s failed: %s", in, e.what);
	assert_string_equal(out, want);
	free(out);
}

static void norm_bad(const char *in, const char *what)
{
	char *out = NULL;
	struct err e = {0};
	if (net_host_normalize(in, &out, &e) == 0)
		fail_msg("normalize %s accepted as %s", in, out);
	assert_null(out);
	assert_non_null(strstr(e.what, what));
}

static void normalize(void **state)
{
	(void)state;
	norm_is("BÜCHER.example", "xn--bcher-kva.example");
	norm_is("bücher.example.", "xn--bcher-kva.example");
	norm_is("faß.de", "xn--fa-hia.de"); /* non-transitional: ß stays */
	norm_is("Example.COM", "example.com");
	norm_is("example.com.", "example.com");
	norm_is("ex\xe3\x80\x82" "ample.org", "ex.ample.org"); /* an ideographic full stop */
	norm_is("r3---sn-abc.googlevideo.com", "r3---sn-abc.googlevideo.com");
	norm_is("1.2.3.4", "1.2.3.4");
	norm_is("[::1]", "::1");
	norm_is("[2001:DB8:0:0::1]", "2001:db8::1");
	norm_is("2001:db8::0:1", "2001:db8::1");
	norm_is("::ffff:127.0.0.1", "127.0.0.1"); /* IPv4-mapped: its IPv4 */
	/* what resolvers take for IPv4 addresses is one */
	norm_is("127.1", "127.0.0.1");
	norm_is("0x7f.0.0.1", "127.0.0.1");
	norm_is("2130706433", "127.0.0.1");
	norm_bad("", "empty");
	norm_bad(".", "empty");
	norm_bad("a..b", "empty label");
	norm_bad(".example.com", "empty label");
	norm_bad("example.com..", "empty label");
	norm_bad("a_b.example", "outside letters");
	norm_bad("a b", "outside letters");
	norm_bad("evil.com/x", "outside letters");
	norm_bad("evil.com\\@x", "outside letters");
	norm_bad("[1.2.3.4]", "IPv6");
	norm_bad("[::1", "outside letters");
	norm_bad("fe80::1%eth0", "outside letters");
	norm_bad("999.1.1.1", "not an IPv4");
	norm_bad("1.2.3.0x", "not an IPv4");
	norm_bad("xn--zz.com\xc3\xa9", "international");
	norm_bad("\xff.com", "international");
	char label[80];
	memset(label, 'a', 64);
	strcpy(label + 64, ".com");
	norm_bad(label, "63");
	char longname[300];
	for (int i = 0; i < 60; i++)
		memcpy(longname + 5 * i, "abcd.", 5);
	strcpy(longname + 300 - 4, "com");
	norm_bad(longname, "longer than 253");
	/* idempotent */
	const char *again[] = {"BÜCHER.example", "[::1]", "127.1", "Example.COM."};
	for (size_t i = 0; i < sizeof again / sizeof *again; i++) {
		char *a = NULL, *b = NULL;
		struct err e = {0};
		assert_int_equal(net_host_normalize(again[i], &a, &e), 0);
		assert_int_equal(net_host_normalize(a, &b, &e), 0);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
}

static void rule_is(const char *spec, enum netrule_kind kind, const char *host, int port)
{
	struct netrule r;
	struct err e = {0};
	if (netrule_parse(spec, &r, &e) < 0)
		fail_msg("parse %s: %s", spec, e.what);
	assert_int_equal(r.kind, kind);
	assert_string_equal(r.host, host);
	assert_int_equal(r.port, port);
	assert_string_equal(r.spec, spec);
	netrule_free(&r);
}

static void rule_bad(const char *spec, const char *what)
{
	struct netrule r;
	struct err e = {0};
	if (netrule_parse(spec, &r, &e) == 0)
		fail_msg("parse %s accepted", spec);
	if (!strstr(e.what, what) || (!strstr(e.what, spec) && !strstr(e.path, spec)))
		fail_msg("parse %s: what \"%s\" path \"%s\", want \"%s\" and the entry", spec,
			 e.what, e.path, what);
}

static void parse(void **state)
{
	(void)state;
	rule_is("example.com", NR_NAME, "example.com", 0);
	rule_is("*.Example.com", NR_WILDCARD, "example.com", 0);
	rule_is("example.com:8443", NR_NAME, "example.com", 8443);
	rule_is("*.example.com:8080", NR_WILDCARD, "example.com", 8080);
	rule_is("1.2.3.4", NR_IPV4, "1.2.3.4", 0);
	rule_is("1.2.3.4:22", NR_IPV4, "1.2.3.4", 22);
	rule_is("::1", NR_IPV6, "::1", 0);
	rule_is("[::1]", NR_IPV6, "::1", 0);
	rule_is("[::1]:443", NR_IPV6, "::1", 443);
	rule_is("bücher.example", NR_NAME, "xn--bcher-kva.example", 0);
	rule_is("example.com.:443", NR_NAME, "example.com", 443);
	struct netrule r;
	struct err e = {0};
	assert_int_equal(netrule_parse("[2001:db8::1]:80", &r, &e), 0);
	uint8_t want[16];
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", want), 1);
	assert_memory_equal(r.addr, want, 16);
	netrule_free(&r);

	rule_is("example.com:8443/tls", NR_NAME, "example.com", 8443);
	rule_is("*.example.com:8080/http", NR_WILDCARD, "example.com", 8080);
	rule_is("[::1]:8443/tls", NR_IPV6, "::1", 8443);
	assert_int_equal(netrule_parse("example.com:8443/tls", &r, &e), 0);
	assert_int_equal(r.carries, NC_TLS);
	netrule_free(&r);
	assert_int_equal(netrule_parse("1.2.3.4:8080/http", &r, &e), 0);
	assert_int_equal(r.carries, NC_HTTP);
	netrule_free(&r);
	assert_int_equal(netrule_parse("example.com:8443", &r, &e), 0);
	assert_int_equal(r.carries, NC_ANY);
	netrule_free(&r);
	rule_bad("example.com/tls", "needs a port");
	rule_bad("example.com:8443/udp", "/tls or /http");
	rule_bad("example.com:8443/", "/tls or /http");
	rule_bad("example.com:8443/TLS", "/tls or /http");
	rule_bad("example.com:8443/tls/tls", "port is not a number");
	rule_bad("example.com:/tls", "empty port");
	assert_int_equal(netrule_parse_deny("example.com:8443", &r, &e), 0);
	netrule_free(&r);
	assert_int_equal(netrule_parse_deny("example.com:8443/tls", &r, &e), -1);
	assert_non_null(strstr(e.what, "deny entry refuses every byte"));

	rule_bad("*", "'*' only as the first label");
	rule_bad("*.com", "two labels");
	rule_bad("*.1.2.3.4", "not an address");
	rule_bad("a.*.com", "'*' only as the first label");
	rule_bad("**.example.com", "'*' only as the first label");
	rule_bad("example.com:", "empty port");
	rule_bad("example.com:0", "1 to 65535");
	rule_bad("example.com:65536", "1 to 65535");
	rule_bad("example.com:99999999999999999999", "1 to 65535");
	rule_bad("example.com:8x", "1 to 65535");
	rule_bad("example.com:-1", "1 to 65535");
	rule_bad("[::1]x", "after ']'");
	rule_bad("[::1", "without ']'");
	rule_bad("", "empty");
	rule_bad("exa mple.com", "outside letters");
}

static void maps(void **state)
{
	(void)state;
	struct netmap m;
	struct err e = {0};
	assert_int_equal(netmap_parse("API.test=127.0.0.1", &m, &e), 0);
	assert_string_equal(m.host, "api.test");
	assert_int_equal(m.family, AF_INET);
	assert_memory_equal(m.addr, "\x7f\0\0\x01", 4);
	assert_string_equal(m.spec, "API.test=127.0.0.1");
	netmap_free(&m);
	assert_int_equal(netmap_parse("v6.test=[::1]", &m, &e), 0);
	assert_int_equal(m.family, AF_INET6);
	netmap_free(&m);
	assert_int_equal(netmap_parse("v6.test=::1", &m, &e), 0);
	netmap_free(&m);
	assert_int_equal(netmap_parse("m.test=::ffff:10.0.0.1", &m, &e), 0);
	assert_int_equal(m.family, AF_INET);
	netmap_free(&m);
	const char *bad[][2] = {{"api.test", "NAME=ADDR"},
				{"api.test=", "not an IPv4 or IPv6"},
				{"api.test=localhost", "not an IPv4 or IPv6"},
				{"api.test=[127.0.0.1]", "not an IPv4 or IPv6"},
				{"=127.0.0.1", "empty"},
				{"1.2.3.4=127.0.0.1", "needs a host name"},
				{"a b=127.0.0.1", "outside letters"}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		e = (struct err){0};
		if (netmap_parse(bad[i][0], &m, &e) == 0)
			fail_msg("map %s accepted", bad[i][0]);
		if (!strstr(e.what, bad[i][1]))
			fail_msg("map %s: %s", bad[i][0], e.what);
	}
}

static struct netrules build(const char *const *allow, const char *const *deny,
			     const char *const *map)
{
	struct strv a = STRV_INIT, d = STRV_INIT, m = STRV_INIT;
	for (size_t i = 0; allow && allow[i]; i++)
		strv_push(&a, allow[i]);
	for (size_t i = 0; deny && deny[i]; i++)
		strv_push(&d, deny[i]);
	for (size_t i = 0; map && map[i]; i++)
		strv_push(&m, map[i]);
	struct netrules r;
	struct err e = {0};
	if (netrules_build(&a, &d, &m, &r, &e) < 0)
		fail_msg("build: %s", e.what);
	strv_free(&a);
	strv_free(&d);
	strv_free(&m);
	return r;
}

static enum net_verdict check(const struct netrules *r, const char *host, uint16_t port,
			      const char *want_rule)
{
	struct net_decision d;
	enum net_verdict v = netrules_check(r, host, port, &d);
	assert_int_equal(v, d.v);
	if (want_rule) {
		assert_non_null(d.rule);
		assert_string_equal(d.rule->spec, want_rule);
	}
	return v;
}

static void matching(void **state)
{
	(void)state;
	const char *allow[] = {"example.com", "*.example.org", "api.example.net:8443", "1.2.3.4",
			       "[2001:db8::5]:8080", "*.both.test", NULL};
	const char *deny[] = {"evil.example.org", "*.bad.example.org", "both.test:22",
			      "x.both.test:443", NULL};
	struct netrules r = build(allow, deny, NULL);
	assert_int_equal(check(&r, "example.com", 443, "example.com"), NV_ALLOW);
	assert_int_equal(check(&r, "example.com", 80, "example.com"), NV_ALLOW);
	assert_int_equal(check(&r, "example.com", 8080, "example.com"), NV_BAD_PORT);
	assert_int_equal(check(&r, "www.example.com", 443, NULL), NV_NOT_ALLOWED);
	assert_int_equal(check(&r, "notexample.com", 443, NULL), NV_NOT_ALLOWED);
	/* wildcard: subdomains only, at any depth, not the domain itself nor a look-alike */
	assert_int_equal(check(&r, "www.example.org", 443, "*.example.org"), NV_ALLOW);
	assert_int_equal(check(&r, "a.b.example.org", 80, "*.example.org"), NV_ALLOW);
	assert_int_equal(check(&r, "example.org", 443, NULL), NV_NOT_ALLOWED);
	assert_int_equal(check(&r, "evilexample.org", 443, NULL), NV_NOT_ALLOWED);
	assert_int_equal(check(&r, ".example.org", 443, NULL), NV_NOT_ALLOWED);
	/* a rule with a port: that port only */
	assert_int_equal(check(&r, "api.example.net", 8443, "api.example.net:8443"), NV_ALLOW);
	assert_int_equal(check(&r, "api.example.net", 443, "api.example.net:8443"), NV_BAD_PORT);
	assert_int_equal(check(&r, "1.2.3.4", 443, "1.2.3.4"), NV_ALLOW);
	assert_int_equal(check(&r, "1.2.3.5", 443, NULL), NV_NOT_ALLOWED);
	assert_int_equal(check(&r, "2001:db8::5", 8080, "[2001:db8::5]:8080"), NV_ALLOW);
	assert_int_equal(check(&r, "2001:db8::5", 443, NULL), NV_BAD_PORT);
	/* deny wins, at any port when it names none, at its port when it names one */
	assert_int_equal(check(&r, "evil.example.org", 443, "evil.example.org"), NV_DENY_LISTED);
	assert_int_equal(check(&r, "evil.example.org", 80, "evil.example.org"), NV_DENY_LISTED);
	assert_int_equal(check(&r, "x.bad.example.org", 443, "*.bad.example.org"),
			 NV_DENY_LISTED);
	assert_int_equal(check(&r, "bad.example.org", 443, "*.example.org"), NV_ALLOW);
	assert_int_equal(check(&r, "x.both.test", 443, "x.both.test:443"), NV_DENY_LISTED);
	assert_int_equal(check(&r, "x.both.test", 80, "*.both.test"), NV_ALLOW);
	assert_int_equal(check(&r, "both.test", 22, "both.test:22"), NV_DENY_LISTED);
	/* port 0, the DNS stub's question: is the name allowed at any port */
	assert_int_equal(check(&r, "api.example.net", 0, "api.example.net:8443"), NV_ALLOW);
	assert_int_equal(check(&r, "www.example.org", 0, "*.example.org"), NV_ALLOW);
	assert_int_equal(check(&r, "evil.example.org", 0, "evil.example.org"), NV_DENY_LISTED);
	assert_int_equal(check(&r, "x.both.test", 0, "*.both.test"), NV_ALLOW); /* denied at 443 only */
	assert_int_equal(check(&r, "other.example", 0, NULL), NV_NOT_ALLOWED);
	/* the caller passes normalized names: case was folded there */
	char *n = NULL;
	struct err e = {0};
	assert_int_equal(net_host_normalize("WWW.Example.ORG.", &n, &e), 0);
	assert_int_equal(check(&r, n, 443, "*.example.org"), NV_ALLOW);
	free(n);
	netrules_free(&r);

	/* nothing allowed: everything refused */
	struct netrules none = build(NULL, NULL, NULL);
	assert_int_equal(check(&none, "example.com", 443, NULL), NV_NOT_ALLOWED);
	netrules_free(&none);

	/* a bad entry fails the build, naming the flag and the entry */
	struct strv a = STRV_INIT;
	strv_push(&a, "ok.example");
	strv_push(&a, "*.com");
	struct netrules bad;
	assert_int_equal(netrules_build(&a, NULL, NULL, &bad, &e), -1);
	assert_non_null(strstr(e.what, "--allow-domain"));
	assert_non_null(strstr(e.what, "*.com"));
	strv_free(&a);
}

static void mappings(void **state)
{
	(void)state;
	const char *allow[] = {"api.test:8443", NULL};
	const char *deny[] = {"blocked.test", NULL};
	const char *map[] = {"api.test=127.0.0.1", "plain.test=::1", "blocked.test=127.0.0.1",
			     NULL};
	struct netrules r = build(allow, deny, map);
	struct net_decision d;
	uint8_t lo4[4] = {127, 0, 0, 1}, lo6[16] = {[15] = 1}, other[4] = {127, 0, 0, 2},
		pub[4] = {93, 184, 216, 34};
	/* mapped, no allow rule: allowed at the default ports, at its address only */
	assert_int_equal(netrules_check(&r, "plain.test", 443, &d), NV_ALLOW);
	assert_non_null(d.mapped);
	assert_null(d.rule);
	assert_true(netrules_addr_ok(&r, &d, AF_INET6, lo6));
	assert_false(netrules_addr_ok(&r, &d, AF_INET, lo4));
	assert_false(netrules_addr_ok(&r, &d, AF_INET, pub));
	assert_int_equal(netrules_check(&r, "plain.test", 8080, &d), NV_BAD_PORT);
	assert_int_equal(netrules_check(&r, "plain.test", 0, &d), NV_ALLOW); /* DNS: the name */
	assert_non_null(d.mapped);
	/* mapped and allowed at a port */
	assert_int_equal(netrules_check(&r, "api.test", 8443, &d), NV_ALLOW);
	assert_non_null(d.mapped);
	assert_true(netrules_addr_ok(&r, &d, AF_INET, lo4));
	uint8_t mapped6[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1};
	assert_true(netrules_addr_ok(&r, &d, AF_INET6, mapped6));
	assert_false(netrules_addr_ok(&r, &d, AF_INET, other));
	assert_int_equal(netrules_check(&r, "api.test", 443, &d), NV_ALLOW);
	/* deny wins over a mapping */
	assert_int_equal(netrules_check(&r, "blocked.test", 443, &d), NV_DENY_LISTED);
	assert_false(netrules_addr_ok(&r, &d, AF_INET, lo4));
	netrules_free(&r);
}

/* An address's text as its family and bytes. */
static int parse_addr(const char *text, uint8_t a[16])
{
	if (inet_pton(AF_INET, text, a) == 1)
		return AF_INET;
	assert_int_equal(inet_pton(AF_INET6, text, a), 1);
	return AF_INET6;
}

static enum netaddr_class cls(const char *text)
{
	uint8_t a[16];
	int family = parse_addr(text, a);
	return netaddr_classify(family, a);
}

static void classes(void **state)
{
	(void)state;
	const struct {
		const char *a;
		enum netaddr_class c;
	} t[] = {
		{"93.184.216.34", NA_PUBLIC},     {"8.8.8.8", NA_PUBLIC},
		{"127.0.0.1", NA_LOOPBACK},       {"127.255.0.9", NA_LOOPBACK},
		{"10.1.2.3", NA_PRIVATE},         {"172.16.0.1", NA_PRIVATE},
		{"172.31.255.255", NA_PRIVATE},   {"172.32.0.1", NA_PUBLIC},
		{"192.168.1.1", NA_PRIVATE},      {"100.64.0.1", NA_PRIVATE},
		{"100.127.255.255", NA_PRIVATE},  {"100.128.0.1", NA_PUBLIC},
		{"169.254.1.1", NA_LINKLOCAL},    {"169.254.169.254", NA_METADATA},
		{"100.100.100.200", NA_METADATA}, {"fd00:ec2::254", NA_METADATA},
		{"0.0.0.0", NA_UNSPECIFIED},      {"0.1.2.3", NA_RESERVED},
		{"224.0.0.1", NA_MULTICAST},      {"239.255.255.250", NA_MULTICAST},
		{"240.0.0.1", NA_RESERVED},       {"255.255.255.255", NA_RESERVED},
		{"192.0.2.1", NA_RESERVED},       {"198.18.0.1", NA_RESERVED},
		{"::", NA_UNSPECIFIED},           {"::1", NA_LOOPBACK},
		{"fc00::1", NA_PRIVATE},          {"fd12:3456::1", NA_PRIVATE},
		{"fe80::1", NA_LINKLOCAL},        {"febf::1", NA_LINKLOCAL},
		{"ff02::1", NA_MULTICAST},        {"2001:db8::1", NA_RESERVED},
		{"2606:4700::1111", NA_PUBLIC},   {"::ffff:127.0.0.1", NA_LOOPBACK},
		{"::ffff:10.0.0.1", NA_PRIVATE},  {"::ffff:169.254.169.254", NA_METADATA},
		{"::ffff:8.8.8.8", NA_PUBLIC},    {"64:ff9b::7f00:1", NA_LOOPBACK},
		{"2002:7f00:1::", NA_LOOPBACK},   {"2002:0808:0808::", NA_PUBLIC},
		{"::127.0.0.1", NA_RESERVED},     {"4000::1", NA_RESERVED},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (cls(t[i].a) != t[i].c)
			fail_msg("%s: %s, want %s", t[i].a, netaddr_class_name(cls(t[i].a)),
				 netaddr_class_name(t[i].c));
	assert_string_equal(netaddr_class_name(NA_METADATA), "cloud metadata");
	assert_int_equal(netaddr_classify(12345, (const uint8_t *)"\0\0\0\0"), NA_RESERVED);
}

static bool on_lo(const char *text)
{
	uint8_t a[16];
	int family = parse_addr(text, a);
	return netaddr_on_loopback(family, a);
}

/* The proxy bounds the buffers of a leg on this host's loopback only (a remote server's leg
 * keeps the kernel's autotuning): an IPv4 loopback inside NAT64 or 6to4 goes out. */
static void on_loopback(void **state)
{
	(void)state;
	const char *yes[] = {"127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1",
			     "::ffff:127.1.2.3"};
	const char *no[] = {"126.255.255.255", "128.0.0.1", "0.0.0.0", "10.0.0.1", "::",
			    "::2", "::127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::7f00:1",
			    "2002:7f00:1::", "fe80::1", "2606:4700::1111"};
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		if (!on_lo(yes[i]))
			fail_msg("%s: not on the loopback", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		if (on_lo(no[i]))
			fail_msg("%s: on the loopback", no[i]);
	assert_false(netaddr_on_loopback(AF_UNIX, (const uint8_t *)"\x7f\0\0\1"));
}

static void addr_ok(void **state)
{
	(void)state;
	const char *allow[] = {"example.com", "127.0.0.1:8080", "169.254.169.254", "[::1]:9000",
			       NULL};
	struct netrules r = build(allow, NULL, NULL);
	struct net_decision d;
	uint8_t pub[4] = {93, 184, 216, 34}, lo[4] = {127, 0, 0, 1}, priv[4] = {10, 0, 0, 1},
		md[4] = {169, 254, 169, 254}, lo6[16] = {[15] = 1},
		mlo[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 1};
	/* a name resolving to public addresses: yes; to anything else: no (DNS rebinding) */
	assert_int_equal(netrules_check(&r, "example.com", 443, &d), NV_ALLOW);
	assert_true(netrules_addr_ok(&r, &d, AF_INET, pub));
	assert_false(netrules_addr_ok(&r, &d, AF_INET, lo));
	assert_false(netrules_addr_ok(&r, &d, AF_INET, priv));
	assert_false(netrules_addr_ok(&r, &d, AF_INET, md));
	assert_false(netrules_addr_ok(&r, &d, AF_INET6, lo6));
	assert_false(netrules_addr_ok(&r, &d, AF_INET6, mlo)); /* IPv4-mapped judged as IPv4 */
	assert_false(netrules_addr_ok(&r, &d, AF_UNIX, pub));
	/* an allowed literal: exactly that address */
	assert_int_equal(netrules_check(&r, "127.0.0.1", 8080, &d), NV_ALLOW);
	assert_true(netrules_addr_ok(&r, &d, AF_INET, lo));
	assert_true(netrules_addr_ok(&r, &d, AF_INET6, mlo));
	assert_false(netrules_addr_ok(&r, &d, AF_INET, priv));
	assert_int_equal(netrules_check(&r, "169.254.169.254", 80, &d), NV_ALLOW);
	assert_true(netrules_addr_ok(&r, &d, AF_INET, md));
	assert_int_equal(netrules_check(&r, "::1", 9000, &d), NV_ALLOW);
	assert_true(netrules_addr_ok(&r, &d, AF_INET6, lo6));
	assert_false(netrules_addr_ok(&r, &d, AF_INET, lo));
	/* a refused decision never passes */
	assert_int_equal(netrules_check(&r, "other.com", 443, &d), NV_NOT_ALLOWED);
	assert_false(netrules_addr_ok(&r, &d, AF_INET, pub));
	netrules_free(&r);
}

static void reason_is(const struct netrules *r, const char *host, uint16_t port,
		      const char *want)
{
	struct net_decision d;
	(void)netrules_check(r, host, port, &d);
	char *s = net_deny_reason(&d, host, port);
	assert_string_equal(s, want);
	free(s);
}

static void reasons(void **state)
{
	(void)state;
	const char *allow[] = {"example.com", "*.example.org", NULL};
	const char *deny[] = {"*.evil.example.org", NULL};
	struct netrules r = build(allow, deny, NULL);
	reason_is(&r, "evil.example", 443,
		  "evil.example:443 is not on the allow list (add --allow-domain evil.example)");
	reason_is(&r, "other.example", 8080,
		  "other.example:8080 is not on the allow list (add --allow-domain "
		  "other.example:8080)");
	reason_is(&r, "example.com", 8080,
		  "example.com:8080: port 8080 is not allowed for example.com (add "
		  "--allow-domain example.com:8080)");
	reason_is(&r, "a.example.org", 22,
		  "a.example.org:22: port 22 is not allowed for *.example.org (add "
		  "--allow-domain a.example.org:22)");
	reason_is(&r, "x.evil.example.org", 443,
		  "x.evil.example.org:443 is refused by --deny-domain *.evil.example.org");
	reason_is(&r, "::1", 443, "[::1]:443 is not on the allow list (add --allow-domain ::1)");
	reason_is(&r, "::1", 8080,
		  "[::1]:8080 is not on the allow list (add --allow-domain [::1]:8080)");
	reason_is(&r, "a\nb", 443, "a?b:443 is not on the allow list (add --allow-domain a?b)");
	netrules_free(&r);
}

/* The name a client sends inside an approved connection (TLS SNI, HTTP Host): folded as the
 * rules fold names; a wildcard approval takes what that wildcard allows, nothing more. */
static void name_check(void **state)
{
	(void)state;
	const char *allow[] = {"api.example.com", "*.cdn.example", "203.0.113.7",
			       "b\xc3\xbc" "cher.example", "other.example", NULL};
	const char *deny[] = {"bad.cdn.example", NULL};
	const char *map[] = {"local.test=127.0.0.1", NULL};
	struct netrules r = build(allow, deny, map);
	struct net_decision d;
	char *norm = NULL;
	assert_int_equal(netrules_check(&r, "api.example.com", 443, &d), NV_ALLOW);
	static const struct {
		const char *name;
		enum net_name_match m;
	} api[] = {
		{"api.example.com", NM_SAME},   {"API.Example.COM", NM_SAME},
		{"api.example.com.", NM_SAME},  {"other.example", NM_MISMATCH},
		{"evil.example", NM_MISMATCH},  {"x.api.example.com", NM_MISMATCH},
		{"api.example.com..", NM_INVALID}, {"a b", NM_INVALID},
		{"203.0.113.7", NM_MISMATCH},   {NULL, NM_MISSING},
	};
	for (size_t i = 0; i < sizeof api / sizeof *api; i++) {
		enum net_name_match m =
			netrules_name_check(&r, &d, "api.example.com", 443, api[i].name, &norm);
		if (m != api[i].m)
			fail_msg("%s: %d, want %d", api[i].name ? api[i].name : "(none)", m, api[i].m);
		if (m == NM_SAME)
			assert_string_equal(norm, "api.example.com");
		free(norm);
	}
	/* a wildcard approval: its other names, not the deny-listed one nor the apex */
	assert_int_equal(netrules_check(&r, "a.cdn.example", 443, &d), NV_ALLOW);
	assert_int_equal(netrules_name_check(&r, &d, "a.cdn.example", 443, "B.cdn.example", NULL),
			 NM_WILDCARD);
	assert_int_equal(netrules_name_check(&r, &d, "a.cdn.example", 443, "bad.cdn.example", NULL),
			 NM_MISMATCH);
	assert_int_equal(netrules_name_check(&r, &d, "a.cdn.example", 443, "cdn.example", NULL),
			 NM_MISMATCH);
	assert_int_equal(netrules_name_check(&r, &d, "a.cdn.example", 443, "api.example.com", NULL),
			 NM_MISMATCH);
	/* IDNA: the A-label the client sends matches the U-label the user wrote */
	assert_int_equal(netrules_check(&r, "xn--bcher-kva.example", 443, &d), NV_ALLOW);
	assert_int_equal(netrules_name_check(&r, &d, "xn--bcher-kva.example", 443,
					     "XN--BCHER-KVA.example", NULL), NM_SAME);
	/* an IP approval: no name is right; a name is not */
	assert_int_equal(netrules_check(&r, "203.0.113.7", 443, &d), NV_ALLOW);
	assert_int_equal(netrules_name_check(&r, &d, "203.0.113.7", 443, NULL, NULL), NM_NONE_OK);
	assert_int_equal(netrules_name_check(&r, &d, "203.0.113.7", 443, "api.example.com", NULL),
			 NM_MISMATCH);
	/* a mapped name */
	assert_int_equal(netrules_check(&r, "local.test", 443, &d), NV_ALLOW);
	assert_int_equal(netrules_name_check(&r, &d, "local.test", 443, "local.test", NULL), NM_SAME);
	assert_int_equal(netrules_name_check(&r, &d, "local.test", 443, "api.example.com", NULL),
			 NM_MISMATCH);

	char *t = net_name_reason(NM_MISMATCH, "TLS server name", "api.example.com", 443,
				  "evil\n.example");
	assert_string_equal(t, "TLS server name evil?.example does not match api.example.com:443, "
			       "the name this connection was allowed for");
	free(t);
	t = net_name_reason(NM_MISSING, "TLS server name", "api.example.com", 443, NULL);
	assert_string_equal(t, "no TLS server name sent for api.example.com:443 (a connection "
			       "allowed by name must name it)");
	free(t);
	t = net_name_reason(NM_INVALID, "HTTP Host", "::1", 80, "a b");
	assert_string_equal(t, "HTTP Host a?b is not a valid host name; this connection was allowed "
			       "for [::1]:80");
	free(t);
	netrules_free(&r);
}

static void proxy_env(void **state)
{
	(void)state;
	const char *const *env = net_proxy_env();
	const char *want[] = {"HTTP_PROXY=http://127.0.0.1:3128",
			      "https_proxy=http://127.0.0.1:3128",
			      "NO_PROXY=localhost,127.0.0.1,::1", "NODE_USE_ENV_PROXY=1",
			      ("GIT_SSH_COMMAND=ssh -o ProxyCommand='/run/agentjail/init __connect "
			       "%h %p'"),
			      "RSYNC_PROXY=127.0.0.1:3128"};
	for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
		bool found = false;
		for (size_t i = 0; env[i]; i++)
			found |= !strcmp(env[i], want[k]);
		if (!found)
			fail_msg("missing %s", want[k]);
	}
	/* everything set is cleared first, so nothing inherited survives beside it */
	const char *const *clr = net_proxy_env_clear();
	for (size_t i = 0; env[i]; i++) {
		size_t n = strcspn(env[i], "=");
		bool found = false;
		for (size_t k = 0; clr[k]; k++)
			found |= strlen(clr[k]) == n && !strncmp(clr[k], env[i], n);
		if (!found)
			fail_msg("%s is set but not in the clear list", env[i]);
	}
	assert_string_equal(net_proto_name(NP_CONNECT), "connect");
	assert_string_equal(net_proto_name(NP_HTTP), "http");
	assert_string_equal(net_proto_name(NP_SOCKS), "socks");
	assert_string_equal(net_proto_name(NP_DNS), "dns");
}

/* The DNS note of a wildcard rule (doctor, --dry-run; issue 24 item 7). */
static void wildcard_note(void **state)
{
	(void)state;
	struct strv v = STRV_INIT;
	strv_push(&v, "api.example.com");
	strv_push(&v, "1.2.3.4");
	assert_null(net_wildcard_note(&v)); /* exact names: no note */
	assert_null(net_wildcard_note(NULL));
	strv_push(&v, "*.Example.ORG:8443");
	char *n = net_wildcard_note(&v);
	assert_string_equal(n, "*.example.org: any name under example.org is looked up by the "
			       "host's resolver, which asks example.org's name servers: a jail can "
			       "send them data in the names it looks up (exact names, such as "
			       "api.example.org, close that)");
	free(n);
	strv_push(&v, "*.githubusercontent.com");
	strv_push(&v, "*.com"); /* refused by the rules: not a wildcard one can allow */
	n = net_wildcard_note(&v);
	assert_non_null(strstr(n, "*.example.org, *.githubusercontent.com: any name under these "
				  "domains is looked up"));
	assert_null(strstr(n, "*.com:"));
	free(n);
	strv_free(&v);
}

/* What a port carries: said by an allow entry that names that port; the strictest wins. */
static void carries(void **state)
{
	(void)state;
	struct netrules r;
	struct err e = {0};
	const char *a[] = {"api.example.com:8443", "*.cdn.example:8443/tls", "a.cdn.example:8443",
			   "web.example:8080/http", "web.example:8081", "both.example:9000/http",
			   "both.example:9000/tls", "1.2.3.4:8443/tls"};
	struct strv allow = STRV_INIT, deny = STRV_INIT;
	for (size_t i = 0; i < sizeof a / sizeof *a; i++)
		strv_push(&allow, a[i]);
	assert_int_equal(netrules_build(&allow, NULL, NULL, &r, &e), 0);
	assert_int_equal(netrules_carries(&r, "api.example.com", 8443), NC_ANY);
	assert_int_equal(netrules_carries(&r, "a.cdn.example", 8443), NC_TLS); /* the wildcard's */
	assert_int_equal(netrules_carries(&r, "b.cdn.example", 8443), NC_TLS);
	assert_int_equal(netrules_carries(&r, "cdn.example", 8443), NC_ANY);
	assert_int_equal(netrules_carries(&r, "web.example", 8080), NC_HTTP);
	assert_int_equal(netrules_carries(&r, "web.example", 8081), NC_ANY);
	assert_int_equal(netrules_carries(&r, "both.example", 9000), NC_TLS);
	assert_int_equal(netrules_carries(&r, "1.2.3.4", 8443), NC_TLS);
	assert_int_equal(netrules_carries(&r, "api.example.com", 443), NC_ANY);
	netrules_free(&r);
	strv_push(&deny, "evil.example:8443/tls");
	assert_int_equal(netrules_build(&allow, &deny, NULL, &r, &e), -1);
	assert_non_null(strstr(e.what, "--deny-domain"));
	strv_free(&allow);
	strv_free(&deny);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(normalize), cmocka_unit_test(parse),   cmocka_unit_test(maps),
		cmocka_unit_test(matching),  cmocka_unit_test(mappings), cmocka_unit_test(classes),
		cmocka_unit_test(on_loopback),
		cmocka_unit_test(addr_ok),   cmocka_unit_test(reasons), cmocka_unit_test(proxy_env),
		cmocka_unit_test(wildcard_note),
		cmocka_unit_test(name_check),
		cmocka_unit_test(carries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
