/* agentjail home [ID | --workspace DIR | --all] [clean]: the persisted homes of `--home persist`
 * (doc/design.md §3 step 5). Where each is, its size, its last use, whether a jail uses it; clean
 * removes one (never while a jail uses it) or all. What a jail wrote there is never read or run
 * here: names, types and sizes only (core/host/homeprep.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/host/homeprep.h"
#include "core/plan/homekeep.h"
#include "core/plan/toolcache.h"
#include "core/session/sessfmt.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

static const char usage[] =
	"usage: agentjail home [ID | --workspace DIR] [clean]\n"
	"       agentjail home --all [clean]\n"
	"  a jail run with --home persist (or home = \"persist\" in your configuration) gets its\n"
	"  workspace's own $HOME, kept in agentjail's state directory between runs, instead of an\n"
	"  empty one: dotfiles, shell history and caches of tools agentjail does not know survive.\n"
	"  Never the real home; what one jail leaves there, the next jail of the same workspace\n"
	"  runs (its ~/.bashrc, ~/.gitconfig, …), as it would the workspace's own files\n"
	"  (none)            every persisted home: size, last use, workspace (also --all)\n"
	"  ID                the home of that session's workspace: where it is, size, last use\n"
	"  --workspace DIR   the home of DIR (default: the current directory, for clean)\n"
	"  clean             remove it (refused while a jail uses it); with --all, every one\n"
	"example: agentjail home --workspace ~/src/app clean\n";

/* "2024-03-05 14:03 (3h ago)", or "-" */
static char *when(long long used)
{
	if (used <= 0)
		return xstrdup("-");
	long off = cmd_utc_offset();
	_cleanup_free_ char *t = sessfmt_time(used * 1000, off);
	_cleanup_free_ char *ago = sessfmt_ago(used * 1000, store_now_ms(), off);
	return xasprintf("%.16s (%s)", t, ago);
}

static int list(const char *hdir, const struct home_entry *v, size_t n)
{
	uint64_t all = 0;
	for (size_t i = 0; i < n; i++)
		all += v[i].bytes;
	printf("%s: %.1f MiB\n", hdir, cmd_mib(all));
	for (size_t i = 0; i < n; i++) {
		char day[11] = "-";
		_cleanup_free_ char *t = v[i].used > 0 ? when(v[i].used) : NULL;
		if (t)
			snprintf(day, sizeof day, "%s", t);
		_cleanup_free_ char *ws = cmd_shown_workspace(v[i].workspace, v[i].root);
		printf("  %10.1f MiB  %-10s  %s%s\n", cmd_mib(v[i].bytes), day, ws,
		       v[i].in_use ? "  (in use by a jail)" : "");
	}
	if (!n)
		printf("  (none yet: a jail run with --home persist makes its workspace's)\n");
	return 0;
}

/* The entry of workspace ws (canonical): by its key, or by the workspace it recorded (a
 * directory gone or moved has no canonical form any more). */
static const struct home_entry *find(const struct home_entry *v, size_t n, const char *ws)
{
	_cleanup_free_ char *key = toolcache_key(ws);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(path_basename(v[i].root), key))
			return &v[i];
	for (size_t i = 0; i < n; i++)
		if (v[i].workspace && !strcmp(v[i].workspace, ws))
			return &v[i];
	return NULL;
}

static int show(const char *state, const struct home_entry *h, const char *ws)
{
	_cleanup_free_ char *w = fmt_clean(ws);
	if (!h) {
		_cleanup_free_ char *dir = homekeep_dir(state, ws);
		printf("workspace  %s\nhome       none yet (a jail with --home persist makes it: %s)\n",
		       w, dir);
		return 0;
	}
	_cleanup_free_ char *dir = path_join(h->root, HOMEKEEP_HOME);
	_cleanup_free_ char *t = when(h->used);
	_cleanup_free_ char *shown = cmd_shown_workspace(h->workspace ? h->workspace : ws, h->root);
	printf("workspace  %s\n", shown);
	printf("home       %s\n", dir);
	printf("size       %.1f MiB\n", cmd_mib(h->bytes));
	printf("last used  %s\n", t);
	printf("in use     %s\n", h->in_use ? "yes, by a running jail of this workspace" : "no");
	return 0;
}

static int clean(const char *hdir, const struct home_entry *v, size_t n, const char *ws)
{
	uint64_t freed = 0;
	size_t removed = 0;
	const struct home_entry *one = ws ? find(v, n, ws) : NULL;
	for (size_t i = 0; i < n; i++) {
		if (ws && &v[i] != one)
			continue;
		uint64_t b = 0;
		struct err e = {0};
		if (homeprep_remove(&v[i], &b, &e) < 0) {
			cmd_print_err(&e);
			return 1;
		}
		freed += b;
		removed++;
	}
	_cleanup_free_ char *w = ws ? fmt_clean(ws) : NULL;
	if (ws && !removed) {
		printf("%s: no persisted home for %s (agentjail home lists them)\n", hdir, w);
		return 0;
	}
	printf("%s: %.1f MiB removed (%s)\n", hdir, cmd_mib(freed), w ? w : "every persisted home");
	return 0;
}

/* The workspace of session id (canonical, from its stored policy): 0, or the exit code. */
static int session_workspace(const char *id, char **ws)
{
	_cleanup_store_ struct store *st = NULL;
	if (cmd_store_existing(&st) < 0)
		return 1;
	struct session s;
	int rc = cmd_session_get(st, id, &s);
	if (rc)
		return rc;
	struct policy pol;
	struct err e = {0};
	if (!s.policy_json || policy_from_json(s.policy_json, &pol, &e) < 0) {
		*ws = s.workspace ? xstrdup(s.workspace) : NULL;
	} else {
		*ws = xstrdup(pol.workspace);
		if (pol.home != HOME_PERSIST)
			printf("session %.8s ran with an empty home (--home tmp): nothing of its home "
			       "was kept\n",
			       s.id);
		policy_free(&pol);
	}
	session_free(&s);
	if (!*ws) {
		cmd_warn("home: session %s has no workspace recorded", id);
		return 1;
	}
	return 0;
}

int cmd_home(int argc, char **argv)
{
	static const char *const opts[] = {"clean", "--all", "--workspace", "--help", NULL};
	const char *dir = NULL, *id = NULL, *bad = NULL;
	bool all = false, rm = false, twice = false;
	for (int i = 0; i < argc && !bad && !twice; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(a, "clean"))
			twice = rm, rm = true;
		else if (!strcmp(a, "--all"))
			twice = all, all = true;
		else if (!strcmp(a, "--workspace") && i + 1 < argc)
			twice = dir != NULL, dir = argv[++i];
		else if (!strncmp(a, "--workspace=", 12))
			twice = dir != NULL, dir = a + 12;
		else if (a[0] != '-' && !id)
			id = a;
		else
			bad = a;
	}
	if (bad && !strcmp(bad, "--workspace")) {
		cmd_warn("home: --workspace needs a directory (see `agentjail home --help`)");
		return EXIT_USAGE;
	}
	if (bad)
		return cmd_unknown("home", "argument", bad, opts);
	if (twice || (all && (dir || id)) || (dir && id)) {
		cmd_warn("home: one of ID, --workspace DIR or --all, once, with clean or without (see "
			 "`agentjail home --help`)");
		return EXIT_USAGE;
	}
	_cleanup_free_ char *state = cmd_state_dir();
	_cleanup_free_ char *hdir = path_join(state, "home");
	_cleanup_free_ char *ws = NULL;
	if (id) {
		int rc = session_workspace(id, &ws);
		if (rc)
			return rc;
	} else if (dir || (rm && !all)) {
		ws = cmd_canonical_dir(dir ? dir : ".");
	}
	struct home_entry *v = NULL;
	size_t n = 0;
	struct err e = {0};
	if (homeprep_list(state, &v, &n, &e) < 0) {
		cmd_print_err(&e);
		return 1;
	}
	int rc = rm   ? clean(hdir, v, n, ws)
		 : ws ? show(state, find(v, n, ws), ws)
		      : list(hdir, v, n);
	homeprep_list_free(v, n);
	return rc;
}
