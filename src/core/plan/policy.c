#include "core/plan/policy.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/limits.h"
#include "core/plan/httprules.h"
#include "core/plan/jstr.h"
#include "core/plan/netask.h"
#include "core/plan/netrules.h"
#include "core/plan/publish.h"
#include "core/plan/suggest.h"
#include "util/cleanup.h"
#include "util/path.h"

int backend_parse(const char *s, enum backend_id *out)
{
	if (!strcmp(s, "local") || !strcmp(s, "bwrap"))
		*out = BACKEND_LOCAL;
	else if (!strcmp(s, "landlock"))
		*out = BACKEND_LANDLOCK;
	else if (!strcmp(s, "opensandbox"))
		*out = BACKEND_OPENSANDBOX;
	else if (!strcmp(s, "auto"))
		*out = BACKEND_AUTO;
	else
		return -1;
	return 0;
}

const char *backend_name(enum backend_id b)
{
	return b == BACKEND_OPENSANDBOX ? "opensandbox"
	       : b == BACKEND_LANDLOCK	? "landlock"
	       : b == BACKEND_AUTO	? "auto"
					: "local";
}

int cache_mode_parse(const char *s, enum cache_mode *out)
{
	if (!strcmp(s, "workspace"))
		*out = CACHE_WORKSPACE;
	else if (!strcmp(s, "shared"))
		*out = CACHE_SHARED;
	else
		return -1;
	return 0;
}

const char *cache_mode_name(enum cache_mode m)
{
	return m == CACHE_SHARED ? "shared" : "workspace";
}

int home_mode_parse(const char *s, enum home_mode *out)
{
	if (!strcmp(s, "tmp"))
		*out = HOME_TMP;
	else if (!strcmp(s, "persist"))
		*out = HOME_PERSIST;
	else
		return -1;
	return 0;
}

const char *home_mode_name(enum home_mode m)
{
	return m == HOME_PERSIST ? "persist" : "tmp";
}
#include "util/xalloc.h"

void policy_init(struct policy *p)
{
	memset(p, 0, sizeof *p);
	p->fs = FS_WORKSPACE_WRITE;
	p->net = NET_OFF;
}

void policy_free(struct policy *p)
{
	free(p->workspace);
	strv_free(&p->rw);
	strv_free(&p->ro);
	strv_free(&p->hide);
	strv_free(&p->dev);
	strv_free(&p->env);
	free(p->profile);
	free(p->backend_auto);
	strv_free(&p->agent_rw);
	strv_free(&p->protect);
	strv_free(&p->setenv);
	strv_free(&p->agent_copy);
	strv_free(&p->agent_hide);
	strv_free(&p->agent_ro);
	strv_free(&p->agent_private);
	strv_free(&p->agent_private_over);
	strv_free(&p->allow_domains);
	strv_free(&p->deny_domains);
	strv_free(&p->map_hosts);
	strv_free(&p->allow_http);
	secret_set_free(&p->secrets);
	strv_free(&p->publish);
	memset(p, 0, sizeof *p);
}

void run_request_free(struct run_request *r)
{
	policy_free(&r->pol);
	strv_free(&r->cmd);
	free(r->session_id);
	strv_free(&r->record_argv);
	free(r->agent_session_id);
}

const char *fs_mode_name(enum fs_mode m)
{
	switch (m) {
	case FS_READ_ONLY:
		return "read-only";
	case FS_WORKSPACE_WRITE:
		return "workspace-write";
	case FS_DANGER_FULL:
		return "danger-full-access";
	case FS_REVIEW:
		return "review";
	}
	return "?";
}

const char *net_mode_name(enum net_mode m)
{
	switch (m) {
	case NET_OFF:
		return "off";
	case NET_ON:
		return "on";
	case NET_ALLOW:
		return "allow";
	}
	return "?";
}

int fs_mode_parse(const char *s, enum fs_mode *out)
{
	if (!strcmp(s, "read-only") || !strcmp(s, "ro"))
		*out = FS_READ_ONLY;
	else if (!strcmp(s, "workspace-write") || !strcmp(s, "rw"))
		*out = FS_WORKSPACE_WRITE;
	else if (!strcmp(s, "danger-full-access") || !strcmp(s, "full"))
		*out = FS_DANGER_FULL;
	else if (!strcmp(s, "review"))
		*out = FS_REVIEW;
	else
		return -1;
	return 0;
}

int net_mode_parse_ask(const char *s, enum net_mode *out, bool *ask)
{
	if (!strcmp(s, "ask")) {
		*out = NET_ALLOW;
		*ask = true;
		return 0;
	}
	if (net_mode_parse(s, out) < 0)
		return -1;
	*ask = false;
	return 0;
}

int net_mode_parse(const char *s, enum net_mode *out)
{
	if (!strcmp(s, "off"))
		*out = NET_OFF;
	else if (!strcmp(s, "on"))
		*out = NET_ON;
	else if (!strcmp(s, "allow"))
		*out = NET_ALLOW;
	else
		return -1;
	return 0;
}

/* Variables that must never reach a jail, whatever the user asks: they change how the next
 * program loads or starts (LD_*, BASH_ENV, ENV, IFS) or hand the jail a door to the host
 * (agent sockets, the session bus, the display). */
bool env_name_forbidden(const char *name)
{
	static const char *const exact[] = {"BASH_ENV", "ENV", "IFS", "SSH_AUTH_SOCK",
					    "DBUS_SESSION_BUS_ADDRESS", "DISPLAY",
					    "WAYLAND_DISPLAY", "XAUTHORITY", "GPG_AGENT_INFO",
					    "AGENTJAIL_SESSION", NULL};
	if (!strncmp(name, "LD_", 3))
		return true;
	for (size_t i = 0; exact[i]; i++)
		if (!strcmp(name, exact[i]))
			return true;
	return false;
}

bool env_name_valid(const char *name, size_t n)
{
	if (n == 0 || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

#define usage_err(e, input, ...)                                       \
	(err_set((e), 0, (input), __VA_ARGS__),                        \
	 err_hint((e), "see `agentjail run --help`"), -1)

static void push_path(struct strv *v, const struct parse_ctx *ctx, const char *arg)
{
	char *exp = path_expand_home(ctx->home, arg);
	strv_push_take(v, path_normalize(ctx->cwd, exp));
	free(exp);
}

enum opt_id { OPT_DRY_RUN, OPT_ALLOW_PTRACE, OPT_FS, OPT_NET, OPT_WORKSPACE, OPT_RW, OPT_RO,
	      OPT_HIDE, OPT_DEV, OPT_ENV, OPT_AGENT_WRITABLE_INSTR, OPT_MEMORY, OPT_PIDS,
	      OPT_ALLOW_DOMAIN, OPT_DENY_DOMAIN, OPT_MAP_HOST, OPT_QUIET, OPT_ALLOW_HTTP,
	      OPT_SSH_AGENT, OPT_GPG_AGENT, OPT_HOME, OPT_PUBLISH, OPT_ASK_TIMEOUT };

static const struct {
	const char *name;
	enum opt_id id;
	bool value;
} run_opts[] = {{"--dry-run", OPT_DRY_RUN, false},
		{"--fs", OPT_FS, true},		 {"--net", OPT_NET, true},
		{"--workspace", OPT_WORKSPACE, true}, {"--rw", OPT_RW, true},
		{"--ro", OPT_RO, true},		 {"--hide", OPT_HIDE, true},
		{"--dev", OPT_DEV, true},		 {"--env", OPT_ENV, true},
		{"--agent-writable-instructions", OPT_AGENT_WRITABLE_INSTR, false},
		{"--memory", OPT_MEMORY, true},	 {"--pids", OPT_PIDS, true},
		/* --allow-domain first of the --allow-…: what "--allow" is taken to mean (suggest) */
		{"--allow-domain", OPT_ALLOW_DOMAIN, true}, {"--deny-domain", OPT_DENY_DOMAIN, true},
		{"--allow-ptrace", OPT_ALLOW_PTRACE, false},
		{"--map-host", OPT_MAP_HOST, true}, {"--quiet", OPT_QUIET, false},
		{"--allow-http", OPT_ALLOW_HTTP, true}, {"--ssh-agent", OPT_SSH_AGENT, false},
		{"--gpg-agent", OPT_GPG_AGENT, false}, {"--home", OPT_HOME, true},
		{"--publish", OPT_PUBLISH, true}, {"--ask-timeout", OPT_ASK_TIMEOUT, true}};

int policy_opt_arity(const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
	for (size_t k = 0; k < sizeof run_opts / sizeof *run_opts; k++) {
		if (strlen(run_opts[k].name) != n || strncmp(run_opts[k].name, arg, n) != 0)
			continue;
		if (eq && !run_opts[k].value)
			return -1;
		return run_opts[k].value && !eq ? 1 : 0;
	}
	return -1;
}

const char *policy_opt_closest(const char *arg, const char *const *more)
{
	enum { N_RUN = sizeof run_opts / sizeof *run_opts };
	const char *names[N_RUN + 16 + 1];
	size_t n = 0;
	for (size_t k = 0; k < N_RUN; k++)
		names[n++] = run_opts[k].name;
	for (size_t k = 0; more && more[k] && k < 16; k++)
		names[n++] = more[k];
	names[n] = NULL;
	const char *eq = strchr(arg, '=');
	_cleanup_free_ char *name = eq ? xstrndup(arg, (size_t)(eq - arg)) : xstrdup(arg);
	return closest_word(name, names);
}

/* --memory / AGENTJAIL_MEMORY, --pids / AGENTJAIL_PIDS: `from` names the source. */
static int parse_memory(const char *v, const char *from, uint64_t *out, struct err *e)
{
	uint64_t m;
	if (limits_parse_size(v, &m) < 0)
		return usage_err(e, v, "%s needs a size such as 512M, 4G or a number of bytes, or "
				       "unlimited",
				 from);
	if (m < LIMITS_MIN_MEM)
		return usage_err(e, v, "%s is below the least a jail can start with (32M)", from);
	*out = m;
	return 0;
}

static int parse_pids(const char *v, const char *from, uint64_t *out, struct err *e)
{
	uint64_t n;
	if (limits_parse_count(v, &n) < 0)
		return usage_err(e, v, "%s needs a number of processes (e.g. 4096) or unlimited",
				 from);
	if (n < LIMITS_MIN_PIDS)
		return usage_err(e, v, "%s is below the least a jail can start with (8)", from);
	*out = n;
	return 0;
}

/* --allow-domain / --deny-domain / --map-host: checked now, kept as given */
static int push_net_entry(struct strv *v, const char *flag, const char *spec, struct err *e)
{
	struct netrule r;
	struct netmap m;
	bool map = !strcmp(flag, "--map-host");
	int rc = map ? netmap_parse(spec, &m, e)
		 : !strcmp(flag, "--deny-domain") ? netrule_parse_deny(spec, &r, e)
						  : netrule_parse(spec, &r, e);
	if (rc < 0) {
		char what[sizeof e->what];
		snprintf(what, sizeof what, "%s", e->what);
		err_set(e, 0, spec, "%s: %s", flag, what);
		err_hint(e, map ? "NAME=ADDR, e.g. --map-host api.test=127.0.0.1"
				: "a host name (example.com), its subdomains (*.example.com), an "
				  "address (1.2.3.4, ::1), each with an optional :PORT (and, to "
				  "allow, /tls or /http after it: what the port carries)");
		return -1;
	}
	if (map)
		netmap_free(&m);
	else
		netrule_free(&r);
	strv_push(v, spec);
	return 0;
}

/* Apply one option with its value (NULL for flags). */
static int apply_opt(enum opt_id id, const char *v, const struct parse_ctx *ctx,
		     struct run_request *out, bool *net_given, bool *ssh_given, bool *publish_given,
		     struct err *e)
{
	struct policy *p = &out->pol;
	switch (id) {
	case OPT_DRY_RUN:
		out->dry_run = true;
		return 0;
	case OPT_QUIET:
		out->quiet = true;
		return 0;
	case OPT_ALLOW_PTRACE:
		p->allow_ptrace = true;
		return 0;
	case OPT_AGENT_WRITABLE_INSTR:
		p->agent_writable_instructions = true;
		return 0;
	case OPT_FS:
		if (fs_mode_parse(v, &p->fs) < 0)
			return usage_err(e, v, "unknown filesystem mode (%s)",
					 "read-only|ro, workspace-write|rw, review, danger-full-access|full");
		return 0;
	case OPT_HOME:
		if (home_mode_parse(v, &p->home) < 0)
			return usage_err(e, v, "unknown home mode (%s)",
					 "tmp: an empty home each run; persist: this workspace's own, "
					 "kept in agentjail's state");
		return 0;
	case OPT_NET:
		if (net_mode_parse_ask(v, &p->net, &p->ask) < 0)
			return usage_err(e, v, "unknown network mode (%s)", "off, on, allow, ask");
		*net_given = true;
		return 0;
	case OPT_ALLOW_DOMAIN:
		return push_net_entry(&p->allow_domains, "--allow-domain", v, e);
	case OPT_DENY_DOMAIN:
		return push_net_entry(&p->deny_domains, "--deny-domain", v, e);
	case OPT_MAP_HOST:
		return push_net_entry(&p->map_hosts, "--map-host", v, e);
	case OPT_ALLOW_HTTP: {
		struct http_rule r;
		if (http_rule_parse(v, &r, e) < 0) {
			err_hint(e, "METHOD HOST/PATH: --allow-http 'GET github.com/*', "
				    "--allow-http 'POST api.example.com/v1/messages*'");
			return -1;
		}
		http_rule_free(&r);
		if (!strv_contains(&p->allow_http, v))
			strv_push(&p->allow_http, v);
		return 0;
	}
	case OPT_SSH_AGENT:
		p->ssh_agent = true;
		*ssh_given = true;
		return 0;
	case OPT_GPG_AGENT:
		p->gpg_agent = true;
		return 0;
	case OPT_ASK_TIMEOUT: {
		char *end = NULL;
		long t = strtol(v, &end, 10);
		if (!*v || *end || t < 1 || t > NETASK_TIMEOUT_MAX)
			return usage_err(e, v, "--ask-timeout needs a number of seconds from 1 to %d",
					 NETASK_TIMEOUT_MAX);
		p->ask_timeout = (int)t;
		return 0;
	}
	case OPT_PUBLISH: {
		struct publish pub;
		if (publish_parse(v, &pub, e) < 0)
			return -1;
		if (!strv_contains(&p->publish, v))
			strv_push(&p->publish, v);
		*publish_given = true;
		return 0;
	}
	case OPT_WORKSPACE: {
		free(p->workspace);
		char *exp = path_expand_home(ctx->home, v);
		p->workspace = path_normalize(ctx->cwd, exp);
		free(exp);
		p->workspace_explicit = true;
		return 0;
	}
	case OPT_RW:
		push_path(&p->rw, ctx, v);
		return 0;
	case OPT_RO:
		push_path(&p->ro, ctx, v);
		return 0;
	case OPT_HIDE:
		push_path(&p->hide, ctx, v);
		return 0;
	case OPT_DEV:
		push_path(&p->dev, ctx, v);
		return 0;
	case OPT_ENV: {
		const char *eq = strchr(v, '=');
		if (!env_name_valid(v, eq ? (size_t)(eq - v) : strlen(v)))
			return usage_err(e, v, "--env needs NAME or NAME=VALUE (%s)",
					 "NAME: letters, digits, _");
		strv_push(&p->env, v);
		return 0;
	}
	case OPT_MEMORY:
		return parse_memory(v, "--memory", &p->memory, e);
	case OPT_PIDS:
		return parse_pids(v, "--pids", &p->pids, e);
	}
	return usage_err(e, "", "internal: unknown option id");
}

/* The configuration's values, below AGENTJAIL_* and the flags. */
static void policy_take_base(struct policy *p, const struct parse_ctx *ctx)
{
	const struct policy *b = ctx->base;
	if (ctx->base_fs)
		p->fs = b->fs;
	if (ctx->base_net)
		p->net = b->net;
	p->memory = b->memory;
	p->pids = b->pids;
	p->cache = b->cache;
	p->home = b->home;
	strv_copy(&p->rw, &b->rw);
	strv_copy(&p->ro, &b->ro);
	strv_copy(&p->hide, &b->hide);
	strv_copy(&p->dev, &b->dev);
	strv_copy(&p->env, &b->env);
	strv_copy(&p->allow_domains, &b->allow_domains);
	strv_copy(&p->deny_domains, &b->deny_domains);
	strv_copy(&p->map_hosts, &b->map_hosts);
	strv_copy(&p->allow_http, &b->allow_http);
	for (size_t i = 0; i < b->secrets.n; i++)
		secret_set_put(&p->secrets, &b->secrets.v[i]);
	p->ssh_agent = b->ssh_agent;
	p->gpg_agent = b->gpg_agent;
	strv_copy(&p->publish, &b->publish);
	p->ask = b->ask;
	p->ask_timeout = b->ask_timeout;
}

int run_parse_args(int argc, char **argv, const struct parse_ctx *ctx, struct run_request *out,
		   struct err *e)
{
	memset(out, 0, sizeof *out);
	policy_init(&out->pol);
	struct policy *p = &out->pol;
	if (ctx->base)
		policy_take_base(p, ctx);

	if (ctx->env_fs && *ctx->env_fs && fs_mode_parse(ctx->env_fs, &p->fs) < 0)
		return usage_err(e, ctx->env_fs,
				 "AGENTJAIL_FS has an unknown filesystem mode (%s)",
				 "read-only, workspace-write, review or danger-full-access");
	if (ctx->env_net && *ctx->env_net &&
	    net_mode_parse_ask(ctx->env_net, &p->net, &p->ask) < 0)
		return usage_err(e, ctx->env_net, "AGENTJAIL_NET has an unknown network mode (%s)",
				 "off, on, allow or ask");
	if (ctx->env_memory && *ctx->env_memory &&
	    parse_memory(ctx->env_memory, "AGENTJAIL_MEMORY", &p->memory, e) < 0)
		return -1;
	if (ctx->env_pids && *ctx->env_pids &&
	    parse_pids(ctx->env_pids, "AGENTJAIL_PIDS", &p->pids, e) < 0)
		return -1;
	bool env_net = ctx->env_net && *ctx->env_net;
	bool base_net = ctx->base && ctx->base_net;
	if (!env_net && !base_net)
		p->net = ctx->net_default; /* agents: allow; run: off */
	bool net_given = false; /* --net on the command line */
	bool ssh_given = false; /* --ssh-agent on the command line */
	bool publish_given = false; /* --publish on the command line */
	/* the configuration's lists do not imply --net allow: only flags do */
	size_t base_lists = p->allow_domains.n + p->deny_domains.n + p->map_hosts.n +
			    p->allow_http.n;

	int i = 0;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !strcmp(a, "-"))
			break; /* the command starts here */
		const char *eq = strchr(a, '=');
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		size_t k = 0;
		while (k < sizeof run_opts / sizeof *run_opts &&
		       !(strlen(run_opts[k].name) == n && !strncmp(run_opts[k].name, a, n)))
			k++;
		if (k == sizeof run_opts / sizeof *run_opts || (eq && !run_opts[k].value)) {
			const char *near = k == sizeof run_opts / sizeof *run_opts
						   ? policy_opt_closest(a, ctx->more_opts)
						   : NULL;
			if (!near)
				return usage_err(e, a, "unknown option");
			err_set(e, 0, a, "unknown option");
			err_hint(e, "did you mean %s? see `agentjail run --help`", near);
			return -1;
		}
		const char *v = NULL;
		if (run_opts[k].value) {
			if (eq)
				v = eq + 1;
			else if (i + 1 < argc)
				v = argv[++i];
			else
				return usage_err(e, a, "option %s needs a value", run_opts[k].name);
		}
		if (apply_opt(run_opts[k].id, v, ctx, out, &net_given, &ssh_given, &publish_given,
			      e) < 0)
			return -1;
	}
	for (; i < argc; i++)
		strv_push(&out->cmd, argv[i]);
	if (out->cmd.n == 0)
		return usage_err(e, "", "no command given: agentjail run [POLICY] [--] CMD "
					"[ARG...]");
	if (!p->workspace)
		p->workspace = path_normalize("/", ctx->cwd);
	bool lists = p->allow_domains.n + p->deny_domains.n + p->map_hosts.n + p->allow_http.n >
		     base_lists;
	if (lists && net_given && p->net != NET_ALLOW)
		return usage_err(e, net_mode_name(p->net),
				 "contradictory policy: --net %s with --allow-domain, --deny-domain, "
				 "--map-host or --allow-http (those are for --net allow)",
				 net_mode_name(p->net));
	if (lists)
		p->net = NET_ALLOW; /* --allow-domain alone means --net allow, whatever the default */
	/* no jail, nothing to enforce: danger-full-access means the host's network, unless the
	 * user asked for something else (then policy_validate refuses the contradiction) */
	else if (p->fs == FS_DANGER_FULL && !net_given && !env_net && !base_net)
		p->net = NET_ON;
	if (!lists && p->net != NET_ALLOW) { /* the configuration's lists serve --net allow only */
		strv_free(&p->allow_domains);
		strv_free(&p->deny_domains);
		strv_free(&p->map_hosts);
		strv_free(&p->allow_http);
		if (!ssh_given) /* the configuration's ssh_agent too; the flag is refused then */
			p->ssh_agent = false;
	}
	/* the configuration's published ports serve off and allow: under on the jail's servers
	 * listen on the host's loopback already (a --publish flag with on is refused) */
	if (!publish_given && p->net == NET_ON)
		strv_free(&p->publish);
	if (p->net != NET_ALLOW) /* asking is a way of allowing */
		p->ask = false;
	return 0;
}

static int check_env(const struct policy *p, struct err *e)
{
	for (size_t i = 0; i < p->env.n; i++) {
		const char *s = p->env.v[i];
		const char *eq = strchr(s, '=');
		char *name = eq ? xstrndup(s, (size_t)(eq - s)) : xstrdup(s);
		bool bad = env_name_forbidden(name);
		if (bad) {
			err_set(e, 0, name, "--env refuses this variable");
			err_hint(e, "it changes how programs load or opens a door to the host; "
				    "agentjail never passes it into a jail");
		}
		free(name);
		if (bad)
			return -1;
	}
	return 0;
}

static int check_overlap(const struct policy *p, struct err *e)
{
	for (size_t i = 0; i < p->rw.n; i++) {
		if (strv_contains(&p->ro, p->rw.v[i]) || strv_contains(&p->hide, p->rw.v[i])) {
			err_set(e, 0, p->rw.v[i], "contradictory policy: path is both --rw and "
						  "--ro/--hide");
			err_hint(e, "give each path one mode");
			return -1;
		}
		if (!strcmp(p->rw.v[i], "/")) {
			err_set(e, 0, "/", "--rw refuses the root directory");
			err_hint(e, "a jail never makes / writable; use danger-full-access instead");
			return -1;
		}
	}
	for (size_t i = 0; i < p->ro.n; i++) {
		if (strv_contains(&p->hide, p->ro.v[i])) {
			err_set(e, 0, p->ro.v[i], "contradictory policy: path is both --ro and "
						  "--hide");
			err_hint(e, "give each path one mode");
			return -1;
		}
	}
	for (size_t i = 0; i < p->hide.n; i++) {
		if (!strcmp(p->hide.v[i], "/")) {
			err_set(e, 0, "/", "--hide refuses the root directory");
			return -1;
		}
	}
	return 0;
}

/* The lists belong to --net allow, and every entry parses (a stored policy too). */
static int check_net(const struct policy *p, struct err *e)
{
	if (p->net != NET_ALLOW && (p->allow_domains.n || p->deny_domains.n || p->map_hosts.n)) {
		err_set(e, 0, net_mode_name(p->net),
			"contradictory policy: --net %s with --allow-domain, --deny-domain or "
			"--map-host",
			net_mode_name(p->net));
		err_hint(e, "those are for --net allow; drop them or the --net %s",
			 net_mode_name(p->net));
		return -1;
	}
	if (p->net != NET_ALLOW && p->allow_http.n) {
		err_set(e, 0, net_mode_name(p->net),
			"contradictory policy: --net %s with --allow-http", net_mode_name(p->net));
		err_hint(e, "request rules are for --net allow");
		return -1;
	}
	if (p->net != NET_ALLOW && p->ssh_agent) {
		err_set(e, 0, net_mode_name(p->net), "--ssh-agent needs --net allow");
		err_hint(e, "it signs only for the ssh hosts the jail may reach: --net allow "
			    "--allow-domain github.com:22");
		return -1;
	}
	struct netrules r;
	if (netrules_build(&p->allow_domains, &p->deny_domains, &p->map_hosts, &r, e) < 0)
		return -1;
	netrules_free(&r);
	struct inspect in;
	if (inspect_build(&p->allow_http, NULL, &in, e) < 0)
		return -1;
	inspect_free(&in);
	return 0;
}

void policy_secrets_activate(struct policy *p, const struct strv *host_env)
{
	struct secret_set act = {0};
	if (p->net == NET_ALLOW && p->fs != FS_DANGER_FULL)
		secrets_active(&p->secrets, &p->env, host_env, &act);
	secret_set_free(&p->secrets);
	p->secrets = act;
}

/* --publish: each entry parses, no host port twice; not with --net on. */
static int check_publish(const struct policy *p, struct err *e)
{
	if (!p->publish.n)
		return 0;
	if (p->net == NET_ON) {
		err_set(e, 0, p->publish.v[0],
			"contradictory policy: --net on with --publish: the jail shares the host's "
			"network, so a server in it listens on the host's loopback already");
		err_hint(e, "drop --publish, or keep the jail's own network with --net off or "
			    "--net allow");
		return -1;
	}
	struct publish *v = NULL;
	size_t n = 0;
	if (publish_list(&p->publish, &v, &n, e) < 0)
		return -1;
	free(v);
	return 0;
}

int policy_validate(const struct policy *p, const char *home, struct err *e)
{
	if (p->fs == FS_DANGER_FULL && p->net != NET_ON) {
		err_set(e, 0, net_mode_name(p->net),
			"danger-full-access runs without a jail and cannot enforce --net");
		err_hint(e, "use --net on with --fs danger-full-access, or keep a jail with "
			    "--fs workspace-write");
		return -1;
	}
	if (p->fs == FS_DANGER_FULL && p->home == HOME_PERSIST) {
		err_set(e, 0, "--home persist", "danger-full-access runs without a jail: its home is your "
					 "real one, never a persisted jail home");
		err_hint(e, "drop --home persist, or keep a jail with --fs workspace-write");
		return -1;
	}
	if (check_net(p, e) < 0 || check_publish(p, e) < 0)
		return -1;
	if (p->fs != FS_DANGER_FULL && !strcmp(p->workspace, "/")) {
		err_set(e, 0, "/", "the workspace cannot be /");
		err_hint(e, "a jail never binds the whole root (it would expose every host "
			    "socket); pick a project directory");
		return -1;
	}
	if (!p->workspace_explicit && p->fs != FS_DANGER_FULL) {
		bool refuse = !strcmp(p->workspace, "/") ||
			      (home && (path_is_under(home, p->workspace)));
		if (refuse) {
			err_set(e, 0, p->workspace,
				"refusing this directory as the workspace: it is / or your home "
				"or one of its ancestors");
			err_hint(e, "cd into a project directory, or pass --workspace %s if you "
				    "really mean it",
				 p->workspace);
			return -1;
		}
	}
	if (check_env(p, e) < 0)
		return -1;
	return check_overlap(p, e);
}

static json_t *strv_json(const struct strv *v)
{
	json_t *a = json_array();
	for (size_t i = 0; i < v->n; i++)
		json_array_append_new(a, jstr(v->v[i]));
	return a;
}

static json_t *limit_json(uint64_t v)
{
	return v == LIMIT_UNLIMITED ? json_string("unlimited") : json_integer((json_int_t)v);
}

/* A stored limit: absent (unset), "unlimited", or a positive integer. */
static int limit_from_json(json_t *o, const char *key, uint64_t *out, struct err *e)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (json_is_string(v) && !strcmp(json_string_value(v), "unlimited"))
		*out = LIMIT_UNLIMITED;
	else if (json_is_integer(v) && json_integer_value(v) > 0)
		*out = (uint64_t)json_integer_value(v);
	else
		return err_set(e, 0, key, "stored policy: %s is not a positive number or "
					  "\"unlimited\"",
			       key);
	return 0;
}

char *policy_to_json(const struct policy *p)
{
	json_t *env = json_array();
	for (size_t i = 0; i < p->env.n; i++) {
		const char *eq = strchr(p->env.v[i], '=');
		if (eq) {
			char *red = xasprintf("%.*s=<redacted>", (int)(eq - p->env.v[i]),
					      p->env.v[i]);
			json_array_append_new(env, jstr(red));
			free(red);
		} else {
			json_array_append_new(env, jstr(p->env.v[i]));
		}
	}
	json_t *o = json_pack("{s:i, s:s, s:s, s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:b}",
			      "version", POLICY_VERSION, "fs", fs_mode_name(p->fs), "net",
			      net_mode_name(p->net), "workspace", jstr(p->workspace ? p->workspace : ""),
			      "workspace_explicit", p->workspace_explicit, "rw", strv_json(&p->rw),
			      "ro", strv_json(&p->ro), "hide", strv_json(&p->hide), "dev",
			      strv_json(&p->dev), "env", env, "allow_ptrace", p->allow_ptrace);
	if (!o)
		abort();
	/* the backend, when not the default bwrap jail (`resume` runs the same way again) */
	if (p->backend == BACKEND_LANDLOCK)
		json_object_set_new(o, "backend", jstr("landlock"));
	if (p->backend_auto) /* chosen by `auto`: why (resume says it, never chooses again) */
		json_object_set_new(o, "backend_auto", jstr(p->backend_auto));
	/* limits: bytes / tasks, or "unlimited"; absent while unset (the default applies) */
	if (p->memory != LIMIT_UNSET)
		json_object_set_new(o, "memory", limit_json(p->memory));
	if (p->memory_default)
		json_object_set_new(o, "memory_default", json_true());
	if (p->pids != LIMIT_UNSET)
		json_object_set_new(o, "pids", limit_json(p->pids));
	/* absent: each workspace's own caches (sessions stored before `cache` existed too) */
	if (p->cache == CACHE_SHARED)
		json_object_set_new(o, "cache", jstr("shared"));
	/* absent: a tmpfs home (sessions stored before `home` existed too) */
	if (p->home == HOME_PERSIST)
		json_object_set_new(o, "home", jstr("persist"));
	/* --net allow's lists (sessfmt counts allow_domains) */
	if (p->net == NET_ALLOW || p->allow_domains.n)
		json_object_set_new(o, "allow_domains", strv_json(&p->allow_domains));
	if (p->deny_domains.n)
		json_object_set_new(o, "deny_domains", strv_json(&p->deny_domains));
	if (p->map_hosts.n)
		json_object_set_new(o, "map_hosts", strv_json(&p->map_hosts));
	/* doc/design.md §4d: definitions only, never a value (there is none here) */
	if (p->allow_http.n)
		json_object_set_new(o, "allow_http", strv_json(&p->allow_http));
	if (p->secrets.n)
		json_object_set_new(o, "secrets", secrets_to_json(&p->secrets));
	if (p->ssh_agent)
		json_object_set_new(o, "ssh_agent", json_true());
	if (p->gpg_agent)
		json_object_set_new(o, "gpg_agent", json_true());
	if (p->publish.n)
		json_object_set_new(o, "publish", strv_json(&p->publish));
	if (p->ask)
		json_object_set_new(o, "ask", json_true());
	if (p->ask_timeout)
		json_object_set_new(o, "ask_timeout", json_integer(p->ask_timeout));
	if (p->profile) {
		json_object_set_new(o, "profile", jstr(p->profile));
		json_object_set_new(o, "agent_rw", strv_json(&p->agent_rw));
		json_object_set_new(o, "protect", strv_json(&p->protect));
		json_object_set_new(o, "setenv", strv_json(&p->setenv));
		json_object_set_new(o, "agent_hide", strv_json(&p->agent_hide));
		if (p->agent_ro.n)
			json_object_set_new(o, "agent_ro", strv_json(&p->agent_ro));
		if (p->agent_private.n)
			json_object_set_new(o, "agent_private", strv_json(&p->agent_private));
		if (p->agent_private_over.n)
			json_object_set_new(o, "agent_private_over",
					    strv_json(&p->agent_private_over));
		json_object_set_new(o, "agent_writable_instructions",
				    json_boolean(p->agent_writable_instructions));
	}
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!s)
		abort();
	return s;
}

static int json_strv(json_t *o, const char *key, struct strv *out, struct err *e)
{
	json_t *a = json_object_get(o, key);
	if (!a)
		return 0; /* absent: empty (e.g. a run without a profile) */
	if (!json_is_array(a))
		return err_set(e, 0, key, "stored policy: %s is not a list", key);
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		char *str = jstr_get(v);
		if (!str)
			return err_set(e, 0, key, "stored policy: %s holds a non-string", key);
		strv_push_take(out, str);
	}
	return 0;
}

int policy_from_json(const char *text, struct policy *out, struct err *e)
{
	policy_init(out);
	json_error_t je;
	json_t *o = json_loads(text, 0, &je);
	if (!o || !json_is_object(o)) {
		json_decref(o);
		return err_set(e, 0, "policy", "stored policy is not valid JSON (%s)", je.text);
	}
	int rc = -1;
	json_t *ver = json_object_get(o, "version");
	const char *fs = json_string_value(json_object_get(o, "fs"));
	const char *net = json_string_value(json_object_get(o, "net"));
	_cleanup_free_ char *ws = jstr_get(json_object_get(o, "workspace"));
	const char *prof = json_string_value(json_object_get(o, "profile"));
	if (!json_is_integer(ver) || json_integer_value(ver) > POLICY_VERSION ||
	    json_integer_value(ver) < 1) {
		err_set(e, 0, "policy", "stored policy has version %lld; this agentjail reads up to "
					"%d",
			json_is_integer(ver) ? (long long)json_integer_value(ver) : -1LL,
			POLICY_VERSION);
		err_hint(e, "upgrade agentjail to resume this session");
		goto out;
	}
	if (!fs || fs_mode_parse(fs, &out->fs) < 0 || !net || net_mode_parse(net, &out->net) < 0 ||
	    !ws || ws[0] != '/') {
		err_set(e, 0, "policy", "stored policy lacks a valid fs, net or workspace");
		goto out;
	}
	out->workspace = xstrdup(ws);
	out->workspace_explicit = json_is_true(json_object_get(o, "workspace_explicit"));
	out->allow_ptrace = json_is_true(json_object_get(o, "allow_ptrace"));
	if (json_string_value(json_object_get(o, "backend")) &&
	    !strcmp(json_string_value(json_object_get(o, "backend")), "landlock"))
		out->backend = BACKEND_LANDLOCK;
	if (json_string_value(json_object_get(o, "backend_auto")))
		out->backend_auto = xstrdup(json_string_value(json_object_get(o, "backend_auto")));
	out->memory_default = json_is_true(json_object_get(o, "memory_default"));
	out->ask = json_is_true(json_object_get(o, "ask"));
	if (json_is_integer(json_object_get(o, "ask_timeout")) &&
	    json_integer_value(json_object_get(o, "ask_timeout")) >= 1 &&
	    json_integer_value(json_object_get(o, "ask_timeout")) <= NETASK_TIMEOUT_MAX)
		out->ask_timeout = (int)json_integer_value(json_object_get(o, "ask_timeout"));
	if (json_string_value(json_object_get(o, "cache")) &&
	    cache_mode_parse(json_string_value(json_object_get(o, "cache")), &out->cache) < 0) {
		err_set(e, 0, "policy", "stored policy has an unknown cache mode `%s`",
			json_string_value(json_object_get(o, "cache")));
		goto out;
	}
	if (json_string_value(json_object_get(o, "home")) &&
	    home_mode_parse(json_string_value(json_object_get(o, "home")), &out->home) < 0) {
		err_set(e, 0, "policy", "stored policy has an unknown home mode `%s`",
			json_string_value(json_object_get(o, "home")));
		err_hint(e, "upgrade agentjail to resume this session");
		goto out;
	}
	out->agent_writable_instructions =
		json_is_true(json_object_get(o, "agent_writable_instructions"));
	out->ssh_agent = json_is_true(json_object_get(o, "ssh_agent"));
	out->gpg_agent = json_is_true(json_object_get(o, "gpg_agent"));
	if (secrets_from_json(json_object_get(o, "secrets"), &out->secrets, e) < 0)
		goto out;
	out->profile = prof ? xstrdup(prof) : NULL;
	if (json_strv(o, "rw", &out->rw, e) < 0 || json_strv(o, "ro", &out->ro, e) < 0 ||
	    json_strv(o, "hide", &out->hide, e) < 0 || json_strv(o, "dev", &out->dev, e) < 0 ||
	    json_strv(o, "env", &out->env, e) < 0 || json_strv(o, "agent_rw", &out->agent_rw, e) < 0 ||
	    json_strv(o, "protect", &out->protect, e) < 0 ||
	    json_strv(o, "setenv", &out->setenv, e) < 0 ||
	    json_strv(o, "agent_hide", &out->agent_hide, e) < 0 ||
	    json_strv(o, "agent_ro", &out->agent_ro, e) < 0 ||
	    json_strv(o, "agent_private", &out->agent_private, e) < 0 ||
	    json_strv(o, "agent_private_over", &out->agent_private_over, e) < 0 ||
	    json_strv(o, "allow_domains", &out->allow_domains, e) < 0 ||
	    json_strv(o, "deny_domains", &out->deny_domains, e) < 0 ||
	    json_strv(o, "map_hosts", &out->map_hosts, e) < 0 ||
	    json_strv(o, "allow_http", &out->allow_http, e) < 0 ||
	    json_strv(o, "publish", &out->publish, e) < 0 ||
	    limit_from_json(o, "memory", &out->memory, e) < 0 ||
	    limit_from_json(o, "pids", &out->pids, e) < 0)
		goto out;
	rc = 0;
out:
	json_decref(o);
	if (rc < 0)
		policy_free(out);
	return rc;
}
