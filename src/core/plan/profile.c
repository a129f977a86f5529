/* profile: the built-in agent profiles (facts checked against each real CLI: doc/agents.md). */
#include "core/plan/profile.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

static const struct profile claude = {
	.name = "claude",
	.title = "Claude Code (Anthropic)",
	.exe = L("claude"),
	.install = "npm install -g @anthropic-ai/claude-code (or the native installer)",
	.skip_flags = L("--dangerously-skip-permissions"),
	.rw = L("~/.claude/", "~/.claude.json"),
	.home_env = "CLAUDE_CONFIG_DIR",
	/* claude keeps its state in ~/.claude.json; a missing one would be made in the jail's
	 * private $HOME and lost (claude accepts "{}" and fills it) */
	.file_init = "{}\n",
	/* settings carry hooks (host commands run by an unjailed claude); plugins carry hooks
	 * and MCP servers; ~/.claude/.config.json, when it exists, is read instead of
	 * ~/.claude.json (its MCP servers start: verified, claude 2.1.197); local/ is the install
	 * `claude migrate-installer` makes (the user's alias runs it), jobs/ the background
	 * sessions claude's daemon starts again (claude protects both from its own sandbox's
	 * writes), chrome/ the native-messaging host script Chrome runs */
	.protect = L("~/.claude/settings.json", "~/.claude/settings.local.json",
		     "~/.claude/hooks", "~/.claude/plugins", "~/.claude/.config.json",
		     "~/.claude/local", "~/.claude/jobs", "~/.claude/chrome"),
	/* memory and the commands, subagents, skills, output styles, rules and workflow
	 * scripts it loads */
	.instructions = L("~/.claude/CLAUDE.md", "~/.claude/commands/", "~/.claude/agents/",
			  "~/.claude/skills/", "~/.claude/output-styles/", "~/.claude/rules/",
			  "~/.claude/workflows/", "~/.claude/loop.md"),
	/* lock files with the auth tokens of the host's IDE extensions (a loopback port) */
	.hide = L("~/.claude/ide/"),
	/* the shell snapshot claude sources before every Bash command, and its sessions'
	 * environment files (sourced too): a host session must never source one a jail wrote */
	.private_dirs = L("~/.claude/shell-snapshots/", "~/.claude/session-env/"),
	/* ~/.claude.json holds state claude must write (counters, onboarding) next to MCP
	 * servers, per-project trust and allowed tools: the jail writes a private copy */
	.private_copy = "~/.claude.json",
	.private_copy_moved = ".claude.json",
	.copy_rules = &jm_claude_json,
	.env = L("ANTHROPIC_*", "CLAUDE_CODE_*", "CLAUDE_CONFIG_DIR", "DISABLE_TELEMETRY",
		 "DISABLE_ERROR_REPORTING", "DISABLE_NON_ESSENTIAL_MODEL_CALLS", "MAX_THINKING_TOKENS",
		 "BASH_DEFAULT_TIMEOUT_MS", "BASH_MAX_TIMEOUT_MS", "MCP_TIMEOUT", "MCP_TOOL_TIMEOUT"),
	/* claude refuses --dangerously-skip-permissions as root unless told it is sandboxed;
	 * the jail is the sandbox. The install is read-only in the jail: no self-update. */
	.setenv = L("IS_SANDBOX=1", "DISABLE_AUTOUPDATER=1"),
	.domains = L("api.anthropic.com", "claude.ai", "claude.com", "platform.claude.com",
		     "console.anthropic.com", "statsig.anthropic.com",
		     "http-intake.logs.us5.datadoghq.com"),
	.session_flag = "--session-id",
	.resume_id = L("--resume", "{id}"),
	.resume_last = L("--continue"),
	.subcommands = L("config", "mcp", "plugin", "plugins", "migrate-installer", "setup-token",
			 "doctor", "update", "upgrade", "install", "-v", "--version", "-h",
			 "--help", "-c", "--continue", "-r", "--resume", "--session-id",
			 "--from-pr", "--fork-session"),
	.oneshot = L("-p", "--print"),
};

static const struct profile codex = {
	.name = "codex",
	.title = "Codex CLI (OpenAI)",
	.exe = L("codex"),
	.install = "npm install -g @openai/codex",
	.skip_flags = L("--dangerously-bypass-approvals-and-sandbox"),
	.rw = L("~/.codex/"),
	.home_env = "CODEX_HOME",
	/* config.toml names MCP servers and `notify` commands an unjailed codex would run */
	.protect = L("~/.codex/config.toml", "~/.codex/hooks.json", "~/.codex/rules",
		     "~/.codex/plugins"),
	.instructions = L("~/.codex/AGENTS.md", "~/.codex/AGENTS.override.md",
			  "~/.codex/prompts/", "~/.codex/skills/", "~/.codex/agents/"),
	/* skills/.system: codex installs its bundled skills (scripts among them) there at every
	 * start (removing the dir first), and skips that while the marker file matches, so what
	 * a jail changed there would stay for the host's codex (verified, 0.171.0);
	 * shell_snapshots/ are sourced by its shell tool; tmp/ holds the directory codex puts
	 * first on its commands' PATH; .tmp/ the plugins it stages */
	.private_dirs = L("~/.codex/shell_snapshots/", "~/.codex/tmp/", "~/.codex/.tmp/"),
	/* the user's skills read-only, .system codex's (it removes and remakes that dir) */
	.private_over = L("~/.codex/skills/"),
	.env = L("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
		 "CODEX_*", "RUST_LOG"),
	.domains = L("api.openai.com", "chatgpt.com", "auth.openai.com", "ab.chatgpt.com"),
	.resume_id = L("resume", "{id}"),
	.resume_last = L("resume", "--last"),
	.oneshot = L("exec", "e"),
};

static const struct profile gemini = {
	.name = "gemini",
	.title = "Gemini CLI (Google)",
	.exe = L("gemini"),
	.install = "npm install -g @google/gemini-cli",
	/* --yolo alone is overridden back to prompting in a folder gemini does not trust yet;
	 * --skip-trust trusts the workspace for this session (the jail bounds what it can do) */
	.skip_flags = L("--yolo", "--skip-trust"),
	/* before `mcp list` they turn the subcommand into a prompt */
	.no_skip_subs = L("mcp", "extensions", "extension", "skills", "skill", "hooks", "hook",
			  "gemma"),
	.rw = L("~/.gemini/"),
	.home_env = "GEMINI_CLI_HOME",
	/* trustedFolders.json trusts a folder; policies/ widen what runs unasked */
	/* tmp/bin: where older gemini versions downloaded the rg they run */
	.protect = L("~/.gemini/settings.json", "~/.gemini/extensions",
		     "~/.gemini/trustedFolders.json", "~/.gemini/policies", "~/.gemini/hooks",
		     "~/.gemini/tmp/bin"),
	.instructions = L("~/.gemini/GEMINI.md", "~/.gemini/commands/", "~/.gemini/agents/",
			  "~/.gemini/skills/"),
	/* history/: the checkpoints' shadow git repositories, which gemini runs git in with the
	 * project as work tree (their config could start a command: core.fsmonitor) */
	.private_dirs = L("~/.gemini/history/"),
	.env = L("GEMINI_*", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
		 "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GOOGLE_GEMINI_BASE_URL"),
	.domains = L("generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com",
		     "aiplatform.googleapis.com", "oauth2.googleapis.com", "accounts.google.com",
		     "www.googleapis.com", "play.googleapis.com"),
	.session_flag = "--session-id",
	.resume_id = L("--resume", "{id}"),
	.resume_last = L("--resume", "latest"),
	.subcommands = L("mcp", "extensions", "extension", "-v", "--version", "-h", "--help", "-r",
			 "--resume", "--session-id", "--list-sessions", "--delete-session",
			 "--session-file"),
	.oneshot = L("-p", "--prompt"),
};

static const struct profile kiro = {
	.name = "kiro",
	.title = "Kiro CLI (AWS)",
	.exe = L("kiro-cli"),
	.install = "curl -fsSL https://cli.kiro.dev/install | bash (https://kiro.dev/docs/cli/)",
	/* an option of `chat`, which a bare kiro-cli means (from kiro's docs: kiro-cli is not
	 * installable here to check) */
	.skip_flags = L("--trust-all-tools"),
	.skip_after = L("chat"),
	.skip_default_sub = "chat",
	.rw = L("~/.kiro/", "~/.local/share/kiro-cli/"),
	.home_env = "KIRO_HOME",
	/* settings/mcp.json and agents name commands kiro runs; hooks run commands, powers
	 * bring MCP servers (kiro's docs) */
	.protect = L("~/.kiro/settings", "~/.kiro/agents", "~/.kiro/hooks", "~/.kiro/powers"),
	.instructions = L("~/.kiro/steering/", "~/.kiro/prompts/"),
	.env = L("KIRO_*"),
	.domains = L("prod.us-east-1.auth.desktop.kiro.dev", "q.us-east-1.amazonaws.com",
		     "oidc.us-east-1.amazonaws.com", "codewhisperer.us-east-1.amazonaws.com"),
	.resume_id = L("chat", "--resume-id", "{id}"),
	.resume_last = L("chat", "--resume"),
};

static const struct profile pi = {
	.name = "pi",
	.title = "pi coding agent",
	.exe = L("pi"),
	.install = "npm install -g @earendil-works/pi-coding-agent",
	.skip_flags = NULL,
	.skip_note = "pi has no permission prompts: it runs every tool call, so the jail is its "
		     "only boundary",
	.rw = L("~/.pi/agent/", "~/.pi/agent/auth.json"),
	.home_env = "PI_CODING_AGENT_DIR",
	/* pi makes a missing auth.json as "{}" (0600) itself */
	.file_init = "{}\n",
	/* auth.json holds the logins pi must write, and API keys "!cmd" that run cmd on the
	 * host (verified): the jail writes a private copy */
	.private_copy = "~/.pi/agent/auth.json",
	.private_copy_moved = "auth.json",
	.copy_rules = &jm_pi_auth,
	/* extensions, tools and git packages are code pi loads; settings name them; models.json
	 * API keys may be "!command" */
	.protect = L("~/.pi/agent/settings.json", "~/.pi/agent/extensions", "~/.pi/agent/tools",
		     "~/.pi/agent/git", "~/.pi/agent/models.json"),
	.instructions = L("~/.pi/agent/AGENTS.md", "~/.pi/agent/SYSTEM.md",
			  "~/.pi/agent/APPEND_SYSTEM.md", "~/.pi/agent/prompts/",
			  "~/.pi/agent/skills/"),
	/* bin/: the fd and rg it runs, downloading them when missing: the host's read-only, what
	 * it downloads in a jail the workspace's own */
	.private_over = L("~/.pi/agent/bin/"),
	.env = L("PI_*", "ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_API_KEY",
		 "GEMINI_API_KEY", "GROQ_API_KEY", "CEREBRAS_API_KEY", "XAI_API_KEY",
		 "OPENROUTER_API_KEY", "MISTRAL_API_KEY", "ZAI_API_KEY"),
	.domains = L("api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com",
		     "pi.dev"),
	.session_flag = NULL,
	.resume_id = L("--session", "{id}"),
	.resume_last = L("--continue"),
};

static const struct profile opencode = {
	.name = "opencode",
	.title = "opencode",
	.exe = L("opencode"),
	.install = "npm install -g opencode-ai",
	.skip_flags = L("--auto"),
	.skip_after = L("run"),
	.no_skip_subs = L("completion", "acp", "mcp", "attach", "debug", "providers", "auth",
			  "agent", "upgrade", "uninstall", "serve", "web", "models", "stats",
			  "export", "import", "github", "pr", "session", "plugin", "db"),
	.rw = L("~/.config/opencode/", "~/.local/share/opencode/", "~/.local/state/opencode/"),
	/* the config names MCP commands; plugin/ and tool/ hold code it loads, with the
	 * packages its package.json names (installed with the registry of its .npmrc); read-only
	 * with --agent-writable-instructions (else the whole dir is private, below) */
	.protect = L("~/.config/opencode/opencode.json", "~/.config/opencode/opencode.jsonc",
		     "~/.config/opencode/config.json", "~/.config/opencode/plugin",
		     "~/.config/opencode/plugins", "~/.config/opencode/tool",
		     "~/.config/opencode/tools", "~/.config/opencode/package.json",
		     "~/.config/opencode/package-lock.json", "~/.config/opencode/bun.lock",
		     "~/.config/opencode/.npmrc"),
	.instructions = L("~/.config/opencode/AGENTS.md", "~/.config/opencode/agent/",
			  "~/.config/opencode/agents/", "~/.config/opencode/command/",
			  "~/.config/opencode/commands/", "~/.config/opencode/mode/",
			  "~/.config/opencode/modes/", "~/.config/opencode/skill/",
			  "~/.config/opencode/skills/"),
	/* the cache (the rg and language servers it downloads and runs, the provider packages
	 * and plugins it installs and loads, models.json naming them, remote skills) and the git
	 * dirs it runs git in with the project as work tree (snapshot/, worktree/, repos/;
	 * opencode 1.18.33) */
	.private_dirs = L("~/.cache/opencode/", "~/.local/share/opencode/snapshot/",
			  "~/.local/share/opencode/worktree/", "~/.local/share/opencode/repos/"),
	/* its config dir holds nothing it must keep (logins are in the data dir), but it writes
	 * there: opencode.jsonc on a first start, and its plugins' dependencies (package.json,
	 * node_modules) at every start: the workspace's own, the host's config read-only; the
	 * cache's bin/: the host's rg and language servers read-only, what it downloads its own */
	.private_over = L("~/.config/opencode/", "~/.cache/opencode/bin/"),
	.env = L("OPENCODE_*", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
		 "OPENROUTER_API_KEY", "GROQ_API_KEY", "XAI_API_KEY"),
	.domains = L("opencode.ai", "models.opencode.ai", "models.dev", "registry.npmjs.org",
		     "api.anthropic.com", "api.openai.com"),
	.resume_id = L("--session", "{id}"),
	.resume_last = L("--continue"),
	.oneshot = L("run"),
};

static const struct profile aider = {
	.name = "aider",
	.title = "aider",
	.exe = L("aider"),
	.install = "pipx install aider-chat (or uv tool install aider-chat)",
	.skip_flags = L("--yes-always"),
	.rw = L("~/.aider/"),
	.ro = L("~/.aider.conf.yml", "~/.aider.model.settings.yml", "~/.aider.model.metadata.json"),
	.env = L("AIDER_*", "OPENAI_API_KEY", "OPENAI_API_BASE", "ANTHROPIC_API_KEY",
		 "GEMINI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY", "GROQ_API_KEY"),
	.domains = L("api.openai.com", "api.anthropic.com", "openrouter.ai"),
	.resume_last = L("--restore-chat-history"),
};

static const struct profile *const builtin[] = {&claude, &codex, &gemini, &kiro, &pi,
						&opencode, &aider, NULL};

/* The user's profiles first, then the built-ins they do not shadow (profile_set_user). */
static const struct profile **all_user;
static const struct profile *const *all = builtin;

void profile_set_user(struct profile *const *user, size_t n)
{
	free(all_user);
	all_user = NULL;
	all = builtin;
	if (!n)
		return;
	size_t nb = sizeof builtin / sizeof *builtin - 1, k = 0;
	all_user = xcalloc(n + nb + 1, sizeof *all_user);
	for (size_t i = 0; i < n; i++) {
		/* of two with one name (the system's and the user's file), the later layer wins */
		bool later = false;
		for (size_t j = i + 1; j < n; j++)
			later |= !strcmp(user[i]->name, user[j]->name);
		if (!later)
			all_user[k++] = user[i];
	}
	for (size_t b = 0; b < nb; b++) {
		bool shadowed = false;
		for (size_t i = 0; i < n; i++)
			shadowed |= !strcmp(user[i]->name, builtin[b]->name);
		if (!shadowed)
			all_user[k++] = builtin[b];
	}
	all = all_user;
}

const struct profile *const *profile_all(void) { return all; }

const struct profile *profile_find(const char *name)
{
	for (size_t i = 0; all[i]; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return profile_by_exe(name);
}

const struct profile *profile_by_exe(const char *exe)
{
	for (size_t i = 0; all[i]; i++)
		for (size_t k = 0; all[i]->exe[k]; k++)
			if (!strcmp(all[i]->exe[k], exe))
				return all[i];
	return NULL;
}

static bool in_list(const char *const *l, const char *s)
{
	for (size_t i = 0; l && l[i]; i++)
		if (!strcmp(l[i], s))
			return true;
	return false;
}

/* Whether "~/..." path p is one of the dirs of l ("~/.../") or lies inside one. */
static bool in_dir_list(const char *const *l, const char *p)
{
	for (size_t i = 0; l && l[i]; i++) {
		size_t n = strlen(l[i]);
		if (!strncmp(p, l[i], n) || (!strncmp(p, l[i], n - 1) && p[n - 1] == '\0'))
			return true;
	}
	return false;
}

static bool env_matches(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, 0) == 0;
}

/* "~/..." paths inside rw[0] follow it when a variable moved it (rw0: where it was, to: where
 * it is now). */
static char *moved_path(const char *p, const char *home, const char *moved, const char *rw0,
			const char *to)
{
	_cleanup_free_ char *x = path_expand_home(home, p);
	char *n = path_normalize("/", x);
	const char *rel = moved && rw0 ? path_below(n, rw0) : NULL;
	if (rel && *rel) {
		char *m = path_join(to, rel);
		free(n);
		n = m;
	}
	return n;
}

static void push_moved(const char *const *l, const char *home, const char *moved,
		       const char *rw0, const char *to, struct strv *out)
{
	for (size_t i = 0; l && l[i]; i++)
		strv_push_take(out, moved_path(l[i], home, moved, rw0, to));
}

/* The value of the variable that moves the config dir (CODEX_HOME=/x), or NULL. */
static const char *moved_home(const struct profile *pr, const struct strv *env)
{
	const char *moved = NULL;
	for (size_t k = 0; pr->home_env && k < env->n; k++) {
		size_t n = strlen(pr->home_env);
		if (!strncmp(env->v[k], pr->home_env, n) && env->v[k][n] == '=' &&
		    env->v[k][n + 1] == '/')
			moved = env->v[k] + n + 1;
	}
	return moved;
}

char *profile_private_copy_path(const struct profile *pr, const char *home, const struct strv *env)
{
	if (!pr->private_copy)
		return NULL;
	const char *moved = moved_home(pr, env);
	_cleanup_free_ char *x = path_expand_home(home, pr->rw[0]);
	_cleanup_free_ char *rw0 = path_normalize("/", x);
	_cleanup_free_ char *to = moved ? path_normalize("/", moved) : xstrdup(rw0);
	if (moved && pr->private_copy_moved)
		return path_join(to, pr->private_copy_moved);
	return moved_path(pr->private_copy, home, moved, rw0, to);
}

/* The dirs of l (ending '/') not inside one of `skip` ("~/.../"). */
static void push_dirs(const char *const *l, const char *const *skip, const char *home,
		      const char *moved, const char *rw0, const char *to, struct strv *out)
{
	for (size_t i = 0; l && l[i]; i++) {
		size_t n = strlen(l[i]);
		if (n > 0 && l[i][n - 1] == '/' && !in_dir_list(skip, l[i]))
			strv_push_take(out, moved_path(l[i], home, moved, rw0, to));
	}
}

void profile_dirs_to_make(const struct profile *pr, const char *home, const struct strv *env,
			  bool writable_instructions, struct strv *out)
{
	const char *moved = moved_home(pr, env);
	_cleanup_free_ char *x = path_expand_home(home, pr->rw[0]);
	_cleanup_free_ char *rw0 = path_normalize("/", x);
	_cleanup_free_ char *to = moved ? path_normalize("/", moved) : xstrdup(rw0);
	/* (a private instruction dir shows only the host's entries: none is made there) */
	if (!writable_instructions)
		push_dirs(pr->instructions, pr->private_over, home, moved, rw0, to, out);
	push_dirs(pr->hide, NULL, home, moved, rw0, to, out);
}

void profile_apply_paths(const struct profile *pr, const char *home, const struct strv *env,
			 struct policy *pol)
{
	struct strv *lists[] = {&pol->agent_rw,	     &pol->protect,	  &pol->agent_hide,
				&pol->agent_private, &pol->agent_private_over, &pol->agent_ro};
	for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
		strv_free(lists[i]);
	/* the variable that moves the config dir (CODEX_HOME=/x): rw[0] and what is protected
	 * inside it move along */
	const char *moved = moved_home(pr, env);
	_cleanup_free_ char *rw0 = NULL;
	for (size_t i = 0; pr->rw && pr->rw[i]; i++) {
		_cleanup_free_ char *x = path_expand_home(home, pr->rw[i]);
		char *n = path_normalize("/", x); /* "~/.x/": no trailing slash */
		if (moved && pr->private_copy && !strcmp(pr->rw[i], pr->private_copy)) {
			/* the state file moves with the dir (claude reads only the moved one) */
			free(n);
			n = profile_private_copy_path(pr, home, env);
		}
		if (i == 0) {
			rw0 = xstrdup(n);
			if (moved) {
				free(n);
				n = path_normalize("/", moved);
			}
		}
		strv_push_take(&pol->agent_rw, n);
	}
	/* a dir the agent writes its own entries in is private, the host's entries read-only
	 * inside it: what the profile protects there needs no bind of its own; one that is an
	 * instruction dir is the host's, writable, with --agent-writable-instructions */
	struct strv overs = STRV_INIT;
	for (size_t i = 0; pr->private_over && pr->private_over[i]; i++)
		if (!pol->agent_writable_instructions || !in_list(pr->instructions,
								   pr->private_over[i]))
			strv_push(&overs, pr->private_over[i]);
	const char *const *over = (const char *const *)strv_data(&overs);
	struct strv prot = STRV_INIT;
	for (size_t i = 0; pr->protect && pr->protect[i]; i++)
		if (!in_dir_list(over, pr->protect[i]))
			strv_push(&prot, pr->protect[i]);
	for (size_t i = 0; !pol->agent_writable_instructions && pr->instructions &&
			   pr->instructions[i];
	     i++)
		if (!in_dir_list(over, pr->instructions[i]))
			strv_push(&prot, pr->instructions[i]);
	push_moved((const char *const *)strv_data(&prot), home, moved, rw0, pol->agent_rw.v[0],
		   &pol->protect);
	strv_free(&prot);
	push_moved(over, home, moved, rw0, pol->agent_rw.v[0], &pol->agent_private_over);
	strv_free(&overs);
	push_moved(pr->hide, home, moved, rw0, pol->agent_rw.v[0], &pol->agent_hide);
	push_moved(pr->private_dirs, home, moved, rw0, pol->agent_rw.v[0], &pol->agent_private);
	for (size_t i = 0; pr->ro && pr->ro[i]; i++) {
		_cleanup_free_ char *x = path_expand_home(home, pr->ro[i]);
		strv_push_take(&pol->agent_ro, path_normalize("/", x));
	}
}

void profile_apply(const struct profile *pr, const char *home, const struct strv *env,
		   struct policy *pol)
{
	free(pol->profile);
	pol->profile = xstrdup(pr->name);
	profile_apply_paths(pr, home, env, pol);
	for (size_t i = 0; pr->setenv && pr->setenv[i]; i++)
		strv_push(&pol->setenv, pr->setenv[i]);
	if (pol->net == NET_ALLOW) {
		/* what the agent needs to reach, then the user's --allow-domain entries */
		struct strv dom = STRV_INIT;
		for (size_t i = 0; pr->domains && pr->domains[i]; i++)
			if (!strv_contains(&pol->allow_domains, pr->domains[i]))
				strv_push(&dom, pr->domains[i]);
		strv_copy(&dom, &pol->allow_domains);
		strv_free(&pol->allow_domains);
		pol->allow_domains = dom;
	}
	for (size_t k = 0; k < env->n; k++) {
		const char *kv = env->v[k];
		const char *eq = strchr(kv, '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xstrndup(kv, (size_t)(eq - kv));
		if (env_name_forbidden(name) || strv_contains(&pol->env, name))
			continue;
		for (size_t i = 0; pr->env && pr->env[i]; i++) {
			if (env_matches(pr->env[i], name)) {
				strv_push(&pol->env, name);
				break;
			}
		}
	}
}

/* Whether a matches an entry of l: "--flag" also as "--flag=V" anywhere before "--", a word
 * (a subcommand) only as the first argument. */
static const char *match_arg(const char *const *l, const struct strv *args)
{
	for (size_t i = 0; l && i < args->n; i++) {
		const char *a = args->v[i];
		if (!strcmp(a, "--"))
			break;
		for (size_t k = 0; l[k]; k++) {
			size_t n = strlen(l[k]);
			if (!strncmp(a, l[k], n) && (a[n] == '\0' || (l[k][0] == '-' && a[n] == '=')) &&
			    (l[k][0] == '-' || i == 0))
				return a;
		}
	}
	return NULL;
}

const char *profile_oneshot_arg(const struct profile *pr, const struct strv *args)
{
	return match_arg(pr->oneshot, args);
}

bool profile_args_choose_session(const struct profile *pr, const struct strv *args)
{
	/* "--resume=ID" counts as "--resume"; a subcommand only as the first word */
	return match_arg(pr->subcommands, args) != NULL;
}

void profile_argv(const struct profile *pr, const char *exe, bool sandboxed, const char *session_id,
		  const struct strv *args, struct strv *out)
{
	strv_push(out, exe);
	const char *a0 = args->n ? args->v[0] : NULL;
	bool word = a0 && a0[0] != '-';
	size_t from = 0; /* the user's arguments copied from here on */
	static const char *const info[] = {"--version", "-V", "-v", "--help", "-h", NULL};
	/* asking for the version or the help needs no permissions (and an implied subcommand
	 * would change what they answer) */
	bool flags = sandboxed && pr->skip_flags && !(a0 && in_list(info, a0));
	if (flags && a0 && in_list(pr->skip_after, a0)) {
		strv_push(out, a0); /* `opencode run --auto …` */
		from = 1;
	} else if (flags && word && (in_list(pr->no_skip_subs, a0) || pr->skip_default_sub)) {
		flags = false; /* a subcommand that refuses them (or, with an implied subcommand,
				* any other one) */
	} else if (flags && pr->skip_default_sub) {
		strv_push(out, pr->skip_default_sub); /* `kiro-cli chat --trust-all-tools …` */
	}
	for (size_t i = 0; flags && pr->skip_flags[i]; i++)
		strv_push(out, pr->skip_flags[i]);
	if (session_id && pr->session_flag && !profile_args_choose_session(pr, args)) {
		strv_push(out, pr->session_flag);
		strv_push(out, session_id);
	}
	for (size_t i = from; i < args->n; i++)
		strv_push(out, args->v[i]);
}

int profile_resume_argv(const struct profile *pr, const char *exe, bool sandboxed,
			const char *agent_id, struct strv *out)
{
	const char *const *form = agent_id && pr->resume_id ? pr->resume_id : pr->resume_last;
	if (!form)
		return -1;
	struct strv args = STRV_INIT;
	for (size_t i = 0; form[i]; i++)
		strv_push(&args, strcmp(form[i], "{id}") ? form[i] : agent_id);
	profile_argv(pr, exe, sandboxed, NULL, &args, out);
	strv_free(&args);
	return 0;
}

static json_t *list_json(const char *const *l)
{
	json_t *a = json_array();
	for (size_t i = 0; l && l[i]; i++)
		json_array_append_new(a, json_string(l[i]));
	return a;
}

char *profile_to_json(const struct profile *pr)
{
	json_t *o = json_pack(
		"{s:s, s:s, s:o, s:s, s:o, s:o, s:s?, s:s?, s:o, s:o, s:o, s:o, s:o, s:o, s:s?, s:o, "
		"s:o}",
		"name", pr->name, "title", pr->title, "exe", list_json(pr->exe), "install",
		pr->install, "skip_permission_flags", list_json(pr->skip_flags),
		"skip_permission_flags_after", list_json(pr->skip_after), "skip_default_subcommand",
		pr->skip_default_sub, "skip_permission_note", pr->skip_note, "rw", list_json(pr->rw),
		"ro", list_json(pr->ro), "protect", list_json(pr->protect), "env",
		list_json(pr->env), "setenv", list_json(pr->setenv), "domains",
		list_json(pr->domains), "session_id_flag", pr->session_flag, "resume_id",
		pr->resume_id ? list_json(pr->resume_id) : json_null(), "resume_last",
		pr->resume_last ? list_json(pr->resume_last) : json_null());
	if (!o)
		abort();
	json_object_set_new(o, "instructions", list_json(pr->instructions));
	json_object_set_new(o, "hide", list_json(pr->hide));
	json_object_set_new(o, "private", list_json(pr->private_dirs));
	json_object_set_new(o, "private_over", list_json(pr->private_over));
	json_object_set_new(o, "private_copy",
			    pr->private_copy ? json_string(pr->private_copy) : json_null());
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!s)
		abort();
	return s;
}
