/* Tests for core/plan/publish: the entries of --publish and `publish`, a list's checks, and
 * how the policy, the configuration and init's command line carry them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/plan/initargs.h"
#include "core/plan/policy.h"
#include "core/plan/publish.h"

static void parse_ok(const char *spec, unsigned host_port, unsigned port)
{
	struct publish p;
	struct err e = {0};
	if (publish_parse(spec, &p, &e) < 0)
		fail_msg("%s refused: %s", spec, e.what);
	assert_int_equal(p.host_port, host_port);
	assert_int_equal(p.port, port);
	char back[16];
	publish_format(&p, back, sizeof back);
	assert_string_equal(back, spec);
}

static void parse_bad(const char *spec)
{
	struct publish p;
	struct err e = {0};
	if (publish_parse(spec, &p, &e) == 0)
		fail_msg("%s accepted", spec);
	assert_string_equal(e.path, spec);
	assert_non_null(strstr(e.what, "[HOSTPORT:]PORT"));
}

static void entries(void **state)
{
	(void)state;
	parse_ok("3000", 3000, 3000);
	parse_ok("8080:3000", 8080, 3000);
	parse_ok("1:65535", 1, 65535);
	parse_bad("");
	parse_bad("0");
	parse_bad("65536");
	parse_bad("8080:");
	parse_bad(":3000");
	parse_bad("8080:3000:1");
	parse_bad("127.0.0.1:8080:3000"); /* the host side is 127.0.0.1, never another */
	parse_bad("0.0.0.0:3000");
	parse_bad("+3000");
	parse_bad("-1");
	parse_bad(" 3000");
	parse_bad("3000 ");
	parse_bad("123456");
	parse_bad("30x0");
	parse_bad("[::1]:3000");
}

static void lists(void **state)
{
	(void)state;
	struct strv v = STRV_INIT;
	struct publish *p = NULL;
	size_t n = 9;
	struct err e = {0};
	assert_int_equal(publish_list(&v, &p, &n, &e), 0);
	assert_null(p);
	assert_int_equal(n, 0);
	strv_push(&v, "3000");
	strv_push(&v, "8080:3000"); /* one jail port on two host ports */
	strv_push(&v, "5173");
	assert_int_equal(publish_list(&v, &p, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_int_equal(p[1].host_port, 8080);
	assert_int_equal(p[2].port, 5173);
	free(p);
	strv_push(&v, "3000:4000"); /* host port 3000 again */
	assert_int_equal(publish_list(&v, &p, &n, &e), -1);
	assert_null(p);
	assert_string_equal(e.path, "3000:4000");
	assert_non_null(strstr(e.what, "host port 3000 is given twice"));
	strv_free(&v);
	for (int i = 0; i <= PUBLISH_MAX; i++)
		strv_pushf(&v, "%d", 10000 + i);
	assert_int_equal(publish_list(&v, &p, &n, &e), -1);
	assert_non_null(strstr(e.what, "more than"));
	strv_free(&v);
}

/* run_parse_args over a NULL-terminated argv */
static int parse(char **argv, struct run_request *r, struct err *e)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	struct parse_ctx ctx = {.cwd = "/w", .home = "/h"};
	return run_parse_args(argc, argv, &ctx, r, e);
}

static void policy_flags(void **state)
{
	(void)state;
	struct run_request r;
	struct err e = {0};
	char *twice[] = {"--publish", "8080:3000", "--publish=5173", "--publish", "5173", "--",
			 "true", NULL};
	assert_int_equal(parse(twice, &r, &e), 0);
	assert_int_equal(r.pol.publish.n, 2); /* given twice, kept once */
	assert_int_equal(policy_validate(&r.pol, "/h", &e), 0);
	char *js = policy_to_json(&r.pol);
	assert_non_null(strstr(js, "\"publish\":[\"8080:3000\",\"5173\"]"));
	struct policy back;
	assert_int_equal(policy_from_json(js, &back, &e), 0);
	assert_int_equal(back.publish.n, 2);
	assert_string_equal(back.publish.v[0], "8080:3000");
	policy_free(&back);
	free(js);
	run_request_free(&r);

	char *bad[] = {"--publish", "8080:", "--", "true", NULL};
	assert_int_equal(parse(bad, &r, &e), -1);
	assert_non_null(strstr(e.what, "[HOSTPORT:]PORT"));
	run_request_free(&r);

	/* under --net on the jail's servers are on the host's loopback already: refused */
	char *on[] = {"--net", "on", "--publish", "3000", "--", "true", NULL};
	assert_int_equal(parse(on, &r, &e), 0);
	assert_int_equal(policy_validate(&r.pol, "/h", &e), -1);
	assert_non_null(strstr(e.what, "shares the host's network"));
	run_request_free(&r);
}

/* The configuration's entries are dropped under --net on (they serve off and allow). */
static void config_dropped_under_on(void **state)
{
	(void)state;
	struct policy base;
	policy_init(&base);
	strv_push(&base.publish, "3000");
	struct parse_ctx ctx = {.cwd = "/w", .home = "/h", .base = &base};
	char *argv[] = {"--net", "on", "true"};
	struct run_request r;
	struct err e = {0};
	assert_int_equal(run_parse_args(3, argv, &ctx, &r, &e), 0);
	assert_int_equal(r.pol.publish.n, 0);
	assert_int_equal(policy_validate(&r.pol, "/h", &e), 0);
	run_request_free(&r);
	char *argv2[] = {"true"};
	assert_int_equal(run_parse_args(1, argv2, &ctx, &r, &e), 0);
	assert_int_equal(r.pol.publish.n, 1);
	run_request_free(&r);
	policy_free(&base);
}

/* init's command line carries the jail ports, and reads them back. */
static void init_args(void **state)
{
	(void)state;
	struct init_args a = {.ctl = 3, .publish = STRV_INIT};
	strv_push(&a.publish, "3000");
	strv_push(&a.publish, "5173");
	struct strv out = STRV_INIT;
	initargs_build(&a, &out);
	strv_push(&out, "true");
	initargs_free(&a);
	struct strv argv = STRV_INIT;
	strv_push(&argv, "agentjail-init");
	strv_copy(&argv, &out);
	struct init_args b;
	assert_int_equal(initargs_parse((int)argv.n, argv.v, &b), 0);
	assert_int_equal(b.publish.n, 2);
	assert_string_equal(b.publish.v[1], "5173");
	assert_string_equal(b.cmd[0], "true");
	initargs_free(&b);
	strv_free(&argv);
	strv_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(entries),
		cmocka_unit_test(lists),
		cmocka_unit_test(policy_flags),
		cmocka_unit_test(config_dropped_under_on),
		cmocka_unit_test(init_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
