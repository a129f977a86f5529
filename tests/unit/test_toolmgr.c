/* The tool-manager recogniser and the tool caches: golden binds per fixture host tree
 * (tests/data/toolmgr/NAME.facts → NAME.golden; AJ_UPDATE_GOLDEN=1 rewrites them), the
 * credential filter of registry configuration, the mirror variables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/hostfacts.h"
#include "core/plan/toolcache.h"
#include "core/plan/toolmgr.h"
#include "golden.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/xalloc.h"

static const char *data_dir(void)
{
	return golden_dir("toolmgr");
}

static char *render(struct hostfacts *hf)
{
	struct strbuf b = STRBUF_INIT;
	const char *path = hf_getenv(hf, "PATH");
	struct toolmgr_plan t;
	toolmgr_recognise(hf, path, &t);
	for (size_t i = 0; i + 1 < t.found.n; i += 2)
		sb_addf(&b, "found %s %s\n", t.found.v[i], t.found.v[i + 1]);
	for (size_t i = 0; i + 1 < t.binds.n; i += 2)
		sb_addf(&b, "bind %s (%s)\n", t.binds.v[i], t.binds.v[i + 1]);
	for (size_t i = 0; i + 1 < t.masks.n; i += 2)
		sb_addf(&b, "mask %s (%s)\n", t.masks.v[i], t.masks.v[i + 1]);
	for (size_t i = 0; i < t.env.n; i++)
		sb_addf(&b, "env %s\n", t.env.v[i]);
	for (size_t i = 0; i < t.warnings.n; i++)
		sb_addf(&b, "warn %s\n", t.warnings.v[i]);
	toolmgr_plan_free(&t);
	struct strv mounts = STRV_INIT, vars = STRV_INIT, skipped = STRV_INIT;
	/* the shared root: the fixtures' state dirs hold <state>/cache/shared */
	char *root = toolcache_root(hf->state_dir, "/home/u/proj", CACHE_SHARED);
	toolcache_plan(hf, path, root, &mounts, &vars, &skipped);
	free(root);
	for (size_t i = 0; i + 1 < mounts.n; i += 2)
		sb_addf(&b, "cache %s <- %s\n", mounts.v[i + 1], mounts.v[i]);
	for (size_t i = 0; i + 1 < vars.n; i += 2)
		sb_addf(&b, "cachevar %s=%s\n", vars.v[i], vars.v[i + 1]);
	for (size_t i = 0; i < skipped.n; i++)
		sb_addf(&b, "cacheskip %s\n", skipped.v[i]);
	for (size_t i = 0; toolconfs[i].home_rel; i++) {
		char *h = toolconf_host_path(hf, i);
		if (h && hf_type(hf, h) == HF_FILE)
			sb_addf(&b, "conf %s <- %s/toolconf/%s\n", h, hf->state_dir,
				toolconfs[i].copy);
		free(h);
	}
	strv_free(&mounts);
	strv_free(&vars);
	strv_free(&skipped);
	return sb_steal(&b);
}

static void golden_case(void **state)
{
	const char *name = *state;
	char facts[4200];
	struct hostfacts hf;
	golden_load(data_dir(), name, &hf, facts);
	char *got = render(&hf);
	golden_check(data_dir(), name, got);
	free(got);
	hostfacts_free(&hf);
}

static void filter_case(const char *in, const char *want, int want_removed)
{
	int removed = -1;
	char *got = toolconf_filter(in, &removed);
	if (strcmp(got, want) != 0 || removed != want_removed)
		fail_msg("filter of\n%s\ngave (%d removed)\n%s\nwant (%d)\n%s", in, removed, got,
			 want_removed, want);
	free(got);
}

static void filter(void **state)
{
	(void)state;
	/* npm: the registry stays, every auth line goes */
	filter_case("registry=https://npm.example.com/\n"
		    "//npm.example.com/:_authToken=npm_SECRET\n"
		    "_auth=dXNlcjpwYXNz\n"
		    "//npm.example.com/:_password=cGFzcw==\n"
		    "//npm.example.com/:username=me\n"
		    "always-auth=true\n"
		    "email=me@example.com\n",
		    "registry=https://npm.example.com/\n"
		    "//npm.example.com/:username=me\n"
		    "always-auth=true\n"
		    "email=me@example.com\n",
		    3);
	/* cargo: the source replacement stays, tokens and credential providers go, also a
	 * multi-line array begun on a dropped line */
	filter_case("[source.crates-io]\nreplace-with = \"mirror\"\n"
		    "[source.mirror]\nregistry = \"sparse+https://m.example.com/index/\"\n"
		    "[registry]\ntoken = \"cio_SECRET\"\n"
		    "global-credential-providers = [\n  \"cargo:token\",\n  \"cargo:libsecret\"\n]\n"
		    "[registries.corp]\nindex = \"sparse+https://corp.example.com/\"\n"
		    "credential-provider = \"cargo:token\"\n"
		    "# token = \"cio_OLD\"\n",
		    "[source.crates-io]\nreplace-with = \"mirror\"\n"
		    "[source.mirror]\nregistry = \"sparse+https://m.example.com/index/\"\n"
		    "[registry]\n"
		    "[registries.corp]\nindex = \"sparse+https://corp.example.com/\"\n",
		    7);
	/* pip / uv: an index URL with user:password@ goes, a plain one stays */
	filter_case("[global]\nindex-url = https://user:pw@pypi.example.com/simple\n"
		    "extra-index-url = https://pypi.example.com/simple\n"
		    "trusted-host = pypi.example.com\n",
		    "[global]\nextra-index-url = https://pypi.example.com/simple\n"
		    "trusted-host = pypi.example.com\n",
		    1);
	filter_case("[[index]]\nname = \"corp\"\nurl = \"https://__token__:pypi-SECRET@corp.example/\"\n"
		    "password = \"\"\"\nmulti\nline\n\"\"\"\nkeep = 1\n",
		    "[[index]]\nname = \"corp\"\nkeep = 1\n", 5);
	filter_case("", "", 0);
}

/* verify's writable-mount probe allows exactly the private caches, where the tools expect them */
static void private_mounts(void **state)
{
	(void)state;
	const char *h = "/home/u";
	assert_true(toolcache_is_private_mount(h, "/home/u/.local/state/agentjail/cache/shared/npm",
					       "/home/u/.npm"));
	assert_true(toolcache_is_private_mount(h, "/s/cache/ws/9c09f8055a26c27736ddcc04b4e693af/npm", "/home/u/.npm"));
	assert_true(toolcache_is_private_mount(h, "/s/cache/shared/cargo-registry",
					       "/home/u/.local/cargo/registry"));
	assert_false(toolcache_is_private_mount(h, "/s/cache/shared/npm", "/home/u/.cache/pip"));
	assert_false(toolcache_is_private_mount(h, "/s/cache/shared/npm", "/etc"));
	assert_false(toolcache_is_private_mount(h, "/s/cache/shared/npm-evil", "/home/u/.npm"));
	assert_false(toolcache_is_private_mount(h, "/home/u", "/home/u/.npm"));
	assert_false(toolcache_is_private_mount(h, "/s/cache/shared/cargo-git", "/usr/git"));
	/* not a cache root: an older agentjail's layout, a key of the wrong form, no cache/ */
	assert_false(toolcache_is_private_mount(h, "/s/cache/npm", "/home/u/.npm"));
	assert_false(toolcache_is_private_mount(h, "/s/cache/ws/9c09f8055a26c27736ddcc04b4e693af0/npm", "/home/u/.npm"));
	assert_false(toolcache_is_private_mount(h, "/s/cache/ws/../npm", "/home/u/.npm"));
	assert_false(toolcache_is_private_mount(h, "/s/x/ws/9c09f8055a26c27736ddcc04b4e693af/npm", "/home/u/.npm"));
}

/* a workspace's caches: the first 128 bits of the SHA-256 of its canonical path, in hex */
static void cache_roots(void **state)
{
	(void)state;
	char *r = toolcache_root("/s", "/home/u/proj", CACHE_WORKSPACE);
	assert_string_equal(r, "/s/cache/ws/9c09f8055a26c27736ddcc04b4e693af");
	free(r);
	r = toolcache_root("/s", "/home/u/proj", CACHE_SHARED);
	assert_string_equal(r, "/s/cache/shared");
	free(r);
	char *a = toolcache_root("/s", "/home/u/proj2", CACHE_WORKSPACE);
	char *b = toolcache_root("/s", "/home/u/proj/", CACHE_WORKSPACE);
	assert_string_not_equal(a, b);
	assert_string_not_equal(a, "/s/cache/ws/9c09f8055a26c27736ddcc04b4e693af");
	free(a);
	free(b);
	assert_null(toolcache_root(NULL, "/home/u/proj", CACHE_WORKSPACE));
}

static void mirror_vars(void **state)
{
	(void)state;
	const char *yes[] = {"npm_config_registry", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
			     "CARGO_REGISTRIES_CORP_INDEX", "UV_INDEX_URL", "UV_DEFAULT_INDEX",
			     "GOPROXY", "RUSTUP_DIST_SERVER", NULL};
	const char *no[] = {"CARGO_REGISTRIES_CORP_TOKEN", "CARGO_REGISTRY_TOKEN",
			    "NPM_TOKEN", "UV_INDEX_CORP_PASSWORD", "PIP_PASSWORD",
			    "CARGO_REGISTRIES_CORP_CREDENTIAL_PROVIDER", "GITHUB_TOKEN",
			    "UV_INDEX_CORP_USERNAME_AUTH", "EDITOR", NULL};
	for (size_t i = 0; yes[i]; i++)
		if (!toolenv_mirror_var(yes[i]))
			fail_msg("%s should pass", yes[i]);
	for (size_t i = 0; no[i]; i++)
		if (toolenv_mirror_var(no[i]))
			fail_msg("%s should not pass", no[i]);
	assert_true(toolenv_value_has_credentials("https://u:p@pypi.example.com/simple"));
	assert_true(toolenv_value_has_credentials("https://tok@goproxy.example.com"));
	assert_false(toolenv_value_has_credentials("https://pypi.example.com/simple"));
	assert_false(toolenv_value_has_credentials("https://proxy.golang.org,direct"));
}

int main(void)
{
	const struct CMUnitTest extra[] = {
		cmocka_unit_test(filter),
		cmocka_unit_test(mirror_vars),
		cmocka_unit_test(private_mounts),
		cmocka_unit_test(cache_roots),
	};
	return golden_main("toolmgr", data_dir(), golden_case, extra, sizeof extra / sizeof *extra);
}
