/* netrules: the allow and deny lists of `--net allow`, host mappings, and the checks the egress
 * proxy makes on them before any DNS lookup (doc/design.md §4). Pure: no syscalls (IDNA through
 * libidn2 is a computation). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"
#include "util/strv.h"

#define NET_PROXY_PORT 3128  /* the one proxy port inside the jail: CONNECT, plain HTTP, SOCKS5 */
#define NET_DNS_PORT 53      /* the DNS stub inside the jail, UDP and TCP, on 127.0.0.1 */
#define NET_HOST_MAX 253     /* longest normalized host name */

enum netrule_kind { NR_NAME, NR_WILDCARD, NR_IPV4, NR_IPV6 };

/* What an allow entry's port carries, when the entry says it ("example.com:8443/tls"): its
 * first bytes are judged as port 443's (a ClientHello naming the approved name) or port 80's
 * (an HTTP request whose Host is that name), on proxy tunnels and captured connections alike
 * (doc/design.md §4). Ports 443 and 80 carry TLS and HTTP without saying so. */
enum netrule_carries { NC_ANY, NC_TLS, NC_HTTP };

/* One --allow-domain / --deny-domain entry. */
struct netrule {
	enum netrule_kind kind;
	char *host;      /* normalized: lowercase A-labels, no trailing dot; for NR_WILDCARD the
			  * suffix without "*." ; for IPs the canonical inet_ntop text */
	uint8_t addr[16];/* NR_IPV4 (4 bytes) / NR_IPV6 (16 bytes) */
	int port;        /* 1..65535, or 0: the default ports (80 and 443) */
	enum netrule_carries carries; /* "/tls", "/http" after the port, or NC_ANY */
	char *spec;      /* as the user wrote it, for messages and the store */
};

/* One --map-host NAME=ADDR entry (as curl's --resolve). */
struct netmap {
	char *host;      /* normalized name */
	int family;      /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	char *spec;
};

struct inspect; /* core/plan/httprules.h */

struct netrules {
	struct netrule *allow; size_t n_allow;
	struct netrule *deny;  size_t n_deny;
	struct netmap *map;    size_t n_map;
	/* what is inspected (doc/design.md §4d), owned by the caller, or NULL: nothing */
	const struct inspect *inspect;
};

/* Lowercase, IDNA (UTS #46 non-transitional, to A-labels), strip one trailing dot, strip [ ]
 * around an IPv6 literal and print IPs canonically. -1 with e filled on a name that is not a
 * valid host (empty, too long, a label over 63, characters outside LDH after IDNA). */
int net_host_normalize(const char *in, char **out, struct err *e) WUR;

/* Parse "example.com", "*.example.com", "example.com:8443", "1.2.3.4", "[::1]:443", "::1", each
 * with "/tls" or "/http" after an explicit port (what that port carries). e names the entry and
 * what is wrong ("*.com" and a bare "*" are refused). */
int netrule_parse(const char *spec, struct netrule *out, struct err *e) WUR;
/* The same for a deny entry: "/tls" and "/http" are refused (a deny entry refuses every byte). */
int netrule_parse_deny(const char *spec, struct netrule *out, struct err *e) WUR;
void netrule_free(struct netrule *r);
/* Whether rule r's host (a name, a wildcard's subdomains, an IP's text) is this normalized
 * host; the port is not looked at. */
bool netrule_host_matches(const struct netrule *r, const char *host);
/* "NAME=ADDR" with ADDR an IPv4 or IPv6 literal (brackets allowed). */
int netmap_parse(const char *spec, struct netmap *out, struct err *e) WUR;
void netmap_free(struct netmap *m);

/* A wildcard allow entry lets the jail look up any name under its domain, and the host's
 * resolver asks that domain's name servers: a jail can send them data in the names it asks
 * (doc/design.md §4). The note doctor and --dry-run give, naming the wildcards among `allow`
 * ("*.example.com: any name under example.com is looked up …"); NULL when there is none. */
char *net_wildcard_note(const struct strv *allow);
/* Whether an allow entry as written is a valid wildcard ("*.example.com", "*.example.com:80"). */
bool net_spec_is_wildcard(const char *spec);

/* Build from the policy's lists (strings as given on the command line). A mapped name is
 * allowed (at its mapped address) even when no --allow-domain names it. */
int netrules_build(const struct strv *allow, const struct strv *deny, const struct strv *map,
		   struct netrules *out, struct err *e) WUR;
void netrules_free(struct netrules *r);

enum net_verdict {
	NV_ALLOW,        /* an allow rule or a mapping matched, and the port */
	NV_DENY_LISTED,  /* a deny rule matched (deny wins over allow) */
	NV_NOT_ALLOWED,  /* no allow rule matched the name */
	NV_BAD_PORT,     /* a rule matched the name but not this port */
};
struct net_decision {
	enum net_verdict v;
	const struct netrule *rule;   /* the rule that decided (allow or deny), or NULL */
	const struct netmap *mapped;  /* the mapping of this name, or NULL */
};

/* Check a normalized host (name or IP text) and port: deny list, then allow list and
 * mappings, then the port. No DNS. Port 0 asks about the name alone (the DNS stub): allowed
 * when an allow rule or a mapping names it at any port and no port-less deny rule does. */
enum net_verdict netrules_check(const struct netrules *r, const char *host, uint16_t port,
				struct net_decision *d);

/* What port carries for host (normalized) by the allow entries that name that port of it
 * explicitly: NC_TLS when one says /tls, else NC_HTTP when one says /http, else NC_ANY (the
 * strictest wins, whichever entry decided the connection). */
enum netrule_carries netrules_carries(const struct netrules *r, const char *host, uint16_t port);

enum netaddr_class {
	NA_PUBLIC, NA_LOOPBACK, NA_PRIVATE, NA_LINKLOCAL, NA_METADATA, NA_UNSPECIFIED,
	NA_MULTICAST, NA_RESERVED,
};
enum netaddr_class netaddr_classify(int family, const uint8_t *addr);
const char *netaddr_class_name(enum netaddr_class c);
/* Is addr this host's own loopback (127.0.0.0/8, ::1, an IPv4-mapped 127.x)? Unlike
 * netaddr_classify, an IPv4 loopback inside NAT64 or 6to4 is not: such a packet leaves the
 * host. What the proxy asks of a socket's peer (doc/design.md §7, the proxy's buffers). */
bool netaddr_on_loopback(int family, const uint8_t *addr);

/* After resolution: may the proxy connect to this address for the decision d? Public
 * addresses yes; any other class only when d's rule is exactly that IP literal or the name
 * is mapped to exactly that address. IPv4-mapped IPv6 addresses are judged as IPv4. */
bool netrules_addr_ok(const struct netrules *r, const struct net_decision *d, int family,
		      const uint8_t *addr);

/* One line (no newline) saying why host:port was refused and the exact flag that would
 * allow it, e.g. "evil.example:443 is not on the allow list (add --allow-domain
 * evil.example)". Allocated. */
char *net_deny_reason(const struct net_decision *d, const char *host, uint16_t port);
/* The allow_domains entry for a normalized host and port: "host" for the default ports (80,
 * 443) and a name lookup (0), else "host:port" ("[v6]:port"). Allocated. What `log --suggest`
 * offers and what a --net ask question adds. */
char *net_suggest_entry(const char *host, int port);

/* What a client names inside a connection already approved for host:port (decision d): the
 * TLS server name of its ClientHello, or the Host of its first HTTP request (design §4). */
enum net_name_match {
	NM_SAME,       /* the approved name, after normalization (case, IDNA, a trailing dot) */
	NM_WILDCARD,   /* d's rule is a wildcard that matches it as it would for CONNECT, and the
			* rules allow it at port on their own (no deny rule refuses it) */
	NM_NONE_OK,    /* no name, and the approval was for an IP literal: there is none to send */
	NM_MISSING,    /* no name, for an approval by name */
	NM_MISMATCH,   /* another name */
	NM_INVALID,    /* not a valid host name */
};
/* name: as the client sent it, or NULL for none. *norm (may be NULL): its normalized form,
 * allocated, or NULL when there is none. */
enum net_name_match netrules_name_check(const struct netrules *r, const struct net_decision *d,
					const char *host, uint16_t port, const char *name,
					char **norm);
static inline bool net_name_ok(enum net_name_match m)
{
	return m == NM_SAME || m == NM_WILDCARD || m == NM_NONE_OK;
}
/* The one-line reason for a refusal by netrules_name_check, naming both names: "TLS server
 * name evil.example does not match api.example.com:443, the name this connection was allowed
 * for". what: "TLS server name" or "HTTP Host"; name as sent (NULL: none). Allocated. */
char *net_name_reason(enum net_name_match m, const char *what, const char *host, uint16_t port,
		      const char *name);

/* The variables set inside a `--net allow` jail, NAME=VALUE, NULL-terminated: the proxy for
 * HTTP(S)/ALL (both cases), NO_PROXY, NODE_USE_ENV_PROXY, npm/pip/git/agent settings. The
 * inherited proxy variables are cleared first (net_proxy_env_clear). */
const char *const *net_proxy_env(void);
const char *const *net_proxy_env_clear(void);
