/* probes: small helpers shared by the probe files (setting a result, judging a call, reading
 * /proc, spawning and reaping a process). */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Small helpers                                                                           */

__attribute__((format(printf, 3, 4))) void pr_set(struct probe_out *o, enum probe_result r,
						      const char *fmt, ...)
{
	o->r = r;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(o->detail, sizeof o->detail, fmt, ap);
	va_end(ap);
	if (n < 0)
		o->detail[0] = '\0';
}

/* "EPERM", or "errno N" for a number glibc has no name for. */
const char *pr_ename(int e)
{
	static __thread char buf[24];
	const char *n = strerrorname_np(e);
	if (n)
		return n;
	snprintf(buf, sizeof buf, "errno %d", e);
	return buf;
}

/* A call that the jail must refuse: success is a FAIL; EPERM/EACCES (the filter, or missing
 * capabilities) a PASS; ENOSYS a PASS when our filter answers ENOSYS for it (filter_enosys),
 * else the kernel does not have it (SKIP); any other errno means the call reached the kernel's
 * implementation with nothing in front of it: a FAIL. */
void pr_judge(struct probe_out *o, const char *what, long rc, int err, bool filter_enosys)
{
	if (rc >= 0)
		pr_set(o, PROBE_FAIL, "%s succeeded", what);
	else if (err == EPERM || err == EACCES)
		pr_set(o, PROBE_PASS, "%s: %s", what, pr_ename(err));
	else if (err == ENOSYS && filter_enosys)
		pr_set(o, PROBE_PASS, "%s: ENOSYS (refused)", what);
	else if (err == ENOSYS)
		pr_set(o, PROBE_SKIP, "%s: not in this kernel (ENOSYS)", what);
	else
		pr_set(o, PROBE_FAIL, "%s reached the kernel (%s): nothing in front of it refuses it",
		    what, pr_ename(err));
}

/* An operation that must simply not work: any failure is a PASS. */
void pr_judge_fails(struct probe_out *o, const char *what, long rc, int err)
{
	if (rc >= 0)
		pr_set(o, PROBE_FAIL, "%s succeeded", what);
	else
		pr_set(o, PROBE_PASS, "%s: %s", what, pr_ename(err));
}

/* The whole of a (procfs) file, or NULL. */
char *pr_read_all(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct strbuf b = STRBUF_INIT;
	char chunk[4096];
	ssize_t r;
	while ((r = read(fd, chunk, sizeof chunk)) > 0 || (r < 0 && errno == EINTR))
		if (r > 0)
			sb_addn(&b, chunk, (size_t)r);
	(void)close(fd);
	return sb_steal(&b);
}

/* The value of "Name:" in /proc/self/status, trimmed; false when absent. */
bool pr_status_field(const char *name, char *val, size_t n)
{
	_cleanup_free_ char *s = pr_read_all("/proc/self/status");
	size_t len = strlen(name);
	for (char *l = s; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(l, name, len) && l[len] == ':') {
			const char *v = l + len + 1;
			v += strspn(v, " \t");
			snprintf(val, n, "%s", v);
			return true;
		}
		l = nl ? nl + 1 : NULL;
	}
	return false;
}

/* Create and remove a file in dir. 0 when that worked, -1 with errno otherwise. */
int pr_try_create(const char *dir, const char *token)
{
	_cleanup_free_ char *p =
		xasprintf("%s/." BAIT_PREFIX "%s", strcmp(dir, "/") ? dir : "", token);
	int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	(void)close(fd);
	(void)unlink(p);
	return 0;
}

bool pr_is_dir(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

bool pr_exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* Whether the policy makes `p` writable: the workspace under workspace-write or review (its
 * overlay), --rw paths. */
const char *pr_writable_by_policy(const struct probe_ctx *c, const char *p)
{
	if ((c->fs == FS_WORKSPACE_WRITE || c->fs == FS_REVIEW) && c->workspace &&
	    path_is_under(p, c->workspace))
		return "the workspace";
	for (size_t i = 0; i < c->rw.n; i++)
		if (path_is_under(p, c->rw.v[i]))
			return "--rw";
	return NULL;
}

/* Whether the policy shows `p` to the jail: writable, or a --ro path. */
const char *pr_visible_by_policy(const struct probe_ctx *c, const char *p)
{
	const char *w = pr_writable_by_policy(c, p);
	if (w)
		return w;
	if (c->workspace && path_is_under(p, c->workspace))
		return "the workspace";
	for (size_t i = 0; i < c->ro.n; i++)
		if (path_is_under(p, c->ro.v[i]))
			return "--ro";
	return NULL;
}

/* argv[0] of a process and its comm ("" when unreadable). */
void pr_proc_names(pid_t pid, char *argv0, size_t n0, char *comm, size_t nc)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if (fs_read_small(path, argv0, n0) < 0)
		argv0[0] = '\0';
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	if (fs_read_small(path, comm, nc) < 0)
		comm[0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

bool pr_proc_has_marker(pid_t pid, const char *marker)
{
	char argv0[256], comm[32];
	pr_proc_names(pid, argv0, sizeof argv0, comm, sizeof comm);
	return !strcmp(comm, marker) || !strcmp(argv0, marker);
}

/* Gone, or a zombie (dead, waiting for its parent to reap it). */
bool pr_is_dead(pid_t pid)
{
	char path[64], st[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (fs_read_small(path, st, sizeof st) < 0)
		return true;
	const char *paren = strrchr(st, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* Pids in /proc carrying the marker (comm or argv[0]); returns how many (at most max). */
int pr_find_marked(const char *marker, pid_t *pids, int max, int *seen)
{
	_cleanup_closedir_ DIR *d = opendir("/proc");
	int n = 0;
	*seen = 0;
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid_t pid = (pid_t)atoi(de->d_name);
		(*seen)++;
		if (pid != getpid() && pr_proc_has_marker(pid, marker) && !pr_is_dead(pid) && n < max)
			pids[n++] = pid;
	}
	return n;
}

void probe_marker_sentinel(const char *token, char out[16])
{
	snprintf(out, 16, "ajs-%.11s", token ? token : "");
}

void probe_tls_bait_name(const char *token, char *out, size_t cap)
{
	snprintf(out, cap, "tls-%s.verify.invalid", token ? token : "x");
}

void probe_marker_orphan(const char *token, char out[16])
{
	snprintf(out, 16, "ajo-%.11s", token ? token : "");
}

void pr_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A child that only waits to be killed (a target for ptrace). */
pid_t pr_spawn_sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		for (;;)
			pause();
	}
	return pid;
}

void pr_reap(pid_t pid)
{
	if (pid <= 0)
		return;
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}


int pr_unix_addr(const char *name, bool abstract, struct sockaddr_un *sa, socklen_t *len)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t n = strlen(name);
	if (n + 1 >= sizeof sa->sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa->sun_path + (abstract ? 1 : 0), name, n);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
	return 0;
}
