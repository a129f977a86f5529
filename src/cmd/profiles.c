/* agentjail profiles [NAME] [--json] */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/host/hostfacts_probe.h"
#include "core/plan/profile.h"
#include "core/plan/resolve.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

extern char **environ;

struct found {
	bool ok;
	struct resolved res;
	struct err e;
};

static void find(const struct profile *pr, const char *home, struct found *f)
{
	memset(f, 0, sizeof *f);
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	f->ok = cmd_find_agent(pr, home, cwd ? cwd : "/", &f->res, &f->e) == 0;
}

/* What the profile adds to a policy on this host (paths, variables set here). */
static void host_policy(const struct profile *pr, const char *home, struct policy *pol)
{
	policy_init(pol);
	struct strv env = STRV_INIT;
	strv_push_all(&env, environ);
	profile_apply(pr, home, &env, pol);
	strv_free(&env);
}

static void show_list(const char *label, const char *const *l)
{
	printf("  %-13s", label);
	if (!l || !l[0])
		printf(" (none)");
	for (size_t i = 0; l && l[i]; i++)
		printf("%s%s", i ? ", " : " ", l[i]);
	printf("\n");
}

static void show_one(const struct profile *pr, const char *home)
{
	struct found f;
	find(pr, home, &f);
	printf("%s — %s\n", pr->name, pr->title);
	if (f.ok) {
		printf("  %-13s %s", "executable", f.res.path);
		if (strcmp(f.res.path, f.res.real))
			printf(" → %s", f.res.real);
		if (f.res.interp)
			printf(" (run by %s)", f.res.interp);
		printf("\n");
		for (size_t i = 0; i < f.res.binds.n; i++)
			printf("  %-13s %s (read-only: the install)\n", i ? "" : "bound", f.res.binds.v[i]);
	} else {
		char buf[ERR_FMT_MAX];
		err_format(&f.e, buf, sizeof buf);
		printf("  %-13s not found: %s\n  %-13s %s\n", "executable", buf, "install", pr->install);
	}
	if (pr->skip_flags)
		show_list("skip flags", pr->skip_flags);
	else
		printf("  %-13s none: %s\n", "skip flags", pr->skip_note);
	struct policy pol;
	host_policy(pr, home, &pol);
	for (size_t i = 0; i < pol.agent_rw.n; i++) {
		struct stat st;
		printf("  %-13s %s%s\n", i ? "" : "writable", pol.agent_rw.v[i],
		       lstat(pol.agent_rw.v[i], &st) == 0 ? "" : " (absent now)");
	}
	for (size_t i = 0; i < pol.protect.n; i++)
		printf("  %-13s %s\n", i ? "" : "read-only", pol.protect.v[i]);
	/* what the agent runs later: the workspace's own (doc/agents.md) */
	for (size_t i = 0; i < pol.agent_private.n; i++)
		printf("  %-13s %s\n", i ? "" : "workspace's", pol.agent_private.v[i]);
	for (size_t i = 0; i < pol.agent_private_over.n; i++)
		printf("  %-13s %s (the host's entries read-only)\n",
		       i || pol.agent_private.n ? "" : "workspace's", pol.agent_private_over.v[i]);
	show_list("env patterns", pr->env);
	printf("  %-13s", "env passed");
	if (!pol.env.n)
		printf(" (none set here)");
	for (size_t i = 0; i < pol.env.n; i++)
		printf("%s%s", i ? ", " : " ", pol.env.v[i]);
	printf("  (values never shown)\n");
	show_list("env set", pr->setenv);
	show_list("domains", pr->domains);
	printf("  %-13s %s%s\n", "new session", pr->session_flag ? pr->session_flag : "(no id flag)",
	       pr->session_flag ? " <agentjail session id>" : "");
	printf("  %-13s", "resume");
	if (!pr->resume_id && !pr->resume_last)
		printf(" (none)");
	for (size_t i = 0; pr->resume_id && pr->resume_id[i]; i++)
		printf(" %s", pr->resume_id[i]);
	if (pr->resume_id && pr->resume_last)
		printf(";");
	if (pr->resume_last)
		printf(" latest:");
	for (size_t i = 0; pr->resume_last && pr->resume_last[i]; i++)
		printf(" %s", pr->resume_last[i]);
	printf("\n");
	policy_free(&pol);
	resolved_free(&f.res);
}

static json_t *one_json(const struct profile *pr, const char *home)
{
	_cleanup_free_ char *txt = profile_to_json(pr);
	json_t *o = json_loads(txt, 0, NULL);
	struct found f;
	find(pr, home, &f);
	json_t *inst = json_object();
	json_object_set_new(inst, "found", json_boolean(f.ok));
	if (f.ok) {
		json_object_set_new(inst, "path", json_string(f.res.path));
		json_object_set_new(inst, "real", json_string(f.res.real));
		json_object_set_new(inst, "interpreter",
				    f.res.interp ? json_string(f.res.interp) : json_null());
		json_t *b = json_array();
		for (size_t i = 0; i < f.res.binds.n; i++)
			json_array_append_new(b, json_string(f.res.binds.v[i]));
		json_object_set_new(inst, "binds", b);
	} else {
		char buf[ERR_FMT_MAX];
		err_format(&f.e, buf, sizeof buf);
		json_object_set_new(inst, "error", json_string(buf));
	}
	json_object_set_new(o, "installed", inst);
	struct policy pol;
	host_policy(pr, home, &pol);
	json_t *rw = json_array(), *pass = json_array();
	for (size_t i = 0; i < pol.agent_rw.n; i++)
		json_array_append_new(rw, json_string(pol.agent_rw.v[i]));
	for (size_t i = 0; i < pol.env.n; i++)
		json_array_append_new(pass, json_string(pol.env.v[i]));
	json_object_set_new(o, "rw_paths", rw);
	json_object_set_new(o, "env_passed", pass);
	policy_free(&pol);
	resolved_free(&f.res);
	return o;
}

int cmd_profiles(int argc, char **argv)
{
	int crc = cmd_config_profiles(); /* the user's [profile.NAME] tables are listed too */
	if (crc)
		return crc;
	bool json = false;
	const char *name = NULL;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: agentjail profiles [NAME] [--json]\n"
			       "  the agent profiles (or NAME's): flags, binds, variables, domains\n"
			       "  --json   one JSON document\n"
			       "example: agentjail profiles claude\n");
			return 0;
		} else if (argv[i][0] != '-' && !name) {
			name = argv[i];
		} else {
			static const char *const known[] = {"--json", "--help", NULL};
			return cmd_unknown("profiles", "argument", argv[i], known);
		}
	}
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		cmd_warn("profiles: $HOME is not set");
		return EXIT_USAGE;
	}
	const struct profile *const *all = profile_all();
	const struct profile *one = NULL;
	if (name && !(one = profile_find(name))) {
		cmd_warn("no profile named %s (agentjail profiles lists them)", name);
		return EXIT_USAGE;
	}
	if (json) {
		json_t *out = one ? one_json(one, home) : json_array();
		for (size_t i = 0; !one && all[i]; i++)
			json_array_append_new(out, one_json(all[i], home));
		char *s = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("%s\n", s);
		free(s);
		json_decref(out);
		return 0;
	}
	if (one) {
		show_one(one, home);
		return 0;
	}
	printf("%-9s %-26s %-8s %s\n", "PROFILE", "AGENT", "FOUND", "SKIP-PERMISSION FLAG");
	for (size_t i = 0; all[i]; i++) {
		struct found f;
		find(all[i], home, &f);
		printf("%-9s %-26s %-8s %s\n", all[i]->name, all[i]->title, f.ok ? "yes" : "no",
		       all[i]->skip_flags ? all[i]->skip_flags[0] : "(none)");
		resolved_free(&f.res);
	}
	printf("any other command: agentjail run [POLICY] -- CMD (the generic profile)\n"
	       "details: agentjail profiles NAME\n");
	return 0;
}
