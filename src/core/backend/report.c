/* report: see report.h. */
#include "core/backend/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/plan/limits.h"
#include "core/plan/netrules.h"
#include "core/plan/secrets.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/termtext.h"
#include "util/xalloc.h"

void report_warn(const struct backend_io *io, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = NULL;
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	io->warn(io->arg, n < 0 ? "(a message that could not be formatted)" : text);
	free(text);
}

char *backend_violation_text(const struct violation *v, const char *moved)
{
	const char *label = v->swept ? "swept" : "violation";
	char *head = v->own_words ? xasprintf("%s: %s: %s", label, v->path, v->what)
				  : xasprintf("violation: protected path %s %s during the run",
					      v->path, v->what);
	if (!v->moved_to)
		return head;
	char *line = xasprintf("%s; %s %s", head, moved, v->moved_to);
	free(head);
	return line;
}

bool report_unmoved(const struct launch_result *r, const struct backend_io *io)
{
	bool any = false;
	for (size_t i = 0; i < r->viol.n; i++) {
		if (!r->viol.v[i].move_failed)
			continue;
		report_warn(io, "the sandbox could not undo a violation: %s is still in place (%s)",
			    r->viol.v[i].path, r->viol.v[i].what);
		any = true;
	}
	if (any)
		report_warn(io, "exit status %d: look at the path(s) above before trusting this tree",
			    EXIT_JAIL);
	return any;
}

void report_violations(const struct launch_result *r, const struct backend_io *io)
{
	for (size_t i = 0; i < r->viol.n; i++) {
		const struct violation *v = &r->viol.v[i];
		io->record_violation(io->arg, v->swept ? "sweep.agent_dir" : "violation.protected_path",
				     v->path, v->what, v->moved_to);
		if (v->reported)
			continue; /* said the moment the live watch moved it */
		_cleanup_free_ char *line = backend_violation_text(v, "moved aside to");
		io->warn(io->arg, line);
	}
	if (r->watch_failed) {
		io->warn(io->arg,
			 "protected paths were not watched during the run (only checked after it):");
		io->error(io->arg, &r->watch_err);
	}
	if (r->snapshot_failed) {
		io->warn(io->arg, "could not check protected paths after the run:");
		io->error(io->arg, &r->snap_err);
	}
}

char *report_limits_text(const struct bw_plan *plan, bool rlimits)
{
	const struct bw_limits *l = &plan->limits;
	struct strbuf b = STRBUF_INIT;
	char m[32];
	limits_format_size(l->memory, m, sizeof m);
	sb_addf(&b, "# limits: memory %s, pids ", m);
	if (l->pids == LIMIT_UNLIMITED)
		sb_add(&b, "unlimited");
	else
		sb_addf(&b, "%llu", (unsigned long long)l->pids);
	/* the Landlock backend sets no rlimits: without a user namespace RLIMIT_NPROC would
	 * count every process of the user's, and it has no tmpfs for the default to bound */
	const char *mem = !rlimits ? "not enforced (the Landlock backend sets no rlimits)"
			  : l->memory_default ? "by rlimits: the default memory bounds the tmpfs "
						"mounts only (--memory sets RLIMIT_DATA per process)"
					      : "by rlimits: RLIMIT_DATA per process";
	const char *why = l->why ? l->why : "not probed";
	if (l->mech == LIMITS_CGROUP)
		sb_addf(&b, "; enforced by cgroup v2: a scope under %s\n", l->cgroup_parent);
	else if (l->mech == LIMITS_CGROUP_V1)
		sb_addf(&b,
			"; enforced by cgroup v1: pids.max in a scope under %s; memory %s; no cgroup "
			"v2 scope: %s\n",
			l->cgroup_parent, mem, why);
	else if (!rlimits)
		sb_addf(&b,
			"; not enforced: the Landlock backend sets no rlimits (RLIMIT_NPROC would "
			"count every process of the user's: there is no user namespace); no cgroup "
			"scope: %s\n",
			why);
	else
		sb_addf(&b, "; enforced %s%s; no cgroup v2 scope: %s\n", mem,
			l->root ? ", no process limit for root (RLIMIT_NPROC does not apply to "
				  "root)"
				: ", RLIMIT_NPROC in the jail's user namespace",
			why);
	return sb_steal(&b);
}

void report_limits(const struct launch_result *r, const struct bw_plan *plan,
		   const struct backend_io *io)
{
	char m[32];
	if (r->oom_kills)
		report_warn(io,
			    "the jail hit its memory limit (--memory %s): the kernel killed %llu "
			    "process%s",
			    limits_format_size(plan->limits.memory, m, sizeof m), r->oom_kills,
			    r->oom_kills == 1 ? "" : "es");
	if (r->pids_hits)
		report_warn(io, "the jail hit its process limit (--pids %llu): %llu fork%s refused",
			    (unsigned long long)plan->limits.pids, r->pids_hits,
			    r->pids_hits == 1 ? " was" : "s were");
	if (r->cgroup_left) {
		io->warn(io->arg, "the jail's cgroup could not be removed:");
		io->error(io->arg, &r->cg_err);
	}
}

char *report_dry_run_notes(const struct policy *p)
{
	_cleanup_free_ char *note = p->net == NET_ALLOW ? net_wildcard_note(&p->allow_domains)
							: NULL;
	struct strbuf b = STRBUF_INIT;
	if (note)
		sb_addf(&b, "# note: %s\n", note);
	for (size_t i = 0; p->net == NET_ALLOW && i < p->secrets.n; i++) {
		/* where a value comes from, never one (doc/design.md §4d) */
		_cleanup_free_ char *line = secret_describe(&p->secrets.v[i]);
		_cleanup_free_ char *shown = fmt_clean(line);
		sb_addf(&b, "# secret: %s\n", shown);
	}
	return sb_steal(&b);
}
