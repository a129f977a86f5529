/* agentjail doctor — placeholder until the doctor module lands. */
#include <stdio.h>

#include "cmd/cmd.h"

int cmd_doctor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "agentjail: doctor is not available in this build yet\n");
	return EXIT_USAGE;
}
