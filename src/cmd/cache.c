/* agentjail cache [size | clean [--workspace DIR | --all]]: the private caches of the jails,
 * one set per workspace unless `cache = "shared"` (doc/design.md §3 step 5). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "core/host/etcscan.h"
#include "core/host/toolprep.h"
#include "core/plan/dirs.h"
#include "core/plan/toolcache.h"
#include "core/session/sessfmt.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static const char usage[] =
	"usage: agentjail cache [size | clean [--workspace DIR | --all]]\n"
	"  jails never write the host's package caches (cargo's registry and git, npm, pip, uv,\n"
	"  Go modules, Gradle, Maven) nor what some agents run later (opencode's ~/.cache/opencode,\n"
	"  codex's bundled skills): each workspace's jails get their own, in agentjail's state\n"
	"  directory, so one project's jail cannot plant a package another project's jail builds\n"
	"  (`cache = \"shared\"` in ~/.config/agentjail/config.toml: one set for all workspaces)\n"
	"  size                    what each workspace's caches hold (the default)\n"
	"  clean                   remove the current directory's (its next jail starts empty)\n"
	"  clean --workspace DIR   remove DIR's\n"
	"  clean --all             remove every cache: all workspaces', the shared ones, and those\n"
	"                          an older agentjail left\n"
	"example: agentjail cache clean --all\n";

static int size(const char *cdir, const struct cache_entry *v, size_t n)
{
	uint64_t all = 0, old = 0;
	for (size_t i = 0; i < n; i++)
		all += v[i].bytes;
	printf("%s: %.1f MiB\n", cdir, cmd_mib(all));
	struct strbuf olds = STRBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		const struct cache_entry *c = &v[i];
		if (c->kind == CACHE_KIND_OLD) {
			old += c->bytes;
			sb_addf(&olds, "%s%s", olds.len ? ", " : "", path_basename(c->dir));
			continue;
		}
		char when[16] = "-";
		struct tm tm;
		time_t t = (time_t)c->used;
		if (c->used > 0 && localtime_r(&t, &tm))
			strftime(when, sizeof when, "%Y-%m-%d", &tm);
		_cleanup_free_ char *what = c->kind == CACHE_KIND_SHARED
						    ? xstrdup("every workspace (cache = \"shared\")")
						    : cmd_shown_workspace(c->workspace, c->dir);
		printf("  %10.1f MiB  %-10s  %s\n", cmd_mib(c->bytes), when, what);
	}
	if (olds.len) {
		_cleanup_free_ char *names = fmt_clean(sb_str(&olds));
		printf("  %10.1f MiB  %-10s  left by an older agentjail, shared by every workspace and "
		       "no longer used (%s): agentjail cache clean --all removes them\n",
		       cmd_mib(old), "-", names);
	}
	sb_free(&olds);
	if (!n)
		printf("  (no cache yet: a jail makes its workspace's on its first run)\n");
	return 0;
}

/* Whether entry c is the cache of workspace ws (canonical): by its key, or by the workspace it
 * recorded (a directory that is gone or moved has no canonical form any more). */
static bool is_workspace(const struct cache_entry *c, const char *ws)
{
	if (c->kind != CACHE_KIND_WORKSPACE)
		return false;
	_cleanup_free_ char *key = toolcache_key(ws);
	return !strcmp(path_basename(c->dir), key) || (c->workspace && !strcmp(c->workspace, ws));
}

static int clean(const char *cdir, const struct cache_entry *v, size_t n, const char *ws)
{
	uint64_t freed = 0;
	size_t removed = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cache_entry *c = &v[i];
		if (ws && !is_workspace(c, ws))
			continue;
		uint64_t b = 0;
		struct err e = {0};
		if (toolprep_cache_remove(c, &b, &e) < 0) {
			cmd_print_err(&e);
			return 1;
		}
		freed += b;
		removed++;
	}
	if (ws && !removed) {
		_cleanup_free_ char *w = fmt_clean(ws);
		printf("%s: no cache for %s (agentjail cache size lists them; clean --all removes "
		       "every one)\n",
		       cdir, w);
		return 0;
	}
	_cleanup_free_ char *w = ws ? fmt_clean(ws) : NULL;
	printf("%s: %.1f MiB removed (%s)\n", cdir, cmd_mib(freed), w ? w : "every cache");
	return 0;
}

int cmd_cache(int argc, char **argv)
{
	const char *what = argc > 0 ? argv[0] : "size";
	if (!strcmp(what, "--help") || !strcmp(what, "-h")) {
		fputs(usage, stdout);
		return 0;
	}
	const char *dir = NULL, *bad = NULL; /* bad: the argument that is not one */
	bool all = false;
	static const char *const verbs[] = {"size", "clean", "--help", NULL};
	static const char *const clean_opts[] = {"--all", "--workspace", NULL};
	const char *const *known = verbs;
	if (!strcmp(what, "size")) {
		bad = argc > 1 ? argv[1] : NULL;
		known = NULL;
	} else if (!strcmp(what, "clean")) {
		known = clean_opts;
		for (int i = 1; i < argc && !bad; i++) {
			if (!strcmp(argv[i], "--all") && !dir)
				all = true;
			else if (!strcmp(argv[i], "--workspace") && i + 1 < argc && !all && !dir)
				dir = argv[++i];
			else if (!strncmp(argv[i], "--workspace=", 12) && !all && !dir)
				dir = argv[i] + 12;
			else
				bad = argv[i];
		}
	} else {
		bad = what;
	}
	if (bad && known == clean_opts && (!strcmp(bad, "--all") || !strncmp(bad, "--workspace", 11))) {
		cmd_warn("cache clean: --all, or --workspace DIR, once (see `agentjail cache --help`)");
		return EXIT_USAGE;
	}
	if (bad)
		return cmd_unknown("cache", "argument", bad, known);
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		cmd_warn("cache: HOME is unset or relative: cannot find agentjail's state directory");
		return 1;
	}
	_cleanup_free_ char *state = dirs_state_dir(getenv("AGENTJAIL_STATE_DIR"),
						      getenv("XDG_STATE_HOME"), home);
	_cleanup_free_ char *cdir = path_join(state, "cache");
	struct cache_entry *v = NULL;
	size_t n = 0;
	struct err e = {0};
	if (toolprep_cache_list(state, &v, &n, &e) < 0) {
		cmd_print_err(&e);
		return 1;
	}
	int rc;
	if (!strcmp(what, "size")) {
		rc = size(cdir, v, n);
	} else {
		_cleanup_free_ char *ws = all ? NULL : cmd_canonical_dir(dir ? dir : ".");
		rc = clean(cdir, v, n, ws);
	}
	toolprep_cache_list_free(v, n);
	return rc;
}

int cmd_rescan(int argc, char **argv)
{
	if (argc != 2 || argv[0][0] != '/' || argv[1][0] != '/') {
		cmd_warn("__rescan needs a cache directory and a tree, both absolute (a run starts it)");
		return EXIT_USAGE;
	}
	return treescan_rescan(argv[0], argv[1]) < 0 ? 1 : 0;
}
