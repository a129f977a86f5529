/* Tests for core/net/netsynth: one stable address per name and family from 198.18.0.0/15 and
 * 100::/64, the way back from an address (IPv4-mapped included) to its name, nothing for
 * addresses outside the ranges or never given out, the table's limit, and the kept answers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/plan/netrules.h"
#include "core/net/netsynth.h"

static void text(uint32_t idx, int family, char *out, size_t cap)
{
	uint8_t a[16];
	netsynth_addr(idx, family, a);
	assert_non_null(inet_ntop(family, a, out, (socklen_t)cap));
}

static uint32_t index_of(const char *s)
{
	uint8_t a[16];
	int fam = strchr(s, ':') ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(fam, s, a), 1);
	return netsynth_index_of(fam, a);
}

static void stable_and_distinct(void **state)
{
	(void)state;
	struct netsynth s = {0};
	uint32_t a = netsynth_for(&s, "api.example.com");
	uint32_t b = netsynth_for(&s, "db.example.com");
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(netsynth_for(&s, "api.example.com"), a); /* stable */
	char t[INET6_ADDRSTRLEN];
	text(a, AF_INET, t, sizeof t);
	assert_string_equal(t, "198.18.0.1");
	text(b, AF_INET6, t, sizeof t);
	assert_string_equal(t, "100::2");
	text(300, AF_INET, t, sizeof t);
	assert_string_equal(t, "198.18.1.44");
	assert_string_equal(netsynth_get(&s, index_of("198.18.0.2"))->name, "db.example.com");
	assert_string_equal(netsynth_get(&s, index_of("100::1"))->name, "api.example.com");
	assert_string_equal(netsynth_get(&s, index_of("::ffff:198.18.0.1"))->name, "api.example.com");
	assert_null(netsynth_get(&s, index_of("198.18.0.3"))); /* in range, never given out */
	assert_null(netsynth_get(&s, 0));
	/* many names: the hash grows and keeps every one */
	char name[64];
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof name, "n%d.example", i);
		assert_int_equal(netsynth_for(&s, name), (uint32_t)i + 3);
	}
	for (int i = 0; i < 5000; i += 97) {
		snprintf(name, sizeof name, "n%d.example", i);
		assert_string_equal(netsynth_get(&s, (uint32_t)i + 3)->name, name);
		assert_int_equal(netsynth_for(&s, name), (uint32_t)i + 3);
	}
	netsynth_free(&s);
}

static void ranges(void **state)
{
	(void)state;
	static const char *const in[] = {"198.18.0.1", "198.19.255.254", "100::1", "100::ffff:ffff",
					 "::ffff:198.18.3.4"};
	static const char *const out[] = {"198.17.255.255", "198.20.0.1", "10.0.0.1", "127.0.0.1",
					  "101::1", "100:0:0:1::1", "2001:db8::1", "::1",
					  "::ffff:127.0.0.1"};
	for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
		uint8_t a[16];
		int fam = strchr(in[i], ':') ? AF_INET6 : AF_INET;
		assert_int_equal(inet_pton(fam, in[i], a), 1);
		if (!netsynth_in_range(fam, a))
			fail_msg("%s should be in range", in[i]);
		/* the rules call every one of them reserved: nothing real is refused or reached */
		if (netaddr_classify(fam, a) != NA_RESERVED && !strstr(in[i], "::ffff:"))
			fail_msg("%s is not classified reserved", in[i]);
	}
	for (size_t i = 0; i < sizeof out / sizeof *out; i++) {
		uint8_t a[16];
		int fam = strchr(out[i], ':') ? AF_INET6 : AF_INET;
		assert_int_equal(inet_pton(fam, out[i], a), 1);
		if (netsynth_in_range(fam, a) || netsynth_index_of(fam, a))
			fail_msg("%s should be outside the ranges", out[i]);
	}
	/* in range but no index: the network address, the upper half, past the limit */
	assert_int_equal(index_of("198.18.0.0"), 0);
	assert_int_equal(index_of("198.19.0.1"), 0);
	assert_int_equal(index_of("100::1:0"), 0);
	assert_int_equal(index_of("100::1:0:0:1"), 0);
	assert_int_equal(index_of("198.18.255.255"), 65535);
}

static void full(void **state)
{
	(void)state;
	struct netsynth s = {0};
	char name[32];
	for (uint32_t i = 1; i <= NETSYNTH_MAX; i++) {
		snprintf(name, sizeof name, "h%u", i);
		assert_int_equal(netsynth_for(&s, name), i);
	}
	assert_int_equal(netsynth_for(&s, "one.more"), 0);
	assert_int_equal(netsynth_for(&s, "h7"), 7); /* known names still answer */
	netsynth_free(&s);
}

static void remember(void **state)
{
	(void)state;
	struct netsynth s = {0};
	struct netsynth_entry *e = netsynth_get(&s, netsynth_for(&s, "x.example"));
	uint8_t four[3 * 4] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	netsynth_remember(e, AF_INET, four, 3, 1000);
	assert_int_equal(e->v4.n, 3);
	assert_int_equal(e->v4.addr[2][0], 9);
	assert_int_equal(e->v4.expires_ms, 1000);
	assert_int_equal(e->v6.n, 0);
	uint8_t many[20 * 16] = {0};
	many[16 * 9] = 0x20;
	netsynth_remember(e, AF_INET6, many, 20, 5);
	assert_int_equal(e->v6.n, NETSYNTH_KEEP);
	netsynth_remember(e, AF_INET, four, 0, 2000); /* an empty answer replaces the old one */
	assert_int_equal(e->v4.n, 0);
	netsynth_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stable_and_distinct),
		cmocka_unit_test(ranges),
		cmocka_unit_test(full),
		cmocka_unit_test(remember),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
