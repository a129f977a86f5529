/* askterm: see askterm.h. */
#include "core/plan/askterm.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/termtext.h"
#include "util/xalloc.h"

#define ESC '\033'

/* ---- the jail's output: the alternate screen ---- */

enum { TS_TEXT, TS_ESC, TS_CSI, TS_STR, TS_STR_ESC };

static void csi_done(struct ttyscan *t, char final)
{
	if (t->nparams < 8)
		t->params[t->nparams++] = t->param;
	if (t->priv && (final == 'h' || final == 'l'))
		for (int i = 0; i < t->nparams; i++)
			if (t->params[i] == 1049 || t->params[i] == 1047 || t->params[i] == 47)
				t->alt = final == 'h';
}

void ttyscan_feed(struct ttyscan *t, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		switch (t->st) {
		case TS_TEXT:
			if (c == ESC)
				t->st = TS_ESC;
			else if (c == 0x9b) /* an 8-bit CSI */
				t->st = TS_CSI, t->param = 0, t->priv = false, t->nparams = 0;
			break;
		case TS_ESC:
			if (c == '[') {
				t->st = TS_CSI;
				t->param = 0;
				t->priv = false;
				t->nparams = 0;
			} else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
				t->st = TS_STR; /* OSC, DCS, SOS, PM, APC: to BEL or ST */
			} else if (c == 'c') {
				t->alt = false; /* a full reset: the main screen */
				t->st = TS_TEXT;
			} else {
				t->st = c == ESC ? TS_ESC : TS_TEXT;
			}
			break;
		case TS_CSI:
			if (c >= '0' && c <= '9') {
				if (t->param < 100000)
					t->param = t->param * 10 + (c - '0');
			} else if (c == ';') {
				if (t->nparams < 8)
					t->params[t->nparams++] = t->param;
				t->param = 0;
			} else if (c == '?') {
				t->priv = true;
			} else if (c >= 0x40 && c <= 0x7e) {
				csi_done(t, (char)c);
				t->st = TS_TEXT;
			} else if (c == ESC) {
				t->st = TS_ESC; /* cut off: a new sequence */
			} else if (c < 0x20 || c > 0x3f) {
				t->st = TS_TEXT; /* not a CSI after all */
			}
			break;
		case TS_STR:
			if (c == 0x07)
				t->st = TS_TEXT;
			else if (c == ESC)
				t->st = TS_STR_ESC;
			break;
		case TS_STR_ESC:
			t->st = c == '\\' ? TS_TEXT : c == ESC ? TS_STR_ESC : TS_STR;
			break;
		}
	}
}

/* ---- the person's keys ---- */

enum { AKS_TEXT, AKS_ESC, AKS_CSI, AKS_SS3, AKS_STR, AKS_STR_ESC };

enum askkey askkeys_feed(struct askkeys *k, const char *buf, size_t n)
{
	if (n == 1 && buf[0] == ESC && k->st == AKS_TEXT)
		return AK_LATER; /* the Esc key: a read of its own (a terminal's reply never is) */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		switch (k->st) {
		case AKS_TEXT:
			if (c == ESC) {
				k->st = AKS_ESC;
				continue;
			}
			if (c == 0x9b) {
				k->st = AKS_CSI;
				continue;
			}
			switch (c) {
			case 'o': case 'O': return AK_ONCE;
			case 's': case 'S': return AK_SESSION;
			case 'a': case 'A': return AK_ALWAYS;
			case 'd': case 'D': case 'n': case 'N': case 0x03: return AK_DENY;
			default: break;
			}
			break;
		case AKS_ESC:
			k->st = c == '[' ? AKS_CSI
				: c == 'O' ? AKS_SS3
				: c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_' ? AKS_STR
				: c == ESC ? AKS_ESC
					   : AKS_TEXT; /* ESC + a key: Alt-key, not an answer */
			break;
		case AKS_CSI:
			if (c >= 0x40 && c <= 0x7e)
				k->st = AKS_TEXT;
			else if (c == ESC)
				k->st = AKS_ESC;
			break;
		case AKS_SS3:
			k->st = AKS_TEXT; /* one more byte: F1-F4, keypad */
			break;
		case AKS_STR:
			if (c == 0x07)
				k->st = AKS_TEXT;
			else if (c == ESC)
				k->st = AKS_STR_ESC;
			break;
		case AKS_STR_ESC:
			k->st = c == '\\' ? AKS_TEXT : c == ESC ? AKS_STR_ESC : AKS_STR;
			break;
		}
	}
	return AK_NONE;
}

enum ask_answer askkey_answer(enum askkey k)
{
	return k == AK_ONCE ? ASK_ONCE : k == AK_SESSION ? ASK_SESSION
				     : k == AK_ALWAYS	 ? ASK_ALWAYS
							 : ASK_DENY;
}

/* ---- drawing ---- */

static void line_at(struct strbuf *b, int row, const char *text, int cols, bool reverse)
{
	sb_addf(b, "\033[%d;1H\033[2K", row);
	if (reverse)
		sb_add(b, "\033[7m");
	char *cut = fmt_cut(text, cols > 1 ? (size_t)cols - 1 : 1);
	sb_add(b, cut);
	free(cut);
	if (reverse)
		sb_add(b, "\033[0m");
}

static char *what_of(const struct net_question *q)
{
	struct strbuf b = STRBUF_INIT;
	char *host = fmt_clean(q->host);
	if (q->port)
		sb_addf(&b, strchr(host, ':') ? "[%s]:%u (%s)" : "%s:%u (%s)", host, (unsigned)q->port,
			q->proto);
	else
		sb_addf(&b, "%s (a name lookup)", host);
	free(host);
	return sb_steal(&b);
}

char *askterm_draw(const struct net_question *q, const char *session, int rows, int cols,
		   bool alt, bool first, long long left_s, size_t *len)
{
	if (rows < 1)
		rows = 24;
	if (cols < 20)
		cols = 80;
	if (left_s < 0)
		left_s = 0;
	struct strbuf b = STRBUF_INIT;
	char *what = what_of(q);
	char *entry = fmt_clean(q->entry);
	if (alt) {
		/* a full-screen program: its last line, the cursor kept where it was */
		char *text = xasprintf("agentjail [%llds] allow %s? o once, s session, a always, "
				       "d deny, Esc later",
				       left_s, what);
		sb_add(&b, "\0337");
		line_at(&b, rows, text, cols, true);
		sb_add(&b, "\0338");
		free(text);
	} else {
		if (first)
			sb_add(&b, "\033[?1049h\033[H\033[2J"); /* saves the cursor and the screen */
		char *l1 = xasprintf(" agentjail: the jail asks to connect to %s", what);
		char *l3 = xasprintf("   [a] always: adds \"%s\" to allow_domains in your "
				     "configuration (~/.config/agentjail/config.toml)", entry);
		char *l6 = xasprintf("   Not answered: denied in %lld s.", left_s);
		char *l7 = xasprintf("   Esc: later, with agentjail net allow|deny %s %s, or in "
				     "agentjail tui", session ? session : "ID", entry);
		line_at(&b, 1, l1, cols, true);
		line_at(&b, 3, "   [o] once: this time only    [s] for this session", cols, false);
		line_at(&b, 4, l3, cols, false);
		line_at(&b, 5, "   [d] deny (for this session)", cols, false);
		line_at(&b, 7, l6, cols, false);
		line_at(&b, 8, l7, cols, false);
		line_at(&b, 10, "   Only keys typed here answer; the jail's own output is held until "
				"then.", cols, false);
		free(l1);
		free(l3);
		free(l6);
		free(l7);
	}
	free(what);
	free(entry);
	*len = b.len;
	return sb_steal(&b);
}

char *askterm_undraw(int rows, bool alt, size_t *len)
{
	struct strbuf b = STRBUF_INIT;
	if (alt)
		sb_addf(&b, "\0337\033[%d;1H\033[2K\0338", rows > 0 ? rows : 24);
	else
		sb_add(&b, "\033[?1049l");
	*len = b.len;
	return sb_steal(&b);
}
