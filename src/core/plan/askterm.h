/* askterm: `--net ask`'s question on the terminal that started the run (doc/design.md §4, "Ask
 * instead of fail"). Pure: the bytes that draw and take away the question, the decoder of the
 * person's keys, and the scanner that tells whether the jail's program is on the alternate
 * screen (a full-screen program) — the host side (core/jail/askprompt.c) writes and reads.
 *
 * The answer is taken only from keys agentjail reads from the real terminal while it shows the
 * question itself, with the jail's input and output held: the jail can print text that looks
 * like the question, but what it writes goes to its own pty's output, never to agentjail's
 * input. What a terminal sends back on its own (replies to queries the jail may have printed
 * before: a cursor position, a device attribute) begins with ESC and is skipped whole. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/plan/netask.h"

/* What the jail's output did to the terminal's screen so far. Feed every byte the terminal is
 * sent, in order; sequences may be split across calls. */
struct ttyscan {
	int st;             /* parser state */
	unsigned param;     /* the parameter being read */
	bool priv;          /* a DEC private sequence (CSI ?) */
	unsigned params[8]; /* its parameters so far */
	int nparams;
	bool alt;           /* on the alternate screen (DEC modes 1049, 1047, 47 set) */
};
void ttyscan_feed(struct ttyscan *t, const char *buf, size_t n);

/* The keys of the person, read while the question is shown. */
enum askkey { AK_NONE, AK_ONCE, AK_SESSION, AK_ALWAYS, AK_DENY, AK_LATER };
struct askkeys {
	int st; /* inside an escape sequence (skipped whole) */
};
/* The first key of buf that answers (o once, s session, a always, d or n deny, Ctrl-C deny;
 * Esc alone in its read: later, the question stays open for `agentjail net` and the TUI);
 * AK_NONE when none does. Escape sequences are skipped, across calls too. */
enum askkey askkeys_feed(struct askkeys *k, const char *buf, size_t n);
/* AK_* → the answer (AK_ONCE … AK_DENY). */
enum ask_answer askkey_answer(enum askkey k);

/* The question drawn on a rows×cols terminal. On the main screen (alt false) it takes the
 * alternate screen (saving the cursor; leaving it gives the screen back as it was); on the
 * alternate screen, a full-screen program's, it takes the last line (saving the cursor).
 * first: the whole drawing (later calls redraw the text, its time left). session: for the
 * hint. left_s: seconds until it is denied. Allocated, *len bytes. */
char *askterm_draw(const struct net_question *q, const char *session, int rows, int cols,
		   bool alt, bool first, long long left_s, size_t *len);
/* The question taken away: the main screen back, or the last line cleared and the cursor
 * back (the program then redraws: askprompt resizes its pty). Allocated, *len bytes. */
char *askterm_undraw(int rows, bool alt, size_t *len);
