/* llcmd: `run --backend landlock` (doc/design.md §4c): the bwrap plan is built as for a jail,
 * mirrored into a Landlock ruleset (core/plan/llplan.h) and run by core/jail/llrun.h. */
#include "cmd/llcmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/netrun.h"
#include "cmd/runlines.h"
#include "core/jail/guard.h"
#include "core/jail/launch.h"
#include "core/jail/llrun.h"
#include "core/jail/suidscan.h"
#include "core/jail/pipeline.h"
#include "util/cleanup.h"
#include "util/path.h"


#define LL_ALLOW_WARNING                                                                           \
	"the proxy listens on the host's 127.0.0.1 on a random port; seccomp allows only TCP "   \
	"sockets and Landlock lets them connect to that port only and bind none. WARNING: "       \
	"Landlock matches ports, not addresses: a direct connection to another host on that "    \
	"same port is not stopped"

void cmd_ll_suggest(void)
{
	cmd_warn("where namespaces cannot be had, `agentjail run --backend landlock` is a weaker "
		 "sandbox without them (Landlock and seccomp): reads and writes confined to the "
		 "jail's allowlist, no ptrace, no new namespaces, network off or by port; but no "
		 "private /proc, PIDs, hostname or mounts: the command sees the host's other "
		 "processes and can reach those of the same user that Landlock's scoping does not "
		 "cover (doc/design.md §4c)");
}

static void print_net(const struct policy *p)
{
	if (p->net == NET_OFF)
		printf("# network off: seccomp refuses socket(AF_INET, AF_INET6); Landlock handles "
		       "TCP connect and bind with no port allowed\n");
	else if (p->net == NET_ON)
		printf("# network on: the host's network, with loopback services\n");
	else
		printf("# network allow: %s\n", LL_ALLOW_WARNING);
	cmd_dry_run_notes(p);
	printf("# Unix sockets: socket(AF_UNIX) is refused (seccomp cannot tell a pathname from "
	       "another); socketpair and inherited descriptors still work; abstract sockets and "
	       "signals are scoped to the command where Landlock's ABI >= 6 (this kernel: %d)\n",
	       landlock_abi());
}

/* The guard saw something (llrun serves it while the command runs): say it at once. */
struct guard_ctx {
	struct guard *g;
	struct launch_result *r;
};

static void on_guard(void *arg)
{
	struct guard_ctx *c = arg;
	size_t first = c->r->viol.n;
	size_t n = guard_handle(c->g, &c->r->viol);
	for (size_t i = first; i < first + n; i++) {
		live_violation(NULL, &c->r->viol.v[i]);
		c->r->viol.v[i].reported = true;
	}
}

static int ll_go(struct run_request *req, struct jail *j, const char *tmpdir, struct sess_rec *rec)
{
	struct err e = {0};
	_cleanup_(ll_plan_free) struct ll_plan lp = {0};
	if (llplan_build(&j->plan, &j->hf, tmpdir, &lp, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_JAIL;
	}
	if (req->dry_run) {
		cmd_print_would_run(req);
		_cleanup_free_ char *pj = policy_to_json(&req->pol);
		_cleanup_free_ char *txt = ll_plan_render(&lp);
		printf("# policy: %s\n# backend: landlock (no bwrap, no namespaces)\n%s", pj, txt);
		print_limits(&j->plan, true);
		print_net(&req->pol);
		return 0;
	}
	/* the protected paths: snapshotted and kept before the command starts, watched while it
	 * runs, checked after it (core/jail/guard.h); no snapshot, no run */
	_cleanup_free_ char *qdir = path_join(j->hf.state_dir, "quarantine");
	_cleanup_(launch_result_free) struct launch_result lres = {.landlock = -1};
	struct guard *g = NULL;
	if (guard_start(&j->plan.watch, qdir, &g, &lres.watch_err, &e) < 0) {
		cmd_print_err(&e);
		cmd_warn("nothing was run");
		return EXIT_JAIL;
	}
	lres.watch_failed = lres.watch_err.what[0] != '\0';
	struct guard_ctx gc = {g, &lres};
	struct llrun_watch watch = {guard_fd(g), on_guard, &gc};
	bool allow = req->pol.net == NET_ALLOW;
	struct seccomp_opts sc = {.allow_ptrace = req->pol.allow_ptrace,
				  .deny_inet = req->pol.net == NET_OFF,
				  .deny_unix = true,
				  .inet_stream_only = allow};
	unsigned short port = 0;
	struct netrun net = {.pol = &req->pol, .rec = rec};
	if (allow) {
		int lfd = -1;
		if (llrun_listen_loopback(&lfd, &port, &e) < 0 ||
		    netrun_ready(&net, lfd, -1, -1, -1, &e) < 0) {
			cmd_print_err(&e);
			netrun_free(&net);
			guard_free(g);
			return EXIT_JAIL;
		}
		llplan_proxy_port(&lp, port);
		cmd_warn("network: allow-list through the proxy on 127.0.0.1:%u; %s", port,
			 "Landlock matches ports, not addresses: a direct connection to another host "
			 "on that same port is not stopped");
	}
	struct landlock_list ll = {.rules = lp.rules, .n = lp.n, .min_abi = LLRUN_MIN_ABI,
				   .handle_net = req->pol.net != NET_ON, .ports = &port,
				   .nports = allow ? 1 : 0};
	if (rec) { /* the session row; its policy says backend "landlock", which resume reads */
		if (req->resume)
			(void)cmd_rec_attempt(rec, req->session_id, req->attempt_kind, &req->cmd,
					      req->agent_session_id);
		else
			cmd_rec_begin(rec, req, NULL, NULL);
	}
	struct llrun_result r;
	struct timespec since;
	suidscan_mark(&since);
	runlines_start(req);
	int lr = llrun_run(&lp, &j->plan.limits, strv_data(&req->cmd), &sc, &ll, &watch, &r, &e);
	lres.oom_kills = r.oom_kills;
	lres.pids_hits = r.pids_hits;
	lres.cgroup_left = r.cgroup_left;
	lres.cg_err = r.cg_err;
	netrun_stop(&net);
	netrun_free(&net);
	/* llrun_run returns only once nothing of the command is left: this last check sees what
	 * stays */
	if (guard_finish(g, &lres.viol, &lres.snap_err) < 0)
		lres.snapshot_failed = true;
	if (lr == 0) /* setuid bits gained, git directories planted: as after a bwrap jail */
		launch_scan_after(&j->plan, qdir, &since, &lres);
	report_violations(&lres, rec);
	report_limits(&lres, &j->plan);
	if (lr < 0) {
		cmd_print_err(&e);
		cmd_warn("nothing was run");
		if (rec)
			cmd_rec_end(rec, EXIT_JAIL, 0, 0);
		guard_free(g);
		return EXIT_JAIL;
	}
	if (rec)
		cmd_rec_end(rec, r.status, r.cmd_signal, r.term_signal);
	guard_free(g); /* last: its close waits for the kernel (guard.h) */
	if (report_unmoved(&lres))
		r.status = EXIT_JAIL;
	if (r.tmp_left)
		cmd_warn("could not remove the private temporary directory %s", tmpdir);
	req->interrupted = r.term_signal != 0;
	size_t moved = 0;
	for (size_t i = 0; i < lres.viol.n; i++)
		moved += lres.viol.v[i].moved_to != NULL;
	runlines_end(req, r.status, r.cmd_signal, req->interrupted, moved);
	return r.status;
}

int cmd_ll_launch(struct run_request *req, struct jail *j, struct sess_rec *rec)
{
	struct err e = {0};
	_cleanup_free_ char *tmpdir = req->dry_run ? strdup("/tmp/agentjail-ll-XXXXXX")
						   : llrun_mktemp(&e);
	if (!tmpdir) {
		cmd_print_err(&e);
		return EXIT_JAIL;
	}
	if (req->cmd.n && !strcmp(req->cmd.v[0], BW_SELF_PATH) && j->hf.self_exe) {
		free(req->cmd.v[0]); /* verify's __probe: agentjail itself, where it lies */
		req->cmd.v[0] = strdup(j->hf.self_exe);
	}
	return ll_go(req, j, tmpdir, rec);
}

int cmd_ll_run(struct run_request *req, struct sess_rec *rec)
{
	struct err e = {0};
	if (llplan_policy_check(&req->pol, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_USAGE;
	}
	struct jail j;
	int rc = cmd_jail_prepare(req, &j);
	if (rc == 0)
		rc = cmd_ll_launch(req, &j, rec);
	jail_free(&j);
	return rc;
}
