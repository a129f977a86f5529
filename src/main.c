/* agentjail: the command table. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/backend/backend.h"
#include "core/plan/profile.h"
#include "core/plan/suggest.h"
#include "core/host/shim.h"
#include "util/path.h"
#include "util/strv.h"

static const char usage[] =
	"usage: agentjail COMMAND [ARGS]\n"
	"  run [POLICY] [--] CMD [ARG...]   run a command in a jail (agentjail run --help)\n"
	"  verify [POLICY] [--json]         run the integrity battery from inside a jail\n"
	"  doctor [--json]                  what works on this host and how to fix the rest\n"
	"  AGENT [POLICY] [-- ARGS...]      run an agent in a jail: claude, codex, gemini, kiro,\n"
	"                                   pi, opencode, aider (agentjail profiles)\n"
	"  profiles [NAME] [--json]         the agent profiles: flags, binds, variables, domains\n"
	"  shim install|remove|status       `claude` on PATH runs the jailed claude\n"
	"  sessions [--all] [--json]        the recorded sessions of this workspace, newest first\n"
	"  show ID [--json] | rm ID...      one session in full; forget sessions\n"
	"  log [ID | --last] [--follow]     a session's network decisions and violations\n"
	"  net questions|allow|deny ID ...  answer a --net ask session's questions\n"
	"  ps [--json]                      the jails running now: id, pid, age, CPU, memory\n"
	"  exec ID [-- CMD...]              a shell or CMD inside a running jail, as confined\n"
	"  stop ID                          end a running session as if it had finished\n"
	"  quarantine [ID] | restore ITEM   what the jail moved aside; put one back\n"
	"  resume [ID | --last]             run a session again with its stored sandbox\n"
	"  diff [ID] [--stat | --json]      what a --fs review session changed, not yet applied\n"
	"  apply [ID] [PATH...] [--force]   write a review session's changes into the workspace\n"
	"  discard [ID]                     throw a review session's changes away\n"
	"  checkpoint [ID] [NAME]; rollback [ID] NAME   snapshot a review session's changes\n"
	"  tui                              the session manager: list, resume, start, delete\n"
	"  cache [size | clean]             the jails' private caches, per workspace\n"
	"  home [ID | --workspace DIR] [clean]  a workspace's persisted home (--home persist)\n"
	"  config [--json] [--path]         the effective configuration, each value's origin\n"
	"  trust [DIR] | --list; untrust [DIR]  let a project's .agentjail.toml widen the jail\n"
	"  --version                        print the version\n";

/* Subcommands taking the arguments after their name. */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{"run", cmd_run},	    {"doctor", cmd_doctor},   {"verify", cmd_verify},
	{"__probe", cmd_probe},	    {"__rescan", cmd_rescan}, {"sessions", cmd_sessions},
	{"show", cmd_show},	    {"rm", cmd_rm},	      {"resume", cmd_resume},
	{"profiles", cmd_profiles},
	{"shim", cmd_shim},	    {"cache", cmd_cache},     {"log", cmd_log},
	{"config", cmd_config},	    {"trust", cmd_trust},
	{"untrust", cmd_untrust},   {"tui", cmd_tui},	      {"quarantine", cmd_quarantine},
	{"diff", cmd_diff},	    {"apply", cmd_apply},     {"discard", cmd_discard},
	{"checkpoint", cmd_checkpoint}, {"rollback", cmd_rollback},
	{"home", cmd_home},
	{"net", cmd_net},	    {"ps", cmd_ps},	      {"exec", cmd_exec},
	{"stop", cmd_stop},
};

/* One line (issue 26: the whole usage was printed): the nearest command or agent when it is
 * a likely typo, else how to run a program of that name in a jail. */
static int unknown_command(const char *cmd)
{
	struct strv known = STRV_INIT;
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (commands[i].name[0] != '_')
			strv_push(&known, commands[i].name);
	const struct profile *const *all = profile_all();
	for (size_t i = 0; all[i]; i++)
		strv_push(&known, all[i]->name);
	strv_push(&known, "help");
	strv_push(&known, "version");
	strv_push(&known, "--help");
	strv_push(&known, "--version");
	const char *const *k = (const char *const *)strv_data(&known);
	int rc;
	if (cmd[0] == '-' || closest_word(cmd, k))
		rc = cmd_unknown(NULL, cmd[0] == '-' ? "option" : "command", cmd, k);
	else {
		cmd_warn("unknown command: %s (to run it in a jail: agentjail run -- %s; see "
			 "`agentjail --help`)",
			 cmd, cmd);
		rc = EXIT_USAGE;
	}
	strv_free(&known);
	return rc;
}

/* Started with fd 0, 1 or 2 closed, the next descriptor agentjail opens would take its place
 * and be handed on as a standard stream: e.g. agentjail exec's own end of its channel to init
 * given to the jail as the command's stdin. /dev/null fills them. */
static int std_fds_open(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
		    open("/dev/null", O_RDWR | O_NOCTTY) != fd) /* the lowest free one: fd */
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	if (std_fds_open() < 0) {
		static const char msg[] = "agentjail: a standard stream (fd 0, 1 or 2) is closed and "
					  "/dev/null cannot be opened in its place; nothing was run\n";
		if (write(2, msg, sizeof msg - 1) < 0) {
			/* stderr is the closed one: the exit status alone says it */
		}
		return EXIT_JAIL;
	}
	backend_keep_argv(argc, argv); /* --backend opensandbox execs agentjail-remote with it */
	/* a relative state directory would be relative to wherever agentjail runs: refused */
	const char *sd = getenv("AGENTJAIL_STATE_DIR");
	if (sd && sd[0] && sd[0] != '/') {
		cmd_warn("AGENTJAIL_STATE_DIR must be an absolute path: %s", sd);
		return EXIT_USAGE;
	}
	/* invoked through a shim (a link named like an agent): every argument is the agent's */
	/* a shim of a user profile ([profile.NAME] of the configuration) needs it loaded */
	if (strncmp(path_basename(argv[0]), "agentjail", 9) && !shim_in_jail()) {
		int rc = cmd_config_profiles();
		if (rc)
			return rc;
	}
	const struct profile *shim = shim_profile(argv[0]);
	if (shim) {
		if (shim_in_jail())
			return cmd_shim_in_jail(path_basename(argv[0]), argv);
		return cmd_agent(shim, argc - 1, argv + 1, true);
	}
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].fn(argc - 2, argv + 2);
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version"))
		return cmd_version();
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	int crc = cmd_config_profiles(); /* [profile.NAME] may add an agent or shadow one */
	if (crc)
		return crc;
	const struct profile *pr = profile_find(cmd);
	if (pr && !strcmp(pr->name, cmd))
		return cmd_agent(pr, argc - 2, argv + 2, false);
	return unknown_command(cmd);
}
