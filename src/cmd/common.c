#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

bool cmd_confirm(const char *fmt, ...)
{
	if (!isatty(STDIN_FILENO))
		return false;
	va_list ap;
	va_start(ap, fmt);
	fputs("agentjail: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(" [y/N] ", stderr);
	va_end(ap);
	char line[16];
	if (!fgets(line, sizeof line, stdin))
		return false;
	return line[0] == 'y' || line[0] == 'Y';
}
