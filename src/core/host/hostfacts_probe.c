/* hostfacts_probe: fill the fact table from the running system (the only impure part of the
 * argv builder's inputs) and canonicalize the policy's paths. */
#include "core/host/hostfacts_probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "core/confine/cgroup.h"
#include "core/plan/dirs.h"
#include "core/host/etcscan.h"
#include "core/host/gitinfo.h"
#include "core/plan/gitprotect.h"
#include "core/host/gitscan.h"
#include "core/plan/resolve.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"
#include "util/uuid.h"

static enum hf_type type_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR:
		return HF_DIR;
	case S_IFREG:
		return HF_FILE;
	case S_IFLNK:
		return HF_SYMLINK;
	case S_IFSOCK:
		return HF_SOCKET;
	case S_IFCHR:
		return HF_CHR;
	case S_IFBLK:
		return HF_BLK;
	case S_IFIFO:
		return HF_FIFO;
	default:
		return HF_OTHER;
	}
}

static int probe_lstat(struct hostfacts *hf, const char *path, struct hf_stat *out)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return -1;
	out->type = type_of(st.st_mode);
	out->mode = st.st_mode & 07777;
	out->uid = st.st_uid;
	out->link = NULL;
	if (out->type == HF_SYMLINK) {
		char buf[PATH_MAX];
		ssize_t n = readlink(path, buf, sizeof buf - 1);
		if (n < 0)
			return -1;
		buf[n] = '\0';
		out->link = xstrdup(buf);
	}
	return 0;
}

static int probe_list(struct hostfacts *hf, const char *path, struct strv *names)
{
	_cleanup_closedir_ DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		strv_push(names, de->d_name);
	}
	return 0;
}

static int probe_head(struct hostfacts *hf, const char *path, char **out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	char buf[256];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	if (n < 2 || buf[0] != '#' || buf[1] != '!') {
		*out = xstrdup("");
		return 0;
	}
	*out = xstrndup(buf, strcspn(buf, "\r\n"));
	return 0;
}

/* realpath that keeps a missing path (normalized) instead of failing */
static char *canon_or_keep(const char *p)
{
	char *r = realpath(p, NULL);
	return r ? r : xstrdup(p);
}

static void canon_list(struct strv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		char *c = canon_or_keep(v->v[i]);
		free(v->v[i]);
		v->v[i] = c;
	}
}

static int find_home(struct hostfacts *hf, struct err *e)
{
	const char *h = getenv("HOME");
	if (h && h[0] == '/') {
		hf->home = path_normalize("/", h);
	} else {
		struct passwd *pw = getpwuid(hf->uid);
		if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/')
			return err_set(e, 0, "$HOME", "cannot tell your home directory");
		hf->home = path_normalize("/", pw->pw_dir);
	}
	const char *u = getenv("USER");
	if (u && *u) {
		hf->user = xstrdup(u);
	} else {
		struct passwd *pw = getpwuid(hf->uid);
		hf->user = xstrdup(pw && pw->pw_name ? pw->pw_name : "user");
	}
	return 0;
}

static int canon_workspace(struct policy *pol, struct err *e)
{
	char *ws = realpath(pol->workspace, NULL);
	if (!ws) {
		err_set(e, errno, pol->workspace, "cannot use the workspace");
		err_hint(e, "pass an existing directory with --workspace");
		return -1;
	}
	struct stat st;
	if (stat(ws, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(ws);
		err_set(e, ENOTDIR, pol->workspace, "cannot use the workspace");
		return -1;
	}
	free(pol->workspace);
	pol->workspace = ws;
	return 0;
}

int policy_canonicalize(struct policy *pol, struct err *e)
{
	if (canon_workspace(pol, e) < 0)
		return -1;
	/* rw, ro and hide are resolved over the host facts, with their rules (plan/bindpath.h) */
	canon_list(&pol->dev);
	return 0;
}

/* A tree bound read-only into a root jail: scanned (and cached) in root's scan directory
 * (treescan_cache_dir). A scan that fails makes the tree answer itself (masked whole, see
 * hf_unreadable). A cache past half its age is renewed in the background, so that a run every
 * half hour never waits for the scan of /usr. */
static int probe_scan(struct hostfacts *hf, const char *root, struct strv *out)
{
	if (!hf->scan_dir)
		return -1;
	struct err e = {0};
	struct scan_info info;
	if (treescan_bound(hf->scan_dir, root, false, out, &info, &e) < 0)
		return -1;
	if (info.aging)
		treescan_refresh_detached(hf->self_exe, hf->scan_dir, root);
	return 0;
}

void hostfacts_use_host(struct hostfacts *hf)
{
	hf->probe = probe_lstat;
	hf->list = probe_list;
	hf->head = probe_head;
	hf->scan = probe_scan;
}

int hostfacts_resolve(const char *name, const char *home, const char *cwd, const char *skip_real,
		      struct resolved *out, struct err *e)
{
	struct hostfacts hf;
	hostfacts_init(&hf);
	hostfacts_use_host(&hf);
	hf.home = xstrdup(home);
	hf.cwd = xstrdup(cwd);
	int rc = resolve_command(&hf, name, getenv("PATH"), skip_real, out, e);
	hostfacts_free(&hf);
	return rc;
}

/* The workspace's git dir, its common dir and their submodule git dirs, when one is a
 * repository of its own (not a linked worktree's, whose hooks are the common dir's) and has no
 * hooks/, get an empty one, as `git init` makes it: a directory can be bound read-only, a
 * missing one can only be watched. The one thing agentjail creates in the user's tree; nested
 * repositories (test fixtures, vendored clones) are left as they are, their hooks watched. */
static void ensure_hooks(struct hostfacts *hf)
{
	struct strv dirs = STRV_INIT;
	gitprotect_gitdirs(hf, &dirs);
	for (size_t i = 0; i < dirs.n; i++) {
		_cleanup_free_ char *cd = path_join(dirs.v[i], "commondir");
		_cleanup_free_ char *hooks = path_join(dirs.v[i], "hooks");
		bool own = (hf->gitdir && path_is_under(dirs.v[i], hf->gitdir)) ||
			   (hf->commondir && path_is_under(dirs.v[i], hf->commondir));
		if (!own || hf_type(hf, cd) != HF_MISSING || hf_type(hf, hooks) != HF_MISSING)
			continue;
		if (mkdir(hooks, 0755) < 0)
			continue; /* then it stays watched, as before */
		struct hf_stat st;
		if (probe_lstat(hf, hooks, &st) == 0) {
			hf_add(hf, hooks, st.type, st.mode, st.uid, NULL);
			free(st.link);
		}
	}
	strv_free(&dirs);
}

/* The git facts of the workspace (doc/design.md §3 steps 6 and 7): its git dir and common dir,
 * validated (a refusal is kept for the builder, which fails with it: exit 2); the repositories
 * nested in it (a bounded walk, see gitscan.h); an empty hooks/ where one is missing. */
static int gather_git(struct hostfacts *hf, const struct policy *pol, struct err *e)
{
	struct git_info gi = {0};
	if (git_resolve(pol->workspace, hf->home, &gi, e) < 0)
		return -1;
	const char *forbidden[] = {hf->home, hf->state_dir, hf->config_dir, NULL};
	struct err refused = {0};
	if (git_check_pointers(pol->workspace, forbidden, &gi, &refused) < 0) {
		hf->git_refused = xmalloc(sizeof *hf->git_refused);
		*hf->git_refused = refused;
		git_info_free(&gi);
		return 0;
	}
	hf->gitdir = steal_pointer(&gi.gitdir);
	hf->commondir = steal_pointer(&gi.commondir);
	hf->hooks_path = steal_pointer(&gi.hooks_path);
	strv_copy(&hf->git_includes, &gi.includes);
	git_info_free(&gi);
	if (pol->fs != FS_WORKSPACE_WRITE)
		return 0;
	hf->nested_since = (long long)time(NULL);
	if (gitscan_walk(pol->workspace, GITSCAN_MAX_DIRS, &hf->nested_git, &hf->nested_truncated,
			 e) < 0)
		return -1;
	/* submodule git dirs, known now, so that only new ones are reported after the run */
	const char *top[] = {hf->gitdir, hf->commondir};
	for (size_t i = 0; i < 2; i++)
		if (top[i])
			gitscan_modules(top[i], &hf->nested_git);
	for (size_t i = 0, n = hf->nested_git.n; i < n; i++)
		gitscan_modules(hf->nested_git.v[i], &hf->nested_git);
	ensure_hooks(hf);
	return 0;
}

/* The host's RAM and how a jail's limits can be enforced here (cgroup.h). */
static void gather_limits(struct hostfacts *hf)
{
	struct sysinfo si;
	if (sysinfo(&si) == 0)
		hf->mem_total = (unsigned long long)si.totalram * si.mem_unit;
	struct cg_probe cp;
	cg_probe_host(&cp);
	hf->limits_mech = (int)cp.mech;
	hf->cgroup_parent = cp.parent;
	hf->limits_why = xstrdup(cp.why);
}

int hostfacts_for_paths(struct hostfacts *hf, struct err *e)
{
	hostfacts_use_host(hf);
	hf->uid = getuid();
	hf->gid = getgid();
	if (find_home(hf, e) < 0)
		return -1;
	_cleanup_free_ char *state = dirs_state_dir(getenv("AGENTJAIL_STATE_DIR"),
						      getenv("XDG_STATE_HOME"), hf->home);
	hf->state_dir = canon_or_keep(state);
	hf->config_dir = dirs_config_dir(getenv("XDG_CONFIG_HOME"), hf->home);
	return 0;
}

int hostfacts_gather(struct hostfacts *hf, struct policy *pol, const struct strv *cmd,
		     char **environ_, struct err *e)
{
	if (hostfacts_for_paths(hf, e) < 0)
		return -1;
	strv_push_all(&hf->env, environ_);
	char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return err_set(e, errno, ".", "cannot read the current directory");
	hf->cwd = cwd;

	char *self = fs_self_exe();
	if (!self)
		return err_set(e, errno, "/proc/self/exe", "cannot find agentjail's own binary");
	hf->self_exe = self;

	char *resolv = realpath("/etc/resolv.conf", NULL);
	if (resolv && path_is_under(resolv, "/run"))
		hf->resolv_target = resolv;
	else
		free(resolv);

	if (hf->uid == 0 && pol->fs != FS_DANGER_FULL) {
		hf->scan_dir = treescan_cache_dir(hf->state_dir);
		_cleanup_free_ char *cache =
			hf->scan_dir ? path_join(hf->scan_dir, "etcscan.cache") : NULL;
		if (etcscan_get("/etc", cache, false, &hf->etc_unreadable, e) < 0)
			return -1;
	}


	if (gather_git(hf, pol, e) < 0)
		return -1;

	if (!hf->session_id && !(hf->session_id = uuid_v4_new(e)))
		return -1;
	gather_limits(hf);
	return 0;
}
