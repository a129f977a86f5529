/* denial: the sandbox's share in a failed run, in one line (denial.h). */
#include "core/backend/bwrap/denial.h"
#include "core/plan/bwrap_argv.h"

#include <string.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

/* By the protected path's last components (bw_protected_names, gitprotect's git files; the
 * home's files that run code, shell rc files included, are bw_home_code's, each with its own
 * reason, and looked at first). The first entry whose name ends the path wins; more specific
 * names come first. */
static const struct {
	const char *name;
	const char *why;
} reasons[] = {
	{".git/hooks", "git runs its hooks on the host (the next commit or checkout)"},
	{"hooks", "git runs its hooks on the host (the next commit or checkout)"},
	{".git/config", "git config can make the host's git run a command (core.fsmonitor, "
			"core.hooksPath, aliases)"},
	{"config", "git config can make the host's git run a command (core.fsmonitor, "
		   "core.hooksPath, aliases)"},
	{"config.worktree", "git config can make the host's git run a command (core.fsmonitor)"},
	{"commondir", "a git pointer: it decides what the next jail binds writable"},
	{"gitdir", "a git pointer: it decides what the next jail binds writable"},
	{"info", "git reads its attributes and exclude rules from there on the host"},
	{".gitmodules", "git fetches and checks out what it names on the host"},
	{".pre-commit-config.yaml", "pre-commit runs the hooks it lists on the host"},
	{".agentjail.toml", "it configures the next jail: edit it outside the jail, then run "
			    "`agentjail trust`"},
	{".envrc", "direnv runs it in your shell when you enter the directory"},
	{".mcp.json", "an agent started on the host runs the MCP servers it lists"},
	{".vscode", "the editor runs the tasks and settings it holds"},
	{".idea", "the editor runs the tasks and settings it holds"},
	{".codex", "an agent started on the host follows what it holds"},
	{".opencode", "an agent started on the host follows what it holds"},
	{"opencode.json", "an agent started on the host runs the commands it configures"},
	{"opencode.jsonc", "an agent started on the host runs the commands it configures"},
};

/* path ends with "/name" (or is name) */
static bool ends_with(const char *path, const char *name)
{
	size_t lp = strlen(path), ln = strlen(name);
	return lp >= ln && !strcmp(path + lp - ln, name) && (lp == ln || path[lp - ln - 1] == '/');
}

const char *denial_protected_why(const char *path)
{
	/* the home's names first: they are the more specific (~/.ssh/config is no git config) */
	for (size_t i = 0; bw_home_code[i].name; i++)
		if (ends_with(path, bw_home_code[i].name))
			return bw_home_code[i].why;
	for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
		if (ends_with(path, reasons[i].name))
			return reasons[i].why;
	if (strstr(path, "/.claude/") || strstr(path, "/.gemini/"))
		return "an agent started on the host runs the hooks and commands it configures";
	return "a file the host's tools run or trust";
}

char *denial_moved_line(const char *const *paths, size_t n)
{
	if (!n)
		return NULL;
	const char *why = denial_protected_why(paths[0]);
	/* for .agentjail.toml the reason already says what to do */
	const char *todo = ends_with(paths[0], ".agentjail.toml")
				   ? ""
				   : "; no option makes it writable in a jail: change it outside one";
	_cleanup_free_ char *more = n > 1 ? xasprintf(" and %zu more listed above", n - 1) : NULL;
	return xasprintf("the run failed after the jail moved aside protected path %s that it "
			 "wrote%s: %s%s",
			 paths[0], more ? more : "", why, todo);
}

char *denial_not_in_view(const char *cmd, const char *host_path, const char *dir,
			 const char *interp, const char *idir)
{
	if (interp && strcmp(idir, dir))
		return xasprintf("%s or its interpreter %s is not in the jail's view: on the host "
				 "the command is %s; --ro %s --ro %s bring them in",
				 cmd, interp, host_path, dir, idir);
	if (interp)
		return xasprintf("%s or its interpreter %s is not in the jail's view: on the host "
				 "the command is %s; --ro %s brings them in",
				 cmd, interp, host_path, dir);
	return xasprintf("%s is not in the jail's view: on the host it is %s; --ro %s brings it in",
			 cmd, host_path, dir);
}

char *denial_gitconfig_line(const char *path)
{
	return xasprintf("git could not write %s (git config --global): the host's file is "
			 "read-only in the jail (\"Device or resource busy\"); set an identity on "
			 "the host (git config --global user.name …), for a run with --env "
			 "GIT_AUTHOR_NAME=… --env GIT_AUTHOR_EMAIL=… (and GIT_COMMITTER_NAME, "
			 "GIT_COMMITTER_EMAIL), or per command: git -c user.name=… -c user.email=… "
			 "commit",
			 path);
}
