/* bench/tlsinspect: what an inspected HTTPS request costs (doc/design.md §4d) on host loopback,
 * no jail. The proxy (in this process) serves two names of one TLS server: bench.test, which a
 * secret is for (so its tunnels go to agentjail-tls, which adds the key), and opaque.test, which
 * is not inspected (a spliced tunnel, TLS end to end). A client opens a tunnel to each, alternating,
 * and sends 1 KiB requests that get 1 KiB answers over the kept-alive TLS connection.
 * - tls-inspect-added-ms: the median round trip of a request, inspected minus opaque (goal ≤ 1);
 * - tls-inspect-connect-added-ms: the median time from the tunnel's connect to the first
 *   answer (the handshakes, the hand-off), inspected minus opaque.
 * Needs agentjail-tls beside this program (the Makefile copies it).
 * usage: tlsinspect [CONNECTIONS] [REQUESTS] */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchutil.h"
#include "core/jail/tlshelper.h"
#include "core/net/proxy.h"
#include "core/plan/httprules.h"
#include "util/strv.h"

#define BODY 1024

static void die(const char *what)
{
	fprintf(stderr, "tlsinspect bench: %s: %s\n", what, errno ? strerror(errno) : "");
	ERR_print_errors_fp(stderr);
	exit(1);
}

static int listen_tcp(uint16_t *port)
{
	int fd = bench_listen_lo(port);
	if (fd < 0)
		die("listen");
	return fd;
}

static int dial(uint16_t port)
{
	int fd = bench_dial_lo(port);
	if (fd < 0)
		die("connect");
	return fd;
}

/* ---- a CA and a server certificate for both names (OpenSSL, as the test CA of the tests) */

static EVP_PKEY *key(void)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!k)
		die("keygen");
	return k;
}

static void ext(X509 *x, X509 *issuer, int nid, const char *v)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &ctx, nid, v);
	if (!e || !X509_add_ext(x, e, -1))
		die("extension");
	X509_EXTENSION_free(e);
}

static X509 *cert(EVP_PKEY *k, X509 *issuer, EVP_PKEY *ik, const char *cn, bool ca)
{
	X509 *x = X509_new();
	ASN1_INTEGER_set(X509_get_serialNumber(x), ca ? 1 : 2);
	X509_set_version(x, 2);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, k);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_UTF8,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, X509_get_subject_name(issuer ? issuer : x));
	if (ca) {
		ext(x, x, NID_basic_constraints, "critical,CA:TRUE");
		ext(x, x, NID_key_usage, "critical,keyCertSign");
		ext(x, x, NID_subject_key_identifier, "hash");
	} else {
		ext(x, issuer, NID_subject_alt_name, "DNS:bench.test,DNS:opaque.test");
		ext(x, issuer, NID_ext_key_usage, "serverAuth");
		ext(x, issuer, NID_authority_key_identifier, "keyid:always");
	}
	if (!X509_sign(x, ik ? ik : k, EVP_sha256()))
		die("sign");
	return x;
}

/* ---- the server: a thread per connection, keep-alive, 1 KiB in, 1 KiB out */

static SSL_CTX *server_ctx;
static unsigned long with_key; /* requests the server saw with the real key: inspected ones */
static const char resp_head[] = "HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n";

static bool read_request(SSL *s)
{
	char buf[4096];
	size_t n = 0;
	char *end = NULL;
	while (!end) {
		int k = SSL_read(s, buf + n, (int)(sizeof buf - 1 - n));
		if (k <= 0)
			return false;
		n += (size_t)k;
		buf[n] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if (strstr(buf, "x-api-key: sk-bench-real-value\r\n"))
		__atomic_add_fetch(&with_key, 1, __ATOMIC_RELAXED);
	size_t body = n - (size_t)(end + 4 - buf);
	const char *cl = strcasestr(buf, "content-length:");
	size_t want = cl ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
	while (body < want) {
		int k = SSL_read(s, buf, sizeof buf);
		if (k <= 0)
			return false;
		body += (size_t)k;
	}
	return true;
}

static void *serve_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	SSL *s = SSL_new(server_ctx);
	SSL_set_fd(s, fd);
	static char resp[sizeof resp_head - 1 + BODY];
	memcpy(resp, resp_head, sizeof resp_head - 1);
	memset(resp + sizeof resp_head - 1, 'b', BODY);
	if (SSL_accept(s) == 1)
		while (read_request(s) && SSL_write(s, resp, sizeof resp) == (int)sizeof resp)
			;
	SSL_free(s);
	close(fd);
	return NULL;
}

static void *serve(void *arg)
{
	int lfd = (int)(intptr_t)arg;
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		int one = 1;
		(void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		pthread_t t;
		if (pthread_create(&t, NULL, serve_conn, (void *)(intptr_t)c) == 0)
			pthread_detach(t);
	}
	return NULL;
}

/* ---- the client */

static SSL_CTX *client_ctx;

static SSL *open_tls(uint16_t pport, const char *host, uint16_t port)
{
	int fd = dial(pport);
	char req[128];
	int n = snprintf(req, sizeof req, "CONNECT %s:%u HTTP/1.1\r\n\r\n", host, port);
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
		die("CONNECT");
	char buf[256];
	size_t got = 0;
	while (got < 4 || memcmp(buf + got - 4, "\r\n\r\n", 4)) {
		ssize_t k = recv(fd, buf + got, 1, 0);
		if (k <= 0 || ++got == sizeof buf)
			die("the CONNECT reply");
	}
	SSL *s = SSL_new(client_ctx);
	SSL_set_fd(s, fd);
	SSL_set_tlsext_host_name(s, host);
	SSL_set1_host(s, host);
	if (SSL_connect(s) != 1)
		die("TLS through the tunnel");
	return s;
}

static void request(SSL *s, const char *host)
{
	static char req[512 + BODY];
	int n = snprintf(req, 512, "POST /v1/messages HTTP/1.1\r\nHost: %s\r\nx-api-key: "
				   "agentjail-placeholder-BENCH_KEY\r\nContent-Length: %d\r\n\r\n",
			 host, BODY);
	memset(req + n, 'a', BODY);
	if (SSL_write(s, req, n + BODY) != n + BODY)
		die("request");
	char buf[2048];
	size_t got = 0;
	while (got < sizeof resp_head - 1 + BODY) {
		int k = SSL_read(s, buf, sizeof buf);
		if (k <= 0)
			die("answer");
		got += (size_t)k;
	}
}

static void close_tls(SSL *s)
{
	int fd = SSL_get_fd(s);
	SSL_free(s);
	close(fd);
}

int main(int argc, char **argv)
{
	int conns = argc > 1 ? atoi(argv[1]) : 40;
	int reqs = argc > 2 ? atoi(argv[2]) : 25;
	char dir[] = "/tmp/aj-bench-tls.XXXXXX";
	if (!mkdtemp(dir))
		die("mkdtemp");
	/* the servers' CA, trusted by agentjail-tls (SSL_CERT_FILE) as a host's store would be */
	EVP_PKEY *cak = key(), *sk = key();
	X509 *ca = cert(cak, NULL, NULL, "bench CA", true);
	X509 *sc = cert(sk, ca, cak, "bench.test", false);
	char capath[256];
	(void)snprintf(capath, sizeof capath, "%s/benchca.pem", dir);
	FILE *f = fopen(capath, "w");
	if (!f || !PEM_write_X509(f, ca))
		die("the bench CA");
	fclose(f);
	server_ctx = SSL_CTX_new(TLS_server_method());
	if (!SSL_CTX_use_certificate(server_ctx, sc) || !SSL_CTX_use_PrivateKey(server_ctx, sk))
		die("the server's certificate");
	uint16_t sport;
	int slfd = listen_tcp(&sport);
	pthread_t st;
	if (pthread_create(&st, NULL, serve, (void *)(intptr_t)slfd))
		die("pthread_create");

	/* agentjail's CA (made by agentjail-tls __ca in a state directory of the bench's) */
	struct err e = {0};
	char *pem = NULL;
	if (tlshelper_ca_pem(dir, true, &pem, &e) < 0) {
		fprintf(stderr, "tlsinspect bench: %s (%s)\n", e.what, e.path);
		return 1;
	}
	client_ctx = SSL_CTX_new(TLS_client_method());
	X509_STORE *store = SSL_CTX_get_cert_store(client_ctx);
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *ajca = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	if (!ajca || !X509_STORE_add_cert(store, ajca) || !X509_STORE_add_cert(store, ca))
		die("the client's trust");
	SSL_CTX_set_verify(client_ctx, SSL_VERIFY_PEER, NULL);

	/* the run: rules, the secret, agentjail-tls, the proxy */
	struct strv allow = STRV_INIT, deny = STRV_INIT, map = STRV_INIT, hosts = STRV_INIT;
	strv_pushf(&allow, "bench.test:%u", sport);
	strv_pushf(&allow, "opaque.test:%u", sport);
	strv_push(&map, "bench.test=127.0.0.1");
	strv_push(&map, "opaque.test=127.0.0.1");
	strv_push(&hosts, "bench.test");
	struct secret_def d;
	struct secret_set ss = {0};
	struct netrules rules;
	struct inspect in;
	if (secret_def_make("BENCH_KEY", &hosts, "x-api-key", NULL, NULL, NULL, &d, &e) < 0 ||
	    netrules_build(&allow, &deny, &map, &rules, &e) < 0)
		die(e.what);
	secret_set_put(&ss, &d);
	if (inspect_build(NULL, &ss, &in, &e) < 0)
		die(e.what);
	rules.inspect = &in;
	struct im_config cfg = {0};
	char cadir[300];
	(void)snprintf(cadir, sizeof cadir, "%s/ca", dir);
	cfg.ca_dir = strdup(cadir);
	im_config_add_secret(&cfg, &d, "sk-bench-real-value", 19);
	char envvar[300];
	(void)snprintf(envvar, sizeof envvar, "SSL_CERT_FILE=%s", capath);
	char *envp[] = {envvar, NULL};
	struct tlshelper h;
	if (tlshelper_start(&cfg, -1, envp, &h, &e) < 0) {
		fprintf(stderr, "tlsinspect bench: %s\n", e.what);
		return 1;
	}
	uint16_t pport;
	struct proxy_listeners l = {.tcp4 = listen_tcp(&pport), .tcp6 = -1, .dns_udp = -1,
				    .dns_tcp = -1, .inspect_fd = h.ctl};
	h.ctl = -1;
	struct proxy *p;
	if (proxy_start(&l, &rules, NULL, NULL, NULL, &p, &e) < 0)
		die(e.what);

	/* warm up both paths, then alternate */
	for (int k = 0; k < 2; k++) {
		const char *host = k ? "bench.test" : "opaque.test";
		SSL *s = open_tls(pport, host, sport);
		request(s, host);
		close_tls(s);
	}
	double *rt[2], *ct[2];
	for (int m = 0; m < 2; m++) {
		rt[m] = calloc((size_t)(conns * reqs), sizeof(double));
		ct[m] = calloc((size_t)conns, sizeof(double));
	}
	int nr = 0;
	for (int c = 0; c < conns; c++) {
		for (int k = 0; k < 2; k++) {
			int m = (c + k) % 2; /* 0 opaque, 1 inspected; the order alternates */
			const char *host = m ? "bench.test" : "opaque.test";
			double t0 = now_ms();
			SSL *s = open_tls(pport, host, sport);
			request(s, host);
			ct[m][c] = now_ms() - t0;
			for (int r = 0; r < reqs; r++) {
				double t = now_ms();
				request(s, host);
				rt[m][nr + r] = now_ms() - t;
			}
			close_tls(s);
		}
		nr += reqs;
	}
	double ro = median(rt[0], nr), ri = median(rt[1], nr);
	double co = median(ct[0], conns), ci = median(ct[1], conns);
	printf("tlsinspect: a 1 KiB request and its 1 KiB answer over a kept-alive TLS connection, "
	       "%d each: opaque tunnel %.3f ms, inspected %.3f ms\n", nr, ro, ri);
	printf("tlsinspect: a new connection to its first answer, %d each: opaque %.3f ms, "
	       "inspected %.3f ms\n", conns, co, ci);
	proxy_stop(p, NULL);
	tlshelper_reap(&h);
	unsigned long keyed = __atomic_load_n(&with_key, __ATOMIC_RELAXED);
	printf("tlsinspect: the server saw the key added in %lu requests (the inspected ones: %d)\n",
	       keyed, nr + conns + 1);
	if (keyed != (unsigned long)(nr + conns + 1))
		return 1;
	printf("bench: tls-inspect-added-ms %.3f (goal ≤ 1)\n", ri - ro);
	printf("bench: tls-inspect-connect-added-ms %.3f\n", ci - co);
	char rm[300];
	(void)snprintf(rm, sizeof rm, "rm -rf %s", dir);
	if (system(rm) != 0)
		return 1;
	return 0;
}
