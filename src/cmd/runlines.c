/* runlines: the start and end lines of a jailed session (see runlines.h). */
#include "cmd/runlines.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backend/backend.h"
#include "util/cleanup.h"
#include "util/termtext.h"

bool runlines_wanted(const struct run_request *req)
{
	return !req->quiet && !req->dry_run && isatty(STDERR_FILENO);
}

void runlines_start(const struct run_request *req)
{
	if (!runlines_wanted(req))
		return;
	const struct policy *p = &req->pol;
	/* what the backend is called and keeps private (the Landlock backend: no private ~) */
	const struct backend_caps *caps = backend_by_id(p->backend)->caps;
	_cleanup_free_ char *ws = fmt_clean(p->workspace ? p->workspace : "(none)");
	fprintf(stderr, "agentjail: %s %s%sfs %s, net %s, workspace %s, session %s; %s\n",
		caps->noun, p->profile ? p->profile : "", p->profile ? " " : "",
		fs_mode_name(p->fs), p->ask ? "ask" : net_mode_name(p->net), ws,
		req->session_id ? req->session_id : "(none)", caps->private_note);
	(void)fflush(stderr);
}

void runlines_end(const struct run_request *req, int status, int sig, bool interrupted,
		  size_t moved)
{
	if (req->dry_run || !isatty(STDERR_FILENO))
		return;
	bool intr = interrupted || sig == SIGINT;
	if (intr)
		fputc('\n', stderr); /* after the echoed ^C */
	if (req->quiet) {
		(void)fflush(stderr);
		return;
	}
	char st[64];
	if (sig)
		snprintf(st, sizeof st, "killed by SIG%s (status %d)",
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", status);
	else
		snprintf(st, sizeof st, "exited %d", status);
	fprintf(stderr, "agentjail: end: %s%s, session %s", st, interrupted ? ", interrupted" : "",
		req->session_id ? req->session_id : "(none)");
	if (moved)
		fprintf(stderr, "; %zu violation%s moved aside (agentjail show %s)", moved,
			moved == 1 ? "" : "s", req->session_id ? req->session_id : "ID");
	fputc('\n', stderr);
	(void)fflush(stderr);
}
