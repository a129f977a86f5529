/* agentjail: the command table. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/init.h"

#define AGENTJAIL_VERSION "0.1.0"

static const char usage[] =
	"usage: agentjail COMMAND [ARGS]\n"
	"  run [POLICY] [--] CMD [ARG...]   run a command in a jail (agentjail run --help)\n"
	"  verify [POLICY] [--json]         run the integrity battery from inside a jail\n"
	"  doctor [--json]                  what works on this host and how to fix the rest\n"
	"  --version                        print the version\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "__init"))
		return init_main(argc, argv);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(cmd, "doctor"))
		return cmd_doctor(argc - 2, argv + 2);
	if (!strcmp(cmd, "verify"))
		return cmd_verify(argc - 2, argv + 2);
	if (!strcmp(cmd, "__probe"))
		return cmd_probe(argc - 2, argv + 2);
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("agentjail %s\n", AGENTJAIL_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	fprintf(stderr, "agentjail: unknown command: %s\n%s", cmd, usage);
	return EXIT_USAGE;
}
