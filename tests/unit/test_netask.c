/* Tests for --net ask's pure parts: what a session was answered (core/plan/netask), the question
 * on the terminal — the keys that answer and those that never do, the screen the jail's output
 * left, the drawing (core/plan/askterm) — and the control socket's protocol
 * (core/plan/ctlproto). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/askterm.h"
#include "core/plan/ctlproto.h"
#include "core/plan/netask.h"

static enum net_verdict memo_v(struct netask_memo *m, const char *host, uint16_t port,
			       long long now)
{
	struct net_decision d;
	return netask_memo_check(m, host, port, now, &d);
}

static void memo(void **state)
{
	(void)state;
	struct netask_memo m = {0};
	assert_int_equal(memo_v(&m, "evil.example", 443, 0), NV_NOT_ALLOWED);
	/* session: the bare name allows 80 and 443 and lookups, not another port */
	const struct netrule *r = netask_memo_allow(&m, "evil.example", 0);
	assert_non_null(r);
	assert_string_equal(r->spec, "evil.example");
	struct net_decision d;
	assert_int_equal(netask_memo_check(&m, "evil.example", 443, 5, &d), NV_ALLOW);
	assert_ptr_equal(d.rule, r);
	assert_int_equal(memo_v(&m, "evil.example", 80, 5), NV_ALLOW);
	assert_int_equal(memo_v(&m, "evil.example", 0, 5), NV_ALLOW);
	assert_int_equal(memo_v(&m, "evil.example", 22, 5), NV_NOT_ALLOWED);
	assert_int_equal(memo_v(&m, "sub.evil.example", 443, 5), NV_NOT_ALLOWED);
	/* a lookup allowed once: for a while; a connection once: for no later request, yet its
	 * rule stays where it is for the connection that holds it */
	const struct netrule *l = netask_memo_allow(&m, "look.example", 1000);
	assert_int_equal(memo_v(&m, "look.example", 443, 999), NV_ALLOW);
	assert_int_equal(memo_v(&m, "look.example", 443, 1000), NV_NOT_ALLOWED);
	const struct netrule *o = netask_memo_allow(&m, "db.example:5432", 1);
	assert_non_null(o);
	assert_int_equal(memo_v(&m, "db.example", 5432, 2), NV_NOT_ALLOWED);
	for (int i = 0; i < 50; i++) { /* more entries: the earlier ones do not move */
		char e[64];
		snprintf(e, sizeof e, "n%d.example", i);
		assert_non_null(netask_memo_allow(&m, e, 0));
	}
	assert_string_equal(l->spec, "look.example");
	assert_string_equal(o->spec, "db.example:5432");
	assert_int_equal(netask_memo_check(&m, "evil.example", 443, 5, &d), NV_ALLOW);
	assert_ptr_equal(d.rule, r);
	/* deny: for the session, and it takes back an allow; an allow takes back a deny */
	netask_memo_deny(&m, "evil.example");
	assert_int_equal(memo_v(&m, "evil.example", 443, 5), NV_DENY_LISTED);
	assert_int_equal(memo_v(&m, "evil.example", 0, 5), NV_DENY_LISTED);
	assert_non_null(netask_memo_allow(&m, "evil.example", 0));
	assert_int_equal(memo_v(&m, "evil.example", 443, 5), NV_ALLOW);
	/* literals, v6 too */
	assert_non_null(netask_memo_allow(&m, "[2001:db8::1]:8080", 0));
	assert_int_equal(memo_v(&m, "2001:db8::1", 8080, 5), NV_ALLOW);
	assert_null(netask_memo_allow(&m, "not an entry", 0));
	netask_memo_free(&m);
}

static void same_and_reason(void **state)
{
	(void)state;
	struct net_question q = {.port = 443};
	strcpy(q.entry, "evil.example");
	assert_true(netask_same(&q, "evil.example", 443));
	assert_true(netask_same(&q, "evil.example", 0)); /* a lookup and 443 share a question */
	assert_true(netask_same(&q, "evil.example", 80));
	assert_false(netask_same(&q, "evil.example", 8443));
	char *r = netask_reason("evil.example", 443, ASK_DENY, false, "the terminal", 60);
	assert_string_equal(r, "evil.example:443 was denied when asked (the terminal)");
	free(r);
	r = netask_reason("evil.example", 0, ASK_DENY, true, NULL, 60);
	assert_string_equal(r, "evil.example (lookup) was not allowed: no answer within 60 s to "
			       "the question (--net ask)");
	free(r);
	r = netask_reason("::1", 8080, ASK_SESSION, false, "agentjail tui", 60);
	assert_string_equal(r, "[::1]:8080 was allowed for the session when asked (agentjail tui)");
	free(r);
	enum ask_answer a;
	assert_int_equal(ask_answer_parse("always", &a), 0);
	assert_int_equal(a, ASK_ALWAYS);
	assert_int_equal(ask_answer_parse("yes", &a), -1);
	assert_string_equal(ask_answer_name(ASK_ONCE), "once");
}

static enum askkey keys(struct askkeys *k, const char *s)
{
	return askkeys_feed(k, s, strlen(s));
}

/* Only a key typed answers: nothing a terminal sends by itself, whole or cut up. */
static void answer_keys(void **state)
{
	(void)state;
	struct askkeys k = {0};
	assert_int_equal(keys(&k, "o"), AK_ONCE);
	assert_int_equal(keys(&k, "S"), AK_SESSION);
	assert_int_equal(keys(&k, "a"), AK_ALWAYS);
	assert_int_equal(keys(&k, "n"), AK_DENY);
	assert_int_equal(keys(&k, "\003"), AK_DENY);
	assert_int_equal(keys(&k, "xyz d"), AK_DENY);
	assert_int_equal(keys(&k, "\033"), AK_LATER);
	assert_int_equal(keys(&k, "q1!\r"), AK_NONE);
	/* replies a jail can make the terminal send: a cursor position, device attributes,
	 * a colour query's answer, a title report, a bracketed paste marker, function keys */
	static const char *const replies[] = {
		"\033[24;80R", "\033[?64;1;2;6;9;15;18;21;22c", "\033]11;rgb:0000/0000/0000\033\\",
		"\033]lsession always\033\\", "\033]Lonce\007", "\033P1$r0m\033\\", "\033[200~",
		"\033OP", "\033[15~", ("\233" "1;1R"), "\033_Gapc\033\\",
	};
	for (size_t i = 0; i < sizeof replies / sizeof *replies; i++) {
		struct askkeys kk = {0};
		if (keys(&kk, replies[i]) != AK_NONE)
			fail_msg("reply %zu answered", i);
		assert_int_equal(kk.st, 0); /* and it ended */
		/* cut into pieces of one byte (past the first: a lone ESC is the Esc key) */
		struct askkeys kp = {0};
		const char *s = replies[i];
		if (strlen(s) > 1 && askkeys_feed(&kp, s, 2) != AK_NONE)
			fail_msg("reply %zu answered (head)", i);
		for (size_t j = 2; j < strlen(s); j++)
			if (askkeys_feed(&kp, s + j, 1) != AK_NONE)
				fail_msg("reply %zu answered at byte %zu", i, j);
	}
	/* a key after a reply in the same read still counts */
	struct askkeys k2 = {0};
	assert_int_equal(keys(&k2, "\033[2;2Rs"), AK_SESSION);
	assert_int_equal(askkey_answer(AK_ALWAYS), ASK_ALWAYS);
	assert_int_equal(askkey_answer(AK_DENY), ASK_DENY);
}

static void screen_scan(void **state)
{
	(void)state;
	struct ttyscan t = {0};
	ttyscan_feed(&t, "hello \033[1mbold\033[0m", 18);
	assert_false(t.alt);
	const char *in = "\033[?1049h";
	for (size_t i = 0; i < strlen(in); i++) /* cut anywhere */
		ttyscan_feed(&t, in + i, 1);
	assert_true(t.alt);
	ttyscan_feed(&t, "\033]0;title \033[?1049l\007", 20); /* inside a string: nothing */
	assert_true(t.alt);
	ttyscan_feed(&t, "\033[?25;1049l", 11);
	assert_false(t.alt);
	ttyscan_feed(&t, "\033[?47h", 6);
	assert_true(t.alt);
	ttyscan_feed(&t, "\033c", 2);
	assert_false(t.alt);
	ttyscan_feed(&t, "\033[1049h", 7); /* not private: not the screen */
	assert_false(t.alt);
}

static void drawing(void **state)
{
	(void)state;
	struct net_question q = {.id = 3, .port = 443, .proto = "connect"};
	strcpy(q.host, "evil.example");
	strcpy(q.entry, "evil.example");
	size_t n;
	char *s = askterm_draw(&q, "abcd", 24, 80, false, true, 59, &n);
	assert_int_equal(strlen(s), n);
	assert_memory_equal(s, "\033[?1049h", 8); /* the main screen is kept aside */
	assert_non_null(strstr(s, "evil.example:443 (connect)"));
	assert_non_null(strstr(s, "[o] once"));
	assert_non_null(strstr(s, "agentjail net allow|deny abcd evil.example"));
	assert_non_null(strstr(s, "denied in 59 s"));
	free(s);
	s = askterm_undraw(24, false, &n);
	assert_string_equal(s, "\033[?1049l");
	free(s);
	/* a full-screen program: its last line, the cursor put back, one line */
	s = askterm_draw(&q, "abcd", 30, 40, true, true, 5, &n);
	assert_memory_equal(s, "\0337\033[30;1H\033[2K\033[7m", 17);
	assert_memory_equal(s + n - 6, "\033[0m\0338", 6);
	free(s);
	s = askterm_undraw(30, true, &n);
	assert_string_equal(s, "\0337\033[30;1H\033[2K\0338");
	free(s);
	/* a lookup; the host as the jail sent it cannot reach the terminal raw */
	q.port = 0;
	strcpy(q.host, "x\033[2J.example");
	s = askterm_draw(&q, NULL, 24, 80, false, false, 1, &n);
	assert_non_null(strstr(s, "x?[2J.example (a name lookup)"));
	assert_null(strstr(s, "\033[?1049h"));
	free(s);
}

static void proto_requests(void **state)
{
	(void)state;
	struct ctl_req r;
	const char *why;
	const char *ok = "AJ1 answer 12 once tui";
	assert_int_equal(ctlproto_parse(ok, strlen(ok), &r, &why), 0);
	assert_int_equal(r.version, 1);
	assert_string_equal(r.verb, "answer");
	assert_int_equal(r.nargs, 3);
	assert_string_equal(r.args[2], "tui");
	assert_int_equal(ctlproto_parse("AJ7 ping", 8, &r, &why), 0);
	assert_int_equal(r.version, 7);
	static const char *const bad[] = {
		"", "AJ1", "ping", "AJ ping", "AJx ping", "AJ0 ping", "AJ12345 ping", " AJ1 ping",
		"AJ1 ping ", "AJ1  ping", "AJ1 pi\tng", "AJ1 p\x80ng", "AJ1 a b c d e f g h i j",
		"aj1 ping",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (ctlproto_parse(bad[i], strlen(bad[i]), &r, &why) == 0)
			fail_msg("accepted: \"%s\"", bad[i]);
		else
			assert_non_null(why);
	char nul[] = "AJ1 pi\0ng";
	assert_int_equal(ctlproto_parse(nul, 9, &r, &why), -1);
	char big[CTLPROTO_LINE_MAX + 8];
	memset(big, 'a', sizeof big);
	memcpy(big, "AJ1 x ", 6);
	assert_int_equal(ctlproto_parse(big, sizeof big, &r, &why), -1);
	memset(big, 'a', sizeof big);
	memcpy(big, "AJ1 ", 4); /* one word longer than CTLPROTO_WORD_MAX */
	assert_int_equal(ctlproto_parse(big, 4 + CTLPROTO_WORD_MAX + 1, &r, &why), -1);
	assert_true(ctlproto_word_ok("evil.example:443"));
	assert_false(ctlproto_word_ok(""));
	assert_false(ctlproto_word_ok("a b"));
}

static void proto_questions(void **state)
{
	(void)state;
	struct net_question q = {.id = 42, .port = 5432, .proto = "connect",
				 .asked_ms = 1700000000000LL, .deadline_ms = 1700000060000LL};
	strcpy(q.host, "db.example");
	strcpy(q.entry, "db.example:5432");
	char line[512];
	assert_int_equal(ctlproto_question_format(&q, line, sizeof line), 0);
	assert_string_equal(line, "q 42 db.example:5432 db.example 5432 connect 1700000000000 "
				  "1700000060000");
	struct net_question b;
	assert_int_equal(ctlproto_question_parse(line, strlen(line), &b), 0);
	assert_memory_equal(&b, &q, sizeof q);
	static const char *const bad[] = {
		"q 0 a a 1 dns 1 1", "q 1 a a 65536 dns 1 1", "q 1 a a 1 Dns 1 1", "q 1 a a 1 connects 1 1",
		"q 1 a a 1 dns\033 1 1", "q 1 a a 1 dns 1",
		"r 1 a a 1 dns 1 1", "q 1 a a 1 dns 1 1 x", "q -1 a a 1 dns 1 1", "q 1 a a 1 dns x 1",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (ctlproto_question_parse(bad[i], strlen(bad[i]), &b) == 0)
			fail_msg("accepted: \"%s\"", bad[i]);
	strcpy(q.host, "a b");
	assert_int_equal(ctlproto_question_format(&q, line, sizeof line), -1);
	long n;
	const char *rest;
	assert_int_equal(ctlproto_reply_head("ok list 3", &n, &rest), 1);
	assert_int_equal(n, 3);
	assert_int_equal(ctlproto_reply_head("ok answered 2", &n, &rest), 1);
	assert_int_equal(n, 0);
	assert_string_equal(rest, "answered 2");
	assert_int_equal(ctlproto_reply_head("err no such question", &n, &rest), 0);
	assert_string_equal(rest, "no such question");
	assert_int_equal(ctlproto_reply_head("ok list 99999", &n, &rest), -1);
	assert_int_equal(ctlproto_reply_head("okay", &n, &rest), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(memo),
		cmocka_unit_test(same_and_reason),
		cmocka_unit_test(answer_keys),
		cmocka_unit_test(screen_scan),
		cmocka_unit_test(drawing),
		cmocka_unit_test(proto_requests),
		cmocka_unit_test(proto_questions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
