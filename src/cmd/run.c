/* agentjail run [POLICY] [--] CMD [ARG…] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/backend/backend.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/termtext.h"

static const char usage[] =
	"usage: agentjail run [POLICY] [--] CMD [ARG...]\n"
	"POLICY:\n"
	"  --fs read-only|workspace-write|danger-full-access   (ro|rw|full; default rw)\n"
	"  --net off|on|allow|ask       network (default off): on is the host's; allow only\n"
	"                               through agentjail's proxy to the listed domains; ask\n"
	"                               is allow, asking you about the rest (agentjail net)\n"
	"  --ask-timeout SECONDS        --net ask: deny a question not answered by then (60)\n"
	"  --publish [HOSTPORT:]PORT    the jail's loopback port PORT on the host's\n"
	"                               127.0.0.1:HOSTPORT (--net off or allow)\n"
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
	"  --home tmp|persist           $HOME: empty each run (tmp, the default), or this\n"
	"                               workspace's own, kept in agentjail's state between runs\n"
	"                               (never the real home; agentjail home shows or cleans it)\n"
	"  --dry-run                    print the jail (bwrap argv) and run nothing\n"
	"  --quiet                      no start and end lines (printed on a terminal only),\n"
	"                               no --net allow banner\n"
	"  --backend local|landlock|auto|opensandbox\n"
	"                               where it runs: local, the bwrap jail (default);\n"
	"                               landlock: no namespaces, Landlock + seccomp only (weaker);\n"
	"                               auto: local where it can be built, else landlock (said)\n"
	"                               opensandbox: a sandbox of the [opensandbox] service, no\n"
	"                               terminal, no stdin\n"
	"exit: the command's status (128+N for signal N); 2 rejected; 125 jail failed;\n"
	"      126/127 command not executable / not found\n"
	"example: agentjail run --net allow --allow-domain pypi.org -- pip install requests\n";

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
	const struct backend *b = backend_choose(backend, &cc.cfg); /* once: called through after */
	int parsed = run_parse_args(argc, argv, &ctx, &req, &e);
	if (parsed == 0)
		cmd_scrub_env_values(argc - (int)req.cmd.n, argv); /* the command's own args stay */
	if (parsed < 0 || policy_validate(&req.pol, ctx.home, &e) < 0) {
		cmd_print_err(&e);
		rc = EXIT_USAGE;
	} else if ((rc = cmd_backend_auto(backend, &cc.cfg, &req, &b)) != 0) {
		/* said */
	} else if (!backend_here(b)) {
		cmd_warn("agentjail-remote runs only --backend opensandbox; a local jail is `agentjail run`");
		rc = EXIT_USAGE;
	} else {
		_cleanup_free_ char *by = cmd_backend_chosen_by(backend, &cc.cfg);
		rc = cmd_backend_run(b, &req, &cc.cfg, by);
	}
	run_request_free(&req);
	cmd_config_free(&cc);
	free(cwd);
	return rc;
}
