/* cmd_warn: one line on stderr, prefixed "agentjail: ". A file of its own so the jail's small
 * init (src/init_main.c, `__connect`) links it without the rest of the command layer. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "util/termtext.h"

void cmd_warn_line(const char *text)
{
	char *c = fmt_clean(text);
	fprintf(stderr, "agentjail: %s\n", c);
	free(c);
}

void cmd_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = NULL;
	int n = vasprintf(&text, fmt, ap);
	va_end(ap);
	cmd_warn_line(n < 0 ? "(a message that could not be formatted)" : text);
	free(text);
}
