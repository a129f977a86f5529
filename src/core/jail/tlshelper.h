/* tlshelper: agentjail-tls from agentjail's side (doc/design.md §4d): the CA made once, the
 * helper started for a run with its configuration (the secrets' values go over the control
 * socket, never argv or the environment), and reaped after; and the filtered ssh agent's
 * listening socket. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "core/net/inspectmsg.h"
#include "util/err.h"

struct tlshelper {
	pid_t pid;   /* 0: not running (then ctl means nothing) */
	int ctl;     /* the control socket while agentjail holds it (the proxy takes it), -1 */
};

/* The CA's certificate (PEM) in <state>/ca, made first with `agentjail-tls __ca` when missing
 * and `make` (a dry run does not: *pem is then NULL). -1 with e. */
int tlshelper_ca_pem(const char *state_dir, bool make, char **pem, struct err *e) WUR;

/* The jail's trust bundle: the host's bundle (SSL_CERT_FILE when set, else the first of the
 * distributions' places) and the CA's PEM. *host_file: the real path of the host's bundle
 * (NULL when there is none). */
char *tlshelper_bundle(const char *ssl_cert_file, const char *ca_pem, char **host_file);

/* Start agentjail-tls for a run: its control socket is fd 3, ssh_listen (or -1) fd 4; cfg
 * is sent (then the message is wiped) and its answer waited for (at most 10 s). The
 * environment passed is only SSL_CERT_FILE, SSL_CERT_DIR, PATH, HOME and the locale of
 * `envp`. -1 with e (its words when it said why). */
int tlshelper_start(const struct im_config *cfg, int ssh_listen, char *const *envp,
		    struct tlshelper *h, struct err *e) WUR;
/* After the proxy stopped (it closed the control socket): wait for the helper, at most 2 s,
 * then kill it. */
void tlshelper_reap(struct tlshelper *h);

/* --ssh-agent's socket: <state>/run/SESSION/ssh-agent (the directory 0700), listening. *path and
 * *fd; -1 with e. */
int tlshelper_ssh_listen(const char *state_dir, const char *session, char **path, int *fd,
			 struct err *e) WUR;
/* Remove the socket and its directory (after the run). */
void tlshelper_ssh_remove(const char *path);
