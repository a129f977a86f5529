/* Policy parsing and validation, path handling, the environment rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/policy.h"
#include "util/path.h"
#include "util/strbuf.h"

static int parse(struct run_request *r, const char *cwd, const char *home, const char *const *args,
		 struct err *e)
{
	int n = 0;
	while (args[n])
		n++;
	struct parse_ctx ctx = {.cwd = cwd, .home = home};
	int rc = run_parse_args(n, (char **)args, &ctx, r, e);
	if (rc == 0)
		rc = policy_validate(&r->pol, home, e);
	return rc;
}

static void defaults(void **state)
{
	(void)state;
	struct run_request r;
	struct err e = {0};
	const char *a[] = {"--", "ls", "-l", NULL};
	assert_int_equal(parse(&r, "/home/u/proj", "/home/u", a, &e), 0);
	assert_int_equal(r.pol.fs, FS_WORKSPACE_WRITE);
	assert_int_equal(r.pol.net, NET_OFF);
	assert_string_equal(r.pol.workspace, "/home/u/proj");
	assert_false(r.pol.workspace_explicit);
	assert_int_equal(r.cmd.n, 2);
	assert_string_equal(r.cmd.v[1], "-l");
	assert_false(r.quiet);
	run_request_free(&r);
	/* --quiet: a run option (no start and end lines), not part of the policy */
	const char *q[] = {"--quiet", "--", "ls", NULL};
	assert_int_equal(parse(&r, "/home/u/proj", "/home/u", q, &e), 0);
	assert_true(r.quiet);
	assert_int_equal(r.cmd.n, 1);
	assert_int_equal(policy_opt_arity("--quiet"), 0);
	assert_int_equal(policy_opt_arity("--quiet=1"), -1);
	run_request_free(&r);
}

static void modes_and_aliases(void **state)
{
	(void)state;
	static const struct {
		const char *fs, *net;
		enum fs_mode f;
		enum net_mode n;
	} t[] = {{"ro", "off", FS_READ_ONLY, NET_OFF},
		 {"read-only", "on", FS_READ_ONLY, NET_ON},
		 {"rw", "on", FS_WORKSPACE_WRITE, NET_ON},
		 {"workspace-write", "off", FS_WORKSPACE_WRITE, NET_OFF},
		 {"full", "on", FS_DANGER_FULL, NET_ON},
		 {"danger-full-access", "on", FS_DANGER_FULL, NET_ON}};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		struct run_request r;
		struct err e = {0};
		const char *a[] = {"--fs", t[i].fs, "--net", t[i].net, "true", NULL};
		assert_int_equal(parse(&r, "/w", "/home/u", a, &e), 0);
		assert_int_equal(r.pol.fs, t[i].f);
		assert_int_equal(r.pol.net, t[i].n);
		run_request_free(&r);
	}
	/* --opt=value form */
	struct run_request r;
	struct err e = {0};
	const char *a[] = {"--fs=ro", "--net=on", "true", NULL};
	assert_int_equal(parse(&r, "/w", "/home/u", a, &e), 0);
	assert_int_equal(r.pol.fs, FS_READ_ONLY);
	run_request_free(&r);
}

static void expect_reject(const char *cwd, const char *home, const char *const *a,
			  const char *needle)
{
	struct run_request r;
	struct err e = {0};
	assert_int_equal(parse(&r, cwd, home, a, &e), -1);
	char buf[4096];
	err_format(&e, buf, sizeof buf);
	if (!strstr(buf, needle))
		fail_msg("error `%s` does not mention `%s`", buf, needle);
	run_request_free(&r);
}

static void rejections(void **state)
{
	(void)state;
	const char *a1[] = {"--fs", "bogus", "true", NULL};
	expect_reject("/w", "/home/u", a1, "bogus");
	const char *a2[] = {"--net", "maybe", "true", NULL};
	expect_reject("/w", "/home/u", a2, "maybe");
	const char *a3[] = {"--fs", "full", "--net", "off", "true", NULL};
	expect_reject("/w", "/home/u", a3, "danger-full-access");
	const char *a4[] = {"--frobnicate", "true", NULL};
	expect_reject("/w", "/home/u", a4, "--frobnicate");
	const char *a5[] = {"--fs", NULL};
	expect_reject("/w", "/home/u", a5, "needs a value");
	const char *a6[] = {"--fs", "ro", NULL};
	expect_reject("/w", "/home/u", a6, "no command");
	const char *a7[] = {"--env", "LD_PRELOAD=/x.so", "true", NULL};
	expect_reject("/w", "/home/u", a7, "LD_PRELOAD");
	const char *a8[] = {"--env", "SSH_AUTH_SOCK", "true", NULL};
	expect_reject("/w", "/home/u", a8, "SSH_AUTH_SOCK");
	const char *a9[] = {"--env", "BAD-NAME=1", "true", NULL};
	expect_reject("/w", "/home/u", a9, "BAD-NAME");
	const char *a10[] = {"--rw", "/data", "--ro", "/data", "true", NULL};
	expect_reject("/w", "/home/u", a10, "contradictory");
	const char *a11[] = {"--rw", "/", "true", NULL};
	expect_reject("/w", "/home/u", a11, "root directory");
	const char *a12[] = {"--home", "keep", "true", NULL};
	expect_reject("/w", "/home/u", a12, "unknown home mode");
	/* no jail: its home is the real one, never a persisted jail home */
	const char *a13[] = {"--fs", "full", "--net", "on", "--home", "persist", "true", NULL};
	expect_reject("/w", "/home/u", a13, "its home is your real one");
}

/* --home tmp|persist (doc/design.md §3 step 5): the policy keeps it, and only persist is
 * written into the stored policy (a session stored before it existed reads as tmp). */
static void home_mode(void **state)
{
	(void)state;
	struct run_request r;
	struct err e = {0};
	const char *a[] = {"--home", "persist", "true", NULL};
	assert_int_equal(parse(&r, "/w", "/home/u", a, &e), 0);
	assert_int_equal(r.pol.home, HOME_PERSIST);
	char *pj = policy_to_json(&r.pol);
	assert_non_null(strstr(pj, "\"home\":\"persist\""));
	struct policy back;
	assert_int_equal(policy_from_json(pj, &back, &e), 0);
	assert_int_equal(back.home, HOME_PERSIST);
	policy_free(&back);
	free(pj);
	run_request_free(&r);
	const char *b[] = {"--home=tmp", "true", NULL};
	assert_int_equal(parse(&r, "/w", "/home/u", b, &e), 0);
	assert_int_equal(r.pol.home, HOME_TMP);
	pj = policy_to_json(&r.pol);
	assert_null(strstr(pj, "\"home\""));
	free(pj);
	run_request_free(&r);
	assert_int_equal(policy_opt_arity("--home"), 1);
	assert_int_equal(policy_from_json("{\"version\":1,\"fs\":\"read-only\",\"net\":\"off\","
					  "\"workspace\":\"/w\",\"home\":\"cloud\"}",
					  &back, &e),
			 -1);
	assert_non_null(strstr(e.what, "unknown home mode"));
	assert_string_equal(home_mode_name(HOME_PERSIST), "persist");
	assert_string_equal(home_mode_name(HOME_TMP), "tmp");
}

/* A mistyped option: the nearest one, or none when nothing is close (issue 26). */
static void suggestions(void **state)
{
	(void)state;
	static const char *const more[] = {"--backend", "--json", NULL};
	assert_string_equal(policy_opt_closest("--nett", NULL), "--net");
	assert_string_equal(policy_opt_closest("--allow-domian=x.org", NULL), "--allow-domain");
	assert_string_equal(policy_opt_closest("--dryrun", NULL), "--dry-run");
	assert_string_equal(policy_opt_closest("--backnd", more), "--backend");
	assert_string_equal(policy_opt_closest("--jsn", more), "--json");
	assert_null(policy_opt_closest("--backnd", NULL));
	assert_null(policy_opt_closest("--frobnicate", more));
	const char *a[] = {"--memroy", "4G", "true", NULL};
	expect_reject("/w", "/home/u", a, "did you mean --memory?");
}

/* --net allow: its lists, checked when parsed; what implies it; what contradicts it. */
static void net_allow(void **state)
{
	(void)state;
	struct run_request r;
	struct err e = {0};
	const char *a[] = {"--net", "allow", "true", NULL};
	assert_int_equal(parse(&r, "/w", "/home/u", a, &e), 0);
	assert_int_equal(r.pol.net, NET_ALLOW); /* nothing listed: everything refused */
	assert_int_equal(r.pol.allow_domains.n, 0);
	run_request_free(&r);
	const char *b[] = {"--allow-domain", "example.com", "--allow-domain=*.Example.org:8443",
			   "--deny-domain", "evil.example.org", "--map-host", "api.test=127.0.0.1",
			   "true", NULL};
	assert_int_equal(parse(&r, "/w", "/home/u", b, &e), 0);
	assert_int_equal(r.pol.net, NET_ALLOW); /* --allow-domain alone means allow */
	assert_int_equal(r.pol.allow_domains.n, 2);
	assert_string_equal(r.pol.allow_domains.v[1], "*.Example.org:8443"); /* as given */
	assert_string_equal(r.pol.deny_domains.v[0], "evil.example.org");
	assert_string_equal(r.pol.map_hosts.v[0], "api.test=127.0.0.1");
	run_request_free(&r);
	const char *c[] = {"--map-host", "api.test=::1", "--net", "allow", "true", NULL};
	assert_int_equal(parse(&r, "/w", "/home/u", c, &e), 0);
	assert_int_equal(r.pol.net, NET_ALLOW);
	run_request_free(&r);

	/* contradictions and bad entries: exit 2, naming the entry and what is wrong */
	const char *x1[] = {"--net", "on", "--allow-domain", "example.com", "true", NULL};
	expect_reject("/w", "/home/u", x1, "contradictory policy: --net on");
	const char *x2[] = {"--allow-domain", "example.com", "--net", "off", "true", NULL};
	expect_reject("/w", "/home/u", x2, "contradictory policy: --net off");
	const char *x3[] = {"--deny-domain", "x.example", "--net=on", "true", NULL};
	expect_reject("/w", "/home/u", x3, "contradictory");
	const char *x4[] = {"--map-host", "a.test=127.0.0.1", "--net", "off", "true", NULL};
	expect_reject("/w", "/home/u", x4, "contradictory");
	const char *x5[] = {"--allow-domain", "*.com", "true", NULL};
	expect_reject("/w", "/home/u", x5, "--allow-domain: a wildcard needs at least two labels");
	expect_reject("/w", "/home/u", x5, ": *.com");
	const char *x6[] = {"--allow-domain", "example.com:0", "true", NULL};
	expect_reject("/w", "/home/u", x6, "example.com:0");
	const char *x7[] = {"--deny-domain", "bad name", "true", NULL};
	expect_reject("/w", "/home/u", x7, "--deny-domain: host name with a character");
	const char *x8[] = {"--map-host", "api.test", "true", NULL};
	expect_reject("/w", "/home/u", x8, "--map-host: --map-host needs NAME=ADDR");
	const char *x9[] = {"--map-host", "api.test=localhost", "true", NULL};
	expect_reject("/w", "/home/u", x9, "not an IPv4 or IPv6 address");
	const char *x10[] = {"--fs", "full", "--allow-domain", "example.com", "true", NULL};
	expect_reject("/w", "/home/u", x10, "danger-full-access");
	const char *x11[] = {"--allow-domain", NULL};
	expect_reject("/w", "/home/u", x11, "needs a value");

	/* the environment: AGENTJAIL_NET=allow; a flag's list wins over AGENTJAIL_NET=on */
	struct parse_ctx ctx = {.cwd = "/w", .home = "/home/u", .env_net = "allow"};
	const char *t[] = {"true", NULL};
	assert_int_equal(run_parse_args(1, (char **)t, &ctx, &r, &e), 0);
	assert_int_equal(r.pol.net, NET_ALLOW);
	run_request_free(&r);
	ctx.env_net = "on";
	const char *d[] = {"--allow-domain", "example.com", "true", NULL};
	assert_int_equal(run_parse_args(3, (char **)d, &ctx, &r, &e), 0);
	assert_int_equal(r.pol.net, NET_ALLOW);
	run_request_free(&r);
	ctx.env_net = "sideways";
	assert_int_equal(run_parse_args(1, (char **)t, &ctx, &r, &e), -1);
	assert_non_null(strstr(e.what, "off, on, allow or ask"));
	run_request_free(&r);

	/* --net ask: allow, asking; AGENTJAIL_NET=ask too; --net allow or off does not ask; the
	 * timeout is bounded; the stored policy keeps both */
	ctx.env_net = "ask";
	assert_int_equal(run_parse_args(1, (char **)t, &ctx, &r, &e), 0);
	assert_int_equal(r.pol.net, NET_ALLOW);
	assert_true(r.pol.ask);
	run_request_free(&r);
	ctx.env_net = NULL;
	const char *ask[] = {"--net", "ask", "--ask-timeout", "5", "true", NULL};
	assert_int_equal(run_parse_args(5, (char **)ask, &ctx, &r, &e), 0);
	assert_true(r.pol.ask && r.pol.net == NET_ALLOW && r.pol.ask_timeout == 5);
	char *js = policy_to_json(&r.pol);
	assert_non_null(strstr(js, "\"ask\":true,\"ask_timeout\":5"));
	struct policy back;
	assert_int_equal(policy_from_json(js, &back, &e), 0);
	assert_true(back.ask && back.ask_timeout == 5);
	policy_free(&back);
	free(js);
	run_request_free(&r);
	struct policy base;
	policy_init(&base);
	base.ask = true; /* the configuration asks */
	ctx = (struct parse_ctx){.cwd = "/w", .home = "/home/u", .net_default = NET_ALLOW,
				 .base = &base};
	assert_int_equal(run_parse_args(1, (char **)t, &ctx, &r, &e), 0);
	assert_true(r.pol.ask);
	run_request_free(&r);
	const char *allow[] = {"--net", "allow", "true", NULL};
	assert_int_equal(run_parse_args(3, (char **)allow, &ctx, &r, &e), 0);
	assert_false(r.pol.ask);
	run_request_free(&r);
	const char *off[] = {"--net", "off", "true", NULL};
	assert_int_equal(run_parse_args(3, (char **)off, &ctx, &r, &e), 0);
	assert_false(r.pol.ask);
	run_request_free(&r);
	ctx.net_default = NET_OFF; /* run: off, whatever the configuration asks */
	assert_int_equal(run_parse_args(1, (char **)t, &ctx, &r, &e), 0);
	assert_false(r.pol.ask);
	run_request_free(&r);
	policy_free(&base);
	const char *t0[] = {"--ask-timeout", "0", "true", NULL};
	expect_reject("/w", "/home/u", t0, "--ask-timeout needs a number of seconds");
	const char *tbig[] = {"--ask-timeout", "3601", "true", NULL};
	expect_reject("/w", "/home/u", tbig, "--ask-timeout needs a number of seconds");

	/* agents: allow by default; --net on and danger-full-access stay on */
	ctx = (struct parse_ctx){.cwd = "/w", .home = "/home/u", .net_default = NET_ALLOW};
	assert_int_equal(run_parse_args(1, (char **)t, &ctx, &r, &e), 0);
	assert_int_equal(r.pol.net, NET_ALLOW);
	run_request_free(&r);
	const char *on[] = {"--net", "on", "true", NULL};
	assert_int_equal(run_parse_args(3, (char **)on, &ctx, &r, &e), 0);
	assert_int_equal(r.pol.net, NET_ON);
	run_request_free(&r);
	const char *full[] = {"--fs", "full", "true", NULL};
	assert_int_equal(run_parse_args(3, (char **)full, &ctx, &r, &e), 0);
	assert_int_equal(r.pol.net, NET_ON);
	run_request_free(&r);

	assert_int_equal(policy_opt_arity("--allow-domain"), 1);
	assert_int_equal(policy_opt_arity("--deny-domain=x.example"), 0);
	assert_int_equal(policy_opt_arity("--map-host"), 1);

	/* the store keeps the lists; a stored policy is checked again */
	struct policy p;
	policy_init(&p);
	p.net = NET_ALLOW;
	p.workspace = strdup("/w");
	p.workspace_explicit = true;
	strv_push(&p.allow_domains, "api.anthropic.com");
	strv_push(&p.allow_domains, "*.example.org:8443");
	strv_push(&p.deny_domains, "evil.example.org");
	strv_push(&p.map_hosts, "api.test=127.0.0.1");
	char *j = policy_to_json(&p);
	assert_non_null(strstr(j, "\"allow_domains\":[\"api.anthropic.com\",\"*.example.org:8443\"]"));
	assert_non_null(strstr(j, "\"deny_domains\":[\"evil.example.org\"]"));
	assert_non_null(strstr(j, "\"map_hosts\":[\"api.test=127.0.0.1\"]"));
	struct policy q;
	assert_int_equal(policy_from_json(j, &q, &e), 0);
	char *j2 = policy_to_json(&q);
	assert_string_equal(j, j2);
	assert_int_equal(policy_validate(&q, "/home/u", &e), 0);
	free(j2);
	q.net = NET_ON;
	assert_int_equal(policy_validate(&q, "/home/u", &e), -1);
	assert_non_null(strstr(e.what, "contradictory"));
	q.net = NET_ALLOW;
	strv_push(&q.allow_domains, "*");
	assert_int_equal(policy_validate(&q, "/home/u", &e), -1);
	assert_non_null(strstr(e.what, "--allow-domain"));
	policy_free(&q);
	free(j);
	/* allow with an empty list is stored as such: sessions show allow(0) */
	strv_free(&p.allow_domains);
	strv_free(&p.deny_domains);
	strv_free(&p.map_hosts);
	j = policy_to_json(&p);
	assert_non_null(strstr(j, "\"allow_domains\":[]"));
	assert_null(strstr(j, "deny_domains"));
	free(j);
	p.net = NET_OFF;
	j = policy_to_json(&p);
	assert_null(strstr(j, "allow_domains"));
	free(j);
	policy_free(&p);
}

static void refused_workspaces(void **state)
{
	(void)state;
	const char *a[] = {"true", NULL};
	expect_reject("/", "/home/u", a, "cannot be /");
	expect_reject("/home/u", "/home/u", a, "refusing");
	expect_reject("/home/u/", "/home/u", a, "refusing");
	expect_reject("/home", "/home/u", a, "refusing");
	expect_reject("/home/u/proj/..", "/home/u", a, "refusing");
	const char *root[] = {"--workspace", "/", "--fs", "ro", "true", NULL};
	expect_reject("/tmp", "/home/u", root, "cannot be /");
	/* explicit --workspace is allowed for $HOME, and a sibling is fine */
	struct run_request r;
	struct err e = {0};
	const char *b[] = {"--workspace", "~", "true", NULL};
	assert_int_equal(parse(&r, "/tmp", "/home/u", b, &e), 0);
	assert_string_equal(r.pol.workspace, "/home/u");
	run_request_free(&r);
	const char *c[] = {"true", NULL};
	assert_int_equal(parse(&r, "/home/user2", "/home/u", c, &e), 0);
	run_request_free(&r);
	assert_int_equal(parse(&r, "/home/uu", "/home/u", c, &e), 0); /* not an ancestor */
	run_request_free(&r);
	/* danger-full-access implies --net on when the network is not given */
	const char *f[] = {"--fs", "full", "true", NULL};
	assert_int_equal(parse(&r, "/w", "/home/u", f, &e), 0);
	assert_int_equal(r.pol.net, NET_ON);
	run_request_free(&r);
	/* danger-full-access needs no workspace check: nothing is bound */
	const char *d[] = {"--fs", "full", "--net", "on", "true", NULL};
	assert_int_equal(parse(&r, "/", "/home/u", d, &e), 0);
	run_request_free(&r);
}

static void paths(void **state)
{
	(void)state;
	static const struct {
		const char *cwd, *in, *out;
	} t[] = {{"/w", "a/b", "/w/a/b"},	    {"/w", "./a/./b/", "/w/a/b"},
		 {"/w", "../x", "/x"},	       {"/w", "a/../../..", "/"},
		 {"/w", "//a//b//", "/a/b"},	    {"/", ".", "/"},
		 {"/w/", "..", "/"},		    {"/w", "/abs/../y", "/y"},
		 {"/w", "a/..b/c", "/w/a/..b/c"}, {"/w", "...", "/w/..."}};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		char *n = path_normalize(t[i].cwd, t[i].in);
		assert_string_equal(n, t[i].out);
		free(n);
		assert_true(path_is_normal(t[i].out));
	}
	/* path_is_normal says exactly when path_normalize would return the path as it is */
	static const char *const odd[] = {"/",	   "/a",    "/a/b",  "//",	"/a/",	 "/a//b",
					  "/./a", "/a/.", "/a/..", "/..",	"/...", "/a/.b",
					  "/.a.", "a",	   "",	    "./a",	"/a/b/", "/ a"};
	for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
		char *n = path_normalize("/", odd[i]);
		assert_int_equal(path_is_normal(odd[i]), odd[i][0] == '/' && !strcmp(n, odd[i]));
		free(n);
	}
	assert_true(path_is_under("/a/b", "/a"));
	assert_true(path_is_under("/a", "/a"));
	assert_false(path_is_under("/ab", "/a"));
	assert_true(path_is_under("/x", "/"));
	assert_true(path_is_strict_ancestor("/", "/a"));
	assert_false(path_is_strict_ancestor("/a", "/a"));
	char *h = path_expand_home("/home/u", "~/x");
	assert_string_equal(h, "/home/u/x");
	free(h);
	h = path_expand_home("/home/u", "~other/x"); /* not ours to expand */
	assert_string_equal(h, "~other/x");
	free(h);
	/* option paths are normalized against the cwd, ~ expanded */
	struct run_request r;
	struct err e = {0};
	const char *a[] = {"--rw", "../data/", "--ro", "~/ref", "--hide", "./secrets/../.env",
			   "true", NULL};
	assert_int_equal(parse(&r, "/home/u/proj", "/home/u", a, &e), 0);
	assert_string_equal(r.pol.rw.v[0], "/home/u/data");
	assert_string_equal(r.pol.ro.v[0], "/home/u/ref");
	assert_string_equal(r.pol.hide.v[0], "/home/u/proj/.env");
	run_request_free(&r);
}

static void env_rules(void **state)
{
	(void)state;
	static const char *const bad[] = {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV",
					  "ENV", "IFS", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS",
					  "DISPLAY", "WAYLAND_DISPLAY", "AGENTJAIL_SESSION", NULL};
	for (size_t i = 0; bad[i]; i++)
		assert_true(env_name_forbidden(bad[i]));
	static const char *const good[] = {"ANTHROPIC_API_KEY", "GITHUB_TOKEN", "LDFLAGS",
					   "ENVIRONMENT", "PATH2", NULL};
	for (size_t i = 0; good[i]; i++)
		assert_false(env_name_forbidden(good[i]));
}

static void json_redacts(void **state)
{
	(void)state;
	struct run_request r;
	struct err e = {0};
	const char *a[] = {"--env", "TOKEN=hunter2", "--env", "EDITOR", "true", NULL};
	assert_int_equal(parse(&r, "/w", "/home/u", a, &e), 0);
	char *j = policy_to_json(&r.pol);
	assert_null(strstr(j, "hunter2"));
	assert_non_null(strstr(j, "TOKEN=<redacted>"));
	assert_non_null(strstr(j, "\"EDITOR\""));
	assert_non_null(strstr(j, "\"version\":1"));
	free(j);
	run_request_free(&r);
}

static void shell_quoting(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} t[] = {{"plain", "plain"},   {"", "''"},	     {"a b", "'a b'"},
		 {"it's", "'it'\\''s'"}, {"$HOME", "'$HOME'"}, {"/a/b-c.d", "/a/b-c.d"}};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		struct strbuf b = STRBUF_INIT;
		sb_add_shquoted(&b, t[i].in);
		assert_string_equal(sb_str(&b), t[i].out);
		sb_free(&b);
	}
}

/* A policy survives the store: to JSON and back gives the same JSON, for every field. */
/* Issue 29: --allow-http (implies --net allow, checked when given), --ssh-agent (--net allow
 * only), --gpg-agent; the secrets a run uses; all stored and read back without a value. */
static void secrets_rules_agents(void **state)
{
	(void)state;
	struct run_request r;
	struct err e = {0};
	const char *a1[] = {"--allow-http", "GET github.com/*", "--allow-domain", "github.com:22",
			    "--ssh-agent", "--gpg-agent", "--env", "ANTHROPIC_API_KEY", "true", NULL};
	assert_int_equal(parse(&r, "/w", "/home/u", a1, &e), 0);
	assert_int_equal(r.pol.net, NET_ALLOW);
	assert_string_equal(r.pol.allow_http.v[0], "GET github.com/*");
	assert_true(r.pol.ssh_agent && r.pol.gpg_agent);
	struct strv host_env = STRV_INIT;
	strv_push(&host_env, "ANTHROPIC_API_KEY=sk-ant-real-value");
	policy_secrets_activate(&r.pol, &host_env);
	assert_int_equal(r.pol.secrets.n, 1);
	char *j = policy_to_json(&r.pol);
	assert_null(strstr(j, "sk-ant-real-value"));
	struct policy q;
	assert_int_equal(policy_from_json(j, &q, &e), 0);
	char *j2 = policy_to_json(&q);
	assert_string_equal(j, j2);
	assert_true(q.ssh_agent && q.gpg_agent);
	assert_string_equal(q.secrets.v[0].name, "ANTHROPIC_API_KEY");
	free(j);
	free(j2);
	policy_free(&q);
	/* under another mode no secret is used (there is no proxy to add it) */
	r.pol.net = NET_ON;
	policy_secrets_activate(&r.pol, &host_env);
	assert_int_equal(r.pol.secrets.n, 0);
	run_request_free(&r);
	strv_free(&host_env);

	const char *a2[] = {"--ssh-agent", "true", NULL};
	expect_reject("/w", "/home/u", a2, "--ssh-agent needs --net allow");
	const char *a3[] = {"--net", "on", "--allow-http", "GET x.example/*", "true", NULL};
	expect_reject("/w", "/home/u", a3, "--allow-http");
	const char *a4[] = {"--allow-http", "GET x.example", "true", NULL};
	expect_reject("/w", "/home/u", a4, "host and a path");
}

static void json_round_trip(void **state)
{
	(void)state;
	struct policy p;
	policy_init(&p);
	p.fs = FS_READ_ONLY;
	p.net = NET_ON;
	p.workspace = strdup("/home/u/proj");
	p.workspace_explicit = true;
	p.allow_ptrace = true;
	strv_push(&p.rw, "/home/u/scratch");
	strv_push(&p.ro, "/data");
	strv_push(&p.hide, "/home/u/proj/secrets");
	strv_push(&p.dev, "/dev/kvm");
	strv_push(&p.env, "AWS_PROFILE");
	strv_push(&p.env, "TOKEN=sekrit");
	p.profile = strdup("claude");
	strv_push(&p.agent_rw, "/home/u/.claude");
	strv_push(&p.protect, "/home/u/.claude/settings.json");
	strv_push(&p.setenv, "IS_SANDBOX=1");
	char *j1 = policy_to_json(&p);
	assert_null(strstr(j1, "sekrit"));
	struct policy q;
	struct err e = {0};
	assert_int_equal(policy_from_json(j1, &q, &e), 0);
	char *j2 = policy_to_json(&q);
	assert_string_equal(j1, j2);
	assert_int_equal(q.fs, FS_READ_ONLY);
	assert_int_equal(q.net, NET_ON);
	assert_true(q.workspace_explicit && q.allow_ptrace);
	assert_string_equal(q.profile, "claude");
	/* the value was never stored: it comes back redacted, for resume to warn about */
	assert_string_equal(q.env.v[1], "TOKEN=<redacted>");
	free(j1);
	free(j2);
	policy_free(&q);

	/* a workspace that is not UTF-8 (JSON cannot hold it) survives as hex */
	free(p.workspace);
	p.workspace = strdup("/home/u/caf\xe9");
	j1 = policy_to_json(&p);
	assert_non_null(strstr(j1, "\"hex\""));
	assert_int_equal(policy_from_json(j1, &q, &e), 0);
	assert_string_equal(q.workspace, "/home/u/caf\xe9");
	free(j1);
	policy_free(&q);
	policy_free(&p);

	/* what is refused: not JSON, a newer version, a missing field */
	static const char *const bad[] = {
		"not json",
		"{\"version\":99,\"fs\":\"read-only\",\"net\":\"off\",\"workspace\":\"/w\"}",
		"{\"version\":1,\"fs\":\"sideways\",\"net\":\"off\",\"workspace\":\"/w\"}",
		"{\"version\":1,\"fs\":\"read-only\",\"net\":\"off\"}",
		("{\"version\":1,\"fs\":\"read-only\",\"net\":\"off\",\"workspace\":\"/w\","
		 "\"rw\":[1]}"),
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		err_clear(&e);
		if (policy_from_json(bad[i], &q, &e) != -1)
			fail_msg("accepted: %s", bad[i]);
		assert_true(e.what[0] != '\0');
	}
	err_clear(&e);
	assert_int_equal(policy_from_json(bad[1], &q, &e), -1);
	assert_non_null(strstr(e.hint, "upgrade"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),	      cmocka_unit_test(modes_and_aliases),
		cmocka_unit_test(rejections),	      cmocka_unit_test(net_allow),
		cmocka_unit_test(home_mode),
		cmocka_unit_test(refused_workspaces),
		cmocka_unit_test(paths),	      cmocka_unit_test(env_rules),
		cmocka_unit_test(json_redacts),    cmocka_unit_test(shell_quoting),
		cmocka_unit_test(secrets_rules_agents),
		cmocka_unit_test(json_round_trip), cmocka_unit_test(suggestions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
