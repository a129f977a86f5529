/* askprompt: --net ask's question on the terminal that started the run (doc/design.md §4, "Ask
 * instead of fail"), the host side of core/plan/askterm.h. supervise runs it: when the run
 * has a question open and agentjail holds the terminal (its foreground, raw, the jail's
 * output going there), the relay is held — the user's keys no longer go to the jail, the
 * jail's output no longer comes out — once what was read of it is written, the question is
 * drawn, and the keys read then answer it. On the main screen the question takes the
 * alternate screen and leaving it gives the screen back as it was; over a full-screen program
 * (on the alternate screen already) it takes the last line, and the program is made to redraw
 * by a change of its pty's size, there and back. Keys typed in the first 300 ms are dropped:
 * what the person typed for the program is not taken as an answer. */
#pragma once
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/jail/pty.h"
#include "core/plan/askterm.h"

/* What the run asks the person (the command layer's; see supervise.h). */
struct askprompt_src {
	/* the question to put to the person now (not one put aside with Esc), or false */
	bool (*question)(void *arg, const uint64_t *later, size_t nlater, struct net_question *q);
	void (*answered)(void *arg, uint64_t id, enum ask_answer a); /* from the keys */
	const char *session;                                         /* for the hint */
	void *arg;
};

#define ASKPROMPT_LATER_MAX 64

struct askprompt {
	const struct askprompt_src *src;
	int st;                     /* idle, waiting for the relay to flush, shown */
	struct net_question q;
	bool alt;                   /* drawn over a full-screen program (its last line) */
	int rows, cols;
	long long shown_ms, drawn_s;
	struct askkeys keys;
	struct ttyscan scan;        /* the screen the jail's output left */
	uint64_t later[ASKPROMPT_LATER_MAX];
	size_t nlater;
	long long regrow_ms;        /* a full-screen program shrunk by a line: grow it back then */
};

void askprompt_init(struct askprompt *a, const struct askprompt_src *src);
/* The relay's `seen` hook: what the terminal is sent. */
void askprompt_seen(void *arg, const char *buf, size_t n);
/* One turn of supervise's loop, after poll: can — agentjail holds the terminal now (its
 * foreground, raw mode, the relay writing to a terminal); in — in_fd's poll result when the
 * question is shown (askprompt_fill asked for it). Returns the poll timeout it needs next
 * (ms), or -1. */
int askprompt_step(struct askprompt *a, struct pty_relay *r, int in_fd, int tty_fd, int master,
		   bool can, const struct pollfd *in);
/* While shown, the user's input is askprompt's: its pollfd (fd -1 otherwise). */
struct pollfd askprompt_fill(const struct askprompt *a, int in_fd);
/* The window changed size: redraw. */
void askprompt_resized(struct askprompt *a);
/* The run ends: take the question away, give the relay back. */
void askprompt_end(struct askprompt *a, struct pty_relay *r, int tty_fd, int master);
