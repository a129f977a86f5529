/* cmd_warn: one line on stderr, prefixed "agentjail: ". A file of its own so the jail's small
 * init (src/init_main.c, `__connect`) links it without the rest of the command layer. */
#include <stdarg.h>
#include <stdio.h>

#include "cmd/cmd.h"

void cmd_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("agentjail: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
