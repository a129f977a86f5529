/* ca: the per-user CA of agentjail-tls and the leaf certificates it signs for inspected hosts
 * (doc/design.md §4d). OpenSSL 3's EVP and X509 interfaces; no crypto of ours. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/tls/tls_internal.h"
#include "util/cleanup.h"
#include "util/hex.h"
#include "util/path.h"
#include "util/xalloc.h"

#define CA_DAYS (10 * 365)
#define LEAF_DAYS 30

struct tls_leaf {
	char *host;
	X509 *cert;
	struct tls_leaf *next;
};

void tls_err_line(char *buf, size_t cap, const char *what)
{
	unsigned long code = ERR_get_error();
	char r[256] = "";
	if (code)
		ERR_error_string_n(code, r, sizeof r);
	ERR_clear_error();
	(void)snprintf(buf, cap, "%s%s%s", what, code ? ": " : "", r);
}

static int ossl_err(struct err *e, const char *path, const char *what)
{
	char line[400];
	tls_err_line(line, sizeof line, what);
	return err_set(e, 0, path, "%s", line);
}

static EVP_PKEY *new_key(void)
{
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* A random positive serial of 128 bits. */
static bool set_serial(X509 *x)
{
	unsigned char b[16];
	if (RAND_bytes(b, sizeof b) != 1)
		return false;
	b[0] &= 0x7f;
	b[0] |= 0x01; /* positive, and not shortened */
	BIGNUM *bn = BN_bin2bn(b, sizeof b, NULL);
	bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
	BN_free(bn);
	return ok;
}

static bool add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *ex = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	bool ok = ex && X509_add_ext(x, ex, -1);
	X509_EXTENSION_free(ex);
	return ok;
}

static bool set_cn(X509_NAME *n, const char *cn)
{
	return X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1,
					  -1, 0);
}

/* A certificate for key, signed by issuer_key (issuer NULL: self-signed). */
static X509 *make_cert(EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key, const char *cn,
		       long days, long back)
{
	X509 *x = X509_new();
	if (!x || !X509_set_version(x, 2) || !set_serial(x) ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -back) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), days * 86400L) || !X509_set_pubkey(x, key) ||
	    !set_cn(X509_get_subject_name(x), cn) ||
	    !X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer)
					    : X509_get_subject_name(x))) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* ---- the CA ---- */

/* Write data to dir/name through a temporary file of that mode, synced and renamed. */
static int write_file(const char *dir, const char *name, mode_t mode,
		      int (*put)(BIO *b, void *arg), void *arg, struct err *e)
{
	_cleanup_free_ char *path = path_join(dir, name);
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	(void)unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return err_set(e, errno, tmp, "cannot create the CA's file");
	BIO *b = BIO_new_fd(fd, BIO_CLOSE);
	int ok = b && put(b, arg) && BIO_flush(b) == 1 && fsync(fd) == 0;
	BIO_free_all(b);
	if (!b)
		(void)close(fd);
	if (!ok) {
		(void)unlink(tmp);
		return ossl_err(e, tmp, "cannot write the CA's file");
	}
	if (rename(tmp, path) < 0) {
		int err = errno;
		(void)unlink(tmp);
		return err_set(e, err, path, "cannot put the CA's file in place");
	}
	return 0;
}

static int put_key(BIO *b, void *arg)
{
	return PEM_write_bio_PrivateKey(b, arg, NULL, NULL, 0, NULL, NULL);
}

static int put_cert(BIO *b, void *arg)
{
	return PEM_write_bio_X509(b, arg);
}

static char *ca_name(void)
{
	char host[256] = "localhost";
	(void)gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	struct passwd *pw = getpwuid(geteuid());
	return xasprintf("agentjail CA for %s@%s (jails only)", pw ? pw->pw_name : "user", host);
}

int tls_ca_make(const char *dir, struct err *e)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return err_set(e, errno, dir, "cannot make the CA's directory");
	struct stat st;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		return err_set(e, 0, dir, "the CA's directory must be yours, mode 0700");
	_cleanup_free_ char *cert = path_join(dir, TLS_CA_CERT);
	_cleanup_free_ char *keyp = path_join(dir, TLS_CA_KEY);
	if (access(cert, F_OK) == 0 && access(keyp, F_OK) == 0)
		return 0;
	EVP_PKEY *key = new_key();
	_cleanup_free_ char *cn = ca_name();
	X509 *x = key ? make_cert(key, NULL, NULL, cn, CA_DAYS, 86400) : NULL;
	int rc = -1;
	if (!x || !add_ext(x, NULL, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(x, NULL, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    !add_ext(x, x, NID_subject_key_identifier, "hash") ||
	    !add_ext(x, x, NID_authority_key_identifier, "keyid:always") ||
	    !X509_sign(x, key, EVP_sha256()))
		ossl_err(e, dir, "cannot make the CA");
	/* the key first: a certificate never exists without its key */
	else if (write_file(dir, TLS_CA_KEY, 0600, put_key, key, e) == 0 &&
		 write_file(dir, TLS_CA_CERT, 0644, put_cert, x, e) == 0)
		rc = 0;
	X509_free(x);
	EVP_PKEY_free(key);
	return rc;
}

int tls_ca_load(struct tls_ca *ca, const char *dir, struct err *e)
{
	memset(ca, 0, sizeof *ca);
	(void)pthread_mutex_init(&ca->mu, NULL);
	_cleanup_free_ char *cert = path_join(dir, TLS_CA_CERT);
	_cleanup_free_ char *keyp = path_join(dir, TLS_CA_KEY);
	struct stat st;
	if (lstat(keyp, &st) < 0)
		return err_set(e, errno, keyp, "cannot find the CA's key");
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return err_set(e, 0, keyp, "the CA's key must be a file of yours, mode 0600");
	FILE *f = fopen(keyp, "re");
	ca->key = f ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
	if (f)
		(void)fclose(f);
	f = fopen(cert, "re");
	ca->cert = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	if (f)
		(void)fclose(f);
	if (!ca->key || !ca->cert)
		return ossl_err(e, dir, "cannot read the CA");
	if (X509_check_private_key(ca->cert, ca->key) != 1)
		return ossl_err(e, dir, "the CA's certificate is not its key's");
	ca->leaf_key = new_key();
	if (!ca->leaf_key)
		return ossl_err(e, dir, "cannot make the run's leaf key");
	return 0;
}

static X509 *make_leaf(struct tls_ca *ca, const char *host)
{
	X509 *x = make_cert(ca->leaf_key, ca->cert, ca->key, host, LEAF_DAYS, 86400);
	unsigned char bin[16];
	bool ip = inet_pton(AF_INET, host, bin) == 1 || inet_pton(AF_INET6, host, bin) == 1;
	_cleanup_free_ char *san = xasprintf("%s:%s", ip ? "IP" : "DNS", host);
	if (!x || !add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature") ||
	    !add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(x, ca->cert, NID_subject_alt_name, san) ||
	    !add_ext(x, ca->cert, NID_subject_key_identifier, "hash") ||
	    !add_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always") ||
	    !X509_sign(x, ca->key, EVP_sha256())) {
		X509_free(x);
		return NULL;
	}
	return x;
}

X509 *tls_ca_leaf(struct tls_ca *ca, const char *host, struct err *e)
{
	(void)pthread_mutex_lock(&ca->mu);
	struct tls_leaf *l = ca->leaves;
	while (l && strcmp(l->host, host))
		l = l->next;
	X509 *x = l ? l->cert : make_leaf(ca, host);
	if (x && !l) {
		l = xcalloc(1, sizeof *l);
		l->host = xstrdup(host);
		l->cert = x;
		l->next = ca->leaves;
		ca->leaves = l;
	}
	if (x)
		(void)X509_up_ref(x);
	(void)pthread_mutex_unlock(&ca->mu);
	if (!x)
		ossl_err(e, host, "cannot make a certificate for the inspected host");
	return x;
}

void tls_ca_free(struct tls_ca *ca)
{
	while (ca->leaves) {
		struct tls_leaf *l = ca->leaves;
		ca->leaves = l->next;
		X509_free(l->cert);
		free(l->host);
		free(l);
	}
	EVP_PKEY_free(ca->leaf_key);
	EVP_PKEY_free(ca->key);
	X509_free(ca->cert);
	(void)pthread_mutex_destroy(&ca->mu);
	memset(ca, 0, sizeof *ca);
}

int tls_ca_describe(const char *dir, char *out, size_t cap, struct err *e)
{
	_cleanup_free_ char *cert = path_join(dir, TLS_CA_CERT);
	FILE *f = fopen(cert, "re");
	if (!f)
		return err_set(e, errno, cert, "cannot read the CA's certificate");
	X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
	(void)fclose(f);
	if (!x)
		return ossl_err(e, cert, "cannot read the CA's certificate");
	char cn[256] = "?", until[32] = "?";
	(void)X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof cn);
	struct tm tm;
	if (ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1)
		(void)strftime(until, sizeof until, "%Y-%m-%d", &tm);
	unsigned char md[32];
	unsigned int n = 0;
	char hex[65] = "";
	if (X509_digest(x, EVP_sha256(), md, &n) == 1)
		hex_encode(md, n < 32 ? n : 32, hex);
	bool expired = X509_cmp_current_time(X509_get0_notAfter(x)) < 0;
	X509_free(x);
	(void)snprintf(out, cap, "%s: \"%s\", %s %s, SHA-256 %s", cert, cn,
		       expired ? "EXPIRED since" : "valid until", until, hex);
	return expired ? err_set(e, 0, cert, "%s", out) : 0;
}
