/* agentjail cache [size | clean]: the private package caches jails share (doc/design.md §3b). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/plan/dirs.h"
#include "core/host/toolprep.h"
#include "util/cleanup.h"
#include "util/path.h"

static const char usage[] =
	"usage: agentjail cache [size | clean]\n"
	"  jails never write the host's package caches (cargo's registry and git, npm, pip, uv,\n"
	"  Go modules, Gradle, Maven): they share private ones in agentjail's state directory.\n"
	"  size    how much they hold (the default)\n"
	"  clean   empty them (the next jail starts with empty caches)\n"
	"example: agentjail cache clean\n";

int cmd_cache(int argc, char **argv)
{
	const char *what = argc > 0 ? argv[0] : "size";
	if (!strcmp(what, "--help") || !strcmp(what, "-h")) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc > 1 || (strcmp(what, "size") != 0 && strcmp(what, "clean") != 0)) {
		static const char *const known[] = {"size", "clean", "--help", NULL};
		return cmd_unknown("cache", "argument", argc > 1 ? argv[1] : what, known);
	}
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		cmd_warn("cache: HOME is unset or relative: cannot find agentjail's state directory");
		return 1;
	}
	_cleanup_free_ char *state = dirs_state_dir(getenv("AGENTJAIL_STATE_DIR"),
						      getenv("XDG_STATE_HOME"), home);
	_cleanup_free_ char *dir = path_join(state, "cache");
	uint64_t bytes = 0;
	struct err e = {0};
	bool clean = !strcmp(what, "clean");
	int rc = clean ? toolprep_cache_clean(state, &bytes, &e)
		       : toolprep_cache_size(state, &bytes, &e);
	if (rc < 0) {
		cmd_print_err(&e);
		return 1;
	}
	printf("%s: %.1f MiB%s\n", dir, (double)bytes / (1024.0 * 1024.0),
	       clean ? " removed" : "");
	return 0;
}
