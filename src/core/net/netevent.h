/* netevent: one decision of the egress proxy, as the session store keeps it (doc/design.md §4,
 * §5). Plain data shared by the proxy (core/net) and the store (core/session). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

enum net_proto {
	NP_CONNECT, NP_HTTP, NP_SOCKS, NP_DNS,
	NP_TCP,     /* a direct connection of the jail, captured (doc/design.md §4, capture) */
	NP_PUBLISH, /* a connection from the host to a published port (--publish): host and port
		     * are the jail's side (127.0.0.1 or ::1, PORT), addr the host's client
		     * (ADDR:PORT), rule the entry ("8080:3000"), bytes_up what the jail sent */
	NP_HTTPS,     /* a request inside an inspected tunnel, refused (doc/design.md §4d) */
	NP_SSH_AGENT, /* a signature asked of the filtered ssh agent, made or refused, or another
		       * request it refused (§4d): host and port of the session it is bound to,
		       * or "-" and 0 */
	NP__N,
};

struct net_event {
	int64_t at_ms;          /* wall clock, ms since the epoch, when the request was read */
	enum net_proto proto;
	char host[256];         /* normalized, or as received (cleaned) when it did not parse;
				 * DNS: "." for the root, "" for a malformed request (no name could
				 * be read: net_event_malformed) */
	uint16_t port;          /* 0 for DNS */
	bool allowed;
	bool failed;            /* allowed, but the upstream could not be reached: the name did not
				 * resolve, the connect failed or timed out (the 502/504, SOCKS
				 * 4/5 sent; a DNS answer SERVFAIL/NXDOMAIN); `error` says why */
	char rule[320];         /* allowed: the rule's spec ("*.example.com", "map api=127.0.0.1");
				 * denied: the one-line reason (net_deny_reason; "malformed DNS
				 * request: WHY") */
	char addr[46];          /* the address connected to (or answered, DNS), "" if none */
	uint64_t bytes_up;      /* jail → host */
	uint64_t bytes_down;    /* host → jail */
	int64_t dur_ms;         /* from the request to the end of the tunnel */
	char error[128];        /* an upstream failure ("connect: Connection refused", "timeout"
				 * → the 502/504 sent), "" if none */
};

/* "connect", "http", "socks", "dns", "tcp", "publish", "https", "ssh-agent" */
const char *net_proto_name(enum net_proto p);
int net_proto_parse(const char *s, enum net_proto *out); /* 0, or -1 for another name */
/* A DNS message the stub could read no question from (a response, a runt, two questions, a
 * name that is not letters, digits, '-' and '_'…): counted apart from refused names. */
bool net_event_malformed(const struct net_event *ev);
