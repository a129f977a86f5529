/* doctor: the configuration files (doc/design.md §8), read exactly as `run` reads them. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/diag/doctor.h"
#include "core/config/config_load.h"
#include "core/plan/netrules.h"
#include "core/plan/profile.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Each entry of one allow list into all, and where each wildcard among them was set. */
static void gather(struct strv *all, struct strv *where, const struct strv *v,
		   const struct strv *origin, const char *label)
{
	for (size_t i = 0; i < v->n; i++) {
		strv_push(all, v->v[i]);
		if (!net_spec_is_wildcard(v->v[i]))
			continue;
		if (origin && i < origin->n)
			strv_push(where, origin->v[i]);
		else
			strv_push(where, label);
	}
}

/* A wildcard among the allow lists the configuration gives ([policy], [agent.NAME], a
 * [profile.NAME]'s domains): names under it reach the host's resolver (doc/design.md §4). */
static void check_wildcards(struct doctor_report *r, const struct config *c)
{
	struct strv all = STRV_INIT, where = STRV_INIT;
	const int k = CK_ALLOW_DOMAINS - CFG_NSCALAR;
	gather(&all, &where, &c->policy.l[k].v, &c->policy.l[k].origin, "[policy]");
	for (size_t i = 0; i < c->n_agents; i++)
		gather(&all, &where, &c->agents[i].pol.l[k].v, &c->agents[i].pol.l[k].origin,
		       "[agent]");
	for (size_t i = 0; i < c->n_profiles; i++) {
		struct strv d = STRV_INIT;
		for (size_t j = 0; c->profiles[i]->domains && c->profiles[i]->domains[j]; j++)
			strv_push(&d, c->profiles[i]->domains[j]);
		_cleanup_free_ char *label = xasprintf("[profile.%s]", c->profiles[i]->name);
		gather(&all, &where, &d, NULL, label);
		strv_free(&d);
	}
	_cleanup_free_ char *note = net_wildcard_note(&all);
	if (note) {
		struct strbuf b = STRBUF_INIT;
		for (size_t i = 0; i < where.n && i < 4; i++)
			sb_addf(&b, "%s%s", i ? ", " : "", where.v[i]);
		if (where.n > 4)
			sb_add(&b, ", …");
		doctor_add(r, "dns_wildcard", DOCTOR_WARN,
			   "allow exact host names instead of *.DOMAIN where what the jail can read "
			   "matters more than the convenience",
			   "%s; set in %s", note, sb_str(&b));
		sb_free(&b);
	}
	strv_free(&all);
	strv_free(&where);
}

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
		check_wildcards(r, &c);
	}
	config_free(&c);
	config_loaded_free(&l);
}
