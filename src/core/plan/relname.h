/* relname: a relative name agentjail did not choose, judged before anything is written under
 * it: what a remote sandbox lists (core/backend/remote/osb_names.h) and what a --fs review
 * change set holds (core/plan/review.h). Pure.
 *
 * One check decides every such name: a plain relative path — no leading '/', no empty, "." or
 * ".." component, no NUL or control character, not too long — or the name is refused whole
 * (never rewritten into something acceptable). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define RELNAME_MAX 4096          /* bytes in a name (PATH_MAX) */
#define RELNAME_COMPONENT_MAX 255 /* bytes in one component (NAME_MAX) */

enum relname_fault {
	RELNAME_OK,
	RELNAME_EMPTY,     /* "" */
	RELNAME_ABSOLUTE,  /* "/x" */
	RELNAME_EMPTY_DIR, /* an empty component: "a//b", "a/" */
	RELNAME_DOT,       /* a "." component: "./a", "a/./b" */
	RELNAME_DOTDOT,    /* a ".." component */
	RELNAME_NUL,       /* a NUL byte inside */
	RELNAME_CONTROL,   /* a control character: C0 (newline, escape…), DEL, C1 */
	RELNAME_LONG,      /* longer than RELNAME_MAX, or a component longer than
			    * RELNAME_COMPONENT_MAX */
};

/* The n bytes at s as a plain relative name: RELNAME_OK, or the first fault found. When aim
 * is not NULL it gets (malloc'd) where the name points once its empty, "." and ".." components
 * are resolved lexically (".//.git/hooks/x" → ".git/hooks/x"), for saying what a refused name
 * was after; NULL when it has a NUL or control character, is too long, or names the top
 * itself. Never use *aim to write: a refused name is refused. */
enum relname_fault relname_check(const char *s, size_t n, char **aim);
/* Why, in words ("an empty component"). */
const char *relname_fault_str(enum relname_fault f);
/* s (n bytes) for a message: in double quotes, every byte outside printable ASCII, '"' and '\'
 * written as an escape (\n, \t, \xHH, \", \\), cut after 200 bytes with "…". */
char *relname_shown(const char *s, size_t n);

/* The directories D such that rel is D/N… with N one of the names in a git dir that make git
 * run a command (gitprotect's git_exec_names: config, hooks, info, …); "" for the top. They
 * are that only when D is shaped like a git dir (D/HEAD exists): the caller asks. Fills up to
 * max lengths of D (0 for the top) into lens; returns how many. */
size_t relname_exec_dirs(const char *rel, size_t *lens, size_t max);
