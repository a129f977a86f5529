/* agentjail-remote: the opensandbox backend (doc/design.md §4b, §7), a program of its own
 * because it links libcurl dynamically and agentjail is static. agentjail execs it with its own
 * argv (`agentjail run --backend opensandbox …`, `agentjail resume ID`) and environment; it
 * runs the same command, whose remote backend is linked here (src/core/backend/remote/osbrun.c:
 * backend_opensandbox runs the sandbox itself, and no other backend runs here). doctor runs
 * `agentjail-remote __doctor-opensandbox`. Installed at PREFIX/libexec/agentjail/remote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{"run", cmd_run},
	{"resume", cmd_resume},
	{"__doctor-opensandbox", cmd_osb_doctor},
};

int main(int argc, char **argv)
{
	const char *sd = getenv("AGENTJAIL_STATE_DIR");
	if (sd && sd[0] && sd[0] != '/') {
		cmd_warn("AGENTJAIL_STATE_DIR must be an absolute path: %s", sd);
		return EXIT_USAGE;
	}
	if (argc >= 2)
		for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].fn(argc - 2, argv + 2);
	fputs("usage: agentjail-remote run|resume ARGS... (agentjail runs it for --backend "
	      "opensandbox; see agentjail(1))\n",
	      stderr);
	return EXIT_USAGE;
}
