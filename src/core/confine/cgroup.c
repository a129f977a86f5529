/* cgroup: a cgroup v2 scope per jail, or the reason there is none (see cgroup.h). */
#include "core/confine/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/plan/limits.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

#define CG_NAME "agentjail"

char *cg_plan_parent(const char *mnt, const char *self, uid_t uid, char *why, size_t whylen,
		     char *fix, size_t fixlen)
{
	if (uid == 0)
		return path_join(mnt, CG_NAME);
	/* the systemd user manager's subtree, delegated to the user: .../user@UID.service */
	char svc[64];
	snprintf(svc, sizeof svc, "user@%u.service", (unsigned)uid);
	size_t sl = strlen(svc);
	const char *p = self, *hit = NULL;
	while ((p = strstr(p, svc))) {
		if (p > self && p[-1] == '/' && (p[sl] == '/' || p[sl] == '\0'))
			hit = p;
		p += sl;
	}
	if (!hit) {
		snprintf(why, whylen,
			 "this process runs in the cgroup %s, outside the subtree systemd delegates "
			 "to you (%s): a user can move processes only inside it",
			 self, svc);
		snprintf(fix, fixlen,
			 "start agentjail in a scope of your systemd user manager: systemd-run "
			 "--user --scope agentjail ...");
		return NULL;
	}
	_cleanup_free_ char *sub = xstrndup(self, (size_t)(hit - self) + sl);
	_cleanup_free_ char *dir = path_join(mnt, sub[0] == '/' ? sub + 1 : sub);
	return path_join(dir, CG_NAME);
}

void cg_probe_free(struct cg_probe *p)
{
	free(p->parent);
	p->parent = NULL;
}

/* Whether a list of words separated by any of `seps` holds `word`. */
static bool has_word(const char *list, const char *seps, const char *word)
{
	size_t wl = strlen(word);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, seps);
		if (n == wl && !strncmp(p, word, wl))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

bool cg_mountinfo_match(const char *line, const char *controller, char **mnt)
{
	char root[4096], point[4096], fstype[64], source[4096], opts[4096];
	const char *dash = strstr(line, " - ");
	if (!dash || sscanf(dash + 3, "%63s %4095s %4095s", fstype, source, opts) != 3 ||
	    sscanf(line, "%*s %*s %*s %4095s %4095s", root, point) != 2)
		return false;
	bool hit = controller ? !strcmp(fstype, "cgroup") && has_word(opts, ",", controller)
			      : !strcmp(fstype, "cgroup2");
	/* its root mounted (not a part of it, as a container's view may be), at a plain path */
	if (!hit || strcmp(root, "/") || strchr(point, '\\'))
		return false;
	*mnt = xstrdup(point);
	return true;
}

char *cg_self_path(const char *text, const char *controller)
{
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		_cleanup_free_ char *line = xstrndup(l, len);
		/* "ID:CONTROLLERS:PATH"; v2's line is "0::PATH" */
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2) {
			*c2 = '\0';
			bool hit = controller ? has_word(c1 + 1, ",", controller)
					      : !strcmp(line, "0:") && c1[1] == '\0';
			if (hit)
				return xstrdup(c2 + 1);
		}
		l = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* What the probe reads of this process: /proc/self/mountinfo (the kernel formats every mount
 * each time it is read) and /proc/self/cgroup, read once for v2's probe and v1's. NULL when
 * unreadable. */
struct cg_self {
	char *mountinfo;
	char *cgroup;
};

static char *read_proc(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	size_t cap = 8192, len = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (cap - len < 4096)
			buf = xrealloc(buf, cap *= 2);
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return buf;
}

/* The mount point of the cgroup2 hierarchy (controller NULL) or of the v1 hierarchy holding
 * `controller`, or NULL. Only a cgroup or cgroup2 mount's line (its type follows the first
 * " - ") is parsed. */
static char *cgroup_mount(const struct cg_self *cs, const char *controller)
{
	char *found = NULL;
	for (const char *l = cs->mountinfo; l && *l && !found;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		const char *dash = strstr(l, " - ");
		if (dash && dash < l + len && !strncmp(dash + 3, "cgroup", 6)) {
			_cleanup_free_ char *line = xstrndup(l, len);
			(void)cg_mountinfo_match(line, controller, &found);
		}
		l = nl ? nl + 1 : NULL;
	}
	return found;
}

/* This process's cgroup in that hierarchy, from /proc/self/cgroup, or NULL. */
static char *self_cgroup(const struct cg_self *cs, const char *controller)
{
	return cs->cgroup ? cg_self_path(cs->cgroup, controller) : NULL;
}

/* Whether a space-separated controller list holds memory and pids. */
static bool has_both(const char *list)
{
	return has_word(list, " \n", "memory") && has_word(list, " \n", "pids");
}

static bool file_has_both(const char *dir, const char *name)
{
	_cleanup_free_ char *path = path_join(dir, name);
	char buf[512];
	return fs_read_small(path, buf, sizeof buf) >= 0 && has_both(buf);
}

static bool has_procs(const char *dir)
{
	_cleanup_free_ char *path = path_join(dir, "cgroup.procs");
	char buf[16];
	return fs_read_small(path, buf, sizeof buf) > 0;
}

#define FIX_UNIFIED                                                                              \
	"boot with the unified cgroup v2 hierarchy (systemd.unified_cgroup_hierarchy=1 on the "  \
	"kernel command line; the default since Debian 11 and Ubuntu 21.10)"

__attribute__((format(printf, 3, 4))) static void fallback(struct cg_probe *out,
							   const char *fix, const char *fmt, ...)
{
	out->mech = LIMITS_RLIMIT;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->why, sizeof out->why, fmt, ap);
	va_end(ap);
	snprintf(out->fix, sizeof out->fix, "%s", fix);
}

/* A cgroup v2 scope with memory and pids, or the fallback with the reason. */
static void probe_v2(struct cg_probe *out, const struct cg_self *cs)
{
	_cleanup_free_ char *mnt = cgroup_mount(cs, NULL);
	_cleanup_free_ char *self = self_cgroup(cs, NULL);
	if (!mnt) {
		fallback(out, FIX_UNIFIED, "cgroup v2 is not mounted");
		return;
	}
	if (!self) {
		fallback(out, FIX_UNIFIED, "this process has no cgroup v2 path in %s",
				"/proc/self/cgroup");
		return;
	}
	if (!file_has_both(mnt, "cgroup.controllers")) {
		fallback(out, FIX_UNIFIED,
				"the cgroup v2 hierarchy at %s has no memory and pids controllers "
				"(a cgroup v1 hierarchy holds them)",
				mnt);
		return;
	}
	out->parent = cg_plan_parent(mnt, self, getuid(), out->why, sizeof out->why, out->fix,
				     sizeof out->fix);
	if (!out->parent) {
		out->mech = LIMITS_RLIMIT;
		return;
	}
	_cleanup_free_ char *grand = path_dirname(out->parent);
	_cleanup_free_ char *gsub = path_join(grand, "cgroup.subtree_control");
	_cleanup_free_ char *gtype = path_join(grand, "cgroup.type");
	bool is_root = access(gtype, F_OK) < 0; /* the real root cgroup has no cgroup.type */
	if (access(gsub, W_OK) < 0 || access(grand, W_OK) < 0) {
		fallback(out, getuid() ? "start agentjail in a scope of your systemd user manager "
					 "(systemd-run --user --scope agentjail ...)"
				       : "mount cgroup2 read-write (a container needs a writable "
					 "cgroup namespace)",
			 "cannot create cgroups in %s (not writable)", grand);
	} else if (!file_has_both(grand, "cgroup.controllers")) {
		fallback(out, getuid() ? "delegate them to your user manager: systemctl edit "
					 "user@.service, [Service] Delegate=pids memory"
				       : FIX_UNIFIED,
			 "memory and pids are not available in %s", grand);
	} else if (!file_has_both(grand, "cgroup.subtree_control") && !is_root &&
		   has_procs(grand)) {
		fallback(out, "run agentjail from a cgroup whose parent delegates memory and pids "
			      "(e.g. systemd-run --scope, or a container started with a private, "
			      "writable cgroup namespace)",
			 "%s holds processes, so memory and pids cannot be enabled for its children "
			 "(cgroup v2's no-internal-processes rule)",
			 grand);
	} else {
		out->mech = LIMITS_CGROUP;
		snprintf(out->why, sizeof out->why,
			 "a cgroup v2 scope per jail under %s (memory.max, pids.max)", out->parent);
		return;
	}
	free(out->parent);
	out->parent = NULL;
}

/* Without a v2 scope: the v1 pids hierarchy, where it is mounted and this user may make
 * cgroups in it (the same parent as v2's: root's `agentjail` at its top, a user's under the
 * delegated user@UID.service). Then --pids holds; memory stays with rlimits, and why and fix
 * still say why there is no v2 scope and how to get one. */
static void probe_v1_pids(struct cg_probe *out, const struct cg_self *cs)
{
	_cleanup_free_ char *mnt = cgroup_mount(cs, "pids");
	_cleanup_free_ char *self = mnt ? self_cgroup(cs, "pids") : NULL;
	char why[sizeof out->why], fix[sizeof out->fix];
	_cleanup_free_ char *parent =
		self ? cg_plan_parent(mnt, self, getuid(), why, sizeof why, fix, sizeof fix) : NULL;
	if (!parent)
		return;
	/* the parent is made when missing: its own directory, or the one above, writable */
	_cleanup_free_ char *grand = path_dirname(parent);
	if (access(parent, W_OK) < 0 && (errno != ENOENT || access(grand, W_OK) < 0))
		return;
	out->mech = LIMITS_CGROUP_V1;
	out->parent = parent;
	parent = NULL;
}

void cg_probe_host(struct cg_probe *out)
{
	memset(out, 0, sizeof *out);
	struct cg_self cs = {read_proc("/proc/self/mountinfo"), read_proc("/proc/self/cgroup")};
	probe_v2(out, &cs);
	if (out->mech != LIMITS_CGROUP)
		probe_v1_pids(out, &cs);
	free(cs.mountinfo);
	free(cs.cgroup);
}

/* ---- a jail's scope -------------------------------------------------------------------- */

static int write_file(const char *dir, const char *name, const char *val)
{
	_cleanup_free_ char *path = path_join(dir, name);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, val, strlen(val));
	int saved = errno;
	(void)close(fd);
	errno = saved;
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* memory and pids for dir's children, unless already there. */
static int enable_controllers(const char *dir, struct err *e)
{
	if (file_has_both(dir, "cgroup.subtree_control"))
		return 0;
	if (write_file(dir, "cgroup.subtree_control", "+memory +pids") < 0) {
		int saved = errno;
		err_set(e, saved, dir, "cannot enable the memory and pids controllers for the "
				       "jail's cgroup");
		err_hint(e, saved == EBUSY ? "this cgroup holds processes (cgroup v2's "
					     "no-internal-processes rule); see agentjail doctor"
					   : "see agentjail doctor (limits)");
		return -1;
	}
	return 0;
}

static void limit_str(uint64_t v, char *buf, size_t len)
{
	if (v == LIMIT_UNSET || v == LIMIT_UNLIMITED)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* Scopes of agentjails that died without removing theirs (SIGKILL, power loss): empty, and
 * their agentjail (the PID in the name) is gone. Removed on the next run. */
static void sweep_stale(const char *parent)
{
	DIR *d = opendir(parent);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		long pid;
		unsigned n;
		char tail;
		if (sscanf(de->d_name, "jail-%ld-%u%c", &pid, &n, &tail) != 2 || pid <= 0)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		_cleanup_free_ char *dir = path_join(parent, de->d_name);
		(void)rmdir(dir); /* EBUSY while anything still runs in it: left alone */
	}
	(void)closedir(d);
}

int cg_scope_create(const char *parent, enum limits_mech mech, uint64_t memory, uint64_t pids,
		    struct cg_scope *s, struct err *e)
{
	static unsigned seq;
	bool v1 = mech == LIMITS_CGROUP_V1; /* the pids hierarchy alone: no controllers to enable */
	_cleanup_free_ char *grand = path_dirname(parent);
	if (!v1 && enable_controllers(grand, e) < 0)
		return -1;
	/* another jail may remove an empty parent between our mkdirs: try again */
	char *dir = NULL;
	for (int tries = 0; tries < 5 && !dir; tries++) {
		if (mkdir(parent, 0755) < 0 && errno != EEXIST)
			return err_set(e, errno, parent, "cannot create agentjail's cgroup");
		if (!v1 && enable_controllers(parent, e) < 0) {
			if (e && e->errnum == ENOENT)
				continue;
			return -1;
		}
		sweep_stale(parent);
		char name[64];
		snprintf(name, sizeof name, "jail-%ld-%u", (long)getpid(), seq++);
		dir = path_join(parent, name);
		if (mkdir(dir, 0755) < 0) {
			int saved = errno;
			free(dir);
			dir = NULL;
			if (saved != ENOENT && saved != EEXIST)
				return err_set(e, saved, parent, "cannot create the jail's cgroup");
		}
	}
	if (!dir)
		return err_set(e, EAGAIN, parent, "cannot create the jail's cgroup");
	s->dir = dir;
	s->memory = memory;
	s->pids = pids;
	char m[32], p[32];
	limit_str(memory, m, sizeof m);
	limit_str(pids, p, sizeof p);
	const char *failed = NULL;
	if (!v1 && write_file(dir, "memory.max", m) < 0)
		failed = "memory.max";
	/* no swap: the limit is the memory the jail holds (absent without swap accounting) */
	else if (!v1 && write_file(dir, "memory.swap.max", "0") < 0 && errno != ENOENT)
		failed = "memory.swap.max";
	else if (write_file(dir, "pids.max", p) < 0)
		failed = "pids.max";
	if (!failed) {
		/* v1: "tasks" moves the writing thread alone, which the kernel does without the
		 * global threadgroup lock and its RCU grace period (cgroup.procs: 10-20 ms a run
		 * here, doc/design.md §7 "Start-up cost"); the child that writes it is a process of
		 * one thread, so the whole process moves. v2 has no such file for a domain cgroup. */
		const char *join = v1 ? "tasks" : "cgroup.procs";
		_cleanup_free_ char *procs = path_join(dir, join);
		s->procs_fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (s->procs_fd < 0)
			failed = join;
	}
	if (failed) {
		int saved = errno;
		(void)cg_scope_destroy(s, NULL);
		return err_set(e, saved, failed, "cannot set up the jail's cgroup");
	}
	return 0;
}

int cg_scope_enter(const struct cg_scope *s)
{
	if (s->procs_fd < 0)
		return 0;
	return write(s->procs_fd, "0", 1) == 1 ? 0 : -1;
}

static uint64_t read_key(const struct cg_scope *s, const char *file, const char *key)
{
	if (!s->dir)
		return 0;
	_cleanup_free_ char *path = path_join(s->dir, file);
	char buf[1024];
	if (fs_read_small(path, buf, sizeof buf) < 0)
		return 0;
	size_t kl = strlen(key);
	for (char *l = buf; l && *l;) {
		if (!strncmp(l, key, kl) && l[kl] == ' ')
			return strtoull(l + kl + 1, NULL, 10);
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return 0;
}

uint64_t cg_scope_oom_kills(const struct cg_scope *s)
{
	return read_key(s, "memory.events", "oom_kill");
}

uint64_t cg_scope_pids_max_hits(const struct cg_scope *s)
{
	return read_key(s, "pids.events", "max");
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Without cgroup.kill (v1, and v2 before 5.14): SIGKILL every pid listed. How many were. */
static size_t kill_listed(const char *dir)
{
	_cleanup_free_ char *path = path_join(dir, "cgroup.procs");
	char buf[65536];
	size_t n = 0;
	if (fs_read_small(path, buf, sizeof buf) <= 0)
		return 0;
	for (char *l = buf; *l;) {
		long pid = strtol(l, &l, 10);
		if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
			n++;
		while (*l == '\n')
			l++;
		if (pid <= 0 && *l)
			l++;
	}
	return n;
}

/* Nothing new can start in the scope (pids.max 0), then everything in it is killed: at once
 * by cgroup.kill, else pid by pid. Whether cgroup.kill did it. */
static bool kill_scope(const struct cg_scope *s)
{
	(void)write_file(s->dir, "pids.max", "0");
	if (write_file(s->dir, "cgroup.kill", "1") == 0)
		return true;
	(void)kill_listed(s->dir);
	return false;
}

void cg_scope_kill(const struct cg_scope *s)
{
	if (!s->dir || kill_scope(s))
		return;
	/* pid by pid: until a pass finds nobody (the pids.max of 0 keeps the list from growing) */
	for (int i = 0; i < 1000 && kill_listed(s->dir); i++)
		sleep_ms(1);
}

int cg_scope_destroy(struct cg_scope *s, struct err *e)
{
	if (s->procs_fd >= 0)
		(void)close(s->procs_fd);
	s->procs_fd = -1;
	if (!s->dir)
		return 0;
	/* an empty scope (the jail's PID 1 is gone, and the kernel reaped its namespace with it)
	 * goes at once: nothing in it to stop or kill, and nothing can enter it once removed */
	bool gone = rmdir(s->dir) == 0 || errno == ENOENT;
	bool have_kill = gone || kill_scope(s);
	int rc = gone ? 0 : -1, saved = 0;
	/* the jail's PID 1 is gone, so the kernel is killing the rest: wait up to 5 s */
	for (int i = 0; !gone && i < 500; i++) {
		if (rmdir(s->dir) == 0 || errno == ENOENT) {
			rc = 0;
			break;
		}
		saved = errno;
		if (saved != EBUSY)
			break;
		if (!have_kill)
			(void)kill_listed(s->dir);
		sleep_ms(i < 20 ? 1 : 10);
	}
	if (rc < 0)
		err_set(e, saved, s->dir, "cannot remove the jail's cgroup");
	else {
		/* the shared parent goes too when no other jail uses it (EBUSY otherwise) */
		_cleanup_free_ char *parent = path_dirname(s->dir);
		(void)rmdir(parent);
	}
	free(s->dir);
	s->dir = NULL;
	return rc;
}
