/* Tests for cmd/tui/tui_model: the TUI's behaviour without a terminal — navigation, the
 * filter, the detail and text pages, the confirmations, the New Session dialog (its fields,
 * defaults, validation and the argv it runs), the Sandboxed switch (off only after a yes,
 * disabled with the reason when jails do not work here) and the directory completion. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cmd/tui/tui_model.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static struct tui_row row(const char *id, const char *agent, const char *status, bool running)
{
	struct tui_row r = {0};
	r.id = xstrdup(id);
	r.short_id = xstrndup(id, 8);
	r.status = xstrdup(status);
	r.agent = xstrdup(agent);
	r.workspace = xstrdup("~/src/proj");
	r.policy = xstrdup("rw·off");
	r.started = xstrdup("just now");
	r.took = xstrdup("1.0s");
	r.command = xasprintf("%s --go", agent);
	r.running = running;
	return r;
}

/* Three sessions, newest first; agents claude (domains a.example, b.example) and codex. */
static void setup(struct tui_model *m)
{
	const char *names[] = {"claude", "codex"};
	struct strv doms[2] = {STRV_INIT, STRV_INIT};
	strv_push(&doms[0], "a.example");
	strv_push(&doms[0], "*.b.example");
	strv_push(&doms[1], "c.example");
	tui_init(m, names, doms, 2, "/work/proj");
	strv_free(&doms[0]);
	strv_free(&doms[1]);
	struct tui_row *r = xcalloc(3, sizeof *r);
	r[0] = row("11111111-aaaa", "claude", "exited 0", false);
	r[1] = row("22222222-bbbb", "codex", "running", true);
	r[2] = row("33333333-cccc", "-", "exited 3", false);
	tui_set_rows(m, r, 3);
	m->page = 2;
}

static const char *sel_id(const struct tui_model *m)
{
	return tui_selected(m) ? tui_selected(m)->id : "(none)";
}

static void keys(struct tui_model *m, const char *s)
{
	for (; *s; s++)
		(void)tui_key(m, *s);
}

static char *joined(const struct strv *v)
{
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < v->n; i++)
		sb_addf(&b, "%s%s", i ? " " : "", v->v[i]);
	return sb_steal(&b);
}

static void argv_is(struct tui_model *m, const char *want)
{
	struct strv v = STRV_INIT;
	int rc = tui_dialog_argv(m, &v);
	char *got = rc == 0 ? joined(&v) : xasprintf("error: %s", m->dlg.error);
	if (strcmp(got, want))
		fail_msg("argv: got \"%s\", want \"%s\"", got, want);
	free(got);
	strv_free(&v);
}

static void navigation(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	assert_string_equal(sel_id(&m), "11111111-aaaa");
	assert_int_equal(tui_key(&m, TK_UP), TA_NONE); /* already at the top */
	assert_int_equal(tui_key(&m, 'j'), TA_DETAIL);
	assert_string_equal(sel_id(&m), "22222222-bbbb");
	assert_int_equal(tui_key(&m, TK_DOWN), TA_DETAIL);
	assert_string_equal(sel_id(&m), "33333333-cccc");
	assert_int_equal(m.top, 1); /* a page of 2: scrolled */
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE);
	assert_int_equal(tui_key(&m, 'k'), TA_DETAIL);
	assert_int_equal(tui_key(&m, TK_HOME), TA_DETAIL);
	assert_string_equal(sel_id(&m), "11111111-aaaa");
	assert_int_equal(m.top, 0);
	assert_int_equal(tui_key(&m, TK_END), TA_DETAIL);
	assert_string_equal(sel_id(&m), "33333333-cccc");
	/* new rows (another process added one): the selection stays on its session */
	struct tui_row *r = xcalloc(4, sizeof *r);
	r[0] = row("00000000-new", "claude", "running", true);
	r[1] = row("11111111-aaaa", "claude", "exited 0", false);
	r[2] = row("22222222-bbbb", "codex", "exited 0", false);
	r[3] = row("33333333-cccc", "-", "exited 3", false);
	assert_false(tui_set_rows(&m, r, 4));
	assert_string_equal(sel_id(&m), "33333333-cccc");
	/* the selected one deleted elsewhere: the selection moves, the caller is told */
	r = xcalloc(1, sizeof *r);
	r[0] = row("00000000-new", "claude", "running", true);
	assert_true(tui_set_rows(&m, r, 1));
	assert_string_equal(sel_id(&m), "00000000-new");
	/* q quits, Ctrl-C too */
	assert_int_equal(tui_key(&m, 'q'), TA_QUIT);
	assert_int_equal(tui_key(&m, TK_CTRL_C), TA_QUIT);
	tui_free(&m);
}

static void empty_list(void **state)
{
	(void)state;
	struct tui_model m;
	tui_init(&m, NULL, NULL, 0, "/");
	assert_null(tui_selected(&m));
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE);
	assert_int_equal(tui_key(&m, TK_ENTER), TA_NONE);
	assert_int_equal(tui_key(&m, 'd'), TA_NONE);
	assert_int_equal(tui_key(&m, 'l'), TA_NONE);
	assert_int_equal(m.mode, TM_LIST);
	/* only "command…" to choose */
	assert_int_equal(tui_key(&m, 'n'), TA_DIALOG);
	assert_string_equal(tui_agent_label(&m, m.dlg.agent), "command…");
	assert_int_equal(m.dlg.net, TN_OFF);
	tui_free(&m);
}

static void filter(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	assert_int_equal(tui_key(&m, '/'), TA_NONE);
	assert_int_equal(m.mode, TM_FILTER);
	keys(&m, "COD"); /* case-insensitive */
	assert_int_equal(m.nvis, 1);
	assert_string_equal(sel_id(&m), "22222222-bbbb");
	assert_int_equal(tui_key(&m, TK_BACKSPACE), TA_NONE);
	assert_string_equal(m.filter, "CO");
	assert_int_equal(tui_key(&m, TK_ENTER), TA_NONE);
	assert_int_equal(m.mode, TM_LIST);
	assert_int_equal(m.nvis, 1);
	/* Esc in the list clears the filter, the selection staying */
	assert_int_equal(tui_key(&m, TK_ESC), TA_NONE);
	assert_int_equal(m.nvis, 3);
	assert_string_equal(sel_id(&m), "22222222-bbbb");
	/* nothing matches: no selection, Enter does nothing */
	keys(&m, "/zzz");
	assert_int_equal(m.nvis, 0);
	assert_null(tui_selected(&m));
	assert_int_equal(tui_key(&m, TK_ESC), TA_DETAIL); /* Esc while typing: cleared */
	assert_int_equal(m.nvis, 3);
	/* matches the status and the workspace too */
	keys(&m, "/exited 3");
	assert_int_equal(m.nvis, 1);
	assert_string_equal(sel_id(&m), "33333333-cccc");
	tui_free(&m);
}

static void resume_delete_log(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	assert_int_equal(tui_key(&m, TK_ENTER), TA_RESUME);
	assert_int_equal(tui_key(&m, 'l'), TA_LOG);
	/* delete asks first: only y deletes */
	assert_int_equal(tui_key(&m, 'd'), TA_NONE);
	assert_int_equal(m.mode, TM_CONFIRM_DELETE);
	assert_int_equal(tui_key(&m, 'n'), TA_NONE);
	assert_int_equal(m.mode, TM_LIST);
	assert_non_null(m.status);
	assert_int_equal(tui_key(&m, 'd'), TA_NONE);
	assert_int_equal(tui_key(&m, TK_ENTER), TA_NONE); /* Enter is not a yes */
	assert_int_equal(tui_key(&m, 'd'), TA_NONE);
	assert_int_equal(tui_key(&m, 'y'), TA_DELETE);
	assert_string_equal(sel_id(&m), "11111111-aaaa");
	/* a running session is neither resumed nor deleted */
	assert_int_equal(tui_key(&m, 'j'), TA_DETAIL);
	assert_int_equal(tui_key(&m, TK_ENTER), TA_NONE);
	assert_string_equal(m.status, "that session is still running");
	assert_int_equal(tui_key(&m, 'd'), TA_NONE);
	assert_int_equal(m.mode, TM_LIST);
	tui_free(&m);
}

/* v, a, x: a --fs review session's change set shown, applied, discarded (issue 30) */
static void review_keys(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	/* not a review session: nothing but a word why */
	assert_int_equal(tui_key(&m, 'v'), TA_NONE);
	assert_string_equal(m.status, "that session did not run with --fs review: it has no "
				      "change set");
	m.rows[0].review = m.rows[1].review = true;
	assert_int_equal(tui_key(&m, 'v'), TA_DIFF);
	/* apply and discard ask first: only y does it */
	assert_int_equal(tui_key(&m, 'a'), TA_NONE);
	assert_int_equal(m.mode, TM_CONFIRM_APPLY);
	assert_int_equal(tui_key(&m, TK_ENTER), TA_NONE);
	assert_string_equal(m.status, "not applied");
	assert_int_equal(tui_key(&m, 'a'), TA_NONE);
	assert_int_equal(tui_key(&m, 'y'), TA_APPLY);
	assert_int_equal(tui_key(&m, 'x'), TA_NONE);
	assert_int_equal(m.mode, TM_CONFIRM_DISCARD);
	assert_int_equal(tui_key(&m, 'n'), TA_NONE);
	assert_string_equal(m.status, "not discarded");
	assert_int_equal(tui_key(&m, 'x'), TA_NONE);
	assert_int_equal(tui_key(&m, 'Y'), TA_DISCARD);
	/* a running session's change set is in use: shown, not applied or discarded */
	assert_int_equal(tui_key(&m, 'j'), TA_DETAIL);
	assert_int_equal(tui_key(&m, 'v'), TA_DIFF);
	assert_int_equal(tui_key(&m, 'a'), TA_NONE);
	assert_int_equal(m.mode, TM_LIST);
	assert_string_equal(m.status, "that session is running: its change set is in use");
	assert_int_equal(tui_key(&m, 'x'), TA_NONE);
	assert_int_equal(m.mode, TM_LIST);
	tui_free(&m);
}

static void text_pages(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	assert_int_equal(tui_key(&m, '?'), TA_NONE);
	assert_int_equal(m.mode, TM_TEXT);
	assert_true(m.text.n > 5);
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE);
	assert_int_equal(m.text_top, 1);
	assert_int_equal(tui_key(&m, TK_END), TA_NONE);
	assert_int_equal(m.text_top, m.text.n - m.page);
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE); /* not past the end */
	assert_int_equal(m.text_top, m.text.n - m.page);
	assert_int_equal(tui_key(&m, 'q'), TA_NONE); /* q leaves the page, not the TUI */
	assert_int_equal(m.mode, TM_LIST);
	tui_set_text(&m, "log", "one\ntwo\n");
	assert_int_equal(m.text.n, 2);
	assert_string_equal(m.text.v[1], "two");
	assert_int_equal(tui_key(&m, TK_ESC), TA_NONE);
	assert_int_equal(m.mode, TM_LIST);
	tui_set_detail(&m, "11111111-aaaa", "policy …");
	assert_string_equal(m.detail_id, "11111111-aaaa");
	tui_free(&m);
}

static void dialog_fields(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	assert_int_equal(tui_key(&m, 'n'), TA_DIALOG);
	assert_int_equal(m.mode, TM_DIALOG);
	/* defaults: the first agent, this directory, sandboxed, read-write, its allow-list */
	assert_string_equal(tui_agent_label(&m, m.dlg.agent), "claude");
	assert_string_equal(m.dlg.dir, "/work/proj");
	assert_true(m.dlg.sandboxed);
	assert_false(m.dlg.read_only);
	assert_int_equal(m.dlg.net, TN_ALLOW);
	assert_string_equal(m.dlg.allow, "a.example, *.b.example");
	assert_false(tui_field_shown(&m, TF_COMMAND));
	assert_true(tui_field_shown(&m, TF_ALLOW));
	argv_is(&m, "claude --workspace /work/proj --fs workspace-write --net allow --");
	/* another agent: its own list */
	assert_int_equal(tui_key(&m, TK_RIGHT), TA_NONE);
	assert_string_equal(tui_agent_label(&m, m.dlg.agent), "codex");
	assert_string_equal(m.dlg.allow, "c.example");
	/* "command…": a command field, the network off as for `run` */
	assert_int_equal(tui_key(&m, TK_RIGHT), TA_NONE);
	assert_string_equal(tui_agent_label(&m, m.dlg.agent), "command…");
	assert_true(tui_field_shown(&m, TF_COMMAND));
	assert_int_equal(m.dlg.net, TN_OFF);
	assert_false(tui_field_shown(&m, TF_ALLOW));
	argv_is(&m, "error: type the command to run");
	assert_int_equal(tui_key(&m, TK_ENTER), TA_NONE); /* refused: the dialog stays */
	assert_int_equal(m.mode, TM_DIALOG);
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE);
	assert_int_equal(m.dlg.focus, TF_COMMAND);
	keys(&m, "make 'a b' \"c\\\"d\"");
	/* down to the filesystem: read-only */
	assert_int_equal(tui_key(&m, TK_TAB), TA_NONE);
	assert_int_equal(m.dlg.focus, TF_DIR);
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE);
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE);
	assert_int_equal(m.dlg.focus, TF_FS);
	assert_int_equal(tui_key(&m, ' '), TA_NONE);
	assert_true(m.dlg.read_only);
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE);
	assert_int_equal(tui_key(&m, TK_RIGHT), TA_NONE);
	assert_int_equal(m.dlg.net, TN_ON);
	argv_is(&m, "run --workspace /work/proj --fs read-only --net on -- make a b c\"d");
	assert_int_equal(tui_key(&m, TK_RIGHT), TA_NONE);
	assert_int_equal(m.dlg.net, TN_ALLOW);
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE);
	assert_int_equal(m.dlg.focus, TF_ALLOW);
	keys(&m, "x.example, *.y.example:8443");
	argv_is(&m, "run --workspace /work/proj --fs read-only --net allow --allow-domain x.example "
		    "--allow-domain *.y.example:8443 -- make a b c\"d");
	keys(&m, " *.com");
	argv_is(&m, "error: allow-list: a wildcard needs at least two labels after '*.' "
		    "(*.example.com, not *.com): *.com");
	for (int i = 0; i < 6; i++)
		(void)tui_key(&m, TK_BACKSPACE);
	/* the focus wraps; hidden fields are skipped */
	assert_int_equal(tui_key(&m, TK_DOWN), TA_NONE);
	assert_int_equal(m.dlg.focus, TF_AGENT);
	assert_int_equal(tui_key(&m, TK_UP), TA_NONE);
	assert_int_equal(m.dlg.focus, TF_ALLOW);
	assert_int_equal(tui_key(&m, TK_ENTER), TA_RUN);
	assert_int_equal(m.mode, TM_LIST);
	/* Esc cancels; the dialog opens afresh (but for the directory) */
	free(m.dlg.dir);
	m.dlg.dir = xstrdup("/work/other");
	assert_int_equal(tui_key(&m, 'n'), TA_DIALOG);
	assert_string_equal(tui_agent_label(&m, m.dlg.agent), "claude");
	assert_false(m.dlg.read_only);
	assert_string_equal(m.dlg.command, "");
	assert_string_equal(m.dlg.dir, "/work/other");
	assert_int_equal(tui_key(&m, TK_ESC), TA_NONE);
	assert_int_equal(m.mode, TM_LIST);
	tui_free(&m);
}

static void dialog_agent_list(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	(void)tui_key(&m, 'n');
	/* the profile's domains taken off the list are denied; added ones allowed */
	free(m.dlg.allow);
	m.dlg.allow = xstrdup("*.b.example extra.example");
	argv_is(&m, "claude --workspace /work/proj --fs workspace-write --net allow --allow-domain "
		    "extra.example --deny-domain a.example --");
	/* a relative directory is refused */
	free(m.dlg.dir);
	m.dlg.dir = xstrdup("proj");
	argv_is(&m, "error: the directory must be an absolute path");
	tui_free(&m);
}

/* After a session started from the dialog, the new row is selected (issue 26: the selection
 * stayed on the row it was on, so `l` showed that row's log). */
static void select_new(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	keys(&m, "j");
	assert_string_equal(sel_id(&m), "22222222-bbbb");
	struct strv before = STRV_INIT;
	tui_row_ids(&m, &before);
	assert_int_equal(before.n, 3);
	assert_false(tui_select_new(&m, &before)); /* nothing new: the selection stays */
	assert_string_equal(sel_id(&m), "22222222-bbbb");
	struct tui_row *r = xcalloc(4, sizeof *r);
	r[0] = row("44444444-dddd", "-", "exited 0", false);
	r[1] = row("11111111-aaaa", "claude", "exited 0", false);
	r[2] = row("22222222-bbbb", "codex", "running", true);
	r[3] = row("33333333-cccc", "-", "exited 3", false);
	tui_set_rows(&m, r, 4);
	assert_string_equal(sel_id(&m), "22222222-bbbb"); /* kept on its id, as before */
	assert_true(tui_select_new(&m, &before));
	assert_string_equal(sel_id(&m), "44444444-dddd");
	assert_int_equal(m.top, 0);
	assert_int_equal(tui_key(&m, 'l'), TA_LOG); /* for the session just started */
	strv_free(&before);
	tui_free(&m);
}

/* The dialog starts on an installed agent and marks the others; none installed: the first. */
static void installed_agents(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	const bool only_codex[] = {false, true};
	tui_set_installed(&m, only_codex);
	(void)tui_key(&m, 'n');
	assert_string_equal(tui_agent_label(&m, m.dlg.agent), "codex");
	assert_string_equal(m.dlg.allow, "c.example"); /* codex's defaults, not claude's */
	assert_string_equal(tui_agent_label(&m, 0), "claude (not installed)");
	assert_string_equal(tui_agent_label(&m, 2), "command…");
	(void)tui_key(&m, TK_ESC);
	const bool none[] = {false, false};
	tui_set_installed(&m, none);
	(void)tui_key(&m, 'n');
	assert_int_equal(m.dlg.agent, 0);
	assert_string_equal(tui_agent_label(&m, 1), "codex (not installed)");
	tui_free(&m);
}

/* A locale that is not UTF-8: ASCII for what the TUI draws (issue 26: "~@" for "…"). */
static void ascii_fallbacks(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"rw·off", "rw.off"},
		{"…/src/proj", ".../src/proj"},
		{"command…", "command..."},
		{"a → b — c – d ×2", "a -> b - c - d x2"},
		{"naïve 日本", "na?ve ??"},
		{"plain ascii", "plain ascii"},
		{"", ""},
		{"\xff\x80x", "?x"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *got = tui_ascii(cases[i][0]);
		if (strcmp(got, cases[i][1]))
			fail_msg("tui_ascii(\"%s\") = \"%s\", want \"%s\"", cases[i][0], got,
				 cases[i][1]);
		free(got);
	}
	char *n = tui_ascii(NULL);
	assert_string_equal(n, "");
	free(n);
}

/* The configuration's defaults: the dialog opens with them, and the domains it adds stay the
 * agent's own (not repeated as flags: `agentjail NAME` reads the same files). */
static void config_defaults(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	struct strv more = STRV_INIT;
	strv_push(&more, "cfg.example");
	tui_set_agent_defaults(&m, 0, TND_ALLOW, true, &more);
	strv_free(&more);
	(void)tui_key(&m, 'n');
	assert_true(m.dlg.read_only);
	assert_int_equal(m.dlg.net, TN_ALLOW);
	assert_non_null(strstr(m.dlg.allow, "cfg.example"));
	argv_is(&m, "claude --workspace /work/proj --fs read-only --net allow --");
	/* a configuration that turns the network off for a command: no domain flag then, even if
	 * the list has entries (--net off with --allow-domain is a contradiction) */
	m.dlg.agent = 2;
	tui_set_agent_defaults(&m, 2, TND_OFF, false, NULL);
	assert_false(m.dlg.read_only);
	free(m.dlg.allow);
	m.dlg.allow = xstrdup("x.example");
	free(m.dlg.command);
	m.dlg.command = xstrdup("true");
	assert_int_equal(m.dlg.net, TN_OFF);
	argv_is(&m, "run --workspace /work/proj --fs workspace-write --net off -- true");
	tui_free(&m);
}

static void unsandboxed_needs_yes(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	(void)tui_key(&m, 'n');
	tui_set_avail(&m, true, NULL);
	m.dlg.focus = TF_SANDBOX;
	assert_int_equal(tui_key(&m, ' '), TA_NONE);
	assert_int_equal(m.mode, TM_CONFIRM_UNSANDBOXED);
	assert_true(m.dlg.sandboxed); /* not yet */
	assert_int_equal(tui_key(&m, TK_ENTER), TA_NONE); /* Enter is not a yes */
	assert_int_equal(m.mode, TM_DIALOG);
	assert_true(m.dlg.sandboxed);
	assert_int_equal(tui_key(&m, TK_RIGHT), TA_NONE);
	assert_int_equal(tui_key(&m, 'y'), TA_NONE);
	assert_int_equal(m.mode, TM_DIALOG);
	assert_false(m.dlg.sandboxed);
	assert_false(tui_field_shown(&m, TF_FS));
	assert_false(tui_field_shown(&m, TF_NET));
	assert_false(tui_field_shown(&m, TF_ALLOW));
	argv_is(&m, "claude --workspace /work/proj --fs danger-full-access --net on --");
	/* back on needs no confirmation */
	assert_int_equal(tui_key(&m, ' '), TA_NONE);
	assert_true(m.dlg.sandboxed);
	assert_int_equal(m.mode, TM_DIALOG);
	tui_free(&m);
}

static void sandbox_unavailable(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	(void)tui_key(&m, 'n');
	assert_true(tui_sandbox_enabled(&m)); /* not checked yet */
	tui_set_avail(&m, false, "no bwrap at /nonexistent");
	assert_false(tui_sandbox_enabled(&m));
	assert_true(m.dlg.sandboxed); /* never unsandboxed by default */
	m.dlg.focus = TF_SANDBOX;
	assert_int_equal(tui_key(&m, ' '), TA_NONE);
	assert_int_equal(m.mode, TM_DIALOG); /* no confirmation offered: disabled */
	assert_true(m.dlg.sandboxed);
	assert_non_null(strstr(m.dlg.error, "disabled: no bwrap at /nonexistent"));
	assert_int_equal(tui_key(&m, TK_LEFT), TA_NONE);
	assert_true(m.dlg.sandboxed);
	/* and a sandboxed session cannot be started: the reason and doctor */
	assert_int_equal(tui_key(&m, TK_ENTER), TA_NONE);
	assert_int_equal(m.mode, TM_DIALOG);
	assert_non_null(strstr(m.dlg.error, "no bwrap at /nonexistent"));
	assert_non_null(strstr(m.dlg.error, "agentjail doctor"));
	tui_free(&m);
}

static void completion(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	(void)tui_key(&m, 'n');
	m.dlg.focus = TF_DIR;
	free(m.dlg.dir);
	m.dlg.dir = xstrdup("/work/pr");
	assert_int_equal(tui_key(&m, TK_TAB), TA_COMPLETE);
	struct strv c = STRV_INIT;
	strv_push(&c, "project-a/");
	strv_push(&c, "project-b/");
	tui_complete(&m, &c);
	assert_string_equal(m.dlg.dir, "/work/project-");
	assert_non_null(strstr(m.status, "project-a/  project-b/"));
	strv_free(&c);
	strv_push(&c, "project-b/");
	tui_complete(&m, &c);
	assert_string_equal(m.dlg.dir, "/work/project-b/");
	strv_free(&c);
	tui_complete(&m, &c);
	assert_string_equal(m.dlg.dir, "/work/project-b/");
	assert_string_equal(m.status, "no directory matches");
	/* typing and deleting in the directory */
	keys(&m, "src");
	assert_string_equal(m.dlg.dir, "/work/project-b/src");
	(void)tui_key(&m, TK_BACKSPACE);
	assert_string_equal(m.dlg.dir, "/work/project-b/sr");
	tui_free(&m);
}

static void split_words(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want;
		int rc;
	} t[] = {
		{"make test", "make|test", 0},
		{"  a   b  ", "a|b", 0},
		{"sh -c 'echo a; exit 3'", "sh|-c|echo a; exit 3", 0},
		{"a\\ b \"c d\" ''", "a b|c d|", 0},
		{"\"x\\\"y\"", "x\"y", 0},
		{"'unterminated", "", -1},
		{"", "", 0},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		struct strv v = STRV_INIT;
		int rc = tui_split_words(t[i].in, &v);
		struct strbuf b = STRBUF_INIT;
		for (size_t k = 0; k < v.n; k++)
			sb_addf(&b, "%s%s", k ? "|" : "", v.v[k]);
		if (rc != t[i].rc || (rc == 0 && strcmp(sb_str(&b), t[i].want)))
			fail_msg("split \"%s\": rc %d \"%s\", want %d \"%s\"", t[i].in, rc, sb_str(&b),
				 t[i].rc, t[i].want);
		sb_free(&b);
		strv_free(&v);
	}
}

/* A running session's question (--net ask): o, s, a, x answer the first one; without one they
 * do nothing, and in the dialog they are text. */
static void questions(void **state)
{
	(void)state;
	struct tui_model m;
	setup(&m);
	assert_int_equal(tui_key(&m, 'o'), TA_NONE);
	struct tui_question *q = xcalloc(2, sizeof *q);
	q[0] = (struct tui_question){xstrdup("22222222-bbbb"), xstrdup("22222222"), 3,
				     xstrdup("evil.example:443 (connect)")};
	q[1] = (struct tui_question){xstrdup("22222222-bbbb"), xstrdup("22222222"), 4,
				     xstrdup("x.example (a name lookup)")};
	tui_set_questions(&m, q, 2);
	static const struct {
		int key;
		enum ask_answer a;
	} k[] = {{'o', ASK_ONCE}, {'s', ASK_SESSION}, {'a', ASK_ALWAYS}, {'x', ASK_DENY}};
	for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
		assert_int_equal(tui_key(&m, k[i].key), TA_ANSWER);
		assert_int_equal(m.answer, k[i].a);
	}
	assert_int_equal(m.qs[0].id, 3);
	assert_int_equal(tui_key(&m, 'n'), TA_DIALOG);
	assert_int_equal(tui_key(&m, 'o'), TA_NONE); /* the dialog's own keys */
	tui_set_questions(&m, NULL, 0);
	tui_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(questions),
		cmocka_unit_test(navigation),	     cmocka_unit_test(empty_list),
		cmocka_unit_test(filter),	     cmocka_unit_test(resume_delete_log),
		cmocka_unit_test(text_pages),	     cmocka_unit_test(dialog_fields),
		cmocka_unit_test(dialog_agent_list), cmocka_unit_test(unsandboxed_needs_yes),
		cmocka_unit_test(sandbox_unavailable), cmocka_unit_test(completion),
		cmocka_unit_test(split_words),	     cmocka_unit_test(config_defaults),
		cmocka_unit_test(select_new),	     cmocka_unit_test(installed_agents),
		cmocka_unit_test(ascii_fallbacks),   cmocka_unit_test(review_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
