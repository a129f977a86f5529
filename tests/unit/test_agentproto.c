/* Tests for core/net/agentproto (the ssh-agent protocol as the filtered agent reads it) and
 * core/net/knownhosts (known_hosts lines) — doc/design.md §4d. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/net/agentproto.h"
#include "core/net/knownhosts.h"

/* A tiny writer of SSH wire strings. */
struct w {
	uint8_t b[1024];
	size_t n;
};
static void u32(struct w *w, uint32_t v)
{
	w->b[w->n++] = (uint8_t)(v >> 24);
	w->b[w->n++] = (uint8_t)(v >> 16);
	w->b[w->n++] = (uint8_t)(v >> 8);
	w->b[w->n++] = (uint8_t)v;
}
static void u8(struct w *w, uint8_t v)
{
	w->b[w->n++] = v;
}
static void str(struct w *w, const void *p, size_t n)
{
	u32(w, (uint32_t)n);
	memcpy(w->b + w->n, p, n);
	w->n += n;
}
static void cstr(struct w *w, const char *s)
{
	str(w, s, strlen(s));
}
static struct agent_str as(const struct w *w)
{
	return (struct agent_str){w->b, w->n};
}

static void frames(void **state)
{
	(void)state;
	uint8_t f[] = {0, 0, 0, 1, 11, 0, 0};
	struct agent_str body;
	size_t total;
	assert_int_equal(agent_frame(f, 3, &body, &total), 0);
	assert_int_equal(agent_frame(f, 7, &body, &total), 1);
	assert_int_equal(total, 5);
	assert_int_equal(body.p[0], AGENTC_REQUEST_IDENTITIES);
	uint8_t big[] = {0, 4, 0, 1};
	assert_int_equal(agent_frame(big, 4, &body, &total), -1); /* over 256 KiB */
	uint8_t zero[] = {0, 0, 0, 0};
	assert_int_equal(agent_frame(zero, 4, &body, &total), -1);
}

static void bind_and_sign(void **state)
{
	(void)state;
	struct w hk = {0}, sig = {0}, m = {0};
	cstr(&hk, "ssh-ed25519");
	str(&hk, "0123456789abcdef0123456789abcdef", 32);
	cstr(&sig, "ssh-ed25519");
	str(&sig, "s", 1);
	u8(&m, AGENTC_EXTENSION);
	cstr(&m, "session-bind@openssh.com");
	str(&m, hk.b, hk.n);
	str(&m, "SESSIONID", 9);
	str(&m, sig.b, sig.n);
	u8(&m, 0);
	struct agent_str name;
	struct agent_bind b;
	assert_int_equal(agent_parse_extension(as(&m), &name, &b), 0);
	assert_true(b.ok);
	assert_false(b.forwarding);
	assert_true(agent_str_eq(b.session_id, "SESSIONID"));
	struct agent_str type, rest, alg, bytes;
	assert_int_equal(agent_key_type(b.hostkey, &type, &rest), 0);
	assert_true(agent_str_eq(type, "ssh-ed25519"));
	assert_int_equal(agent_parse_signature(b.signature, &alg, &bytes), 0);
	/* a byte too many, a forwarding flag of 2, a cut message: malformed */
	m.b[m.n++] = 0;
	assert_int_equal(agent_parse_extension(as(&m), &name, &b), -1);
	m.n--;
	m.b[m.n - 1] = 2;
	assert_int_equal(agent_parse_extension(as(&m), &name, &b), -1);
	m.b[m.n - 1] = 1;
	assert_int_equal(agent_parse_extension(as(&m), &name, &b), 0);
	assert_true(b.forwarding);
	for (size_t k = 1; k < m.n; k++) {
		struct w cut = m;
		cut.n = k;
		if (agent_parse_extension(as(&cut), &name, &b) == 0 && b.ok)
			fail_msg("a bind cut to %zu bytes was read", k);
	}
	/* another extension: not read */
	struct w q = {0};
	u8(&q, AGENTC_EXTENSION);
	cstr(&q, "query");
	assert_int_equal(agent_parse_extension(as(&q), &name, &b), 0);
	assert_false(b.ok);

	/* a sign request for an SSH login of that session */
	struct w key = {0}, data = {0}, sr = {0};
	cstr(&key, "ssh-ed25519");
	str(&key, "userkeyuserkeyuserkeyuserkey1234", 32);
	str(&data, "SESSIONID", 9);
	u8(&data, 50);
	cstr(&data, "git");
	cstr(&data, "ssh-connection");
	cstr(&data, "publickey-hostbound-v00@openssh.com");
	u8(&data, 1);
	cstr(&data, "ssh-ed25519");
	str(&data, key.b, key.n);
	str(&data, hk.b, hk.n);
	u8(&sr, AGENTC_SIGN_REQUEST);
	str(&sr, key.b, key.n);
	str(&sr, data.b, data.n);
	u32(&sr, 0);
	struct agent_sign s;
	assert_int_equal(agent_parse_sign(as(&sr), &s), 0);
	struct agent_userauth ua;
	assert_int_equal(agent_parse_userauth(s.data, &ua), 0);
	assert_true(ua.hostbound);
	assert_true(agent_str_eq(ua.user, "git"));
	assert_true(agent_str_same(ua.key, s.key));
	assert_true(agent_str_same(ua.hostkey, as(&hk)));
	/* what is not a login: an SSHSIG blob, a login without a signature */
	struct w other = {0};
	str(&other, "SSHSIG", 6);
	assert_int_equal(agent_parse_userauth(as(&other), &ua), -1);
	data.b[9 + 4] = 51;
	assert_int_equal(agent_parse_userauth(as(&data), &ua), -1);
}

static void known_hosts(void **state)
{
	(void)state;
	struct kh_entry e;
	assert_int_equal(kh_parse_line("# a comment", &e), 0);
	assert_int_equal(kh_parse_line("   ", &e), 0);
	assert_int_equal(kh_parse_line("github.com,140.82.112.3 ssh-ed25519 "
				       "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
				       &e), 1);
	assert_int_equal(e.marker, KH_NONE);
	assert_int_equal(e.patterns.n, 2);
	assert_string_equal(e.type, "ssh-ed25519");
	assert_int_equal(e.key_len, 51);
	assert_true(kh_entry_names(&e, "github.com", 22));
	assert_false(kh_entry_names(&e, "github.com", 443));
	assert_false(kh_entry_names(&e, "gist.github.com", 22));
	kh_entry_free(&e);
	assert_int_equal(kh_parse_line("[ssh.github.com]:443,*.example.org,!bad.example.org "
				       "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsab"
				       "gH5C9okWi0dh2l9GKJl", &e), 1);
	assert_true(kh_entry_names(&e, "ssh.github.com", 443));
	assert_true(kh_entry_names(&e, "a.example.org", 22));
	assert_false(kh_entry_names(&e, "bad.example.org", 22)); /* negated */
	kh_entry_free(&e);
	assert_int_equal(kh_parse_line("@revoked * ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVz"
				       "rm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl", &e), 1);
	assert_int_equal(e.marker, KH_REVOKED);
	kh_entry_free(&e);
	assert_int_equal(kh_parse_line("|1|JfKTdBh7rNbXkVAQCRp4OQoPfmI=|USECr3SWf1JUPsms5AqfD5QfxkM="
				       " ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLs"
				       "abgH5C9okWi0dh2l9GKJl", &e), 1);
	assert_true(e.hashed);
	assert_int_equal(e.salt_len, 20);
	assert_false(kh_entry_names(&e, "github.com", 22)); /* hashed: the caller tries HMACs */
	kh_entry_free(&e);
	static const char *const bad[] = {"@marker host ssh-ed25519 AAAA",
					  "host ssh-ed25519", "host ssh-ed25519 not*base64",
					  "|1|x|y ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", NULL};
	for (int i = 0; bad[i]; i++)
		if (kh_parse_line(bad[i], &e) != -1)
			fail_msg("read %s", bad[i]);
	char *n = kh_host_name("h.test", 2222);
	assert_string_equal(n, "[h.test]:2222");
	free(n);
	assert_true(kh_pattern_match("*.Example.org", "a.b.example.ORG"));
	assert_true(kh_pattern_match("h?.test", "h1.test"));
	assert_false(kh_pattern_match("h?.test", "h12.test"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frames),
		cmocka_unit_test(bind_and_sign),
		cmocka_unit_test(known_hosts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
