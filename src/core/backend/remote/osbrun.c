/* `agentjail run --backend opensandbox`: the command in a sandbox of an OpenSandbox service
 * (doc/design.md §2a, §4b), the remote backend as agentjail-remote runs it. Create the sandbox,
 * wait for it, push the workspace, run the command with its output streamed, pull the changes
 * back, delete the sandbox — also on Ctrl-C, SIGTERM, SIGHUP and errors (the command is
 * interrupted first). Everything is said through the backend's io. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/backend/backend.h"
#include "core/backend/report.h"
#include "core/config/config.h"
#include "core/backend/remote/osb_plan.h"
#include "core/backend/remote/osb_client.h"
#include "core/backend/remote/osb_sync.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/uuid.h"
#include "util/xalloc.h"

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static int settings_of(const struct config *cfg, struct osb_settings *s,
		       const struct backend_io *io)
{
	const char *vals[OK__N];
	for (int k = 0; k < OK__N; k++)
		vals[k] = cfg->osb[k].v;
	struct err e = {0};
	if (osb_settings_from(vals, s, &e) < 0) {
		io->error(io->arg, &e);
		return -1;
	}
	return 0;
}

struct progress_ctx {
	const char *id;
	const struct backend_io *io;
};

static void progress(void *arg, const char *state, long ms)
{
	const struct progress_ctx *p = arg;
	/* the service's words: the io cleans them like everything a sandbox could choose */
	_cleanup_free_ char *line = xasprintf("sandbox %s: %s (%ld.%ld s)", p->id, state,
					      ms / 1000, ms % 1000 / 100);
	p->io->progress(p->io->arg, line);
}

static int on_output(void *arg, const struct osb_event *ev)
{
	const struct backend_io *io = arg;
	int fd = ev->type == OSB_EV_STDOUT ? STDOUT_FILENO
		 : ev->type == OSB_EV_STDERR ? STDERR_FILENO
					     : -1;
	if (fd < 0 || !ev->text)
		return 0;
	/* one event per line, without its line ending; an empty line is "\n" */
	const char *t = ev->text;
	size_t n = strcmp(t, "\n") ? strlen(t) : 0;
	if (n)
		io->output(io->arg, fd, t, n);
	io->output(io->arg, fd, "\n", 1);
	return 0;
}

static void report_pull(struct osb_pull_report *r, const struct backend_io *io)
{
	for (size_t i = 0; i < r->protected_.n; i++) {
		report_warn(io,
			    "violation: protected path %s was changed in the sandbox; not brought back",
			    r->protected_.v[i]);
		io->record_violation(io->arg, "violation.protected_path", r->protected_.v[i],
				     "changed in the sandbox; not brought back", NULL);
	}
	for (size_t i = 0; i < r->conflicts.n; i++)
		report_warn(io,
			    "conflict: %s changed here and in the sandbox during the run; your copy "
			    "is kept, the sandbox's is not brought back",
			    r->conflicts.v[i]);
	for (size_t i = 0; i < r->skipped.n; i++)
		io->warn(io->arg, r->skipped.v[i]);
	if (r->written.n && io->tty)
		report_warn(io, "%zu file(s) brought back from the sandbox", r->written.n);
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
static void say_backend(const struct osb_settings *s, const struct backend_io *io)
{
	const char *key = getenv(s->api_key_env);
	report_warn(io,
		    "that was the opensandbox backend at %s, chosen by %s; `--backend local` runs "
		    "a local jail instead",
		    s->url, io->chosen_by ? io->chosen_by : "the configuration");
	if (!key || !*key)
		report_warn(io,
			    "$%s is not set: the service's API key goes there (api_key_env in "
			    "[opensandbox] names the variable)",
			    s->api_key_env);
}

static int osb_run(const struct backend *self, struct run_request *req,
		   const struct backend_io *io)
{
	(void)self;
	const struct config *cfg = io->config(io->arg); /* a resumed session: today's */
	if (!cfg)
		return EXIT_USAGE;
	struct osb_settings s;
	if (settings_of(cfg, &s, io) < 0)
		return EXIT_USAGE;
	struct err e = {0};
	int rc = 0;
	/* the workspace as it is on disk: the sync opens files below it without following symlinks */
	char *canon = realpath(req->pol.workspace, NULL);
	if (!canon) {
		report_warn(io, "cannot resolve the workspace %s: %s", req->pol.workspace,
			    strerror(errno));
		osb_settings_free(&s);
		return EXIT_USAGE;
	}
	free(req->pol.workspace);
	req->pol.workspace = canon;
	if (osb_policy_check(&req->pol, &e) < 0) {
		io->error(io->arg, &e);
		osb_settings_free(&s);
		return EXIT_USAGE;
	}
	if (osb_interactive(&req->cmd)) {
		report_warn(io,
			    "%s is interactive: the opensandbox backend has no terminal and no stdin "
			    "(give it a script or a command, or use --backend local)",
			    req->cmd.v[0]);
		osb_settings_free(&s);
		return EXIT_USAGE;
	}
	if (!req->session_id && !(req->session_id = uuid_v4_new(&e))) {
		io->error(io->arg, &e);
		osb_settings_free(&s);
		return EXIT_JAIL;
	}
	_cleanup_free_ char *body = osb_create_body(&s, &req->pol, req->session_id, &e);
	if (!body) {
		io->error(io->arg, &e);
		osb_settings_free(&s);
		return EXIT_USAGE;
	}
	_cleanup_free_ char *note = osb_timeout_note(&s);
	if (req->dry_run) {
		io->would_run(io->arg);
		/* the key is never shown: only the name of its variable */
		struct strbuf d = STRBUF_INIT;
		sb_addf(&d, "# backend opensandbox: %s (API key from $%s)\n", s.url, s.api_key_env);
		if (note)
			sb_addf(&d, "# %s\n", note);
		sb_addf(&d, "POST %s/v1/sandboxes\n%s\n", s.url, body);
		sb_addf(&d, "# then: the workspace up to %s, the command there, changes back%s, "
			    "delete\n",
			s.workdir, osb_sync_back(&req->pol) ? "" : " (not with --fs read-only)");
		io->text(io->arg, sb_str(&d));
		sb_free(&d);
		osb_settings_free(&s);
		return 0;
	}
	if (note)
		io->warn(io->arg, note);
	const char *key = getenv(s.api_key_env);
	struct osb_client *c = NULL;
	if (osb_client_new(&s, key, &c, &e) < 0) {
		io->error(io->arg, &e);
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
		io->begin(io->arg);
		io->started(io->arg, NULL, NULL);
		recorded = true;
		struct backend_place where = {"opensandbox", s.url, id};
		io->place(io->arg, &where);
		struct progress_ctx pc = {id, io};
		rc = osb_wait_ready(c, id, env_seconds("AGENTJAIL_OSB_READY_SECONDS", 300) * 1000,
				    progress, &pc, &e);
		io->progress(io->arg, NULL);
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
		rc = osb_command(c, line, s.workdir, on_output, (void *)io, &cmd_id, &status, &why,
				 &e);
		ran = rc == 0;
		if (why)
			io->warn(io->arg, why);
	}
	int sig = stop_sig;
	if (rc < 0 && sig) {
		report_warn(io, "%s: stopping the command and deleting the sandbox",
			    sig == SIGINT ? "interrupted" : strsignal(sig));
		if (cmd_id) {
			struct err ie = {0};
			if (osb_interrupt(c, cmd_id, &ie) < 0)
				io->error(io->arg, &ie);
		}
		status = 128 + sig;
	} else if (rc < 0) {
		io->error(io->arg, &e);
		say_backend(&s, io);
		if (cmd_id) {
			struct err ie = {0};
			if (osb_interrupt(c, cmd_id, &ie) < 0)
				io->error(io->arg, &ie);
		}
		status = EXIT_JAIL;
	}
	if (ran && !sig) {
		if (!osb_sync_back(&req->pol)) {
			io->warn(io->arg, "--fs read-only: the sandbox's changes are not brought back");
		} else {
			struct osb_pull_report pr = {0};
			struct err pe = {0};
			osb_client_stop_flag(c, NULL); /* the pull finishes or applies nothing */
			if (osb_pull(c, req->pol.workspace, s.workdir, &m, s.sync_max, &pr, &pe) < 0) {
				io->error(io->arg, &pe);
				status = EXIT_JAIL;
			}
			report_pull(&pr, io);
			osb_pull_report_free(&pr);
		}
	}
	if (id) {
		struct err de = {0};
		if (osb_delete(c, id, &de) < 0) {
			io->error(io->arg, &de);
			report_warn(io, "the sandbox %s may still exist on %s: delete it there", id,
				    s.url);
		}
	}
	if (recorded) {
		io->ended(io->arg, status, 0, sig);
		req->interrupted = sig != 0;
		io->end(io->arg, status, 0, sig != 0, 0);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	osb_manifest_free(&m);
	osb_client_free(c);
	osb_settings_free(&s);
	return status;
}

const struct backend backend_opensandbox = {
	.id = BACKEND_OPENSANDBOX,
	.name = "opensandbox",
	.caps = &backend_caps_opensandbox,
	.run = osb_run,
};
