/* httprules: request rules for inspected hosts (`--allow-http 'METHOD HOST/PATH'`, allow_http)
 * and the inspected names: the hosts a rule names or an active secret is for
 * (doc/design.md §4d). What the proxy decides before a tunnel is handed to agentjail-tls, and
 * what agentjail-tls checks on each request inside it. Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/plan/netrules.h"
#include "core/plan/secrets.h"
#include "util/err.h"
#include "util/strv.h"

struct http_rule {
	char *method;         /* "GET" …, or "*" for any */
	struct netrule host;  /* a name, "*.domain" or an IP; no port (every port) */
	char *path;           /* begins with '/'; '*' matches any run of bytes */
	char *spec;           /* as written */
};

/* "METHOD HOST/PATH": METHOD upper-case token letters or "*", HOST as --allow-domain without a
 * port, PATH from the first '/'. -1 with e naming what is wrong. */
int http_rule_parse(const char *spec, struct http_rule *out, struct err *e) WUR;
void http_rule_free(struct http_rule *r);

/* What a run inspects: its request rules and its active secrets (definitions only: the values
 * are agentjail-tls's alone), with each secret's placeholder. */
struct inspect {
	struct http_rule *rules;
	size_t n_rules;
	struct secret_set secrets;
	struct strv placeholders; /* placeholders.v[i] is secrets.v[i]'s */
};

int inspect_build(const struct strv *allow_http, const struct secret_set *secrets,
		  struct inspect *out, struct err *e) WUR;
void inspect_free(struct inspect *in);
/* Whether it inspects anything at all. */
bool inspect_any(const struct inspect *in);
/* Whether the normalized host is inspected: a rule names it, or an active secret is for it. */
bool inspect_host(const struct inspect *in, const char *host);

/* Why a request target cannot be matched against a path rule (a static reason), or NULL: it
 * must be origin-form ("/…"), without a "." or ".." segment, "%2e", "%2f", "%5c" (any case), a
 * backslash or a '#', so the path a rule matched is the path the server routes. */
const char *http_target_refusal(const char *target, size_t len);

/* A request to host (normalized) with method and target (origin-form; len bytes). 0 when no
 * rule names the host, or one of its rules matches (*rule, may be NULL, says which); -1 when
 * the host has rules and none matches, or the target is refused: *reason (allocated, one
 * printable line) says so and names the rule that would allow it. */
int inspect_request(const struct inspect *in, const char *method, const char *host,
		    const char *target, size_t len, const struct http_rule **rule, char **reason);

/* "METHOD HOST/PATH" of a request, for messages and events: the path cut at its query, cut
 * to at most max bytes, anything but printable ASCII (and the quote) as '?'. Allocated. */
char *http_request_label(const char *method, const char *host, const char *target, size_t len,
			 size_t max);

/* Whether a glob (only '*' is special: any run of bytes) matches s[0, n). */
bool http_glob_match(const char *glob, const char *s, size_t n);
