/* agentproto: the ssh-agent protocol as the filtered agent of --ssh-agent reads it
 * (doc/design.md §4d; draft-miller-ssh-agent, OpenSSH's PROTOCOL.agent): frames, the messages
 * it lets through (list, sign, session-bind), the data a signature is asked for (an SSH
 * USERAUTH_REQUEST) and the key and signature blobs. Pure and strict: every length checked
 * against what is left, nothing after a message's last field, nothing guessed. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_FRAME_MAX (256 * 1024) /* OpenSSH's AGENT_MAX_LEN */

enum agent_msg {
	AGENT_FAILURE = 5,
	AGENT_SUCCESS = 6,
	AGENTC_REQUEST_IDENTITIES = 11,
	AGENT_IDENTITIES_ANSWER = 12,
	AGENTC_SIGN_REQUEST = 13,
	AGENT_SIGN_RESPONSE = 14,
	AGENTC_ADD_IDENTITY = 17,
	AGENTC_REMOVE_IDENTITY = 18,
	AGENTC_REMOVE_ALL_IDENTITIES = 19,
	AGENTC_ADD_SMARTCARD_KEY = 20,
	AGENTC_REMOVE_SMARTCARD_KEY = 21,
	AGENTC_LOCK = 22,
	AGENTC_UNLOCK = 23,
	AGENTC_ADD_ID_CONSTRAINED = 25,
	AGENTC_ADD_SMARTCARD_KEY_CONSTRAINED = 26,
	AGENTC_EXTENSION = 27,
};

/* A length-prefixed string inside a message (not NUL-terminated). */
struct agent_str {
	const uint8_t *p;
	size_t n;
};

/* The frame at the start of buf: 1 with *body (after the 4-byte length) and *total (the
 * frame's bytes) when it is whole; 0 when more is needed; -1 when its length is 0 or over
 * AGENT_FRAME_MAX. */
int agent_frame(const uint8_t *buf, size_t len, struct agent_str *body, size_t *total);

/* SIGN_REQUEST: key blob, data, flags. 0, or -1 malformed. */
struct agent_sign {
	struct agent_str key, data;
	uint32_t flags;
};
int agent_parse_sign(struct agent_str body, struct agent_sign *out);

/* EXTENSION: its name; for "session-bind@openssh.com" the host key, the session id, the
 * server's signature over it and whether the connection is a forward. 0, or -1 malformed
 * (bind.ok false for another extension). */
struct agent_bind {
	bool ok;
	struct agent_str hostkey, session_id, signature;
	bool forwarding;
};
int agent_parse_extension(struct agent_str body, struct agent_str *name, struct agent_bind *bind);

/* The data of a sign request when it is an SSH USERAUTH_REQUEST for publickey with a
 * signature (RFC 4252 §7; OpenSSH's publickey-hostbound-v00@openssh.com adds the host key):
 * 0 with the fields, -1 when it is anything else. */
struct agent_userauth {
	struct agent_str session_id, user, service, method, alg, key;
	bool hostbound;
	struct agent_str hostkey; /* hostbound only */
};
int agent_parse_userauth(struct agent_str data, struct agent_userauth *out);

/* A key blob's type ("ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", …) and what follows it;
 * a signature blob's algorithm and its bytes. 0, or -1. */
int agent_key_type(struct agent_str key, struct agent_str *type, struct agent_str *rest);
int agent_parse_signature(struct agent_str sig, struct agent_str *alg, struct agent_str *bytes);

/* Read a string / uint32 / byte at *off of b, advancing; false when it does not fit. */
bool agent_get_str(struct agent_str b, size_t *off, struct agent_str *out);
bool agent_get_u32(struct agent_str b, size_t *off, uint32_t *out);
bool agent_get_u8(struct agent_str b, size_t *off, uint8_t *out);

bool agent_str_eq(struct agent_str s, const char *lit);
bool agent_str_same(struct agent_str a, struct agent_str b);

/* The one-byte answers, framed: FAILURE and SUCCESS (5 bytes each). */
extern const uint8_t agent_failure[5], agent_success[5];
/* The short names of the messages it refuses, for events ("add identity"…). */
const char *agent_msg_name(int type);
