/* Agent profiles: the table, flag injection only in a jail, session ids, resume forms, what a
 * profile adds to a policy, shim dispatch by argv[0] and the in-jail recursion guard. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plan/bwrap_argv.h"
#include "core/plan/netrules.h"
#include "core/plan/profile.h"
#include "core/host/shim.h"
#include "testutil.h"

static bool has(const char *const *l, const char *s)
{
	for (size_t i = 0; l && l[i]; i++)
		if (!strcmp(l[i], s))
			return true;
	return false;
}

static void table(void **state)
{
	(void)state;
	const struct profile *const *all = profile_all();
	static const char *const names[] = {"claude", "codex",	  "gemini", "kiro",
					    "pi",     "opencode", "aider",  NULL};
	size_t n = 0;
	while (all[n])
		n++;
	assert_int_equal(n, 7);
	for (size_t i = 0; names[i]; i++) {
		const struct profile *p = profile_find(names[i]);
		assert_non_null(p);
		assert_string_equal(p->name, names[i]);
		assert_non_null(p->exe[0]);
		assert_non_null(p->install);
		/* a skip flag, or a note saying why there is none */
		assert_true((p->skip_flags && p->skip_flags[0]) || p->skip_note);
		assert_true(p->rw && p->rw[0]);
		/* what is protected lies inside what is writable */
		for (size_t k = 0; p->protect && p->protect[k]; k++) {
			bool inside = false;
			for (size_t r = 0; p->rw[r]; r++)
				if (!strncmp(p->protect[k], p->rw[r], strlen(p->rw[r])))
					inside = true;
			if (!inside)
				fail_msg("%s: protected %s is in no rw path", p->name, p->protect[k]);
		}
		/* nothing of another agent's */
		for (size_t j = 0; all[j]; j++) {
			if (all[j] == p)
				continue;
			for (size_t r = 0; p->rw[r]; r++)
				for (size_t s = 0; all[j]->rw[s]; s++)
					if (!strcmp(p->rw[r], all[j]->rw[s]))
						fail_msg("%s and %s share %s", p->name, all[j]->name,
							 p->rw[r]);
		}
	}
	assert_true(has(profile_find("claude")->skip_flags, "--dangerously-skip-permissions"));
	assert_true(has(profile_find("codex")->skip_flags,
			"--dangerously-bypass-approvals-and-sandbox"));
	assert_true(has(profile_find("gemini")->skip_flags, "--yolo"));
	assert_true(has(profile_find("claude")->setenv, "IS_SANDBOX=1"));
	assert_true(has(profile_find("claude")->rw, "~/.claude/"));
	assert_true(has(profile_find("claude")->rw, "~/.claude.json"));
	assert_true(has(profile_find("codex")->rw, "~/.codex/"));
	assert_true(has(profile_find("gemini")->rw, "~/.gemini/"));
	/* by executable name too (kiro's is kiro-cli) */
	assert_ptr_equal(profile_find("kiro-cli"), profile_find("kiro"));
	assert_null(profile_find("bash"));
}

static char *joined(const struct strv *v)
{
	size_t len = 1;
	for (size_t i = 0; i < v->n; i++)
		len += strlen(v->v[i]) + 1;
	char *s = calloc(1, len);
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, v->v[i]);
	}
	return s;
}

static void argv_cases(void **state)
{
	(void)state;
	static const struct {
		const char *profile;
		bool sandboxed;
		const char *sid;
		const char *args[4];
		const char *want;
	} cases[] = {
		{"claude", true, "U1", {"-p", "hi"}, "/x/claude --dangerously-skip-permissions --session-id U1 -p hi"},
		{"claude", false, "U1", {"-p", "hi"}, "/x/claude --session-id U1 -p hi"},
		{"claude", true, NULL, {"-p", "hi"}, "/x/claude --dangerously-skip-permissions -p hi"},
		/* the user chose a session, or a subcommand: no id of ours */
		{"claude", true, "U1", {"--resume", "abc"}, "/x/claude --dangerously-skip-permissions --resume abc"},
		{"claude", true, "U1", {"--resume=abc"}, "/x/claude --dangerously-skip-permissions --resume=abc"},
		{"claude", true, "U1", {"-c"}, "/x/claude --dangerously-skip-permissions -c"},
		{"claude", true, "U1", {"mcp", "list"}, "/x/claude --dangerously-skip-permissions mcp list"},
		{"claude", true, "U1", {"--version"}, "/x/claude --version"},
		/* a word that is a subcommand name later on is a prompt, not a subcommand */
		{"claude", true, "U1", {"-p", "mcp"}, "/x/claude --dangerously-skip-permissions --session-id U1 -p mcp"},
		{"codex", true, "U1", {"exec", "hi"}, "/x/codex --dangerously-bypass-approvals-and-sandbox exec hi"},
		{"codex", false, "U1", {"exec", "hi"}, "/x/codex exec hi"},
		{"gemini", true, "U1", {"-p", "hi"}, "/x/gemini --yolo --skip-trust --session-id U1 -p hi"},
		/* before a subcommand gemini's flags turn it into a prompt */
		{"gemini", true, "U1", {"mcp", "list"}, "/x/gemini mcp list"},
		{"opencode", true, NULL, {"run", "hi"}, "/x/opencode run --auto hi"},
		{"opencode", true, NULL, {}, "/x/opencode --auto"},
		{"opencode", true, NULL, {"/some/project"}, "/x/opencode --auto /some/project"},
		{"opencode", true, NULL, {"session", "list"}, "/x/opencode session list"},
		{"kiro", true, NULL, {}, "/x/kiro-cli chat --trust-all-tools"},
		{"kiro", true, NULL, {"chat", "--no-interactive", "hi"}, "/x/kiro-cli chat --trust-all-tools --no-interactive hi"},
		{"kiro", true, NULL, {"--no-interactive", "hi"}, "/x/kiro-cli chat --trust-all-tools --no-interactive hi"},
		{"kiro", true, NULL, {"login"}, "/x/kiro-cli login"},
		{"kiro", true, NULL, {"--version"}, "/x/kiro-cli --version"},
		{"kiro", false, NULL, {}, "/x/kiro-cli"},
		{"pi", true, "U1", {"-p", "hi"}, "/x/pi -p hi"},
		{"aider", true, NULL, {"--message", "hi"}, "/x/aider --yes-always --message hi"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct strv args = STRV_INIT, out = STRV_INIT;
		for (size_t k = 0; cases[i].args[k]; k++)
			strv_push(&args, cases[i].args[k]);
		const struct profile *p = profile_find(cases[i].profile);
		char exe[32];
		snprintf(exe, sizeof exe, "/x/%s", p->exe[0]);
		profile_argv(p, exe, cases[i].sandboxed, cases[i].sid, &args, &out);
		char *got = joined(&out);
		if (strcmp(got, cases[i].want))
			fail_msg("case %zu: got `%s`, want `%s`", i, got, cases[i].want);
		free(got);
		strv_free(&args);
		strv_free(&out);
	}
}

/* A one-shot run (a prompt done and exit) is told apart from an interactive one, so resume's
 * fresh start never re-sends its prompt. */
static void oneshot(void **state)
{
	(void)state;
	static const struct {
		const char *profile;
		const char *args[4];
		const char *want; /* the argument found, or NULL */
	} cases[] = {
		{"claude", {"-p", "hello"}, "-p"},
		{"claude", {"--model", "x", "--print", "hi"}, "--print"},
		{"claude", {"--print=hi"}, "--print=hi"},
		{"claude", {}, NULL},
		{"claude", {"--model", "x"}, NULL},
		{"claude", {"--", "-p"}, NULL},
		{"codex", {"exec", "hi"}, "exec"},
		{"codex", {"e", "hi"}, "e"},
		{"codex", {"fix", "exec"}, NULL}, /* a word later on is a prompt */
		{"gemini", {"--prompt", "hi"}, "--prompt"},
		{"opencode", {"run", "hi"}, "run"},
		{"opencode", {"/some/project"}, NULL},
		{"aider", {"-m", "hi"}, NULL}, /* no one-shot form known: never matched */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct profile *pr = profile_find(cases[i].profile);
		assert_non_null(pr);
		struct strv args = STRV_INIT;
		for (size_t k = 0; k < 4 && cases[i].args[k]; k++)
			strv_push(&args, cases[i].args[k]);
		const char *got = profile_oneshot_arg(pr, &args);
		if (cases[i].want)
			assert_string_equal(got, cases[i].want);
		else
			assert_null(got);
		strv_free(&args);
	}
}

static void resume_forms(void **state)
{
	(void)state;
	static const struct {
		const char *profile;
		bool sandboxed;
		const char *agent_id;
		int rc;
		const char *want;
	} cases[] = {
		{"claude", true, "U1", 0, "claude --dangerously-skip-permissions --resume U1"},
		{"claude", true, NULL, 0, "claude --dangerously-skip-permissions --continue"},
		{"codex", true, NULL, 0, "codex --dangerously-bypass-approvals-and-sandbox resume --last"},
		{"codex", true, "T9", 0, "codex --dangerously-bypass-approvals-and-sandbox resume T9"},
		{"codex", false, NULL, 0, "codex resume --last"},
		{"gemini", true, NULL, 0, "gemini --yolo --skip-trust --resume latest"},
		{"aider", true, NULL, 0, "aider --yes-always --restore-chat-history"},
		{"kiro", true, NULL, 0, "kiro-cli chat --trust-all-tools --resume"},
		{"kiro", true, "K1", 0, "kiro-cli chat --trust-all-tools --resume-id K1"},
		{"opencode", true, "ses_1", 0, "opencode --auto --session ses_1"},
		{"pi", true, NULL, 0, "pi --continue"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct profile *p = profile_find(cases[i].profile);
		struct strv out = STRV_INIT;
		assert_int_equal(profile_resume_argv(p, p->exe[0], cases[i].sandboxed,
						     cases[i].agent_id, &out),
				 cases[i].rc);
		char *got = joined(&out);
		if (strcmp(got, cases[i].want))
			fail_msg("case %zu: got `%s`, want `%s`", i, got, cases[i].want);
		free(got);
		strv_free(&out);
	}
}

static void apply(void **state)
{
	(void)state;
	struct strv env = STRV_INIT;
	strv_push(&env, "ANTHROPIC_API_KEY=sk-secret");
	strv_push(&env, "CLAUDE_CODE_USE_BEDROCK=1");
	strv_push(&env, "OPENAI_API_KEY=sk-other"); /* another agent's key: not passed */
	strv_push(&env, "GITHUB_TOKEN=ghp");
	strv_push(&env, "ANTHROPIC_LD_PRELOAD=x");  /* matches the pattern, still a name */
	strv_push(&env, "LD_PRELOAD=/evil.so");
	struct policy pol;
	policy_init(&pol);
	profile_apply(profile_find("claude"), "/home/u", &env, &pol);
	assert_string_equal(pol.profile, "claude");
	assert_int_equal(pol.agent_rw.n, 2);
	assert_string_equal(pol.agent_rw.v[0], "/home/u/.claude");
	assert_string_equal(pol.agent_rw.v[1], "/home/u/.claude.json");
	assert_true(strv_contains(&pol.protect, "/home/u/.claude/settings.json"));
	assert_true(strv_contains(&pol.env, "ANTHROPIC_API_KEY"));
	assert_true(strv_contains(&pol.env, "CLAUDE_CODE_USE_BEDROCK"));
	assert_false(strv_contains(&pol.env, "OPENAI_API_KEY"));
	assert_false(strv_contains(&pol.env, "GITHUB_TOKEN"));
	assert_false(strv_contains(&pol.env, "LD_PRELOAD"));
	/* names only: the value is read when the jail is built, never stored */
	for (size_t i = 0; i < pol.env.n; i++)
		assert_null(strchr(pol.env.v[i], '='));
	assert_true(strv_contains(&pol.setenv, "IS_SANDBOX=1"));
	/* the policy JSON names the profile and its paths */
	char *j = policy_to_json(&pol);
	assert_non_null(strstr(j, "\"profile\":\"claude\""));
	assert_null(strstr(j, "sk-secret"));
	free(j);
	policy_free(&pol);

	/* CODEX_HOME moves the config dir and what is protected in it */
	strv_push(&env, "CODEX_HOME=/data/codex");
	policy_init(&pol);
	profile_apply(profile_find("codex"), "/home/u", &env, &pol);
	assert_string_equal(pol.agent_rw.v[0], "/data/codex");
	assert_true(strv_contains(&pol.protect, "/data/codex/config.toml"));
	assert_true(strv_contains(&pol.env, "OPENAI_API_KEY"));
	assert_true(strv_contains(&pol.env, "CODEX_HOME"));
	assert_false(strv_contains(&pol.env, "ANTHROPIC_API_KEY"));
	assert_int_equal(pol.allow_domains.n, 0); /* --net off: no domains */
	policy_free(&pol);

	/* --net allow (the agents' default): the profile's domains, then the user's */
	policy_init(&pol);
	pol.net = NET_ALLOW;
	strv_push(&pol.allow_domains, "mirror.example:8443");
	strv_push(&pol.allow_domains, "api.anthropic.com"); /* also the profile's: once */
	profile_apply(profile_find("claude"), "/home/u", &env, &pol);
	assert_string_equal(pol.allow_domains.v[0], "claude.ai");
	assert_true(strv_contains(&pol.allow_domains, "statsig.anthropic.com"));
	assert_string_equal(pol.allow_domains.v[pol.allow_domains.n - 2], "mirror.example:8443");
	assert_string_equal(pol.allow_domains.v[pol.allow_domains.n - 1], "api.anthropic.com");
	size_t n = 0;
	for (size_t i = 0; i < pol.allow_domains.n; i++)
		n += !strcmp(pol.allow_domains.v[i], "api.anthropic.com");
	assert_int_equal(n, 1); /* the user's entry stays as given; the profile's is skipped */
	struct err e = {0};
	pol.workspace = strdup("/home/u/proj");
	assert_int_equal(policy_validate(&pol, "/home/u", &e), 0); /* every domain parses */
	policy_free(&pol);
	/* --net on: the host's network, no list */
	policy_init(&pol);
	pol.net = NET_ON;
	profile_apply(profile_find("claude"), "/home/u", &env, &pol);
	assert_int_equal(pol.allow_domains.n, 0);
	policy_free(&pol);
	strv_free(&env);
}

/* Every profile's domains are valid --allow-domain entries. */
static void domains_parse(void **state)
{
	(void)state;
	for (const struct profile *const *p = profile_all(); *p; p++) {
		for (size_t i = 0; (*p)->domains && (*p)->domains[i]; i++) {
			struct netrule r;
			struct err e = {0};
			if (netrule_parse((*p)->domains[i], &r, &e) < 0)
				fail_msg("%s: %s: %s", (*p)->name, (*p)->domains[i], e.what);
			netrule_free(&r);
		}
	}
}

/* Instruction files read-only unless --agent-writable-instructions; IDE tokens masked; claude's
 * state file a private copy; what starts commands protected, per agent (doc/agents.md). */
static void persistence(void **state)
{
	(void)state;
	const struct profile *const *all = profile_all();
	for (size_t i = 0; all[i]; i++) {
		const struct profile *p = all[i];
		const char *const *lists[] = {p->instructions, p->hide};
		for (size_t l = 0; l < 2; l++)
			for (size_t k = 0; lists[l] && lists[l][k]; k++)
				if (strncmp(lists[l][k], p->rw[0], strlen(p->rw[0])))
					fail_msg("%s: %s is not in %s", p->name, lists[l][k],
						 p->rw[0]);
		/* a private copy is an rw path and has rules */
		if (p->private_copy) {
			assert_true(has(p->rw, p->private_copy));
			assert_non_null(p->copy_rules);
		}
	}
	assert_string_equal(profile_find("claude")->private_copy, "~/.claude.json");
	assert_true(has(profile_find("opencode")->protect, "~/.config/opencode/tools"));
	assert_true(has(profile_find("opencode")->protect, "~/.config/opencode/tool"));
	assert_true(has(profile_find("gemini")->protect, "~/.gemini/trustedFolders.json"));
	assert_true(has(profile_find("pi")->protect, "~/.pi/agent/models.json"));

	struct strv env = STRV_INIT, dirs = STRV_INIT;
	struct policy pol;
	policy_init(&pol);
	profile_apply(profile_find("claude"), "/home/u", &env, &pol);
	assert_true(strv_contains(&pol.protect, "/home/u/.claude/CLAUDE.md"));
	assert_true(strv_contains(&pol.protect, "/home/u/.claude/commands"));
	assert_true(strv_contains(&pol.protect, "/home/u/.claude/skills"));
	assert_true(strv_contains(&pol.agent_hide, "/home/u/.claude/ide"));
	policy_free(&pol);
	profile_dirs_to_make(profile_find("claude"), "/home/u", &env, false, &dirs);
	assert_true(strv_contains(&dirs, "/home/u/.claude/commands"));
	assert_true(strv_contains(&dirs, "/home/u/.claude/ide"));
	assert_false(strv_contains(&dirs, "/home/u/.claude/CLAUDE.md")); /* a file: watched */
	strv_free(&dirs);

	policy_init(&pol);
	pol.agent_writable_instructions = true;
	pol.workspace = strdup("/w");
	profile_apply(profile_find("claude"), "/home/u", &env, &pol);
	assert_false(strv_contains(&pol.protect, "/home/u/.claude/CLAUDE.md"));
	assert_false(strv_contains(&pol.protect, "/home/u/.claude/commands"));
	assert_true(strv_contains(&pol.protect, "/home/u/.claude/settings.json"));
	assert_true(strv_contains(&pol.agent_hide, "/home/u/.claude/ide"));
	/* the flag and the hidden dirs are stored, so resume keeps them */
	char *j = policy_to_json(&pol);
	struct policy back;
	struct err e = {0};
	assert_int_equal(policy_from_json(j, &back, &e), 0);
	assert_true(back.agent_writable_instructions);
	assert_true(strv_contains(&back.agent_hide, "/home/u/.claude/ide"));
	policy_free(&back);
	free(j);
	policy_free(&pol);
	profile_dirs_to_make(profile_find("claude"), "/home/u", &env, true, &dirs);
	assert_false(strv_contains(&dirs, "/home/u/.claude/commands"));
	assert_true(strv_contains(&dirs, "/home/u/.claude/ide"));
	strv_free(&dirs);

	/* a moved config dir moves the instruction paths along */
	strv_push(&env, "CODEX_HOME=/data/codex");
	policy_init(&pol);
	profile_apply(profile_find("codex"), "/home/u", &env, &pol);
	assert_true(strv_contains(&pol.protect, "/data/codex/AGENTS.md"));
	assert_true(strv_contains(&pol.protect, "/data/codex/prompts"));
	policy_free(&pol);
	char *c = profile_private_copy_path(profile_find("claude"), "/home/u", &env);
	assert_string_equal(c, "/home/u/.claude.json");
	free(c);
	/* CLAUDE_CONFIG_DIR: claude reads $CLAUDE_CONFIG_DIR/.claude.json, which becomes the copy */
	strv_push(&env, "CLAUDE_CONFIG_DIR=/data/claude");
	c = profile_private_copy_path(profile_find("claude"), "/home/u", &env);
	assert_string_equal(c, "/data/claude/.claude.json");
	free(c);
	policy_init(&pol);
	profile_apply(profile_find("claude"), "/home/u", &env, &pol);
	assert_int_equal(pol.agent_rw.n, 2);
	assert_string_equal(pol.agent_rw.v[0], "/data/claude");
	assert_string_equal(pol.agent_rw.v[1], "/data/claude/.claude.json");
	assert_true(strv_contains(&pol.protect, "/data/claude/CLAUDE.md"));
	assert_true(strv_contains(&pol.protect, "/data/claude/.config.json"));
	assert_true(strv_contains(&pol.agent_hide, "/data/claude/ide"));
	policy_free(&pol);
	assert_null(profile_private_copy_path(profile_find("codex"), "/home/u", &env));
	strv_free(&env);
}

static void shim_dispatch(void **state)
{
	(void)state;
	assert_ptr_equal(shim_profile("claude"), profile_find("claude"));
	assert_ptr_equal(shim_profile("/home/u/.local/share/agentjail/bin/codex"),
			 profile_find("codex"));
	assert_ptr_equal(shim_profile("kiro-cli"), profile_find("kiro"));
	assert_null(shim_profile("agentjail"));
	assert_null(shim_profile("/usr/local/bin/agentjail"));
	assert_null(shim_profile("bash"));
	assert_null(shim_profile(""));
	assert_null(shim_profile(NULL));
	/* our own init runs as /run/agentjail/init: never a shim */
	assert_null(shim_profile(BW_INIT_PATH));
}

static void recursion_guard(void **state)
{
	(void)state;
	static const char init[] = BW_INIT_PATH "\0__init\0--control\0" "7";
	static const char jailed[] = "Name:\tclaude\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n";
	assert_true(shim_in_jail_from(init, sizeof init, jailed));
	/* the host's PID 1 */
	static const char systemd[] = "/sbin/init\0splash";
	assert_false(shim_in_jail_from(systemd, sizeof systemd, jailed));
	/* a process that only claims the name (no filter, or no no_new_privs) */
	assert_false(shim_in_jail_from(init, sizeof init,
				       "Name:\tx\nNoNewPrivs:\t1\nSeccomp:\t0\n"));
	assert_false(shim_in_jail_from(init, sizeof init,
				       "Name:\tx\nNoNewPrivs:\t0\nSeccomp:\t2\n"));
	/* a prefix of the path is not the path */
	static const char almost[] = "/run/agentjail/init2\0__init";
	assert_false(shim_in_jail_from(almost, sizeof almost, jailed));
	assert_false(shim_in_jail_from("", 0, jailed));
	/* here, on the host (a test runs outside any jail), even with the variable set */
	setenv("AGENTJAIL_SESSION", "00000000-0000-4000-8000-000000000000", 1);
	assert_false(shim_in_jail());
	unsetenv("AGENTJAIL_SESSION");
}

static void shim_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/aj-shim-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sub[600], p[700];
	snprintf(sub, sizeof sub, "%s/a/b", dir);
	struct err e = {0};
	bool existed = true;
	assert_int_equal(shim_install(sub, "claude", "/usr/local/bin/agentjail", &existed, &e), 0);
	assert_false(existed);
	assert_int_equal(shim_check(sub, "claude"), SHIM_OURS);
	assert_int_equal(shim_install(sub, "claude", "/usr/local/bin/agentjail", &existed, &e), 0);
	assert_true(existed);
	/* a moved agentjail: the old link is repointed */
	assert_int_equal(shim_install(sub, "claude", "/opt/aj/agentjail", &existed, &e), 0);
	assert_false(existed);
	char buf[256];
	snprintf(p, sizeof p, "%s/claude", sub);
	ssize_t n = readlink(p, buf, sizeof buf - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "/opt/aj/agentjail");
	/* something else of the same name is never replaced or removed */
	snprintf(p, sizeof p, "%s/codex", sub);
	FILE *f = fopen(p, "we");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(shim_check(sub, "codex"), SHIM_FOREIGN);
	assert_int_equal(shim_install(sub, "codex", "/opt/aj/agentjail", &existed, &e), -1);
	assert_non_null(strstr(e.what, "not an agentjail shim"));
	assert_int_equal(shim_remove(sub, "codex", &e), -1);
	assert_int_equal(access(p, F_OK), 0);
	assert_int_equal(shim_remove(sub, "claude", &e), 0);
	assert_int_equal(shim_check(sub, "claude"), SHIM_ABSENT);
	assert_int_equal(shim_remove(sub, "claude", &e), 0); /* absent: fine */
	assert_int_equal(test_rm_tree(dir), 0);
}

static void path_hints(void **state)
{
	(void)state;
	const char *rc;
	char *line;
	shim_path_hint("/bin/bash", "/h/.local/share/agentjail/bin", &rc, &line);
	assert_string_equal(rc, "~/.bashrc");
	assert_string_equal(line, "export PATH=\"/h/.local/share/agentjail/bin:$PATH\"");
	free(line);
	shim_path_hint("/usr/bin/zsh", "/d", &rc, &line);
	assert_string_equal(rc, "~/.zshrc");
	free(line);
	shim_path_hint("/usr/bin/fish", "/d", &rc, &line);
	assert_string_equal(rc, "~/.config/fish/config.fish");
	assert_non_null(strstr(line, "fish_add_path"));
	free(line);
	shim_path_hint(NULL, "/d", &rc, &line);
	assert_string_equal(rc, "~/.profile");
	free(line);
	char *d = shim_default_dir("/h", NULL);
	assert_string_equal(d, "/h/.local/share/agentjail/bin");
	free(d);
	d = shim_default_dir("/h", "/x/data");
	assert_string_equal(d, "/x/data/agentjail/bin");
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),	   cmocka_unit_test(argv_cases), cmocka_unit_test(oneshot),
		cmocka_unit_test(resume_forms),	   cmocka_unit_test(apply),
		cmocka_unit_test(persistence),	   cmocka_unit_test(domains_parse),
		cmocka_unit_test(shim_dispatch),   cmocka_unit_test(recursion_guard),
		cmocka_unit_test(shim_files),	   cmocka_unit_test(path_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
