/* The client side of `agentjail __connect`: the CONNECT request it writes and the proxy's
 * reply head it reads (core/net/connreply). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/connreply.h"

static void request_ok(void **state)
{
	(void)state;
	static const struct {
		const char *host;
		uint16_t port;
		const char *want;
	} t[] = {
		{"github.com", 22, "CONNECT github.com:22 HTTP/1.1\r\nHost: github.com:22\r\n\r\n"},
		{"::1", 2222, "CONNECT [::1]:2222 HTTP/1.1\r\nHost: [::1]:2222\r\n\r\n"},
		{"[2001:db8::1]", 22, "CONNECT [2001:db8::1]:22 HTTP/1.1\r\nHost: [2001:db8::1]:22\r\n\r\n"},
		{"10.0.0.1", 443, "CONNECT 10.0.0.1:443 HTTP/1.1\r\nHost: 10.0.0.1:443\r\n\r\n"},
		{"git_host-1.example", 7999, "CONNECT git_host-1.example:7999 HTTP/1.1\r\n"
					     "Host: git_host-1.example:7999\r\n\r\n"},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		size_t len = 0;
		char *got = connect_request(t[i].host, t[i].port, &len);
		assert_non_null(got);
		assert_string_equal(got, t[i].want);
		assert_int_equal(len, strlen(t[i].want));
		free(got);
	}
}

/* A host that would smuggle a header or a second request is refused. */
static void request_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {"", "a b", "evil\r\nX-Injected: 1", "a\nb", "a/b",
					  "[nocolon]", "[::1", "::1]", "a@b", "%00"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		size_t len = 0;
		char *got = connect_request(bad[i], 22, &len);
		if (got)
			fail_msg("accepted host `%s`: %s", bad[i], got);
	}
	size_t len = 0;
	assert_null(connect_request("example.com", 0, &len));
	char longname[300];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	assert_null(connect_request(longname, 22, &len));
}

static void reply_200_with_data(void **state)
{
	(void)state;
	static const char r200[] = "HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0-x\r\n";
	struct connect_reply r;
	assert_int_equal(connect_reply_parse(r200, strlen(r200), &r), CR_OK);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.reason, "Connection established");
	assert_string_equal(r200 + r.head_len, "SSH-2.0-x\r\n");
	static const char bare[] = "HTTP/1.0 200\n\n";
	assert_int_equal(connect_reply_parse(bare, strlen(bare), &r), CR_OK);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.reason, "");
	assert_int_equal(r.head_len, strlen(bare));
}

static void reply_403_reason(void **state)
{
	(void)state;
	static const char r403[] =
		"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
		"x-proxy-error:  evil.example:22 is not on the allow list (add --allow-domain "
		"evil.example:22)\r\nConnection: close\r\n\r\nbody";
	struct connect_reply r;
	assert_int_equal(connect_reply_parse(r403, strlen(r403), &r), CR_OK);
	assert_int_equal(r.status, 403);
	assert_string_equal(r.reason, "evil.example:22 is not on the allow list (add "
				      "--allow-domain evil.example:22)");
	/* control characters in the reason cannot reach the terminal */
	static const char esc[] = "HTTP/1.1 502 Bad\x1b[2J\r\nX-Proxy-Error: a\x1b]0;x\x07z\r\n\r\n";
	assert_int_equal(connect_reply_parse(esc, strlen(esc), &r), CR_OK);
	assert_int_equal(r.status, 502);
	assert_string_equal(r.reason, "a?]0;x?z");
}

static void reply_partial_bad_big(void **state)
{
	(void)state;
	static const char part[] = "HTTP/1.1 200 Connection established\r\n";
	struct connect_reply r;
	for (size_t n = 0; n <= strlen(part); n++)
		assert_int_equal(connect_reply_parse(part, n, &r), CR_NEED_MORE);
	static const char *const bad[] = {"SSH-2.0-x\r\n\r\n", "HTTP/1.1 2000 x\r\n\r\n",
					  "HTTP/2 200\r\n\r\n", "HTTP/1.1 20\r\n\r\n",
					  "HTTP/1.1 abc\r\n\r\n"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (connect_reply_parse(bad[i], strlen(bad[i]), &r) != CR_BAD)
			fail_msg("accepted `%s`", bad[i]);
	char *big = malloc(CONNECT_REPLY_MAX + 10);
	assert_non_null(big);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	memset(big + 20, 'a', CONNECT_REPLY_MAX - 10);
	assert_int_equal(connect_reply_parse(big, CONNECT_REPLY_MAX + 10, &r), CR_TOO_BIG);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_ok),
		cmocka_unit_test(request_refused),
		cmocka_unit_test(reply_200_with_data),
		cmocka_unit_test(reply_403_reason),
		cmocka_unit_test(reply_partial_bad_big),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
