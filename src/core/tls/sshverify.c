/* sshverify: the crypto the filtered ssh agent needs (doc/design.md §4d), all OpenSSL: the
 * server's signature in a session-bind verified with its host key (Ed25519, ECDSA P-256/384/
 * 521, RSA with SHA-256/512), a hashed known_hosts entry tested (HMAC-SHA1), a key's SHA-256
 * fingerprint. The blobs are parsed by net/agentproto.c. */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <stdio.h>
#include <string.h>

#include "core/net/agentproto.h"
#include "core/tls/sshverify.h"
#include "util/base64.h"

/* An EC public key on curve (OpenSSL's group name) from its point's octets. */
static EVP_PKEY *ec_key(const char *group, struct agent_str q)
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)group, 0),
		OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)q.p, q.n),
		OSSL_PARAM_construct_end()};
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	EVP_PKEY *k = NULL;
	if (!ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		k = NULL;
	EVP_PKEY_CTX_free(ctx);
	return k;
}

static EVP_PKEY *rsa_key(struct agent_str e, struct agent_str n)
{
	BIGNUM *be = BN_bin2bn(e.p, (int)e.n, NULL), *bn = BN_bin2bn(n.p, (int)n.n, NULL);
	OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	EVP_PKEY *k = NULL;
	if (be && bn && b && ctx && BN_num_bits(bn) >= 2048 &&
	    OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, bn) &&
	    OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, be) &&
	    (params = OSSL_PARAM_BLD_to_param(b)) && EVP_PKEY_fromdata_init(ctx) > 0 &&
	    EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		k = NULL;
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(b);
	EVP_PKEY_CTX_free(ctx);
	BN_free(be);
	BN_free(bn);
	return k;
}

static bool verify(EVP_PKEY *k, const EVP_MD *md, const uint8_t *sig, size_t sig_len,
		   struct agent_str data)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	bool ok = c && EVP_DigestVerifyInit(c, NULL, md, NULL, k) == 1 &&
		  EVP_DigestVerify(c, sig, sig_len, data.p, data.n) == 1;
	EVP_MD_CTX_free(c);
	return ok;
}

/* SSH's ECDSA signature (mpint r, mpint s) as DER, verified. */
static bool verify_ecdsa(EVP_PKEY *k, const EVP_MD *md, struct agent_str sig,
			 struct agent_str data)
{
	size_t off = 0;
	struct agent_str r, s;
	if (!agent_get_str(sig, &off, &r) || !agent_get_str(sig, &off, &s) || off != sig.n ||
	    r.n > 67 || s.n > 67)
		return false;
	ECDSA_SIG *es = ECDSA_SIG_new();
	BIGNUM *br = BN_bin2bn(r.p, (int)r.n, NULL), *bs = BN_bin2bn(s.p, (int)s.n, NULL);
	if (!es || !br || !bs || !ECDSA_SIG_set0(es, br, bs)) {
		BN_free(br);
		BN_free(bs);
		ECDSA_SIG_free(es);
		return false;
	}
	unsigned char *der = NULL;
	int n = i2d_ECDSA_SIG(es, &der);
	bool ok = n > 0 && verify(k, md, der, (size_t)n, data);
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
	return ok;
}

bool sshv_verify(const uint8_t *key, size_t key_len, const uint8_t *sig, size_t sig_len,
		 const uint8_t *data, size_t data_len)
{
	struct agent_str kb = {key, key_len}, sb = {sig, sig_len}, d = {data, data_len};
	struct agent_str type, rest, alg, bytes;
	if (agent_key_type(kb, &type, &rest) < 0 || agent_parse_signature(sb, &alg, &bytes) < 0)
		return false;
	size_t off = 0;
	EVP_PKEY *k = NULL;
	bool ok = false;
	if (agent_str_eq(type, "ssh-ed25519")) {
		struct agent_str pk;
		if (agent_get_str(rest, &off, &pk) && off == rest.n && pk.n == 32 &&
		    agent_str_eq(alg, "ssh-ed25519") && bytes.n == 64 &&
		    (k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pk.p, 32)))
			ok = verify(k, NULL, bytes.p, bytes.n, d);
	} else if (agent_str_eq(type, "ecdsa-sha2-nistp256") ||
		   agent_str_eq(type, "ecdsa-sha2-nistp384") ||
		   agent_str_eq(type, "ecdsa-sha2-nistp521")) {
		static const struct {
			const char *curve, *group;
			const EVP_MD *(*md)(void);
		} c[] = {{"nistp256", "P-256", EVP_sha256},
			 {"nistp384", "P-384", EVP_sha384},
			 {"nistp521", "P-521", EVP_sha512}};
		struct agent_str curve, q;
		for (size_t i = 0; i < 3 && !ok; i++) {
			off = 0;
			if (!agent_get_str(rest, &off, &curve) || !agent_get_str(rest, &off, &q) ||
			    off != rest.n || !agent_str_eq(curve, c[i].curve) ||
			    !agent_str_same(alg, type))
				continue;
			if ((k = ec_key(c[i].group, q)))
				ok = verify_ecdsa(k, c[i].md(), bytes, d);
			break;
		}
	} else if (agent_str_eq(type, "ssh-rsa")) {
		struct agent_str e, n;
		const EVP_MD *md = agent_str_eq(alg, "rsa-sha2-256")   ? EVP_sha256()
				   : agent_str_eq(alg, "rsa-sha2-512") ? EVP_sha512()
								      : NULL;
		/* ssh-rsa's SHA-1 signatures are refused, as OpenSSH refuses them by default */
		if (md && agent_get_str(rest, &off, &e) && agent_get_str(rest, &off, &n) &&
		    off == rest.n && (k = rsa_key(e, n)))
			ok = verify(k, md, bytes.p, bytes.n, d);
	}
	EVP_PKEY_free(k);
	return ok;
}

bool sshv_hashed_host_is(const uint8_t *salt, size_t salt_len, const uint8_t hash[20],
			 const char *name)
{
	uint8_t out[EVP_MAX_MD_SIZE];
	size_t n = 0;
	if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA1", NULL, salt, salt_len, (const uint8_t *)name,
		       strlen(name), out, sizeof out, &n) || n != 20)
		return false;
	return CRYPTO_memcmp(out, hash, 20) == 0;
}

void sshv_fingerprint(const uint8_t *key, size_t key_len, char *out, size_t cap)
{
	uint8_t h[32];
	unsigned int n = 0;
	char b64[64];
	if (!EVP_Digest(key, key_len, h, &n, EVP_sha256(), NULL) || n != 32) {
		(void)snprintf(out, cap, "SHA256:?");
		return;
	}
	size_t k = base64_encode(h, 32, b64);
	while (k && b64[k - 1] == '=') /* as ssh-keygen -l prints it */
		b64[--k] = '\0';
	(void)snprintf(out, cap, "SHA256:%s", b64);
}
