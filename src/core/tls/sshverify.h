/* sshverify: OpenSSL for the filtered ssh agent (doc/design.md §4d). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether sig (an SSH signature blob) is key's (an SSH public key blob) over data: Ed25519,
 * ECDSA P-256/384/521, RSA (at least 2048 bits) with rsa-sha2-256 or -512. */
bool sshv_verify(const uint8_t *key, size_t key_len, const uint8_t *sig, size_t sig_len,
		 const uint8_t *data, size_t data_len);
/* Whether a hashed known_hosts entry (|1|salt|hash) names `name` (kh_host_name's form). */
bool sshv_hashed_host_is(const uint8_t *salt, size_t salt_len, const uint8_t hash[20],
			 const char *name);
/* "SHA256:…" of a key blob, as ssh-keygen -l prints it. */
void sshv_fingerprint(const uint8_t *key, size_t key_len, char *out, size_t cap);
