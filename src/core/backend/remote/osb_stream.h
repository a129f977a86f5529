/* osb_stream: the OpenSandbox command stream (doc/design.md §4b), parsed as it arrives. Pure.
 *
 * execd answers POST /command with events, each one line of JSON and a blank line, no `data:`
 * prefix; SSE's `data: {…}` form is accepted too, as the official SDKs accept it. A read may end
 * anywhere, inside an event or a UTF-8 sequence: bytes are kept until their line is whole.
 * Comment (`:`), `event:`, `id:` and `retry:` lines and lines that are not a JSON object are
 * skipped. A line longer than OSB_LINE_MAX is an error (a hostile or broken service cannot make
 * the client hold unbounded memory). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"
#include "util/strbuf.h"

#define OSB_LINE_MAX (8u << 20)

enum osb_ev { OSB_EV_INIT, OSB_EV_STDOUT, OSB_EV_STDERR, OSB_EV_PING, OSB_EV_COMPLETE,
	      OSB_EV_ERROR, OSB_EV_OTHER };

struct osb_event {
	enum osb_ev type;
	const char *type_name; /* as sent */
	const char *text;      /* init: the command id; stdout/stderr: one line, no line ending
				* ("\n" for an empty line); NULL when absent */
	long long timestamp;   /* ms, 0 when absent */
	const char *ename, *evalue; /* error: CommandExecError and the exit code as a string */
};

/* Called once per event; a negative return stops the parse (osb_stream_feed returns it). */
typedef int (*osb_event_fn)(void *arg, const struct osb_event *ev);

struct osb_stream {
	struct strbuf line; /* the unfinished line */
	size_t events;      /* events delivered */
	bool ended;         /* an end event (execution_complete or error) was seen */
};

void osb_stream_init(struct osb_stream *s);
void osb_stream_free(struct osb_stream *s);
/* Feed n bytes; fn for each whole event. -1 with e on an overlong line; fn's negative return. */
int osb_stream_feed(struct osb_stream *s, const char *buf, size_t n, osb_event_fn fn, void *arg,
		    struct err *e) WUR;
/* End of input: the last line even without its newline. */
int osb_stream_finish(struct osb_stream *s, osb_event_fn fn, void *arg, struct err *e) WUR;

/* The exit status of an end event, as agentjail reports it: execution_complete 0; an error
 * whose evalue is 0..255 that status; -1 (execd killed it: its timeout or an interrupt) 137,
 * 128 + SIGKILL; anything else (the command never started) 127. *why (malloc'd) explains the
 * last two, NULL otherwise. */
int osb_exit_status(const struct osb_event *end, char **why);
