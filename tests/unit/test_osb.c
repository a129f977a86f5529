/* The opensandbox backend's pure parts (doc/design.md §4b): the command-stream parser (bare JSON
 * and `data:` lines, events split at every byte, pings, both end events, overlong lines), exit
 * statuses, the policy → service mapping and its refusals, the [opensandbox] settings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/remote/osb_plan.h"
#include "core/backend/remote/osb_stream.h"
#include "util/strbuf.h"

struct seen {
	struct strbuf b;
	int ends;
};

static int on_ev(void *arg, const struct osb_event *ev)
{
	struct seen *s = arg;
	sb_addf(&s->b, "%s", ev->type_name);
	if (ev->text)
		sb_addf(&s->b, "=%s", ev->text);
	if (ev->evalue)
		sb_addf(&s->b, "(%s:%s)", ev->ename ? ev->ename : "", ev->evalue);
	sb_add(&s->b, "|");
	if (ev->type == OSB_EV_COMPLETE || ev->type == OSB_EV_ERROR)
		s->ends++;
	return 0;
}

/* The whole input, cut into pieces of `step` bytes (0: one piece). */
static char *parse_all(const char *in, size_t step)
{
	struct osb_stream st;
	osb_stream_init(&st);
	struct seen s = {STRBUF_INIT, 0};
	struct err e = {0};
	size_t n = strlen(in);
	for (size_t off = 0; off < n;) {
		size_t k = step && n - off > step ? step : n - off;
		char *piece = malloc(k); /* exact size: ASan sees a read past it */
		memcpy(piece, in + off, k);
		assert_int_equal(osb_stream_feed(&st, piece, k, on_ev, &s, &e), 0);
		free(piece);
		off += k;
	}
	assert_int_equal(osb_stream_finish(&st, on_ev, &s, &e), 0);
	osb_stream_free(&st);
	sb_add(&s.b, "");
	return sb_steal(&s.b);
}

static const char stream_bare[] =
	"{\"type\":\"init\",\"text\":\"c1\",\"timestamp\":1}\n\n"
	"{\"type\":\"stdout\",\"text\":\"hi \\u00e9\",\"timestamp\":2}\n\n"
	"{\"type\":\"stdout\",\"text\":\"\\n\",\"timestamp\":3}\n\n"
	"{\"type\":\"ping\",\"text\":\"pong\"}\n\n"
	"{\"type\":\"stderr\",\"text\":\"oops\"}\n\n"
	"{\"type\":\"error\",\"error\":{\"ename\":\"CommandExecError\",\"evalue\":\"3\","
	"\"traceback\":[]}}\n\n";
static const char expect[] =
	"init=c1|stdout=hi \xc3\xa9|stdout=\n|ping=pong|stderr=oops|error(CommandExecError:3)|";

static void stream_every_split(void **state)
{
	(void)state;
	for (size_t step = 0; step < 40; step++) {
		char *got = parse_all(stream_bare, step);
		assert_string_equal(got, expect);
		free(got);
	}
}

static void stream_data_lines(void **state)
{
	(void)state;
	char *got = parse_all(": comment\r\nevent: message\r\nid: 7\r\n"
			      "data: {\"type\":\"init\",\"text\":\"c2\"}\r\n\r\n"
			      "data:{\"type\":\"execution_complete\",\"execution_time\":5}\n\n"
			      "not json\n{\"no\":\"type\"}\n[1,2]\n"
			      "{\"type\":\"stdout\",\"text\":\"last, no newline\"}",
			      3);
	assert_string_equal(got, "init=c2|execution_complete|stdout=last, no newline|");
	free(got);
}

static void stream_overlong(void **state)
{
	(void)state;
	struct osb_stream st;
	osb_stream_init(&st);
	struct seen s = {STRBUF_INIT, 0};
	struct err e = {0};
	size_t n = 1 << 20;
	char *big = malloc(n);
	memset(big, 'a', n);
	int rc = 0;
	for (int i = 0; i < 9 && rc == 0; i++)
		rc = osb_stream_feed(&st, big, n, on_ev, &s, &e);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(e.what, "longer than"));
	free(big);
	sb_free(&s.b);
	osb_stream_free(&st);
}

static void exit_statuses(void **state)
{
	(void)state;
	char *why = NULL;
	struct osb_event ok = {.type = OSB_EV_COMPLETE};
	assert_int_equal(osb_exit_status(&ok, &why), 0);
	assert_null(why);
	struct osb_event e3 = {.type = OSB_EV_ERROR, .ename = "CommandExecError", .evalue = "3"};
	assert_int_equal(osb_exit_status(&e3, &why), 3);
	assert_null(why);
	struct osb_event sig = {.type = OSB_EV_ERROR, .ename = "CommandExecError", .evalue = "130"};
	assert_int_equal(osb_exit_status(&sig, &why), 130);
	struct osb_event killed = {.type = OSB_EV_ERROR, .ename = "CommandExecError", .evalue = "-1"};
	assert_int_equal(osb_exit_status(&killed, &why), 137);
	assert_non_null(strstr(why, "-1"));
	free(why);
	struct osb_event never = {.type = OSB_EV_ERROR, .ename = "CommandExecError",
				  .evalue = "exec: \"nope\": not found"};
	assert_int_equal(osb_exit_status(&never, &why), 127);
	assert_non_null(strstr(why, "not found"));
	free(why);
	struct osb_event big = {.type = OSB_EV_ERROR, .ename = "CommandExecError", .evalue = "300"};
	assert_int_equal(osb_exit_status(&big, &why), 127);
	free(why);
}

static void settings(struct osb_settings *s)
{
	const char *vals[OK__N] = {0};
	vals[OK_URL] = "http://svc:8080/v1/";
	vals[OK_CPU] = "500m";
	vals[OK_MEMORY] = "512Mi";
	struct err e = {0};
	assert_int_equal(osb_settings_from(vals, s, &e), 0);
}

static void policy_base(struct policy *p)
{
	policy_init(p);
	p->fs = FS_WORKSPACE_WRITE;
	p->workspace = strdup("/home/u/proj");
}

static void create_bodies(void **state)
{
	(void)state;
	struct osb_settings s;
	settings(&s);
	assert_string_equal(s.url, "http://svc:8080");
	assert_string_equal(s.api_key_env, "OPEN_SANDBOX_API_KEY");
	char *u = osb_api_url(&s, "/sandboxes");
	assert_string_equal(u, "http://svc:8080/v1/sandboxes");
	free(u);
	struct policy p;
	policy_base(&p);
	struct err e = {0};
	char *b = osb_create_body(&s, &p, "S1", &e);
	assert_string_equal(b, "{\"image\":{\"uri\":\"debian:12\"},\"entrypoint\":[\"sleep\","
			       "\"infinity\"],\"timeout\":3600,\"resourceLimits\":{\"cpu\":\"500m\","
			       "\"memory\":\"512Mi\"},\"metadata\":{\"agentjail.workspace\":\"proj\","
			       "\"agentjail.session\":\"S1\"},\"networkPolicy\":{\"defaultAction\":"
			       "\"deny\",\"egress\":[]}}");
	free(b);
	p.net = NET_ON;
	b = osb_create_body(&s, &p, NULL, &e);
	assert_non_null(strstr(b, "\"networkPolicy\":{\"defaultAction\":\"allow\",\"egress\":[]}"));
	free(b);
	p.net = NET_ALLOW;
	strv_push(&p.allow_domains, "pypi.org");
	strv_push(&p.allow_domains, "*.pythonhosted.org");
	strv_push(&p.deny_domains, "evil.pypi.org");
	b = osb_create_body(&s, &p, NULL, &e);
	assert_non_null(strstr(b, "{\"defaultAction\":\"deny\",\"egress\":[{\"action\":\"deny\","
				  "\"target\":\"evil.pypi.org\"},{\"action\":\"allow\",\"target\":"
				  "\"pypi.org\"},{\"action\":\"allow\",\"target\":"
				  "\"*.pythonhosted.org\"}]}"));
	free(b);
	assert_true(osb_sync_back(&p));
	p.fs = FS_READ_ONLY;
	assert_false(osb_sync_back(&p));
	policy_free(&p);
	osb_settings_free(&s);
}

/* CreateSandboxRequest requires timeout and resourceLimits (issue 24 item 15): the README's
 * configuration (no cpu, memory, timeout) and timeout = 0 still send both. */
static void spec_required(void **state)
{
	(void)state;
	const char *vals[OK__N] = {0};
	vals[OK_URL] = "http://svc:8080";
	struct osb_settings s;
	struct err e = {0};
	assert_int_equal(osb_settings_from(vals, &s, &e), 0);
	struct policy p;
	policy_base(&p);
	char *b = osb_create_body(&s, &p, NULL, &e);
	assert_non_null(strstr(b, "\"timeout\":3600,\"resourceLimits\":{\"cpu\":\"1\","
				  "\"memory\":\"2Gi\"}"));
	free(b);
	assert_null(osb_timeout_note(&s));
	osb_settings_free(&s);
	vals[OK_TIMEOUT] = "0";
	vals[OK_MEMORY] = "4Gi";
	assert_int_equal(osb_settings_from(vals, &s, &e), 0);
	b = osb_create_body(&s, &p, NULL, &e);
	assert_non_null(strstr(b, "\"timeout\":86400,\"resourceLimits\":{\"cpu\":\"1\","
				  "\"memory\":\"4Gi\"}"));
	assert_null(strstr(b, "null"));
	free(b);
	char *note = osb_timeout_note(&s);
	assert_non_null(note);
	assert_non_null(strstr(note, "timeout = 0"));
	assert_non_null(strstr(note, "86400"));
	free(note);
	osb_settings_free(&s);
	assert_int_equal(osb_key_check(OK_TIMEOUT, "86400", &e), 0);
	assert_int_equal(osb_key_check(OK_TIMEOUT, "86401", &e), -1);
	assert_non_null(strstr(e.what, "86400"));
	policy_free(&p);
}

static void refusals(void **state)
{
	(void)state;
	struct { const char *flag, *path; } cases[] = {
		{"--rw", "/etc"}, {"--ro", "/home/u/other"}, {"--dev", "/dev/kvm"},
		{"--allow-domain", "pypi.org:8443"}, {"--allow-domain", "10.0.0.1"},
		{"--hide", "/home/u/proj/secret"}, {"--map-host", "a=127.0.0.1"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct policy p;
		policy_base(&p);
		struct strv *v = !strcmp(cases[i].flag, "--rw")	  ? &p.rw
				 : !strcmp(cases[i].flag, "--ro")	  ? &p.ro
				 : !strcmp(cases[i].flag, "--dev")	  ? &p.dev
				 : !strcmp(cases[i].flag, "--hide")	  ? &p.hide
				 : !strcmp(cases[i].flag, "--map-host") ? &p.map_hosts
									  : &p.allow_domains;
		if (v == &p.allow_domains)
			p.net = NET_ALLOW;
		strv_push(v, cases[i].path);
		struct err e = {0};
		assert_int_equal(osb_policy_check(&p, &e), -1);
		assert_non_null(strstr(e.what, cases[i].flag));
		assert_non_null(strstr(e.what, "--backend opensandbox"));
		assert_true(e.hint[0] != '\0'); /* the reason */
		policy_free(&p);
	}
	struct policy p;
	policy_base(&p);
	strv_push(&p.rw, "/home/u/proj/build"); /* inside the workspace: fine */
	struct err e = {0};
	assert_int_equal(osb_policy_check(&p, &e), 0);
	p.fs = FS_DANGER_FULL;
	assert_int_equal(osb_policy_check(&p, &e), -1);
	p.fs = FS_WORKSPACE_WRITE;
	/* the persisted home is this host's: only a local jail mounts it */
	p.home = HOME_PERSIST;
	assert_int_equal(osb_policy_check(&p, &e), -1);
	assert_non_null(strstr(e.what, "--home persist cannot be used with --backend opensandbox"));
	assert_non_null(strstr(e.hint, "--backend local"));
	p.home = HOME_TMP;
	/* --net ask: the service's egress policy is made once, and nobody is asked */
	p.net = NET_ALLOW;
	p.ask = true;
	assert_int_equal(osb_policy_check(&p, &e), -1);
	assert_non_null(strstr(e.what, "--net ask cannot be used with --backend opensandbox"));
	p.ask = false;
	/* --publish: no way back to this host */
	strv_push(&p.publish, "3000");
	assert_int_equal(osb_policy_check(&p, &e), -1);
	assert_non_null(strstr(e.what, "--publish cannot be used with --backend opensandbox"));
	policy_free(&p);
}

static void keys(void **state)
{
	(void)state;
	struct err e = {0};
	assert_int_equal(osb_key_check(OK_URL, "https://sb.example.com/prefix", &e), 0);
	assert_int_equal(osb_key_check(OK_URL, "ftp://x", &e), -1);
	assert_int_equal(osb_key_check(OK_URL, "http://user:pw@x", &e), -1);
	assert_int_equal(osb_key_check(OK_URL, "http://", &e), -1);
	assert_int_equal(osb_key_check(OK_API_KEY_ENV, "MY_KEY", &e), 0);
	assert_int_equal(osb_key_check(OK_API_KEY_ENV, "sk-12345", &e), -1); /* a key, not a name */
	assert_int_equal(osb_key_check(OK_CPU, "0.5", &e), 0);
	assert_int_equal(osb_key_check(OK_CPU, "2x", &e), -1);
	assert_int_equal(osb_key_check(OK_MEMORY, "2Gi", &e), 0);
	assert_int_equal(osb_key_check(OK_TIMEOUT, "30", &e), -1);
	assert_int_equal(osb_key_check(OK_TIMEOUT, "0", &e), 0);
	assert_int_equal(osb_key_check(OK_WORKDIR, "/", &e), -1);
	assert_int_equal(osb_key_check(OK_SYNC_MAX, "2G", &e), 0);
	const char *vals[OK__N] = {0};
	assert_int_equal(osb_settings_from(vals, &(struct osb_settings){0}, &e), -1);
	assert_non_null(strstr(e.what, "URL"));
	assert_true(osb_id_ok("3f1c2a9e-8b7d-4c1e-9f00-123456789abc"));
	const char *bad_ids[] = {"", ".", "..", "a/b", "a?b", "a b", "x\033[2J", "a%2f", "a\nb", NULL};
	for (const char *const *id = bad_ids; *id; id++)
		assert_false(osb_id_ok(*id));
	char long_id[130];
	memset(long_id, 'a', sizeof long_id - 1);
	long_id[129] = '\0';
	assert_false(osb_id_ok(long_id));
	long_id[128] = '\0';
	assert_true(osb_id_ok(long_id));
	enum backend_id b;
	assert_int_equal(backend_parse("opensandbox", &b), 0);
	assert_int_equal(b, BACKEND_OPENSANDBOX);
	assert_int_equal(backend_parse("docker", &b), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stream_every_split), cmocka_unit_test(stream_data_lines),
		cmocka_unit_test(stream_overlong),    cmocka_unit_test(exit_statuses),
		cmocka_unit_test(create_bodies),      cmocka_unit_test(spec_required),
		cmocka_unit_test(refusals),
		cmocka_unit_test(keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
