/* tui_model: everything `agentjail tui` does, without a terminal (doc/design.md §7). Pure: the
 * command layer (cmd/tui/tui.c) fills the rows from the session store, feeds keys in and carries
 * out the returned actions (run, resume, delete, log, complete); cmd/tui/tui_view.c only draws the
 * model.
 *
 * Screens: the session list (filterable, a detail pane for the selected row), the help and log
 * pages (text with a scroll offset), the New Session dialog and two confirmations (delete a
 * session; run without a sandbox). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/plan/netask.h"
#include "util/strv.h"

/* Keys: printable characters are themselves (32..126); the rest are these. */
enum {
	TK_ENTER = 1000,
	TK_ESC,
	TK_UP,
	TK_DOWN,
	TK_LEFT,
	TK_RIGHT,
	TK_PGUP,
	TK_PGDN,
	TK_HOME,
	TK_END,
	TK_TAB,
	TK_BTAB,
	TK_BACKSPACE,
	TK_CTRL_C,
};

/* What the caller must do after a key. */
enum tui_action {
	TA_NONE,
	TA_QUIT,
	TA_RESUME,   /* resume tui_selected(m)->id */
	TA_DELETE,   /* delete tui_selected(m)->id (confirmed) */
	TA_LOG,      /* show the network log of tui_selected(m)->id (tui_set_text) */
	TA_DETAIL,   /* the selection changed: set its detail (tui_set_detail) */
	TA_DIALOG,   /* the dialog opened: the caller may check availability (tui_set_avail) */
	TA_COMPLETE, /* complete the dialog's directory (tui_complete with the candidates) */
	TA_RUN,      /* run the dialog's session: tui_dialog_argv, in tui_dialog_dir(m) */
	TA_DIFF,     /* show the change set of tui_selected(m)->id (--fs review; tui_set_text) */
	TA_APPLY,    /* apply it to the workspace (confirmed) */
	TA_DISCARD,  /* throw it away (confirmed) */
	TA_ANSWER,   /* answer m->qs[0] (--net ask) with m->answer */
};

/* One session as the list shows it; every string already cleaned for a terminal. */
struct tui_row {
	char *id, *short_id, *status, *agent, *workspace, *policy, *started, *took, *command;
	bool running;
	bool review;  /* ran with --fs review: it has a change set to diff, apply or discard */
};

/* A question a running session (--net ask) waits on, as the list shows it; strings cleaned. */
struct tui_question {
	char *session, *short_id; /* the session's id */
	uint64_t id;              /* the question's, in that session */
	char *what;               /* "evil.example:443 (connect)" */
};

/* One choice of the dialog's agent field. */
struct tui_agent {
	char *name;           /* the profile name; NULL for "command…" */
	struct strv domains;  /* its --net allow domains (the profile's, then the configuration's) */
	enum tui_net_default { TND_OFF, TND_ON, TND_ALLOW } net; /* the dialog's first choices */
	bool read_only;
	bool missing;         /* not installed where agentjail finds it (tui_set_installed) */
	char *label;          /* "NAME (not installed)" when missing, else NULL: the name */
};

enum tui_mode { TM_LIST, TM_FILTER, TM_TEXT, TM_DIALOG, TM_CONFIRM_DELETE, TM_CONFIRM_UNSANDBOXED,
	       TM_CONFIRM_APPLY, TM_CONFIRM_DISCARD };
enum tui_field { TF_AGENT, TF_COMMAND, TF_DIR, TF_SANDBOX, TF_FS, TF_NET, TF_ALLOW, TF_NFIELDS };
enum tui_net { TN_OFF, TN_ON, TN_ALLOW };

struct tui_dialog {
	size_t agent;          /* index into agents; the last one is "command…" */
	char *command, *dir, *allow; /* text fields, never NULL */
	bool sandboxed, read_only;
	enum tui_net net;
	enum tui_field focus;
	char *error;           /* the validation message, NULL when none */
};

struct tui_model {
	enum tui_mode mode, back;  /* back: where TM_TEXT returns */
	struct tui_row *rows;
	size_t nrows;
	size_t *vis;               /* indices of the rows the filter lets through */
	size_t nvis, sel, top;     /* sel and top index vis */
	size_t page;               /* rows the list shows at once (set by the view) */
	char *filter;
	char *detail;              /* of the selected row, set by the caller */
	char *detail_id;           /* whose detail that is */
	char *text_title;          /* TM_TEXT */
	struct strv text;
	size_t text_top;
	char *status;              /* a one-line message at the bottom, NULL when none */
	struct tui_agent *agents;
	size_t nagents;
	size_t agent0;             /* the agent a new dialog starts on (tui_set_installed) */
	bool avail_known, avail;   /* the availability check: done, and whether jails work */
	char *avail_reason;
	struct tui_dialog dlg;
	struct tui_question *qs;   /* open questions of the running sessions, oldest first */
	size_t nqs;
	enum ask_answer answer;    /* TA_ANSWER's */
};

/* The agents: the given profile names and their domains (parallel arrays), then "command…".
 * cwd is the dialog's first directory. */
void tui_init(struct tui_model *m, const char *const *agent_names,
	      const struct strv *agent_domains, size_t nagents, const char *cwd);
/* The configuration's defaults for agent i (the last is "command…"): its network, a read-only
 * filesystem, and domains its allow-list adds to the profile's. */
void tui_set_agent_defaults(struct tui_model *m, size_t i, enum tui_net_default net,
			    bool read_only, const struct strv *more_domains);
/* Which agents are installed (installed[i] for agent i, the nagents given to tui_init): the
 * missing ones are marked in the dialog ("gemini (not installed)"), and the dialog starts on
 * the first installed one (issue 26: it started on claude, not installed), else on the first. */
void tui_set_installed(struct tui_model *m, const bool *installed);
void tui_free(struct tui_model *m);
void tui_row_free(struct tui_row *r);

/* Replace the questions (taken). In the list, o, s, a and x answer the first one (TA_ANSWER):
 * once, for its session, always, deny. */
void tui_set_questions(struct tui_model *m, struct tui_question *q, size_t n);

/* Replace the rows (taken; newest first), keeping the selection on the same id when it is still
 * there. Returns true when the selected id changed (its detail must be set again). */
bool tui_set_rows(struct tui_model *m, struct tui_row *rows, size_t n);
const struct tui_row *tui_selected(const struct tui_model *m);
/* The ids of the rows, to give tui_select_new after a session was started. */
void tui_row_ids(const struct tui_model *m, struct strv *out);
/* Select the newest visible row whose id is not in before (the session the dialog just started:
 * the selection stayed on the row it was on, so `l` showed that row's log, issue 26). True when
 * one was found. */
bool tui_select_new(struct tui_model *m, const struct strv *before);
void tui_set_detail(struct tui_model *m, const char *id, const char *text);
/* Show text (split at newlines) as a page with a title; Esc or q returns. */
void tui_set_text(struct tui_model *m, const char *title, const char *text);
void tui_set_status(struct tui_model *m, const char *msg);
/* The availability check: ok, or the reason sandboxing cannot work here. */
void tui_set_avail(struct tui_model *m, bool ok, const char *reason);
/* The directory's completion: candidates are the entries (directories, with a trailing '/')
 * that start with the last component of the dialog's directory; the longest common prefix is
 * taken, and with several candidates the status line lists some. */
void tui_complete(struct tui_model *m, const struct strv *candidates);

enum tui_action tui_key(struct tui_model *m, int key);

/* The dialog's state as text for the view ("[x] Sandboxed", "Read-only", …). */
const char *tui_agent_label(const struct tui_model *m, size_t i);
bool tui_field_shown(const struct tui_model *m, enum tui_field f);
/* Whether the Sandboxed switch can be toggled (false when jails do not work here). */
bool tui_sandbox_enabled(const struct tui_model *m);
const char *tui_dialog_dir(const struct tui_model *m);

/* The agentjail arguments (after the program name) that run the dialog's session, e.g.
 * {"claude", "--workspace", DIR, "--fs", "read-only", "--net", "allow", "--deny-domain", D}
 * or {"run", "--workspace", DIR, "--fs", "workspace-write", "--net", "off", "--", "make"}.
 * 0, or -1 with the reason in m->dlg.error. */
int tui_dialog_argv(struct tui_model *m, struct strv *out);

/* Split a command line into words: blanks separate, '…' and "…" quote, \ escapes (outside
 * single quotes). -1 on an unterminated quote. */
int tui_split_words(const char *s, struct strv *out);

/* Text split at newlines (a last line without one counts; no empty last line after one). */
void tui_split_lines(const char *s, struct strv *out);

/* The help page. */
const char *tui_help_text(void);

/* s for a terminal whose locale is not UTF-8 (a POSIX locale showed "…" as "~@"): "…" "...",
 * "·" ".", "→" "->", "—" and "–" "-", "×" "x", any other non-ASCII character "?". */
char *tui_ascii(const char *s);
