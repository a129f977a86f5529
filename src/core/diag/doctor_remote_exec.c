/* doctor's opensandbox check from agentjail (doc/design.md §4b, §7): agentjail is static and has
 * no libcurl, so the check runs in agentjail-remote (`agentjail-remote __doctor-opensandbox`,
 * with agentjail's environment: the key's variable) and its JSON report (doc/doctor-json.md) is
 * merged here. Only when the configuration names a service; a missing agentjail-remote is then
 * the check's failure, naming where it was looked for. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/diag/doctor.h"
#include "core/jail/initbin.h"
#include "core/config/config.h"
#include "core/backend/remote/osb_plan.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

extern char **environ;

/* the service's answer may take the client's own timeouts (connect, request) */
#define REMOTE_DOCTOR_TIMEOUT_MS 60000

static enum doctor_status status_of(const char *s)
{
	return !strcmp(s, "ok") ? DOCTOR_OK : !strcmp(s, "warn") ? DOCTOR_WARN : DOCTOR_FAIL;
}

void doctor_check_opensandbox(struct doctor_report *r, const struct config *c)
{
	bool chosen = c->backend.v && !strcmp(c->backend.v, "opensandbox");
	if (!chosen && !c->osb[OK_URL].v)
		return;
	enum doctor_status bad = chosen ? DOCTOR_FAIL : DOCTOR_WARN;
	struct err e = {0};
	_cleanup_free_ char *path = NULL;
	int fd = helperbin_open(&HELPER_REMOTE, &path, &e);
	if (fd < 0) {
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		doctor_add(r, "opensandbox", bad, e.hint[0] ? e.hint : NULL, "%s", buf);
		return;
	}
	(void)close(fd);
	char *argv[] = {(char *)"agentjail-remote", (char *)"__doctor-opensandbox", NULL};
	int ws;
	_cleanup_free_ char *out =
		doctor_capture(path, argv, environ, REMOTE_DOCTOR_TIMEOUT_MS, &ws);
	json_error_t je;
	json_t *doc = out ? json_loads(out, 0, &je) : NULL;
	json_t *checks = json_object_get(doc, "checks");
	size_t i;
	json_t *o;
	size_t added = 0;
	json_array_foreach(checks, i, o)
	{
		const char *id = json_string_value(json_object_get(o, "id"));
		const char *st = json_string_value(json_object_get(o, "status"));
		const char *detail = json_string_value(json_object_get(o, "detail"));
		if (!id || !st || !detail)
			continue;
		doctor_add(r, id, status_of(st), json_string_value(json_object_get(o, "fix")), "%s",
			   detail);
		added++;
	}
	json_decref(doc);
	if (!added) {
		_cleanup_free_ char *fix = xasprintf("run `%s __doctor-opensandbox` to see why", path);
		doctor_add(r, "opensandbox", bad, fix, "%s %s", path,
			   ws == -1 ? "did not start or answer in time"
				    : "gave no report (a broken install?)");
	}
}
