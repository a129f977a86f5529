/* landlock: `run --backend landlock` as a backend (doc/design.md §2a, §4c): the bwrap plan is
 * built as for a jail, mirrored into a Landlock ruleset (llplan.h) and run by llrun.h; the
 * protected paths are kept by the guard (core/jail/guard.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backend/backend.h"
#include "core/backend/landlock/llhome.h"
#include "core/backend/landlock/llplan.h"
#include "core/backend/landlock/llrun.h"
#include "core/backend/report.h"
#include "core/jail/guard.h"
#include "core/jail/sweep.h"
#include "core/jail/result.h"
#include "core/jail/suidscan.h"
#include "core/jail/pipeline.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define LL_ALLOW_WARNING                                                                           \
	"the proxy listens on the host's 127.0.0.1 on a random port; seccomp allows only TCP "   \
	"sockets and Landlock lets them connect to that port only and bind none. WARNING: "       \
	"Landlock matches ports, not addresses: a direct connection to another host on that "    \
	"same port is not stopped"

static void print_net(const struct policy *p, struct strbuf *b)
{
	if (p->net == NET_OFF)
		sb_add(b, "# network off: seccomp refuses socket(AF_INET, AF_INET6); Landlock handles "
			  "TCP connect and bind with no port allowed\n");
	else if (p->net == NET_ON)
		sb_add(b, "# network on: the host's network, with loopback services\n");
	else
		sb_addf(b, "# network allow: %s\n", LL_ALLOW_WARNING);
	_cleanup_free_ char *notes = report_dry_run_notes(p);
	sb_add(b, notes);
	sb_addf(b, "# Unix sockets: socket(AF_UNIX) is refused (seccomp cannot tell a pathname from "
		   "another); socketpair and inherited descriptors still work; abstract sockets and "
		   "signals are scoped to the command where Landlock's ABI >= 6 (this kernel: %d)\n",
		landlock_abi());
}

/* The guard saw something (llrun serves it while the command runs): say it at once. */
struct guard_ctx {
	struct guard *g;
	struct launch_result *r;
	const struct backend_io *io;
};

static void on_guard(void *arg)
{
	struct guard_ctx *c = arg;
	size_t first = c->r->viol.n;
	size_t n = guard_handle(c->g, &c->r->viol);
	for (size_t i = first; i < first + n; i++) {
		c->io->violation(c->io->arg, &c->r->viol.v[i]);
		c->r->viol.v[i].reported = true;
	}
}

static int ll_go(struct run_request *req, struct jail *j, const char *tmpdir,
		 const struct backend_io *io)
{
	struct err e = {0};
	_cleanup_(ll_plan_free) struct ll_plan lp = {0};
	if (llplan_build(&j->plan, &req->pol, &j->hf, tmpdir, &lp, &e) < 0) {
		io->error(io->arg, &e);
		return EXIT_JAIL;
	}
	if (req->dry_run) {
		io->would_run(io->arg);
		_cleanup_free_ char *pj = policy_to_json(&req->pol);
		_cleanup_free_ char *txt = ll_plan_render(&lp);
		_cleanup_free_ char *lim = report_limits_text(&j->plan, false);
		struct strbuf b = STRBUF_INIT;
		sb_addf(&b, "# policy: %s\n# backend: landlock (no bwrap, no namespaces)\n%s%s", pj,
			txt, lim);
		print_net(&req->pol, &b);
		io->text(io->arg, sb_str(&b));
		sb_free(&b);
		return 0;
	}
	/* the protected paths: snapshotted and kept before the command starts, watched while it
	 * runs, checked after it (core/jail/guard.h); no snapshot, no run. A private copy this
	 * backend cannot put in place is kept the same way (llplan.h's guard_extra). */
	_cleanup_free_ char *qdir = path_join(j->hf.state_dir, "quarantine");
	/* the agent's own directories: one run at a time sweeps them (core/jail/sweep.h) */
	_cleanup_(sweep_free) struct sweep sw = {0};
	_cleanup_free_ char *busy = NULL;
	long holder = 0;
	int lk = sweep_lock(&lp.sweep, j->hf.state_dir, &sw, &busy, &holder, &e);
	if (lk > 0) {
		char who[48] = "its pid not written yet";
		if (holder > 0)
			snprintf(who, sizeof who, "agentjail pid %ld", holder);
		err_set(&e, 0, busy,
			"another run of this agent on the landlock backend (%s) sweeps this directory "
			"when it ends: two at once would move each other's files aside",
			who);
		err_hint(&e, "wait for that run to end, or run this one with --backend bwrap (its "
			     "own directories are the workspace's there)");
	}
	if (lk != 0) {
		io->error(io->arg, &e);
		io->warn(io->arg, "nothing was run");
		return EXIT_JAIL;
	}
	_cleanup_(launch_result_free) struct launch_result lres = {.landlock = -1};
	struct guard *g = NULL;
	struct guard_opts go = {.keep = true, .live = true};
	_cleanup_strv_ struct strv guarded = STRV_INIT;
	strv_copy(&guarded, &j->plan.watch);
	strv_copy(&guarded, &lp.guard_extra);
	if (guard_start(&guarded, qdir, &go, &g, &lres.watch_err, &e) < 0) {
		io->error(io->arg, &e);
		io->warn(io->arg, "nothing was run");
		return EXIT_JAIL;
	}
	lres.watch_failed = lres.watch_err.what[0] != '\0';
	struct guard_ctx gc = {g, &lres, io};
	struct llrun_watch watch = {guard_fd(g), on_guard, &gc};
	bool allow = req->pol.net == NET_ALLOW;
	struct seccomp_opts sc = {.allow_ptrace = req->pol.allow_ptrace,
				  .deny_inet = req->pol.net == NET_OFF,
				  .deny_unix = true,
				  .inet_stream_only = allow};
	unsigned short port = 0;
	if (allow) {
		int lfd = -1;
		if (llrun_listen_loopback(&lfd, &port, &e) < 0 ||
		    io->net_ready(io->arg, lfd, -1, -1, -1, &e) < 0) {
			io->error(io->arg, &e);
			io->net_stop(io->arg);
			guard_free(g);
			return EXIT_JAIL;
		}
		llplan_proxy_port(&lp, port);
		report_warn(io, "network: allow-list through the proxy on 127.0.0.1:%u; %s", port,
			    "Landlock matches ports, not addresses: a direct connection to another "
			    "host on that same port is not stopped");
	}
	for (size_t i = 0; i < lp.gaps.n; i++)
		report_warn(io, "landlock backend, unlike the bwrap jail: %s", lp.gaps.v[i]);
	/* the agent's own directories: recorded now, what the run leaves there moved aside after
	 * it (core/jail/sweep.h) */
	sweep_take(&lp.sweep, &sw);
	for (size_t i = 0; i < sw.n; i++)
		if (sw.d[i].unswept)
			report_warn(io, "%s is not swept after the run (%s): what the run leaves "
					"there stays for the host's next run of the agent",
				    sw.d[i].path, sw.d[i].unswept);
	if (llhome_make(&lp, &e) < 0) {
		io->error(io->arg, &e);
		io->warn(io->arg, "nothing was run");
		io->net_stop(io->arg);
		guard_free(g);
		return EXIT_JAIL;
	}
	struct landlock_list ll = {.rules = lp.rules, .n = lp.n, .min_abi = LLRUN_MIN_ABI,
				   .handle_net = req->pol.net != NET_ON, .ports = &port,
				   .nports = allow ? 1 : 0};
	/* the session row; its policy says backend "landlock", which resume reads */
	io->started(io->arg, NULL, NULL);
	struct llrun_result r;
	struct timespec since;
	suidscan_mark(&since);
	io->begin(io->arg);
	int lr = llrun_run(&lp, &j->plan.limits, strv_data(&req->cmd), &sc, &ll, &watch, &r, &e);
	lres.oom_kills = r.oom_kills;
	lres.pids_hits = r.pids_hits;
	lres.cgroup_left = r.cgroup_left;
	lres.cg_err = r.cg_err;
	io->net_stop(io->arg);
	/* what the command put in place of a file bind's symlink goes where bwrap's bind would
	 * have taken it (the private copy, merged back by the agent command afterwards) */
	_cleanup_strv_ struct strv wb = STRV_INIT;
	llhome_writeback(&lp, &wb);
	for (size_t i = 0; i < wb.n; i++)
		report_warn(io, "private home: %s", wb.v[i]);
	bool tmp_left = fs_remove_tree(tmpdir) < 0;
	/* llrun_run returns only once nothing of the command is left: this last check sees what
	 * stays */
	if (guard_finish(g, &lres.viol, &lres.snap_err) < 0)
		lres.snapshot_failed = true;
	struct err swe = {0};
	if (sweep_check(&sw, qdir, &lres.viol, &swe) < 0) {
		if (lres.snapshot_failed)
			io->error(io->arg, &swe);
		else
			lres.snap_err = swe;
		lres.snapshot_failed = true;
	}
	if (lr == 0) /* setuid bits gained, git directories planted: as after a bwrap jail */
		launch_scan_after(&j->plan, qdir, &since, &lres);
	report_violations(&lres, io);
	report_limits(&lres, &j->plan, io);
	if (r.killed)
		report_warn(io, "the command did not exit %d s after %s: it was killed",
			    LLRUN_TERM_GRACE_MS / 1000, r.term_signal == SIGHUP ? "SIGHUP" : "SIGTERM");
	if (lr < 0) {
		io->error(io->arg, &e);
		io->warn(io->arg, "nothing was run");
		io->ended(io->arg, EXIT_JAIL, 0, 0);
		guard_free(g);
		return EXIT_JAIL;
	}
	io->ended(io->arg, r.status, r.cmd_signal, r.term_signal);
	guard_free(g); /* last: its close waits for the kernel (guard.h) */
	if (report_unmoved(&lres, io))
		r.status = EXIT_JAIL;
	if (tmp_left)
		report_warn(io, "could not remove the private temporary directory %s", tmpdir);
	req->interrupted = r.term_signal != 0;
	size_t moved = 0;
	for (size_t i = 0; i < lres.viol.n; i++) /* the swept were said as such, not counted */
		moved += lres.viol.v[i].moved_to && !lres.viol.v[i].swept;
	io->end(io->arg, r.status, r.cmd_signal, req->interrupted, moved);
	return r.status;
}

/* A prepared jail, printed (--dry-run) or run: the backend's dry_run and launch. */
static int ll_jail(struct run_request *req, struct jail *j, const struct backend_io *io)
{
	struct err e = {0};
	_cleanup_free_ char *tmpdir = req->dry_run ? strdup("/tmp/agentjail-ll-XXXXXX")
						   : llrun_mktemp(&e);
	if (!tmpdir) {
		io->error(io->arg, &e);
		return EXIT_JAIL;
	}
	if (req->cmd.n && !strcmp(req->cmd.v[0], BW_SELF_PATH) && j->hf.self_exe) {
		free(req->cmd.v[0]); /* verify's __probe: agentjail itself, where it lies */
		req->cmd.v[0] = strdup(j->hf.self_exe);
	}
	int rc = ll_go(req, j, tmpdir, io);
	if (!req->dry_run && access(tmpdir, F_OK) == 0)
		(void)fs_remove_tree(tmpdir); /* a run that stopped before its command */
	return rc;
}

const struct backend backend_landlock = {
	.id = BACKEND_LANDLOCK,
	.name = "landlock",
	.caps = &backend_caps_landlock,
	.run = backend_local_run,
	.policy_check = llplan_policy_check,
	.dry_run = ll_jail,
	.launch = ll_jail,
};
