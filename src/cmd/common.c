#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/plan/dirs.h"
#include "core/plan/suggest.h"
#include "util/cleanup.h"
#include "util/path.h"
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

char *cmd_canonical_dir(const char *dir)
{
	char *r = realpath(dir, NULL);
	if (r)
		return r;
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	return path_normalize(cwd ? cwd : "/", dir);
}

char *cmd_shown_workspace(const char *ws, const char *dir)
{
	if (!ws)
		return xasprintf("? (%s)", path_basename(dir));
	_cleanup_free_ char *w = fmt_clean(ws);
	return access(ws, F_OK) == 0 || errno != ENOENT ? xstrdup(w) : xasprintf("%s (gone)", w);
}

double cmd_mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

int cmd_unknown(const char *cmd, const char *what, const char *arg, const char *const *known)
{
	const char *near = closest_word(arg, known);
	cmd_warn("%s%s%s: %s (%s%s%ssee `agentjail %s%s--help`)", cmd ? cmd : "",
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

bool cmd_confirm(const char *fmt, ...)
{
	if (!isatty(STDIN_FILENO))
		return false;
	va_list ap;
	va_start(ap, fmt);
	char *q = NULL;
	if (vasprintf(&q, fmt, ap) < 0)
		q = NULL;
	va_end(ap);
	char *shown = fmt_clean(q ? q : "?"); /* its paths and names may come from a jail */
	fprintf(stderr, "agentjail: %s [y/N] ", shown);
	free(shown);
	free(q);
	char line[16];
	if (!fgets(line, sizeof line, stdin))
		return false;
	return line[0] == 'y' || line[0] == 'Y';
}
