#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "core/plan/dirs.h"

void cmd_print_err(const struct err *e)
{
	char buf[ERR_FMT_MAX];
	err_format(e, buf, sizeof buf);
	fprintf(stderr, "agentjail: %s\n", buf);
}

char *cmd_state_dir(void)
{
	const char *home = getenv("HOME");
	return dirs_state_dir(getenv("AGENTJAIL_STATE_DIR"), getenv("XDG_STATE_HOME"),
			      home && home[0] == '/' ? home : "/");
}
