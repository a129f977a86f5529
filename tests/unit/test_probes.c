/* Tests for core/diag/probes: the table, the `__probe` arguments, the mount checks on mountinfo
 * fixtures, the isolation of a probe (crash, hang, skip), the host's bait and survivor check,
 * and the probes themselves on both sides of a line:
 *  - under the jail's seccomp filter alone (a child sets no_new_privs and loads it), every probe
 *    of the syscall categories PASSes (or SKIPs where this kernel lacks the target);
 *  - as root with no filter (a child in a private mount namespace), they do not PASS: the probes
 *    can fail. The probes no bwrap jail can make fail (no_new_privs, a setuid copy, a hard link
 *    out of the workspace) are shown failing here, on the host.
 * Black-box runs in real and weak jails are in tests/sh/30-verify.t and 31-verify-weak.t. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/diag/probes.h"
#include "core/confine/seccomp.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "testutil.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define TOKEN "0123456789abcdef"

/* ---- helpers ---- */

static const struct probe_def *def_of(const char *id)
{
	for (size_t i = 0; i < probe_count; i++)
		if (!strcmp(probe_table[i].id, id))
			return &probe_table[i];
	return NULL;
}

static char *tmpdir(void)
{
	char *t = xstrdup("/tmp/agentjail-test-probes-XXXXXX");
	assert_non_null(mkdtemp(t));
	return t;
}

static void rm_rf(const char *p)
{
	(void)test_rm_tree(p);
}

static bool has_cap_sys_admin(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "CapEff:", 7))
			return (strtoull(line + 7, NULL, 16) >> 21) & 1;
	return false;
}

/* ---- running probes in a child ---- */

typedef int (*setup_fn)(void);

/* The child's environment for the filtered run: no_new_privs and the jail's filter. */
static int setup_filter(void)
{
	struct seccomp_opts o = {0};
	struct err e = {0};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_load_self(&o, &e) < 0)
		return -1;
	return 0;
}

/* For unfiltered runs as root: a private mount namespace, so no mount can reach the host. */
static int setup_private_mounts(void)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	return 0;
}

/* Run the probes whose id starts with one of `prefixes` in a child prepared by setup; returns
 * "id RESULT detail" lines (or "SETUP-FAILED"). */
static char *battery(setup_fn setup, const char *const *prefixes, struct probe_ctx *c)
{
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		FILE *out = fdopen(p[1], "w");
		if (setup && setup() < 0) {
			fprintf(out, "SETUP-FAILED %s\n", strerror(errno));
			fflush(out);
			_exit(0);
		}
		for (size_t i = 0; prefixes[i]; i++)
			strv_push(&c->only, prefixes[i]);
		probe_ctx_prepare(c);
		for (size_t i = 0; i < probe_count; i++) {
			if (!probe_selected(c, &probe_table[i]))
				continue;
			struct probe_out o;
			probe_run(c, &probe_table[i], 5000, &o);
			fprintf(out, "%s %s %s\n", probe_table[i].id, probe_result_name(o.r),
				o.detail);
			fflush(out);
		}
		probe_ctx_finish(c);
		_exit(0);
	}
	close(p[1]);
	struct strbuf b = STRBUF_INIT;
	char chunk[4096];
	ssize_t n;
	while ((n = read(p[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			sb_addn(&b, chunk, (size_t)n);
	close(p[0]);
	waitpid(pid, NULL, 0);
	return sb_steal(&b);
}

/* The result word for id in a battery's text ("" when absent). */
static const char *result_in(const char *text, const char *id, char *buf, size_t n)
{
	size_t len = strlen(id);
	buf[0] = '\0';
	for (const char *l = text; l && *l;) {
		if (!strncmp(l, id, len) && l[len] == ' ') {
			sscanf(l + len + 1, "%15s", buf);
			(void)n;
			return buf;
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	return buf;
}

static void print_comment(const char *text)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		printf("#   %s\n", l);
}

/* The probes that stand on the syscall filter. */
static const char *const filter_prefixes[] = {"tty.",    "ns.",           "mount.",
					      "kernel.", "ptrace.child_", "setid.", NULL};

/* ---- the table ---- */

static void test_table(void **state)
{
	(void)state;
	assert_true(probe_count >= 40);
	for (size_t i = 0; i < probe_count; i++) {
		const struct probe_def *d = &probe_table[i];
		assert_non_null(d->fn);
		assert_non_null(strchr(d->id, '.'));
		for (size_t k = i + 1; k < probe_count; k++)
			assert_string_not_equal(d->id, probe_table[k].id);
		bool known = false;
		for (size_t k = 0; probe_categories[k]; k++)
			known = known || !strcmp(probe_categories[k], d->category);
		assert_true(known);
		/* one id prefix per category */
		size_t pl = (size_t)(strchr(d->id, '.') - d->id);
		for (size_t k = 0; k < probe_count; k++)
			if (!strcmp(probe_table[k].category, d->category))
				assert_int_equal(strncmp(probe_table[k].id, d->id, pl + 1), 0);
	}
	for (size_t k = 0; probe_categories[k]; k++) {
		size_t n = 0;
		for (size_t i = 0; i < probe_count; i++)
			n += !strcmp(probe_table[i].category, probe_categories[k]);
		assert_true(n > 0);
	}
	assert_non_null(def_of(PROBE_SURVIVORS_ID));
}

static void test_result_names(void **state)
{
	(void)state;
	for (int r = PROBE_PASS; r <= PROBE_SKIP; r++) {
		enum probe_result back;
		assert_int_equal(probe_result_parse(probe_result_name((enum probe_result)r), &back),
				 0);
		assert_int_equal(back, r);
	}
	enum probe_result x;
	assert_int_equal(probe_result_parse("pass", &x), -1);
	assert_int_equal(probe_result_parse(NULL, &x), -1);
	char m[16];
	probe_marker_sentinel(TOKEN, m);
	assert_string_equal(m, "ajs-0123456789a");
	probe_marker_orphan(TOKEN, m);
	assert_string_equal(m, "ajo-0123456789a");
}

/* ---- arguments ---- */

static void full_ctx(struct probe_ctx *c)
{
	probe_ctx_init(c);
	c->fs = FS_READ_ONLY;
	c->net = NET_ON;
	c->allow_ptrace = true;
	c->workspace = xstrdup("/w s");
	c->home = xstrdup("/home/u");
	c->token = xstrdup(TOKEN);
	strv_push(&c->rw, "/rw1");
	strv_push(&c->ro, "/ro1");
	strv_push(&c->dev, "/dev/kvm");
	strv_push(&c->env_allowed, "GITHUB_TOKEN");
	c->canary = xstrdup("/home/u/.c");
	c->ssh_dir = xstrdup("/home/u/.ssh");
	c->unix_run = xstrdup("/run/x.sock");
	c->unix_tmp = xstrdup("/tmp/x.sock");
	c->abstract = xstrdup("abs");
	c->tcp_port = 4242;
	c->sentinel = 777;
	c->bait_fd = 9;
	strv_push(&c->env_bait, "AWS_SECRET_ACCESS_KEY");
	strv_push(&c->skip, "net.unix_run=no /run");
	strv_push(&c->only, "net.");
}

static void test_args_roundtrip(void **state)
{
	(void)state;
	struct probe_ctx a, b;
	full_ctx(&a);
	struct strv argv = STRV_INIT;
	probe_args_build(&a, &argv);
	probe_ctx_init(&b);
	enum probe_mode mode = PROBE_MODE_EUID;
	struct err e = {0};
	assert_int_equal(probe_args_parse((int)argv.n, strv_data(&argv), &b, &mode, &e), 0);
	assert_int_equal(mode, PROBE_MODE_BATTERY);
	assert_int_equal(b.fs, FS_READ_ONLY);
	assert_int_equal(b.net, NET_ON);
	assert_true(b.allow_ptrace);
	assert_string_equal(b.workspace, "/w s");
	assert_string_equal(b.home, "/home/u");
	assert_string_equal(b.token, TOKEN);
	assert_string_equal(b.rw.v[0], "/rw1");
	assert_string_equal(b.ro.v[0], "/ro1");
	assert_string_equal(b.dev.v[0], "/dev/kvm");
	assert_string_equal(b.env_allowed.v[0], "GITHUB_TOKEN");
	assert_string_equal(b.canary, "/home/u/.c");
	assert_string_equal(b.ssh_dir, "/home/u/.ssh");
	assert_string_equal(b.unix_run, "/run/x.sock");
	assert_string_equal(b.unix_tmp, "/tmp/x.sock");
	assert_string_equal(b.abstract, "abs");
	assert_int_equal(b.tcp_port, 4242);
	assert_int_equal(b.sentinel, 777);
	assert_int_equal(b.bait_fd, 9);
	assert_string_equal(b.env_bait.v[0], "AWS_SECRET_ACCESS_KEY");
	assert_string_equal(b.skip.v[0], "net.unix_run=no /run");
	assert_string_equal(b.only.v[0], "net.");
	strv_free(&argv);
	probe_ctx_free(&a);
	probe_ctx_free(&b);
}

static int parse_strs(enum probe_mode *mode, ...)
{
	struct strv argv = STRV_INIT;
	va_list ap;
	va_start(ap, mode);
	for (const char *s; (s = va_arg(ap, const char *));)
		strv_push(&argv, s);
	va_end(ap);
	struct probe_ctx c;
	probe_ctx_init(&c);
	struct err e = {0};
	int rc = probe_args_parse((int)argv.n, strv_data(&argv), &c, mode, &e);
	strv_free(&argv);
	probe_ctx_free(&c);
	return rc;
}

static void test_args_errors(void **state)
{
	(void)state;
	enum probe_mode m;
	assert_int_equal(parse_strs(&m, "--bogus", NULL), -1);
	assert_int_equal(parse_strs(&m, "--workspace", NULL), -1);
	assert_int_equal(parse_strs(&m, "--tcp-port", "http", NULL), -1);
	assert_int_equal(parse_strs(&m, "--fs", "sideways", NULL), -1);
	assert_int_equal(parse_strs(&m, "--net", "maybe", NULL), -1);
	assert_int_equal(parse_strs(&m, "--token", "xyz", NULL), -1);
	assert_int_equal(parse_strs(&m, "--token", "0123456789ABCDEF", NULL), -1);
	assert_int_equal(parse_strs(&m, "--euid", NULL), 0);
	assert_int_equal(m, PROBE_MODE_EUID);
	assert_int_equal(parse_strs(&m, "--host-check", "--token=" TOKEN, NULL), 0);
	assert_int_equal(m, PROBE_MODE_HOST_CHECK);
	assert_int_equal(parse_strs(&m, NULL), 0);
	assert_int_equal(m, PROBE_MODE_BATTERY);
}

/* ---- mounts ---- */

/* Our jail (workspace-write, root): the mounts of `agentjail run` on this machine. */
static const char jail_mi[] =
	"64 41 0:39 /newroot / ro,nosuid,nodev,relatime - tmpfs tmpfs rw\n"
	"65 64 254:0 /usr /usr ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n"
	"67 64 254:0 /etc /etc ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n"
	"75 67 0:6 /null /etc/shadow ro,nosuid,nodev,relatime - devtmpfs devtmpfs rw\n"
	"78 64 0:42 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
	"81 78 0:20 /sys /proc/sys ro,nosuid,nodev,relatime - proc proc rw\n"
	"88 64 0:44 / /dev rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=755\n"
	"89 88 0:6 /null /dev/null rw,nosuid,relatime - devtmpfs devtmpfs rw\n"
	"94 88 0:6 /tty /dev/tty rw,nosuid,relatime - devtmpfs devtmpfs rw\n"
	"95 88 0:45 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts rw,mode=620\n"
	"96 64 0:46 / /tmp rw,nosuid,nodev,relatime - tmpfs tmpfs rw\n"
	"98 64 0:48 / /run rw,nosuid,nodev,relatime - tmpfs tmpfs rw\n"
	"99 88 0:49 / /dev/shm rw,nosuid,nodev,relatime - tmpfs tmpfs rw\n"
	"100 98 254:0 /x/agentjail /run/agentjail/init ro,nosuid,nodev,relatime - ext4 /dev/vda "
	"rw\n"
	"101 64 0:50 / /root rw,nosuid,nodev,relatime - tmpfs tmpfs rw,mode=700\n"
	"102 101 254:0 /root/.gitconfig /root/.gitconfig ro,nosuid,nodev - ext4 /dev/vda rw\n"
	"107 96 254:0 /tmp/my\\040ws /tmp/my\\040ws rw,nosuid,nodev,relatime - ext4 /dev/vda rw\n"
	"108 107 254:0 /tmp/my\\040ws/.git/hooks /tmp/my\\040ws/.git/hooks ro,nosuid,nodev - ext4 "
	"/dev/vda rw\n";

/* A weak jail: raw bwrap with --dev-bind /dev /dev; the host's /dev/shm came along. */
static const char weak_mi[] = "64 41 254:0 / / ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n"
			      "79 64 0:6 / /dev rw,nosuid,relatime - devtmpfs devtmpfs rw\n"
			      "80 79 0:22 / /dev/shm rw,relatime - tmpfs tmpfs rw\n"
			      "82 79 0:23 / /dev/pts rw,relatime - devpts devpts rw\n"
			      "95 64 254:0 /ws /ws rw,nosuid,nodev,relatime - ext4 /dev/vda rw\n";

static void mounts_ctx(struct probe_ctx *c, enum fs_mode fs, const char *ws)
{
	probe_ctx_init(c);
	c->fs = fs;
	c->workspace = xstrdup(ws);
	c->home = xstrdup("/root");
}

static void test_mounts_jail(void **state)
{
	(void)state;
	struct probe_ctx c;
	struct probe_out o;
	mounts_ctx(&c, FS_WORKSPACE_WRITE, "/tmp/my ws");
	probe_check_mounts_rw(&c, jail_mi, &o);
	assert_int_equal(o.r, PROBE_PASS);
	probe_check_mounts_nosuid(jail_mi, &o);
	assert_int_equal(o.r, PROBE_PASS);
	probe_check_mounts_nodev(&c, jail_mi, &o);
	assert_int_equal(o.r, PROBE_PASS);
	assert_non_null(strstr(o.detail, "18 mounts"));
	probe_ctx_free(&c);

	/* the same mounts under a read-only policy: the workspace (an escaped name) is flagged */
	mounts_ctx(&c, FS_READ_ONLY, "/tmp/my ws");
	probe_check_mounts_rw(&c, jail_mi, &o);
	assert_int_equal(o.r, PROBE_FAIL);
	assert_non_null(strstr(o.detail, "/tmp/my ws"));
	probe_ctx_free(&c);

	/* a --rw extra makes it allowed again */
	mounts_ctx(&c, FS_READ_ONLY, "/elsewhere");
	strv_push(&c.rw, "/tmp/my ws");
	probe_check_mounts_rw(&c, jail_mi, &o);
	assert_int_equal(o.r, PROBE_PASS);
	probe_ctx_free(&c);
}

static void test_mounts_weak(void **state)
{
	(void)state;
	struct probe_ctx c;
	struct probe_out o;
	mounts_ctx(&c, FS_READ_ONLY, "/ws");
	probe_check_mounts_rw(&c, weak_mi, &o);
	assert_int_equal(o.r, PROBE_FAIL);
	assert_non_null(strstr(o.detail, "/ws"));
	probe_check_mounts_nosuid(weak_mi, &o);
	assert_int_equal(o.r, PROBE_FAIL);
	assert_non_null(strstr(o.detail, "2 mounts without nosuid"));
	probe_check_mounts_nodev(&c, weak_mi, &o);
	assert_int_equal(o.r, PROBE_FAIL);
	assert_non_null(strstr(o.detail, "/dev, /dev/shm"));
	probe_ctx_free(&c);
}

/* ---- isolation of one probe ---- */

static void fn_crash(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	(void)o;
	signal(SIGSEGV, SIG_DFL);
	raise(SIGSEGV);
}

static void fn_hang(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	(void)o;
	for (;;)
		pause();
}

static void fn_pass(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	o->r = PROBE_PASS;
	snprintf(o->detail, sizeof o->detail, "fine\x01\xc3\xa9");
}

static void test_run_isolation(void **state)
{
	(void)state;
	struct probe_ctx c;
	probe_ctx_init(&c);
	struct probe_out o;
	const struct probe_def crash = {"x.crash", "privileges", fn_crash};
	const struct probe_def hang = {"x.hang", "privileges", fn_hang};
	const struct probe_def pass = {"x.pass", "privileges", fn_pass};
	probe_run(&c, &crash, 2000, &o);
	assert_int_equal(o.r, PROBE_FAIL);
	assert_non_null(strstr(o.detail, "crashed (signal 11)"));
	probe_run(&c, &hang, 100, &o);
	assert_int_equal(o.r, PROBE_FAIL);
	assert_non_null(strstr(o.detail, "did not answer within 100 ms"));
	probe_run(&c, &pass, 2000, &o);
	assert_int_equal(o.r, PROBE_PASS);
	assert_string_equal(o.detail, "fine???"); /* printable ASCII only */
	strv_push(&c.skip, "x.hang=no bait for it");
	probe_run(&c, &hang, 100, &o);
	assert_int_equal(o.r, PROBE_SKIP);
	assert_string_equal(o.detail, "no bait for it");
	strv_push(&c.only, "x.p");
	assert_true(probe_selected(&c, &pass));
	assert_false(probe_selected(&c, &hang));
	probe_ctx_free(&c);
}

/* ---- the probes against the filter, and without it ---- */

static void test_filter_holds(void **state)
{
	(void)state;
	struct probe_ctx c;
	probe_ctx_init(&c);
	c.token = xstrdup(TOKEN);
	_cleanup_free_ char *text = battery(setup_filter, filter_prefixes, &c);
	probe_ctx_free(&c);
	assert_null(strstr(text, "SETUP-FAILED"));
	int n = 0, pass = 0;
	for (size_t i = 0; i < probe_count; i++) {
		const char *id = probe_table[i].id;
		bool sel = false;
		for (size_t k = 0; filter_prefixes[k]; k++)
			sel = sel || !strncmp(id, filter_prefixes[k], strlen(filter_prefixes[k]));
		if (!sel)
			continue;
		char r[16];
		result_in(text, id, r, sizeof r);
		if (strcmp(r, "PASS") && strcmp(r, "SKIP")) {
			print_comment(text);
			fail_msg("%s: %s under the jail's filter", id, r[0] ? r : "no result");
		}
		n++;
		pass += !strcmp(r, "PASS");
	}
	printf("# %d filter probes under the seccomp filter: %d PASS, %d SKIP\n", n, pass,
	       n - pass);
	assert_true(n >= 30);
}

static void test_unfiltered_fails(void **state)
{
	(void)state;
	if (geteuid() != 0 || !has_cap_sys_admin()) {
		printf("# skipped: needs root with CAP_SYS_ADMIN\n");
		return;
	}
	struct probe_ctx c;
	probe_ctx_init(&c);
	c.token = xstrdup(TOKEN);
	_cleanup_free_ char *text = battery(setup_private_mounts, filter_prefixes, &c);
	probe_ctx_free(&c);
	assert_null(strstr(text, "SETUP-FAILED"));
	/* root without the filter: no probe of these categories may PASS, and these must FAIL
	 * on any Linux (the rest may SKIP where the kernel lacks them, e.g. no IA32, no kexec) */
	static const char *const must_fail[] = {
		"ns.unshare_mount", "ns.chroot",        "ns.setns",     "mount.mount",
		"mount.umount2",    "mount.pivot_root", "mount.fsopen", "kernel.personality",
		"setid.chmod",      "setid.open_creat", "setid.mknod",
	};
	int fails = 0;
	for (const char *l = text; l && *l;) {
		char id[64], r[16];
		if (sscanf(l, "%63s %15s", id, r) == 2) {
			fails += !strcmp(r, "FAIL");
			bool soft = !strcmp(id, "kernel.af_vsock") ||
				    !strcmp(id, "kernel.io_uring") || !strncmp(id, "ptrace.", 7);
			if (!strcmp(r, "PASS") && !soft) {
				print_comment(text);
				fail_msg("%s PASSes as root without the filter", id);
			}
		}
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	for (size_t i = 0; i < ARRAY_LEN(must_fail); i++) {
		char r[16];
		result_in(text, must_fail[i], r, sizeof r);
		if (strcmp(r, "FAIL")) {
			print_comment(text);
			fail_msg("%s: %s as root without the filter", must_fail[i], r);
		}
	}
	printf("# %d filter probes FAIL as root without the filter\n", fails);
}

/* What no bwrap jail can make fail: shown on the host. */
static void test_host_only_failures(void **state)
{
	(void)state;
	struct probe_ctx c;
	probe_ctx_init(&c);
	c.token = xstrdup(TOKEN);
	_cleanup_free_ char *ws = tmpdir();
	c.workspace = xstrdup(ws);
	static const char *const sel[] = {"priv.no_new_privs", "priv.setuid_copy", "fs.hardlink",
					  "priv.seccomp",      "priv.caps",        NULL};
	_cleanup_free_ char *text = battery(geteuid() == 0 ? setup_private_mounts : NULL, sel, &c);
	probe_ctx_free(&c);
	char r[16];
	assert_string_equal(result_in(text, "priv.seccomp", r, sizeof r), "FAIL");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0)
		assert_string_equal(result_in(text, "priv.no_new_privs", r, sizeof r), "FAIL");
	struct stat a, b;
	if (stat("/etc/passwd", &a) == 0 && stat(ws, &b) == 0 && a.st_dev == b.st_dev &&
	    geteuid() == 0)
		assert_string_equal(result_in(text, "fs.hardlink", r, sizeof r), "FAIL");
	struct statvfs sv;
	if (geteuid() == 0 && has_cap_sys_admin() && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0 &&
	    statvfs("/tmp", &sv) == 0 && !(sv.f_flag & ST_NOSUID))
		assert_string_equal(result_in(text, "priv.setuid_copy", r, sizeof r), "FAIL");
	if (geteuid() == 0)
		assert_string_equal(result_in(text, "priv.caps", r, sizeof r), "FAIL");
	print_comment(text);
	rm_rf(ws);
}

/* ---- host side ---- */

/* What a bait test planted, removed by the teardown even when an assertion fails midway. */
static struct bait planted = {.fd = -1};
static char *bait_dirs[2];

static int teardown_bait(void **state)
{
	(void)state;
	bait_remove(&planted);
	for (size_t i = 0; i < ARRAY_LEN(bait_dirs); i++) {
		if (bait_dirs[i])
			rm_rf(bait_dirs[i]);
		free(bait_dirs[i]);
		bait_dirs[i] = NULL;
	}
	return 0;
}

static int connect_path(const char *name, bool abstract)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	memcpy(sa.sun_path + abstract, name, n);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc = connect(fd, (struct sockaddr *)&sa,
			 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + abstract));
	close(fd);
	return rc;
}

static int connect_port(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
	close(fd);
	return rc;
}

static void test_bait_lifecycle(void **state)
{
	(void)state;
	const char *home = bait_dirs[0] = tmpdir();
	const char *ws = bait_dirs[1] = tmpdir();
	struct policy pol;
	policy_init(&pol);
	pol.workspace = xstrdup(ws);
	strv_push(&pol.env, "NPM_TOKEN");
	unsetenv("NPM_TOKEN");
	struct bait *b = &planted;
	struct err e = {0};
	assert_int_equal(bait_plant(b, &pol, home, NULL, &e), 0);
	assert_int_equal(strlen(b->token), PROBE_TOKEN_LEN);
	/* the canary holds the token */
	char buf[128] = "";
	_cleanup_fclose_ FILE *f = fopen(b->canary, "re");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	assert_non_null(strstr(buf, b->token));
	/* the listeners answer (the sentinel serves them) */
	assert_int_equal(connect_path(b->unix_tmp, false), 0);
	assert_int_equal(connect_path(b->abstract, true), 0);
	assert_int_equal(connect_port(b->tcp_port), 0);
	if (geteuid() == 0)
		assert_int_equal(connect_path(b->unix_run, false), 0);
	else
		assert_non_null(strstr(b->skip_run, "writable"));
	/* the sentinel carries its marker (set before bait_plant returns); the fd is
	 * inheritable; the variables are set, except the one the policy passes */
	char path[64], comm[32] = "", marker[16];
	probe_marker_sentinel(b->token, marker);
	snprintf(path, sizeof path, "/proc/%d/comm", (int)b->sentinel);
	_cleanup_fclose_ FILE *cf = fopen(path, "re");
	assert_non_null(cf);
	assert_non_null(fgets(comm, sizeof comm, cf));
	comm[strcspn(comm, "\n")] = '\0';
	assert_string_equal(comm, marker);
	assert_true(b->fd >= 3);
	assert_int_equal(fcntl(b->fd, F_GETFD) & FD_CLOEXEC, 0);
	assert_non_null(strstr(getenv("GITHUB_TOKEN"), b->token));
	assert_null(getenv("NPM_TOKEN"));

	/* the context names all of it */
	struct probe_ctx c;
	bait_fill_ctx(b, &pol, home, &c);
	assert_string_equal(c.token, b->token);
	assert_string_equal(c.canary, b->canary);
	assert_int_equal(c.sentinel, b->sentinel);
	assert_int_equal(c.tcp_port, b->tcp_port);
	assert_false(strv_contains(&c.env_bait, "NPM_TOKEN"));
	assert_true(strv_contains(&c.env_bait, "GITHUB_TOKEN"));
	assert_true(strv_contains(&c.env_allowed, "NPM_TOKEN"));
	probe_ctx_free(&c);

	struct bait bad;
	assert_int_equal(bait_plant(&bad, &pol, home, "xyz", &e), -1); /* a bad token */
	pid_t sentinel = b->sentinel;
	char canary[sizeof planted.canary], sock[sizeof planted.unix_tmp];
	memcpy(canary, b->canary, sizeof canary);
	memcpy(sock, b->unix_tmp, sizeof sock);
	bait_remove(b);
	bait_remove(b); /* idempotent */
	assert_int_equal(access(canary, F_OK), -1);
	assert_int_equal(access(sock, F_OK), -1);
	assert_int_equal(kill(sentinel, 0), -1);
	assert_int_equal(b->fd, -1);
	policy_free(&pol);
}

/* A workspace under /tmp does not stop the /tmp socket; a socket the policy would show does. */
static void test_bait_policy_overlap(void **state)
{
	(void)state;
	const char *home = bait_dirs[0] = tmpdir();
	struct policy pol;
	policy_init(&pol);
	pol.workspace = xstrdup("/tmp");
	struct err e = {0};
	assert_int_equal(bait_plant(&planted, &pol, home, NULL, &e), 0);
	assert_string_equal(planted.unix_tmp, "");
	assert_non_null(strstr(planted.skip_tmp, "the policy shows /tmp"));
	struct probe_ctx c;
	bait_fill_ctx(&planted, &pol, home, &c);
	assert_null(c.unix_tmp);
	assert_true(c.skip.n >= 1);
	probe_ctx_free(&c);
	bait_remove(&planted);
	free(pol.workspace);
	pol.workspace = xstrdup(home); /* under /tmp, but the socket is not under it */
	assert_int_equal(bait_plant(&planted, &pol, home, NULL, &e), 0);
	assert_string_not_equal(planted.unix_tmp, "");
	bait_remove(&planted);
	policy_free(&pol);
}

static void test_survivors(void **state)
{
	(void)state;
	char marker[16];
	probe_marker_orphan(TOKEN, marker);
	struct probe_out o;
	probe_host_survivors(TOKEN, &o);
	assert_int_equal(o.r, PROBE_PASS);
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, marker, 0, 0, 0);
		(void)!write(p[1], "k", 1);
		for (;;)
			pause();
	}
	char k;
	assert_int_equal(read(p[0], &k, 1), 1);
	probe_host_survivors(TOKEN, &o);
	assert_int_equal(o.r, PROBE_FAIL);
	assert_non_null(strstr(o.detail, "killed now"));
	int ws;
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	close(p[0]);
	close(p[1]);
}

int main(int argc, char **argv)
{
	/* priv.setuid_copy runs a copy of this binary as `COPY __probe --euid` */
	if (argc >= 3 && !strcmp(argv[1], "__probe") && !strcmp(argv[2], "--euid")) {
		printf("%u\n", (unsigned)geteuid());
		fflush(stdout);
		_exit(0);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_result_names),
		cmocka_unit_test(test_args_roundtrip),
		cmocka_unit_test(test_args_errors),
		cmocka_unit_test(test_mounts_jail),
		cmocka_unit_test(test_mounts_weak),
		cmocka_unit_test(test_run_isolation),
		cmocka_unit_test(test_filter_holds),
		cmocka_unit_test(test_unfiltered_fails),
		cmocka_unit_test(test_host_only_failures),
		cmocka_unit_test_teardown(test_bait_lifecycle, teardown_bait),
		cmocka_unit_test_teardown(test_bait_policy_overlap, teardown_bait),
		cmocka_unit_test(test_survivors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
