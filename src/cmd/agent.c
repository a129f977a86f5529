/* agentjail AGENT [POLICY] [-- AGENT-ARGS…], agentjail profiles, and the shim entry points. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/backend/backend.h"
#include "core/host/agentcopy.h"
#include "core/host/agentpaths.h"
#include "core/plan/dirs.h"
#include "core/host/hostfacts_probe.h"
#include "core/plan/profile.h"
#include "core/plan/resolve.h"
#include "core/host/shim.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/uuid.h"

extern char **environ;

int cmd_find_agent(const struct profile *pr, const char *home, const char *cwd,
		   struct resolved *res, struct err *e)
{
	_cleanup_free_ char *self = fs_self_exe();
	int rc = -1;
	for (size_t i = 0; pr->exe[i] && rc < 0; i++) {
		err_clear(e);
		rc = hostfacts_resolve(pr->exe[i], home, cwd, self, res, e);
	}
	return rc;
}

void cmd_agent_missing(const struct profile *pr, const struct err *e)
{
	/* "not found on PATH" says less than the line below: one line then (issue 26) */
	if (e->errnum != ENOENT)
		cmd_print_err(e);
	cmd_warn("%s is not installed where agentjail can see it; install it: %s", pr->exe[0],
		 pr->install);
}

static void warn_dropped(const char *file, const struct strv *dropped)
{
	if (!dropped->n)
		return;
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < dropped->n && i < 20; i++)
		sb_addf(&b, "%s%s", i ? ", " : "", dropped->v[i]);
	if (dropped->n > 20)
		sb_addf(&b, ", … (%zu in all)", dropped->n);
	cmd_warn("changes to %s made in the jail that were NOT merged back (they can start "
		 "commands, trust folders, widen permissions, or are unknown): %s",
		 file, sb_str(&b));
	sb_free(&b);
}

int cmd_agent_run_request(const struct profile *pr, struct run_request *req)
{
	const char *home = getenv("HOME");
	struct strv env = STRV_INIT;
	strv_push_all(&env, environ);
	_cleanup_free_ char *file =
		home && home[0] == '/' ? profile_private_copy_path(pr, home, &env) : NULL;
	strv_free(&env);
	struct stat st;
	/* missing (its directory too: agentpaths_make made it otherwise): nothing is bound there
	 * and what the agent writes stays in the jail's private $HOME */
	if (!req->dry_run && req->pol.fs != FS_DANGER_FULL) {
		/* after the instruction dirs (agent.c) that may hold them; on resume too */
		_cleanup_strv_ struct strv failed = STRV_INIT;
		agentpaths_make_private(pr, &req->pol, &failed);
		for (size_t i = 0; i < failed.n; i++)
			cmd_warn("%s", failed.v[i]);
	}
	if (!file || req->pol.fs == FS_DANGER_FULL || !strv_contains(&req->pol.agent_rw, file) ||
	    (stat(file, &st) < 0 && errno == ENOENT))
		return cmd_run_request(req);
	_cleanup_free_ char *state = dirs_state_dir(getenv("AGENTJAIL_STATE_DIR"),
						      getenv("XDG_STATE_HOME"), home);
	if (req->dry_run) {
		strv_push(&req->pol.agent_copy, file);
		const char *name = path_basename(file);
		strv_push_take(&req->pol.agent_copy,
			       xasprintf("%s/agent-copy/%s.XXXXXX", state,
					 name[0] == '.' ? name + 1 : name));
		return cmd_run_request(req);
	}
	struct err e = {0};
	struct agentcopy c;
	if (agentcopy_make(file, state, pr->copy_rules, &c, &e) < 0) {
		cmd_print_err(&e);
		cmd_warn("%s: the jail needs a private copy of %s; nothing was run", pr->name, file);
		return EXIT_JAIL;
	}
	strv_push(&req->pol.agent_copy, file);
	strv_push(&req->pol.agent_copy, c.copy);
	int rc = cmd_run_request(req);
	strv_free(&req->pol.agent_copy);
	struct strv dropped = STRV_INIT;
	if (agentcopy_finish(&c, &dropped, &e) < 0) {
		cmd_print_err(&e);
		cmd_warn("%s: what %s saved in %s during the run was not merged back", pr->name,
			 pr->name, file);
	}
	warn_dropped(file, &dropped);
	strv_free(&dropped);
	agentcopy_free(&c);
	return rc;
}

static int agent_usage(const struct profile *pr, FILE *f)
{
	fprintf(f,
		"usage: agentjail %s [POLICY] [-- %s-ARGS...]\n"
		"  runs %s in a jail%s%s\n"
		"  POLICY: as for `agentjail run` (agentjail run --help); the network is --net "
		"allow\n"
		"          by default: the profile's domains and your --allow-domain entries only\n"
		"  agentjail profiles %s   shows what is bound and passed\n"
		"example: agentjail %s --rw ~/notes\n",
		pr->name, pr->name, pr->title, pr->skip_flags ? " with " : "",
		pr->skip_flags ? pr->skip_flags[0] : "", pr->name, pr->name);
	return 0;
}

/* Split [POLICY] [-- ARGS]: policy options up to "--" or the first word that is not one. */
static int split_args(const struct profile *pr, int argc, char **argv, int *nopts,
		      struct err *e)
{
	int i = 0;
	while (i < argc) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (a[0] != '-' || !strcmp(a, "-"))
			break;
		int ar = policy_opt_arity(a);
		if (ar < 0) {
			const char *near = policy_opt_closest(a, NULL);
			err_set(e, 0, a, "not an agentjail option");
			err_hint(e, "%s%s%s%s's own arguments go after --: agentjail %s -- %s",
				 near ? "did you mean " : "", near ? near : "", near ? "? " : "",
				 pr->name, pr->name, a);
			return -1;
		}
		i += 1 + ar;
	}
	if (i > argc) {
		err_set(e, 0, argv[argc - 1], "option needs a value");
		return -1;
	}
	*nopts = i;
	return 0;
}

int cmd_agent(const struct profile *pr, int argc, char **argv, bool shim)
{
	if (!shim && argc > 0 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")))
		return agent_usage(pr, stdout);
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	const char *home = getenv("HOME");
	if (!cwd || !home || home[0] != '/') {
		cmd_warn("cannot tell the current directory or $HOME");
		return EXIT_USAGE;
	}
	struct err e = {0};
	int nopts = 0;
	const char *flag = NULL; /* --backend, taken out of the policy options */
	if (!shim && cmd_take_backend(&argc, argv, &flag) < 0)
		return EXIT_USAGE;
	if (!shim && split_args(pr, argc, argv, &nopts, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_USAGE;
	}
	/* policy options, then a placeholder command the real one replaces */
	struct strv pargs = STRV_INIT;
	for (int i = 0; i < nopts; i++)
		strv_push(&pargs, argv[i]);
	strv_push(&pargs, "--");
	strv_push(&pargs, pr->exe[0]);
	struct strv agent_args = STRV_INIT;
	int k = nopts;
	if (!shim && k < argc && !strcmp(argv[k], "--"))
		k++;
	for (; k < argc; k++)
		strv_push(&agent_args, argv[k]);

	struct parse_ctx ctx = {.cwd = cwd,
				.home = home,
				.env_fs = getenv("AGENTJAIL_FS"),
				.env_net = getenv("AGENTJAIL_NET"),
				.env_memory = getenv("AGENTJAIL_MEMORY"),
				.env_pids = getenv("AGENTJAIL_PIDS"),
				.net_default = NET_ALLOW};
	struct run_request req;
	struct cmd_config cc;
	int rc = cmd_config_ctx(&cc, nopts, argv, pr->name, &ctx);
	if (rc) {
		cmd_config_free(&cc);
		strv_free(&pargs);
		strv_free(&agent_args);
		return rc;
	}
	const struct backend *chosen = backend_choose(flag, &cc.cfg);
	if (backend_for_agents(chosen) != chosen) /* it runs where agents run, and says so */
		cmd_warn("%s %s applies to `agentjail run`; %s runs in %s (%s)",
			 flag ? "--backend" : "backend =", chosen->name, pr->name,
			 chosen->caps->agents_instead, chosen->caps->agents_why);
	int parsed = run_parse_args((int)pargs.n, strv_data(&pargs), &ctx, &req, &e);
	if (parsed < 0) {
		cmd_config_free(&cc);
		cmd_print_err(&e);
		strv_free(&pargs);
		strv_free(&agent_args);
		run_request_free(&req);
		return EXIT_USAGE;
	}
	rc = cmd_backend_auto(flag, &cc.cfg, &req, &chosen);
	cmd_config_free(&cc);
	if (rc) {
		strv_free(&pargs);
		strv_free(&agent_args);
		run_request_free(&req);
		return rc;
	}
	req.pol.backend = backend_for_agents(chosen)->id; /* cmd_run_request runs it there */
	if (!shim)
		cmd_scrub_env_values(nopts, argv);
	strv_free(&pargs);
	struct strv env = STRV_INIT;
	strv_push_all(&env, environ);
	profile_apply(pr, home, &env, &req.pol);
	strv_free(&env);

	struct resolved res = {0};
	bool sandboxed = req.pol.fs != FS_DANGER_FULL;
	if (policy_validate(&req.pol, home, &e) < 0) {
		cmd_print_err(&e);
		rc = EXIT_USAGE;
		goto out;
	}
	if (cmd_find_agent(pr, home, cwd, &res, &e) < 0) {
		cmd_agent_missing(pr, &e);
		rc = EXIT_NOTFOUND;
		goto out;
	}
	req.session_id = uuid_v4_new(&e);
	if (!req.session_id) {
		cmd_print_err(&e);
		rc = EXIT_JAIL;
		goto out;
	}
	if (pr->session_flag && !profile_args_choose_session(pr, &agent_args))
		req.agent_session_id = xstrdup(req.session_id);
	strv_push(&req.record_argv, pr->exe[0]);
	strv_copy(&req.record_argv, &agent_args);
	strv_free(&req.cmd);
	profile_argv(pr, res.path, sandboxed, req.session_id, &agent_args, &req.cmd);
	if (!req.dry_run) {
		_cleanup_strv_ struct strv failed = STRV_INIT;
		agentpaths_make(pr, home, &req.pol, &failed);
		if (sandboxed)
			agentpaths_make_dirs(pr, home, environ, &req.pol, &failed);
		for (size_t i = 0; i < failed.n; i++)
			cmd_warn("%s", failed.v[i]);
	}
	rc = cmd_agent_run_request(pr, &req);
out:
	resolved_free(&res);
	strv_free(&agent_args);
	run_request_free(&req);
	return rc;
}

int cmd_shim_in_jail(const char *exe, char **argv)
{
	/* already jailed: the real agent, directly, arguments unchanged */
	const struct profile *pr = profile_by_exe(exe);
	struct err e = {0};
	struct resolved res = {0};
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	const char *home = getenv("HOME");
	if (!pr || cmd_find_agent(pr, home ? home : "/", cwd ? cwd : "/", &res, &e) < 0) {
		if (e.what[0])
			cmd_print_err(&e);
		return EXIT_NOTFOUND;
	}
	execv(res.path, argv);
	int err = errno;
	cmd_warn("cannot run %s: %s", res.path, strerror(err));
	resolved_free(&res);
	return err == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
}
