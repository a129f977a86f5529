/* policy: what a jail may see and do. Pure: parsing, validation, JSON. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "core/plan/secrets.h"
#include "util/err.h"
#include "util/strv.h"

#define POLICY_VERSION 1

/* FS_REVIEW: the workspace is an overlay whose upper layer, in the state directory, takes
 * every write; the real workspace is written only by `agentjail apply` (doc/design.md §3c). */
enum fs_mode { FS_READ_ONLY, FS_WORKSPACE_WRITE, FS_DANGER_FULL, FS_REVIEW };
enum net_mode { NET_OFF, NET_ON, NET_ALLOW };
/* Where the command runs (--backend): the bwrap jail, a remote sandbox (osb18's), or Landlock
 * and seccomp without namespaces (doc/design.md §4c). */
enum backend_id { BACKEND_LOCAL, BACKEND_OPENSANDBOX, BACKEND_LANDLOCK, BACKEND_AUTO };
/* "local" (also "bwrap"), "landlock", "opensandbox", "auto" (the bwrap jail where it can be
 * built, else the Landlock backend: a choice made before the run, core/backend/backend.h;
 * never stored in a policy): 0, or -1 for anything else. */
int backend_parse(const char *s, enum backend_id *out);
const char *backend_name(enum backend_id b);
/* Whose package caches a jail writes (doc/design.md §3 step 5): its workspace's own (the
 * default), or one set shared by every workspace (`cache = "shared"`, the user's choice). */
enum cache_mode { CACHE_WORKSPACE, CACHE_SHARED };
/* "workspace", "shared": 0, or -1 for anything else. */
int cache_mode_parse(const char *s, enum cache_mode *out);
const char *cache_mode_name(enum cache_mode m);
/* What the jail's $HOME is (doc/design.md §3 step 5): an empty tmpfs for each run (the
 * default), or the workspace's persisted home in the state directory (`--home persist`), so
 * what tools the profile does not know keep in $HOME survives to the next jail of the same
 * workspace; never the real home. */
enum home_mode { HOME_TMP, HOME_PERSIST };
/* "tmp", "persist": 0, or -1 for anything else. */
int home_mode_parse(const char *s, enum home_mode *out);
const char *home_mode_name(enum home_mode m);

struct policy {
	enum backend_id backend;
	/* why `auto` chose backend (the start line's words), stored with the session; NULL when
	 * the backend was not chosen by auto */
	char *backend_auto;
	enum fs_mode fs;
	enum net_mode net;
	char *workspace;          /* absolute, normalized (canonical once resolved) */
	bool workspace_explicit;  /* given with --workspace */
	struct strv rw;           /* extra writable paths, absolute */
	struct strv ro;           /* extra read-only paths, absolute */
	struct strv hide;         /* masked paths, absolute */
	struct strv dev;          /* device nodes, absolute */
	struct strv env;          /* NAME or NAME=VALUE */
	bool allow_ptrace;
	/* --net allow (core/plan/netrules.h): the entries as given, checked when parsed */
	struct strv allow_domains; /* --allow-domain, plus an agent profile's domains */
	struct strv deny_domains;  /* --deny-domain */
	struct strv map_hosts;     /* --map-host NAME=ADDR */
	/* secrets, request rules, agents (doc/design.md §4d); for --net allow except gpg_agent */
	struct strv allow_http;    /* --allow-http 'METHOD HOST/PATH' */
	struct secret_set secrets; /* the configuration's definitions while parsing; the ones the
				    * run uses once policy_secrets_activate ran (stored) */
	bool ssh_agent;            /* --ssh-agent: a filtered ssh agent inside */
	bool gpg_agent;            /* --gpg-agent: gpg-agent's extra socket and the public keyring */
	/* --publish [HOSTPORT:]PORT (core/plan/publish.h): the jail's loopback ports reachable on
	 * the host's 127.0.0.1; for --net off and allow (under on the jail is on the host's) */
	struct strv publish;
	/* --net ask (core/plan/netask.h): with --net allow, what the rules refuse waits for the
	 * person's answer, for ask_timeout seconds (0: NETASK_TIMEOUT_S) */
	bool ask;
	int ask_timeout;
	uint64_t memory;          /* --memory bytes; LIMIT_UNSET (default) or LIMIT_UNLIMITED */
	bool memory_default;      /* memory is the host-derived default, not asked for: only a
				   * cgroup scope enforces it (as RLIMIT_DATA it would break
				   * sanitizer builds, whose shadow is a huge writable mapping) */
	uint64_t pids;            /* --pids tasks; the same (core/plan/limits.h) */
	enum cache_mode cache;    /* the configuration's `cache` (user and system files only) */
	enum home_mode home;      /* --home, `home` of [policy] or [agent.NAME] */
	/* from an agent profile */
	char *profile;            /* the profile's name, NULL for `run` */
	struct strv agent_rw;     /* its credential/config paths, absolute, bound writable */
	struct strv protect;      /* inside those, read-only (settings that run host commands) */
	struct strv setenv;       /* NAME=VALUE it needs set (not secret) */
	struct strv agent_hide;   /* inside agent_rw, masked (IDE auth tokens) */
	struct strv agent_ro;     /* its config files shown read-only (~/.aider.conf.yml); unlike
				   * --ro, one that is missing is skipped, never an error */
	struct strv agent_private; /* its directories that are the workspace's own in the jail
				    * (profile.private_dirs), absolute */
	struct strv agent_private_over; /* the same, showing the host's entries read-only inside
					 * (profile.private_over) */
	bool agent_writable_instructions; /* --agent-writable-instructions: the agent's
					   * instruction files (CLAUDE.md, commands/, …) writable */
	struct strv agent_copy;   /* pairs: a path of agent_rw, then the private copy bound there
				   * instead (one run's state, not stored) */
};

/* What `agentjail run` was asked to do. */
struct run_request {
	struct policy pol;
	struct strv cmd;          /* the command and its arguments */
	bool dry_run;
	bool quiet;               /* --quiet: no start and end lines (src/cmd/runlines.c) */
	char *session_id;         /* chosen before the jail is built (agents), or NULL */
	/* for the session store */
	struct strv record_argv;  /* the command as the user gave it (agents: name + args), when
				   * it differs from cmd */
	char *agent_session_id;   /* the id the agent was told to use (claude --session-id) */
	bool resume;              /* a rung of `agentjail resume`: an attempt of session_id */
	int attempt_kind;         /* enum attempt_kind of that rung */
	bool interrupted;         /* set by the run: agentjail itself got SIGTERM/SIGHUP/SIGINT */
	/* the bwrap jail is being built once more, after the host replaced or removed a file it
	 * masks while bwrap mounted it (BACKEND_AGAIN): a second such failure is reported */
	bool host_retried;
};

/* The context the parser needs (plain values, from the host). */
struct parse_ctx {
	const char *cwd;
	const char *home;
	const char *env_fs;       /* AGENTJAIL_FS or NULL */
	const char *env_net;      /* AGENTJAIL_NET or NULL */
	const char *env_memory;   /* AGENTJAIL_MEMORY or NULL */
	const char *env_pids;     /* AGENTJAIL_PIDS or NULL */
	enum net_mode net_default; /* without --net or AGENTJAIL_NET: NET_OFF for `run`,
				    * NET_ALLOW for agents (their profile's domains) */
	/* the configuration's values (core/config/config.h: config_base_policy), below
	 * AGENTJAIL_* and the flags; NULL: none */
	const struct policy *base;
	bool base_fs, base_net;   /* whether the configuration sets fs / net */
	/* the command's own options besides the policy's (--backend, --json), for the
	 * suggestion after a mistyped one; NULL-terminated, or NULL */
	const char *const *more_opts;
};

void policy_init(struct policy *p);
void policy_free(struct policy *p);
void run_request_free(struct run_request *r);

const char *fs_mode_name(enum fs_mode m);
const char *net_mode_name(enum net_mode m);
int fs_mode_parse(const char *s, enum fs_mode *out);   /* 0 or -1 */
int net_mode_parse(const char *s, enum net_mode *out); /* 0 or -1 */
/* net_mode_parse, and "ask": allow with *ask set. 0 or -1 */
int net_mode_parse_ask(const char *s, enum net_mode *out, bool *ask);

/* Parse `run`'s arguments (argv[0] is the first argument after "run").
 * On error fills e (usage errors) and returns -1: the caller exits 2. */
int run_parse_args(int argc, char **argv, const struct parse_ctx *ctx, struct run_request *out,
		   struct err *e) WUR;

/* How a policy option takes its value: 1 from the next argument, 0 a flag or "--opt=value",
 * -1 not a policy option. */
int policy_opt_arity(const char *arg);
/* The policy option (or one of more, NULL-terminated, may be NULL) nearest to a mistyped arg
 * ("--nett", "--allow-domian=x"), or NULL when none is a likely typo (plan/suggest.h). */
const char *policy_opt_closest(const char *arg, const char *const *more);

/* The secrets the run uses (doc/design.md §4d): under --net allow, of p->secrets (the
 * configuration's definitions, or a stored policy's) and the built-ins, those secrets_active
 * keeps for p->env and the host's environment `host_env`; none under another mode. */
void policy_secrets_activate(struct policy *p, const struct strv *host_env);

/* Checks that need no syscalls: contradictions, refused workspaces, forbidden variables. */
int policy_validate(const struct policy *p, const char *home, struct err *e) WUR;

/* Whether name[0, n) is a variable name: letters, digits and _, not starting with a digit. */
bool env_name_valid(const char *name, size_t n);
/* Whether a variable name may be passed with --env (never LD_*, BASH_ENV, …). */
bool env_name_forbidden(const char *name);

/* A versioned JSON document of the policy (values of --env NAME=VALUE redacted). */
char *policy_to_json(const struct policy *p);
/* Read such a document back (a stored session's policy); a redacted --env value comes back as
 * "NAME=<redacted>". -1 with e filled on anything malformed or from a newer version. */
int policy_from_json(const char *text, struct policy *out, struct err *e) WUR;
