/* tui_view: the TUI drawn with ncursesw (see tui_view.h). Draws tui_model as it is; reads keys. */
#include "cmd/tui/tui_view.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cmd/tui/tui_model.h"
#include "core/session/sessfmt.h"
#include "util/xalloc.h"

enum { C_HEAD = 1, C_RUN, C_FAIL, C_WARN, C_SEL };

static bool active, color, atexit_done;
static bool utf8; /* the locale's; else text is drawn in ASCII (tui_ascii) */
static struct termios shell_tio; /* the terminal as it was before curses */
static bool have_tio;

/* A crash of ours still gives the terminal back: the saved modes, the normal screen, the
 * cursor (async-signal-safe calls only), then the default action. */
static void crash(int sig)
{
	if (have_tio)
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &shell_tio);
	static const char seq[] = "\033[?1049l\033[?25h\r\n";
	ssize_t w = write(STDOUT_FILENO, seq, sizeof seq - 1);
	(void)w;
	signal(sig, SIG_DFL);
	raise(sig);
}

int tuiv_start(void)
{
	setlocale(LC_ALL, "");
	utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	have_tio = tcgetattr(STDIN_FILENO, &shell_tio) == 0;
	if (!initscr())
		return -1;
	active = true;
	if (!atexit_done) {
		atexit(tuiv_stop);
		atexit_done = true;
	}
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
	for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
		signal(fatal[i], crash);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	const char *nc = getenv("NO_COLOR");
	color = !(nc && *nc) && has_colors();
	if (color) {
		start_color();
		use_default_colors();
		init_pair(C_HEAD, COLOR_BLACK, COLOR_CYAN);
		init_pair(C_RUN, COLOR_GREEN, -1);
		init_pair(C_FAIL, COLOR_RED, -1);
		init_pair(C_WARN, COLOR_YELLOW, -1);
		init_pair(C_SEL, COLOR_BLACK, COLOR_WHITE);
	}
	return 0;
}

void tuiv_stop(void)
{
	if (active && !isendwin())
		endwin();
	active = false;
}

void tuiv_suspend(void)
{
	def_prog_mode();
	endwin();
}

void tuiv_shell_modes(void)
{
	if (have_tio) /* a child that died in raw mode leaves nothing behind */
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &shell_tio);
}

void tuiv_resume(void)
{
	tuiv_shell_modes();
	reset_prog_mode();
	clearok(curscr, TRUE);
	refresh();
}

static attr_t pair(int p, attr_t mono) { return color ? COLOR_PAIR(p) : mono; }

/* Text cut to width columns at (y, x), padded with blanks to the width. */
static void put(int y, int x, int width, const char *s, attr_t a)
{
	if (width <= 0 || y < 0 || y >= LINES)
		return;
	char *c;
	if (utf8) {
		c = fmt_cut(s ? s : "", (size_t)width);
	} else { /* "…" shows as "~@" there: ASCII, a byte a column, cut with "..." */
		c = tui_ascii(s);
		size_t w = (size_t)width;
		if (strlen(c) > w)
			strcpy(c + (w >= 4 ? w - 3 : w), w >= 4 ? "..." : "");
	}
	attron(a);
	mvaddstr(y, x, c);
	int w = (int)fmt_width(c);
	for (int i = w; i < width; i++)
		addch(' ');
	attroff(a);
	free(c);
}

/* A path cut at its start ("…/src/proj") when it is wider than width. */
static void put_tail(int y, int x, int width, const char *s, attr_t a)
{
	if (!s || width < 2 || fmt_width(s) <= (size_t)width) {
		put(y, x, width, s, a);
		return;
	}
	const char *ell = utf8 ? "…" : "...";
	size_t room = (size_t)width > fmt_width(ell) ? (size_t)width - fmt_width(ell) : 1;
	const char *p = s;
	while (*p && fmt_width(p) > room)
		for (p++; ((unsigned char)*p & 0xC0) == 0x80; p++)
			;
	char *t = xasprintf("%s%s", ell, p);
	put(y, x, width, t, a);
	free(t);
}

static attr_t status_attr(const struct tui_row *r)
{
	if (r->running)
		return pair(C_RUN, A_BOLD);
	if (r->status && strcmp(r->status, "exited 0"))
		return pair(C_FAIL, A_NORMAL);
	return A_NORMAL;
}

/* The list's columns for the screen's width. */
struct cols {
	int id, status, agent, policy, started, took, ws, cmd;
};

static struct cols columns(void)
{
	struct cols c = {8, 10, 6, 9, 8, 5, 0, 0};
	int rest = COLS - (c.id + c.status + c.agent + c.policy + c.started + c.took + 7);
	if (rest < 10)
		rest = 10;
	c.ws = rest * 2 / 5;
	c.cmd = rest - c.ws - 1;
	return c;
}

static void row_line(int y, const struct tui_row *r, const struct cols *c, bool sel)
{
	attr_t base = sel ? pair(C_SEL, A_REVERSE) : A_NORMAL;
	int x = 0;
	put(y, x, c->id, r->short_id, base);
	x += c->id + 1;
	put(y, x, c->status, r->status, sel ? base : status_attr(r));
	x += c->status + 1;
	put(y, x, c->agent, r->agent, base);
	x += c->agent + 1;
	put(y, x, c->policy, r->policy, base);
	x += c->policy + 1;
	put(y, x, c->started, r->started, base);
	x += c->started + 1;
	put(y, x, c->took, r->took, base);
	x += c->took + 1;
	put_tail(y, x, c->ws, r->workspace, base);
	x += c->ws + 1;
	put(y, x, COLS - x, r->command, base);
	if (sel) /* the gaps between columns too */
		mvchgat(y, 0, COLS, sel && !color ? A_REVERSE : A_NORMAL, color ? C_SEL : 0, NULL);
}

/* Lines of text (wrapped at the width) from y0 for at most h lines, starting at line top. */
static void text_block(int y0, int h, const struct strv *lines, size_t top)
{
	int y = y0;
	for (size_t i = top; i < lines->n && y < y0 + h; i++) {
		const char *p = lines->v[i];
		do {
			size_t len = strlen(p), take = len;
			if ((int)take > COLS - 1) {
				take = (size_t)(COLS - 1);
				while (take > 0 && ((unsigned char)p[take] & 0xC0) == 0x80)
					take--;
			}
			char *chunk = xstrndup(p, take);
			put(y++, 0, COLS, chunk, A_NORMAL);
			free(chunk);
			p += take;
		} while (*p && y < y0 + h);
	}
	for (; y < y0 + h; y++)
		put(y, 0, COLS, "", A_NORMAL);
}

static void draw_bottom(const struct tui_model *m, const char *keys)
{
	if (m->mode == TM_CONFIRM_DELETE && tui_selected(m)) {
		char *q = xasprintf("Delete session %s (%s)? y deletes it, any other key keeps it",
				    tui_selected(m)->short_id, tui_selected(m)->command);
		put(LINES - 1, 0, COLS, q, pair(C_WARN, A_BOLD) | A_BOLD);
		free(q);
	} else if ((m->mode == TM_CONFIRM_APPLY || m->mode == TM_CONFIRM_DISCARD) &&
		   tui_selected(m)) {
		char *q = m->mode == TM_CONFIRM_APPLY
				  ? xasprintf("Apply the change set of %s to %s? y applies it (protected "
					      "paths held back), any other key keeps it pending",
					      tui_selected(m)->short_id, tui_selected(m)->workspace)
				  : xasprintf("Discard the change set of %s? y throws it away, any other "
					      "key keeps it",
					      tui_selected(m)->short_id);
		put(LINES - 1, 0, COLS, q, pair(C_WARN, A_BOLD) | A_BOLD);
		free(q);
	} else if (m->mode == TM_FILTER) {
		char *q = xasprintf("/%s", m->filter);
		put(LINES - 1, 0, COLS, q, A_BOLD);
		free(q);
	} else if (m->status) {
		put(LINES - 1, 0, COLS, m->status, pair(C_WARN, A_BOLD));
	} else if (m->nqs && m->mode == TM_LIST) {
		char *q = xasprintf("? %s asks: allow %s%s  o once  s session  a always  x deny",
				    m->qs[0].short_id, m->qs[0].what,
				    m->nqs > 1 ? " (and more)" : "");
		put(LINES - 1, 0, COLS, q, pair(C_WARN, A_BOLD) | A_REVERSE);
		free(q);
	} else {
		put(LINES - 1, 0, COLS, keys, A_DIM);
	}
}

static void draw_list(struct tui_model *m)
{
	int list_h = (LINES - 4) / 2;
	if (list_h < 3)
		list_h = 3;
	m->page = (size_t)list_h;
	char *title = *m->filter ? xasprintf(" agentjail sessions (%zu of %zu, filter: %s)", m->nvis,
					      m->nrows, m->filter)
				 : xasprintf(" agentjail sessions (%zu)", m->nrows);
	put(0, 0, COLS, title, pair(C_HEAD, A_REVERSE));
	free(title);
	struct cols c = columns();
	static const char *const heads[] = {"ID", "STATUS", "AGENT", "POLICY", "STARTED", "TOOK",
					    "WORKSPACE", "COMMAND"};
	int widths[] = {c.id, c.status, c.agent, c.policy, c.started, c.took, c.ws, c.cmd};
	int x = 0;
	for (size_t i = 0; i < 8; i++) {
		put(1, x, i == 7 ? COLS - x : widths[i], heads[i], A_BOLD);
		x += widths[i] + 1;
	}
	for (int i = 0; i < list_h; i++) {
		size_t k = m->top + (size_t)i;
		if (k < m->nvis)
			row_line(2 + i, &m->rows[m->vis[k]], &c, k == m->sel);
		else
			put(2 + i, 0, COLS,
			    i == 0 && !m->nvis
				    ? (m->nrows ? "  no session matches the filter"
						: "  no sessions yet: n starts one")
				    : "",
			    A_NORMAL);
	}
	int dy = 2 + list_h;
	put(dy, 0, COLS, "", A_NORMAL);
	mvhline(dy, 0, ACS_HLINE, COLS);
	const struct tui_row *r = tui_selected(m);
	struct strv lines = STRV_INIT;
	if (r && m->detail_id && !strcmp(m->detail_id, r->id))
		tui_split_lines(m->detail, &lines);
	text_block(dy + 1, LINES - 2 - dy, &lines, 0);
	strv_free(&lines);
	draw_bottom(m, tui_selected(m) && tui_selected(m)->review
			       ? "Enter resume  v diff  a apply  x discard  n new  d delete  l log  ? help  q quit"
			       : "Enter resume  n new  d delete  l log  / filter  ? help  q quit");
}

static void draw_text(struct tui_model *m)
{
	m->page = (size_t)(LINES > 3 ? LINES - 2 : 1);
	char *title = xasprintf(" %s", m->text_title ? m->text_title : "");
	put(0, 0, COLS, title, pair(C_HEAD, A_REVERSE));
	free(title);
	text_block(1, LINES - 2, &m->text, m->text_top);
	put(LINES - 1, 0, COLS, "Up/Down PgUp/PgDn scroll  Esc or q back", A_DIM);
}

/* The dialog, in a box in the middle. */
static void draw_dialog(struct tui_model *m)
{
	int w = COLS - 4 < 76 ? COLS - 4 : 76, h = 15 + (tui_sandbox_enabled(m) ? 0 : 3);
	if (h > LINES - 1)
		h = LINES - 1;
	int y0 = (LINES - h) / 2, x0 = (COLS - w) / 2;
	for (int y = y0; y < y0 + h; y++)
		put(y, x0, w, "", A_NORMAL);
	attron(A_BOLD);
	mvhline(y0, x0 + 1, ACS_HLINE, w - 2);
	mvhline(y0 + h - 1, x0 + 1, ACS_HLINE, w - 2);
	mvvline(y0 + 1, x0, ACS_VLINE, h - 2);
	mvvline(y0 + 1, x0 + w - 1, ACS_VLINE, h - 2);
	mvaddch(y0, x0, ACS_ULCORNER);
	mvaddch(y0, x0 + w - 1, ACS_URCORNER);
	mvaddch(y0 + h - 1, x0, ACS_LLCORNER);
	mvaddch(y0 + h - 1, x0 + w - 1, ACS_LRCORNER);
	mvaddstr(y0, x0 + 2, " New session ");
	attroff(A_BOLD);
	const struct tui_dialog *d = &m->dlg;
	int lx = x0 + 2, vx = x0 + 15, vw = w - 17, y = y0 + 2;
	int cy = -1, cx = 0;
	static const char *const labels[] = {"Agent", "Command", "Directory", "Sandboxed",
					     "Filesystem", "Network", "Allow-list"};
	for (int f = 0; f < TF_NFIELDS; f++) {
		if (!tui_field_shown(m, (enum tui_field)f))
			continue;
		bool foc = d->focus == (enum tui_field)f && m->mode == TM_DIALOG;
		put(y, lx, 12, labels[f], foc ? A_BOLD | A_REVERSE : A_NORMAL);
		char *v = NULL;
		const char *text = NULL;
		attr_t va = A_NORMAL;
		switch ((enum tui_field)f) {
		case TF_AGENT:
			v = xasprintf("< %s >", tui_agent_label(m, d->agent));
			break;
		case TF_COMMAND:
			text = d->command;
			break;
		case TF_DIR:
			text = d->dir;
			break;
		case TF_SANDBOX:
			if (!tui_sandbox_enabled(m)) {
				v = xstrdup("[x] on (disabled: sandboxing does not work here)");
				va = A_DIM;
			} else if (d->sandboxed) {
				v = xstrdup("[x] on");
			} else {
				v = xstrdup("[ ] OFF: runs WITHOUT a sandbox");
				va = pair(C_FAIL, A_BOLD) | A_BOLD;
			}
			break;
		case TF_FS:
			v = xasprintf("(%s) Read-write  (%s) Read-only", d->read_only ? " " : "*",
				      d->read_only ? "*" : " ");
			break;
		case TF_NET:
			v = xasprintf("(%s) Off  (%s) On  (%s) Allow-list", d->net == TN_OFF ? "*" : " ",
				      d->net == TN_ON ? "*" : " ", d->net == TN_ALLOW ? "*" : " ");
			break;
		case TF_ALLOW:
			text = d->allow;
			break;
		default:
			break;
		}
		if (text) {
			/* the end of the text when it is longer than the field */
			size_t len = strlen(text), fw = (size_t)(vw - 2);
			const char *shown = len > fw && foc ? text + len - fw : text;
			while (((unsigned char)*shown & 0xC0) == 0x80)
				shown++;
			put(y, vx, vw, "", A_UNDERLINE);
			put(y, vx, vw - 1, shown, A_UNDERLINE);
			if (foc) {
				cy = y;
				cx = vx + (int)fmt_width(shown);
			}
		} else {
			put(y, vx, vw, v, va);
		}
		free(v);
		y++;
	}
	y++;
	if (!tui_sandbox_enabled(m)) {
		char *wmsg = xasprintf("! sandboxing cannot work here: %s. Run `agentjail doctor` "
				       "for the cause and the fix.",
				       m->avail_reason);
		struct strv l = STRV_INIT;
		tui_split_lines(wmsg, &l);
		for (size_t i = 0; i < l.n; i++) {
			const char *p = l.v[i];
			while (*p && y < y0 + h - 3) {
				size_t take = strlen(p) > (size_t)(w - 4) ? (size_t)(w - 4) : strlen(p);
				while (take > 0 && take < strlen(p) && ((unsigned char)p[take] & 0xC0) == 0x80)
					take--;
				char *chunk = xstrndup(p, take);
				put(y++, lx, w - 4, chunk, pair(C_WARN, A_BOLD) | A_BOLD);
				free(chunk);
				p += take;
			}
		}
		strv_free(&l);
		free(wmsg);
	}
	if (d->error)
		put(y0 + h - 3, lx, w - 4, d->error, pair(C_FAIL, A_BOLD) | A_BOLD);
	put(y0 + h - 2, lx, w - 4, "Enter start  Esc cancel  Up/Down field  Left/Right change  Tab complete",
	    A_DIM);
	if (m->mode == TM_CONFIRM_UNSANDBOXED) {
		int bw = w - 8, by = y0 + 5;
		static const char *const q[] = {
			"",
			" Run WITHOUT a sandbox?",
			"",
			" The command will see and can change everything you can:",
			" your home, your keys, every file and the whole network.",
			" The session is recorded as unsandboxed.",
			"",
			" y: run it unsandboxed    any other key: keep the sandbox",
			""};
		for (size_t i = 0; i < sizeof q / sizeof *q; i++)
			put(by + (int)i, x0 + 4, bw, q[i], pair(C_FAIL, A_REVERSE) | A_REVERSE | A_BOLD);
		cy = -1;
	}
	if (cy >= 0) {
		curs_set(1);
		move(cy, cx);
	}
	if (m->status)
		put(LINES - 1, 0, COLS, m->status, pair(C_WARN, A_BOLD));
}

void tuiv_draw(struct tui_model *m)
{
	curs_set(0);
	erase();
	if (COLS < 40 || LINES < 12) {
		put(0, 0, COLS, "agentjail tui needs at least 40x12 (80x24 or more is best)", A_BOLD);
		refresh();
		return;
	}
	switch (m->mode) {
	case TM_TEXT:
		draw_text(m);
		break;
	case TM_DIALOG:
	case TM_CONFIRM_UNSANDBOXED:
		draw_list(m);
		draw_dialog(m);
		break;
	default:
		draw_list(m);
		break;
	}
	refresh();
}

int tuiv_key(int timeout_ms)
{
	timeout(timeout_ms);
	wint_t ch;
	int r = get_wch(&ch);
	if (r == ERR)
		return TUIV_NONE;
	if (r == KEY_CODE_YES) {
		switch (ch) {
		case KEY_RESIZE:
			return TUIV_RESIZE;
		case KEY_UP:
			return TK_UP;
		case KEY_DOWN:
			return TK_DOWN;
		case KEY_LEFT:
			return TK_LEFT;
		case KEY_RIGHT:
			return TK_RIGHT;
		case KEY_PPAGE:
			return TK_PGUP;
		case KEY_NPAGE:
			return TK_PGDN;
		case KEY_HOME:
			return TK_HOME;
		case KEY_END:
			return TK_END;
		case KEY_BTAB:
			return TK_BTAB;
		case KEY_BACKSPACE:
			return TK_BACKSPACE;
		case KEY_ENTER:
			return TK_ENTER;
		default:
			return TUIV_NONE;
		}
	}
	switch (ch) {
	case '\r':
	case '\n':
		return TK_ENTER;
	case 27:
		return TK_ESC;
	case '\t':
		return TK_TAB;
	case 127:
	case 8:
		return TK_BACKSPACE;
	case 3:
		return TK_CTRL_C;
	default:
		return ch >= 32 && ch < 127 ? (int)ch : TUIV_NONE;
	}
}
