/* probes, categories "filesystem" and "devices": what the jail may write, read and link,
 * the protected paths, git metadata, and a minimal /dev. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Filesystem                                                                              */

static const char *tok(const struct probe_ctx *c)
{
	return c->token ? c->token : "probe";
}

/* The mount point of the jail's private tmpfs that holds dir (/tmp, /var/tmp, /run, /dev/shm:
 * bwrap makes the parents of deeper mounts there), or NULL. Writing in it reaches no host file. */
static char *private_tmpfs_of(const char *dir)
{
	static const char *const priv[] = {"/tmp", "/var/tmp", "/run", "/dev/shm", NULL};
	_cleanup_free_ char *mi = pr_read_all("/proc/self/mountinfo");
	struct mnt_entry m;
	char best[PATH_MAX] = "", type[64] = "";
	for (const char *p = mi ? mi : ""; pr_mnt_next(&p, &m);)
		if (path_is_under(dir, m.point) && strlen(m.point) >= strlen(best)) {
			snprintf(best, sizeof best, "%s", m.point);
			snprintf(type, sizeof type, "%s", m.fstype);
		}
	return !strcmp(type, "tmpfs") && pr_in_list(best, priv) ? xstrdup(best) : NULL;
}

static void expect_unwritable(const struct probe_ctx *c, struct probe_out *o, const char *dir)
{
	if (!pr_is_dir(dir)) {
		pr_set(o, PROBE_SKIP, "%s does not exist here", dir);
		return;
	}
	int rc = pr_try_create(dir, tok(c));
	int err = errno;
	const char *why = pr_writable_by_policy(c, dir);
	_cleanup_free_ char *priv = rc == 0 && !why ? private_tmpfs_of(dir) : NULL;
	if (rc == 0 && why)
		pr_set(o, PROBE_WARN, "%s is writable, as %s makes it", dir, why);
	else if (priv)
		pr_set(o, PROBE_PASS, "%s is on the jail's private %s tmpfs: no host file is reached",
		    dir, priv);
	else if (rc == 0)
		pr_set(o, PROBE_FAIL, "created a file in %s (removed)", dir);
	else
		pr_set(o, PROBE_PASS, "cannot create a file in %s: %s", dir, pr_ename(err));
}

void p_write_usr(const struct probe_ctx *c, struct probe_out *o)
{
	expect_unwritable(c, o, "/usr");
}

void p_write_etc(const struct probe_ctx *c, struct probe_out *o)
{
	expect_unwritable(c, o, "/etc");
}

void p_write_root(const struct probe_ctx *c, struct probe_out *o)
{
	expect_unwritable(c, o, "/");
}

void p_write_home_parent(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->home) {
		pr_set(o, PROBE_SKIP, "no --home given");
		return;
	}
	_cleanup_free_ char *parent = path_dirname(c->home);
	expect_unwritable(c, o, parent);
}

void p_workspace(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->workspace) {
		pr_set(o, PROBE_SKIP, "no --workspace given");
		return;
	}
	int rc = pr_try_create(c->workspace, tok(c));
	int err = errno;
	bool want = pr_writable_by_policy(c, c->workspace) != NULL;
	const char *fs = fs_mode_name(c->fs);
	if (rc == 0 && want)
		pr_set(o, PROBE_PASS, "writable, as %s says (a file was created and removed)", fs);
	else if (rc == 0)
		pr_set(o, PROBE_FAIL,
		    "writable although the policy is %s (a file was created and "
		    "removed)",
		    fs);
	else if (want)
		pr_set(o, PROBE_FAIL, "not writable (%s) although the policy is %s", pr_ename(err), fs);
	else
		pr_set(o, PROBE_PASS, "read-only, as %s says (%s)", fs, pr_ename(err));
}

/* Writable without changing it: a directory by creating and removing a file in it, a regular
 * file by opening it for writing (no truncation, nothing written). */
static bool path_writable(const char *p, const char *token)
{
	struct stat st;
	if (lstat(p, &st) < 0)
		return false;
	if (S_ISDIR(st.st_mode))
		return pr_try_create(p, token) == 0;
	if (!S_ISREG(st.st_mode))
		return false;
	int fd = open(p, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	(void)close(fd);
	return true;
}

/* The protected paths of the workspace that exist. */
static void protected_existing(const char *ws, struct strv *out)
{
	for (size_t i = 0; bw_protected_names[i]; i++) {
		_cleanup_free_ char *p = path_join(ws, bw_protected_names[i]);
		if (pr_exists(p))
			strv_push(out, p);
	}
	_cleanup_free_ char *claude = path_join(ws, ".claude");
	_cleanup_closedir_ DIR *d = opendir(claude);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "settings", 8) && strstr(de->d_name, ".json"))
			strv_push_take(out, path_join(claude, de->d_name));
}

void p_protected(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->workspace) {
		pr_set(o, PROBE_SKIP, "no --workspace given");
		return;
	}
	struct strv found = STRV_INIT;
	protected_existing(c->workspace, &found);
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0;
	for (size_t i = 0; i < found.n; i++)
		if (path_writable(found.v[i], tok(c)))
			pr_list_add(&bad, &nbad, path_below(found.v[i], c->workspace));
	if (!found.n)
		pr_set(o, PROBE_SKIP,
		    "no protected path (.git/hooks, .bashrc, ...) exists in the "
		    "workspace");
	else if (nbad)
		pr_set(o, PROBE_FAIL, "%d of %zu protected paths writable: %s", nbad, found.n,
		    sb_str(&bad));
	else
		pr_set(o, PROBE_PASS, "%zu protected paths read-only (%s%s)", found.n,
		    path_below(found.v[0], c->workspace), found.n > 1 ? ", ..." : "");
	sb_free(&bad);
	strv_free(&found);
}

void p_canary(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->canary) {
		pr_set(o, PROBE_SKIP, "no canary file on the host");
		return;
	}
	char buf[256];
	ssize_t n = fs_read_small(c->canary, buf, sizeof buf);
	const char *why = pr_visible_by_policy(c, c->canary);
	if (n < 0)
		pr_set(o, PROBE_PASS, "the canary in $HOME is out of reach: %s", pr_ename(errno));
	else if (c->token && strstr(buf, c->token))
		pr_set(o, why ? PROBE_WARN : PROBE_FAIL, "the canary %s is readable%s%s", c->canary,
		    why ? ", as " : "", why ? why : "");
	else
		pr_set(o, PROBE_PASS, "%s opens but does not hold the canary (masked)", c->canary);
}

void p_ssh(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->ssh_dir) {
		pr_set(o, PROBE_SKIP, "no ~/.ssh on the host");
		return;
	}
	_cleanup_closedir_ DIR *d = opendir(c->ssh_dir);
	if (!d) {
		pr_set(o, PROBE_PASS, "%s is out of reach: %s", c->ssh_dir, pr_ename(errno));
		return;
	}
	const char *why = pr_visible_by_policy(c, c->ssh_dir);
	struct dirent *de;
	int listed = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		listed++;
		int fd = openat(dirfd(d), de->d_name,
				O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		char b;
		if (fd >= 0 && read(fd, &b, 1) == 1) {
			(void)close(fd);
			pr_set(o, why ? PROBE_WARN : PROBE_FAIL, "%s/%s is readable%s%s", c->ssh_dir,
			    de->d_name, why ? ", as " : "", why ? why : "");
			return;
		}
		if (fd >= 0)
			(void)close(fd);
	}
	if (listed)
		pr_set(o, PROBE_WARN, "%s lists %d names, none readable", c->ssh_dir, listed);
	else
		pr_set(o, PROBE_PASS, "%s is empty here", c->ssh_dir);
}

void p_shadow(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char buf[64];
	ssize_t n = fs_read_small("/etc/shadow", buf, sizeof buf);
	if (n < 0 && errno == ENOENT)
		pr_set(o, PROBE_SKIP, "no /etc/shadow on this host");
	else if (n < 0)
		pr_set(o, PROBE_PASS, "/etc/shadow: %s", pr_ename(errno));
	else if (n == 0)
		pr_set(o, PROBE_PASS, "/etc/shadow is masked (empty)");
	else
		pr_set(o, PROBE_FAIL, "/etc/shadow is readable");
}

/* A hard link made inside the jail to a file outside would stay behind (in the workspace, or in
 * a directory the host shares) pointing at that file. */
void p_hardlink(const struct probe_ctx *c, struct probe_out *o)
{
	const char *dirs[] = {c->workspace, c->scratch};
	struct strbuf seen = STRBUF_INIT;
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		if (!dirs[i])
			continue;
		_cleanup_free_ char *l = xasprintf("%s/." BAIT_PREFIX "link-%s", dirs[i], tok(c));
		if (link("/etc/passwd", l) == 0) {
			(void)unlink(l);
			pr_set(o, PROBE_FAIL, "hard-linked /etc/passwd into %s (removed)", dirs[i]);
			sb_free(&seen);
			return;
		}
		sb_addf(&seen, "%s%s: %s", seen.len ? ", " : "", dirs[i], pr_ename(errno));
	}
	if (seen.len)
		pr_set(o, PROBE_PASS, "link(/etc/passwd): %s", sb_str(&seen));
	else
		pr_set(o, PROBE_SKIP, "no writable directory to link into");
	sb_free(&seen);
}

void p_mknod(const struct probe_ctx *c, struct probe_out *o)
{
	if (!pr_scratch_target(c, o))
		return;
	_cleanup_free_ char *p = path_join(c->scratch, "null-copy");
	if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0) {
		(void)unlink(p);
		pr_set(o, PROBE_FAIL, "created a character device node (1:3) in %s (removed)",
		    c->scratch);
	} else {
		pr_set(o, PROBE_PASS, "mknod(char 1:3) in %s: %s", c->scratch, pr_ename(errno));
	}
}

void p_git_rename(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->workspace) {
		pr_set(o, PROBE_SKIP, "no --workspace given");
		return;
	}
	_cleanup_free_ char *git = path_join(c->workspace, ".git");
	if (!pr_exists(git)) {
		pr_set(o, PROBE_SKIP, "no .git in the workspace");
		return;
	}
	_cleanup_free_ char *moved = xasprintf("%s-" BAIT_PREFIX "%s", git, tok(c));
	if (rename(git, moved) < 0) {
		pr_set(o, PROBE_PASS, "rename(.git): %s", pr_ename(errno));
		return;
	}
	if (rename(moved, git) < 0)
		pr_set(o, PROBE_FAIL,
		    ".git could be renamed, and renaming it back failed (%s): it is "
		    "now %s",
		    pr_ename(errno), moved);
	else
		pr_set(o, PROBE_FAIL, ".git could be renamed (renamed back)");
}

/* The git dirs in reach from inside: the workspace's (a .git directory, or the one a .git file
 * names), its common dir, and the submodule and worktree git dirs under each. */
static void git_dirs_inside(const char *ws, struct strv *out)
{
	struct git_info gi = {0};
	struct err ignored = {0};
	if (git_resolve(ws, NULL, &gi, &ignored) < 0)
		return;
	const char *top[] = {gi.gitdir, gi.commondir};
	for (size_t i = 0; i < 2; i++)
		if (top[i] && pr_is_dir(top[i]) && !strv_contains(out, top[i]))
			strv_push(out, top[i]);
	git_info_free(&gi);
	for (size_t d = 0, n = out->n; d < n; d++) {
		gitscan_modules(out->v[d], out);
		_cleanup_free_ char *wts = path_join(out->v[d], "worktrees");
		_cleanup_closedir_ DIR *dir = opendir(wts);
		struct dirent *de;
		while (dir && (de = readdir(dir)))
			if (de->d_name[0] != '.')
				strv_push_take(out, path_join(wts, de->d_name));
	}
}

/* What makes git run a command (gitprotect.h) in every git dir in reach: read-only when it
 * exists; one that does not exist cannot be bound, it is watched (moved aside after the run). */
void p_git_metadata(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->workspace) {
		pr_set(o, PROBE_SKIP, "no --workspace given");
		return;
	}
	struct strv dirs = STRV_INIT;
	git_dirs_inside(c->workspace, &dirs);
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0;
	size_t tested = 0, absent = 0;
	for (size_t d = 0; d < dirs.n; d++) {
		for (size_t i = 0; git_exec_names[i]; i++) {
			_cleanup_free_ char *p = path_join(dirs.v[d], git_exec_names[i]);
			if (!pr_exists(p)) {
				absent++;
				continue;
			}
			tested++;
			if (path_writable(p, tok(c)))
				pr_list_add(&bad, &nbad, p);
		}
	}
	if (!dirs.n)
		pr_set(o, PROBE_SKIP, "no git directory in the workspace");
	else if (nbad)
		pr_set(o, PROBE_FAIL, "%d git metadata paths writable: %s", nbad, sb_str(&bad));
	else
		pr_set(o, PROBE_PASS,
		    "%zu git metadata paths read-only in %zu git dirs (config, hooks, info...); "
		    "%zu absent, watched",
		    tested, dirs.n, absent);
	sb_free(&bad);
	strv_free(&dirs);
}

/* ======================================================================================= */
/* Devices                                                                                 */

static bool dev_entry_ok(const struct probe_ctx *c, const char *name, const struct stat *st)
{
	static const char *const dirs[] = {"pts", "shm", "mqueue", "fd", NULL};
	char full[PATH_MAX];
	snprintf(full, sizeof full, "/dev/%s", name);
	if (S_ISLNK(st->st_mode) || S_ISREG(st->st_mode))
		return true; /* ptmx, fd, stdin…: links into /proc and pts */
	if (S_ISDIR(st->st_mode))
		return pr_in_list(name, dirs);
	if (S_ISCHR(st->st_mode))
		return pr_in_list(full, pr_dev_nodes) || !strcmp(name, "ptmx") ||
		       strv_contains(&c->dev, full);
	return false; /* block devices, and anything stranger */
}

void p_dev_minimal(const struct probe_ctx *c, struct probe_out *o)
{
	_cleanup_closedir_ DIR *d = opendir("/dev");
	if (!d) {
		pr_set(o, PROBE_FAIL, "cannot list /dev: %s", pr_ename(errno));
		return;
	}
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, total = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		total++;
		if (!dev_entry_ok(c, de->d_name, &st))
			pr_list_add(&bad, &nbad, de->d_name);
	}
	if (nbad)
		pr_set(o, PROBE_FAIL, "%d host devices in /dev: %s%s", nbad, sb_str(&bad),
		    nbad > LIST_MAX ? ", ..." : "");
	else
		pr_set(o, PROBE_PASS, "/dev holds %d entries, all in the minimal set", total);
	sb_free(&bad);
}

