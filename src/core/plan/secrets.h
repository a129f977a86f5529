/* secrets: keys that never enter the jail (doc/design.md §4d). A secret names the variable the
 * jail would have held, the hosts the key is for, the header that carries it, and where its value
 * comes from on the host (a variable of agentjail's own, or a command). Inside, the variable holds
 * a placeholder; agentjail-tls puts the value in its place on a request to one of those hosts
 * only. Definitions come from the user's or the system's configuration ([secret.NAME]) or are
 * built in (the agents' own keys). Pure: no value is read here (core/host/secretsrc.h does). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"
#include "util/strv.h"

#define SECRET_PLACEHOLDER_PREFIX "agentjail-placeholder-"
#define SECRET_VALUE_MAX 65536   /* bytes of a value (a command's output is cut there: refused) */
#define SECRET_COMMAND_SECONDS 60 /* a value's command must answer within this (a password
				   * manager may ask first) */

enum secret_src { SS_ENV, SS_COMMAND };

struct secret_def {
	char *name;           /* the variable inside the jail */
	struct strv hosts;    /* normalized names, "*.example.com" for a domain's subdomains */
	char *header;         /* the header whose value carries it, lowercase ("x-api-key") */
	enum secret_src src;
	char *env;            /* SS_ENV: agentjail's own variable holding the value */
	struct strv command;  /* SS_COMMAND: the argv run on the host (no shell) */
	char *origin;         /* "FILE:LINE", or "built-in" */
};

struct secret_set {
	struct secret_def *v;
	size_t n;
};

void secret_def_free(struct secret_def *d);
void secret_def_copy(struct secret_def *dst, const struct secret_def *src);
void secret_set_free(struct secret_set *s);
/* Add a copy of d; one of the same name is replaced. */
void secret_set_put(struct secret_set *s, const struct secret_def *d);
const struct secret_def *secret_set_find(const struct secret_set *s, const char *name);

/* The built-in definitions: ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY
 * (filled on first use; never freed). */
const struct secret_set *secret_builtins(void);

/* Check and fill a definition. hosts: as written (normalized here; "*.com" refused as for
 * --allow-domain); header: a header name (token characters; "Authorization" or "x-api-key");
 * env or command: exactly one may be given, neither means env = name. -1 with e naming what is
 * wrong (the caller adds FILE:LINE). */
int secret_def_make(const char *name, const struct strv *hosts, const char *header,
		    const char *env, const struct strv *command, const char *origin,
		    struct secret_def *out, struct err *e) WUR;

/* The placeholder the jail's variable holds: SECRET_PLACEHOLDER_PREFIX NAME (allocated). */
char *secret_placeholder(const char *name);

/* Whether the secret is for this normalized host (a name, or an IP's text). */
bool secret_for_host(const struct secret_def *d, const char *host);

/* The secrets a run uses (doc/design.md §4d "Active"): of `defined` (the configuration's, then
 * the built-ins for names it does not define), those whose NAME the policy passes by name (an
 * entry "NAME" of env, from a profile, the configuration or --env; never "NAME=VALUE": that
 * value is passed as asked), and, for a value from a variable, whose variable is set in the
 * host environment `env` ("NAME=VALUE" strings). A built-in whose agent the host's environment
 * points at another base URL (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL: a
 * gateway) is for that URL's host instead. Copies into out. */
void secrets_active(const struct secret_set *defined, const struct strv *pol_env,
		    const struct strv *host_env, struct secret_set *out);

/* A value a header can carry: 1..SECRET_VALUE_MAX bytes, no control byte (CR, LF, NUL, DEL …)
 * and no leading or trailing blank. -1 with e naming the secret (never a byte of the value). */
int secret_value_check(const char *name, const char *value, size_t len, struct err *e) WUR;

/* JSON for a stored policy: [{"name", "hosts", "header", "env"|"command"}] (no value: there is
 * none here). */
struct json_t; /* jansson's json_t: this header is also read where jansson is not (the init) */
struct json_t *secrets_to_json(const struct secret_set *s);
int secrets_from_json(const struct json_t *a, struct secret_set *out, struct err *e) WUR;

/* One line for --dry-run and doctor: "ANTHROPIC_API_KEY → api.anthropic.com in x-api-key,
 * value from $ANTHROPIC_API_KEY" (never a value). Allocated. */
char *secret_describe(const struct secret_def *d);
