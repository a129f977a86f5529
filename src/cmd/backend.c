/* The command layer's side of the backend interface (doc/design.md §2a): --backend taken from the
 * options (in agentjail and in agentjail-remote alike), and the one struct backend_io every
 * backend speaks through: its lines on stderr, its --dry-run text on stdout, the command's own
 * output, the session record, the --net allow proxy, the start and end lines, the
 * configuration. A backend prints nothing itself; a new backend is a new value of `--backend`
 * and a new struct backend, nothing here. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/jailctl.h"
#include "cmd/netask.h"
#include "cmd/netrun.h"
#include "cmd/runlines.h"
#include "cmd/secrun.h"
#include "core/backend/backend.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/termtext.h"
#include "util/xalloc.h"

extern char **environ;

int cmd_take_backend(int *argc, char **argv, const char **backend)
{
	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i];
		int take = 0;
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "--backend")) {
			if (i + 1 >= *argc) {
				cmd_warn("--backend needs a value: local, landlock, auto or "
					 "opensandbox");
				return -1;
			}
			*backend = argv[i + 1];
			take = 2;
		} else if (!strncmp(a, "--backend=", 10)) {
			*backend = a + 10;
			take = 1;
		} else {
			int ar = policy_opt_arity(a);
			if (ar < 0)
				break; /* the command */
			i += ar;
			continue;
		}
		memmove(&argv[i], &argv[i + take], (size_t)(*argc - i - take + 1) * sizeof *argv);
		*argc -= take;
		i--;
	}
	enum backend_id b;
	if (*backend && backend_parse(*backend, &b) < 0) {
		cmd_warn("--backend %s: not a backend (local, landlock, auto or opensandbox)",
			 *backend);
		return -1;
	}
	return 0;
}

int cmd_backend_auto(const char *flag, const struct config *cfg, struct run_request *req,
		     const struct backend **b)
{
	if (!backend_is_auto(flag, cfg) || req->pol.fs == FS_DANGER_FULL)
		return 0;
	struct backend_auto a;
	backend_auto_choose(req->pol.net == NET_ALLOW, &a);
	if (!a.b) {
		cmd_warn("%s: nothing was run (never without a sandbox)", a.why);
		cmd_warn("fix: %s", a.fix);
		backend_auto_free(&a);
		return EXIT_JAIL;
	}
	if (a.b != &backend_bwrap && req->pol.fs == FS_REVIEW) {
		/* its overlay needs the bwrap jail's mount namespace (doc/design.md §3c): a jail
		 * that cannot be built here, never a run without the overlay */
		cmd_warn("%s", a.why);
		cmd_warn("--fs review needs the bwrap jail (its overlay needs a mount namespace), "
			 "which cannot run here: nothing was run");
		cmd_warn("fix: %s", a.fix);
		backend_auto_free(&a);
		return EXIT_JAIL;
	}
	if (a.b != &backend_bwrap || !req->quiet)
		cmd_warn("%s", a.why);
	free(req->pol.backend_auto);
	req->pol.backend_auto = a.why;
	a.why = NULL;
	*b = a.b;
	backend_auto_free(&a);
	return 0;
}

char *cmd_backend_chosen_by(const char *flag, const struct config *cfg)
{
	if (flag)
		return xasprintf("--backend %s", flag);
	if (cfg && cfg->backend.v)
		return xasprintf("backend = \"%s\" at %s", cfg->backend.v, cfg->backend.origin);
	return xstrdup("the default");
}

/* ---- the io ---- */

struct cmd_io {
	struct run_request *req;
	struct sess_rec *rec;     /* NULL: nothing is recorded (verify) */
	struct netrun net;
	struct secrun sr;         /* the run's secrets and agents (§4d), when sr_on */
	bool sr_on;
	struct netask *ask;       /* --net ask's hub (io_net_prepare), or NULL */
	struct jailctl *ctl;      /* the session's control socket (io_net_prepare), or NULL */
	const struct config *cfg; /* the run's, else loaded when asked (cc) */
	struct cmd_config cc;
	bool cc_loaded, cc_ok;
	bool begun, recorded;     /* the start line said, the record begun: once, even when the
				   * jail is built again (BACKEND_AGAIN) */
};

static void io_warn(void *arg, const char *line)
{
	(void)arg;
	cmd_warn_line(line);
}

static void io_error(void *arg, const struct err *e)
{
	(void)arg;
	cmd_print_err(e);
}

static void io_text(void *arg, const char *text)
{
	(void)arg;
	fputs(text, stdout);
}

static void io_would_run(void *arg)
{
	struct cmd_io *c = arg;
	cmd_print_would_run(c->req);
}

static void io_put_text(void *arg, const char *text)
{
	(void)arg;
	size_t n = strlen(text);
	cmd_put_text(stderr, text);
	if (n && text[n - 1] != '\n')
		fputc('\n', stderr);
	(void)fflush(stderr);
}

static void io_output(void *arg, int fd, const char *buf, size_t n)
{
	(void)arg;
	if (fs_write_all(fd, buf, n) < 0)
		return; /* a closed stdout: the backend reads on, so the command's end is seen */
}

static void io_progress(void *arg, const char *line)
{
	(void)arg;
	if (!isatty(STDERR_FILENO))
		return;
	if (!line) {
		fputs("\r\033[K", stderr);
		return;
	}
	_cleanup_free_ char *shown = fmt_clean(line); /* it may hold the service's words */
	fprintf(stderr, "\ragentjail: %s\033[K", shown);
}

/* During the run, from the supervise loop: the user's terminal may be in raw mode (no newline
 * translation) with the jail's output mid-line, so the line starts and ends with CR LF there. */
static void io_violation(void *arg, const struct violation *v)
{
	(void)arg;
	const char *eol = isatty(STDERR_FILENO) ? "\r\n" : "\n";
	const char *pre = isatty(STDERR_FILENO) ? eol : "";
	_cleanup_free_ char *line = backend_violation_text(v, "moved aside at once to");
	_cleanup_free_ char *shown = fmt_clean(line); /* the path is the jail's choice */
	fprintf(stderr, "%sagentjail: %s%s", pre, shown, eol);
	(void)fflush(stderr);
}

/* The record is written while the jail is built; the command starts after it. */
static void io_started(void *arg, const struct bw_plan *plan, const char *bwrap)
{
	struct cmd_io *c = arg;
	if (!c->rec || c->recorded)
		return;
	c->recorded = true;
	if (c->req->resume)
		(void)cmd_rec_attempt(c->rec, c->req->session_id, c->req->attempt_kind,
				      &c->req->cmd, c->req->agent_session_id);
	else
		cmd_rec_begin(c->rec, c->req, plan, bwrap);
}

static void io_place(void *arg, const struct backend_place *p)
{
	struct cmd_io *c = arg;
	struct err e = {0};
	if (c->rec && c->rec->st && c->rec->id &&
	    store_set_backend(c->rec->st, c->rec->id, p->backend, p->url, p->sandbox_id, &e) < 0)
		cmd_print_err(&e);
}

static void io_record_violation(void *arg, const char *kind, const char *path, const char *what,
				const char *moved)
{
	struct cmd_io *c = arg;
	if (c->rec)
		cmd_rec_violation(c->rec, kind, path, what, moved);
}

static void io_ended(void *arg, int status, int cmd_signal, int term_signal)
{
	struct cmd_io *c = arg;
	if (c->rec)
		cmd_rec_end(c->rec, status, cmd_signal, term_signal);
}

static int io_net_ready(void *arg, int tcp4, int tcp6, int dns_udp, int dns_tcp, struct err *e)
{
	struct cmd_io *c = arg;
	return netrun_ready(&c->net, tcp4, tcp6, dns_udp, dns_tcp, e);
}

static void io_net_capture(void *arg, int listener, int chan)
{
	struct cmd_io *c = arg;
	netrun_capture(&c->net, listener, chan);
}

static void io_net_ending(void *arg)
{
	struct cmd_io *c = arg;
	netrun_stop_begin(&c->net);
}

static void io_net_stop(void *arg)
{
	struct cmd_io *c = arg;
	netrun_free(&c->net); /* the proxy first: it calls into the hub */
	jailctl_free(c->ctl);
	c->ctl = NULL;
	netask_free(c->ask);
	c->ask = NULL;
	c->net = (struct netrun){.pol = &c->req->pol, .rec = c->rec,
				 .sr = c->sr_on ? &c->sr : NULL};
}

/* The bwrap jail's secrets and agents (doc/design.md §4d): which the run uses, decided from the
 * host's environment, then the CA, the bundle and the agents' sockets made (secrun.h), after
 * agentjail is hardened (backend_local_run). Another backend gets none (cmd_backend_run): the
 * Landlock backend passes the variables as before, a service never sees one. */
static int io_secrets_prepare(void *arg)
{
	struct cmd_io *c = arg;
	struct run_request *req = c->req;
	if (req->pol.backend != BACKEND_LOCAL || req->pol.fs == FS_DANGER_FULL) {
		secret_set_free(&req->pol.secrets);
		return 0;
	}
	struct strv host_env = STRV_INIT;
	strv_push_all(&host_env, environ);
	policy_secrets_activate(&req->pol, &host_env);
	strv_free(&host_env);
	c->sr_on = true;
	int rc = secrun_prepare(&c->sr, req);
	if (rc == 0)
		c->net.sr = &c->sr;
	return rc;
}

static int io_secrets(void *arg)
{
	struct cmd_io *c = arg;
	return c->sr_on ? secrun_values(&c->sr, c->req) : 0;
}

static int io_net_prepare(void *arg, struct backend_ext *x, struct err *e)
{
	struct cmd_io *c = arg;
	*x = (struct backend_ext){0};
	if (c->req->pol.ask && c->req->pol.net == NET_ALLOW && !c->ask) {
		c->ask = netask_new(&c->net, c->req, c->rec);
		c->net.ask = netask_proxy(c->ask);
	}
	if (!c->ctl) /* ps, exec, stop (and the questions) reach the run through it */
		c->ctl = jailctl_new(c->req, c->rec, c->ask);
	*x = (struct backend_ext){.fill = jailctl_fill, .handle = jailctl_handle, .arg = c->ctl,
				  .ask = netask_prompt(c->ask), .jail = jailctl_jail(c->ctl)};
	if (netrun_publish_listen(&c->net, e) < 0) { /* a host port in use: nothing is run */
		io_net_stop(c);
		*x = (struct backend_ext){0};
		return -1;
	}
	if (!c->req->quiet)
		netrun_publish_banner(&c->net);
	return 0;
}

static int io_publish(void *arg, int chan, struct err *e)
{
	struct cmd_io *c = arg;
	return netrun_publish(&c->net, chan, e);
}

static void io_begin(void *arg)
{
	struct cmd_io *c = arg;
	if (c->begun)
		return;
	c->begun = true;
	runlines_start(c->req);
}

static void io_end(void *arg, int status, int cmd_signal, bool interrupted, size_t moved)
{
	struct cmd_io *c = arg;
	runlines_end(c->req, status, cmd_signal, interrupted, moved);
}

static const struct config *io_config(void *arg)
{
	struct cmd_io *c = arg;
	if (c->cfg)
		return c->cfg;
	if (!c->cc_loaded) { /* the workspace's, as a run there would read it */
		struct parse_ctx ctx = {.cwd = c->req->pol.workspace, .home = getenv("HOME")};
		c->cc_ok = cmd_config_ctx(&c->cc, 0, NULL, NULL, &ctx) == 0;
		c->cc_loaded = true;
	}
	return c->cc_ok ? &c->cc.cfg : NULL;
}

static void io_init(struct cmd_io *c, struct backend_io *io, struct run_request *req,
		    struct sess_rec *rec, const struct config *cfg, const char *chosen_by)
{
	*c = (struct cmd_io){.req = req, .rec = rec, .cfg = cfg};
	c->net = (struct netrun){.pol = &req->pol, .rec = rec};
	*io = (struct backend_io){.arg = c,
				  .tty = isatty(STDERR_FILENO),
				  .chosen_by = chosen_by,
				  .warn = io_warn,
				  .error = io_error,
				  .text = io_text,
				  .would_run = io_would_run,
				  .put_text = io_put_text,
				  .output = io_output,
				  .progress = io_progress,
				  .violation = io_violation,
				  .started = io_started,
				  .place = io_place,
				  .record_violation = io_record_violation,
				  .ended = io_ended,
				  .net_ready = io_net_ready,
				  .net_capture = io_net_capture,
				  .net_stop = io_net_stop,
				  .net_ending = io_net_ending,
				  .net_prepare = io_net_prepare,
				  .publish = io_publish,
				  .begin = io_begin,
				  .end = io_end,
				  .config = io_config};
}

static void io_free(struct cmd_io *c)
{
	io_net_stop(c); /* when a backend left it running */
	if (c->sr_on)
		secrun_free(&c->sr); /* after the proxy and agentjail-tls: the socket removed */
	if (c->cc_loaded)
		cmd_config_free(&c->cc);
}

/* ---- through the interface ---- */

int cmd_backend_run(const struct backend *b, struct run_request *req, const struct config *cfg,
		    const char *chosen_by)
{
	req->pol.backend = b->id; /* the session's policy says where it ran; resume reads it */
	struct sess_rec rec = {0};
	struct cmd_io c;
	struct backend_io io;
	io_init(&c, &io, req, &rec, cfg, chosen_by);
	if (b->id == BACKEND_LOCAL) {
		io.sec = &c.sr.sec; /* filled by secrets_prepare */
		io.secrets_prepare = io_secrets_prepare;
		io.secrets = io_secrets;
	} else {
		secret_set_free(&req->pol.secrets);
	}
	int rc = b->run(b, req, &io);
	io_free(&c);
	cmd_rec_close(&rec);
	return rc;
}

int cmd_run_request(struct run_request *req)
{
	return cmd_backend_run(backend_by_id(req->pol.backend), req, NULL, NULL);
}

int cmd_backend_prepare(struct run_request *req, struct jail *j)
{
	struct cmd_io c;
	struct backend_io io;
	io_init(&c, &io, req, NULL, NULL, NULL);
	int rc = backend_prepare(req, j, &io);
	io_free(&c);
	return rc;
}

int cmd_backend_jail(const struct backend *b, struct run_request *req, struct jail *j)
{
	struct cmd_io c;
	struct backend_io io;
	io_init(&c, &io, req, NULL, NULL, NULL);
	req->host_retried = true; /* this prepared jail only: a failure is said, not retried */
	int rc = req->dry_run ? b->dry_run(req, j, &io) : b->launch(req, j, &io);
	io_free(&c);
	return rc;
}
