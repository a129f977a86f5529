/* agentjail verify [POLICY] [--json] [--dry-run]: the integrity battery, run from inside a jail
 * built exactly as `run` builds it (cmd_backend_prepare / cmd_backend_jail), with agentjail itself
 * as the command (`/run/agentjail/agentjail __probe …`: the plan binds agentjail there for a
 * command that names it; the jail's init is the small agentjail-init). The host plants bait
 * first and removes it afterwards, whatever happens (atexit, fatal signals).
 *
 * agentjail __probe ARGS: the jail side. One JSON line per probe on stdout. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/backend/backend.h"
#include "core/plan/bwrap_argv.h"
#include "core/host/hostfacts_probe.h"
#include "core/confine/landlock.h"
#include "core/jail/self.h"
#include "core/diag/probes.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/termtext.h"
#include "util/uuid.h"
#include "util/xalloc.h"

static const char usage[] =
	"usage: agentjail verify [POLICY] [--json] [--dry-run]\n"
	"  runs the integrity battery (agentjail __probe) inside a jail built exactly as\n"
	"  `agentjail run` builds it for POLICY, against bait planted on the host for the run\n"
	"  (a canary in $HOME, sockets, a loopback listener, a sentinel process, secret-looking\n"
	"  variables, an inherited fd; with --net allow a TLS listener the jail may reach by one\n"
	"  name of its own, tls-TOKEN.verify.invalid), removed afterwards.\n"
	"POLICY: as for `agentjail run` (--fs, --net, --workspace, --rw, --ro, --hide, --dev,\n"
	"        --env, --allow-ptrace); danger-full-access is not a jail and cannot be verified\n"
	"  --json      one JSON document: {version, policy, landlock_abi, probes[], summary}\n"
	"  --dry-run   print the jail (bwrap argv) verify would start, and run nothing\n"
	"  --backend landlock  run the battery without namespaces (probes that need them SKIP)\n"
	"exit: 0 nothing failed; 1 some probe failed; 2 usage; 125 the jail could not start\n"
	"example: agentjail verify --net allow --json\n";

enum { PROBE_TIMEOUT_MS = 5000 };

/* ---- the bait's lifetime: removed on every way out ---- */

static struct bait g_bait = {.fd = -1};

static void remove_bait(void)
{
	bait_remove(&g_bait);
}

static void on_fatal_signal(int sig)
{
	remove_bait();
	(void)signal(sig, SIG_DFL);
	(void)raise(sig);
}

static void guard_bait(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
	struct sigaction sa = {.sa_handler = on_fatal_signal};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		(void)sigaction(sigs[i], &sa, NULL);
	(void)atexit(remove_bait);
}

/* The bait's name: random, except that a test build may be told it, so a test can look for
 * exactly this run's leftovers. */
static const char *test_token(void)
{
#ifdef AJ_TEST_BUILD
	return getenv("AGENTJAIL_TEST_VERIFY_TOKEN");
#else
	return NULL;
#endif
}

/* ---- arguments ---- */

static char *home_dir(void)
{
	const char *h = getenv("HOME");
	if (h && h[0] == '/')
		return path_normalize("/", h);
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? path_normalize("/", pw->pw_dir)
							: xstrdup("/");
}

/* Our own flags out, the policy's in; then the command verify always runs. */
static int split_args(int argc, char **argv, bool *json, struct strv *pol)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			*json = true;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
		else
			strv_push(pol, argv[i]);
	}
	strv_push(pol, "--");
	strv_push(pol, BW_SELF_PATH);
	strv_push(pol, "__probe");
	return 0;
}

static int parse_policy(struct strv *args, const char *home, struct run_request *req)
{
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!cwd) {
		cmd_warn("cannot read the current directory: %s", strerror(errno));
		return EXIT_USAGE;
	}
	static const char *const more[] = {"--backend", "--json", NULL};
	struct parse_ctx ctx = {.cwd = cwd,
				.home = home,
				.env_fs = getenv("AGENTJAIL_FS"),
				.env_net = getenv("AGENTJAIL_NET"),
				.env_memory = getenv("AGENTJAIL_MEMORY"),
				.env_pids = getenv("AGENTJAIL_PIDS"),
				.more_opts = more};
	struct err e = {0};
	struct cmd_config cc;
	int rc = cmd_config_ctx(&cc, (int)args->n, strv_data(args), NULL, &ctx);
	if (rc) {
		cmd_config_free(&cc);
		return rc;
	}
	int parsed = run_parse_args((int)args->n, strv_data(args), &ctx, req, &e);
	cmd_config_free(&cc);
	/* the battery holds no secret: the configuration's definitions are not used here */
	if (parsed == 0)
		secret_set_free(&req->pol.secrets);
	if (parsed < 0 || policy_validate(&req->pol, home, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_USAGE;
	}
	if (req->cmd.n != 2 || strcmp(req->cmd.v[0], BW_SELF_PATH) != 0) {
		cmd_warn("verify: unexpected argument %s (verify runs its own command)",
			 req->cmd.v[0]);
		return EXIT_USAGE;
	}
	if (req->pol.fs == FS_DANGER_FULL) {
		cmd_warn("verify: danger-full-access runs without a jail: there is nothing to "
			 "verify");
		return EXIT_USAGE;
	}
	if (policy_canonicalize(&req->pol, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_USAGE;
	}
	/* --fs review: the battery's jail gets a change set of its own, gone after it (the
	 * bwrap backend's review_end: nothing is recorded) */
	if (req->pol.fs == FS_REVIEW && !(req->session_id = uuid_v4_new(&e))) {
		cmd_print_err(&e);
		return EXIT_JAIL;
	}
	return 0;
}

/* The jail's command: our own binary as mounted in the jail, then the probe arguments. */
static void set_probe_cmd(struct run_request *req, const struct probe_ctx *c)
{
	strv_free(&req->cmd);
	strv_push(&req->cmd, BW_SELF_PATH);
	strv_push(&req->cmd, "__probe");
	probe_args_build(c, &req->cmd);
}

/* ---- the jail ---- */

static int swap_fd(int fd, int with)
{
	int saved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup2(with, fd) < 0) {
		if (saved >= 0)
			(void)close(saved);
		return -2;
	}
	return saved; /* -1: fd was closed before */
}

static void restore_fd(int fd, int saved)
{
	if (saved >= 0) {
		(void)dup2(saved, fd);
		(void)close(saved);
	} else {
		(void)close(fd);
	}
}

/* Launch with the jail's stdout going to a memfd (the jail inherits only fds 0-2) and its stdin
 * from /dev/null; *out gets what it wrote. Returns the jail's status. */
static int launch_captured(const struct backend *b, struct run_request *req, struct jail *j,
			   char **out)
{
	*out = NULL;
	(void)fflush(stdout);
	_cleanup_close_ int mfd = memfd_create("agentjail-verify", MFD_CLOEXEC);
	_cleanup_close_ int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (mfd < 0 || null < 0) {
		cmd_warn("verify: cannot capture the battery's output: %s", strerror(errno));
		return EXIT_JAIL;
	}
	int s1 = swap_fd(1, mfd);
	int s0 = s1 == -2 ? -2 : swap_fd(0, null);
	if (s1 == -2 || s0 == -2) {
		cmd_warn("verify: cannot redirect the jail's stdout: %s", strerror(errno));
		if (s1 != -2)
			restore_fd(1, s1);
		return EXIT_JAIL;
	}
	int rc = cmd_backend_jail(b, req, j);
	restore_fd(0, s0);
	restore_fd(1, s1);
	off_t len = lseek(mfd, 0, SEEK_END);
	if (len >= 0 && lseek(mfd, 0, SEEK_SET) == 0) {
		char *buf = xmalloc((size_t)len + 1);
		ssize_t n = read(mfd, buf, (size_t)len);
		buf[n > 0 ? n : 0] = '\0';
		*out = buf;
	}
	return rc;
}

/* ---- results ---- */

/* One JSON object per line; anything else is reported and ends the collection. */
static int collect(const char *text, json_t *probes)
{
	_cleanup_free_ char *copy = xstrdup(text ? text : "");
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		json_error_t je;
		json_t *o = json_loads(l, 0, &je);
		const char *id = NULL, *res = NULL;
		enum probe_result r;
		if (!o || json_unpack(o, "{s:s, s:s}", "id", &id, "result", &res) < 0 ||
		    probe_result_parse(res, &r) < 0) {
			cmd_warn("verify: unexpected output from the battery: %.200s", l);
			json_decref(o);
			return -1;
		}
		json_array_append_new(probes, o);
	}
	return 0;
}

static json_t *find_probe(json_t *probes, const char *id)
{
	size_t i;
	json_t *o;
	json_array_foreach(probes, i, o)
	{
		const char *pid = json_string_value(json_object_get(o, "id"));
		if (pid && !strcmp(pid, id))
			return o;
	}
	return NULL;
}

static json_t *result_json(const char *id, const char *cat, enum probe_result r, const char *detail)
{
	return json_pack("{s:s, s:s, s:s, s:s}", "id", id, "category", cat, "result",
			 probe_result_name(r), "detail", detail);
}

/* The host's part: whether the orphan the battery left behind died with the jail. */
static void add_survivors(json_t *probes, const char *token)
{
	json_t *o = find_probe(probes, PROBE_SURVIVORS_ID);
	const char *res = o ? json_string_value(json_object_get(o, "result")) : NULL;
	if (!res || strcmp(res, "PASS") != 0)
		return; /* no orphan was left: nothing to check */
	struct probe_out out;
	probe_host_survivors(token, &out);
	json_object_set_new(o, "result", json_string(probe_result_name(out.r)));
	json_object_set_new(o, "detail", json_string(out.detail));
	json_object_set_new(o, "host", json_true());
}

/* Every probe of the table must have answered. */
static void add_missing(json_t *probes, int status)
{
	for (size_t i = 0; i < probe_count; i++) {
		if (find_probe(probes, probe_table[i].id))
			continue;
		char d[128];
		snprintf(d, sizeof d, "no answer: the battery stopped early (jail exit status %d)",
			 status);
		json_array_append_new(probes, result_json(probe_table[i].id,
							  probe_table[i].category, PROBE_FAIL, d));
	}
}

struct tally {
	int n[PROBE_SKIP + 1];
	int total;
};

static void count(json_t *probes, struct tally *t)
{
	memset(t, 0, sizeof *t);
	size_t i;
	json_t *o;
	json_array_foreach(probes, i, o)
	{
		enum probe_result r;
		if (probe_result_parse(json_string_value(json_object_get(o, "result")), &r) == 0)
			t->n[r]++;
		t->total++;
	}
}

static void print_human(const struct run_request *req, json_t *probes, const struct tally *t)
{
	printf("agentjail verify: fs=%s net=%s%s workspace=%s (Landlock ABI %d)\n",
	       fs_mode_name(req->pol.fs), net_mode_name(req->pol.net),
	       req->pol.allow_ptrace ? " allow-ptrace" : "", req->pol.workspace, landlock_abi());
	size_t i;
	json_t *o;
	json_array_foreach(probes, i, o)
	{
		/* what the battery said from inside the jail */
		_cleanup_free_ char *res = fmt_clean(json_string_value(json_object_get(o, "result")));
		_cleanup_free_ char *id = fmt_clean(json_string_value(json_object_get(o, "id")));
		_cleanup_free_ char *d = fmt_clean(json_string_value(json_object_get(o, "detail")));
		printf("%-4s  %-26s  %s\n", res, id, d);
	}
	printf("%d probes: %d pass, %d warn, %d fail, %d skip -- %s\n", t->total, t->n[PROBE_PASS],
	       t->n[PROBE_WARN], t->n[PROBE_FAIL], t->n[PROBE_SKIP],
	       t->n[PROBE_FAIL] ? "the jail does NOT hold" : "the jail holds");
}

static int print_json(const struct run_request *req, json_t *probes, const struct tally *t)
{
	_cleanup_free_ char *pj = policy_to_json(&req->pol);
	json_t *pol = json_loads(pj, 0, NULL);
	json_t *doc = json_pack("{s:i, s:o, s:i, s:O, s:{s:i, s:i, s:i, s:i, s:i}}", "version", 1,
				"policy", pol ? pol : json_null(), "landlock_abi", landlock_abi(),
				"probes", probes, "summary", "pass", t->n[PROBE_PASS], "warn",
				t->n[PROBE_WARN], "fail", t->n[PROBE_FAIL], "skip",
				t->n[PROBE_SKIP], "total", t->total);
	char *s = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
	json_decref(doc);
	if (!s) {
		cmd_warn("verify: cannot build the JSON report");
		return -1;
	}
	printf("%s\n", s);
	free(s);
	return 0;
}

/* ---- verify ---- */

/* --net allow: the TLS bait's name goes to the host's 127.0.0.1 and is allowed at its port as
 * TLS, so the net.sni_* probes can show a foreign name refused and its own passed. */
static void allow_tls_bait(struct policy *pol, const struct bait *b)
{
	if (pol->net != NET_ALLOW || b->tls_port <= 0)
		return;
	char name[96];
	probe_tls_bait_name(b->token, name, sizeof name);
	strv_pushf(&pol->map_hosts, "%s=127.0.0.1", name);
	strv_pushf(&pol->allow_domains, "%s:%d/tls", name, b->tls_port);
}

static int run_battery(const struct backend *b, struct run_request *req, const char *home,
		       bool json)
{
	struct err e = {0};
	if (launch_harden_self(true, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_JAIL;
	}
	guard_bait();
	/* no signal while the bait is half planted (a helper forked, its pid not yet recorded):
	 * one that arrives waits, then the handler removes all of it */
	sigset_t all, orig;
	sigfillset(&all);
	(void)sigprocmask(SIG_BLOCK, &all, &orig);
	int planted = bait_plant(&g_bait, &req->pol, home, test_token(), &e);
	(void)sigprocmask(SIG_SETMASK, &orig, NULL);
	if (planted < 0) {
		cmd_print_err(&e);
		return EXIT_JAIL;
	}
	allow_tls_bait(&req->pol, &g_bait);
	struct probe_ctx c;
	bait_fill_ctx(&g_bait, &req->pol, home, &c);
	/* without namespaces, the probes that need them SKIP with the reason (probes_nons.c) */
	for (size_t i = 0; !b->caps->namespaces && probe_skips_landlock[i]; i++)
		strv_push(&c.skip, probe_skips_landlock[i]);
	for (size_t i = 0; !b->caps->namespaces && geteuid() != 0 && probe_skips_landlock_user[i];
	     i++)
		strv_push(&c.skip, probe_skips_landlock_user[i]);
	set_probe_cmd(req, &c);
	probe_ctx_free(&c);
	struct jail j;
	int rc = cmd_backend_prepare(req, &j);
	_cleanup_free_ char *out = NULL;
	if (rc == 0)
		rc = launch_captured(b, req, &j, &out);
	jail_free(&j);
	json_t *probes = json_array();
	bool parsed = out && *out && collect(out, probes) == 0;
	if (parsed)
		add_survivors(probes, g_bait.token);
	if (parsed && b->caps->net_by_port && req->pol.net == NET_ALLOW)
		json_array_append_new(
			probes, result_json("net.landlock_port", "net", PROBE_WARN,
					    "the landlock backend lets TCP connect to the proxy's "
					    "port only, matching ports, not addresses: a direct "
					    "connection to another host on that same port is not "
					    "stopped"));
	remove_bait();
	if (!parsed || !json_array_size(probes)) {
		json_decref(probes);
		cmd_warn("verify: the battery did not run (jail exit status %d)", rc);
		return rc ? rc : EXIT_JAIL;
	}
	add_missing(probes, rc);
	struct tally t;
	count(probes, &t);
	int prc = 0;
	if (json)
		prc = print_json(req, probes, &t);
	else
		print_human(req, probes, &t);
	json_decref(probes);
	return prc < 0 || t.n[PROBE_FAIL] ? 1 : 0;
}

static int verify_dry_run(const struct backend *b, struct run_request *req, const char *home)
{
	struct probe_ctx c;
	bait_fill_ctx(NULL, &req->pol, home, &c);
	set_probe_cmd(req, &c);
	probe_ctx_free(&c);
	struct jail j;
	int rc = cmd_backend_prepare(req, &j);
	if (rc == 0)
		rc = cmd_backend_jail(b, req, &j);
	jail_free(&j);
	return rc;
}

int cmd_verify(int argc, char **argv)
{
	bool json = false;
	struct strv args = STRV_INIT;
	if (split_args(argc, argv, &json, &args) > 0) {
		strv_free(&args);
		fputs(usage, stdout);
		return 0;
	}
	_cleanup_free_ char *home = home_dir();
	struct run_request req;
	memset(&req, 0, sizeof req);
	const char *backend = NULL;
	int n = (int)args.n;
	char **view = xcalloc(args.n + 1, sizeof *view); /* --backend is taken out of a copy */
	memcpy(view, strv_data(&args), args.n * sizeof *view);
	bool bad = cmd_take_backend(&n, view, &backend) < 0;
	/* the flag only: verify proves what it is asked to; chosen now, the value lives in args */
	const struct backend *b = backend_choose(bad ? NULL : backend, NULL);
	if (!bad && !b->caps->verify) {
		cmd_warn("verify: --backend %s: the battery runs only in a local jail (local or "
			 "landlock); %s",
			 b->name, b->caps->verify_why);
		bad = true;
	}
	if (bad) {
		free(view);
		strv_free(&args);
		return EXIT_USAGE;
	}
	struct strv kept = STRV_INIT;
	for (int i = 0; i < n; i++)
		strv_push(&kept, view[i]);
	free(view);
	strv_free(&args);
	args = kept;
	int rc = parse_policy(&args, home, &req);
	req.pol.backend = b->id;
	strv_free(&args);
	if (rc == 0)
		rc = req.dry_run ? verify_dry_run(b, &req, home) : run_battery(b, &req, home, json);
	run_request_free(&req);
	return rc;
}

/* ---- __probe (in the jail) ---- */

static void emit(const struct probe_def *d, const struct probe_out *o)
{
	json_t *j = result_json(d->id, d->category, o->r, o->detail);
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	if (s)
		printf("%s\n", s);
	else
		printf("{\"id\":\"%s\",\"category\":\"%s\",\"result\":\"FAIL\",\"detail\":\"cannot "
		       "encode the result\"}\n",
		       d->id, d->category);
	free(s);
	json_decref(j);
	(void)fflush(stdout);
}

/* Leave without running atexit handlers: in a sanitizer build LeakSanitizer would need ptrace,
 * which the jail refuses. */
static __attribute__((noreturn)) void leave(int status)
{
	(void)fflush(stdout);
	(void)fflush(stderr);
	_exit(status);
}

static void host_check(const struct probe_ctx *c)
{
	const struct probe_def *d = NULL;
	for (size_t i = 0; i < probe_count && !d; i++)
		if (!strcmp(probe_table[i].id, PROBE_SURVIVORS_ID))
			d = &probe_table[i];
	struct probe_out o;
	probe_host_survivors(c->token, &o);
	emit(d, &o);
}

int cmd_probe(int argc, char **argv)
{
	struct probe_ctx c;
	probe_ctx_init(&c);
	enum probe_mode mode;
	struct err e = {0};
	if (probe_args_parse(argc, argv, &c, &mode, &e) < 0) {
		cmd_print_err(&e);
		probe_ctx_free(&c);
		return EXIT_USAGE;
	}
	if (mode == PROBE_MODE_EUID) {
		printf("%u\n", (unsigned)geteuid());
		leave(0);
	}
	if (mode == PROBE_MODE_HOST_CHECK && !c.token) {
		cmd_warn("__probe --host-check needs --token");
		probe_ctx_free(&c);
		return EXIT_USAGE;
	}
	if (mode == PROBE_MODE_HOST_CHECK) {
		host_check(&c);
		probe_ctx_free(&c);
		return 0;
	}
	probe_ctx_prepare(&c);
	for (size_t i = 0; i < probe_count; i++) {
		if (!probe_selected(&c, &probe_table[i]))
			continue;
		struct probe_out o;
		probe_run(&c, &probe_table[i], PROBE_TIMEOUT_MS, &o);
		emit(&probe_table[i], &o);
	}
	probe_ctx_finish(&c);
	probe_ctx_free(&c);
	leave(0);
}
