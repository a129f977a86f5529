/* inspect: one inspected tunnel in agentjail-tls (doc/design.md §4d), in a thread of its own.
 * TLS toward the jail with a leaf certificate of the run's CA for the approved name, TLS toward
 * the server verified against the host's trust store, and between them the client's requests
 * one after another through httpflow (the Host, the request rules, the placeholders; a secret's
 * value put in where it may go); the server's answers flow back as they come. Both sockets are
 * non-blocking in one poll. The client's TLS reads from a memory BIO, so the ClientHello the
 * proxy already read goes first. Port 80 (plain HTTP) takes the same path without TLS, and
 * never gets a secret. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/net/httpflow.h"
#include "core/tls/tls_internal.h"
#include "util/clock.h"
#include "util/strbuf.h"

#define TUN_BUF 16384
#define TUN_BACKLOG 65536     /* bytes waiting for one side before the other is not read */
#define TUN_HANDSHAKE_MS 10000

struct side {
	int fd;
	SSL *ssl;        /* NULL: plain HTTP */
	BIO *rbio;       /* the client's TLS: a memory BIO fed from its socket */
	bool hs;         /* handshake done (or none) */
	bool eof;        /* its reading ended */
	bool sock_eof;   /* the client's socket said EOF (the memory BIO's end) */
	bool shut;       /* we shut our writing to it */
	bool want_write; /* the last call wanted to write to its socket */
	uint64_t bytes;  /* application bytes read from it */
};

struct tun {
	struct tls_srv *s;
	struct tls_tunnel_arg *a;
	struct side cl, up;
	struct hflow *flow;
	struct hflow_ctx fctx;
	struct secbuf to_up, to_cl;
	char error[128];    /* the upstream's failure (a 502 once the client asks), or the client's */
	bool up_failed;
	bool closing;       /* a last answer is queued: flush it, then end */
	bool done;
	unsigned refused;
	int64_t hs_deadline;
};

__attribute__((format(printf, 2, 3))) static void set_error(struct tun *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	(void)vsnprintf(t->error, sizeof t->error, fmt, ap);
	va_end(ap);
}

/* ---- the SSL_CTXs ---- */

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)ssl, (void)arg;
	static const unsigned char h1[] = "http/1.1";
	for (unsigned i = 0; i < inlen;) {
		unsigned n = in[i];
		if (i + 1 + n > inlen)
			break;
		if (n == 8 && !memcmp(in + i + 1, h1, 8)) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + n;
	}
	return SSL_TLSEXT_ERR_NOACK; /* no ALPN: HTTP/1.1 by default */
}

int tls_ctx_make(struct tls_srv *s, struct err *e)
{
	s->client_ctx = SSL_CTX_new(TLS_server_method());
	s->upstream_ctx = SSL_CTX_new(TLS_client_method());
	char line[400];
	if (!s->client_ctx || !s->upstream_ctx) {
		tls_err_line(line, sizeof line, "cannot set up TLS");
		return err_set(e, 0, "agentjail-tls", "%s", line);
	}
	SSL_CTX_set_min_proto_version(s->client_ctx, TLS1_2_VERSION);
	SSL_CTX_set_min_proto_version(s->upstream_ctx, TLS1_2_VERSION);
	long opts = SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION;
	SSL_CTX_set_options(s->client_ctx, opts);
	SSL_CTX_set_options(s->upstream_ctx, opts);
	long mode = SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
	SSL_CTX_set_mode(s->client_ctx, mode);
	SSL_CTX_set_mode(s->upstream_ctx, mode);
	SSL_CTX_set_alpn_select_cb(s->client_ctx, alpn_select, NULL);
	/* the host's trust store: OpenSSL's default paths, SSL_CERT_FILE / SSL_CERT_DIR honoured */
	if (SSL_CTX_set_default_verify_paths(s->upstream_ctx) != 1) {
		tls_err_line(line, sizeof line, "cannot load the host's trust store");
		return err_set(e, 0, "agentjail-tls", "%s", line);
	}
	SSL_CTX_set_verify(s->upstream_ctx, SSL_VERIFY_PEER, NULL);
	return 0;
}

/* ---- sides ---- */

static bool is_ip(const char *host)
{
	unsigned char b[16];
	return inet_pton(AF_INET, host, b) == 1 || inet_pton(AF_INET6, host, b) == 1;
}

static int setup_upstream(struct tun *t, struct err *e)
{
	const char *host = t->a->t.host;
	SSL *ssl = SSL_new(t->s->upstream_ctx);
	if (!ssl)
		return err_set(e, 0, host, "cannot start TLS to the server");
	t->up.ssl = ssl;
	static const unsigned char alpn[] = "\x08http/1.1";
	bool ok = SSL_set_fd(ssl, t->up.fd) == 1 && SSL_set_alpn_protos(ssl, alpn, 9) == 0;
	if (ok && is_ip(host))
		ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1;
	else if (ok)
		ok = SSL_set_tlsext_host_name(ssl, host) == 1 && SSL_set1_host(ssl, host) == 1;
	if (!ok)
		return err_set(e, 0, host, "cannot set the server's name");
	SSL_set_connect_state(ssl);
	return 0;
}

static int setup_client(struct tun *t, struct err *e)
{
	const char *host = t->a->t.host;
	X509 *leaf = tls_ca_leaf(&t->s->ca, host, e);
	if (!leaf)
		return -1;
	SSL *ssl = SSL_new(t->s->client_ctx);
	t->cl.ssl = ssl;
	t->cl.rbio = BIO_new(BIO_s_mem());
	BIO *wbio = BIO_new_socket(t->cl.fd, BIO_NOCLOSE);
	bool ok = ssl && t->cl.rbio && wbio && SSL_use_certificate(ssl, leaf) == 1 &&
		  SSL_use_PrivateKey(ssl, t->s->ca.leaf_key) == 1;
	X509_free(leaf);
	if (!ok) {
		BIO_free(t->cl.rbio);
		BIO_free(wbio);
		t->cl.rbio = NULL;
		return err_set(e, 0, host, "cannot start TLS toward the jail");
	}
	BIO_set_mem_eof_return(t->cl.rbio, -1); /* empty: "retry", until the socket's EOF */
	SSL_set_bio(ssl, t->cl.rbio, wbio);
	SSL_set_accept_state(ssl);
	/* the ClientHello the proxy read */
	if (t->a->t.held_len && BIO_write(t->cl.rbio, t->a->t.held, (int)t->a->t.held_len) < 0)
		return err_set(e, 0, host, "cannot take the client's first bytes");
	return 0;
}

/* The client's socket into its memory BIO: 1 some came, 0 none, -1 failed. */
static int feed_client(struct tun *t)
{
	if (t->cl.sock_eof || BIO_ctrl_pending(t->cl.rbio) >= TUN_BACKLOG)
		return 0;
	uint8_t buf[TUN_BUF];
	ssize_t n = recv(t->cl.fd, buf, sizeof buf, MSG_DONTWAIT);
	if (n > 0)
		return BIO_write(t->cl.rbio, buf, (int)n) == n ? 1 : -1;
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
		t->cl.sock_eof = true;
		BIO_set_mem_eof_return(t->cl.rbio, 0);
		return 1;
	}
	return 0;
}

/* After an SSL call returned r < 1: 0 retry later, -1 the side ended or failed. */
static int ssl_wait(struct side *x, int r)
{
	int err = SSL_get_error(x->ssl, r);
	x->want_write = err == SSL_ERROR_WANT_WRITE;
	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
		return 0;
	return -1;
}

/* Read application bytes: >0, 0 none now, -1 its end (or a failure). */
static ssize_t side_read(struct side *x, uint8_t *buf, size_t cap)
{
	if (!x->ssl) {
		ssize_t n = recv(x->fd, buf, cap, MSG_DONTWAIT);
		if (n > 0)
			return n;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
	}
	int r = SSL_read(x->ssl, buf, (int)cap);
	return r > 0 ? r : ssl_wait(x, r);
}

/* Write what b holds: 0 (some may be left), -1 failed. */
static int side_write(struct side *x, struct secbuf *b)
{
	while (b->len) {
		ssize_t n;
		if (!x->ssl) {
			n = send(x->fd, b->p, b->len, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n < 0) {
				x->want_write = errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
				return x->want_write ? 0 : -1;
			}
		} else {
			int r = SSL_write(x->ssl, b->p, (int)(b->len > INT32_MAX ? INT32_MAX : b->len));
			if (r <= 0)
				return ssl_wait(x, r);
			n = r;
		}
		x->want_write = false;
		secbuf_consume(b, (size_t)n);
	}
	return 0;
}

/* ---- events and answers ---- */

static void event(struct tun *t, bool allowed, enum net_proto proto, const char *rule)
{
	struct net_event ev = {.at_ms = allowed ? t->a->t.at_ms : tls_wall_ms(), .proto = proto,
			       .port = t->a->t.port, .allowed = allowed};
	(void)snprintf(ev.host, sizeof ev.host, "%s", t->a->t.host);
	(void)snprintf(ev.rule, sizeof ev.rule, "%s", rule);
	if (allowed) {
		(void)snprintf(ev.addr, sizeof ev.addr, "%s", t->a->t.addr);
		ev.bytes_up = t->cl.bytes;
		ev.bytes_down = t->up.bytes;
		ev.dur_ms = clock_mono_ms() - t->a->t.t0_mono_ms;
		(void)snprintf(ev.error, sizeof ev.error, "%s", t->error);
		ev.failed = t->up_failed;
	}
	tls_send_event(t->s, &ev);
}

/* Queue a last answer for the client (and nothing more toward the server). */
static void answer(struct tun *t, int code, const char *reason)
{
	size_t n = 0;
	char *resp = http_response(code, reason, &n);
	if (resp)
		secbuf_add(&t->to_cl, resp, n);
	free(resp);
	secbuf_wipe(&t->to_up);
	t->closing = true;
}

/* ---- one round ---- */

static bool step_handshakes(struct tun *t)
{
	bool progress = false;
	if (!t->up.hs && !t->up_failed) {
		int r = SSL_do_handshake(t->up.ssl);
		if (r == 1) {
			t->up.hs = progress = true;
		} else if (ssl_wait(&t->up, r) < 0) {
			long v = SSL_get_verify_result(t->up.ssl);
			char line[200];
			if (v != X509_V_OK)
				(void)snprintf(line, sizeof line, "certificate verify failed: %s",
					       X509_verify_cert_error_string(v));
			else
				tls_err_line(line, sizeof line, "TLS handshake failed");
			set_error(t, "upstream: %s", line);
			t->up_failed = progress = true;
		}
	}
	if (!t->cl.hs) {
		int r = SSL_do_handshake(t->cl.ssl);
		if (r == 1) {
			t->cl.hs = progress = true;
		} else if (ssl_wait(&t->cl, r) < 0) {
			char line[200];
			tls_err_line(line, sizeof line, "the client's TLS handshake failed");
			if (!t->error[0])
				set_error(t, "client: %s", line);
			t->done = true;
		}
	}
	return progress;
}

/* The client's bytes through the flow. */
static bool step_client(struct tun *t)
{
	if (!t->cl.hs || t->cl.eof || t->closing || t->to_up.len >= TUN_BACKLOG)
		return false;
	uint8_t buf[TUN_BUF];
	ssize_t n = side_read(&t->cl, buf, sizeof buf);
	if (n < 0) {
		t->cl.eof = true;
		return true;
	}
	if (n == 0)
		return false;
	t->cl.bytes += (uint64_t)n;
	if (t->up_failed) { /* the server failed its handshake: say so, never pass it through */
		char reason[512];
		(void)snprintf(reason, sizeof reason, "%s:%u: %s", t->a->t.host, t->a->t.port,
			       t->error);
		answer(t, 502, reason);
		return true;
	}
	struct hflow_refusal r;
	if (hflow_feed(t->flow, &t->fctx, buf, (size_t)n, &t->to_up, &r) < 0) {
		t->refused++;
		event(t, false, t->cl.ssl ? NP_HTTPS : NP_HTTP, r.reason);
		answer(t, r.code, r.reason);
	}
	explicit_bzero(buf, sizeof buf);
	return true;
}

static bool step_upstream(struct tun *t)
{
	if (!t->up.hs || t->up.eof || t->closing || t->to_cl.len)
		return false;
	uint8_t buf[TUN_BUF];
	ssize_t n = side_read(&t->up, buf, sizeof buf);
	if (n < 0) {
		t->up.eof = true;
		return true;
	}
	if (n == 0)
		return false;
	t->up.bytes += (uint64_t)n;
	secbuf_add(&t->to_cl, buf, (size_t)n);
	return true;
}

static bool step_writes(struct tun *t)
{
	bool progress = false;
	size_t before = t->to_cl.len;
	if (t->to_cl.len && t->cl.hs && side_write(&t->cl, &t->to_cl) < 0)
		t->done = true;
	progress |= t->to_cl.len != before;
	before = t->to_up.len;
	if (t->to_up.len && t->up.hs && !t->closing && side_write(&t->up, &t->to_up) < 0)
		t->done = true;
	progress |= t->to_up.len != before;
	/* ends: the client's end goes on to the server once its bytes have; the server's end, or
	 * a last answer, ends the tunnel once the client has what came before it */
	if (t->cl.eof && !t->to_up.len && !t->up.shut && t->up.hs) {
		if (t->up.ssl)
			(void)SSL_shutdown(t->up.ssl);
		(void)shutdown(t->up.fd, SHUT_WR);
		t->up.shut = true;
	}
	if ((t->up.eof || t->closing || (t->cl.eof && t->up_failed)) && !t->to_cl.len)
		t->done = true;
	if (t->cl.eof && t->up.eof)
		t->done = true;
	return progress;
}

static void pump(struct tun *t)
{
	bool progress = true;
	while (progress && !t->done) {
		progress = false;
		if (t->cl.ssl) {
			int f = feed_client(t);
			if (f < 0)
				t->done = true;
			progress |= f > 0;
		}
		if (t->cl.ssl && (!t->cl.hs || (!t->up.hs && !t->up_failed)))
			progress |= step_handshakes(t);
		progress |= step_upstream(t);
		progress |= step_client(t);
		progress |= step_writes(t);
	}
}

static void wait_io(struct tun *t)
{
	struct pollfd pf[2] = {{.fd = t->cl.fd}, {.fd = t->up.fd}};
	bool cl_reads = t->cl.ssl ? !t->cl.sock_eof && BIO_ctrl_pending(t->cl.rbio) < TUN_BACKLOG
				  : !t->cl.eof && t->to_up.len < TUN_BACKLOG && !t->closing;
	if (cl_reads)
		pf[0].events |= POLLIN;
	if (t->cl.want_write || (t->to_cl.len && !t->cl.ssl))
		pf[0].events |= POLLOUT;
	if (!t->up.eof && (!t->up.hs || !t->to_cl.len) && !t->up_failed)
		pf[1].events |= POLLIN;
	if (t->up.want_write || (t->to_up.len && !t->up.ssl))
		pf[1].events |= POLLOUT;
	int timeout = 1000;
	if (!t->cl.hs || (!t->up.hs && !t->up_failed)) {
		int64_t left = t->hs_deadline - clock_mono_ms();
		if (left <= 0) {
			set_error(t, "TLS handshake: timeout");
			t->done = true;
			return;
		}
		timeout = left < timeout ? (int)left : timeout;
	}
	if (poll(pf, 2, timeout) < 0 && errno != EINTR)
		t->done = true;
	for (int i = 0; i < 2; i++)
		if (pf[i].revents & POLLOUT)
			(i ? &t->up : &t->cl)->want_write = false;
	/* a socket the serve loop shut down at the end says so here: its reads end */
	if ((pf[0].revents & (POLLHUP | POLLERR)) && (pf[1].revents & (POLLHUP | POLLERR)))
		t->done = t->done || (t->cl.eof && t->up.eof);
}

/* What was owed to the client before the tunnel came here (the rest of the proxy's 200). */
static int send_owed(struct tun *t)
{
	const uint8_t *p = t->a->t.to_client;
	size_t n = t->a->t.to_client_len;
	while (n) {
		ssize_t k = send(t->cl.fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The tunnel from its start to its end; t->error says why it ended early. */
static void run(struct tun *t)
{
	struct tls_tunnel_arg *a = t->a;
	struct err e = {0};
	/* blocking for what is owed, then non-blocking (the sockets came from the proxy) */
	if (send_owed(t) < 0) {
		set_error(t, "client: %s", strerror(errno));
		return;
	}
	int one = 1;
	(void)setsockopt(t->cl.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (a->t.tls && (setup_upstream(t, &e) < 0 || setup_client(t, &e) < 0)) {
		set_error(t, "%s", e.what);
		return;
	}
	if (!a->t.tls) { /* port 80: the head the proxy read is the flow's first bytes */
		t->cl.hs = t->up.hs = true;
		t->cl.bytes = a->t.held_len;
		struct hflow_refusal r;
		if (hflow_feed(t->flow, &t->fctx, a->t.held, a->t.held_len, &t->to_up, &r) < 0) {
			t->refused++;
			event(t, false, NP_HTTP, r.reason);
			answer(t, r.code, r.reason);
		}
	}
	while (!t->done) {
		pump(t);
		if (!t->done)
			wait_io(t);
		(void)pthread_mutex_lock(&a->s->mu);
		bool stop = a->s->stopping;
		(void)pthread_mutex_unlock(&a->s->mu);
		if (stop && t->cl.eof)
			break;
	}
	if (t->cl.ssl && t->cl.hs)
		(void)SSL_shutdown(t->cl.ssl); /* close_notify, best effort */
}

void *tls_tunnel_thread(void *arg)
{
	struct tls_tunnel_arg *a = arg;
	const struct im_config *cfg = &a->s->cfg;
	struct tun t = {.s = a->s, .a = a, .cl = {.fd = a->conn.fd[0]}, .up = {.fd = a->conn.fd[1]},
			.hs_deadline = clock_mono_ms() + TUN_HANDSHAKE_MS,
			/* the secrets' values, in the order of the inspect's secrets */
			.fctx = {.in = &a->s->in, .host = a->t.host, .port = a->t.port,
				 .tls = a->t.tls, .values = (const char *const *)cfg->values,
				 .vlen = cfg->vlen}};
	t.flow = malloc(sizeof *t.flow);
	if (t.flow) {
		hflow_init(t.flow);
		run(&t);
	} else {
		set_error(&t, "out of memory");
	}
	unsigned req = t.flow ? t.flow->requests : 0, inj = t.flow ? t.flow->injected : 0;
	struct strbuf rule = STRBUF_INIT;
	sb_addf(&rule, "%s (inspected: %u request%s", a->t.rule, req, req == 1 ? "" : "s");
	if (inj)
		sb_addf(&rule, ", a secret added %u time%s", inj, inj == 1 ? "" : "s");
	if (t.refused)
		sb_add(&rule, ", the last refused");
	sb_add(&rule, ")");
	event(&t, true, a->t.proto, sb_str(&rule));
	sb_free(&rule);
	if (t.flow) {
		hflow_clear(t.flow);
		free(t.flow);
	}
	secbuf_wipe(&t.to_up);
	secbuf_wipe(&t.to_cl);
	SSL_free(t.cl.ssl);
	SSL_free(t.up.ssl);
	ERR_clear_error();
	tls_conn_done(a->s, &a->conn);
	explicit_bzero(a->msg, a->msg_len);
	free(a->msg);
	free(a);
	return NULL;
}
