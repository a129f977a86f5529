#include "core/config/config_load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config/trust.h"
#include "core/plan/dirs.h"
#include "core/plan/profile.h"
#include "core/config/toml.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define PROJECT_FILE ".agentjail.toml"
/* A configuration file is a few dozen lines; a larger one (a hostile project's) is refused
 * before it is parsed: the parser's key lookup is linear per table, so 1 MiB of keys cost
 * 20 s of CPU on every run in that directory (measured). */
#define CONFIG_MAX (64 << 10)

void config_loaded_free(struct config_loaded *r)
{
	strv_free(&r->considered);
	strv_free(&r->widening);
	free(r->project);
	free(r->state_dir);
	memset(r, 0, sizeof *r);
}

void config_env_from_process(struct config_env *env, const char *workspace,
			     enum net_mode net_default)
{
	const char *home = getenv("HOME");
	*env = (struct config_env){.home = home && home[0] == '/' ? home : "/",
				   .xdg_config_home = getenv("XDG_CONFIG_HOME"),
				   .xdg_state_home = getenv("XDG_STATE_HOME"),
				   .env_state_dir = getenv("AGENTJAIL_STATE_DIR"),
				   .workspace = workspace,
				   .net_default = net_default};
#ifdef AJ_TEST_BUILD
	env->system_file = getenv("AGENTJAIL_SYSTEM_CONFIG"); /* the tests' build alone */
#endif
}

/* owned by us or root, writable by no one else */
static int check_owner(const char *path, const struct stat *st, bool dir, struct err *e)
{
	uid_t me = geteuid();
	const char *what = dir ? "the directory of a configuration file" : "a configuration file";
	if (st->st_uid != me && st->st_uid != 0) {
		err_set(e, 0, path, "refusing %s owned by uid %u (neither you nor root)", what,
			(unsigned)st->st_uid);
		err_hint(e, "chown %u %s, or remove it", (unsigned)me, path);
		return -1;
	}
	if (st->st_mode & 022) {
		err_set(e, 0, path, "refusing %s writable by %s", what,
			(st->st_mode & 002) ? "others" : "its group");
		err_hint(e, "chmod go-w %s", path);
		return -1;
	}
	return 0;
}

int config_read_file(const char *path, bool nofollow, char **text, size_t *len, struct err *e)
{
	*text = NULL;
	*len = 0;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
						    (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0) {
		if (errno == ENOENT)
			return 1;
		int err = errno;
		err_set(e, err, path, "cannot open the configuration file");
		if (err == ELOOP)
			err_hint(e, "a project's .agentjail.toml may not be a symlink");
		return -1;
	}
	struct stat st, dst;
	if (fstat(fd, &st) < 0)
		return err_set(e, errno, path, "cannot read the configuration file");
	if (!S_ISREG(st.st_mode))
		return err_set(e, 0, path, "the configuration file is not a regular file");
	if (check_owner(path, &st, false, e) < 0)
		return -1;
	_cleanup_free_ char *abs = path_normalize("/", path);
	_cleanup_free_ char *dir = path_dirname(abs);
	if (stat(dir, &dst) < 0)
		return err_set(e, errno, dir, "cannot examine the configuration file's directory");
	if (check_owner(dir, &dst, true, e) < 0)
		return -1;
	if (st.st_size > CONFIG_MAX)
		return err_set(e, 0, path, "the configuration file is larger than 64 KiB: "
				       "refused without reading it");
	struct strbuf b = STRBUF_INIT;
	char buf[8192];
	ssize_t n;
	size_t total = 0;
	while ((n = read(fd, buf, sizeof buf)) > 0 && total <= CONFIG_MAX) {
		sb_addn(&b, buf, (size_t)n);
		total += (size_t)n;
	}
	if (n < 0 || total > CONFIG_MAX) {
		sb_free(&b);
		return err_set(e, n < 0 ? errno : 0, path, "cannot read the configuration file");
	}
	*len = total;
	*text = sb_steal(&b);
	return 0;
}

/* Read, parse and apply one file: 0 (also when it does not exist), -1. */
static int layer_file(struct config *c, const char *path, enum cfg_layer layer,
		      const struct config_env *env, struct config_loaded *r, struct err *e)
{
	strv_push(&r->considered, path);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int rc = config_read_file(path, layer == CFG_PROJECT, &text, &len, e);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	bool trusted = false;
	if (layer == CFG_PROJECT) {
		char real[PATH_MAX];
		_cleanup_free_ char *dir = path_dirname(path);
		if (!realpath(dir, real))
			return err_set(e, errno, dir, "cannot resolve the workspace");
		r->project = path_join(real, PROJECT_FILE);
		trust_hash(text, len, r->hash);
		if (trust_lookup(r->state_dir, r->project, r->hash, &trusted, e) < 0)
			return -1;
		r->project_trusted = trusted;
	}
	struct toml_value root;
	memset(&root, 0, sizeof root);
	if (toml_parse(text, len, path, &root, e) < 0)
		return -1;
	rc = config_apply(c, &root, path, layer, trusted, env->net_default, &r->widening, e);
	toml_free(&root);
	return rc;
}

/* [agent.NAME] names a built-in or a [profile.NAME] */
static int check_agents(const struct config *c, struct err *e)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	for (const struct profile *const *p = profile_all(); *p; p++)
		strv_push(&names, (*p)->name);
	for (size_t i = 0; i < c->n_profiles; i++)
		strv_push(&names, c->profiles[i]->name);
	return config_check_agents(c, (const char *const *)strv_data(&names), e);
}

int config_load(struct config *c, const struct config_env *env, struct config_loaded *r,
		struct err *e)
{
	memset(r, 0, sizeof *r);
	const char *sys = env->system_file ? env->system_file : "/etc/agentjail/config.toml";
	if (layer_file(c, sys, CFG_SYSTEM, env, r, e) < 0)
		return -1;
	_cleanup_free_ char *dir = dirs_config_dir(env->xdg_config_home, env->home);
	_cleanup_free_ char *user = path_join(dir, "config.toml");
	if (layer_file(c, user, CFG_USER, env, r, e) < 0)
		return -1;
	/* the trust store is in the state directory, which no project file can move */
	if (env->env_state_dir && env->env_state_dir[0] == '/') {
		r->state_dir = path_normalize("/", env->env_state_dir);
	} else if (c->state_dir.v) {
		_cleanup_free_ char *x = path_expand_home(env->home, c->state_dir.v);
		if (x[0] != '/') {
			err_set(e, 0, c->state_dir.origin, "state_dir must be an absolute path "
							   "(or start with ~/)");
			return -1;
		}
		r->state_dir = path_normalize("/", x);
	} else {
		r->state_dir = dirs_state_dir(NULL, env->xdg_state_home, env->home);
	}
	if (env->workspace) {
		_cleanup_free_ char *proj = path_join(env->workspace, PROJECT_FILE);
		if (layer_file(c, proj, CFG_PROJECT, env, r, e) < 0)
			return -1;
	}
	return check_agents(c, e);
}

int config_project_id(const char *dir, char **canon, char hex[65], struct err *e)
{
	char real[PATH_MAX];
	*canon = NULL;
	if (!realpath(dir, real))
		return err_set(e, errno, dir, "cannot resolve the directory");
	_cleanup_free_ char *p = path_join(real, PROJECT_FILE);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int rc = config_read_file(p, true, &text, &len, e);
	if (rc < 0)
		return -1;
	if (rc > 0)
		return err_set(e, ENOENT, p, "no project configuration to trust");
	trust_hash(text, len, hex);
	*canon = steal_pointer(&p);
	return 0;
}
