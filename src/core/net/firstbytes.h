/* firstbytes: what the first bytes a client sends into an approved connection name, judged
 * against the name it was approved for before any of them goes upstream (doc/design.md §4):
 * the TLS server name of a ClientHello, the Host of a plain HTTP request. For the proxy's
 * CONNECT and SOCKS tunnels, and for captured direct connections. Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/plan/netrules.h"

enum fb_kind {
	FB_SNIFF, /* any other port: TLS is checked when the first bytes are TLS (a handshake
		   * record or an SSLv2 hello), anything else goes on unread */
	FB_TLS,   /* port 443: a ClientHello naming the approved name, nothing else */
	FB_HTTP,  /* port 80: an HTTP/1.x request whose Host (and absolute target) is the
		   * approved name, nothing else */
};
enum fb_kind fb_kind_for_port(uint16_t port);
/* For a connection to host (normalized) at port: what an allow entry says the port carries
 * ("host:8443/tls", netrules_carries), else the port's own kind. */
enum fb_kind fb_kind_for(const struct netrules *r, const char *host, uint16_t port);

enum fb_state { FB_WAIT, FB_PASS, FB_REFUSE };

struct fb_result {
	enum fb_state state;
	bool tls;           /* TLS (or claiming to be): a refusal is answered with a TLS alert */
	bool http;          /* an HTTP request: a refusal is answered with a 403 */
	size_t max;         /* FB_WAIT: no decision can need more than this many bytes in all */
	char reason[512];   /* FB_REFUSE: one line, naming both names when there are two */
};

/* Judge buf[0, len), what the client has sent so far, for a connection to host (normalized)
 * at port approved by d. final: no more will come (the client stopped sending or the wait's
 * deadline passed), so a wait becomes a refusal. FB_SNIFF with nothing sent waits, unbounded
 * (a server may speak first): the caller bounds a wait once bytes have come, or at once for
 * FB_TLS and FB_HTTP. */
void fb_judge(const struct netrules *r, const struct net_decision *d, const char *host,
	      uint16_t port, enum fb_kind kind, const uint8_t *buf, size_t len, bool final,
	      struct fb_result *out);

/* A TLS fatal alert, access_denied, as a plaintext record (7 bytes). */
extern const uint8_t fb_tls_alert[7];
