/* toolcache: private package caches, filtered registry configuration, mirror variables
 * (pure). */
#include "core/plan/toolcache.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/plan/resolve.h"
#include "util/hex.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

const struct toolcache toolcaches[] = {
	{"cargo-registry", "cargo", "registry", NULL, true},
	{"cargo-git", "cargo", "git", NULL, true},
	{"npm", "npm", ".npm", "npm_config_cache", false},
	{"pip", "python3", ".cache/pip", "PIP_CACHE_DIR", false},
	{"uv", "uv", ".cache/uv", "UV_CACHE_DIR", false},
	{"go-mod", "go", "go/pkg/mod", "GOMODCACHE", false},
	{"gradle", "gradle", ".gradle", "GRADLE_USER_HOME", false},
	{"maven", "mvn", ".m2", NULL, false},
	{NULL, NULL, NULL, NULL, false},
};

char *toolcache_key(const char *workspace)
{
	struct sha256 c;
	uint8_t d[32];
	sha256_init(&c);
	sha256_update(&c, workspace, strlen(workspace));
	sha256_final(&c, d);
	char hex[TOOLCACHE_KEY_HEX + 1];
	hex_encode(d, TOOLCACHE_KEY_HEX / 2, hex);
	return xstrdup(hex);
}

char *toolcache_root(const char *state_dir, const char *workspace, enum cache_mode mode)
{
	if (!state_dir)
		return NULL;
	if (mode == CACHE_SHARED || !workspace)
		return xasprintf("%s/cache/shared", state_dir);
	_cleanup_free_ char *key = toolcache_key(workspace);
	return xasprintf("%s/cache/ws/%s", state_dir, key);
}

char *toolcache_agent_dir(const char *root, const char *profile, const char *dest)
{
	return xasprintf("%s/agent/%s%s", root, profile, dest);
}

const struct toolconf toolconfs[] = {
	{".npmrc", "npmrc", false},
	{"config.toml", "cargo-config.toml", true},
	{"config", "cargo-config", true},
	{".config/pip/pip.conf", "pip.conf", false},
	{".pip/pip.conf", "pip-legacy.conf", false},
	{".config/uv/uv.toml", "uv.toml", false},
	{NULL, NULL, false},
};

/* ~/.cargo, or CARGO_HOME when it lies under $HOME; NULL elsewhere */
static char *cargo_home(const struct hostfacts *hf)
{
	const char *v = hf_getenv(hf, "CARGO_HOME");
	char *d = v && v[0] == '/' ? path_normalize("/", v) : path_join(hf->home, ".cargo");
	if (!path_is_under(d, hf->home) || !strcmp(d, hf->home)) {
		free(d);
		return NULL;
	}
	return d;
}

static bool on_path(struct hostfacts *hf, const char *name, const char *path_env)
{
	_cleanup_free_ char *copy = xstrdup(path_env ? path_env : "");
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (d[0] != '/')
			continue;
		_cleanup_free_ char *dir = path_normalize("/", d);
		_cleanup_free_ char *p = path_join(dir, name);
		_cleanup_free_ char *r = hf_realpath(hf, p, NULL);
		if (r && hf_type(hf, r) == HF_FILE && (hf_stat(hf, r)->mode & 0111))
			return true;
	}
	return false;
}

void toolcache_plan(struct hostfacts *hf, const char *path_env, const char *root,
		    struct strv *mounts, struct strv *vars, struct strv *skipped)
{
	if (!hf->home || !root)
		return;
	for (size_t i = 0; toolcaches[i].name; i++) {
		const struct toolcache *c = &toolcaches[i];
		if (!on_path(hf, c->tool, path_env))
			continue;
		_cleanup_free_ char *base = c->cargo_home ? cargo_home(hf) : xstrdup(hf->home);
		if (!base) {
			strv_pushf(skipped, "%s: CARGO_HOME lies outside $HOME: no private %s cache "
					    "(cargo sees that one read-only)", c->name, c->name);
			continue;
		}
		_cleanup_free_ char *dest = path_join(base, c->home_rel);
		_cleanup_free_ char *src = path_join(root, c->name);
		if (hf_type(hf, src) != HF_DIR) {
			/* made by toolprep before the plan; unusable state dir: no private cache,
			 * the tool writes into the home tmpfs (the jail's alone) */
			strv_pushf(skipped, "%s: %s is not a directory (the state dir is new or "
					    "unusable): the jail's %s stays in its tmpfs home",
				   c->name, src, dest);
			continue;
		}
		strv_push(mounts, src);
		strv_push(mounts, dest);
		if (c->var) {
			strv_push(vars, c->var);
			strv_push(vars, dest);
		}
	}
}

char *toolconf_host_path(const struct hostfacts *hf, size_t i)
{
	if (!hf->home)
		return NULL;
	if (!toolconfs[i].cargo_home)
		return path_join(hf->home, toolconfs[i].home_rel);
	_cleanup_free_ char *base = cargo_home(hf);
	return base ? path_join(base, toolconfs[i].home_rel) : NULL;
}

/* ---- the credential filter ---- */

static bool has_url_userinfo(const char *s)
{
	for (const char *p = strstr(s, "://"); p; p = strstr(p + 1, "://")) {
		const char *h = p + 3;
		size_t n = strcspn(h, "/ \t\"'?#");
		const char *at = memchr(h, '@', n);
		if (at)
			return true;
	}
	return false;
}

/* The key of a config line ("key = v", "key=v", "//host/:_authToken=v"), lowercased; "" when
 * none. Comment markers in front are skipped: a commented-out token is still a token. */
static char *line_key(const char *line)
{
	while (*line == ' ' || *line == '\t' || *line == '#' || *line == ';')
		line++;
	size_t n = strcspn(line, "=");
	if (!line[n])
		return xstrdup("");
	char *k = xstrndup(line, n);
	for (char *c = k; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return k;
}

static bool credential_key(const char *key)
{
	static const char *const bad[] = {"token", "password", "passwd", "_auth", "secret",
					  "credential", "keyfile", "private-key", "privatekey",
					  NULL};
	for (size_t i = 0; bad[i]; i++)
		if (strstr(key, bad[i]))
			return true;
	return false;
}

/* how much a dropped line leaves open: brackets of a TOML array or a """ string */
static int opened(const char *line, bool *triple)
{
	int depth = 0;
	for (const char *c = line; *c; c++) {
		if (!strncmp(c, "\"\"\"", 3) || !strncmp(c, "'''", 3)) {
			*triple = !*triple;
			c += 2;
		} else if (*c == '[' || *c == '{') {
			depth++;
		} else if (*c == ']' || *c == '}') {
			depth--;
		}
	}
	return depth;
}

char *toolconf_filter(const char *text, int *removed)
{
	struct strbuf out = STRBUF_INIT;
	int drop = 0;
	int depth = 0;
	bool triple = false;
	const char *p = text;
	while (*p) {
		size_t n = strcspn(p, "\n");
		_cleanup_free_ char *line = xstrndup(p, n);
		p += n;
		if (*p == '\n')
			p++;
		if (depth > 0 || triple) {
			/* the rest of a value whose first line was dropped */
			depth += opened(line, &triple);
			drop++;
			continue;
		}
		_cleanup_free_ char *key = line_key(line);
		if (credential_key(key) || has_url_userinfo(line)) {
			const char *eq = strchr(line, '=');
			depth = eq ? opened(eq + 1, &triple) : 0;
			if (depth < 0)
				depth = 0;
			drop++;
			continue;
		}
		sb_add(&out, line);
		sb_addc(&out, '\n');
	}
	if (removed)
		*removed = drop;
	return sb_steal(&out);
}

/* ---- mirror variables ---- */

bool toolenv_mirror_var(const char *name)
{
	static const char *const allow[] = {
		"npm_config_registry", "NPM_CONFIG_REGISTRY", "YARN_REGISTRY", "PIP_INDEX_URL",
		"PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_FIND_LINKS", "UV_INDEX_URL",
		"UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_PYTHON_INSTALL_MIRROR",
		"CARGO_REGISTRIES_*", "CARGO_REGISTRY_DEFAULT", "CARGO_NET_OFFLINE",
		"CARGO_SOURCE_*", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB",
		"GOFLAGS", "RUSTUP_DIST_SERVER", "RUSTUP_UPDATE_ROOT", "RUSTUP_TOOLCHAIN",
		"PYENV_VERSION", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
		"REQUESTS_CA_BUNDLE", "PIP_CERT", NULL};
	static const char *const deny[] = {"TOKEN", "PASSWORD", "PASSWD", "SECRET", "AUTH",
					   "CREDENTIAL", NULL};
	for (size_t i = 0; deny[i]; i++)
		if (strcasestr(name, deny[i]))
			return false;
	for (size_t i = 0; allow[i]; i++)
		if (fnmatch(allow[i], name, 0) == 0)
			return true;
	return false;
}

bool toolenv_value_has_credentials(const char *value)
{
	return has_url_userinfo(value);
}

/* Whether the parent of `src` is a cache root: …/cache/shared or …/cache/ws/KEY. */
static bool cache_root_dir(const char *src)
{
	_cleanup_free_ char *d = path_dirname(src);
	_cleanup_free_ char *up = path_dirname(d);
	const char *last = path_basename(d);
	if (!strcmp(last, "shared"))
		return !strcmp(path_basename(up), "cache");
	if (strlen(last) != TOOLCACHE_KEY_HEX || strspn(last, "0123456789abcdef") != TOOLCACHE_KEY_HEX)
		return false;
	_cleanup_free_ char *upup = path_dirname(up);
	return !strcmp(path_basename(up), "ws") && !strcmp(path_basename(upup), "cache");
}

bool toolcache_is_private_mount(const char *home, const char *root, const char *point)
{
	if (!home || !path_is_under(point, home))
		return false;
	for (size_t i = 0; toolcaches[i].name; i++) {
		const struct toolcache *c = &toolcaches[i];
		if (strcmp(path_basename(root), c->name) != 0 || !cache_root_dir(root))
			continue;
		/* cargo's lie in CARGO_HOME, wherever under $HOME that is */
		_cleanup_free_ char *want = path_join(home, c->home_rel);
		if (c->cargo_home ? !strcmp(path_basename(point), c->home_rel)
				  : !strcmp(point, want))
			return true;
	}
	return false;
}
