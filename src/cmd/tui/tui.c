/* `agentjail tui`: the session manager. The loop: the store read into tui_model's rows, keys
 * fed to the model (cmd/tui/tui_model.c), its actions carried out, the view drawn
 * (cmd/tui/tui_view.c). Sessions are started, resumed, deleted and their logs read by running this
 * very binary (`agentjail NAME …`, `run …`, `resume ID`, `rm ID`, `log ID`): the same code path
 * as the command line, recorded the same way, the session owning the real terminal while it
 * runs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/tui/tui_view.h"
#include "core/backend/backend.h"
#include "core/jail/ctlsock.h"
#include "core/plan/ctlproto.h"
#include "core/plan/profile.h"
#include "cmd/tui/tui_model.h"
#include "core/plan/resolve.h"
#include "core/session/netfmt.h"
#include "core/session/sessfmt.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/termtext.h"
#include "util/xalloc.h"

#define POLL_MS 500         /* how often the store is checked for another process's change */
#define REFRESH_MS 5000     /* the "ago" and "took" columns are recomputed this often anyway */
#define LIST_MAX 1000       /* sessions listed */
#define DETAIL_NET 6        /* the detail pane's last network decisions */
#define CAPTURE_MAX (1 << 20)

static volatile sig_atomic_t quit_signal;

static void on_quit(int sig) { quit_signal = sig; }

/* ---- the store -------------------------------------------------------------------------- */

struct tui_ctx {
	struct store *st;
	long long data_version;
	const char *home;
	long utc_off;
	/* the session whose change set `v` showed last, and that diff's digest: `a` applies it
	 * only as shown (apply --expect, doc/design.md §3c) */
	char *diff_id;
	char diff_digest[17];
};

/* The digest a diff printed ("--expect" and 16 lower-case hex digits; the last one), or "". */
static void diff_digest(const char *out, char d[17])
{
	d[0] = '\0';
	for (const char *p = out; (p = strstr(p, "--expect ")); p++) {
		const char *h = p + strlen("--expect ");
		size_t n = strspn(h, "0123456789abcdef");
		if (n == 16) {
			memcpy(d, h, 16);
			d[16] = '\0';
		}
	}
}

static long long data_version(struct store *st)
{
	sqlite3_stmt *s = NULL;
	long long v = -1;
	if (sqlite3_prepare_v2(store_handle(st), "PRAGMA data_version", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static char *home_short(const char *path, const char *home)
{
	size_t n = home ? strlen(home) : 0;
	if (n > 1 && !strncmp(path, home, n) && (path[n] == '/' || !path[n])) {
		_cleanup_free_ char *t = xasprintf("~%s", path + n);
		return fmt_clean(t);
	}
	return fmt_clean(path);
}

static struct tui_row *rows_from(const struct tui_ctx *c, const struct session *v, size_t n)
{
	struct tui_row *rows = xcalloc(n ? n : 1, sizeof *rows);
	char **ids = xcalloc(n ? n : 1, sizeof *ids);
	for (size_t i = 0; i < n; i++)
		ids[i] = v[i].id;
	size_t plen = sessfmt_id_prefix_len(ids, n, 8);
	free(ids);
	long long now = store_now_ms();
	for (size_t i = 0; i < n; i++) {
		const struct session *s = &v[i];
		struct tui_row *r = &rows[i];
		r->id = xstrdup(s->id);
		r->short_id = xstrndup(s->id, plen);
		r->status = sessfmt_status(s->status, s->exit_status);
		r->agent = xstrdup(s->profile ? s->profile : "-");
		r->workspace = home_short(s->workspace ? s->workspace : "", c->home);
		r->policy = sessfmt_policy(s->policy_json ? s->policy_json : "");
		r->started = sessfmt_ago(s->started_ms, now, c->utc_off);
		long long from = s->last_started_ms ? s->last_started_ms : s->started_ms;
		r->took = s->status == SESS_RUNNING ? sessfmt_duration(now - from)
			  : s->ended_ms		    ? sessfmt_duration(s->ended_ms - from)
						    : xstrdup("-");
		r->command = sessfmt_argv(&s->argv);
		r->running = s->status == SESS_RUNNING;
		r->review = s->policy_json && strstr(s->policy_json, "\"fs\":\"review\"");
	}
	return rows;
}

/* Open the store when it exists (it may appear later: the first run creates it). */
static void ensure_store(struct tui_ctx *c)
{
	if (c->st)
		return;
	struct store *st = NULL;
	if (cmd_store_existing(&st) == 0)
		c->st = st;
}

static char *pretty_json(const char *j)
{
	return fmt_clean(j ? j : "null");
}

/* The detail pane of a session: full policy, bwrap argv, the last network decisions and the
 * violations. */
static char *detail_of(struct tui_ctx *c, const char *id)
{
	struct session s;
	struct err e = {0};
	char buf[ERR_FMT_MAX];
	if (!c->st || store_get(c->st, id, &s, &e) != 0) {
		err_format(&e, buf, sizeof buf);
		return xasprintf("cannot read session %s: %s", id, buf);
	}
	struct strbuf b = STRBUF_INIT;
	_cleanup_free_ char *cmdline = sessfmt_argv(&s.argv);
	_cleanup_free_ char *ws = fmt_clean(s.workspace ? s.workspace : "");
	_cleanup_free_ char *started = sessfmt_time(s.started_ms, c->utc_off);
	_cleanup_free_ char *pol = pretty_json(s.policy_json);
	_cleanup_free_ char *bw = s.bwrap_json ? pretty_json(s.bwrap_json)
					       : xstrdup("(none: ran WITHOUT a sandbox)");
	_cleanup_free_ char *status = sessfmt_status(s.status, s.exit_status);
	sb_addf(&b, "session  %s  %s\n", s.id, s.bwrap_json ? "" : "UNSANDBOXED");
	sb_addf(&b, "started  %s, %d attempt%s, %s\n", started, s.attempts,
		s.attempts == 1 ? "" : "s", status);
	sb_addf(&b, "command  %s\nworkdir  %s\n", cmdline, ws);
	_cleanup_free_ char *pending = cmd_review_pending(&s);
	if (pending) /* numbers and agentjail's words */
		sb_addf(&b, "review   %s\n", pending);
	bool net = s.n_net_allowed + s.n_net_denied > 0;
	if (net) {
		/* before the long policy and argv, so it is on screen: allowed, failed upstream
		 * (with why), denied */
		struct net_count *fail = NULL;
		size_t nfail = 0;
		if (s.n_net_failed > 0 &&
		    store_net_counts(c->st, s.id, NET_FAILED, DETAIL_NET, &fail, &nfail, &e) < 0)
			nfail = 0;
		_cleanup_free_ char *sum = netfmt_summary(s.n_net_allowed, s.n_net_failed,
							  s.n_net_denied, fail, nfail, NULL, 0, 0);
		net_counts_free(fail, nfail);
		sb_addf(&b, "network  %s\n", sum);
	}
	sb_addf(&b, "policy   %s\nbwrap    %s\n", pol, bw);
	if (net) {
		struct net_row *nr = NULL;
		size_t nn = 0;
		if (store_net_events(c->st, s.id, 0, 0, &nr, &nn, &e) == 0) {
			sb_add(&b, "network decisions, the last:\n");
			for (size_t i = nn > DETAIL_NET ? nn - DETAIL_NET : 0; i < nn; i++) {
				_cleanup_free_ char *l = netfmt_log_line(&nr[i].ev, c->utc_off, 0);
				sb_addf(&b, "  %s\n", l);
			}
			free(nr);
		}
	}
	struct event *ev = NULL;
	size_t ne = 0;
	if (s.n_violations > 0 && store_events(c->st, s.id, &ev, &ne, &e) == 0) {
		sb_addf(&b, "violations %lld:\n", s.n_violations);
		for (size_t i = 0; i < ne; i++)
			if (!strncmp(ev[i].kind, "violation", 9)) {
				_cleanup_free_ char *l = netfmt_log_violation(&ev[i], c->utc_off, 0);
				sb_addf(&b, "  %s\n", l);
			}
		events_free(ev, ne);
	}
	session_free(&s);
	return sb_steal(&b);
}

static void set_detail(struct tui_ctx *c, struct tui_model *m)
{
	const struct tui_row *r = tui_selected(m);
	if (!r)
		return;
	_cleanup_free_ char *d = detail_of(c, r->id);
	tui_set_detail(m, r->id, d);
}

/* Opening the store marks the sessions whose agentjail vanished as lost: reopen it when the
 * list shows a running one (or after a child of ours ended). */
static void reopen_store(struct tui_ctx *c)
{
	store_close(c->st);
	c->st = NULL;
}

static bool any_running(const struct tui_model *m)
{
	for (size_t i = 0; i < m->nrows; i++)
		if (m->rows[i].running)
			return true;
	return false;
}

static void reload(struct tui_ctx *c, struct tui_model *m)
{
	ensure_store(c);
	struct session *v = NULL;
	size_t n = 0;
	struct err e = {0};
	if (c->st && store_list(c->st, NULL, LIST_MAX, &v, &n, &e) < 0) {
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		tui_set_status(m, buf);
		return;
	}
	if (c->st)
		c->data_version = data_version(c->st);
	tui_set_rows(m, rows_from(c, v, n), n);
	sessions_free(v, n);
	set_detail(c, m); /* the selected session may have changed state */
}

/* ---- --net ask's questions -------------------------------------------------------------- */

/* The open questions of the running sessions, asked on their control sockets
 * (core/jail/ctlsock.h); a session without one (not under --net ask) has none. */
static void poll_questions(struct tui_model *m)
{
	_cleanup_free_ char *dir = cmd_state_dir();
	struct tui_question *v = NULL;
	size_t n = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		if (!m->rows[i].running)
			continue;
		_cleanup_free_ char *path = ctlsock_path(dir, m->rows[i].id);
		struct stat st;
		if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		struct strv reply = STRV_INIT;
		struct err e = {0};
		if (ctlsock_call(path, "AJ1 questions", 300, &reply, &e) == 0) {
			for (size_t k = 1; k < reply.n; k++) {
				struct net_question q;
				if (ctlproto_question_parse(reply.v[k], strlen(reply.v[k]), &q) < 0)
					continue;
				v = xrealloc(v, (n + 1) * sizeof *v);
				char *what = q.port ? xasprintf("%s (%s)", q.entry,
								q.proto)
						    : xasprintf("%s (a name lookup)", q.entry);
				v[n++] = (struct tui_question){xstrdup(m->rows[i].id),
							      xstrdup(m->rows[i].short_id), q.id,
							      fmt_clean(what)};
				free(what);
			}
		}
		strv_free(&reply);
	}
	tui_set_questions(m, v, n);
}

static void do_answer(struct tui_model *m)
{
	if (!m->nqs)
		return;
	const struct tui_question *q = &m->qs[0];
	_cleanup_free_ char *dir = cmd_state_dir();
	_cleanup_free_ char *path = ctlsock_path(dir, q->session);
	_cleanup_free_ char *line = xasprintf("AJ1 answer %llu %s tui", (unsigned long long)q->id,
					      ask_answer_name(m->answer));
	struct strv reply = STRV_INIT;
	struct err e = {0};
	_cleanup_free_ char *msg = NULL;
	long n;
	const char *rest = "";
	if (ctlsock_call(path, line, 2000, &reply, &e) < 0) {
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		msg = xstrdup(buf);
	} else if (ctlproto_reply_head(reply.v[0], &n, &rest) != 1) {
		msg = xasprintf("session %s: %s", q->short_id, rest);
	} else {
		msg = xasprintf("%s: %s (session %s)", q->what,
				m->answer == ASK_DENY	   ? "denied"
				: m->answer == ASK_ONCE	   ? "allowed once"
				: m->answer == ASK_SESSION ? "allowed for the session"
							   : "allowed always",
				q->short_id);
	}
	strv_free(&reply);
	_cleanup_free_ char *shown = fmt_clean(msg);
	tui_set_status(m, shown);
	poll_questions(m);
}

/* ---- running this binary ---------------------------------------------------------------- */

/* argv for execv: "agentjail" then args (so a shim's name never applies). */
static char **self_argv(const struct strv *args)
{
	char **v = xcalloc(args->n + 2, sizeof *v);
	v[0] = (char *)"agentjail";
	for (size_t i = 0; i < args->n; i++)
		v[i + 1] = args->v[i];
	return v;
}

static void child_defaults(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGSEGV,
				   SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTSTP, SIGWINCH};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		signal(sigs[i], SIG_DFL);
}

static int wait_child(pid_t pid)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, oi, oq;
	sigaction(SIGINT, &ign, &oi);
	sigaction(SIGQUIT, &ign, &oq);
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &oi, NULL);
	sigaction(SIGQUIT, &oq, NULL);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* Give the terminal to `agentjail ARGS` run in dir (NULL: here) and take it back when it ends.
 * What it printed stays on screen until Enter, so it can be read: a failure's message, and a
 * success's output too (issue 26: it vanished at once). */
static int run_on_terminal(const struct strv *args, const char *dir)
{
	tuiv_suspend();
	_cleanup_free_ char **argv = self_argv(args);
	(void)fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		child_defaults();
		if (dir && chdir(dir) < 0) {
			fprintf(stderr, "agentjail tui: cannot enter %s: %s\n", dir, strerror(errno));
			_exit(EXIT_USAGE);
		}
		execv("/proc/self/exe", argv);
		fprintf(stderr, "agentjail tui: cannot run agentjail: %s\n", strerror(errno));
		_exit(EXIT_JAIL);
	}
	int rc = pid < 0 ? -1 : wait_child(pid);
	tuiv_shell_modes();
	if (pid < 0)
		fprintf(stderr, "agentjail tui: fork: %s\n", strerror(errno));
	fprintf(stderr, "\r\n[agentjail tui] exit status %d; press Enter to return\r\n", rc);
	int ch;
	while ((ch = getchar()) != EOF && ch != '\n' && ch != '\r')
		;
	clearerr(stdin);
	tuiv_resume();
	return rc;
}

/* `agentjail ARGS` with stdout and stderr captured (stdin /dev/null); its text, and *rc. */
static char *run_captured(const struct strv *args, int *rc)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return xasprintf("pipe: %s", strerror(errno));
	_cleanup_free_ char **argv = self_argv(args);
	pid_t pid = fork();
	if (pid == 0) {
		child_defaults();
		int nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(EXIT_JAIL);
		execv("/proc/self/exe", argv);
		_exit(EXIT_JAIL);
	}
	close(p[1]);
	struct strbuf b = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	size_t total = 0;
	while ((n = read(p[0], buf, sizeof buf)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (total < CAPTURE_MAX)
			sb_addn(&b, buf, (size_t)n);
		total += (size_t)n;
	}
	close(p[0]);
	*rc = pid < 0 ? -1 : wait_child(pid);
	char *raw = sb_steal(&b);
	/* each line cleaned for the terminal (a tab as spaces: a diff's code keeps its shape) */
	struct strbuf o = STRBUF_INIT;
	for (char *line = raw, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		struct strbuf t = STRBUF_INIT;
		for (const char *q = line; *q; q++)
			if (*q == '\t')
				sb_add(&t, "    ");
			else
				sb_addc(&t, *q);
		_cleanup_free_ char *c = fmt_clean(sb_str(&t));
		sb_free(&t);
		sb_addf(&o, "%s\n", c);
		if (!nl)
			break;
	}
	free(raw);
	return sb_steal(&o);
}

/* ---- the actions ------------------------------------------------------------------------ */

static void do_avail(struct tui_model *m)
{
	if (m->avail_known)
		return;
	/* the backend the TUI starts sessions in: agents run in the bwrap jail */
	const struct backend *b = backend_for_agents(backend_choose(NULL, NULL));
	struct avail_result a;
	struct err e = {0};
	char buf[ERR_FMT_MAX];
	if (b->available(&a, &e) < 0) {
		err_format(&e, buf, sizeof buf);
		tui_set_avail(m, false, buf);
	} else if (a.ok) {
		tui_set_avail(m, true, NULL);
	} else {
		_cleanup_free_ char *why = NULL;
		switch (a.outcome) {
		case AVAIL_NOT_STARTED:
			why = xasprintf("%s could not start a jail: %s", a.bwrap, a.diag.cause);
			break;
		case AVAIL_PREPARE:
			err_format(&a.prep_err, buf, sizeof buf);
			why = xasprintf("the jail could not be prepared: %s", buf);
			break;
		case AVAIL_TIMEOUT:
			why = xstrdup("the test jail did not finish in time");
			break;
		default:
			why = xasprintf("the test jail ran /bin/true with status %d: %s", a.status,
					a.message ? a.message : "");
			break;
		}
		_cleanup_free_ char *c = fmt_clean(why);
		tui_set_avail(m, false, c);
	}
	avail_result_free(&a);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void do_complete(struct tui_model *m)
{
	const char *dir = tui_dialog_dir(m);
	const char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	_cleanup_free_ char *parent = slash == dir ? xstrdup("/") : xstrndup(dir, (size_t)(slash - dir));
	const char *prefix = slash + 1;
	struct strv c = STRV_INIT;
	DIR *d = opendir(parent);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    strncmp(de->d_name, prefix, strlen(prefix)) ||
		    (de->d_name[0] == '.' && prefix[0] != '.'))
			continue;
		struct stat sb;
		if (fstatat(dirfd(d), de->d_name, &sb, 0) == 0 && S_ISDIR(sb.st_mode))
			strv_pushf(&c, "%s/", de->d_name);
	}
	if (d)
		closedir(d);
	qsort(c.v, c.n, sizeof *c.v, cmp_str);
	tui_complete(m, &c);
	strv_free(&c);
}

static void do_run(struct tui_ctx *c, struct tui_model *m)
{
	struct strv args = STRV_INIT;
	if (tui_dialog_argv(m, &args) < 0) {
		m->mode = TM_DIALOG;
		strv_free(&args);
		return;
	}
	const char *dir = tui_dialog_dir(m);
	struct stat sb;
	if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		_cleanup_free_ char *msg = xasprintf("%s is not a directory", dir);
		free(m->dlg.error);
		m->dlg.error = xstrdup(msg);
		m->mode = TM_DIALOG;
		strv_free(&args);
		return;
	}
	struct strv before = STRV_INIT;
	tui_row_ids(m, &before);
	int rc = run_on_terminal(&args, dir);
	_cleanup_free_ char *msg = xasprintf("%s finished: exit status %d", args.v[0], rc);
	tui_set_status(m, msg);
	strv_free(&args);
	reopen_store(c);
	reload(c, m);
	if (tui_select_new(m, &before)) /* the session just started, for l, Enter, d */
		set_detail(c, m);
	strv_free(&before);
}

static void do_simple(struct tui_ctx *c, struct tui_model *m, enum tui_action a)
{
	const struct tui_row *r = tui_selected(m);
	if (!r)
		return;
	_cleanup_free_ char *id = xstrdup(r->id);
	struct strv args = STRV_INIT;
	int rc = 0;
	if (a == TA_RESUME) {
		strv_push(&args, "resume");
		strv_push(&args, id);
		rc = run_on_terminal(&args, NULL);
		_cleanup_free_ char *msg = xasprintf("resume finished: exit status %d", rc);
		tui_set_status(m, msg);
		reopen_store(c);
		reload(c, m);
	} else if (a == TA_DELETE) {
		strv_push(&args, "rm");
		strv_push(&args, id);
		_cleanup_free_ char *out = run_captured(&args, &rc);
		char *nl = strchr(out, '\n');
		if (nl)
			*nl = '\0';
		tui_set_status(m, out);
		reload(c, m);
	} else if (a == TA_DIFF) {
		strv_push(&args, "diff");
		strv_push(&args, id);
		_cleanup_free_ char *out = run_captured(&args, &rc);
		free(c->diff_id);
		c->diff_id = xstrdup(id);
		diff_digest(out, c->diff_digest);
		_cleanup_free_ char *title = xasprintf("change set of %s (agentjail diff %s)",
						       r->short_id, r->short_id);
		tui_set_text(m, title, out[0] ? out : "(nothing pending)\n");
	} else if (a == TA_APPLY || a == TA_DISCARD) {
		strv_push(&args, a == TA_APPLY ? "apply" : "discard");
		strv_push(&args, id);
		if (a == TA_APPLY && c->diff_id && !strcmp(c->diff_id, id) && c->diff_digest[0]) {
			strv_push(&args, "--expect");
			strv_push(&args, c->diff_digest);
		}
		free(c->diff_id);
		c->diff_id = NULL;
		_cleanup_free_ char *out = run_captured(&args, &rc);
		tui_set_text(m, a == TA_APPLY ? "apply" : "discard", out);
		reload(c, m);
	} else if (a == TA_LOG) {
		strv_push(&args, "log");
		strv_push(&args, id);
		_cleanup_free_ char *out = run_captured(&args, &rc);
		_cleanup_free_ char *title = xasprintf("network log of %s (agentjail log %s)", r->short_id,
						       r->short_id);
		tui_set_text(m, title, out[0] ? out : "(nothing recorded)\n");
	}
	strv_free(&args);
}

/* ---- the loop --------------------------------------------------------------------------- */

/* The dialog's defaults for agent i (NULL: "command…", as `run`) from the configuration of
 * cwd, as `agentjail NAME` / `run` there would take them: its fs and net, and the domains the
 * files add. A file that cannot be read leaves the built-in defaults (starting the session then
 * says why, as the command line does). */
static void config_defaults(struct tui_model *m, size_t i, const char *agent, const char *cwd)
{
	struct parse_ctx ctx = {.cwd = cwd, .home = getenv("HOME"),
				.net_default = agent ? NET_ALLOW : NET_OFF};
	struct cmd_config cc;
	int rc = cmd_config_ctx(&cc, 0, NULL, agent, &ctx);
	if (rc == 0 && ctx.base) {
		const struct policy *b = ctx.base;
		enum net_mode net = ctx.base_net ? b->net : ctx.net_default;
		bool ro = ctx.base_fs && b->fs == FS_READ_ONLY;
		tui_set_agent_defaults(m, i,
				       net == NET_ON ? TND_ON : net == NET_ALLOW ? TND_ALLOW : TND_OFF,
				       ro, &b->allow_domains);
	}
	cmd_config_free(&cc);
}

static void model_init(struct tui_model *m)
{
	(void)cmd_config_profiles(); /* the user's [profile.NAME] are agents too (an error is
				      * said; the built-ins stay) */
	const struct profile *const *all = profile_all();
	size_t n = 0;
	while (all[n])
		n++;
	const char **names = xcalloc(n + 1, sizeof *names);
	struct strv *doms = xcalloc(n + 1, sizeof *doms);
	for (size_t i = 0; i < n; i++) {
		names[i] = all[i]->name;
		for (size_t k = 0; all[i]->domains && all[i]->domains[k]; k++)
			strv_push(&doms[i], all[i]->domains[k]);
	}
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	tui_init(m, names, doms, n, cwd ? cwd : "/");
	for (size_t i = 0; i <= n; i++)
		config_defaults(m, i, i < n ? names[i] : NULL, cwd ? cwd : "/");
	/* the dialog starts on an agent that is installed, and marks the others */
	bool *installed = xcalloc(n + 1, sizeof *installed);
	const char *home = getenv("HOME");
	for (size_t i = 0; i < n; i++) {
		struct resolved res = {0};
		struct err e = {0};
		installed[i] = cmd_find_agent(all[i], home ? home : "/", cwd ? cwd : "/", &res, &e) == 0;
		if (installed[i])
			resolved_free(&res);
	}
	tui_set_installed(m, installed);
	free(installed);
	for (size_t i = 0; i < n; i++)
		strv_free(&doms[i]);
	free(doms);
	free(names);
}

int cmd_tui(int argc, char **argv)
{
	if (argc > 0) {
		bool help = !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h");
		fputs("usage: agentjail tui\n"
		      "  the recorded sessions, newest first: resume, start (n), delete, logs;\n"
		      "  ? inside for the keys\n"
		      "example: agentjail tui\n",
		      help ? stdout : stderr);
		return help ? 0 : EXIT_USAGE;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		cmd_warn("tui: needs a terminal on stdin and stdout (agentjail sessions lists the "
			 "sessions without one)");
		return EXIT_USAGE;
	}
	struct tui_ctx c = {.home = getenv("HOME"), .utc_off = cmd_utc_offset()};
	struct tui_model m;
	model_init(&m);
	struct sigaction sa = {.sa_handler = on_quit};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (tuiv_start() < 0) {
		cmd_warn("tui: cannot start the terminal interface (TERM=%s)",
			 getenv("TERM") ? getenv("TERM") : "");
		tui_free(&m);
		return 1;
	}
	reload(&c, &m);
	long long last_poll = clock_mono_ms(), last_full = last_poll;
	bool done = false;
	while (!done && !quit_signal) {
		tuiv_draw(&m);
		int k = tuiv_key(POLL_MS);
		long long now = clock_mono_ms();
		if (k == TUIV_NONE || now - last_poll >= POLL_MS) {
			last_poll = now;
			ensure_store(&c);
			bool changed = c.st && data_version(c.st) != c.data_version;
			if (changed || now - last_full >= REFRESH_MS || (!c.st && k == TUIV_NONE)) {
				if (now - last_full >= REFRESH_MS && any_running(&m))
					reopen_store(&c);
				last_full = now;
				reload(&c, &m);
			}
			if (any_running(&m) || m.nqs)
				poll_questions(&m);
		}
		if (k == TUIV_NONE || k == TUIV_RESIZE)
			continue;
		enum tui_action a = tui_key(&m, k);
		switch (a) {
		case TA_QUIT:
			done = true;
			break;
		case TA_DETAIL:
			set_detail(&c, &m);
			break;
		case TA_DIALOG:
			do_avail(&m);
			break;
		case TA_COMPLETE:
			do_complete(&m);
			break;
		case TA_RUN:
			do_run(&c, &m);
			break;
		case TA_RESUME:
		case TA_DELETE:
		case TA_LOG:
		case TA_DIFF:
		case TA_APPLY:
		case TA_DISCARD:
			do_simple(&c, &m, a);
			break;
		case TA_ANSWER:
			do_answer(&m);
			break;
		case TA_NONE:
			break;
		}
	}
	tuiv_stop();
	store_close(c.st);
	free(c.diff_id);
	tui_free(&m);
	return quit_signal ? 128 + quit_signal : 0;
}
