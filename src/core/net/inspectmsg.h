/* inspectmsg: the messages between agentjail and agentjail-tls (doc/design.md §4d), one per
 * SOCK_SEQPACKET datagram: a type byte, then fields (a tag byte, a 32-bit little-endian
 * length, the bytes), then an empty end field. Bounded and strict both ways: a field that runs past the message, a
 * string with a NUL, a number of the wrong size is malformed, never guessed at. Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/net/netevent.h"
#include "core/plan/secrets.h"
#include "util/err.h"
#include "util/secbuf.h"
#include "util/strv.h"

#define IM_MAX (200 * 1024) /* one message (below a Unix socket's default send buffer) */
#define IM_VERSION "agentjail-tls 1"

enum im_type {
	IM_CONFIG = 1, /* agentjail → tls: the run's settings, the secrets' values */
	IM_READY,      /* tls → agentjail: configured (or IM_FAIL with the reason) */
	IM_FAIL,
	IM_TUNNEL,     /* proxy → tls: a tunnel to inspect (its two sockets as SCM_RIGHTS) */
	IM_EVENT,      /* tls → proxy: one decision, a net_event */
};

/* A message being built (b.p, b.len: its bytes); im_wipe clears it (a config carries
 * values). */
struct imsg {
	struct secbuf b;
};
void im_begin(struct imsg *m, enum im_type t);
void im_put(struct imsg *m, uint8_t tag, const void *v, size_t n);
void im_put_str(struct imsg *m, uint8_t tag, const char *s);
void im_put_u64(struct imsg *m, uint8_t tag, uint64_t v);
void im_wipe(struct imsg *m);
/* The end: an empty field of tag IM_TAG_END, last, so a message cut short is malformed. */
#define IM_TAG_END 0
void im_end(struct imsg *m);

struct im_field {
	uint8_t tag;
	const uint8_t *v;
	size_t n;
};
struct im_iter {
	const uint8_t *p;
	size_t n, off;
};
/* The type of buf[0, n), and an iterator over its fields: 0, or -1 (empty, too large). */
int im_open(const uint8_t *buf, size_t n, enum im_type *type, struct im_iter *it) WUR;
/* 1 with the next field, 0 at the end, -1 malformed. */
int im_next(struct im_iter *it, struct im_field *f) WUR;
/* A field as a string (allocated), or NULL when it holds a NUL. */
char *im_strdup(const struct im_field *f);
bool im_u64(const struct im_field *f, uint64_t *v);

/* The run's settings for agentjail-tls. */
struct im_config {
	char *ca_dir;              /* <state>/ca */
	struct secret_set secrets; /* definitions */
	char **values;             /* values[i] of vlen[i] bytes is secrets.v[i]'s */
	size_t *vlen;
	struct strv allow_http;
	struct strv allow, deny, map; /* the network rules (for the ssh agent's hosts) */
	char *ssh_auth_sock;       /* --ssh-agent: the user's agent, else NULL */
	struct strv known_hosts;   /* --ssh-agent: the files of host keys */
};
void im_config_add_secret(struct im_config *c, const struct secret_def *d, const char *value,
			  size_t vlen);
void im_config_encode(const struct im_config *c, struct imsg *m);
int im_config_decode(const uint8_t *buf, size_t n, struct im_config *out, struct err *e) WUR;
void im_config_free(struct im_config *c); /* the values wiped */

/* A tunnel handed over: the proxy's decision so far, and the client's first bytes. */
struct im_tunnel {
	uint64_t id;
	char host[256];
	uint16_t port;
	int64_t at_ms;       /* when the request was read (the event's time) */
	int64_t t0_mono_ms;  /* the proxy's monotonic start, for the event's duration */
	enum net_proto proto;
	bool tls;            /* the held bytes are a ClientHello (else an HTTP head, port 80) */
	char rule[320];      /* the rule that allowed it */
	char addr[46];       /* the address connected to */
	const uint8_t *held; /* into the decoded message */
	size_t held_len;
	const uint8_t *to_client; /* what the proxy still owed the client (the rest of its 200 or
				   * SOCKS reply): sent before anything else */
	size_t to_client_len;
};
void im_tunnel_encode(const struct im_tunnel *t, struct imsg *m);
int im_tunnel_decode(const uint8_t *buf, size_t n, struct im_tunnel *out) WUR;

void im_event_encode(const struct net_event *ev, struct imsg *m);
int im_event_decode(const uint8_t *buf, size_t n, struct net_event *ev) WUR;
