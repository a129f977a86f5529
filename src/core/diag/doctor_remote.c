/* doctor: the configured OpenSandbox service (doc/design.md §4b): reachable, the key accepted.
 * Only when the configuration names one; the key is read from the variable it names and never
 * shown. The API has no "can this image be pulled" call: a bad image shows when a sandbox is
 * created, and the detail says so. */
#include <stdlib.h>
#include <string.h>

#include "core/diag/doctor.h"
#include "core/config/config.h"
#include "core/backend/remote/osb_plan.h"
#include "core/backend/remote/osb_client.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

void doctor_check_opensandbox(struct doctor_report *r, const struct config *c)
{
	bool chosen = c->backend.v && !strcmp(c->backend.v, "opensandbox");
	if (!chosen && !c->osb[OK_URL].v)
		return;
	enum doctor_status bad = chosen ? DOCTOR_FAIL : DOCTOR_WARN;
	const char *vals[OK__N];
	for (int k = 0; k < OK__N; k++)
		vals[k] = c->osb[k].v;
	struct osb_settings s;
	struct err e = {0};
	if (osb_settings_from(vals, &s, &e) < 0) {
		doctor_add(r, "opensandbox", bad, e.hint[0] ? e.hint : "fix [opensandbox]", "%s",
			   e.what);
		return;
	}
	const char *key = getenv(s.api_key_env);
	struct osb_client *cl = NULL;
	if (osb_client_new(&s, key, &cl, &e) < 0 || osb_check_service(cl, &e) < 0) {
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		_cleanup_free_ char *fix =
			strstr(e.what, " 401") ? xasprintf("put the service's API key in $%s (the "
							   "variable [opensandbox] api_key_env names)",
							   s.api_key_env)
					       : xstrdup("start the service or fix [opensandbox] url");
		doctor_add(r, "opensandbox", bad, fix, "the service at %s: %s", s.url, buf);
	} else {
		doctor_add(r, "opensandbox", key && *key ? DOCTOR_OK : DOCTOR_WARN,
			   key && *key ? NULL : "set the key's variable if the service wants one",
			   "the service at %s answers%s (image %s: checked when a sandbox is "
			   "created)",
			   s.url, key && *key ? " and accepts the key" : ", without a key", s.image);
	}
	osb_client_free(cl);
	osb_settings_free(&s);
}
