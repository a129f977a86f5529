/* `agentjail quarantine [ID]` and `quarantine restore ITEM`: what the jail's protections moved
 * aside (the violations' moved_to, doc/design.md §5), listed from the session store and put
 * back on request. The items were written by the jailed command: restoring one is the user's
 * decision, confirmed, and never overwrites what is there now. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/session/evdetail.h"
#include "core/session/sessfmt.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/path.h"

static const char usage[] =
	"usage: agentjail quarantine [ID | --all]\n"
	"       agentjail quarantine restore ITEM [--yes]\n"
	"  what the jail moved aside (a protected path that appeared or changed), still there:\n"
	"  the original path and where it lies now; of session ID, or of this workspace's\n"
	"  sessions (every workspace's with --all)\n"
	"  restore ITEM   move ITEM (a path as listed) back to where it was, after asking (--yes:\n"
	"                 without asking); never over a path that exists now\n"
	"example: agentjail quarantine restore ~/.local/state/agentjail/quarantine/…/.envrc\n";

struct item {
	char *path, *moved, *id;
	long long at_ms;
};

static void items_free(struct item *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].moved);
		free(v[i].id);
	}
	free(v);
}

/* The violations of session id whose moved_to still exists, appended to *v. */
static int add_items(struct store *st, const char *id, struct item **v, size_t *n)
{
	struct event *ev = NULL;
	size_t nev = 0;
	struct err e = {0};
	if (store_events(st, id, &ev, &nev, &e) < 0) {
		cmd_print_err(&e);
		return -1;
	}
	for (size_t i = 0; i < nev; i++) {
		json_t *d = ev[i].detail_json ? json_loads(ev[i].detail_json, 0, NULL) : NULL;
		char *path = evdetail_get(d, "path"), *moved = evdetail_get(d, "moved_to");
		struct stat sb;
		if (path && moved && lstat(moved, &sb) == 0) {
			struct item *nv = realloc(*v, (*n + 1) * sizeof **v);
			if (nv) {
				*v = nv;
				nv[*n] = (struct item){path, moved, strdup(id), ev[i].at_ms};
				(*n)++;
				path = moved = NULL;
			}
		}
		free(path);
		free(moved);
		json_decref(d);
	}
	events_free(ev, nev);
	return 0;
}

/* The items of session id (NULL: of this workspace's sessions, or all with `all`). */
static int collect(struct store *st, const char *id, bool all, struct item **v, size_t *n)
{
	if (!st)
		return 0;
	if (id) {
		struct session s;
		int rc = cmd_session_get(st, id, &s);
		if (rc)
			return rc;
		rc = add_items(st, s.id, v, n) < 0 ? 1 : 0;
		session_free(&s);
		return rc;
	}
	_cleanup_free_ char *ws = all ? NULL : realpath(".", NULL);
	struct session *ss = NULL;
	size_t ns = 0;
	struct err e = {0};
	if (store_list(st, ws, 0, &ss, &ns, &e) < 0) {
		cmd_print_err(&e);
		return 1;
	}
	int rc = 0;
	for (size_t i = 0; i < ns && !rc; i++)
		if (ss[i].n_violations > 0 && add_items(st, ss[i].id, v, n) < 0)
			rc = 1;
	sessions_free(ss, ns);
	return rc;
}

static int list(const char *id, bool all)
{
	_cleanup_store_ struct store *st = NULL;
	if (cmd_store_existing(&st) < 0)
		return 1;
	struct item *v = NULL;
	size_t n = 0;
	int rc = collect(st, id, all, &v, &n);
	if (rc) {
		items_free(v, n);
		return rc;
	}
	if (n == 0)
		printf("nothing in the quarantine%s\n",
		       id || all ? "" : " from this workspace (agentjail quarantine --all: every one)");
	long off = cmd_utc_offset();
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *t = sessfmt_time(v[i].at_ms, off);
		_cleanup_free_ char *p = fmt_clean(v[i].path);
		_cleanup_free_ char *m = fmt_clean(v[i].moved);
		printf("%s  %.8s  %s\n    now at %s\n", t, v[i].id, p, m);
	}
	if (n)
		printf("agentjail quarantine restore ITEM puts one back (ITEM: the path after "
		       "'now at')\n");
	items_free(v, n);
	return 0;
}

static int restore(const char *item, bool yes)
{
	_cleanup_free_ char *state = cmd_state_dir();
	_cleanup_free_ char *qdir = path_join(state, "quarantine");
	_cleanup_free_ char *q = realpath(qdir, NULL);
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	_cleanup_free_ char *abs = path_normalize(cwd ? cwd : "/", item);
	size_t ql = q ? strlen(q) : 0;
	if (!q || strncmp(abs, q, ql) != 0 || abs[ql] != '/') {
		cmd_warn("quarantine restore: not in the quarantine (%s): %s", qdir, item);
		return EXIT_USAGE;
	}
	_cleanup_store_ struct store *st = NULL;
	if (cmd_store_existing(&st) < 0)
		return 1;
	struct item *v = NULL;
	size_t n = 0;
	int rc = collect(st, NULL, true, &v, &n);
	const struct item *it = NULL;
	for (size_t i = 0; !rc && i < n; i++)
		if (!strcmp(v[i].moved, abs))
			it = &v[i];
	if (!rc && !it) {
		cmd_warn("quarantine restore: no recorded item %s; agentjail quarantine --all "
			 "lists them",
			 item);
		rc = EXIT_USAGE;
	}
	if (!rc && !yes &&
	    !cmd_confirm("restore %s to %s? It was written inside a jail.", it->moved, it->path)) {
		cmd_warn("quarantine restore: not confirmed; nothing restored (--yes restores "
			 "without asking)");
		rc = EXIT_USAGE;
	}
	if (!rc) {
		/* the way back must be the path recorded: no symlink (the jail may have planted
		 * one in the workspace) among its parents */
		_cleanup_free_ char *parent = path_dirname(it->path);
		_cleanup_free_ char *real = parent ? realpath(parent, NULL) : NULL;
		if (!real || strcmp(real, parent) != 0) {
			cmd_warn("quarantine restore: %s is not the directory it was (missing, or a "
				 "symlink now); nothing restored",
				 parent ? parent : it->path);
			rc = 1;
		}
	}
	if (!rc) {
		/* never over what is there now: RENAME_NOREPLACE, and no copy across filesystems */
		if (renameat2(AT_FDCWD, it->moved, AT_FDCWD, it->path, RENAME_NOREPLACE) < 0) {
			struct err e = {0};
			err_set(&e, errno, it->path, "cannot restore %s", it->moved);
			if (errno == EEXIST)
				err_hint(&e, "that path exists now: move it away first");
			else if (errno == EXDEV)
				err_hint(&e, "another filesystem: copy it by hand if you want it back");
			cmd_print_err(&e);
			rc = 1;
		} else {
			_cleanup_free_ char *p = fmt_clean(it->path);
			printf("restored %s\n", p);
		}
	}
	items_free(v, n);
	return rc;
}

int cmd_quarantine(int argc, char **argv)
{
	if (argc > 0 && !strcmp(argv[0], "restore")) {
		const char *item = NULL;
		bool yes = false;
		for (int i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--yes") || !strcmp(argv[i], "-y"))
				yes = true;
			else if (!item && argv[i][0] != '-')
				item = argv[i];
			else {
				cmd_warn("quarantine restore: unexpected argument %s", argv[i]);
				fputs(usage, stderr);
				return EXIT_USAGE;
			}
		}
		if (!item) {
			cmd_warn("quarantine restore: which ITEM? agentjail quarantine lists them");
			return EXIT_USAGE;
		}
		return restore(item, yes);
	}
	const char *id = NULL;
	bool all = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--all"))
			all = true;
		else if (!id && argv[i][0] != '-')
			id = argv[i];
		else {
			cmd_warn("quarantine: unexpected argument %s", argv[i]);
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	return list(id, all);
}
