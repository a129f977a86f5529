/* knownhosts: lines of OpenSSH's known_hosts (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT") as the
 * filtered ssh agent reads them (doc/design.md §4d): which host keys the user trusts for which
 * host and port. Pure: a hashed entry ("|1|salt|hash") is returned for the caller to test with
 * HMAC-SHA1 (agentjail-tls, OpenSSL). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strv.h"

enum kh_marker { KH_NONE, KH_REVOKED, KH_CERT_AUTHORITY };

struct kh_entry {
	enum kh_marker marker;
	struct strv patterns;  /* the host patterns as written (may start with '!'), or empty */
	bool hashed;           /* one "|1|SALT|HASH" pattern: salt and hash below */
	uint8_t salt[64], hash[20];
	size_t salt_len;
	uint8_t *key;          /* the key blob (decoded base64) */
	size_t key_len;
	char type[64];         /* the key's type as written ("ssh-ed25519") */
};

/* One line. 1 with *out filled (kh_entry_free it), 0 for a line that holds no entry (blank,
 * a comment), -1 for one that cannot be read (skipped by the caller). */
int kh_parse_line(const char *line, struct kh_entry *out);
void kh_entry_free(struct kh_entry *e);

/* The name a host takes in known_hosts: "host" for port 22, "[host]:port" otherwise. */
char *kh_host_name(const char *host, uint16_t port);

/* Whether a plain (not hashed) entry names host at port: one of its patterns matches ("*" and
 * "?" as OpenSSH reads them) and no negated one does. */
bool kh_entry_names(const struct kh_entry *e, const char *host, uint16_t port);
/* Whether one pattern (without '!') matches the name (kh_host_name's form), case-insensitively. */
bool kh_pattern_match(const char *pattern, const char *name);
