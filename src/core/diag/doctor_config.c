/* doctor: the configuration files (doc/design.md §8), read exactly as `run` reads them. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/diag/doctor.h"
#include "core/host/config_load.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

void doctor_check_config(struct doctor_report *r)
{
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	struct config_env env;
	config_env_from_process(&env, cwd, NET_OFF);
	struct config c;
	struct config_loaded l;
	struct err e = {0};
	config_init(&c);
	if (config_load(&c, &env, &l, &e) < 0) {
		char buf[ERR_FMT_MAX];
		if (!e.errnum && strchr(e.path, ':'))
			snprintf(buf, sizeof buf, "%s: %s", e.path, e.what);
		else
			err_format(&e, buf, sizeof buf);
		doctor_add(r, "config", DOCTOR_FAIL,
			   e.hint[0] ? e.hint : "fix the file (`agentjail config` shows the error)",
			   "%s", buf);
	} else {
		struct strbuf b = STRBUF_INIT;
		for (size_t i = 0; i < l.considered.n; i++)
			sb_addf(&b, "%s%s%s", i ? ", " : "", l.considered.v[i],
				strv_contains(&c.files, l.considered.v[i]) ? " (read)" : " (none)");
		if (l.widening.n) {
			_cleanup_free_ char *dir = path_dirname(l.project);
			_cleanup_free_ char *fix = xasprintf("read %s; if you accept it: agentjail "
							     "trust %s",
							     l.project, dir);
			doctor_add(r, "config", DOCTOR_WARN, fix,
				   "%s would widen the sandbox (%zu key%s; the first: %s) and is "
				   "not trusted: run and the agents refuse it here",
				   l.project, l.widening.n, l.widening.n == 1 ? "" : "s",
				   l.widening.v[0]);
		} else {
			doctor_add(r, "config", DOCTOR_OK, NULL, "config files: %s%s", sb_str(&b),
				   l.project && l.project_trusted ? "; the project's is trusted"
								  : "");
		}
		sb_free(&b);
		doctor_check_opensandbox(r, &c);
	}
	config_free(&c);
	config_loaded_free(&l);
}
