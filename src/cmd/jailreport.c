/* jailreport: the sandbox's share in a failed jailed run, in one line (jailreport.h). */
#include "cmd/jailreport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/plan/bwrapmsg.h"
#include "core/plan/denial.h"
#include "core/plan/resolve.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

bool jailreport_bwrap(const struct launch_result *r)
{
	const char *text = r->bwrap_stderr;
	if (!text)
		return false;
	size_t n = strlen(text);
	cmd_put_text(stderr, text); /* it may name a path in the workspace */
	if (n && text[n - 1] != '\n')
		fputc('\n', stderr);
	(void)fflush(stderr);
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
	cmd_warn("the jail could not be built: %s; fix: %s; nothing was run", m.cause, m.fix);
	return true;
}

/* init could not find the command in the jail: does the host have it? */
static void not_in_view(struct hostfacts *hf, const struct strv *cmd)
{
	struct resolved res = {0};
	struct err e = {0};
	if (resolve_command(hf, cmd->v[0], hf_getenv(hf, "PATH"), hf->self_exe, &res, &e) == 0 &&
	    res.path) {
		_cleanup_free_ char *dir = path_dirname(res.path);
		/* an interpreter in the system directories is in the jail's view */
		const char *interp =
			res.interp && resolve_needs_showing(hf, res.interp) ? res.interp : NULL;
		_cleanup_free_ char *idir = interp ? path_dirname(interp) : NULL;
		_cleanup_free_ char *line =
			denial_not_in_view(cmd->v[0], res.path, dir, interp, idir);
		cmd_warn("%s", line);
	}
	resolved_free(&res);
}

void jailreport_failure(const struct launch_result *r, int status, struct hostfacts *hf,
			const struct strv *cmd)
{
	if (!r->started || status == 0 || r->term_signal)
		return; /* ended by agentjail's own SIGTERM/SIGINT/SIGHUP: not the sandbox's doing */
	if (status == EXIT_NOTFOUND && (r->exec_errno == ENOENT || r->exec_errno == ENOTDIR) &&
	    cmd->n)
		not_in_view(hf, cmd);
	/* what the jail moved aside is the evidence: without it, a failure is the command's */
	const char **moved = xcalloc(r->viol.n + 1, sizeof *moved);
	size_t n = 0;
	for (size_t i = 0; i < r->viol.n; i++)
		if (r->viol.v[i].moved_to && !r->viol.v[i].own_words)
			moved[n++] = r->viol.v[i].path;
	_cleanup_free_ char *line = denial_moved_line(moved, n);
	if (line)
		cmd_warn("%s", line);
	free(moved);
}
