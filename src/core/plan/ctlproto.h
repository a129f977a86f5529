/* ctlproto: the protocol of a running session's control socket (doc/design.md §5, "The control
 * socket"). Pure: parsing and writing its lines; the socket is core/jail/ctlsock.c.
 *
 * One request a line, "AJ<VERSION> VERB [ARG]...", LF-terminated, at most CTLPROTO_LINE_MAX
 * bytes; words of printable ASCII (0x21-0x7e) separated by one space each, at most
 * CTLPROTO_ARGS_MAX arguments of at most CTLPROTO_WORD_MAX bytes. The reply: a line "ok [...]"
 * or "err WORDS", and after "ok list N", N lines. A server answers a version it does not
 * speak with "err version ...", so a later client learns at once what an older agentjail
 * speaks. Version 1's verbs:
 *   ping                          → ok agentjail 1 SESSION-ID
 *   questions                     → ok list N, then N question lines
 *                                   (ctlproto_question_format)
 *   answer QID|ENTRY ANSWER FROM  → ok answered N (questions); ANSWER once|session|always|
 *                                   deny; ENTRY (an allow_domains entry) also answers the
 *                                   requests to come, but for once; FROM: who asks (tui, net)
 *                                   (questions and answer: under --net ask only)
 *   ps                            → ok jail PID running|stopping (ctlproto_jail_parse): PID
 *                                   the jail's first process on the host, 0 while it starts
 *   exec                          → ok exec; four fds come with the line (SCM_RIGHTS): an exec
 *                                   channel's jail end (core/plan/execwire.h) and the
 *                                   command's stdin, stdout, stderr
 *   stop                          → ok stopping: the run ends as on SIGTERM
 * Unknown verbs get "err verb ...". */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/plan/netask.h"

#define CTLPROTO_VERSION 1
#define CTLPROTO_LINE_MAX 1024
#define CTLPROTO_ARGS_MAX 8
#define CTLPROTO_WORD_MAX 300
#define CTLPROTO_LIST_MAX 256 /* lines after "ok N" */

struct ctl_req {
	int version;
	const char *verb;                    /* into buf */
	const char *args[CTLPROTO_ARGS_MAX]; /* into buf */
	int nargs;
	char buf[CTLPROTO_LINE_MAX + 1];
};

/* One request line (without its LF). -1 with *why (a static string) on anything else: an empty
 * line, another prefix, a version that is not a number, a control or non-ASCII byte, two
 * spaces, too many or too long words. A version the server does not speak parses (version
 * says it); the caller answers it. */
int ctlproto_parse(const char *line, size_t len, struct ctl_req *out, const char **why) WUR;

/* A question as one line of the "questions" list:
 *   q ID ENTRY HOST PORT PROTO ASKED-MS DEADLINE-MS
 * and back. -1 when the line is not one (or a field is out of range). */
int ctlproto_question_format(const struct net_question *q, char *out, size_t cap);
int ctlproto_question_parse(const char *line, size_t len, struct net_question *q) WUR;

/* A reply's first line: 1 "ok" (*rest: what follows "ok "; *n: the lines that follow "ok list
 * N", else 0), 0 "err" (*rest: its words), -1 neither. */
int ctlproto_reply_head(const char *line, long *n, const char **rest) WUR;

/* The words after "ok " of the reply to ps: "jail PID running|stopping". -1 when it is not
 * that. */
int ctlproto_jail_parse(const char *rest, long *pid, bool *stopping) WUR;

/* Whether s is a word of the protocol (printable ASCII, no space, 1..CTLPROTO_WORD_MAX). */
bool ctlproto_word_ok(const char *s);
