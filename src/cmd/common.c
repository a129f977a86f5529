#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/plan/dirs.h"
#include "util/termtext.h"
#include "util/xalloc.h"

void cmd_print_err(const struct err *e)
{
	char buf[ERR_FMT_MAX];
	err_format(e, buf, sizeof buf);
	cmd_warn_line(buf);
}

void cmd_put_text(FILE *f, const char *text)
{
	for (const char *p = text ? text : ""; *p;) {
		size_t n = strcspn(p, "\t\n");
		char *piece = xstrndup(p, n);
		char *c = fmt_clean(piece);
		fputs(c, f);
		free(c);
		free(piece);
		p += n;
		if (*p)
			fputc(*p++, f);
	}
}

char *cmd_state_dir(void)
{
	const char *home = getenv("HOME");
	return dirs_state_dir(getenv("AGENTJAIL_STATE_DIR"), getenv("XDG_STATE_HOME"),
			      home && home[0] == '/' ? home : "/");
}
