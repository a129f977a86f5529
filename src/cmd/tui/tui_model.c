/* tui_model: the behaviour of `agentjail tui` as plain values (see tui_model.h). */
#include "cmd/tui/tui_model.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/plan/netrules.h"
#include "util/err.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static const char help[] =
	"agentjail tui: the recorded sessions, newest first\n"
	"\n"
	"  Up/Down, j/k     move (PgUp/PgDn, Home/End)\n"
	"  Enter            resume the selected session (it gets the terminal; the list comes\n"
	"                   back when it ends)\n"
	"  n                new session: agent or command, directory, sandbox\n"
	"  d                delete the selected session (asks first)\n"
	"  l                the selected session's network decisions and violations\n"
	"  v                a --fs review session's change set (agentjail diff)\n"
	"  a                apply it to the workspace (asks first; protected paths held back;\n"
	"                   after v, nothing unless it is still what v showed)\n"
	"  x                discard it (asks first)\n"
	"  o s a x          a running session's question (--net ask), shown at the bottom:\n"
	"                   allow once, for its session, always (your configuration), deny\n"
	"                   (while a question waits, a and x answer it)\n"
	"  /                filter (id, agent, status, workspace, command); Esc clears\n"
	"  ?                this page\n"
	"  q                quit\n"
	"\n"
	"New Session dialog: Up/Down or Tab move between fields, Left/Right or Space change a\n"
	"choice, Tab in the directory completes it, Enter starts the session, Esc cancels.\n"
	"Turning Sandboxed off runs the command WITHOUT a jail and asks for a confirmation.\n"
	"\n"
	"Esc or q closes this page.\n";

const char *tui_help_text(void) { return help; }

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? xstrdup(s) : NULL;
}

void tui_row_free(struct tui_row *r)
{
	free(r->id);
	free(r->short_id);
	free(r->status);
	free(r->agent);
	free(r->workspace);
	free(r->policy);
	free(r->started);
	free(r->took);
	free(r->command);
	memset(r, 0, sizeof *r);
}

static void free_rows(struct tui_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tui_row_free(&v[i]);
	free(v);
}

/* The allow-list text of agent i: its domains, comma-separated. */
static char *domains_text(const struct tui_agent *a)
{
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < a->domains.n; i++)
		sb_addf(&b, "%s%s", i ? ", " : "", a->domains.v[i]);
	return sb_steal(&b);
}

/* The dialog's defaults for the chosen agent: an agent's network is its allow-list (as
 * `agentjail NAME` does), a command's is off (as `agentjail run` does), unless the
 * configuration says otherwise (tui_set_agent_defaults). */
static void agent_defaults(struct tui_model *m)
{
	const struct tui_agent *a = &m->agents[m->dlg.agent];
	free(m->dlg.allow);
	m->dlg.allow = domains_text(a);
	m->dlg.net = a->net == TND_ON ? TN_ON : a->net == TND_ALLOW ? TN_ALLOW : TN_OFF;
	m->dlg.read_only = a->read_only;
}

void tui_set_agent_defaults(struct tui_model *m, size_t i, enum tui_net_default net,
			    bool read_only, const struct strv *more_domains)
{
	if (i >= m->nagents)
		return;
	struct tui_agent *a = &m->agents[i];
	a->net = net;
	a->read_only = read_only;
	for (size_t k = 0; more_domains && k < more_domains->n; k++)
		if (!strv_contains(&a->domains, more_domains->v[k]))
			strv_push(&a->domains, more_domains->v[k]);
	if (m->dlg.agent == i)
		agent_defaults(m);
}

void tui_init(struct tui_model *m, const char *const *agent_names,
	      const struct strv *agent_domains, size_t nagents, const char *cwd)
{
	memset(m, 0, sizeof *m);
	m->page = 10;
	m->filter = xstrdup("");
	m->nagents = nagents + 1;
	m->agents = xcalloc(m->nagents, sizeof *m->agents);
	for (size_t i = 0; i < nagents; i++) {
		m->agents[i].name = xstrdup(agent_names[i]);
		strv_copy(&m->agents[i].domains, &agent_domains[i]);
		m->agents[i].net = TND_ALLOW;
	}
	m->dlg.command = xstrdup("");
	m->dlg.dir = xstrdup(cwd ? cwd : "");
	m->dlg.allow = xstrdup("");
	m->dlg.sandboxed = true;
	agent_defaults(m);
}

void tui_set_installed(struct tui_model *m, const bool *installed)
{
	size_t first = SIZE_MAX;
	for (size_t i = 0; i + 1 < m->nagents; i++) {
		struct tui_agent *a = &m->agents[i];
		a->missing = !installed[i];
		free(a->label);
		a->label = a->missing ? xasprintf("%s (not installed)", a->name) : NULL;
		if (!a->missing && first == SIZE_MAX)
			first = i;
	}
	m->agent0 = first != SIZE_MAX ? first : 0;
	if (m->agent0 != m->dlg.agent) {
		m->dlg.agent = m->agent0;
		agent_defaults(m);
	}
}

void tui_free(struct tui_model *m)
{
	free_rows(m->rows, m->nrows);
	free(m->vis);
	free(m->filter);
	free(m->detail);
	free(m->detail_id);
	free(m->text_title);
	strv_free(&m->text);
	free(m->status);
	for (size_t i = 0; i < m->nagents; i++) {
		free(m->agents[i].name);
		free(m->agents[i].label);
		strv_free(&m->agents[i].domains);
	}
	free(m->agents);
	free(m->avail_reason);
	free(m->dlg.command);
	free(m->dlg.dir);
	free(m->dlg.allow);
	free(m->dlg.error);
	tui_set_questions(m, NULL, 0);
	memset(m, 0, sizeof *m);
}

void tui_set_questions(struct tui_model *m, struct tui_question *q, size_t n)
{
	for (size_t i = 0; i < m->nqs; i++) {
		free(m->qs[i].session);
		free(m->qs[i].short_id);
		free(m->qs[i].what);
	}
	free(m->qs);
	m->qs = q;
	m->nqs = n;
}

/* ---- the list -------------------------------------------------------------------------- */

static bool contains_ci(const char *hay, const char *needle)
{
	if (!hay)
		return false;
	size_t n = strlen(needle);
	for (const char *p = hay; *p; p++)
		if (!strncasecmp(p, needle, n))
			return true;
	return !*needle;
}

static bool row_matches(const struct tui_row *r, const char *f)
{
	return !*f || contains_ci(r->id, f) || contains_ci(r->agent, f) ||
	       contains_ci(r->status, f) || contains_ci(r->workspace, f) ||
	       contains_ci(r->command, f) || contains_ci(r->policy, f);
}

const struct tui_row *tui_selected(const struct tui_model *m)
{
	return m->nvis ? &m->rows[m->vis[m->sel]] : NULL;
}

static const char *selected_id(const struct tui_model *m)
{
	const struct tui_row *r = tui_selected(m);
	return r ? r->id : NULL;
}

static void keep_visible(struct tui_model *m)
{
	size_t page = m->page ? m->page : 1;
	if (m->sel < m->top)
		m->top = m->sel;
	if (m->sel >= m->top + page)
		m->top = m->sel + 1 - page;
}

/* Recompute the visible rows, the selection staying on id when it is still visible. */
static void refilter(struct tui_model *m, const char *id)
{
	free(m->vis);
	m->vis = xcalloc(m->nrows ? m->nrows : 1, sizeof *m->vis);
	m->nvis = 0;
	size_t sel = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		if (!row_matches(&m->rows[i], m->filter))
			continue;
		if (id && !strcmp(m->rows[i].id, id))
			sel = m->nvis;
		m->vis[m->nvis++] = i;
	}
	m->sel = sel < m->nvis ? sel : 0;
	if (m->top > m->sel)
		m->top = m->sel;
	keep_visible(m);
}

void tui_row_ids(const struct tui_model *m, struct strv *out)
{
	for (size_t i = 0; i < m->nrows; i++)
		strv_push(out, m->rows[i].id);
}

bool tui_select_new(struct tui_model *m, const struct strv *before)
{
	for (size_t k = 0; k < m->nvis; k++) { /* newest first */
		if (strv_contains(before, m->rows[m->vis[k]].id))
			continue;
		m->sel = k;
		if (m->top > m->sel)
			m->top = m->sel;
		keep_visible(m);
		return true;
	}
	return false;
}

static bool same_id(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

bool tui_set_rows(struct tui_model *m, struct tui_row *rows, size_t n)
{
	char *old = selected_id(m) ? xstrdup(selected_id(m)) : NULL;
	free_rows(m->rows, m->nrows);
	m->rows = rows;
	m->nrows = n;
	refilter(m, old);
	bool changed = !same_id(old, selected_id(m));
	free(old);
	return changed;
}

void tui_set_detail(struct tui_model *m, const char *id, const char *text)
{
	set_str(&m->detail_id, id);
	set_str(&m->detail, text);
}

void tui_set_text(struct tui_model *m, const char *title, const char *text)
{
	set_str(&m->text_title, title);
	strv_free(&m->text);
	tui_split_lines(text, &m->text);
	m->text_top = 0;
	if (m->mode != TM_TEXT)
		m->back = m->mode;
	m->mode = TM_TEXT;
}

void tui_split_lines(const char *s, struct strv *out)
{
	const char *p = s ? s : "";
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		strv_push_take(out, xstrndup(p, len));
		p += len + (nl ? 1 : 0);
	}
}

void tui_set_status(struct tui_model *m, const char *msg) { set_str(&m->status, msg); }

void tui_set_avail(struct tui_model *m, bool ok, const char *reason)
{
	m->avail_known = true;
	m->avail = ok;
	set_str(&m->avail_reason, ok ? NULL : reason ? reason : "the availability check failed");
	if (!ok)
		m->dlg.sandboxed = true; /* never an unsandboxed run by default */
}

static enum tui_action move_sel(struct tui_model *m, long delta)
{
	if (!m->nvis)
		return TA_NONE;
	const char *before = selected_id(m);
	long s = (long)m->sel + delta;
	if (s < 0)
		s = 0;
	if (s >= (long)m->nvis)
		s = (long)m->nvis - 1;
	m->sel = (size_t)s;
	keep_visible(m);
	return same_id(before, selected_id(m)) ? TA_NONE : TA_DETAIL;
}

static void text_del(char **s)
{
	size_t n = strlen(*s);
	if (!n)
		return;
	/* a whole UTF-8 sequence */
	while (n > 1 && ((unsigned char)(*s)[n - 1] & 0xC0) == 0x80)
		n--;
	(*s)[n - 1] = '\0';
}

static void text_add(char **s, int key)
{
	char *n = xasprintf("%s%c", *s, (char)key);
	free(*s);
	*s = n;
}

static bool printable(int key) { return key >= 32 && key < 127; }

/* v, a, x on a --fs review session: its change set shown, applied or discarded (the last two
 * asked first, and not while it runs: its overlay is mounted on the change set) */
static enum tui_action review_key(struct tui_model *m, int key)
{
	const struct tui_row *r = tui_selected(m);
	if (!r)
		return TA_NONE;
	if (!r->review) {
		tui_set_status(m, "that session did not run with --fs review: it has no change set");
		return TA_NONE;
	}
	if (key == 'v')
		return TA_DIFF;
	if (r->running) {
		tui_set_status(m, "that session is running: its change set is in use");
		return TA_NONE;
	}
	m->mode = key == 'a' ? TM_CONFIRM_APPLY : TM_CONFIRM_DISCARD;
	return TA_NONE;
}

static enum tui_action list_key(struct tui_model *m, int key)
{
	tui_set_status(m, NULL);
	switch (key) {
	case 'q':
	case TK_CTRL_C:
		return TA_QUIT;
	case 'j':
	case TK_DOWN:
		return move_sel(m, 1);
	case 'k':
	case TK_UP:
		return move_sel(m, -1);
	case TK_PGDN:
		return move_sel(m, (long)(m->page ? m->page : 1));
	case TK_PGUP:
		return move_sel(m, -(long)(m->page ? m->page : 1));
	case TK_HOME:
	case 'g':
		return move_sel(m, -(long)m->nvis);
	case TK_END:
	case 'G':
		return move_sel(m, (long)m->nvis);
	case TK_ENTER:
		if (!tui_selected(m))
			return TA_NONE;
		if (tui_selected(m)->running) {
			tui_set_status(m, "that session is still running");
			return TA_NONE;
		}
		return TA_RESUME;
	case 'n':
		/* a fresh dialog each time; only the directory is remembered */
		m->mode = TM_DIALOG;
		m->dlg.focus = TF_AGENT;
		m->dlg.agent = m->agent0;
		set_str(&m->dlg.command, "");
		m->dlg.sandboxed = true;
		m->dlg.read_only = false;
		agent_defaults(m);
		set_str(&m->dlg.error, NULL);
		return TA_DIALOG;
	case 'd':
		if (!tui_selected(m))
			return TA_NONE;
		if (tui_selected(m)->running) {
			tui_set_status(m, "a running session cannot be deleted");
			return TA_NONE;
		}
		m->mode = TM_CONFIRM_DELETE;
		return TA_NONE;
	case 'l':
		return tui_selected(m) ? TA_LOG : TA_NONE;
	case 'v':
		return review_key(m, key);
	case 'o':
	case 's':
	case 'a':
	case 'x':
		/* a question waiting (--net ask) is answered first; else a and x are the review
		 * session's apply and discard */
		if (!m->nqs)
			return key == 'a' || key == 'x' ? review_key(m, key) : TA_NONE;
		m->answer = key == 'o' ? ASK_ONCE : key == 's' ? ASK_SESSION
			    : key == 'a' ? ASK_ALWAYS : ASK_DENY;
		return TA_ANSWER;
	case '/':
		m->mode = TM_FILTER;
		return TA_NONE;
	case '?':
		tui_set_text(m, "help", help);
		return TA_NONE;
	case TK_ESC:
		if (*m->filter) {
			const char *id = selected_id(m);
			char *keep = id ? xstrdup(id) : NULL;
			set_str(&m->filter, "");
			refilter(m, keep);
			bool changed = !same_id(keep, selected_id(m));
			free(keep);
			return changed ? TA_DETAIL : TA_NONE;
		}
		return TA_NONE;
	default:
		return TA_NONE;
	}
}

static enum tui_action filter_key(struct tui_model *m, int key)
{
	const char *id = selected_id(m);
	char *keep = id ? xstrdup(id) : NULL;
	if (key == TK_ENTER || key == TK_DOWN || key == TK_UP) {
		m->mode = TM_LIST;
	} else if (key == TK_ESC || key == TK_CTRL_C) {
		set_str(&m->filter, "");
		m->mode = TM_LIST;
	} else if (key == TK_BACKSPACE) {
		text_del(&m->filter);
	} else if (printable(key)) {
		text_add(&m->filter, key);
	}
	refilter(m, keep);
	bool changed = !same_id(keep, selected_id(m));
	free(keep);
	return changed ? TA_DETAIL : TA_NONE;
}

static enum tui_action text_key(struct tui_model *m, int key)
{
	size_t page = m->page ? m->page : 1;
	size_t max = m->text.n > page ? m->text.n - page : 0;
	switch (key) {
	case 'q':
	case TK_ESC:
	case TK_ENTER:
	case TK_CTRL_C:
		m->mode = m->back == TM_TEXT ? TM_LIST : m->back;
		return TA_NONE;
	case 'j':
	case TK_DOWN:
		m->text_top += m->text_top < max;
		return TA_NONE;
	case 'k':
	case TK_UP:
		m->text_top -= m->text_top > 0;
		return TA_NONE;
	case TK_PGDN:
	case ' ':
		m->text_top = m->text_top + page < max ? m->text_top + page : max;
		return TA_NONE;
	case TK_PGUP:
		m->text_top = m->text_top > page ? m->text_top - page : 0;
		return TA_NONE;
	case TK_HOME:
		m->text_top = 0;
		return TA_NONE;
	case TK_END:
		m->text_top = max;
		return TA_NONE;
	default:
		return TA_NONE;
	}
}

static enum tui_action confirm_review_key(struct tui_model *m, int key)
{
	bool apply = m->mode == TM_CONFIRM_APPLY;
	m->mode = TM_LIST;
	if (key == 'y' || key == 'Y')
		return apply ? TA_APPLY : TA_DISCARD;
	tui_set_status(m, apply ? "not applied" : "not discarded");
	return TA_NONE;
}

static enum tui_action confirm_delete_key(struct tui_model *m, int key)
{
	m->mode = TM_LIST;
	if (key == 'y' || key == 'Y')
		return TA_DELETE;
	tui_set_status(m, "not deleted");
	return TA_NONE;
}

/* ---- the dialog ------------------------------------------------------------------------ */

static bool is_command(const struct tui_model *m) { return !m->agents[m->dlg.agent].name; }

const char *tui_agent_label(const struct tui_model *m, size_t i)
{
	const struct tui_agent *a = &m->agents[i];
	return a->label ? a->label : a->name ? a->name : "command…";
}

bool tui_sandbox_enabled(const struct tui_model *m) { return !m->avail_known || m->avail; }

const char *tui_dialog_dir(const struct tui_model *m) { return m->dlg.dir; }

bool tui_field_shown(const struct tui_model *m, enum tui_field f)
{
	switch (f) {
	case TF_COMMAND:
		return is_command(m);
	case TF_FS:
	case TF_NET:
		return m->dlg.sandboxed;
	case TF_ALLOW:
		return m->dlg.sandboxed && m->dlg.net == TN_ALLOW;
	default:
		return true;
	}
}

static void focus_move(struct tui_model *m, int dir)
{
	int f = (int)m->dlg.focus;
	for (int i = 0; i < TF_NFIELDS; i++) {
		f = (f + dir + TF_NFIELDS) % TF_NFIELDS;
		if (tui_field_shown(m, (enum tui_field)f))
			break;
	}
	m->dlg.focus = (enum tui_field)f;
}

static void toggle_sandbox(struct tui_model *m)
{
	if (!tui_sandbox_enabled(m)) {
		char *msg = xasprintf("the Sandboxed switch is disabled: %s", m->avail_reason);
		set_str(&m->dlg.error, msg);
		free(msg);
		return;
	}
	if (m->dlg.sandboxed)
		m->mode = TM_CONFIRM_UNSANDBOXED; /* off only after an explicit yes */
	else
		m->dlg.sandboxed = true;
}

/* Left/Right/Space on a choice field. */
static void change_choice(struct tui_model *m, int dir)
{
	switch (m->dlg.focus) {
	case TF_AGENT:
		m->dlg.agent = (m->dlg.agent + m->nagents + (size_t)(dir + (int)m->nagents)) %
			       m->nagents;
		agent_defaults(m);
		break;
	case TF_SANDBOX:
		toggle_sandbox(m);
		break;
	case TF_FS:
		m->dlg.read_only = !m->dlg.read_only;
		break;
	case TF_NET:
		m->dlg.net = (enum tui_net)(((int)m->dlg.net + 3 + dir) % 3);
		break;
	default:
		break;
	}
}

static char **focused_text(struct tui_model *m)
{
	switch (m->dlg.focus) {
	case TF_COMMAND:
		return &m->dlg.command;
	case TF_DIR:
		return &m->dlg.dir;
	case TF_ALLOW:
		return &m->dlg.allow;
	default:
		return NULL;
	}
}

static enum tui_action dialog_key(struct tui_model *m, int key)
{
	char **text = focused_text(m);
	switch (key) {
	case TK_ESC:
	case TK_CTRL_C:
		m->mode = TM_LIST;
		return TA_NONE;
	case TK_ENTER: {
		struct strv argv = STRV_INIT;
		int rc = tui_dialog_argv(m, &argv);
		strv_free(&argv);
		if (rc < 0)
			return TA_NONE;
		m->mode = TM_LIST;
		return TA_RUN;
	}
	case TK_TAB:
		if (m->dlg.focus == TF_DIR)
			return TA_COMPLETE;
		focus_move(m, 1);
		return TA_NONE;
	case TK_DOWN:
		focus_move(m, 1);
		return TA_NONE;
	case TK_BTAB:
	case TK_UP:
		focus_move(m, -1);
		return TA_NONE;
	case TK_LEFT:
		change_choice(m, -1);
		return TA_NONE;
	case TK_RIGHT:
		change_choice(m, 1);
		return TA_NONE;
	case TK_BACKSPACE:
		if (text)
			text_del(text);
		return TA_NONE;
	default:
		break;
	}
	if (text && printable(key)) {
		text_add(text, key);
		set_str(&m->dlg.error, NULL);
	} else if (!text && key == ' ') {
		change_choice(m, 1);
	}
	return TA_NONE;
}

static enum tui_action confirm_unsandboxed_key(struct tui_model *m, int key)
{
	m->mode = TM_DIALOG;
	if (key == 'y' || key == 'Y') {
		m->dlg.sandboxed = false;
		m->dlg.focus = TF_SANDBOX;
	}
	return TA_NONE;
}

enum tui_action tui_key(struct tui_model *m, int key)
{
	switch (m->mode) {
	case TM_LIST:
		return list_key(m, key);
	case TM_FILTER:
		return filter_key(m, key);
	case TM_TEXT:
		return text_key(m, key);
	case TM_DIALOG:
		return dialog_key(m, key);
	case TM_CONFIRM_DELETE:
		return confirm_delete_key(m, key);
	case TM_CONFIRM_UNSANDBOXED:
		return confirm_unsandboxed_key(m, key);
	case TM_CONFIRM_APPLY:
	case TM_CONFIRM_DISCARD:
		return confirm_review_key(m, key);
	}
	return TA_NONE;
}

void tui_complete(struct tui_model *m, const struct strv *c)
{
	if (!c->n) {
		tui_set_status(m, "no directory matches");
		return;
	}
	size_t common = strlen(c->v[0]);
	for (size_t i = 1; i < c->n; i++) {
		size_t k = 0;
		while (k < common && c->v[i][k] == c->v[0][k])
			k++;
		common = k;
	}
	char *slash = strrchr(m->dlg.dir, '/');
	size_t keep = slash ? (size_t)(slash - m->dlg.dir) + 1 : 0;
	char *n = xasprintf("%.*s%.*s", (int)keep, m->dlg.dir, (int)common, c->v[0]);
	free(m->dlg.dir);
	m->dlg.dir = n;
	if (c->n > 1) {
		struct strbuf b = STRBUF_INIT;
		for (size_t i = 0; i < c->n && i < 8; i++)
			sb_addf(&b, "%s%s", i ? "  " : "", c->v[i]);
		if (c->n > 8)
			sb_addf(&b, "  … (%zu)", c->n);
		tui_set_status(m, sb_str(&b));
		sb_free(&b);
	} else {
		tui_set_status(m, NULL);
	}
}

/* ---- the session the dialog describes --------------------------------------------------- */

int tui_split_words(const char *s, struct strv *out)
{
	struct strbuf w = STRBUF_INIT;
	bool in_word = false;
	char q = 0;
	for (const char *p = s; *p; p++) {
		if (q) {
			if (*p == q)
				q = 0;
			else if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
				sb_addc(&w, *++p);
			else
				sb_addc(&w, *p);
		} else if (*p == '\'' || *p == '"') {
			q = *p;
			in_word = true;
		} else if (*p == '\\' && p[1]) {
			sb_addc(&w, *++p);
			in_word = true;
		} else if (isspace((unsigned char)*p)) {
			if (in_word)
				strv_push(out, sb_str(&w));
			sb_free(&w);
			in_word = false;
		} else {
			sb_addc(&w, *p);
			in_word = true;
		}
	}
	if (in_word && !q)
		strv_push(out, sb_str(&w));
	sb_free(&w);
	return q ? -1 : 0;
}

/* The allow-list field: entries separated by commas or blanks. */
static void split_list(const char *s, struct strv *out)
{
	struct strbuf w = STRBUF_INIT;
	for (const char *p = s;; p++) {
		if (!*p || *p == ',' || isspace((unsigned char)*p)) {
			if (sb_str(&w)[0])
				strv_push(out, sb_str(&w));
			sb_free(&w);
			if (!*p)
				break;
		} else {
			sb_addc(&w, *p);
		}
	}
	sb_free(&w);
}

static int fail(struct tui_model *m, char *msg)
{
	free(m->dlg.error);
	m->dlg.error = msg;
	return -1;
}

int tui_dialog_argv(struct tui_model *m, struct strv *out)
{
	const struct tui_agent *a = &m->agents[m->dlg.agent];
	struct tui_dialog *d = &m->dlg;
	set_str(&d->error, NULL);
	if (d->dir[0] != '/')
		return fail(m, xstrdup("the directory must be an absolute path"));
	if (d->sandboxed && !tui_sandbox_enabled(m))
		return fail(m, xasprintf("sandboxing does not work here (%s): agentjail doctor says "
					 "why and how to fix it",
					 m->avail_reason));
	struct strv words = STRV_INIT;
	if (!a->name && (tui_split_words(d->command, &words) < 0 || !words.n)) {
		strv_free(&words);
		return fail(m, xstrdup(d->command[0] ? "the command has an unterminated quote"
						     : "type the command to run"));
	}
	struct strv list = STRV_INIT;
	if (d->sandboxed && d->net == TN_ALLOW)
		split_list(d->allow, &list);
	for (size_t i = 0; i < list.n; i++) {
		struct netrule r;
		struct err e = {0};
		if (netrule_parse(list.v[i], &r, &e) < 0) {
			char buf[ERR_FMT_MAX];
			err_format(&e, buf, sizeof buf);
			strv_free(&words);
			strv_free(&list);
			return fail(m, xasprintf("allow-list: %s", buf));
		}
		netrule_free(&r);
	}
	strv_push(out, a->name ? a->name : "run");
	strv_push(out, "--workspace");
	strv_push(out, d->dir);
	if (!d->sandboxed) {
		strv_push(out, "--fs");
		strv_push(out, "danger-full-access");
		strv_push(out, "--net");
		strv_push(out, "on");
	} else {
		static const char *const nets[] = {"off", "on", "allow"};
		strv_push(out, "--fs");
		strv_push(out, d->read_only ? "read-only" : "workspace-write");
		strv_push(out, "--net");
		strv_push(out, nets[d->net]);
		/* an agent's profile adds its domains itself: the ones taken off the list are
		 * denied, the ones added are allowed */
		for (size_t i = 0; i < list.n; i++)
			if (d->net == TN_ALLOW && (!strv_contains(&a->domains, list.v[i]) || !a->name)) {
				strv_push(out, "--allow-domain");
				strv_push(out, list.v[i]);
			}
		for (size_t i = 0; a->name && d->net == TN_ALLOW && i < a->domains.n; i++)
			if (!strv_contains(&list, a->domains.v[i])) {
				strv_push(out, "--deny-domain");
				strv_push(out, a->domains.v[i]);
			}
	}
	strv_push(out, "--");
	for (size_t i = 0; i < words.n; i++)
		strv_push(out, words.v[i]);
	strv_free(&words);
	strv_free(&list);
	return 0;
}

char *tui_ascii(const char *s)
{
	static const struct {
		const char *u, *a;
	} map[] = {{"…", "..."}, {"·", "."}, {"→", "->"}, {"—", "-"}, {"–", "-"}, {"×", "x"}};
	struct strbuf b = STRBUF_INIT;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	while (*p) {
		if (*p < 0x80) {
			sb_addc(&b, (char)*p++);
			continue;
		}
		size_t k = 0;
		while (k < sizeof map / sizeof *map && strncmp((const char *)p, map[k].u, strlen(map[k].u)))
			k++;
		if (k < sizeof map / sizeof *map) {
			sb_add(&b, map[k].a);
			p += strlen(map[k].u);
			continue;
		}
		sb_addc(&b, '?'); /* one character: its lead byte, then its continuation bytes */
		for (p++; (*p & 0xC0) == 0x80; p++)
			;
	}
	return sb_steal(&b) ?: xstrdup("");
}
