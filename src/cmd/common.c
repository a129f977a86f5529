#include <stdarg.h>
#include <stdio.h>

#include "cmd/cmd.h"

void cmd_print_err(const struct err *e)
{
	char buf[2600];
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
