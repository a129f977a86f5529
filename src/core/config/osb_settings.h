/* osb_settings: the [opensandbox] table of the configuration (doc/design.md §4b, §8): its keys,
 * each value's check, and the settings a remote run uses, defaults filled in. Pure: plain values
 * in, settings or a refusal out. The requests built from them are core/backend/remote/osb_plan.h. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"
#include "util/strv.h"

/* The [opensandbox] table's keys (core/config/config.c reads them with osb_key_check). */
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
