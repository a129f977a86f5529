/* secrun: a run's secrets and agents on the command side (secrun.h, doc/design.md §4d). */
#include "cmd/secrun.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/host/gpgfacts.h"
#include "core/host/secretsrc.h"
#include "core/jail/tlshelper.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

extern char **environ;

/* The host's known_hosts files the filtered agent trusts (doc/design.md §4d). */
static void known_hosts_files(struct strv *out)
{
	const char *home = getenv("HOME");
	if (home && home[0] == '/')
		strv_push_take(out, path_join(home, ".ssh/known_hosts"));
	strv_push(out, "/etc/ssh/ssh_known_hosts");
}

static int fail(const struct err *e)
{
	cmd_print_err(e);
	return EXIT_JAIL;
}

int secrun_prepare(struct secrun *sr, const struct run_request *req)
{
	memset(sr, 0, sizeof *sr);
	sr->ssh_listen = -1;
	const struct policy *p = &req->pol;
	if (p->fs == FS_DANGER_FULL || p->backend != BACKEND_LOCAL)
		return 0;
	struct err e = {0};
	/* --gpg-agent: the agent's extra socket and the gpg home, in any network mode */
	if (p->gpg_agent &&
	    gpgfacts_read(!req->dry_run, &sr->sec.gpg_sock, &sr->sec.gpg_home, &e) < 0)
		return fail(&e);
	if (p->net == NET_ALLOW) {
		if (inspect_build(&p->allow_http, &p->secrets, &sr->in, &e) < 0) {
			cmd_print_err(&e);
			return EXIT_USAGE;
		}
		sr->in_built = true;
	}
	sr->helper = inspect_any(&sr->in) || (p->ssh_agent && p->net == NET_ALLOW);
	if (!sr->helper)
		return 0;
	_cleanup_free_ char *state = cmd_state_dir();
	sr->cfg.ca_dir = path_join(state, "ca");
	if (inspect_any(&sr->in)) {
		_cleanup_free_ char *pem = NULL;
		if (tlshelper_ca_pem(state, !req->dry_run, &pem, &e) < 0)
			return fail(&e);
		sr->sec.bundle = tlshelper_bundle(getenv("SSL_CERT_FILE"), pem,
						  &sr->sec.bundle_host);
	}
	strv_copy(&sr->cfg.allow_http, &p->allow_http);
	strv_copy(&sr->cfg.allow, &p->allow_domains);
	strv_copy(&sr->cfg.deny, &p->deny_domains);
	strv_copy(&sr->cfg.map, &p->map_hosts);
	if (p->ssh_agent) {
		const char *agent = getenv("SSH_AUTH_SOCK");
		if (!agent || agent[0] != '/') {
			err_set(&e, 0, "SSH_AUTH_SOCK", "--ssh-agent: no ssh agent on the host "
							"(SSH_AUTH_SOCK is not set)");
			err_hint(&e, "start one (eval $(ssh-agent); ssh-add) and run again");
			cmd_print_err(&e);
			return EXIT_USAGE;
		}
		sr->cfg.ssh_auth_sock = xstrdup(agent);
		known_hosts_files(&sr->cfg.known_hosts);
		if (req->dry_run) {
			sr->sec.ssh_sock = path_join(state, "run/SESSION/ssh-agent");
		} else {
			if (tlshelper_ssh_listen(state, req->session_id, &sr->ssh_sock,
						 &sr->ssh_listen, &e) < 0)
				return fail(&e);
			sr->sec.ssh_sock = xstrdup(sr->ssh_sock);
		}
	}
	return 0;
}

int secrun_values(struct secrun *sr, const struct run_request *req)
{
	if (!sr->helper || req->dry_run)
		return 0;
	struct strv env = STRV_INIT;
	strv_push_all(&env, environ);
	int rc = 0;
	for (size_t i = 0; i < req->pol.secrets.n && !rc; i++) {
		const struct secret_def *d = &req->pol.secrets.v[i];
		char *v = NULL;
		size_t n = 0;
		struct err e = {0};
		if (secretsrc_read(d, &env, &v, &n, &e) < 0) {
			cmd_print_err(&e);
			cmd_warn("nothing was run: a jail never gets a secret's value, and this run "
				 "would have sent %s's placeholder", d->name);
			rc = EXIT_JAIL;
			continue;
		}
		im_config_add_secret(&sr->cfg, d, v, n);
		secretsrc_wipe(v, n);
	}
	for (size_t i = 0; i < env.n; i++) /* the host's values are in it */
		explicit_bzero(env.v[i], strlen(env.v[i]));
	strv_free(&env);
	return rc;
}

void secrun_free(struct secrun *sr)
{
	hf_secrets_free(&sr->sec);
	if (sr->in_built)
		inspect_free(&sr->in);
	im_config_free(&sr->cfg);
	if (sr->ssh_listen >= 0)
		(void)close(sr->ssh_listen);
	tlshelper_ssh_remove(sr->ssh_sock);
	free(sr->ssh_sock);
	memset(sr, 0, sizeof *sr);
	sr->ssh_listen = -1;
}
