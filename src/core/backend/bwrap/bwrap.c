/* bwrap: the bwrap jail as a backend (doc/design.md §2, §2a, §3), the default. A prepared jail
 * is printed (--dry-run: the policy and bwrap's annotated argv) or launched with bwrap, its
 * proxy started through the io's net hooks, and what it found said through the io: bwrap's own
 * words and their cause and fix, the violations, the limits, the sandbox's share in a failure. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/backend/backend.h"
#include "core/backend/bwrap/avail.h"
#include "core/backend/bwrap/bwrapmsg.h"
#include "core/backend/bwrap/jailreport.h"
#include "core/backend/bwrap/launch.h"
#include "core/backend/bwrap/netns.h"
#include "core/backend/report.h"
#include "core/confine/landlock.h"
#include "core/review/changeset.h"
#include "core/plan/netask.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static int bwrap_dry_run(struct run_request *req, struct jail *j, const struct backend_io *io)
{
	io->would_run(io->arg);
	char *bwrap = NULL;
	struct err e = {0};
	bool have = launch_find_bwrap(getenv("AGENTJAIL_BWRAP"), &bwrap, &e) == 0;
	_cleanup_free_ char *pj = policy_to_json(&req->pol);
	_cleanup_free_ char *notes = report_dry_run_notes(&req->pol);
	_cleanup_free_ char *lim = report_limits_text(&j->plan, true);
	_cleanup_free_ char *txt = bw_plan_render(&j->plan, have ? bwrap : "bwrap");
	_cleanup_free_ char *all = xasprintf("# policy: %s\n%s%s%s", pj, notes, lim, txt);
	io->text(io->arg, all);
	free(bwrap);
	if (!have) {
		io->error(io->arg, &e);
		return EXIT_JAIL;
	}
	return 0;
}

/* One line: what --net allow lets through. */
static void net_allow_banner(const struct policy *p, const struct backend_io *io)
{
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < p->allow_domains.n && i < 4; i++)
		sb_addf(&b, "%s%s", i ? ", " : ": ", p->allow_domains.v[i]);
	if (p->allow_domains.n > 4)
		sb_add(&b, ", …");
	_cleanup_free_ char *extra = p->map_hosts.n || p->deny_domains.n
		? xasprintf("; %zu mapped, %zu denied", p->map_hosts.n, p->deny_domains.n)
		: NULL;
	_cleanup_free_ char *rest =
		p->ask ? xasprintf("everything else waits while you are asked (denied after %d s "
				   "without an answer)",
				   p->ask_timeout ? p->ask_timeout : NETASK_TIMEOUT_S)
		       : xstrdup("everything else refused");
	report_warn(io, "network: allow-list (%zu domain%s%s)%s; %s", p->allow_domains.n,
		    p->allow_domains.n == 1 ? "" : "s", sb_str(&b), extra ? extra : "", rest);
	sb_free(&b);
}

static int start_failed(const struct backend_io *io, const char *bwrap_msg)
{
	struct userns_facts uf;
	userns_facts_read(&uf);
	userns_facts_note_bwrap(&uf, bwrap_msg);
	struct userns_cause c = userns_diagnose(&uf);
	report_warn(io, "the jail could not be started: %s", c.cause);
	report_warn(io, "fix: %s", c.fix);
	io->warn(io->arg, "nothing was run outside the sandbox");
	const char *other = backend_fallback();
	if (other)
		io->warn(io->arg, other);
	return EXIT_JAIL;
}

/* launch's hooks, through the io */
struct hooks_ctx {
	const struct backend_io *io;
	const struct bw_plan *plan;
	const char *bwrap;
};

static void on_started(void *arg)
{
	struct hooks_ctx *h = arg;
	h->io->started(h->io->arg, h->plan, h->bwrap);
}

static void on_violation(void *arg, const struct violation *v)
{
	struct hooks_ctx *h = arg;
	h->io->violation(h->io->arg, v);
}

static int on_net_ready(void *arg, int tcp4, int tcp6, int dns_udp, int dns_tcp, struct err *e)
{
	struct hooks_ctx *h = arg;
	return h->io->net_ready(h->io->arg, tcp4, tcp6, dns_udp, dns_tcp, e);
}

static void on_net_capture(void *arg, int listener, int chan)
{
	struct hooks_ctx *h = arg;
	h->io->net_capture(h->io->arg, listener, chan);
}

static void on_jail_gone(void *arg)
{
	struct hooks_ctx *h = arg;
	if (h->io->net_ending)
		h->io->net_ending(h->io->arg);
}

/* --fs review (doc/design.md §3c): before the jail, the change set made ready and locked
 * (nothing runs without it: review never falls back to workspace-write); after it, its
 * baselines, and what is pending said. A jail of its own (verify's: nothing recorded) takes its
 * change set with it, and so does a run that left nothing pending nor kept. */
static int review_begin(const struct run_request *req, const struct jail *j,
			const struct backend_io *io, struct rv_run *rr)
{
	memset(rr, 0, sizeof *rr);
	rr->lock = -1;
	if (req->pol.fs != FS_REVIEW)
		return 0;
	rr->on = true;
	rv_paths_real(&rr->p, j->hf.state_dir, req->session_id);
	struct timespec now;
	(void)clock_gettime(CLOCK_REALTIME, &now);
	rr->since_ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
	struct err e = {0};
	if (rv_open_run(&rr->p, req->pol.workspace, &rr->lock, &e) < 0) {
		io->error(io->arg, &e);
		io->warn(io->arg, "nothing was run (--fs review never falls back to workspace-write)");
		return EXIT_JAIL;
	}
	return 0;
}

static void review_end(const struct run_request *req, const struct jail *j,
		       const struct backend_io *io, struct rv_run *rr)
{
	if (!rr->on)
		return;
	struct err e = {0};
	struct rv_size sz = {0};
	if (io->started) {
		struct rv_rules rules = {STRV_INIT, STRV_INIT};
		strv_copy(&rules.named, &j->plan.review_named);
		strv_copy(&rules.never, &j->plan.review_never);
		struct rv_ctx c = {.p = &rr->p, .workspace = req->pol.workspace, .rules = &rules};
		if (rv_load_baselines(&c, &e) < 0 || rv_record(&c, rr->since_ns, &e) < 0) {
			io->error(io->arg, &e);
			io->warn(io->arg, "review: the baselines of the change set were not recorded: "
					  "apply will call every change a conflict (--force overrides)");
		}
		rv_ctx_free(&c);
		rv_rules_free(&rules);
		rv_size(&rr->p, &sz);
	}
	struct strv ck = STRV_INIT;
	rv_checkpoints(&rr->p, &ck);
	err_clear(&e);
	if (!sz.entries && !ck.n && rv_discard(&rr->p, &e) < 0)
		io->error(io->arg, &e);
	strv_free(&ck);
	if (!req->quiet && sz.entries)
		report_warn(io,
			    "review: the change set holds %llu entr%s (%llu bytes); the workspace is "
			    "untouched: agentjail diff %.8s, apply %.8s, discard %.8s",
			    sz.entries, sz.entries == 1 ? "y" : "ies", sz.bytes, req->session_id,
			    req->session_id, req->session_id);
	if (rr->lock >= 0)
		(void)close(rr->lock);
	rv_paths_free(&rr->p);
	rr->on = false;
	rr->lock = -1;
}

static int on_publish(void *arg, int chan, struct err *e)
{
	struct hooks_ctx *h = arg;
	return h->io->publish(h->io->arg, chan, e);
}

static int bwrap_launch(struct run_request *req, struct jail *j, const struct backend_io *io)
{
	const struct bw_plan *plan = &j->plan;
	char *bwrap = NULL;
	struct err e = {0};
	if (launch_find_bwrap(getenv("AGENTJAIL_BWRAP"), &bwrap, &e) < 0) {
		io->error(io->arg, &e);
		return EXIT_JAIL;
	}
	int src = io->secrets ? io->secrets(io->arg) : 0; /* a command may ask the user */
	if (src) {
		free(bwrap);
		return src;
	}
	if (req->pol.net == NET_ON)
		report_warn(io,
			    "%s%snet on: the jail shares the host's network, including services on "
			    "loopback%s%s",
			    req->pol.profile ? req->pol.profile : "", req->pol.profile ? ": " : "",
			    landlock_abi() >= 6 ? " (abstract Unix sockets are closed by Landlock)"
						: " and abstract Unix sockets (this kernel has no "
						  "Landlock scoping)",
			    req->pol.profile ? "; the default, --net allow, lets it reach its API only"
					     : "");
	else if (req->pol.net == NET_ALLOW && !req->quiet)
		net_allow_banner(&req->pol, io);
	struct rv_run rr;
	if (review_begin(req, j, io, &rr)) {
		free(bwrap);
		return EXIT_JAIL;
	}
	/* --publish's host ports (one in use: nothing runs), --net ask's hub */
	struct backend_ext x = {0};
	if (io->net_prepare(io->arg, &x, &e) < 0) {
		review_end(req, j, io, &rr);
		free(bwrap);
		io->error(io->arg, &e);
		return EXIT_USAGE;
	}
	io->begin(io->arg);
	struct hooks_ctx hc = {io, plan, bwrap};
	struct launch_hooks hooks = {.started = on_started,
				     .violation = on_violation,
				     .net_ready = plan->net_allow ? on_net_ready : NULL,
				     .net_capture = plan->net_allow ? on_net_capture : NULL,
				     .jail_gone = plan->net_allow ? on_jail_gone : NULL,
				     .publish = plan->publish ? on_publish : NULL,
				     .arg = &hc,
				     .ext_fill = x.fill,
				     .ext_handle = x.handle,
				     .ext_arg = x.arg,
				     .ask = x.ask,
				     .jail = x.jail};
	struct launch_result r;
	int lr = jail_launch(req, j, bwrap, NULL, &hooks, &r, &e);
	free(bwrap);
	io->net_stop(io->arg); /* the proxy stopped, its events written, before the session ends */
	review_end(req, j, io, &rr); /* the overlay is gone with the jail */
	char *raced = lr == 0 && !r.started && !req->host_retried
			      ? bwrapmsg_host_race(r.bwrap_stderr,
						   (const char *const *)j->plan.deny_read.v,
						   j->plan.deny_read.n)
			      : NULL;
	if (raced) { /* nothing ran: planned again, launched once more (backend.h) */
		report_warn(io,
			    "the host replaced or removed %s, which the jail masks, while bwrap "
			    "mounted over it (a useradd, a package): building the jail again",
			    raced);
		free(raced);
		launch_result_free(&r);
		req->host_retried = true;
		return BACKEND_AGAIN;
	}
	bool said = jailreport_bwrap(&r, io); /* bwrap's words, then its cause and fix */
	if (lr < 0) {
		io->error(io->arg, &e);
		report_violations(&r, io); /* what the live watch moved before the failure */
		io->ended(io->arg, EXIT_JAIL, 0, 0); /* when it got as far as recording */
		launch_result_free(&r);
		return EXIT_JAIL;
	}
	report_violations(&r, io);
	report_limits(&r, plan, io);
	if (r.killed)
		report_warn(io, "the command did not exit after %s: the jail was killed",
			    r.term_signal == SIGHUP ? "SIGHUP" : "SIGTERM");
	int rc = r.started ? r.status : said ? EXIT_JAIL : start_failed(io, r.bwrap_stderr);
	jailreport_failure(&r, rc, &j->hf, plan, &req->cmd, io);
	jailreport_notes(&r, &j->hf, io);
	io->ended(io->arg, rc, r.started ? r.cmd_signal : 0, r.term_signal);
	if (report_unmoved(&r, io))
		rc = EXIT_JAIL;
	req->interrupted = r.term_signal != 0;
	size_t moved = 0;
	for (size_t i = 0; i < r.viol.n; i++)
		moved += r.viol.v[i].moved_to != NULL;
	io->end(io->arg, rc, r.started ? r.cmd_signal : 0, req->interrupted, moved);
	launch_result_free(&r);
	return rc;
}

static void ahead_free(void *p)
{
	netns_ahead_free(p);
	free(p);
}

/* --net allow: the namespace holder forked now, so the namespace is built beside the host
 * facts and the plan rather than before bwrap (doc/design.md §7). One that cannot be forked
 * here is tried again by launch, which says why. */
static void bwrap_ahead(struct jail *j, const struct policy *pol)
{
	if (pol->net != NET_ALLOW)
		return;
	struct netns_ahead *a = xmalloc(sizeof *a);
	struct err e = {0};
	if (netns_spawn(a, &e) < 0) {
		free(a);
		return;
	}
	j->ahead = a;
	j->ahead_free = ahead_free;
}

const struct backend backend_bwrap = {
	.id = BACKEND_LOCAL,
	.name = "local",
	.caps = &backend_caps_bwrap,
	.run = backend_local_run,
	.dry_run = bwrap_dry_run,
	.launch = bwrap_launch,
	.ahead = bwrap_ahead,
	.available = avail_probe,
};
