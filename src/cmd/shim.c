/* agentjail shim install|remove|status [--dir DIR] [AGENT…] */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/host/hostfacts_probe.h"
#include "core/plan/profile.h"
#include "core/plan/resolve.h"
#include "core/host/shim.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

static const char usage[] =
	"usage: agentjail shim install [--dir DIR] [AGENT...]   link AGENT to agentjail in DIR\n"
	"       agentjail shim remove [--dir DIR] [AGENT...]    remove those links\n"
	"       agentjail shim status [--dir DIR]               what `claude` etc. run now\n"
	"  DIR defaults to ~/.local/share/agentjail/bin; put it first on PATH.\n"
	"  AGENT: claude, codex, gemini, kiro, pi, opencode, aider (default: install those found,\n"
	"  remove all)\n"
	"example: agentjail shim install claude\n";

/* Where `exe` resolves on PATH: first hit (shims included), and the real one past the shims. */
static void where(const char *exe, const char *home, const char *self, char **first, char **real)
{
	struct resolved r;
	struct err e = {0};
	*first = *real = NULL;
	if (hostfacts_resolve(exe, home, "/", NULL, &r, &e) == 0) {
		*first = xstrdup(r.path);
		resolved_free(&r);
	}
	if (hostfacts_resolve(exe, home, "/", self, &r, &e) == 0) {
		*real = xstrdup(r.path);
		resolved_free(&r);
	}
}

/* The first line `path --version` prints (NULL when it cannot be run or says nothing). */
static char *version_of(const char *path)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return NULL;
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (dup2(p[1], 1) < 0 || (null >= 0 && (dup2(null, 0) < 0 || dup2(null, 2) < 0)))
			_exit(127);
		execl(path, path, "--version", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char buf[128];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof buf - 1 && ((r = read(p[0], buf + n, sizeof buf - 1 - n)) > 0 ||
				      (r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return n ? xstrdup(buf) : NULL;
}

/* What a new shim links to (doc/design.md §7): agentjail itself when it is the one on PATH;
 * else the agentjail on PATH when it is the same version (a binary in a build tree installs
 * shims that survive moving the clone), said on stdout; else itself, with a warning that the
 * shim breaks when that binary moves. */
static char *shim_target(const char *self, const char *home)
{
	struct resolved r;
	struct err e = {0};
	_cleanup_free_ char *on_path = NULL;
	if (hostfacts_resolve("agentjail", home, "/", NULL, &r, &e) == 0) {
		on_path = realpath(r.path, NULL);
		resolved_free(&r);
	}
	if (on_path && !strcmp(on_path, self))
		return xstrdup(self);
	_cleanup_free_ char *v = on_path ? version_of(on_path) : NULL;
	if (v && !strcmp(v, "agentjail " AGENTJAIL_VERSION)) {
		printf("the shim points at %s, the installed agentjail on PATH (same version as "
		       "%s)\n",
		       on_path, self);
		return xstrdup(on_path);
	}
	cmd_warn("warning: the shim points into %s, not an installed agentjail; moving or "
		 "deleting it breaks the shim%s%s%s; make install, then agentjail shim install "
		 "again",
		 self, on_path ? " (`agentjail` on PATH is " : "", on_path ? on_path : "",
		 on_path ? (v ? ", another version)" : ", which did not say its version)") : "");
	return xstrdup(self);
}

static bool dir_on_path(const char *dir)
{
	const char *p = getenv("PATH");
	_cleanup_free_ char *copy = xstrdup(p ? p : "");
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (d[0] != '/')
			continue;
		_cleanup_free_ char *n = path_normalize("/", d);
		if (!strcmp(n, dir))
			return true;
	}
	return false;
}

static void path_advice(const char *dir)
{
	const char *rc;
	char *line;
	shim_path_hint(getenv("SHELL"), dir, &rc, &line);
	printf("put the shim directory first on PATH: add this line to %s, then open a new "
	       "shell:\n  %s\n",
	       rc, line);
	free(line);
}

/* The shims of names that something earlier on PATH shadows, each said (issue 26: `claude`
 * still ran unjailed after `shim install`, without a word). */
static bool shadowed(const struct strv *names, const char *dir, const char *home, const char *self)
{
	bool any = false;
	for (size_t i = 0; i < names->n; i++) {
		_cleanup_free_ char *shim = path_join(dir, names->v[i]);
		char *first, *real;
		where(names->v[i], home, self, &first, &real);
		if (first && strcmp(first, shim)) {
			cmd_warn("warning: %s comes before the shim on PATH: `%s` still runs unjailed",
				 first, names->v[i]);
			any = true;
		}
		free(first);
		free(real);
	}
	return any;
}

static int status(const char *dir, const char *home, const char *self)
{
	const struct profile *const *all = profile_all();
	bool on_path = dir_on_path(dir);
	printf("shim directory: %s%s\n", dir, on_path ? "" : " (not on PATH)");
	int warnings = 0;
	for (size_t i = 0; all[i]; i++) {
		const char *exe = all[i]->exe[0];
		enum shim_state st = shim_check(dir, exe);
		_cleanup_free_ char *shim = path_join(dir, exe);
		char *first, *real;
		where(exe, home, self, &first, &real);
		if (st == SHIM_ABSENT) {
			printf("%-9s no shim%s%s\n", exe, real ? "; runs unjailed: " : "",
			       real ? real : "");
		} else if (st == SHIM_FOREIGN) {
			printf("%-9s %s is not an agentjail shim\n", exe, shim);
		} else if (!real) {
			printf("%-9s shim installed, but no real %s on PATH behind it\n", exe, exe);
		} else if (first && !strcmp(first, shim)) {
			printf("%-9s jailed: %s → agentjail → %s\n", exe, shim, real);
		} else if (first) {
			printf("%-9s WARNING: %s comes before the shim on PATH: `%s` runs unjailed\n",
			       exe, first, exe);
			warnings++;
		} else {
			printf("%-9s shim installed, not reached: its directory is not on PATH\n", exe);
			warnings++;
		}
		free(first);
		free(real);
	}
	if (warnings || !on_path)
		path_advice(dir);
	return 0;
}

int cmd_shim(int argc, char **argv)
{
	int crc = cmd_config_profiles(); /* a shim may be for a user profile */
	if (crc)
		return crc;
	if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
		fputs(usage, argc < 1 ? stderr : stdout);
		return argc < 1 ? EXIT_USAGE : 0;
	}
	const char *verb = argv[0];
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		cmd_warn("shim: $HOME is not set");
		return EXIT_USAGE;
	}
	_cleanup_free_ char *dir = NULL;
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	struct strv names = STRV_INIT;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			free(dir);
			dir = path_normalize(cwd ? cwd : "/", argv[++i]);
		} else if (!strncmp(argv[i], "--dir=", 6)) {
			free(dir);
			dir = path_normalize(cwd ? cwd : "/", argv[i] + 6);
		} else if (argv[i][0] == '-') {
			static const char *const known[] = {"--dir", "--help", NULL};
			strv_free(&names);
			return cmd_unknown("shim", "option", argv[i], known);
		} else {
			const struct profile *pr = profile_find(argv[i]);
			if (!pr) {
				cmd_warn("shim: no agent named %s (agentjail profiles lists them)",
					 argv[i]);
				strv_free(&names);
				return EXIT_USAGE;
			}
			if (!strv_contains(&names, pr->exe[0]))
				strv_push(&names, pr->exe[0]);
		}
	}
	if (!dir)
		dir = shim_default_dir(home, getenv("XDG_DATA_HOME"));
	_cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
	if (!self) {
		cmd_warn("shim: cannot find agentjail's own binary: %s", strerror(errno));
		strv_free(&names);
		return EXIT_JAIL;
	}
	int rc = 0;
	const struct profile *const *all = profile_all();
	if (!strcmp(verb, "status")) {
		rc = status(dir, home, self);
	} else if (!strcmp(verb, "install")) {
		bool chosen = names.n > 0;
		for (size_t i = 0; !chosen && all[i]; i++) {
			char *first, *real;
			where(all[i]->exe[0], home, self, &first, &real);
			if (real)
				strv_push(&names, all[i]->exe[0]);
			free(first);
			free(real);
		}
		if (!names.n) {
			cmd_warn("shim: none of the known agents is on PATH; name them: agentjail "
				 "shim install claude codex");
			rc = EXIT_USAGE;
		}
		_cleanup_free_ char *target = names.n ? shim_target(self, home) : NULL;
		for (size_t i = 0; i < names.n; i++) {
			struct err e = {0};
			bool existed;
			if (shim_install(dir, names.v[i], target, &existed, &e) < 0) {
				cmd_print_err(&e);
				rc = 1;
				continue;
			}
			printf("%s %s/%s → %s\n", existed ? "already there:" : "installed:", dir,
			       names.v[i], target);
		}
		if (rc == 0 && !dir_on_path(dir))
			path_advice(dir);
		else if (rc == 0 && shadowed(&names, dir, home, self))
			path_advice(dir);
	} else if (!strcmp(verb, "remove")) {
		if (!names.n) /* no name: every agent's (issue 26: the loop stopped after one) */
			for (size_t i = 0; all[i]; i++)
				strv_push(&names, all[i]->exe[0]);
		size_t removed = 0;
		for (size_t i = 0; i < names.n; i++) {
			struct err e = {0};
			enum shim_state before = shim_check(dir, names.v[i]);
			if (shim_remove(dir, names.v[i], &e) < 0) {
				cmd_print_err(&e);
				rc = 1;
			} else if (before == SHIM_OURS) {
				printf("removed: %s/%s\n", dir, names.v[i]);
				removed++;
			}
		}
		if (!removed && !rc)
			printf("no shim to remove in %s\n", dir);
		/* our own default directory goes when it is empty; rmdir fails otherwise */
		_cleanup_free_ char *def = shim_default_dir(home, getenv("XDG_DATA_HOME"));
		if (!strcmp(def, dir) && rmdir(dir) < 0 && errno != ENOENT && errno != ENOTEMPTY)
			cmd_warn("shim: cannot remove %s: %s", dir, strerror(errno));
	} else {
		static const char *const known[] = {"install", "remove", "status", "--help", NULL};
		rc = cmd_unknown("shim", "action", verb, known);
	}
	strv_free(&names);
	return rc;
}
