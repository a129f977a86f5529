/* dirs: agentjail's state and configuration directories (see dirs.h). */
#include "core/plan/dirs.h"

#include "util/cleanup.h"
#include "util/path.h"

static char *xdg_base(const char *xdg, const char *home, const char *fallback)
{
	if (xdg && xdg[0] == '/')
		return path_normalize("/", xdg);
	return path_join(home && home[0] == '/' ? home : "/", fallback);
}

char *dirs_state_dir(const char *env_state_dir, const char *xdg_state_home, const char *home)
{
	if (env_state_dir && env_state_dir[0] == '/')
		return path_normalize("/", env_state_dir);
	_cleanup_free_ char *base = xdg_base(xdg_state_home, home, ".local/state");
	_cleanup_free_ char *norm = path_normalize("/", base);
	return path_join(norm, "agentjail");
}

char *dirs_config_dir(const char *xdg_config_home, const char *home)
{
	_cleanup_free_ char *base = xdg_base(xdg_config_home, home, ".config");
	_cleanup_free_ char *norm = path_normalize("/", base);
	return path_join(norm, "agentjail");
}
