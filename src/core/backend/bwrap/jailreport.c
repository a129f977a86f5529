/* jailreport: the sandbox's share in a failed jailed run, in one line (jailreport.h). */
#include "core/backend/bwrap/jailreport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/report.h"
#include "core/jail/ctl.h"
#include "core/backend/bwrap/bwrapmsg.h"
#include "core/backend/bwrap/cmdwords.h"
#include "core/backend/bwrap/denial.h"
#include "core/plan/resolve.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

bool jailreport_bwrap(const struct launch_result *r, const struct backend_io *io)
{
	const char *text = r->bwrap_stderr;
	if (!text)
		return false;
	io->put_text(io->arg, text); /* it may name a path in the workspace */
	if (r->started)
		return false; /* bwrap's words after the command started are not a setup failure */
	size_t len;
	const char *line = bwrapmsg_find(text, &len);
	if (!line)
		return false;
	struct bwrapmsg m;
	bwrapmsg_translate(line, len, &m);
	if (m.kind == BWM_NONE || m.kind == BWM_USERNS)
		return false; /* userns: the host's own cause and fix come from userns_diag */
	report_warn(io, "the jail could not be built: %s; fix: %s; nothing was run", m.cause, m.fix);
	return true;
}

/* A command `name` could not be found in the jail: when the host has it (found as the plan
 * finds commands) and, with plan given, the jail's view does not show it or its interpreter,
 * the line naming the --ro that brings it in. Without plan, init's ENOENT is the evidence that
 * the jail lacks it. Returns whether the line was printed. */
static bool not_in_view(struct hostfacts *hf, const struct bw_plan *plan, const char *name,
			const struct backend_io *io)
{
	struct resolved res = {0};
	struct err e = {0};
	bool said = false;
	if (resolve_command(hf, name, hf_getenv(hf, "PATH"), hf->self_exe, &res, &e) == 0 &&
	    res.path) {
		_cleanup_free_ char *dir = path_dirname(res.path);
		/* an interpreter in the system directories is in the jail's view */
		const char *interp =
			res.interp && resolve_needs_showing(hf, res.interp) ? res.interp : NULL;
		if (plan && interp && bw_plan_shows(plan, hf, interp))
			interp = NULL;
		_cleanup_free_ char *idir = interp ? path_dirname(interp) : NULL;
		if (!plan || !bw_plan_shows(plan, hf, res.path) || interp) {
			_cleanup_free_ char *line =
				denial_not_in_view(name, res.path, dir, interp, idir);
			io->warn(io->arg, line);
			said = true;
		}
	}
	resolved_free(&res);
	return said;
}

void jailreport_failure(const struct launch_result *r, int status, struct hostfacts *hf,
			const struct bw_plan *plan, const struct strv *cmd,
			const struct backend_io *io)
{
	if (!r->started || status == 0 || r->term_signal)
		return; /* ended by agentjail's own SIGTERM/SIGINT/SIGHUP: not the sandbox's doing */
	if (status == EXIT_NOTFOUND && (r->exec_errno == ENOENT || r->exec_errno == ENOTDIR) &&
	    cmd->n) {
		(void)not_in_view(hf, NULL, cmd->v[0], io);
	} else if (status == EXIT_NOTFOUND && !r->exec_errno && cmd->n) {
		/* the command ran and said "not found" (a shell's 127, env's): of the programs its
		 * command line names, the first the host has and the jail does not show */
		struct strv words = STRV_INIT;
		cmdwords_collect(cmd->v, cmd->n, &words);
		for (size_t i = 0; i < words.n; i++)
			if (not_in_view(hf, plan, words.v[i], io))
				break;
		strv_free(&words);
	}
	/* what the jail moved aside is the evidence: without it, a failure is the command's */
	const char **moved = xcalloc(r->viol.n + 1, sizeof *moved);
	size_t n = 0;
	for (size_t i = 0; i < r->viol.n; i++)
		if (r->viol.v[i].moved_to && !r->viol.v[i].own_words)
			moved[n++] = r->viol.v[i].path;
	_cleanup_free_ char *line = denial_moved_line(moved, n);
	if (line)
		io->warn(io->arg, line);
	free(moved);
}

void jailreport_notes(const struct launch_result *r, struct hostfacts *hf,
		      const struct backend_io *io)
{
	if (!(r->notes & CTL_NOTE_LOCK) || !hf->home)
		return;
	_cleanup_free_ char *gitconfig = path_join(hf->home, ".gitconfig");
	_cleanup_free_ char *line = denial_gitconfig_line(gitconfig);
	io->warn(io->arg, line);
}
