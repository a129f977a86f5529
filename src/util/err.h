/* err: an error value filled by core functions and printed by the command layer. */
#pragma once
#include <stdarg.h>
#include <stddef.h>

#define WUR __attribute__((warn_unused_result))

/* The exit statuses of agentjail's commands besides the command's own (agentjail(1)): the
 * command layer returns them, and so do the backends' runs (core/backend/backend.h). */
enum {
	EXIT_USAGE = 2,     /* rejected before touching the system */
	EXIT_JAIL = 125,    /* building or starting the jail failed */
	EXIT_NOEXEC = 126,
	EXIT_NOTFOUND = 127,
};

struct err {
	int errnum;        /* errno seen, 0 if none */
	char what[512];    /* what failed, e.g. "cannot open bind source" */
	char path[1024];   /* the offending path or input, may be empty */
	char hint[512];    /* what to do about it, may be empty */
};

/* Fill e (if not NULL). Always returns -1 so callers can `return err_set(...)`. */
int err_set(struct err *e, int errnum, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Add or replace the hint. */
void err_hint(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Add context to an error as it travels up: what becomes "CONTEXT: what" (cut to fit); the
 * path, errno and hint stay. Nothing when e is NULL. */
void err_wrap(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The size of a buffer that holds any formatted error whole: what, path, strerror, hint. */
#define ERR_FMT_MAX (sizeof(((struct err *)0)->what) + sizeof(((struct err *)0)->path) + \
		     sizeof(((struct err *)0)->hint) + 512)
/* "what: path: strerror (hint)" into buf (ERR_FMT_MAX holds it whole). */
void err_format(const struct err *e, char *buf, size_t len);
void err_clear(struct err *e);
