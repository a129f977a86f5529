/* Tests for core/session/sessfmt and netfmt: times, durations, policy summaries, status cells, terminal-safe
 * text and its width, aligned tables, the `agentjail sessions` listing, and the proxy's
 * decisions as text (log lines, summaries, the end-of-run line of denied connections). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/plan/policy.h"
#include "core/session/netfmt.h"
#include "core/session/sessfmt.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#define SEC 1000LL
#define MIN (60 * SEC)
#define HOUR (60 * MIN)
#define DAY (24 * HOUR)

/* Compare a returned string with the expected one, then free it. */
static void is(char *got, const char *want, const char *what)
{
	if (strcmp(got, want) != 0)
		fail_msg("%s: got \"%s\", want \"%s\"", what, got, want);
	free(got);
}

static void ago(void **state)
{
	(void)state;
	const long long now = 1709647402000LL; /* 2024-03-05 14:03:22 UTC */
	static const struct {
		long long before; /* now - t */
		long off;
		const char *want;
	} t[] = {
		{0, 0, "just now"},
		{4999, 0, "just now"},
		{-59 * SEC, 0, "just now"}, /* a clock a little ahead */
		{5 * SEC, 0, "5s ago"},
		{59 * SEC + 999, 0, "59s ago"},
		{60 * SEC, 0, "1m ago"},
		{59 * MIN, 0, "59m ago"},
		{HOUR, 0, "1h ago"},
		{23 * HOUR + 59 * MIN, 0, "23h ago"},
		{DAY, 0, "1d ago"},
		{29 * DAY, 0, "29d ago"},
		{30 * DAY, 0, "2024-02-04"},
		{400 * DAY, 0, "2023-01-30"},
		{30 * DAY, -15 * 3600, "2024-02-03"}, /* the local date, 15 h behind UTC */
		{-2 * MIN, 0, "2024-03-05"},	      /* the future: the date */
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		char what[64];
		snprintf(what, sizeof what, "ago #%zu", i);
		is(sessfmt_ago(now - t[i].before, now, t[i].off), t[i].want, what);
	}
	is(sessfmt_time(now, 0), "2024-03-05 14:03:22", "time");
	is(sessfmt_time(now, 3600), "2024-03-05 15:03:22", "time +1h");
	is(sessfmt_time(now, -15 * 3600), "2024-03-04 23:03:22", "time -15h");
}

static void durations(void **state)
{
	(void)state;
	static const struct {
		long long ms;
		const char *want;
	} t[] = {
		{-1, "-"},
		{0, "0.0s"},
		{49, "0.0s"},
		{400, "0.4s"},
		{9999, "9.9s"},
		{10 * SEC, "10s"},
		{59 * SEC + 999, "59s"},
		{MIN + 7 * SEC, "1m07s"},
		{59 * MIN + 59 * SEC, "59m59s"},
		{3 * HOUR + 4 * MIN + 59 * SEC, "3h04m"},
		{2 * DAY + 3 * HOUR + 59 * MIN, "2d03h"},
		{400 * DAY, "400d00h"},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		is(sessfmt_duration(t[i].ms), t[i].want, "duration");
}

static void policies(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		const char *want;
	} t[] = {
		{"{\"version\":1,\"fs\":\"workspace-write\",\"net\":\"off\"}", "rw·off"},
		{"{\"version\":1,\"fs\":\"read-only\",\"net\":\"on\"}", "ro·on"},
		{"{\"fs\":\"workspace-write\",\"net\":\"allow\",\"allow_domains\":[\"a\",\"b\",\"c\"]}",
		 "rw·allow(3)"},
		{"{\"fs\":\"workspace-write\",\"net\":\"allow\",\"allow_domains\":[]}", "rw·allow(0)"},
		{"{\"fs\":\"workspace-write\",\"net\":\"allow\"}", "rw·allow"},
		{"{\"fs\":\"workspace-write\",\"net\":\"on\",\"allow_domains\":[\"a\"]}", "rw·on"},
		{"{\"fs\":\"danger-full-access\",\"net\":\"on\"}", "full"},
		{"{\"fs\":\"read-only\",\"net\":\"off\",\"allow_ptrace\":true}", "ro·off·ptrace"},
		{"{\"fs\":\"read-only\",\"net\":\"off\",\"allow_ptrace\":false}", "ro·off"},
		{"{\"fs\":\"workspace-write\",\"net\":\"off\",\"home\":\"persist\"}", "rw·off·home"},
		{"{\"fs\":\"workspace-write\",\"net\":\"off\",\"home\":\"tmp\"}", "rw·off"},
		{"{\"fs\":\"overlay\",\"net\":\"off\"}", "overlay·off"}, /* a later mode */
		{"{\"fs\":\"read-only\"}", "?"},
		{"[1,2]", "?"},
		{"not json", "?"},
		{"", "?"},
		{NULL, "?"},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		is(sessfmt_policy(t[i].json), t[i].want, t[i].json ? t[i].json : "NULL");

	/* what policy_to_json writes today */
	struct policy p;
	policy_init(&p);
	p.fs = FS_READ_ONLY;
	p.net = NET_ON;
	p.workspace = xstrdup("/w");
	char *j = policy_to_json(&p);
	is(sessfmt_policy(j), "ro·on", j);
	free(j);
	p.fs = FS_DANGER_FULL;
	j = policy_to_json(&p);
	is(sessfmt_policy(j), "full", j);
	free(j);
	policy_free(&p);
}

static void statuses(void **state)
{
	(void)state;
	static const struct {
		enum sess_status st;
		int ex;
		const char *want;
	} t[] = {
		{SESS_RUNNING, -1, "running"},
		{SESS_EXITED, 0, "exited 0"},
		{SESS_EXITED, 127, "exited 127"},
		{SESS_EXITED, -1, "exited"},
		{SESS_SIGNALLED, 9, "signalled 9 (KILL)"},
		{SESS_SIGNALLED, 15, "signalled 15 (TERM)"},
		{SESS_SIGNALLED, 11, "signalled 11 (SEGV)"},
		{SESS_SIGNALLED, 77, "signalled 77"},
		{SESS_SIGNALLED, -1, "signalled"},
		{SESS_KILLED, -1, "killed"},
		{SESS_KILLED, 1, "killed (HUP)"},
		{SESS_LOST, -1, "lost"},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		is(sessfmt_status(t[i].st, t[i].ex), t[i].want, t[i].want);
}

static void clean_and_width(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		const char *clean;
		size_t width;
	} t[] = {
		{"", "", 0},
		{"plain", "plain", 5},
		{"rw·off", "rw·off", 6},
		{"caf\xc3\xa9", "caf\xc3\xa9", 4},
		{"e\xcc\x81", "e\xcc\x81", 1},		   /* e + combining acute */
		{"\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac", 4}, /* 日本: wide */
		{"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 2},		   /* an emoji */
		{"a\x1b[31mred", "a?[31mred", 9},
		{"tab\there\nnl\r", "tab?here?nl?", 12},
		{"del\x7f", "del?", 4},
		{"c1\xc2\x9b", "c1?", 3},			       /* U+009B, CSI */
		{"\xe2\x80\xae" "evil", "?evil", 5},		       /* RIGHT-TO-LEFT OVERRIDE */
		{"\xe2\x81\xa6x\xe2\x81\xa9", "?x?", 3},	       /* isolates */
		{"bad\xff\xfe", "bad??", 5},
		{"trunc\xe2\x80", "trunc??", 7},		       /* a cut sequence */
		{"\xc0\xaf", "??", 2},				       /* overlong '/' */
		{"\xed\xa0\x80", "???", 3},			       /* a surrogate */
		{"\xf4\x90\x80\x80", "????", 4},		       /* beyond U+10FFFF */
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		char what[64];
		snprintf(what, sizeof what, "clean #%zu", i);
		is(fmt_clean(t[i].in), t[i].clean, what);
		assert_int_equal(fmt_width(t[i].in), t[i].width);
		_cleanup_free_ char *c = fmt_clean(t[i].in);
		assert_int_equal(fmt_width(c), t[i].width);
	}
	/* fmt_has_marks: controls and reordering marks, not bytes that are not UTF-8 */
	assert_false(fmt_has_marks("plain caf\xc3\xa9 \xe6\x97\xa5"));
	assert_false(fmt_has_marks("bad\xff\xfe"));
	assert_false(fmt_has_marks(NULL));
	assert_true(fmt_has_marks("x\xe2\x80\xaetxt.sh"));   /* U+202E */
	assert_true(fmt_has_marks("\xe2\x81\xa6x"));         /* U+2066 */
	assert_true(fmt_has_marks("lrm\xe2\x80\x8e"));       /* U+200E */
	assert_true(fmt_has_marks("a\x1b[2J"));
	assert_true(fmt_has_marks("c1\xc2\x9b"));
}

static void cut(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t width;
		const char *want;
	} t[] = {
		{"abcdef", 6, "abcdef"},
		{"abcdef", 10, "abcdef"},
		{"abcdef", 5, "abcd…"},
		{"abcdef", 1, "…"},
		{"abcdef", 0, ""},
		{"a·b·c·d", 4, "a·b…"},
		{"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 4, "\xe6\x97\xa5…"}, /* 日本語: 日 + … */
		{"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 5, "\xe6\x97\xa5\xe6\x9c\xac…"},
		{"x\x1b[2Jyz", 4, "x?[…"},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		char *got = fmt_cut(t[i].in, t[i].width);
		assert_true(fmt_width(got) <= t[i].width);
		is(got, t[i].want, t[i].in);
	}
}

static void argv_line(void **state)
{
	(void)state;
	struct strv a = STRV_INIT;
	strv_push(&a, "claude");
	strv_push(&a, "-p");
	strv_push(&a, "fix the bug");
	strv_push(&a, "it's");
	strv_push(&a, "");
	strv_push(&a, "\x1b]0;title\x07");
	is(sessfmt_argv(&a), "claude -p 'fix the bug' 'it'\\''s' '' '?]0;title?'", "argv");
	strv_free(&a);
	struct strv none = STRV_INIT;
	is(sessfmt_argv(&none), "", "empty argv");
}

static void id_prefixes(void **state)
{
	(void)state;
	char *ids[] = {
		"aaaaaaaa-0000-4000-8000-000000000001",
		"aaaaaaaa-0000-4000-8000-000000000002",
		"abcdef01-0000-4000-8000-000000000000",
		"aaaaaaab-0000-4000-8000-000000000000",
	};
	assert_int_equal(sessfmt_id_prefix_len(ids, 4, 8), 36); /* the first two differ last */
	assert_int_equal(sessfmt_id_prefix_len(ids + 2, 2, 8), 8);
	assert_int_equal(sessfmt_id_prefix_len(ids + 2, 2, 1), 2);
	assert_int_equal(sessfmt_id_prefix_len(ids + 1, 3, 4), 8); /* aaaaaaaa- vs aaaaaaab */
	assert_int_equal(sessfmt_id_prefix_len(ids, 1, 8), 8);
	assert_int_equal(sessfmt_id_prefix_len(ids, 0, 8), 0);
	char *same[] = {"abc", "abc"};
	assert_int_equal(sessfmt_id_prefix_len(same, 2, 1), 3); /* never beyond the ids */
}

static void tables(void **state)
{
	(void)state;
	static const struct fmt_col cols[] = {{"NAME", false, 0}, {"N", true, 0}, {"NOTE", false, 6}};
	struct fmt_table t;
	fmt_table_init(&t, cols, 3);
	fmt_table_add(&t, "a");
	fmt_table_add(&t, "1");
	fmt_table_add(&t, "short");
	fmt_table_add(&t, "rw·allow(3)");
	fmt_table_add_take(&t, xstrdup("100"));
	fmt_table_add(&t, "much too long");
	fmt_table_add(&t, "\xe6\x97\xa5\xe6\x9c\xac");
	fmt_table_add(&t, NULL);
	fmt_table_add(&t, ""); /* trailing spaces trimmed */
	fmt_table_add(&t, "last");
	/* an incomplete last row */
	is(fmt_table_render(&t),
	   "NAME           N  NOTE\n"
	   "a              1  short\n"
	   "rw·allow(3)  100  much …\n"
	   "\xe6\x97\xa5\xe6\x9c\xac\n"
	   "last\n",
	   "table");
	fmt_table_free(&t);
	fmt_table_init(&t, cols, 3);
	is(fmt_table_render(&t), "NAME  N  NOTE\n", "header only");
	fmt_table_free(&t);
	fmt_table_init(&t, cols, 0);
	is(fmt_table_render(&t), "", "no columns");
	fmt_table_free(&t);
}

static void mk(struct session *s, const char *id, long long started, long long ended,
	       enum sess_status st, int ex, const char *policy, const char *profile, const char *ws,
	       const char *const *argv)
{
	memset(s, 0, sizeof *s);
	s->id = xstrdup(id);
	s->started_ms = started;
	s->ended_ms = ended;
	s->status = st;
	s->exit_status = ex;
	s->policy_json = xstrdup(policy);
	s->profile = profile ? xstrdup(profile) : NULL;
	s->workspace = xstrdup(ws);
	for (size_t i = 0; argv[i]; i++)
		strv_push(&s->argv, argv[i]);
}

static void sessions_listing(void **state)
{
	(void)state;
	const long long now = 1709647402000LL;
	static const char *const a1[] = {"claude", "--dangerously-skip-permissions", NULL};
	static const char *const a2[] = {"codex", "exec", "write the tests", NULL};
	static const char *const a3[] = {"bash", NULL};
	static const char *const a4[] = {"make", "-j8", "check", NULL};
	struct session v[4];
	mk(&v[0], "3f2a9c1e-0000-4000-8000-000000000001", now - 42 * SEC, 0, SESS_RUNNING, -1,
	   "{\"fs\":\"workspace-write\",\"net\":\"allow\",\"allow_domains\":[\"a\",\"b\",\"c\"]}",
	   "claude", "/home/u/proj", a1);
	mk(&v[1], "3f2a9c1f-0000-4000-8000-000000000002", now - 3 * HOUR,
	   now - 3 * HOUR + 5 * MIN + 7 * SEC, SESS_EXITED, 0,
	   "{\"fs\":\"read-only\",\"net\":\"off\"}", "codex", "/home/u/proj", a2);
	mk(&v[2], "b7000000-0000-4000-8000-000000000003", now - 2 * DAY, 0, SESS_LOST, -1,
	   "{\"fs\":\"danger-full-access\",\"net\":\"on\"}", NULL, "/srv/other", a3);
	mk(&v[3], "c1000000-0000-4000-8000-000000000004", now - 40 * DAY,
	   now - 40 * DAY + 1500, SESS_SIGNALLED, 9, "{\"fs\":\"workspace-write\",\"net\":\"on\"}",
	   NULL, "/home/u", a4);

	struct sessfmt_opts o = {.now_ms = now};
	is(sessfmt_sessions(v, 4, &o),
	   "ID        STARTED      TOOK  STATUS              POLICY       PROFILE  COMMAND\n"
	   "3f2a9c1e  42s ago       42s  running             rw·allow(3)  claude   claude "
	   "--dangerously-skip-permissions\n"
	   "3f2a9c1f  3h ago      5m07s  exited 0            ro·off       codex    codex exec "
	   "'write the tests'\n"
	   "b7000000  2d ago          -  lost                full         -        bash\n"
	   "c1000000  2024-01-25   1.5s  signalled 9 (KILL)  rw·on        -        make -j8 check\n",
	   "sessions");

	o.workspace = true;
	o.home = "/home/u";
	o.width = 100;
	char *got = sessfmt_sessions(v, 4, &o);
	/* every line fits in 100 columns; the long command is cut */
	for (char *line = got, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		assert_true(fmt_width(line) <= 100);
		*nl = '\n';
	}
	assert_non_null(strstr(got, "~/proj"));
	assert_non_null(strstr(got, "/srv/other"));
	assert_non_null(strstr(got, "  ~  "));
	assert_non_null(strstr(got, "claude --dang"));
	assert_null(strstr(got, "permissions"));
	assert_non_null(strstr(got, "…\n"));
	free(got);
	/* a narrow terminal: every row still fits; the command, then the workspace, are cut */
	for (size_t cols = 80; cols >= 60; cols -= 10) {
		o.width = cols;
		got = sessfmt_sessions(v, 4, &o);
		for (char *line = got, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			assert_true(fmt_width(line) <= cols);
			*nl = '\n';
		}
		assert_non_null(strstr(got, "3f2a9c1e  ")); /* the id whole */
		free(got);
	}

	/* ids alike beyond 8 characters get longer prefixes */
	free(v[1].id);
	v[1].id = xstrdup("3f2a9c1e-0000-4000-8000-000000000009");
	o = (struct sessfmt_opts){.now_ms = now};
	got = sessfmt_sessions(v, 2, &o);
	assert_non_null(strstr(got, "\n3f2a9c1e-0000-4000-8000-000000000001 "));
	free(got);
	/* nothing yet */
	is(sessfmt_sessions(NULL, 0, &o), "ID  STARTED  TOOK  STATUS  POLICY  PROFILE  COMMAND\n",
	   "no sessions");
	for (size_t i = 0; i < 4; i++)
		session_free(&v[i]);
}

/* A session resumed a day later: TOOK is its latest attempt's run, not the day between. */
static void took_of_resumed(void **state)
{
	(void)state;
	long long now = 1800000000000LL;
	struct session s = {0};
	s.id = (char *)"0123abcd-0000-4000-8000-000000000000";
	s.started_ms = now - 86400000LL;
	s.last_started_ms = now - 60000;
	s.ended_ms = now - 30000;
	s.status = SESS_EXITED;
	s.exit_status = 0;
	s.attempts = 2;
	s.policy_json = (char *)"{}";
	struct sessfmt_opts o = {.now_ms = now};
	char *t = sessfmt_sessions(&s, 1, &o);
	assert_non_null(strstr(t, "1d ago"));    /* STARTED: a day ago... */
	assert_non_null(strstr(t, "  30s  "));   /* ...TOOK: the latest run */
	assert_null(strstr(t, "23h59m"));
	free(t);
}

/* ---- netfmt ---- */

static void net_hostports_and_bytes(void **state)
{
	(void)state;
	is(netfmt_hostport("evil.example", 256, 443), "evil.example:443", "name");
	is(netfmt_hostport("2001:db8::1", 256, 443), "[2001:db8::1]:443", "IPv6 literal");
	is(netfmt_hostport("evil.example", 256, 0), "evil.example (dns)", "a lookup");
	is(netfmt_hostport("", 256, 80), "?:80", "no host");
	is(netfmt_hostport("", 256, 0), "(malformed DNS request)", "a DNS message with no name");
	is(netfmt_hostport(".", 256, 0), ". (dns)", "the root");
	/* what a hostile agent sends is cleaned: escapes, bidi overrides, invalid UTF-8 */
	is(netfmt_hostport("a\x1b[2Jb\xe2\x80\xae" "c\xff", 256, 80), "a?[2Jb?c?:80", "cleaned");
	/* cut to 64 columns; read no further than the field's size */
	char big[300];
	memset(big, 'x', sizeof big);
	char *hp = netfmt_hostport(big, 256, 1);
	assert_int_equal(fmt_width(hp), 64 + 2);
	assert_non_null(strstr(hp, "…:1"));
	free(hp);
	is(netfmt_hostport("abcdef", 3, 7), "abc:7", "field size");

	is(netfmt_bytes(0), "0", "0");
	is(netfmt_bytes(999), "999", "999");
	is(netfmt_bytes(1000), "1.0K", "1000");
	is(netfmt_bytes(1234), "1.2K", "1234");
	is(netfmt_bytes(35000), "34K", "35000");
	is(netfmt_bytes(5872026), "5.6M", "5.6M");
	is(netfmt_bytes(1073741824ULL), "1.0G", "1G");
	is(netfmt_bytes(UINT64_MAX), "16E", "max");
}

static void net_denied_line(void **state)
{
	(void)state;
	struct net_count v[] = {
		{(char *)"evil.example", 443, 2,
		 (char *)"evil.example:443 is not on the allow list (add --allow-domain "
			 "evil.example)"},
		{(char *)"other.example", 80, 1,
		 (char *)"other.example:80 is not on the allow list (add --allow-domain "
			 "other.example:80)"},
		{(char *)"third.example", 443, 1, NULL},
	};
	is(netfmt_denied_line(v, 2, 3, 0, 0, NULL),
	   "denied 3 connections: evil.example:443 ×2 is not on the allow list (add "
	   "--allow-domain evil.example); other.example:80 is not on the allow list (add "
	   "--allow-domain other.example:80)",
	   "each host with its reason and fix");
	is(netfmt_denied_line(v + 1, 1, 1, 0, 0, NULL),
	   "denied 1 connection: other.example:80 is not on the allow list (add --allow-domain "
	   "other.example:80)",
	   "one");
	is(netfmt_denied_line(NULL, 0, 0, 0, 0, NULL), "", "none");
	/* the first two whole, then the rest counted, and where to see them */
	is(netfmt_denied_line(v, 3, 4, 0, 0, "agentjail log 1234abcd"),
	   "denied 4 connections: evil.example:443 ×2 is not on the allow list (add "
	   "--allow-domain evil.example); other.example:80 is not on the allow list (add "
	   "--allow-domain other.example:80); and 1 more (agentjail log 1234abcd)",
	   "and N more");
	is(netfmt_denied_line(v + 2, 1, 1, 0, 0, NULL), "denied 1 connection: third.example:443",
	   "no reason known");
	/* the case: an allowed name that resolves to a refused address */
	struct net_count r[] = {{(char *)"registry.npmjs.org", 443, 1,
				 (char *)"registry.npmjs.org:443 resolves to 10.1.2.3 (private), "
					 "which is refused (add --map-host "
					 "registry.npmjs.org=ADDR to allow that address)"}};
	is(netfmt_denied_line(r, 1, 1, 0, 0, NULL),
	   "denied 1 connection: registry.npmjs.org:443 resolves to 10.1.2.3 (private), which is "
	   "refused (add --map-host registry.npmjs.org=ADDR to allow that address)",
	   "a refused address, with --map-host");
	/* a reason that does not start with the host is kept whole; IPv6 in brackets */
	struct net_count d[] = {
		{(char *)"2001:db8::1", 8080, 1,
		 (char *)"[2001:db8::1]:8080: port 8080 is not allowed for [2001:db8::1] (add "
			 "--allow-domain [2001:db8::1]:8080)"},
		{(char *)"leak.example", 0, 2,
		 (char *)"leak.example:443 is not on the allow list (add --allow-domain "
			 "leak.example)"},
		{(char *)"x", 80, 1, (char *)"bad request: no Host"},
	};
	is(netfmt_denied_line(d, 2, 1, 2, 0, NULL),
	   "denied 1 connection and 2 name lookups: [2001:db8::1]:8080: port 8080 is not allowed "
	   "for [2001:db8::1] (add --allow-domain [2001:db8::1]:8080); leak.example (dns) ×2 is "
	   "not on the allow list (add --allow-domain leak.example)",
	   "lookups apart, IPv6");
	is(netfmt_denied_line(d + 2, 1, 1, 0, 0, NULL), "denied 1 connection: x:80 bad request: no Host",
	   "other words");
	/* more denied than listed (the sink keeps a bounded table) */
	is(netfmt_denied_line(v + 2, 1, 10, 0, 0, NULL),
	   "denied 10 connections: third.example:443; and 9 more", "unlisted");
	/* malformed DNS requests: counted apart, never listed (they have no name) */
	is(netfmt_denied_line(d + 1, 1, 0, 2, 1, NULL),
	   "denied 2 name lookups and 1 malformed DNS request: leak.example (dns) ×2 is not on "
	   "the allow list (add --allow-domain leak.example)",
	   "malformed apart");
	is(netfmt_denied_line(d + 1, 1, 1, 2, 3, NULL),
	   "denied 1 connection, 2 name lookups and 3 malformed DNS requests: leak.example (dns) "
	   "×2 is not on the allow list (add --allow-domain leak.example); and 1 more",
	   "three kinds");
	is(netfmt_denied_line(NULL, 0, 0, 0, 4, NULL), "denied 4 malformed DNS requests", "alone");
	/* a hostile host name or reason cannot break the line or the terminal */
	struct net_count bad[] = {{(char *)"x\n\x1b]0;pwned\x07y", 80, 1,
				   (char *)"x\n\x1b]0;pwned\x07y:80 is \x1b[2Jbad\r\n"}};
	char *l = netfmt_denied_line(bad, 1, 1, 0, 0, NULL);
	assert_null(strpbrk(l, "\n\r\x1b\x07"));
	assert_non_null(strstr(l, "x??]0;pwned?y:80"));
	free(l);
}

static void net_failed_line(void **state)
{
	(void)state;
	struct net_count f[] = {
		{(char *)"pypi.org", 443, 7, (char *)"could not resolve: Domain name not found"},
		{(char *)"files.pythonhosted.org", 443, 2, (char *)"connect: Connection refused"},
		{(char *)"third.example", 443, 1, (char *)"connect: timeout"},
	};
	is(netfmt_failed_line(f, 1, 7, 7, NULL),
	   "7 allowed, 7 failed upstream: pypi.org:443 ×7 could not resolve: Domain name not found",
	   "the issue's example");
	is(netfmt_failed_line(f, 3, 12, 10, "agentjail log 1234abcd"),
	   "12 allowed, 10 failed upstream: pypi.org:443 ×7 could not resolve: Domain name not "
	   "found; files.pythonhosted.org:443 ×2 connect: Connection refused; and 1 more "
	   "(agentjail log 1234abcd)",
	   "the first two, and N more");
	is(netfmt_failed_line(f, 1, 7, 0, NULL), "", "none failed");
}

static void net_summary_and_cell(void **state)
{
	(void)state;
	struct net_count v[] = {
		{(char *)"evil.example", 443, 2, NULL},
		{(char *)"other.example", 80, 1, NULL},
	};
	struct net_count f[] = {
		{(char *)"pypi.org", 443, 2, (char *)"could not resolve: Domain name not found"},
	};
	is(netfmt_summary(12, 0, 3, NULL, 0, v, 2, 0),
	   "12 allowed, 3 denied (evil.example:443 ×2, other.example:80)", "summary");
	is(netfmt_summary(12, 0, 0, NULL, 0, NULL, 0, 0), "12 allowed, 0 denied", "no denial");
	is(netfmt_summary(0, 0, 0, NULL, 0, NULL, 0, 0), "none", "none");
	is(netfmt_summary(1, 0, 5, NULL, 0, v, 2, 0),
	   "1 allowed, 5 denied (evil.example:443 ×2, other.example:80, … 2 more)", "top only");
	is(netfmt_summary(12, 2, 3, f, 1, v, 2, 0),
	   "12 allowed, 2 failed upstream (pypi.org:443 ×2 could not resolve: Domain name not "
	   "found), 3 denied (evil.example:443 ×2, other.example:80)",
	   "failed apart");
	is(netfmt_summary(7, 7, 0, f, 1, NULL, 0, 0),
	   "7 allowed, 7 failed upstream (pypi.org:443 ×2 could not resolve: Domain name not "
	   "found; … 5 more), 0 denied",
	   "failed, partly listed");
	char *s = netfmt_summary(1, 0, 3, NULL, 0, v, 2, 40);
	assert_true(fmt_width(s) <= 40);
	free(s);
	is(netfmt_cell(0, 0, 0), "-", "cell none");
	is(netfmt_cell(12, 0, 0), "12 ok", "cell ok");
	is(netfmt_cell(0, 0, 3), "3 denied", "cell denied");
	is(netfmt_cell(12, 0, 3), "12 ok, 3 denied", "cell both");
	is(netfmt_cell(7, 7, 0), "7 failed", "cell: all allowed failed upstream (not 7 ok)");
	is(netfmt_cell(12, 2, 3), "10 ok, 2 failed, 3 denied", "cell: the three apart");
}

static void wrap(void **state)
{
	(void)state;
	is(fmt_wrap("one two three four", 0, 2), "  one two three four", "no width: one line");
	is(fmt_wrap("one two three four", 11, 2), "  one two\n  three\n  four", "at spaces");
	is(fmt_wrap("abcdefghij xy", 6, 2), "  abcd\n  efgh\n  ij\n  xy", "a long word broken");
	is(fmt_wrap("  a  b  ", 80, 0), "a  b", "outer spaces dropped");
	is(fmt_wrap("a\x1b[2Jb", 80, 0), "a?[2Jb", "cleaned");
	is(fmt_wrap("x y", 2, 4), "    x y", "no room: one line");
	/* every line fits, nothing is lost */
	const char *t = "localhost:443 resolves to 127.0.0.1 (loopback), which is refused (add "
			"--map-host localhost=ADDR to allow that address)";
	char *w = fmt_wrap(t, 30, 4);
	size_t words = 0;
	for (char *save = NULL, *line = strtok_r(w, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		assert_true(fmt_width(line) <= 30);
		assert_true(!strncmp(line, "    ", 4));
		for (char *c = line; *c; c++)
			words += c[0] != ' ' && (c == line || c[-1] == ' ');
	}
	assert_int_equal(words, 15);
	free(w);
}

static void net_log_lines(void **state)
{
	(void)state;
	struct net_event ev = {
		.at_ms = 1709647402000LL, .proto = NP_CONNECT, .host = "api.example.com",
		.port = 443, .allowed = true, .rule = "*.example.com", .addr = "203.0.113.7",
		.bytes_up = 1234, .bytes_down = 5872026, .dur_ms = 4200,
	};
	is(netfmt_log_header(0),
	   "TIME                 PROTO    ACTION  HOST                              ADDR         "
	   "       UP   DOWN   TOOK  RULE / REASON",
	   "header");
	is(netfmt_log_line(&ev, 0, 0),
	   "2024-03-05 14:03:22  connect  ALLOW   api.example.com:443               203.0.113.7  "
	   "     1.2K   5.6M   4.2s  *.example.com",
	   "allowed");
	struct net_event d = {
		.at_ms = 1709647402000LL, .proto = NP_DNS, .host = "evil.example",
		.rule = "evil.example is not allowed: --allow-domain evil.example would allow it",
	};
	is(netfmt_log_line(&d, 3600, 0),
	   "2024-03-05 15:03:22  dns      DENY    evil.example (dns)                -            "
	   "        0      0   0.0s  evil.example is not allowed: --allow-domain evil.example "
	   "would allow it",
	   "denied, local time");
	struct net_event f = ev;
	snprintf(f.error, sizeof f.error, "connect: Connection refused");
	char *l = netfmt_log_line(&f, 0, 0);
	assert_non_null(strstr(l, "*.example.com — error: connect: Connection refused"));
	free(l);
	/* narrow: the columns cut to the width, the reason whole on lines of its own */
	l = netfmt_log_line(&d, 0, 60);
	char *nl = strchr(l, '\n');
	assert_non_null(nl);
	*nl = '\0';
	assert_int_equal(fmt_width(l), 60);
	assert_non_null(strstr(nl + 1, "    evil.example is not allowed: --allow-domain"));
	assert_non_null(strstr(nl + 1, "would allow it"));
	free(l);
	/* allowed, but the upstream failed */
	struct net_event x = ev;
	x.failed = true;
	x.addr[0] = '\0';
	snprintf(x.error, sizeof x.error, "could not resolve: Domain name not found");
	l = netfmt_log_line(&x, 0, 0);
	assert_non_null(strstr(l, "  FAIL    api.example.com:443"));
	free(l);
	snprintf(f.rule, sizeof f.rule, "\x1b[31mred\r\n");
	l = netfmt_log_line(&f, 0, 0);
	assert_null(strchr(l, '\x1b'));
	assert_null(strchr(l, '\n'));
	assert_null(strchr(l, '\r'));
	free(l);

	struct event v = {.at_ms = 1709647402000LL, .kind = (char *)"violation.protected_path",
			  .detail_json = (char *)"{\"path\":\"/w/.git/hooks/pre-commit\","
						 "\"what\":\"created\",\"moved_to\":\"/q/1\"}"};
	is(netfmt_log_violation(&v, 0, 0),
	   "2024-03-05 14:03:22  -        VIOL    -                                 -                "
	   "    -      -      -  violation.protected_path /w/.git/hooks/pre-commit: created (moved "
	   "to /q/1)",
	   "violation: its text under RULE / REASON");
	/* narrow: the columns, then the text on lines of its own, whole */
	char *vn = netfmt_log_violation(&v, 0, 100);
	assert_non_null(strstr(vn, "VIOL    -  "));
	assert_non_null(strstr(vn, "\n    violation.protected_path /w/"));
	assert_non_null(strstr(vn, "/w/.git/hooks/pre-commit"));
	assert_non_null(strstr(vn, "/q/1)"));
	for (char *p = vn, *e; p; p = e ? e + 1 : NULL) {
		e = strchr(p, '\n');
		char *one = e ? strndup(p, (size_t)(e - p)) : strdup(p);
		assert_true(fmt_width(one) <= 100);
		free(one);
	}
	free(vn);
}

/* NET appears in the listing only when a session has network decisions. */
static void sessions_net_column(void **state)
{
	(void)state;
	const long long now = 1709647402000LL;
	static const char *const a[] = {"claude", NULL};
	struct session v[2];
	mk(&v[0], "3f2a9c1e-0000-4000-8000-000000000001", now - 42 * SEC, now, SESS_EXITED, 0,
	   "{\"fs\":\"workspace-write\",\"net\":\"allow\",\"allow_domains\":[\"a\"]}", "claude",
	   "/w", a);
	mk(&v[1], "4f2a9c1e-0000-4000-8000-000000000001", now - 42 * SEC, now, SESS_EXITED, 0,
	   "{\"fs\":\"workspace-write\",\"net\":\"off\"}", "claude", "/w", a);
	struct sessfmt_opts o = {.now_ms = now};
	char *t = sessfmt_sessions(v, 2, &o);
	assert_null(strstr(t, "NET"));
	free(t);
	v[0].n_net_allowed = 12;
	v[0].n_net_denied = 3;
	is(sessfmt_sessions(v, 2, &o),
	   "ID        STARTED  TOOK  STATUS    POLICY       NET              PROFILE  COMMAND\n"
	   "3f2a9c1e  42s ago   42s  exited 0  rw·allow(1)  12 ok, 3 denied  claude   claude\n"
	   "4f2a9c1e  42s ago   42s  exited 0  rw·off       -                claude   claude\n",
	   "NET column");
	session_free(&v[0]);
	session_free(&v[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ago),		   cmocka_unit_test(durations),
		cmocka_unit_test(took_of_resumed),
		cmocka_unit_test(policies),	   cmocka_unit_test(statuses),
		cmocka_unit_test(clean_and_width), cmocka_unit_test(cut),
		cmocka_unit_test(argv_line),	   cmocka_unit_test(id_prefixes),
		cmocka_unit_test(tables),	   cmocka_unit_test(sessions_listing),
		cmocka_unit_test(net_hostports_and_bytes),
		cmocka_unit_test(net_denied_line),
		cmocka_unit_test(net_failed_line),
		cmocka_unit_test(wrap),
		cmocka_unit_test(net_summary_and_cell),
		cmocka_unit_test(net_log_lines),
		cmocka_unit_test(sessions_net_column),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
