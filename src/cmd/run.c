/* agentjail run [POLICY] [--] CMD [ARG…] */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/jailreport.h"
#include "cmd/llcmd.h"
#include "cmd/netrun.h"
#include "cmd/osbrun.h"
#include "cmd/runlines.h"
#include "cmd/secrun.h"
#include "core/plan/bwrap_argv.h"
#include "core/plan/netrules.h"
#include "core/confine/cgroup.h"
#include "core/host/hostfacts_probe.h"
#include "core/confine/landlock.h"
#include "core/jail/launch.h"
#include "core/jail/pipeline.h"
#include "core/plan/policy.h"
#include "core/host/userns_diag.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/termtext.h"
#include "util/xalloc.h"
#include "util/uuid.h"


extern char **environ;

static const char usage[] =
	"usage: agentjail run [POLICY] [--] CMD [ARG...]\n"
	"POLICY:\n"
	"  --fs read-only|workspace-write|danger-full-access   (ro|rw|full; default rw)\n"
	"  --net off|on|allow           network (default off): on is the host's; allow only\n"
	"                               through agentjail's proxy to the listed domains\n"
	"  --allow-domain D[:PORT]      allow D (example.com, *.example.com for its\n"
	"                               subdomains, 1.2.3.4, [::1]); ports 80, 443 unless\n"
	"                               given; implies --net allow\n"
	"  --deny-domain D[:PORT]       refuse D even when allowed\n"
	"  --map-host NAME=ADDR         NAME resolves to ADDR (as curl --resolve); allowed\n"
	"                               there, even on loopback\n"
	"  --workspace DIR              the project (default: the current directory)\n"
	"  --rw PATH  --ro PATH  --hide PATH   extra writable, read-only, masked paths\n"
	"  --dev PATH                   a character device (e.g. /dev/kvm)\n"
	"  --env NAME[=VALUE]           pass a variable (its value is never shown); under --net\n"
	"                               allow a secret's variable holds a placeholder, its\n"
	"                               value added at the proxy for its hosts only\n"
	"  --allow-http 'METHOD HOST/PATH'  only such requests to HOST (inspected inside TLS);\n"
	"                               implies --net allow\n"
	"  --ssh-agent                  an ssh agent inside that signs only for allowed hosts\n"
	"  --gpg-agent                  gpg-agent's restricted socket and the public keyring\n"
	"  --allow-ptrace               let debuggers work inside (ptrace, process_vm_*)\n"
	"  --agent-writable-instructions  agents: their instruction files (CLAUDE.md, commands/,\n"
	"                               skills/, …) writable; read-only by default\n"
	"  --memory SIZE|unlimited      memory limit, e.g. 512M, 4G (default: half the RAM, <= 16G)\n"
	"  --pids N|unlimited           process (task) limit (default 4096)\n"
	"  --dry-run                    print the jail (bwrap argv) and run nothing\n"
	"  --quiet                      no start and end lines (printed on a terminal only),\n"
	"                               no --net allow banner\n"
	"  --backend local|landlock|opensandbox\n"
	"                               where it runs: local, the bwrap jail (default);\n"
	"                               landlock: no namespaces, Landlock + seccomp only (weaker);\n"
	"                               opensandbox: a sandbox of the [opensandbox] service, no\n"
	"                               terminal, no stdin\n"
	"exit: the command's status (128+N for signal N); 2 rejected; 125 jail failed;\n"
	"      126/127 command not executable / not found\n"
	"example: agentjail run --net allow --allow-domain pypi.org -- pip install requests\n";

/* Record the start: a new session, or an attempt of the one being resumed. */
static void rec_start(struct sess_rec *rec, const struct run_request *req,
		      const struct bw_plan *plan, const char *bwrap)
{
	if (req->resume)
		(void)cmd_rec_attempt(rec, req->session_id, req->attempt_kind, &req->cmd,
				      req->agent_session_id);
	else
		cmd_rec_begin(rec, req, plan, bwrap);
}

/* The record is written while bwrap builds the jail; the command starts after it. */
struct rec_hook {
	struct sess_rec *rec;
	const struct run_request *req;
	const struct bw_plan *plan;
	const char *bwrap;
	struct netrun *net;
};

static void rec_started(void *arg)
{
	struct rec_hook *h = arg;
	rec_start(h->rec, h->req, h->plan, h->bwrap);
}

static int rec_net_ready(void *arg, int tcp4, int tcp6, int dns_udp, int dns_tcp, struct err *e)
{
	struct rec_hook *h = arg;
	return netrun_ready(h->net, tcp4, tcp6, dns_udp, dns_tcp, e);
}

static int run_full_access(struct run_request *req, struct sess_rec *rec)
{
	cmd_warn("danger-full-access: running WITHOUT a sandbox (the command sees and can "
		 "change everything you can)");
	if (req->dry_run) {
		printf("# no jail: danger-full-access runs the command directly\n");
		for (size_t i = 0; i < req->cmd.n; i++)
			printf("%s%s", i ? " " : "", req->cmd.v[i]);
		printf("\n");
		return 0;
	}
	struct err e = {0};
	rec_start(rec, req, NULL, NULL);
	int sig = 0, term = 0;
	int st = launch_unjailed(strv_data(&req->cmd), &sig, &term, &e);
	if (e.what[0])
		cmd_print_err(&e);
	cmd_rec_end(rec, st, sig, term);
	req->interrupted = term != 0;
	runlines_end(req, st, sig, term != 0, 0);
	return st;
}

/* One violation as a line: "violation: protected path P appeared during the run; moved aside
 * to Q", or "violation: P: WHAT" for a scan's finding in its own words. */
static char *violation_text(const struct violation *v, const char *moved)
{
	char *head = v->own_words ? xasprintf("violation: %s: %s", v->path, v->what)
				  : xasprintf("violation: protected path %s %s during the run",
					      v->path, v->what);
	if (!v->moved_to)
		return head;
	char *line = xasprintf("%s; %s %s", head, moved, v->moved_to);
	free(head);
	return line;
}

/* During the run, from the supervise loop: the user's terminal may be in raw mode (no newline
 * translation) with the jail's output mid-line, so the line starts and ends with CR LF there. */
void live_violation(void *arg, const struct violation *v)
{
	(void)arg;
	const char *eol = isatty(STDERR_FILENO) ? "\r\n" : "\n";
	const char *pre = isatty(STDERR_FILENO) ? eol : "";
	_cleanup_free_ char *line = violation_text(v, "moved aside at once to");
	_cleanup_free_ char *shown = fmt_clean(line); /* the path is the jail's choice */
	fprintf(stderr, "%sagentjail: %s%s", pre, shown, eol);
	(void)fflush(stderr);
}

/* A violation still in place: loud, with the path and the error (it is in `what`). */
bool report_unmoved(const struct launch_result *r)
{
	bool any = false;
	for (size_t i = 0; i < r->viol.n; i++) {
		if (!r->viol.v[i].move_failed)
			continue;
		cmd_warn("the sandbox could not undo a violation: %s is still in place (%s)",
			 r->viol.v[i].path, r->viol.v[i].what);
		any = true;
	}
	if (any)
		cmd_warn("exit status %d: look at the path(s) above before trusting this tree",
			 EXIT_JAIL);
	return any;
}

void report_violations(const struct launch_result *r, struct sess_rec *rec)
{
	for (size_t i = 0; i < r->viol.n; i++) {
		const struct violation *v = &r->viol.v[i];
		if (rec)
			cmd_rec_violation(rec, v->path, v->what, v->moved_to);
		if (v->reported)
			continue; /* printed the moment the live watch moved it */
		_cleanup_free_ char *line = violation_text(v, "moved aside to");
		cmd_warn("%s", line);
	}
	if (r->watch_failed) {
		cmd_warn("protected paths were not watched during the run (only checked after it):");
		cmd_print_err(&r->watch_err);
	}
	if (r->snapshot_failed) {
		cmd_warn("could not check protected paths after the run:");
		cmd_print_err(&r->snap_err);
	}
}

void print_limits(const struct bw_plan *plan, bool landlock)
{
	const struct bw_limits *l = &plan->limits;
	char m[32];
	limits_format_size(l->memory, m, sizeof m);
	printf("# limits: memory %s, pids ", m);
	if (l->pids == LIMIT_UNLIMITED)
		printf("unlimited");
	else
		printf("%llu", (unsigned long long)l->pids);
	/* the Landlock backend sets no rlimits: without a user namespace RLIMIT_NPROC would
	 * count every process of the user's, and it has no tmpfs for the default to bound */
	const char *mem = landlock ? "not enforced (the Landlock backend sets no rlimits)"
			  : l->memory_default ? "by rlimits: the default memory bounds the tmpfs "
						"mounts only (--memory sets RLIMIT_DATA per process)"
					      : "by rlimits: RLIMIT_DATA per process";
	const char *why = l->why ? l->why : "not probed";
	if (l->mech == LIMITS_CGROUP)
		printf("; enforced by cgroup v2: a scope under %s\n", l->cgroup_parent);
	else if (l->mech == LIMITS_CGROUP_V1)
		printf("; enforced by cgroup v1: pids.max in a scope under %s; memory %s; no cgroup "
		       "v2 scope: %s\n",
		       l->cgroup_parent, mem, why);
	else if (landlock)
		printf("; not enforced: the Landlock backend sets no rlimits (RLIMIT_NPROC would "
		       "count every process of the user's: there is no user namespace); no cgroup "
		       "scope: %s\n",
		       why);
	else
		printf("; enforced %s%s; no cgroup v2 scope: %s\n", mem,
		       l->root ? ", no process limit for root (RLIMIT_NPROC does not apply to "
				 "root)"
			       : ", RLIMIT_NPROC in the jail's user namespace",
		       why);
}

/* After the run: the limits the jail ran into, and a scope that could not be removed. */
void report_limits(const struct launch_result *r, const struct bw_plan *plan)
{
	char m[32];
	if (r->oom_kills)
		cmd_warn("the jail hit its memory limit (--memory %s): the kernel killed %llu "
			 "process%s",
			 limits_format_size(plan->limits.memory, m, sizeof m), r->oom_kills,
			 r->oom_kills == 1 ? "" : "es");
	if (r->pids_hits)
		cmd_warn("the jail hit its process limit (--pids %llu): %llu fork%s refused",
			 (unsigned long long)plan->limits.pids, r->pids_hits,
			 r->pids_hits == 1 ? " was" : "s were");
	if (r->cgroup_left) {
		cmd_warn("the jail's cgroup could not be removed:");
		cmd_print_err(&r->cg_err);
	}
}

void cmd_print_would_run(const struct run_request *req)
{
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < req->cmd.n; i++) {
		if (i)
			sb_add(&b, " ");
		sb_add_shquoted(&b, req->cmd.v[i]);
	}
	_cleanup_free_ char *shown = fmt_clean(sb_str(&b)); /* a stored argv, for resume */
	printf("would run: %s\n", shown);
	sb_free(&b);
}

void cmd_dry_run_notes(const struct policy *p)
{
	if (p->net != NET_ALLOW)
		return;
	_cleanup_free_ char *note = net_wildcard_note(&p->allow_domains);
	if (note)
		printf("# note: %s\n", note);
	for (size_t i = 0; i < p->secrets.n; i++) { /* where a value comes from, never one */
		_cleanup_free_ char *line = secret_describe(&p->secrets.v[i]);
		_cleanup_free_ char *shown = fmt_clean(line);
		printf("# secret: %s\n", shown);
	}
}

int cmd_jail_dry_run(const struct run_request *req, const struct bw_plan *plan)
{
	cmd_print_would_run(req);
	char *bwrap = NULL;
	struct err e = {0};
	bool have = launch_find_bwrap(getenv("AGENTJAIL_BWRAP"), &bwrap, &e) == 0;
	char *pj = policy_to_json(&req->pol);
	char *txt = bw_plan_render(plan, have ? bwrap : "bwrap");
	printf("# policy: %s\n", pj);
	cmd_dry_run_notes(&req->pol);
	print_limits(plan, false);
	printf("%s", txt);
	free(pj);
	free(txt);
	free(bwrap);
	if (!have) {
		cmd_print_err(&e);
		return EXIT_JAIL;
	}
	return 0;
}

/* One line: what --net allow lets through. */
static void net_allow_banner(const struct policy *p)
{
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < p->allow_domains.n && i < 4; i++)
		sb_addf(&b, "%s%s", i ? ", " : ": ", p->allow_domains.v[i]);
	if (p->allow_domains.n > 4)
		sb_add(&b, ", …");
	_cleanup_free_ char *extra = p->map_hosts.n || p->deny_domains.n
		? xasprintf("; %zu mapped, %zu denied", p->map_hosts.n, p->deny_domains.n)
		: NULL;
	cmd_warn("network: allow-list (%zu domain%s%s)%s; everything else refused",
		 p->allow_domains.n, p->allow_domains.n == 1 ? "" : "s", sb_str(&b),
		 extra ? extra : "");
	sb_free(&b);
}

static int start_failed(void)
{
	struct userns_facts uf;
	userns_facts_read(&uf);
	struct userns_cause c = userns_diagnose(&uf);
	cmd_warn("the jail could not be started: %s", c.cause);
	cmd_warn("fix: %s", c.fix);
	cmd_warn("nothing was run outside the sandbox");
	cmd_ll_suggest();
	return EXIT_JAIL;
}

int cmd_jail_launch(struct run_request *req, struct jail *j, struct sess_rec *rec)
{
	return cmd_jail_launch_sec(req, j, rec, NULL);
}

int cmd_jail_launch_sec(struct run_request *req, struct jail *j, struct sess_rec *rec,
			struct secrun *sr)
{
	const struct bw_plan *plan = &j->plan;
	char *bwrap = NULL;
	struct err e = {0};
	if (launch_find_bwrap(getenv("AGENTJAIL_BWRAP"), &bwrap, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_JAIL;
	}
	if (req->pol.net == NET_ON)
		cmd_warn("%s%snet on: the jail shares the host's network, including services on "
			 "loopback%s%s",
			 req->pol.profile ? req->pol.profile : "", req->pol.profile ? ": " : "",
			 landlock_abi() >= 6 ? " (abstract Unix sockets are closed by Landlock)"
					     : " and abstract Unix sockets (this kernel has no Landlock "
					       "scoping)",
			 req->pol.profile ? "; the default, --net allow, lets it reach its API only"
					  : "");
	else if (req->pol.net == NET_ALLOW && !req->quiet)
		net_allow_banner(&req->pol);
	runlines_start(req);
	struct netrun net = {.pol = &req->pol, .rec = rec, .sr = sr};
	struct rec_hook rh = {rec, req, plan, bwrap, &net};
	struct launch_hooks hooks = {.started = rec ? rec_started : NULL,
				     .violation = live_violation,
				     .net_ready = plan->net_allow ? rec_net_ready : NULL,
				     .arg = &rh};
	struct launch_result r;
	int lr = jail_launch(req, j, bwrap, NULL, &hooks, &r, &e);
	free(bwrap);
	netrun_free(&net); /* the proxy stopped, its events written, before the session ends */
	bool said = jailreport_bwrap(&r); /* bwrap's words, then its cause and fix */
	if (lr < 0) {
		cmd_print_err(&e);
		report_violations(&r, rec); /* what the live watch moved before the failure */
		if (rec)
			cmd_rec_end(rec, EXIT_JAIL, 0, 0); /* when it got as far as recording */
		launch_result_free(&r);
		return EXIT_JAIL;
	}
	report_violations(&r, rec);
	report_limits(&r, plan);
	if (r.killed)
		cmd_warn("the command did not exit after %s: the jail was killed",
			 r.term_signal == SIGHUP ? "SIGHUP" : "SIGTERM");
	int rc = r.started ? r.status : said ? EXIT_JAIL : start_failed();
	jailreport_failure(&r, rc, &j->hf, plan, &req->cmd);
	jailreport_notes(&r, &j->hf);
	if (rec)
		cmd_rec_end(rec, rc, r.started ? r.cmd_signal : 0, r.term_signal);
	if (report_unmoved(&r))
		rc = EXIT_JAIL;
	req->interrupted = r.term_signal != 0;
	size_t moved = 0;
	for (size_t i = 0; i < r.viol.n; i++)
		moved += r.viol.v[i].moved_to != NULL;
	runlines_end(req, rc, r.started ? r.cmd_signal : 0, req->interrupted, moved);
	launch_result_free(&r);
	return rc;
}

int cmd_jail_prepare(struct run_request *req, struct jail *j)
{
	return cmd_jail_prepare_sec(req, j, NULL);
}

int cmd_jail_prepare_sec(struct run_request *req, struct jail *j, const struct hf_secrets *sec)
{
	struct err e = {0};
	struct jail_prep o = {.make_caches = !req->dry_run, .sec = sec};
	enum jail_stage st = jail_prepare(req, &o, j, &e);
	if (st == JAIL_READY) {
		for (size_t i = 0; i < req->pol.hide.n; i++)
			if (hf_type(&j->hf, req->pol.hide.v[i]) == HF_MISSING)
				cmd_warn("--hide path does not exist: %s (nothing to hide there; "
					 "check the path)",
					 req->pol.hide.v[i]);
		return 0;
	}
	cmd_print_err(&e);
	return st == JAIL_NO_FACTS ? EXIT_JAIL : EXIT_USAGE;
}

static int run_jailed(struct run_request *req, struct sess_rec *rec)
{
	struct secrun sr; /* doc/design.md §4d */
	int rc = secrun_prepare(&sr, req);
	if (rc) {
		secrun_free(&sr);
		return rc;
	}
	struct jail j;
	rc = cmd_jail_prepare_sec(req, &j, &sr.sec);
	if (rc == 0 && req->dry_run)
		rc = cmd_jail_dry_run(req, &j.plan);
	else if (rc == 0 && (rc = secrun_values(&sr, req)) == 0)
		rc = cmd_jail_launch_sec(req, &j, rec, &sr);
	jail_free(&j);
	secrun_free(&sr);
	return rc;
}

int cmd_run_request(struct run_request *req)
{
	struct err e = {0};
	if (launch_harden_self(req->pol.fs != FS_DANGER_FULL, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_JAIL;
	}
	if (!req->session_id && !(req->session_id = uuid_v4_new(&e))) {
		cmd_print_err(&e);
		return EXIT_JAIL;
	}
	/* the secrets this run uses (doc/design.md §4d): the bwrap jail under --net allow only
	 * (the Landlock backend passes the variables as before) */
	if (req->pol.backend == BACKEND_LOCAL) {
		struct strv host_env = STRV_INIT;
		strv_push_all(&host_env, environ);
		policy_secrets_activate(&req->pol, &host_env);
		strv_free(&host_env);
	} else {
		secret_set_free(&req->pol.secrets);
	}
	struct sess_rec rec = {0};
	int rc = req->pol.fs == FS_DANGER_FULL		   ? run_full_access(req, &rec)
		 : req->pol.backend == BACKEND_LANDLOCK ? cmd_ll_run(req, &rec)
							: run_jailed(req, &rec);
	cmd_rec_close(&rec);
	return rc;
}

/* The values of --env NAME=VALUE are already copied into the policy: overwrite them in our own
 * argv so /proc/PID/cmdline (what `ps` shows) no longer carries them while the jail runs. */
void cmd_scrub_env_values(int nopts, char **argv)
{
	for (int i = 0; i < nopts; i++) {
		char *v = NULL;
		if (!strcmp(argv[i], "--env") && i + 1 < nopts)
			v = argv[++i];
		else if (!strncmp(argv[i], "--env=", 6))
			v = argv[i] + 6;
		char *eq = v ? strchr(v, '=') : NULL;
		if (eq)
			memset(eq + 1, '*', strlen(eq + 1));
	}
}

int cmd_run(int argc, char **argv)
{
	if (argc > 0 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
		fputs(usage, stdout);
		return 0;
	}
	char *cwd = getcwd(NULL, 0);
	if (!cwd) {
		cmd_warn("cannot read the current directory: %s", strerror(errno));
		return EXIT_USAGE;
	}
	static const char *const more[] = {"--backend", NULL};
	struct parse_ctx ctx = {.cwd = cwd,
				.home = getenv("HOME"),
				.env_fs = getenv("AGENTJAIL_FS"),
				.env_net = getenv("AGENTJAIL_NET"),
				.env_memory = getenv("AGENTJAIL_MEMORY"),
				.env_pids = getenv("AGENTJAIL_PIDS"),
				.more_opts = more};
	struct run_request req;
	struct err e = {0};
	struct cmd_config cc;
	const char *backend = NULL;
	if (cmd_take_backend(&argc, argv, &backend) < 0) {
		free(cwd);
		return EXIT_USAGE;
	}
	int rc = cmd_config_ctx(&cc, argc, argv, NULL, &ctx);
	if (rc) {
		cmd_config_free(&cc);
		free(cwd);
		return rc;
	}
	int parsed = run_parse_args(argc, argv, &ctx, &req, &e);
	if (parsed == 0)
		cmd_scrub_env_values(argc - (int)req.cmd.n, argv); /* the command's own args stay */
	if (parsed < 0 || policy_validate(&req.pol, ctx.home, &e) < 0) {
		cmd_print_err(&e);
		rc = EXIT_USAGE;
	} else if (cmd_backend_remote(backend, &cc.cfg)) {
		_cleanup_free_ char *by = backend ? xasprintf("--backend %s", backend)
						  : xasprintf("backend = \"%s\" at %s", cc.cfg.backend.v,
							      cc.cfg.backend.origin);
		rc = cmd_osb_run(&req, &cc.cfg, by);
	} else if (cmd_osb_linked) {
		cmd_warn("agentjail-remote runs only --backend opensandbox; a local jail is `agentjail run`");
		rc = EXIT_USAGE;
	} else {
		if (cmd_backend_of(backend, &cc.cfg) == BACKEND_LANDLOCK)
			req.pol.backend = BACKEND_LANDLOCK;
		rc = cmd_run_request(&req);
	}
	run_request_free(&req);
	cmd_config_free(&cc);
	free(cwd);
	return rc;
}
