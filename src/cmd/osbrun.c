/* `agentjail run --backend opensandbox`: the command in a sandbox of an OpenSandbox service
 * (doc/design.md §4b). Create the sandbox, wait for it, push the workspace, run the command
 * with its output streamed, pull the changes back, delete the sandbox — also on Ctrl-C,
 * SIGTERM, SIGHUP and errors (the command is interrupted first). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/osbrun.h"
#include "cmd/runlines.h"
#include "core/diag/doctor.h"
#include "core/plan/config.h"
#include "core/plan/osb_plan.h"
#include "core/remote/osb_client.h"
#include "core/remote/osb_sync.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/strbuf.h"
#include "util/termtext.h"
#include "util/uuid.h"
#include "util/xalloc.h"

const bool cmd_osb_linked = true;

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static int settings_of(const struct config *cfg, struct osb_settings *s)
{
	const char *vals[OK__N];
	for (int k = 0; k < OK__N; k++)
		vals[k] = cfg->osb[k].v;
	struct err e = {0};
	if (osb_settings_from(vals, s, &e) < 0) {
		cmd_print_err(&e);
		return -1;
	}
	return 0;
}

static void progress(void *arg, const char *state, long ms)
{
	const char *id = arg;
	if (!isatty(STDERR_FILENO))
		return;
	/* the service's words: cleaned like everything a sandbox could choose */
	_cleanup_free_ char *sid = fmt_clean(id);
	_cleanup_free_ char *what = fmt_clean(state);
	fprintf(stderr, "\ragentjail: sandbox %s: %s (%ld.%ld s)\033[K", sid, what, ms / 1000,
		ms % 1000 / 100);
}

static int on_output(void *arg, const struct osb_event *ev)
{
	(void)arg;
	int fd = ev->type == OSB_EV_STDOUT ? STDOUT_FILENO
		 : ev->type == OSB_EV_STDERR ? STDERR_FILENO
					     : -1;
	if (fd < 0 || !ev->text)
		return 0;
	/* one event per line, without its line ending; an empty line is "\n" */
	const char *t = ev->text;
	size_t n = strcmp(t, "\n") ? strlen(t) : 0;
	struct err e = {0};
	if ((n && fs_write_all(fd, t, n) < 0) || fs_write_all(fd, "\n", 1) < 0)
		(void)e; /* a closed stdout: keep reading so the command's end is seen */
	return 0;
}

static void report_pull(struct osb_pull_report *r, struct sess_rec *rec)
{
	for (size_t i = 0; i < r->protected_.n; i++) {
		cmd_warn("violation: protected path %s was changed in the sandbox; not brought back",
			 r->protected_.v[i]);
		cmd_rec_violation(rec, r->protected_.v[i], "changed in the sandbox; not brought back",
				  NULL);
	}
	for (size_t i = 0; i < r->conflicts.n; i++)
		cmd_warn("conflict: %s changed here and in the sandbox during the run; your copy is "
			 "kept, the sandbox's is not brought back",
			 r->conflicts.v[i]);
	for (size_t i = 0; i < r->skipped.n; i++)
		cmd_warn("%s", r->skipped.v[i]);
	if (r->written.n && isatty(STDERR_FILENO))
		cmd_warn("%zu file(s) brought back from the sandbox", r->written.n);
}

/* AGENTJAIL_OSB_READY_SECONDS (default 300) bounds the wait for a sandbox,
 * AGENTJAIL_OSB_SILENCE_SECONDS (default 30) a silent stream. */
static long env_seconds(const char *name, long dflt)
{
	const char *v = getenv(name);
	long s = v && *v ? strtol(v, NULL, 10) : dflt;
	return s > 0 ? s : dflt;
}

/* After a failure: which backend it was, what chose it, and the key's variable when it is not
 * set (issue 26: "POST: the service answered 401 MISSING_API_KEY" from a configuration the
 * user had forgotten). */
static void say_backend(const struct osb_settings *s, const char *chosen_by)
{
	const char *key = getenv(s->api_key_env);
	cmd_warn("that was the opensandbox backend at %s, chosen by %s; `--backend local` runs a "
		 "local jail instead",
		 s->url, chosen_by ? chosen_by : "the configuration");
	if (!key || !*key)
		cmd_warn("$%s is not set: the service's API key goes there (api_key_env in "
			 "[opensandbox] names the variable)",
			 s->api_key_env);
}

int cmd_osb_run(struct run_request *req, const struct config *cfg, const char *chosen_by)
{
	struct osb_settings s;
	if (settings_of(cfg, &s) < 0)
		return EXIT_USAGE;
	struct err e = {0};
	int rc = 0;
	/* the workspace as it is on disk: the sync opens files below it without following symlinks */
	char *canon = realpath(req->pol.workspace, NULL);
	if (!canon) {
		cmd_warn("cannot resolve the workspace %s: %s", req->pol.workspace, strerror(errno));
		osb_settings_free(&s);
		return EXIT_USAGE;
	}
	free(req->pol.workspace);
	req->pol.workspace = canon;
	if (osb_policy_check(&req->pol, &e) < 0) {
		cmd_print_err(&e);
		osb_settings_free(&s);
		return EXIT_USAGE;
	}
	if (osb_interactive(&req->cmd)) {
		cmd_warn("%s is interactive: the opensandbox backend has no terminal and no stdin "
			 "(give it a script or a command, or use --backend local)",
			 req->cmd.v[0]);
		osb_settings_free(&s);
		return EXIT_USAGE;
	}
	if (!req->session_id && !(req->session_id = uuid_v4_new(&e))) {
		cmd_print_err(&e);
		osb_settings_free(&s);
		return EXIT_JAIL;
	}
	_cleanup_free_ char *body = osb_create_body(&s, &req->pol, req->session_id, &e);
	if (!body) {
		cmd_print_err(&e);
		osb_settings_free(&s);
		return EXIT_USAGE;
	}
	_cleanup_free_ char *note = osb_timeout_note(&s);
	if (req->dry_run) {
		cmd_print_would_run(req);
		/* the key is never shown: only the name of its variable */
		printf("# backend opensandbox: %s (API key from $%s)\n", s.url, s.api_key_env);
		if (note)
			printf("# %s\n", note);
		printf("POST %s/v1/sandboxes\n%s\n", s.url, body);
		printf("# then: the workspace up to %s, the command there, changes back%s, delete\n",
		       s.workdir, osb_sync_back(&req->pol) ? "" : " (not with --fs read-only)");
		osb_settings_free(&s);
		return 0;
	}
	if (note)
		cmd_warn("%s", note);
	const char *key = getenv(s.api_key_env);
	struct osb_client *c = NULL;
	if (osb_client_new(&s, key, &c, &e) < 0) {
		cmd_print_err(&e);
		osb_settings_free(&s);
		return EXIT_USAGE;
	}
	struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term, old_hup;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	osb_client_stop_flag(c, &stop_sig);
	osb_client_silence(c, env_seconds("AGENTJAIL_OSB_SILENCE_SECONDS", 30));

	char archive[] = "/tmp/agentjail-up.XXXXXX";
	int afd = mkstemp(archive);
	struct osb_manifest m = {0};
	_cleanup_free_ char *id = NULL;
	_cleanup_free_ char *cmd_id = NULL;
	struct sess_rec rec = {0};
	bool recorded = false;
	if (afd < 0) {
		rc = err_set(&e, errno, archive, "cannot create the upload archive");
	} else {
		close(afd);
		rc = osb_pack(req->pol.workspace, s.sync_max, archive, &m, &e);
	}
	if (rc == 0)
		rc = osb_create(c, body, &id, &e);
	if (rc == 0) {
		runlines_start(req);
		if (req->resume)
			(void)cmd_rec_attempt(&rec, req->session_id, req->attempt_kind, &req->cmd,
					      NULL);
		else
			cmd_rec_begin(&rec, req, NULL, NULL);
		recorded = true;
		if (rec.st && rec.id) {
			struct err se = {0};
			if (store_set_backend(rec.st, rec.id, "opensandbox", s.url, id, &se) < 0)
				cmd_print_err(&se);
		}
		rc = osb_wait_ready(c, id, env_seconds("AGENTJAIL_OSB_READY_SECONDS", 300) * 1000,
				    progress, id, &e);
		if (isatty(STDERR_FILENO))
			fputs("\r\033[K", stderr);
	}
	if (rc == 0)
		rc = osb_push(c, archive, s.workdir, &e);
	(void)unlink(archive);
	int status = EXIT_JAIL;
	bool ran = false;
	if (rc == 0) {
		_cleanup_free_ char *line = NULL;
		for (size_t i = 0; i < req->cmd.n; i++) {
			struct strbuf b = STRBUF_INIT;
			if (line)
				sb_addf(&b, "%s ", line);
			sb_add_shquoted(&b, req->cmd.v[i]);
			free(line);
			line = sb_steal(&b);
		}
		_cleanup_free_ char *why = NULL;
		rc = osb_command(c, line, s.workdir, on_output, NULL, &cmd_id, &status, &why, &e);
		ran = rc == 0;
		if (why)
			cmd_warn("%s", why);
	}
	int sig = stop_sig;
	if (rc < 0 && sig) {
		cmd_warn("%s: stopping the command and deleting the sandbox",
			 sig == SIGINT ? "interrupted" : strsignal(sig));
		if (cmd_id) {
			struct err ie = {0};
			if (osb_interrupt(c, cmd_id, &ie) < 0)
				cmd_print_err(&ie);
		}
		status = 128 + sig;
	} else if (rc < 0) {
		cmd_print_err(&e);
		say_backend(&s, chosen_by);
		if (cmd_id) {
			struct err ie = {0};
			if (osb_interrupt(c, cmd_id, &ie) < 0)
				cmd_print_err(&ie);
		}
		status = EXIT_JAIL;
	}
	if (ran && !sig) {
		if (!osb_sync_back(&req->pol)) {
			cmd_warn("--fs read-only: the sandbox's changes are not brought back");
		} else {
			struct osb_pull_report pr = {0};
			struct err pe = {0};
			osb_client_stop_flag(c, NULL); /* the pull finishes or applies nothing */
			if (osb_pull(c, req->pol.workspace, s.workdir, &m, s.sync_max, &pr, &pe) < 0) {
				cmd_print_err(&pe);
				status = EXIT_JAIL;
			}
			report_pull(&pr, &rec);
			osb_pull_report_free(&pr);
		}
	}
	if (id) {
		struct err de = {0};
		if (osb_delete(c, id, &de) < 0) {
			cmd_print_err(&de);
			cmd_warn("the sandbox %s may still exist on %s: delete it there", id, s.url);
		}
	}
	if (recorded) {
		cmd_rec_end(&rec, status, 0, sig);
		req->interrupted = sig != 0;
		runlines_end(req, status, 0, sig != 0, 0);
	}
	cmd_rec_close(&rec);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	osb_manifest_free(&m);
	osb_client_free(c);
	osb_settings_free(&s);
	return status;
}

int cmd_osb_resume(struct run_request *req)
{
	struct parse_ctx ctx = {.cwd = req->pol.workspace, .home = getenv("HOME")};
	struct cmd_config cc;
	int rc = cmd_config_ctx(&cc, 0, NULL, NULL, &ctx);
	if (rc == 0)
		rc = cmd_osb_run(req, &cc.cfg, "the session, which ran on it");
	cmd_config_free(&cc);
	return rc;
}

int cmd_osb_doctor(int argc, char **argv)
{
	(void)argv;
	if (argc) {
		cmd_warn("__doctor-opensandbox takes no arguments (agentjail doctor runs it)");
		return EXIT_USAGE;
	}
	/* the configuration read as doctor reads it; its own "config" check is agentjail's */
	struct doctor_report all = {0}, only = {0};
	doctor_check_config(&all);
	for (size_t i = 0; i < all.n; i++)
		if (!strcmp(all.v[i].id, "opensandbox"))
			doctor_add(&only, all.v[i].id, all.v[i].status, all.v[i].fix, "%s",
				   all.v[i].detail);
	_cleanup_free_ char *j = doctor_render_json(&only);
	fputs(j, stdout);
	doctor_report_free(&all);
	doctor_report_free(&only);
	return fflush(stdout) == 0 ? 0 : EXIT_JAIL;
}
