/* profile: what agentjail knows about each coding agent (pure: a table and the functions that
 * turn a profile and the host's environment into policy additions and an argv).
 *
 * Every flag here was checked against the real CLI's --help (see doc/agents.md). */
#pragma once
#include <stdbool.h>

#include "core/plan/jsonmerge.h"
#include "core/plan/policy.h"
#include "util/err.h"
#include "util/strv.h"

struct profile {
	const char *name;                 /* agentjail NAME */
	const char *title;                /* "Claude Code (Anthropic)" */
	const char *const *exe;           /* executable names, the first is the default */
	const char *install;              /* how to install it, for "not found" */
	const char *const *skip_flags;    /* put before the agent's arguments, only in a jail */
	const char *const *skip_after;    /* subcommands the flags belong to: they follow it
					   * (opencode run, kiro-cli chat) */
	const char *skip_default_sub;     /* no subcommand given: this one, then the flags */
	const char *const *no_skip_subs;  /* subcommands that refuse the flags: none added */
	const char *skip_note;            /* what the agent does about permissions without them */
	const char *const *rw;            /* "~/..." paths bound writable (dirs end in '/') */
	const char *home_env;             /* variable that moves rw[0] (e.g. CODEX_HOME), or NULL */
	const char *file_init;            /* content for a missing rw file, created before the run
					   * so what the agent writes there lasts; NULL: none */
	const char *const *protect;       /* "~/..." inside rw, read-only: they run host commands */
	const char *const *instructions;  /* "~/..." inside rw: what the next unjailed session
					   * follows (CLAUDE.md, commands/): read-only unless
					   * --agent-writable-instructions; a missing dir (ending
					   * '/') is made empty first, a missing file is watched */
	const char *const *hide;          /* "~/.../" dirs inside rw masked in the jail (IDE auth
					   * tokens); made empty first when missing */
	const char *const *private_dirs;  /* "~/.../" dirs where the agent keeps what it runs or
					   * loads later (downloaded programs, installed packages,
					   * git dirs it runs git in, shell snapshots it sources):
					   * in a jail the workspace's own directory in agentjail's
					   * state (as the package caches), never the host's */
	const char *const *private_over;  /* "~/.../" dirs holding the host's files the agent runs
					   * or follows and its own (codex removes and remakes
					   * skills/.system; opencode adds programs to
					   * ~/.cache/opencode/bin): private like private_dirs, with
					   * the host's entries shown read-only inside (not hidden
					   * ones nor a package install: the agent's own); one that
					   * is an instruction dir is the host's, writable, with
					   * --agent-writable-instructions */
	const char *private_copy;         /* "~/..." an rw file the jail gets a private copy of */
	const char *private_copy_moved;   /* its name inside the dir home_env names, when set
					   * (CLAUDE_CONFIG_DIR/.claude.json) */
	const struct jm_rules *copy_rules;/* what of that copy comes back to the host file */
	const char *const *ro;            /* "~/..." config files shown read-only */
	const char *const *env;           /* variables passed through; "PREFIX*" patterns */
	const char *const *setenv;        /* NAME=VALUE set in the jail */
	const char *const *domains;       /* what it needs to reach (for --net allow) */
	const char *session_flag;         /* start with a known id: FLAG UUID, or NULL */
	const char *const *resume_id;     /* resume a known id: argv with "{id}", or NULL */
	const char *const *resume_last;   /* resume the latest session: argv, or NULL */
	const char *const *subcommands;   /* first arguments that are not a session (no id flag) */
	const char *const *oneshot;       /* arguments that make a one-shot run (a prompt done
					   * and exit: claude -p, codex exec): a flag anywhere, a
					   * subcommand as the first word; resume never re-sends */
};

/* The profiles, NULL-terminated: the user's (profile_set_user) first, then the built-ins they
 * do not shadow. */
const struct profile *const *profile_all(void);
/* By profile name or by executable name (the shim's argv[0]); NULL when unknown. */
const struct profile *profile_find(const char *name);
const struct profile *profile_by_exe(const char *exe);

/* Add the profile's paths, variables and name to a policy, and under --net allow its domains
 * (before the user's --allow-domain entries). `env` is the host environment ("NAME=VALUE");
 * only variables that are set are passed (by name: values are read when the jail is built). */
void profile_apply(const struct profile *pr, const char *home, const struct strv *env,
		   struct policy *pol);

/* The profile's paths alone (agent_rw, protect, the instruction dirs unless
 * pol->agent_writable_instructions, agent_hide, agent_private, agent_private_over, agent_ro),
 * replacing what pol had: resume recomputes them for a stored session, so one stored before
 * the profile learned another place where the agent runs code from gets it. */
void profile_apply_paths(const struct profile *pr, const char *home, const struct strv *env,
			 struct policy *pol);

/* The profile's private-copy file for this home (moved with home_env like rw[0]), or NULL;
 * the caller frees. */
char *profile_private_copy_path(const struct profile *pr, const char *home, const struct strv *env);

/* The directories to make (empty, 0700) before a run so they can be bound read-only or masked:
 * the instruction dirs (unless writable_instructions) and the hidden token dirs. */
void profile_dirs_to_make(const struct profile *pr, const char *home, const struct strv *env,
			  bool writable_instructions, struct strv *out);

/* Whether the user's arguments already choose a session (--resume, --session-id, …) or a
 * subcommand, so agentjail must not add its own session id. */
bool profile_args_choose_session(const struct profile *pr, const struct strv *args);

/* The argument of args that makes the run a one-shot task (profile.oneshot), or NULL. */
const char *profile_oneshot_arg(const struct profile *pr, const struct strv *args);

/* The argv the jail runs: exe, then the skip-permission flags when `sandboxed` (where the agent
 * takes them: first, or after the subcommand they belong to, or not at all for a subcommand
 * that refuses them), then `session_flag ID` when given a session id and the arguments do not
 * choose one, then args. */
void profile_argv(const struct profile *pr, const char *exe, bool sandboxed, const char *session_id,
		  const struct strv *args, struct strv *out);

/* The resume argv for a stored session: exe, skip flags when sandboxed, then the resume form
 * (by id when the profile has one and `agent_id` is known, else the "latest" form). -1 when the
 * profile offers no resume. */
int profile_resume_argv(const struct profile *pr, const char *exe, bool sandboxed,
			const char *agent_id, struct strv *out);

/* The profile as JSON (for `profiles --json`); the caller frees. */
char *profile_to_json(const struct profile *pr);

/* ---- user profiles from the configuration ([profile.NAME], doc/agentjail.toml.5.scd) ---- */
struct toml_value;
/* Build a profile from a [profile.NAME] table. base is the built-in of that name (the table
 * extends or overrides it field by field) or NULL (a new profile: `command` required). file
 * names the configuration file for errors ("FILE:LINE:COL: …"). */
int profile_from_toml(const char *name, const struct toml_value *tbl, const char *file,
		      const struct profile *base, struct profile **out, struct err *e) WUR;
void profile_free_user(struct profile *p);
/* Make user profiles visible to profile_all/profile_find/profile_by_exe (a user profile
 * shadows a built-in of the same name; of two user profiles with one name, the later one). The
 * caller keeps them alive; NULL, 0 clears. */
void profile_set_user(struct profile *const *user, size_t n);
