/* Tests for core/plan/limits (sizes, defaults, the tmpfs share of the memory limit), the policy's
 * --memory/--pids (parsing, environment, JSON round trip), the builder's use of them, and
 * cgroup.c's pure planning of where a jail's scope goes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/plan/bwrap_argv.h"
#include "core/confine/cgroup.h"
#include "core/plan/limits.h"
#include "core/plan/policy.h"
#include "util/xalloc.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)

static void sizes(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		uint64_t want;
	} good[] = {{"512M", 512 * MIB},  {"4G", 4 * GIB},	  {"4g", 4 * GIB},
		    {"1073741824", GIB},  {"64K", 64 << 10},	  {"2T", 2048 * GIB},
		    {"512MiB", 512 * MIB}, {"512Mi", 512 * MIB}, {"512MB", 512 * MIB},
		    {"1", 1},		  {"unlimited", LIMIT_UNLIMITED}};
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		uint64_t v = 0;
		if (limits_parse_size(good[i].in, &v) < 0 || v != good[i].want)
			fail_msg("%s: got %llu, want %llu", good[i].in, (unsigned long long)v,
				 (unsigned long long)good[i].want);
	}
	static const char *const bad[] = {"",	   "0",	   "0M",    "M",	  "12Q",
					  "1.5G",  "-1",   " 1G",   "1G ",	  "1GG",
					  "1Gx",   "+1G",  "0x10",  "99999999999999999999",
					  "9999999999T", "unlimitedx", "Unlimited", NULL};
	for (size_t i = 0; bad[i]; i++) {
		uint64_t v = 7;
		if (limits_parse_size(bad[i], &v) == 0)
			fail_msg("\"%s\" was accepted as %llu", bad[i], (unsigned long long)v);
		assert_int_equal(v, 7);
	}
	assert_int_equal(limits_parse_size(NULL, &(uint64_t){0}), -1);
}

static void counts(void **state)
{
	(void)state;
	uint64_t v = 0;
	assert_int_equal(limits_parse_count("64", &v), 0);
	assert_int_equal(v, 64);
	assert_int_equal(limits_parse_count("unlimited", &v), 0);
	assert_true(v == LIMIT_UNLIMITED);
	static const char *const bad[] = {"", "0", "-1", "1k", "abc", "1 ", "99999999999999999999",
					  NULL};
	for (size_t i = 0; bad[i]; i++)
		if (limits_parse_count(bad[i], &v) == 0)
			fail_msg("\"%s\" was accepted", bad[i]);
}

static void format(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(limits_format_size(512 * MIB, b, sizeof b), "512M");
	assert_string_equal(limits_format_size(4 * GIB, b, sizeof b), "4G");
	assert_string_equal(limits_format_size(1536 * MIB, b, sizeof b), "1536M");
	assert_string_equal(limits_format_size(2048 * GIB, b, sizeof b), "2T");
	assert_string_equal(limits_format_size(1000, b, sizeof b), "1000");
	assert_string_equal(limits_format_size(LIMIT_UNLIMITED, b, sizeof b), "unlimited");
	/* what is formatted parses back to the same value */
	static const uint64_t v[] = {1, 4095, 4096, 3 * MIB + 4096, 7 * GIB, 12345678901ULL};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		uint64_t back = 0;
		assert_int_equal(limits_parse_size(limits_format_size(v[i], b, sizeof b), &back), 0);
		assert_true(back == v[i]);
	}
}

static void defaults(void **state)
{
	(void)state;
	assert_true(limits_default_memory(24 * GIB) == 12 * GIB);
	assert_true(limits_default_memory(64 * GIB) == 16 * GIB);  /* capped */
	assert_true(limits_default_memory(8 * GIB + 12345) == 4 * GIB); /* whole MiB */
	assert_true(limits_default_memory(0) == 4 * GIB);           /* unknown RAM */
	assert_true(limits_default_memory(16 * MIB) == LIMITS_MIN_MEM);
	uint64_t m = LIMIT_UNSET, p = LIMIT_UNSET;
	limits_resolve(&m, &p, 24 * GIB);
	assert_true(m == 12 * GIB && p == LIMITS_DEFAULT_PIDS);
	m = 256 * MIB, p = LIMIT_UNLIMITED;
	limits_resolve(&m, &p, 24 * GIB);
	assert_true(m == 256 * MIB && p == LIMIT_UNLIMITED); /* given ones stay */
}

static uint64_t tsum(const struct tmpfs_sizes *t)
{
	return t->tmp + t->vartmp + t->run + t->shm + t->home;
}

static void tmpfs_scaling(void **state)
{
	(void)state;
	struct tmpfs_sizes t, full;
	limits_tmpfs_sizes(LIMIT_UNSET, &full);
	assert_true(full.tmp == 4 * GIB && full.vartmp == GIB && full.run == 64 * MIB &&
		    full.shm == GIB && full.home == GIB);
	limits_tmpfs_sizes(LIMIT_UNLIMITED, &t);
	assert_memory_equal(&t, &full, sizeof t);
	limits_tmpfs_sizes(16 * GIB, &t); /* a limit above the defaults keeps them */
	assert_memory_equal(&t, &full, sizeof t);
	/* every limit from the least allowed up: the sum stays within it, each mount keeps its
	 * minimum and never exceeds its default, sizes are page multiples and grow with mem */
	struct tmpfs_sizes prev = {0};
	for (uint64_t mem = LIMITS_MIN_MEM; mem <= 8 * GIB; mem += 7 * MIB + 4096) {
		limits_tmpfs_sizes(mem, &t);
		if (tsum(&t) > mem)
			fail_msg("mem %llu: tmpfs sum %llu", (unsigned long long)mem,
				 (unsigned long long)tsum(&t));
		const uint64_t *v = &t.tmp, *f = &full.tmp, *pv = &prev.tmp;
		for (int i = 0; i < 5; i++) {
			assert_true(v[i] >= MIB && v[i] <= f[i] && v[i] % 4096 == 0);
			assert_true(v[i] >= pv[i]);
		}
		prev = t;
	}
	limits_tmpfs_sizes(256 * MIB, &t);
	assert_true(t.tmp > 100 * MIB && t.tmp < 256 * MIB); /* /tmp keeps the largest share */
	assert_true(t.tmp > t.shm && t.shm == t.home && t.run < t.vartmp);
}

static struct parse_ctx ctx0(void)
{
	return (struct parse_ctx){.cwd = "/work/p", .home = "/home/u"};
}

static int parse(const struct parse_ctx *c, struct run_request *r, struct err *e, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;
	va_start(ap, e);
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	return run_parse_args(argc, argv, c, r, e);
}

static void options(void **state)
{
	(void)state;
	struct parse_ctx c = ctx0();
	struct run_request r;
	struct err e = {0};
	assert_int_equal(parse(&c, &r, &e, "--memory", "512M", "--pids=64", "true", NULL), 0);
	assert_true(r.pol.memory == 512 * MIB && r.pol.pids == 64);
	run_request_free(&r);
	assert_int_equal(parse(&c, &r, &e, "true", NULL), 0);
	assert_true(r.pol.memory == LIMIT_UNSET && r.pol.pids == LIMIT_UNSET);
	run_request_free(&r);
	assert_int_equal(policy_opt_arity("--memory"), 1);
	assert_int_equal(policy_opt_arity("--pids=5"), 0);

	c.env_memory = "1G";
	c.env_pids = "unlimited";
	assert_int_equal(parse(&c, &r, &e, "--memory", "2G", "true", NULL), 0);
	assert_true(r.pol.memory == 2 * GIB && r.pol.pids == LIMIT_UNLIMITED);
	run_request_free(&r);

	static const char *const bad[][2] = {{"--memory", "12Q"}, {"--memory", "10M"},
					     {"--memory", "0"},	  {"--pids", "7"},
					     {"--pids", "x"},	  {"--pids", "0"}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		memset(&e, 0, sizeof e);
		c = ctx0();
		if (parse(&c, &r, &e, bad[i][0], bad[i][1], "true", NULL) == 0)
			fail_msg("%s %s accepted", bad[i][0], bad[i][1]);
		assert_non_null(strstr(e.what, bad[i][0]));
		run_request_free(&r);
	}
	c = ctx0();
	c.env_pids = "many";
	memset(&e, 0, sizeof e);
	assert_int_equal(parse(&c, &r, &e, "true", NULL), -1);
	assert_non_null(strstr(e.what, "AGENTJAIL_PIDS"));
	run_request_free(&r);
}

static void json_round_trip(void **state)
{
	(void)state;
	static const uint64_t mem[] = {LIMIT_UNSET, 512 * MIB, LIMIT_UNLIMITED};
	static const uint64_t pids[] = {LIMIT_UNSET, 64, LIMIT_UNLIMITED};
	for (int i = 0; i < 3; i++) {
		struct policy p, back;
		struct err e = {0};
		policy_init(&p);
		p.workspace = xstrdup("/work/p");
		p.memory = mem[i];
		p.pids = pids[i];
		char *j = policy_to_json(&p);
		if (mem[i] == LIMIT_UNSET)
			assert_null(strstr(j, "memory")); /* unset: absent, as before */
		assert_int_equal(policy_from_json(j, &back, &e), 0);
		assert_true(back.memory == mem[i] && back.pids == pids[i]);
		free(j);
		policy_free(&p);
		policy_free(&back);
	}
	struct policy back;
	struct err e = {0};
	assert_int_equal(policy_from_json("{\"version\":1,\"fs\":\"read-only\",\"net\":\"off\","
					  "\"workspace\":\"/w\",\"memory\":-5}",
					  &back, &e),
			 -1);
	assert_int_equal(policy_from_json("{\"version\":1,\"fs\":\"read-only\",\"net\":\"off\","
					  "\"workspace\":\"/w\",\"pids\":\"lots\"}",
					  &back, &e),
			 -1);
}

static void plan_parent(void **state)
{
	(void)state;
	char why[512], fix[512];
	char *p = cg_plan_parent("/sys/fs/cgroup", "/user.slice/user-0.slice/session-1.scope", 0,
				 why, sizeof why, fix, sizeof fix);
	assert_string_equal(p, "/sys/fs/cgroup/agentjail");
	free(p);
	p = cg_plan_parent("/sys/fs/cgroup",
			   "/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope", 1000,
			   why, sizeof why, fix, sizeof fix);
	assert_string_equal(p, "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/"
			       "agentjail");
	free(p);
	/* an ssh login's session scope is outside the delegated subtree */
	p = cg_plan_parent("/sys/fs/cgroup", "/user.slice/user-1000.slice/session-4.scope", 1000,
			   why, sizeof why, fix, sizeof fix);
	assert_null(p);
	assert_non_null(strstr(why, "session-4.scope"));
	assert_non_null(strstr(fix, "systemd-run --user --scope"));
	/* another user's manager, or a name that only contains it, is not ours */
	p = cg_plan_parent("/sys/fs/cgroup", "/user.slice/user-1001.slice/user@1001.service/a", 1000,
			   why, sizeof why, fix, sizeof fix);
	assert_null(p);
	p = cg_plan_parent("/sys/fs/cgroup", "/x/fakeuser@1000.service/a", 1000, why, sizeof why,
			   fix, sizeof fix);
	assert_null(p);
}

/* The host's cgroup hierarchies, from /proc/self/mountinfo and /proc/self/cgroup lines (a
 * hybrid host: v2 without controllers, the pids controller on v1). */
static void hierarchies(void **state)
{
	(void)state;
	static const char v2[] = "30 24 0:26 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 "
				 "cgroup2 rw,nsdelegate\n";
	static const char pids[] = "38 25 0:34 / /sys/fs/cgroup/pids rw,nosuid shared:17 - cgroup "
				   "cgroup rw,pids\n";
	static const char cpu[] = "33 25 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup "
				  "rw,cpu,cpuacct\n";
	static const char part[] = "38 25 0:34 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup "
				   "rw,pids\n";
	static const char named[] = "40 25 0:36 / /sys/fs/cgroup/x rw - cgroup cgroup "
				    "rw,name=pidsx\n";
	char *m = NULL;
	assert_true(cg_mountinfo_match(v2, NULL, &m));
	assert_string_equal(m, "/sys/fs/cgroup/unified");
	free(m);
	assert_false(cg_mountinfo_match(v2, "pids", &m));
	assert_false(cg_mountinfo_match(pids, NULL, &m));
	assert_true(cg_mountinfo_match(pids, "pids", &m));
	assert_string_equal(m, "/sys/fs/cgroup/pids");
	free(m);
	assert_false(cg_mountinfo_match(cpu, "pids", &m));
	assert_false(cg_mountinfo_match(part, "pids", &m)); /* a part of it, not its root */
	assert_false(cg_mountinfo_match(named, "pids", &m));
	assert_false(cg_mountinfo_match("garbage", "pids", &m));

	static const char self[] = "9:name=systemd:/user.slice\n8:pids:/user.slice/u\n"
				   "4:cpu,cpuacct:/c\n0::/v2/path\n";
	char *p = cg_self_path(self, NULL);
	assert_string_equal(p, "/v2/path");
	free(p);
	p = cg_self_path(self, "pids");
	assert_string_equal(p, "/user.slice/u");
	free(p);
	p = cg_self_path(self, "cpuacct");
	assert_string_equal(p, "/c");
	free(p);
	assert_null(cg_self_path(self, "memory"));
	assert_null(cg_self_path("8:pids:/a\n", NULL)); /* v1 only: no v2 path */
	assert_null(cg_self_path("", "pids"));
}

/* The builder: tmpfs sizes under the limit; rlimits for init only without a cgroup v2 scope
 * (RLIMIT_DATA beside a v1 pids scope), and RLIMIT_NPROC never for root nor beside a scope. */
static void builder(void **state)
{
	(void)state;
	static const struct {
		int mech;
		uid_t uid;
		bool data, nproc;
	} t[] = {{LIMITS_RLIMIT, 1000, true, true},
		 {LIMITS_RLIMIT, 0, true, false},
		 {LIMITS_CGROUP, 1000, false, false},
		 {LIMITS_CGROUP_V1, 1000, true, false},
		 {LIMITS_CGROUP_V1, 0, true, false}};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		struct hostfacts hf;
		hostfacts_init(&hf);
		hf.uid = t[i].uid;
		hf.home = xstrdup("/home/u");
		hf.cwd = xstrdup("/work/p");
		hf.limits_mech = t[i].mech;
		hf.cgroup_parent = xstrdup("/sys/fs/cgroup/agentjail");
		hf_add(&hf, "/work/p", HF_DIR, 0755, t[i].uid, NULL);
		hf_add(&hf, "/home/u", HF_DIR, 0700, t[i].uid, NULL);
		struct policy pol;
		policy_init(&pol);
		pol.workspace = xstrdup("/work/p");
		pol.memory = 256 * MIB;
		pol.pids = 64;
		struct strv cmd = STRV_INIT;
		strv_push(&cmd, "true");
		struct bw_plan plan;
		struct err e = {0};
		assert_int_equal(bwrap_build(&pol, &hf, &cmd, &plan, &e), 0);
		struct strv argv = STRV_INIT;
		bw_plan_argv(&plan, &argv);
		uint64_t sum = 0;
		int n = 0;
		for (size_t k = 0; k + 1 < argv.n; k++)
			if (!strcmp(argv.v[k], "--size")) {
				sum += strtoull(argv.v[k + 1], NULL, 10);
				n++;
			}
		assert_int_equal(n, 5);
		assert_true(sum <= 256 * MIB);
		assert_int_equal(strv_contains(&plan.cmd, "--rlimit-data"), t[i].data);
		assert_int_equal(strv_contains(&plan.cmd, "--rlimit-nproc"), t[i].nproc);
		assert_true(plan.limits.memory == 256 * MIB && plan.limits.pids == 64);
		assert_int_equal(plan.limits.cgroup_parent != NULL, t[i].mech != LIMITS_RLIMIT);
		strv_free(&argv);
		strv_free(&cmd);
		bw_plan_free(&plan);
		policy_free(&pol);
		hostfacts_free(&hf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes),	  cmocka_unit_test(counts),
		cmocka_unit_test(format),	  cmocka_unit_test(defaults),
		cmocka_unit_test(tmpfs_scaling),  cmocka_unit_test(options),
		cmocka_unit_test(json_round_trip), cmocka_unit_test(plan_parent),
		cmocka_unit_test(hierarchies),	  cmocka_unit_test(builder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
