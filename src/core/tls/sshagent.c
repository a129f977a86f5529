/* sshagent: the filtered ssh agent of --ssh-agent (doc/design.md §4d). The jail's socket is
 * served here, a thread per connection, each with a connection of its own to the user's real
 * agent. Only listing keys and signing go through, and a signature only for a session bound
 * (session-bind@openssh.com) to a host key that the user's known_hosts lists for a host the
 * jail's rules allow on a port given explicitly; the bind's own signature is verified first.
 * Everything else is answered FAILURE without reaching the agent. Each signature, made or
 * refused, is an event. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/net/agentproto.h"
#include "core/net/knownhosts.h"
#include "core/tls/sshverify.h"
#include "core/tls/tls_internal.h"
#include "util/xalloc.h"

#define KH_FILE_MAX (4 << 20)

struct trusted {
	uint8_t *key;
	size_t len;
	char host[256];
	uint16_t port;
};

struct tls_ssh {
	struct trusted *v;
	size_t n;
	struct strv revoked_fp; /* fingerprints of @revoked keys */
};

void tls_ssh_free(struct tls_ssh *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].key);
	free(k->v);
	strv_free(&k->revoked_fp);
	free(k);
}

/* ---- the trusted host keys ---- */

static void trust(struct tls_ssh *k, const struct kh_entry *e, const char *host, uint16_t port)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].len == e->key_len && !memcmp(k->v[i].key, e->key, e->key_len) &&
		    !strcmp(k->v[i].host, host) && k->v[i].port == port)
			return;
	k->v = xrealloc(k->v, (k->n + 1) * sizeof *k->v);
	struct trusted *t = &k->v[k->n++];
	t->key = xmalloc(e->key_len);
	memcpy(t->key, e->key, e->key_len);
	t->len = e->key_len;
	(void)snprintf(t->host, sizeof t->host, "%s", host);
	t->port = port;
}

/* "host" or "[host]:port" of a pattern without wildcards: the host normalized, or NULL. */
static char *pattern_host(const char *pat, uint16_t *port)
{
	*port = 22;
	if (strpbrk(pat, "*?!"))
		return NULL;
	char *raw;
	if (pat[0] == '[') {
		const char *rb = strchr(pat, ']');
		if (!rb || rb[1] != ':' || !rb[2])
			return NULL;
		char *end;
		long p = strtol(rb + 2, &end, 10);
		if (*end || p < 1 || p > 65535)
			return NULL;
		*port = (uint16_t)p;
		raw = xstrndup(pat + 1, (size_t)(rb - pat - 1));
	} else {
		raw = xstrdup(pat);
	}
	char *host = NULL;
	struct err e = {0};
	if (net_host_normalize(raw, &host, &e) < 0)
		host = NULL;
	free(raw);
	return host;
}

/* Is host:port one the jail may reach (an allow rule, so a port given explicitly or 80/443)? */
static bool allowed(const struct netrules *r, const char *host, uint16_t port)
{
	struct net_decision d;
	return netrules_check(r, host, port, &d) == NV_ALLOW;
}

/* The names whose hashed or wildcard entries are tried: each exact allow rule at its port
 * (443 for one without: ssh on 443, as ssh.github.com). */
static void candidates(const struct netrules *r, struct strv *hosts, struct strv *ports)
{
	for (size_t i = 0; i < r->n_allow; i++) {
		const struct netrule *x = &r->allow[i];
		if (x->kind == NR_WILDCARD)
			continue;
		strv_push(hosts, x->host);
		strv_pushf(ports, "%d", x->port ? x->port : 443);
	}
}

static void read_entry(struct tls_ssh *k, const struct netrules *r, const struct kh_entry *e,
		       const struct strv *ch, const struct strv *cp)
{
	if (e->marker == KH_CERT_AUTHORITY)
		return; /* host certificates: not supported, never trusted */
	if (e->marker == KH_REVOKED) {
		char fp[64];
		sshv_fingerprint(e->key, e->key_len, fp, sizeof fp);
		strv_push(&k->revoked_fp, fp);
		return;
	}
	for (size_t i = 0; i < ch->n; i++) { /* hashed and wildcard entries: the candidates */
		uint16_t port = (uint16_t)atoi(cp->v[i]);
		char *name = kh_host_name(ch->v[i], port);
		bool names = e->hashed ? sshv_hashed_host_is(e->salt, e->salt_len, e->hash, name)
				       : kh_entry_names(e, ch->v[i], port);
		free(name);
		if (names && allowed(r, ch->v[i], port))
			trust(k, e, ch->v[i], port);
	}
	for (size_t i = 0; !e->hashed && i < e->patterns.n; i++) { /* plain ones: as written */
		uint16_t port;
		char *host = pattern_host(e->patterns.v[i], &port);
		if (host && kh_entry_names(e, host, port) && allowed(r, host, port))
			trust(k, e, host, port);
		free(host);
	}
}

static void read_file(struct tls_ssh *k, const struct netrules *r, const char *path,
		      const struct strv *ch, const struct strv *cp)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return; /* a file that is not there trusts nothing */
	char *line = NULL;
	size_t cap = 0, total = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0 && (total += (size_t)n) < KH_FILE_MAX) {
		struct kh_entry e;
		if (kh_parse_line(line, &e) == 1) {
			read_entry(k, r, &e, ch, cp);
			kh_entry_free(&e);
		}
	}
	free(line);
	(void)fclose(f);
}

int tls_ssh_load(struct tls_srv *s, struct err *e)
{
	(void)e;
	struct tls_ssh *k = xcalloc(1, sizeof *k);
	struct strv ch = STRV_INIT, cp = STRV_INIT;
	candidates(&s->rules, &ch, &cp);
	for (size_t i = 0; i < s->cfg.known_hosts.n; i++)
		read_file(k, &s->rules, s->cfg.known_hosts.v[i], &ch, &cp);
	strv_free(&ch);
	strv_free(&cp);
	s->ssh = k; /* none trusted is no error: every signature is refused then, and says why */
	return 0;
}

/* ---- a connection ---- */

struct sconn {
	struct tls_srv *s;
	int jfd, afd;
	bool bound, bind_failed;
	uint8_t sid[64];
	size_t sid_len;
	uint8_t *hostkey;
	size_t hostkey_len;
	const struct trusted *peer; /* the host the session is bound to */
	uint8_t *buf;               /* one frame */
};

static bool write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		b += k;
		n -= (size_t)k;
	}
	return true;
}

static bool read_all(int fd, uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = recv(fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* One frame into c->buf: its length, 0 at the end, -1 malformed. */
static long read_frame(int fd, uint8_t *buf)
{
	if (!read_all(fd, buf, 4))
		return 0;
	struct agent_str body;
	size_t total;
	uint32_t n = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
	if (n == 0 || n > AGENT_FRAME_MAX || !read_all(fd, buf + 4, n))
		return -1;
	return agent_frame(buf, 4 + (size_t)n, &body, &total) == 1 ? (long)total : -1;
}

static void event(struct sconn *c, bool allowed, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void event(struct sconn *c, bool allowed, const char *fmt, ...)
{
	struct net_event ev = {.at_ms = tls_wall_ms(), .proto = NP_SSH_AGENT, .allowed = allowed};
	(void)snprintf(ev.host, sizeof ev.host, "%s", c->peer ? c->peer->host : "-");
	ev.port = c->peer ? c->peer->port : 0;
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(ev.rule, sizeof ev.rule, fmt, ap);
	va_end(ap);
	tls_send_event(c->s, &ev);
}

/* The user's agent, connected on first use. */
static bool agent(struct sconn *c)
{
	if (c->afd >= 0)
		return true;
	const char *path = c->s->cfg.ssh_auth_sock;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path)
		return false;
	memcpy(sa.sun_path, path, strlen(path));
	c->afd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->afd >= 0 && connect(c->afd, (struct sockaddr *)&sa, sizeof sa) == 0)
		return true;
	if (c->afd >= 0)
		(void)close(c->afd);
	c->afd = -1;
	return false;
}

/* The frame of len bytes to the agent, its answer back to the jail (0), or -1. */
static int relay(struct sconn *c, size_t len, bool answer_to_jail)
{
	if (!agent(c) || !write_all(c->afd, c->buf, len))
		return -1;
	long n = read_frame(c->afd, c->buf);
	if (n <= 0)
		return -1;
	if (!answer_to_jail)
		return c->buf[4] == AGENT_SUCCESS ? 0 : 1;
	return write_all(c->jfd, c->buf, (size_t)n) ? 0 : -1;
}

static const struct trusted *trusted_key(const struct tls_ssh *k, struct agent_str key)
{
	char fp[64];
	sshv_fingerprint(key.p, key.n, fp, sizeof fp);
	if (strv_contains(&k->revoked_fp, fp))
		return NULL;
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].len == key.n && !memcmp(k->v[i].key, key.p, key.n))
			return &k->v[i];
	return NULL;
}

/* session-bind: verified, and trusted, or the connection signs nothing more. 0 answered. */
static int take_bind(struct sconn *c, const struct agent_bind *b, size_t len)
{
	const char *why = NULL;
	const struct trusted *t = NULL;
	if (b->forwarding)
		why = "a forwarded agent's bind (the jail may not forward this agent)";
	else if (!sshv_verify(b->hostkey.p, b->hostkey.n, b->signature.p, b->signature.n,
			      b->session_id.p, b->session_id.n))
		why = "the server's signature over the session does not verify with its host key";
	else if (!(t = trusted_key(c->s->ssh, b->hostkey)))
		why = "its host key is not one your known_hosts lists for a host this jail may reach "
		      "on a port given explicitly";
	if (why) {
		char fp[64];
		sshv_fingerprint(b->hostkey.p, b->hostkey.n, fp, sizeof fp);
		c->bind_failed = true;
		event(c, false, "refused a session bound to host key %s: %s; no signature on this "
				"connection", fp, why);
		return write_all(c->jfd, agent_failure, 5) ? 0 : -1;
	}
	/* the user's agent learns the bind too (its own destination constraints need it) */
	int r = relay(c, len, false);
	if (r < 0)
		return -1;
	c->bound = true;
	c->peer = t;
	memcpy(c->sid, b->session_id.p, b->session_id.n);
	c->sid_len = b->session_id.n;
	free(c->hostkey);
	c->hostkey = xmalloc(b->hostkey.n);
	memcpy(c->hostkey, b->hostkey.p, b->hostkey.n);
	c->hostkey_len = b->hostkey.n;
	return write_all(c->jfd, agent_success, 5) ? 0 : -1;
}

/* Why a sign request may not be answered, or NULL. */
static const char *sign_refusal(struct sconn *c, const struct agent_sign *sr,
				struct agent_userauth *ua)
{
	if (c->bind_failed)
		return "this connection's session bind was refused";
	if (!c->bound)
		return "the session is bound to no host (ssh binds it first: an older ssh, or not "
		       "ssh at all)";
	if (agent_parse_userauth(sr->data, ua) < 0)
		return "what it asks to sign is not an SSH login (userauth publickey)";
	struct agent_str sid = {c->sid, c->sid_len}, hk = {c->hostkey, c->hostkey_len};
	if (!agent_str_same(ua->session_id, sid))
		return "the login is for another session than the one bound";
	if (!agent_str_same(ua->key, sr->key))
		return "the login names another key than the one asked to sign";
	if (ua->hostbound && !agent_str_same(ua->hostkey, hk))
		return "the login names another host key than the one bound";
	return NULL;
}

static int sign(struct sconn *c, struct agent_str body, size_t len)
{
	struct agent_sign sr;
	struct agent_userauth ua;
	char fp[64] = "?", type[64] = "?";
	const char *why = agent_parse_sign(body, &sr) < 0 ? "a malformed sign request" : NULL;
	if (!why) {
		sshv_fingerprint(sr.key.p, sr.key.n, fp, sizeof fp);
		struct agent_str t, rest;
		if (agent_key_type(sr.key, &t, &rest) == 0)
			(void)snprintf(type, sizeof type, "%.*s", (int)t.n, (const char *)t.p);
		why = sign_refusal(c, &sr, &ua);
	}
	if (why) {
		event(c, false, "refused to sign with %s (%s): %s", fp, type, why);
		return write_all(c->jfd, agent_failure, 5) ? 0 : -1;
	}
	char user[64];
	(void)snprintf(user, sizeof user, "%.*s", (int)(ua.user.n < 63 ? ua.user.n : 63),
		       (const char *)ua.user.p);
	if (relay(c, len, true) < 0)
		return -1;
	event(c, true, "signed a login as %s with %s (%s)", user, fp, type);
	return 0;
}

static void serve_conn(struct sconn *c)
{
	for (;;) {
		long n = read_frame(c->jfd, c->buf);
		if (n <= 0)
			return; /* the end, or a malformed frame: the connection is dropped */
		struct agent_str body = {c->buf + 4, (size_t)n - 4};
		int type = body.p[0], rc;
		if (type == AGENTC_REQUEST_IDENTITIES && body.n == 1) {
			rc = relay(c, (size_t)n, true);
		} else if (type == AGENTC_SIGN_REQUEST) {
			rc = sign(c, body, (size_t)n);
		} else if (type == AGENTC_EXTENSION) {
			struct agent_str name;
			struct agent_bind b;
			if (agent_parse_extension(body, &name, &b) == 0 && b.ok) {
				rc = take_bind(c, &b, (size_t)n);
			} else {
				event(c, false, "refused an extension (%.*s): list and sign only",
				      (int)(name.n < 64 ? name.n : 64), name.p ? (const char *)name.p : "");
				rc = write_all(c->jfd, agent_failure, 5) ? 0 : -1;
			}
		} else {
			event(c, false, "refused %s: the jail's agent lists keys and signs only",
			      agent_msg_name(type));
			rc = write_all(c->jfd, agent_failure, 5) ? 0 : -1;
		}
		if (rc < 0)
			return;
	}
}

void *tls_ssh_thread(void *arg)
{
	struct tls_tunnel_arg *a = arg;
	struct sconn c = {.s = a->s, .jfd = a->conn.fd[0], .afd = -1,
			  .buf = malloc(4 + AGENT_FRAME_MAX)};
	if (c.buf)
		serve_conn(&c);
	if (c.afd >= 0)
		(void)close(c.afd);
	free(c.hostkey);
	if (c.buf)
		explicit_bzero(c.buf, 4 + AGENT_FRAME_MAX);
	free(c.buf);
	tls_conn_done(a->s, &a->conn);
	free(a);
	return NULL;
}
