/* agentjail verify / __probe — placeholder until the battery lands. */
#include <stdio.h>

#include "cmd/cmd.h"

int cmd_verify(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "agentjail: verify is not available in this build yet\n");
	return EXIT_USAGE;
}

int cmd_probe(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "agentjail: __probe is not available in this build yet\n");
	return EXIT_USAGE;
}
