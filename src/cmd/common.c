#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/plan/dirs.h"
#include "core/plan/suggest.h"

void cmd_print_err(const struct err *e)
{
	char buf[ERR_FMT_MAX];
	err_format(e, buf, sizeof buf);
	fprintf(stderr, "agentjail: %s\n", buf);
}

int cmd_unknown(const char *cmd, const char *what, const char *arg, const char *const *known)
{
	const char *near = closest_word(arg, known);
	fprintf(stderr, "agentjail: %s%s%s: %s (%s%s%ssee `agentjail %s%s--help`)\n", cmd ? cmd : "",
		cmd ? ": unknown " : "unknown ", what, arg, near ? "did you mean " : "",
		near ? near : "", near ? "? " : "", cmd ? cmd : "", cmd ? " " : "");
	return EXIT_USAGE;
}

bool cmd_colour(int fd)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");
	return isatty(fd) && !(nc && *nc) && !(term && !strcmp(term, "dumb"));
}

char *cmd_state_dir(void)
{
	const char *home = getenv("HOME");
	return dirs_state_dir(getenv("AGENTJAIL_STATE_DIR"), getenv("XDG_STATE_HOME"),
			      home && home[0] == '/' ? home : "/");
}
