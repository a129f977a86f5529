/* tls_internal.h: what agentjail-tls's files share (doc/design.md §4d): serve.c the control
 * socket, the threads and the events; ca.c the CA and the leaf certificates; inspect.c an
 * inspected tunnel; sshagent.c a connection to the filtered ssh agent; sshverify.c the
 * session-bind signature and the known host keys. Only agentjail-tls links these (OpenSSL);
 * helpers carry the prefix tls_. */
#pragma once
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdbool.h>

#include "core/plan/httprules.h"
#include "core/net/inspectmsg.h"
#include "core/plan/netrules.h"
#include "util/err.h"

/* ---- ca.c ---- */

#define TLS_CA_KEY "ca.key"
#define TLS_CA_CERT "ca.pem"

struct tls_leaf;

struct tls_ca {
	EVP_PKEY *key;          /* the CA's */
	X509 *cert;
	EVP_PKEY *leaf_key;     /* made at start, kept in memory, for every leaf of the run */
	pthread_mutex_t mu;     /* the leaves */
	struct tls_leaf *leaves;
};

/* `__ca DIR`: make DIR (0700) and the CA in it when missing (the key 0600, each file written
 * beside and renamed). 0, or -1 with e. */
int tls_ca_make(const char *dir, struct err *e) WUR;
int tls_ca_describe(const char *dir, char *out, size_t cap, struct err *e) WUR;
/* Load the CA of dir and make the run's leaf key. */
int tls_ca_load(struct tls_ca *ca, const char *dir, struct err *e) WUR;
/* The leaf certificate for host (a name, or an IP's text), made on first use (a reference the
 * caller frees with X509_free), or NULL with e. */
X509 *tls_ca_leaf(struct tls_ca *ca, const char *host, struct err *e);
void tls_ca_free(struct tls_ca *ca);
/* OpenSSL's error queue as one line ("what: reason"), emptied. */
void tls_err_line(char *buf, size_t cap, const char *what);

/* ---- serve.c ---- */

struct tls_ssh; /* sshagent.c: the trusted host keys */

struct tls_srv {
	int ctl;                   /* the control socket (fd 3) */
	int ssh_listen;            /* --ssh-agent's listener (fd 4), or -1 */
	struct im_config cfg;      /* the values included: wiped at the end */
	struct inspect in;
	struct netrules rules;
	struct tls_ca ca;
	SSL_CTX *client_ctx;       /* toward the jail: our leaf certificates */
	SSL_CTX *upstream_ctx;     /* toward the servers: the host's trust store */
	struct tls_ssh *ssh;
	pthread_mutex_t mu;        /* the connections below */
	pthread_cond_t cv;
	struct tls_conn *conns;
	size_t n_conns;
	bool stopping;
};

/* One thread's sockets, shut down at the end so its poll returns. */
struct tls_conn {
	int fd[2];
	struct tls_conn *next;
};
/* Register a connection (its thread owns the fds); false when stopping (the caller closes). */
bool tls_conn_add(struct tls_srv *s, struct tls_conn *c);
void tls_conn_done(struct tls_srv *s, struct tls_conn *c);
/* One decision to agentjail (a datagram of its own: threads send at once). */
void tls_send_event(struct tls_srv *s, const struct net_event *ev);
int64_t tls_wall_ms(void);

/* ---- inspect.c ---- */

struct tls_tunnel_arg {
	struct tls_srv *s;
	struct tls_conn conn;      /* fd[0] the client (the jail), fd[1] the upstream */
	struct im_tunnel t;        /* held and to_client point into msg */
	uint8_t *msg;
	size_t msg_len;
};
int tls_ctx_make(struct tls_srv *s, struct err *e) WUR; /* the two SSL_CTXs */
void *tls_tunnel_thread(void *arg);                     /* takes a tls_tunnel_arg */

/* ---- sshagent.c ---- */

int tls_ssh_load(struct tls_srv *s, struct err *e) WUR; /* the trusted host keys */
void tls_ssh_free(struct tls_ssh *k);
void *tls_ssh_thread(void *arg); /* takes a tls_tunnel_arg (conn.fd[0]: the jail's side) */
