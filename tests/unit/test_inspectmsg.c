/* Tests for core/net/inspectmsg: the messages between agentjail and agentjail-tls
 * (doc/design.md §4d) read back as written, and refused when malformed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/net/inspectmsg.h"

static void config(void **state)
{
	(void)state;
	struct im_config c = {0};
	c.ca_dir = strdup("/s/ca");
	struct strv h = STRV_INIT;
	strv_push(&h, "api.anthropic.com");
	struct secret_def d;
	struct err e = {0};
	assert_int_equal(secret_def_make("K", &h, "x-api-key", NULL, NULL, NULL, &d, &e), 0);
	im_config_add_secret(&c, &d, "sk-ant-\0binary", 14);
	secret_def_free(&d);
	strv_push(&c.allow_http, "GET github.com/*");
	strv_push(&c.allow, "github.com:22");
	strv_push(&c.map, "gh.test=127.0.0.1");
	c.ssh_auth_sock = strdup("/run/user/0/agent.sock");
	strv_push(&c.known_hosts, "/root/.ssh/known_hosts");
	struct imsg m = {0};
	im_config_encode(&c, &m);
	struct im_config b;
	assert_int_equal(im_config_decode(m.b.p, m.b.len, &b, &e), 0);
	assert_string_equal(b.ca_dir, "/s/ca");
	assert_int_equal(b.secrets.n, 1);
	assert_string_equal(b.secrets.v[0].header, "x-api-key");
	assert_int_equal(b.vlen[0], 14);
	assert_memory_equal(b.values[0], "sk-ant-\0binary", 14);
	assert_string_equal(b.allow_http.v[0], "GET github.com/*");
	assert_string_equal(b.map.v[0], "gh.test=127.0.0.1");
	assert_string_equal(b.ssh_auth_sock, "/run/user/0/agent.sock");
	im_config_free(&b);
	/* cut anywhere: refused, never half-read */
	for (size_t n = 1; n < m.b.len; n++)
		if (im_config_decode(m.b.p, n, &b, &e) == 0)
			fail_msg("a prefix of %zu bytes was accepted", n);
	/* another build */
	struct imsg o = {0};
	im_begin(&o, IM_CONFIG);
	im_put_str(&o, 1, "agentjail-tls 0");
	im_put_str(&o, 2, "/s/ca");
	im_end(&o);
	assert_int_equal(im_config_decode(o.b.p, o.b.len, &b, &e), -1);
	assert_non_null(strstr(e.what, "another version"));
	im_wipe(&o);
	/* a host after the last value belongs to no secret: refused, and nothing kept
	 * (fuzz_inspectmsg found it leaked) */
	im_begin(&o, IM_CONFIG);
	im_put_str(&o, 1, IM_VERSION);
	im_put_str(&o, 2, "/s/ca");
	im_put_str(&o, 5, "api.anthropic.com");
	im_end(&o);
	assert_int_equal(im_config_decode(o.b.p, o.b.len, &b, &e), -1);
	assert_non_null(strstr(e.what, "without its value"));
	im_wipe(&o);
	/* a secret twice: refused (fuzz_inspectmsg: the second value leaked, and the first
	 * secret's place kept the first value) */
	im_begin(&o, IM_CONFIG);
	im_put_str(&o, 1, IM_VERSION);
	im_put_str(&o, 2, "/s/ca");
	for (int k = 0; k < 2; k++) {
		im_put_str(&o, 3, "K");
		im_put_str(&o, 4, "x-api-key");
		im_put_str(&o, 5, "api.anthropic.com");
		im_put(&o, 6, k ? "two" : "one", 3);
	}
	im_end(&o);
	assert_int_equal(im_config_decode(o.b.p, o.b.len, &b, &e), -1);
	assert_non_null(strstr(e.what, "a secret twice"));
	im_wipe(&o);
	/* added twice on the host's side: one secret, the later value at its place */
	struct im_config t = {0};
	assert_int_equal(secret_def_make("K", &h, "x-api-key", NULL, NULL, NULL, &d, &e), 0);
	im_config_add_secret(&t, &d, "one", 3);
	im_config_add_secret(&t, &d, "two", 3);
	secret_def_free(&d);
	assert_int_equal(t.secrets.n, 1);
	assert_memory_equal(t.values[0], "two", 3);
	im_config_free(&t);
	im_wipe(&m);
	im_config_free(&c);
	strv_free(&h);
}

static void tunnel_and_event(void **state)
{
	(void)state;
	struct im_tunnel t = {.id = 7, .port = 443, .at_ms = 1700000000000, .t0_mono_ms = 42,
			      .proto = NP_CONNECT, .tls = true, .held = (const uint8_t *)"\x16\x03",
			      .held_len = 2};
	strcpy(t.host, "api.anthropic.com");
	strcpy(t.rule, "api.anthropic.com");
	strcpy(t.addr, "127.0.0.1");
	struct imsg m = {0};
	im_tunnel_encode(&t, &m);
	struct im_tunnel u;
	assert_int_equal(im_tunnel_decode(m.b.p, m.b.len, &u), 0);
	assert_int_equal(u.id, 7);
	assert_string_equal(u.host, "api.anthropic.com");
	assert_int_equal(u.at_ms, 1700000000000);
	assert_true(u.tls);
	assert_int_equal(u.held_len, 2);
	assert_memory_equal(u.held, "\x16\x03", 2);
	for (size_t n = 1; n < m.b.len; n++)
		if (im_tunnel_decode(m.b.p, n, &u) == 0)
			fail_msg("a prefix of %zu bytes was accepted", n);
	/* a captured direct connection (NP_TCP) is a tunnel too; an event's own kinds are not */
	static const enum net_proto kinds[] = {NP_CONNECT, NP_SOCKS, NP_TCP, NP_HTTPS, NP_SSH_AGENT};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		t.proto = kinds[k];
		im_wipe(&m);
		im_tunnel_encode(&t, &m);
		int want = kinds[k] == NP_HTTPS || kinds[k] == NP_SSH_AGENT ? -1 : 0;
		if (im_tunnel_decode(m.b.p, m.b.len, &u) != want)
			fail_msg("a tunnel of %s: %s", net_proto_name(kinds[k]),
				 want ? "accepted" : "refused");
		if (!want)
			assert_int_equal(u.proto, kinds[k]);
	}

	struct net_event ev = {.at_ms = 5, .proto = NP_HTTPS, .host = "github.com", .port = 443,
			       .allowed = false, .rule = "POST github.com/gists\x1b[2J", .bytes_up = 9};
	im_event_encode(&ev, &m);
	struct net_event back;
	assert_int_equal(im_event_decode(m.b.p, m.b.len, &back), 0);
	assert_int_equal(back.proto, NP_HTTPS);
	assert_string_equal(back.rule, "POST github.com/gists?[2J"); /* no control byte */
	assert_int_equal(back.bytes_up, 9);
	/* a field twice: refused, not the last one taken */
	struct imsg d = {0};
	im_begin(&d, IM_EVENT);
	im_put_str(&d, 3, "github.com");
	im_put_str(&d, 3, "evil.example");
	im_end(&d);
	assert_int_equal(im_event_decode(d.b.p, d.b.len, &back), -1);
	im_wipe(&d);
	m.b.p[m.b.len - 1] = 0xff; /* a field's length past the end */
	m.b.p[m.b.len - 5] = 0x7f;
	assert_int_equal(im_event_decode(m.b.p, m.b.len, &back), -1);
	im_wipe(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(config),
		cmocka_unit_test(tunnel_and_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
