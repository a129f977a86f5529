/* The configuration in the command layer (doc/design.md §8): loading it for run and the agents,
 * `agentjail config [--json] [--path]`, `agentjail trust [DIR] | --list`, `agentjail untrust
 * [DIR]`. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/config/config_load.h"
#include "core/host/hostfacts_probe.h"
#include "core/config/trust.h"
#include "core/plan/bindpath.h"
#include "core/plan/profile.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/termtext.h"
#include "util/xalloc.h"

/* "FILE:LINE:COL: what (hint)": the position first, as compilers print it, then the common
 * wording of err_format (a hint with parentheses of its own follows a ";", never nested). */
static void config_err(const struct err *e)
{
	if (e->errnum || !strchr(e->path, ':')) {
		cmd_print_err(e);
		return;
	}
	struct err rest = *e;
	rest.path[0] = '\0';
	char buf[ERR_FMT_MAX];
	err_format(&rest, buf, sizeof buf);
	cmd_warn("%s: %s", e->path, buf);
}

/* rw and ro of [policy] (and [agent.NAME]) follow --rw/--ro: a path that does not exist is an
 * error, here at the FILE:LINE that gave it (doc/agentjail.toml.5.scd); so is one of rw, ro or
 * hide that a symlink in the workspace leads out of it, and an rw or ro path that is (or leads
 * to) a place no jail is given (core/plan/bindpath.h). 0 or EXIT_USAGE. */
static int check_config_binds(const struct config *c, const char *agent, const char *cwd,
			      const char *home, const char *workspace)
{
	const struct cfg_pol *pols[2] = {&c->policy, NULL};
	for (size_t i = 0; agent && i < c->n_agents; i++)
		if (!strcmp(c->agents[i].name, agent))
			pols[1] = &c->agents[i].pol;
	struct hostfacts hf;
	hostfacts_init(&hf);
	struct err e = {0};
	int rc = hostfacts_for_paths(&hf, &e) < 0 ? EXIT_USAGE : 0;
	if (rc)
		config_err(&e);
	static const enum cfg_key keys[] = {CK_RW, CK_RO, CK_HIDE};
	for (size_t p = 0; !rc && p < 2 && pols[p]; p++)
		for (size_t k = 0; !rc && k < 3; k++) {
			const struct cfg_list *l = &pols[p]->l[keys[k] - CFG_NSCALAR];
			for (size_t i = 0; !rc && i < l->v.n; i++) {
				_cleanup_free_ char *x = path_expand_home(home, l->v.v[i]);
				_cleanup_free_ char *abs = path_normalize(cwd, x);
				struct stat sb;
				if (keys[k] != CK_HIDE && stat(abs, &sb) < 0 && errno == ENOENT) {
					err_set(&e, 0, l->origin.v[i], "%s path does not exist: %s",
						cfg_key_name(keys[k]), abs);
					err_hint(&e, "create it, or remove it from the file");
					rc = EXIT_USAGE;
				} else {
					_cleanup_free_ char *real = NULL;
					if (bindpath_resolve(&hf, cfg_key_name(keys[k]),
							     keys[k] != CK_HIDE, abs, workspace,
							     &real, &e) < 0) {
						snprintf(e.path, sizeof e.path, "%s",
							 l->origin.v[i]);
						rc = EXIT_USAGE;
					}
				}
				if (rc)
					config_err(&e);
			}
		}
	hostfacts_free(&hf);
	return rc;
}

static int load(struct config *c, struct config_loaded *r, const char *workspace,
		enum net_mode net_default)
{
	struct config_env env;
	config_env_from_process(&env, workspace, net_default);
	struct err e = {0};
	config_init(c);
	if (config_load(c, &env, r, &e) < 0) {
		config_err(&e);
		return EXIT_USAGE;
	}
	return 0;
}

static void say_widening(const struct config_loaded *r)
{
	cmd_warn("%s would widen the sandbox, and this project is not trusted:", r->project);
	for (size_t i = 0; i < r->widening.n; i++)
		cmd_warn("  %s", r->widening.v[i]);
	_cleanup_free_ char *dir = path_dirname(r->project);
	cmd_warn("read that file; if you accept it: agentjail trust %s", dir);
}

/* The workspace a policy's arguments name (--workspace), else cwd. */
static char *workspace_of(int argc, char **argv, const char *cwd, const char *home)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--") || a[0] != '-')
			break;
		const char *v = NULL;
		if (!strncmp(a, "--workspace=", 12))
			v = a + 12;
		else if (!strcmp(a, "--workspace") && i + 1 < argc)
			v = argv[i + 1];
		if (v) {
			_cleanup_free_ char *x = path_expand_home(home, v);
			return path_normalize(cwd, x);
		}
		if (policy_opt_arity(a) == 1)
			i++;
	}
	return xstrdup(cwd);
}

int cmd_config_ctx(struct cmd_config *cc, int argc, char **argv, const char *agent,
		   struct parse_ctx *ctx)
{
	memset(cc, 0, sizeof *cc);
	policy_init(&cc->base);
	const char *home = ctx->home && ctx->home[0] == '/' ? ctx->home : "/";
	_cleanup_free_ char *ws = workspace_of(argc, argv, ctx->cwd, home);
	int rc = load(&cc->cfg, &cc->loaded, ws, ctx->net_default);
	if (rc)
		return rc;
	if (cc->loaded.widening.n) {
		say_widening(&cc->loaded);
		return EXIT_USAGE;
	}
	struct err e = {0};
	if (config_base_policy(&cc->cfg, agent, ctx->cwd, home, &cc->base, &ctx->base_fs,
			       &ctx->base_net, &e) < 0) {
		config_err(&e);
		return EXIT_USAGE;
	}
	ctx->base = &cc->base;
	/* bwrap and state_dir: every later reader takes them from these variables */
	if (cc->cfg.bwrap.v && !getenv("AGENTJAIL_BWRAP")) {
		_cleanup_free_ char *b = path_expand_home(home, cc->cfg.bwrap.v);
		if (setenv("AGENTJAIL_BWRAP", b, 1) < 0)
			return EXIT_USAGE;
	}
	if (cc->cfg.state_dir.v && !getenv("AGENTJAIL_STATE_DIR") &&
	    setenv("AGENTJAIL_STATE_DIR", cc->loaded.state_dir, 1) < 0)
		return EXIT_USAGE;
	/* after the state dir is known: no rw or ro entry may lead into it */
	return check_config_binds(&cc->cfg, agent, ctx->cwd, home, ws);
}

void cmd_config_free(struct cmd_config *cc)
{
	config_free(&cc->cfg);
	config_loaded_free(&cc->loaded);
	policy_free(&cc->base);
}

/* The user profiles of the system and user files, registered for the process's lifetime. */
int cmd_config_profiles(void)
{
	static struct config c;
	static struct config_loaded r;
	static bool done;
	if (done)
		return 0;
	done = true;
	int rc = load(&c, &r, NULL, NET_OFF);
	if (rc)
		return rc;
	profile_set_user(c.profiles, c.n_profiles);
	return 0;
}

static const char config_usage[] =
	"usage: agentjail config [--json] [--path]\n"
	"  the effective configuration of the current directory and where each value comes\n"
	"  from (FILE:LINE, env NAME, default); --path: the files considered, lowest first\n"
	"  layers: /etc/agentjail/config.toml, ~/.config/agentjail/config.toml, the workspace's\n"
	"  .agentjail.toml (narrowing only, unless `agentjail trust`), AGENTJAIL_*, flags\n"
	"example: agentjail config --path\n";

int cmd_config(int argc, char **argv)
{
	bool json = false, paths = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(config_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--path"))
			paths = true;
		else {
			static const char *const known[] = {"--json", "--path", "--help", NULL};
			return cmd_unknown("config", "argument", argv[i], known);
		}
	}
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!cwd) {
		cmd_warn("cannot read the current directory: %s", strerror(errno));
		return EXIT_USAGE;
	}
	struct config c;
	struct config_loaded r;
	int rc = load(&c, &r, cwd, NET_OFF);
	if (rc) {
		config_free(&c);
		config_loaded_free(&r);
		return rc;
	}
	if (paths) {
		for (size_t i = 0; i < r.considered.n; i++)
			printf("%s%s\n", r.considered.v[i],
			       strv_contains(&c.files, r.considered.v[i]) ? "" : " (absent)");
	} else {
		config_apply_env(&c, getenv("AGENTJAIL_FS"), getenv("AGENTJAIL_NET"),
				 getenv("AGENTJAIL_MEMORY"), getenv("AGENTJAIL_PIDS"),
				 getenv("AGENTJAIL_BWRAP"), getenv("AGENTJAIL_STATE_DIR"));
		if (!c.state_dir.v) {
			c.state_dir.v = xstrdup(r.state_dir);
			c.state_dir.origin = xstrdup("default");
		}
		_cleanup_free_ char *out = config_render(&c, json);
		cmd_put_text(stdout, out); /* a project's file is the repository's: its values too */
		_cleanup_free_ char *proj = fmt_clean(r.project);
		if (!json && r.project)
			printf("# project %s: %s\n", proj,
			       r.project_trusted ? "trusted" : "not trusted (narrowing only)");
	}
	if (r.widening.n) {
		say_widening(&r);
		rc = EXIT_USAGE;
	}
	config_free(&c);
	config_loaded_free(&r);
	return rc;
}

static const char trust_usage[] =
	"usage: agentjail trust [DIR]     trust DIR's .agentjail.toml as it is now (default: .)\n"
	"       agentjail trust --list    the trusted project files\n"
	"       agentjail untrust [DIR]   forget DIR's\n"
	"  an untrusted .agentjail.toml may only narrow the sandbox; a trusted one may widen it\n"
	"  (rw, ro, env, net, allow_domains, hosts, …) until its content changes\n"
	"example: agentjail trust ~/src/project; agentjail untrust ~/src/project\n";

static int trust_list_cmd(const char *state)
{
	_cleanup_strv_ struct strv lines = STRV_INIT;
	struct err e = {0};
	if (trust_list(state, &lines, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < lines.n; i++) {
		const char *path = lines.v[i] + 65;
		_cleanup_free_ char *shown = fmt_clean(path);
		_cleanup_free_ char *dir = path_dirname(path);
		_cleanup_free_ char *canon = NULL;
		char hex[65];
		struct err pe = {0};
		const char *state_s = config_project_id(dir, &canon, hex, &pe) < 0 ? "unreadable"
				      : strncmp(hex, lines.v[i], 64)		? "changed since: not trusted"
										: "trusted";
		printf("%s\t%.12s\t%s\n", shown, lines.v[i], state_s);
	}
	return 0;
}

static int trust_cmd(int argc, char **argv, bool add)
{
	const char *dir_arg = NULL;
	bool list = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(trust_usage, stdout);
			return 0;
		}
		if (add && !strcmp(argv[i], "--list"))
			list = true;
		else if (argv[i][0] != '-' && !dir_arg)
			dir_arg = argv[i];
		else {
			cmd_warn("%s: unexpected argument %s", add ? "trust" : "untrust", argv[i]);
			fputs(trust_usage, stderr);
			return EXIT_USAGE;
		}
	}
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!cwd) {
		cmd_warn("cannot read the current directory: %s", strerror(errno));
		return EXIT_USAGE;
	}
	_cleanup_free_ char *dir = path_normalize(cwd, dir_arg ? dir_arg : ".");
	struct config c;
	struct config_loaded r;
	/* add: the project is parsed and checked, and exactly the bytes read are trusted */
	int rc = load(&c, &r, add && !list ? dir : NULL, NET_OFF);
	struct err e = {0};
	if (rc) {
		/* nothing to trust, or the user's own files are broken: said */
	} else if (list) {
		rc = trust_list_cmd(r.state_dir);
	} else if (add && !r.project) {
		cmd_warn("trust: %s has no .agentjail.toml", dir);
		rc = EXIT_USAGE;
	} else if (add) {
		if (trust_add(r.state_dir, r.project, r.hash, &e) < 0) {
			cmd_print_err(&e);
			rc = EXIT_USAGE;
		} else {
			_cleanup_free_ char *proj = fmt_clean(r.project);
			printf("trusted %s (sha256 %.12s…)\n", proj, r.hash);
			for (size_t i = 0; i < r.widening.n; i++) {
				_cleanup_free_ char *w = fmt_clean(r.widening.v[i]);
				printf("  now accepted: %s\n", w);
			}
		}
	} else {
		char real[PATH_MAX];
		_cleanup_free_ char *p = path_join(realpath(dir, real) ? real : dir,
						   ".agentjail.toml");
		int got = trust_remove(r.state_dir, p, &e);
		if (got < 0) {
			cmd_print_err(&e);
			rc = EXIT_USAGE;
		} else {
			printf("%s %s\n", got ? "untrusted" : "was not trusted:", p);
		}
	}
	config_free(&c);
	config_loaded_free(&r);
	return rc;
}

int cmd_trust(int argc, char **argv)
{
	return trust_cmd(argc, argv, true);
}

int cmd_untrust(int argc, char **argv)
{
	return trust_cmd(argc, argv, false);
}
