#include <stdarg.h>
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

void cmd_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("agentjail: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

char *cmd_state_dir(void)
{
	const char *home = getenv("HOME");
	return dirs_state_dir(getenv("AGENTJAIL_STATE_DIR"), getenv("XDG_STATE_HOME"),
			      home && home[0] == '/' ? home : "/");
}
