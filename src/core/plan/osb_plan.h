/* osb_plan: a policy and the [opensandbox] settings as an OpenSandbox service's requests
 * (doc/design.md §4b). Pure: plain values in, JSON text or a refusal out.
 *
 * The policy maps onto what the service can enforce: --net off is a deny-all egress policy, allow
 * a deny policy with one allow rule per domain (ports and IP literals cannot be expressed: such
 * an entry is refused), on an allow-all policy. The sandbox sees only the workspace, so --rw,
 * --ro, --hide and --dev outside it, danger-full-access, --map-host and --allow-ptrace are
 * refused with the reason; --fs read-only still runs, but nothing is synced back. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "core/plan/policy.h"
#include "util/err.h"
#include "util/strv.h"

/* The [opensandbox] table's keys (core/plan/config.c reads them with osb_key_check). */
enum osb_key { OK_URL, OK_API_KEY_ENV, OK_IMAGE, OK_ENTRYPOINT, OK_CPU, OK_MEMORY, OK_TIMEOUT,
	       OK_WORKDIR, OK_SYNC_MAX, OK__N };

struct osb_settings {
	char *url;          /* the lifecycle server, http(s)://HOST[:PORT][/PREFIX], no /v1 */
	char *api_key_env;  /* the NAME of the variable holding the key; never the key */
	char *image;        /* image.uri */
	struct strv entrypoint;
	char *cpu, *memory; /* resourceLimits, as the service writes them ("500m", "512Mi"):
			     * OSB_DEFAULT_CPU and OSB_DEFAULT_MEMORY unless configured */
	long timeout;       /* seconds, 60..OSB_TIMEOUT_MAX; 0 = "none" asked (sent as
			     * OSB_TIMEOUT_MAX: the spec requires a timeout) */
	char *workdir;      /* the workspace's path in the sandbox (default /workspace) */
	uint64_t sync_max;  /* bytes: a workspace larger than this is refused */
};

#define OSB_DEFAULT_IMAGE "debian:12"
#define OSB_DEFAULT_ENTRYPOINT "sleep infinity"
#define OSB_DEFAULT_KEY_ENV "OPEN_SANDBOX_API_KEY"
#define OSB_DEFAULT_WORKDIR "/workspace"
#define OSB_DEFAULT_TIMEOUT 3600
/* The lifecycle spec's CreateSandboxRequest requires `timeout` (integer, 60..86400) and
 * `resourceLimits`; its SDKs send these limits when the caller gives none. */
#define OSB_TIMEOUT_MAX 86400
#define OSB_DEFAULT_CPU "1"
#define OSB_DEFAULT_MEMORY "2Gi"
#define OSB_DEFAULT_SYNC_MAX (512ull << 20)

const char *osb_key_name(enum osb_key k);
const char *const *osb_key_names(void); /* NULL-terminated */
/* A value of key k as written in a config file: -1 with e (what and a suggestion) if invalid. */
int osb_key_check(enum osb_key k, const char *v, struct err *e) WUR;

/* Settings from the configured values (vals[k] NULL = not set: the default). -1 with e when
 * the url is missing or a value is invalid. */
int osb_settings_from(const char *const vals[OK__N], struct osb_settings *out, struct err *e) WUR;
void osb_settings_free(struct osb_settings *s);

/* Whether this policy can run on the service: -1 with e saying what and why otherwise. */
int osb_policy_check(const struct policy *p, struct err *e) WUR;
/* Whether changes come back (false for --fs read-only). */
bool osb_sync_back(const struct policy *p);

/* POST /v1/sandboxes's body: image, entrypoint, timeout, resourceLimits (always: the spec
 * requires both), metadata (the session id and workspace basename), networkPolicy. NULL with e
 * when the policy cannot be mapped. */
char *osb_create_body(const struct osb_settings *s, const struct policy *p, const char *session_id,
		      struct err *e);

/* What is asked instead of `timeout = 0` (malloc'd, one line), or NULL when a timeout is set. */
char *osb_timeout_note(const struct osb_settings *s);

/* An id the service or execd handed out (a sandbox's, a command's) that may go into a URL path
 * or query and a message as it is: 1..128 of A-Z a-z 0-9 . _ -, not "." or ".." (their ids are
 * UUIDs). */
bool osb_id_ok(const char *id);

/* The service URL with /v1 and a path appended: "http://h:8080" + "/sandboxes". */
char *osb_api_url(const struct osb_settings *s, const char *path);

/* A command that needs a terminal or stdin (a shell or REPL without a script, an editor, a
 * pager, an agent's interactive mode): the service has neither. */
bool osb_interactive(const struct strv *cmd);
