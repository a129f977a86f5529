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

#include "core/config/osb_settings.h"
#include "core/plan/policy.h"
#include "util/err.h"
#include "util/strv.h"

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
