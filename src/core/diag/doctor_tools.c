/* doctor: the tool managers a jail will show, and the size of the private package caches. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/diag/doctor.h"
#include "core/host/hostfacts_probe.h"
#include "core/plan/toolmgr.h"
#include "core/host/toolprep.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

extern char **environ;

void doctor_check_toolchains(struct doctor_report *r, const char *home, const char *state)
{
	struct hostfacts hf;
	hostfacts_init(&hf);
	hostfacts_use_host(&hf);
	hf.uid = getuid();
	hf.home = home ? xstrdup(home) : NULL;
	hf.state_dir = state ? xstrdup(state) : NULL;
	strv_push_all(&hf.env, environ);
	struct toolmgr_plan t;
	toolmgr_recognise(&hf, getenv("PATH"), &t);
	for (size_t i = 0; i + 1 < t.found.n; i += 2) {
		struct strbuf b = STRBUF_INIT;
		for (size_t k = 0; k + 1 < t.binds.n; k += 2)
			if (!strcmp(t.binds.v[k + 1], t.found.v[i]))
				sb_addf(&b, "%s%s", b.len ? ", " : "", t.binds.v[k]);
		_cleanup_free_ char *id = xasprintf("toolchain.%s", t.found.v[i]);
		doctor_add(r, id, DOCTOR_OK, NULL, "%s at %s: a jail sees %s read-only",
			   t.found.v[i], t.found.v[i + 1],
			   b.len ? sb_str(&b) : "it as a system directory (nothing bound)");
		sb_free(&b);
	}
	for (size_t i = 0; i < t.warnings.n; i++)
		doctor_add(r, "toolchain", DOCTOR_WARN,
			   "reinstall that manager, or take its directory off PATH", "%s",
			   t.warnings.v[i]);
	if (!t.found.n && !t.warnings.n)
		doctor_add(r, "toolchain", DOCTOR_OK, NULL,
			   "no tool manager (pyenv, rustup, nvm, …) behind PATH");
	toolmgr_plan_free(&t);
	hostfacts_free(&hf);

	uint64_t bytes = 0;
	struct err e = {0};
	if (!state) {
		doctor_add(r, "cache", DOCTOR_WARN, "set HOME", "no state directory: no private "
								"package caches");
	} else if (toolprep_cache_size(state, &bytes, &e) < 0) {
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		doctor_add(r, "cache", DOCTOR_WARN, "check the state directory's permissions", "%s",
			   buf);
	} else {
		doctor_add(r, "cache", DOCTOR_OK, NULL,
			   "private package caches in %s/cache: %.1f MiB, each workspace's own "
			   "unless cache = \"shared\", never the host's (`agentjail cache` lists "
			   "them by workspace)",
			   state, (double)bytes / (1024.0 * 1024.0));
	}
}
