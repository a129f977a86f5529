/* probes: the integrity battery (see probes.h). Sections: small helpers; arguments and context;
 * the probes, one group per category; the table; running a probe; the host's bait. */
#include "core/diag/probes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "core/plan/bwrap_argv.h"
#include "core/host/gitinfo.h"
#include "core/plan/gitprotect.h"
#include "core/host/gitscan.h"
#include "core/confine/landlock.h"
#include "core/plan/toolcache.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

extern char **environ;

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_fspick
#define SYS_fspick 433
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define BAIT_PREFIX "agentjail-verify-"

/* ======================================================================================= */
/* Small helpers                                                                           */

__attribute__((format(printf, 3, 4))) static void set(struct probe_out *o, enum probe_result r,
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
static const char *ename(int e)
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
static void judge(struct probe_out *o, const char *what, long rc, int err, bool filter_enosys)
{
	if (rc >= 0)
		set(o, PROBE_FAIL, "%s succeeded", what);
	else if (err == EPERM || err == EACCES)
		set(o, PROBE_PASS, "%s: %s", what, ename(err));
	else if (err == ENOSYS && filter_enosys)
		set(o, PROBE_PASS, "%s: ENOSYS (refused)", what);
	else if (err == ENOSYS)
		set(o, PROBE_SKIP, "%s: not in this kernel (ENOSYS)", what);
	else
		set(o, PROBE_FAIL, "%s reached the kernel (%s): nothing in front of it refuses it",
		    what, ename(err));
}

/* An operation that must simply not work: any failure is a PASS. */
static void judge_fails(struct probe_out *o, const char *what, long rc, int err)
{
	if (rc >= 0)
		set(o, PROBE_FAIL, "%s succeeded", what);
	else
		set(o, PROBE_PASS, "%s: %s", what, ename(err));
}

/* The whole of a (procfs) file, or NULL. */
static char *read_all(const char *path)
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
static bool status_field(const char *name, char *val, size_t n)
{
	_cleanup_free_ char *s = read_all("/proc/self/status");
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
static int try_create(const char *dir, const char *token)
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

static bool is_dir(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* Whether the policy makes `p` writable: the workspace under workspace-write, --rw paths. */
static const char *writable_by_policy(const struct probe_ctx *c, const char *p)
{
	if (c->fs == FS_WORKSPACE_WRITE && c->workspace && path_is_under(p, c->workspace))
		return "the workspace";
	for (size_t i = 0; i < c->rw.n; i++)
		if (path_is_under(p, c->rw.v[i]))
			return "--rw";
	return NULL;
}

/* Whether the policy shows `p` to the jail: writable, or a --ro path. */
static const char *visible_by_policy(const struct probe_ctx *c, const char *p)
{
	const char *w = writable_by_policy(c, p);
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
static void proc_names(pid_t pid, char *argv0, size_t n0, char *comm, size_t nc)
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

static bool proc_has_marker(pid_t pid, const char *marker)
{
	char argv0[256], comm[32];
	proc_names(pid, argv0, sizeof argv0, comm, sizeof comm);
	return !strcmp(comm, marker) || !strcmp(argv0, marker);
}

/* Gone, or a zombie (dead, waiting for its parent to reap it). */
static bool is_dead(pid_t pid)
{
	char path[64], st[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (fs_read_small(path, st, sizeof st) < 0)
		return true;
	const char *paren = strrchr(st, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* Pids in /proc carrying the marker (comm or argv[0]); returns how many (at most max). */
static int find_marked(const char *marker, pid_t *pids, int max, int *seen)
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
		if (pid != getpid() && proc_has_marker(pid, marker) && !is_dead(pid) && n < max)
			pids[n++] = pid;
	}
	return n;
}

void probe_marker_sentinel(const char *token, char out[16])
{
	snprintf(out, 16, "ajs-%.11s", token ? token : "");
}

void probe_marker_orphan(const char *token, char out[16])
{
	snprintf(out, 16, "ajo-%.11s", token ? token : "");
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A child that only waits to be killed (a target for ptrace). */
static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	if (pid <= 0)
		return;
	(void)kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
}

/* ======================================================================================= */
/* Arguments and context                                                                   */

const char *const probe_env_bait_names[] = {
	"GITHUB_TOKEN",
	"AWS_SECRET_ACCESS_KEY",
	"ANTHROPIC_API_KEY",
	"OPENAI_API_KEY",
	"NPM_TOKEN",
	"SSH_AUTH_SOCK",
	NULL,
};

void probe_ctx_init(struct probe_ctx *c)
{
	memset(c, 0, sizeof *c);
	c->fs = FS_WORKSPACE_WRITE;
	c->net = NET_OFF;
	c->bait_fd = -1;
}

void probe_ctx_free(struct probe_ctx *c)
{
	char **strs[] = {&c->workspace, &c->home,     &c->token,    &c->canary,       &c->ssh_dir,
			 &c->unix_run,  &c->unix_tmp, &c->abstract, &c->fds_at_start, &c->scratch};
	for (size_t i = 0; i < ARRAY_LEN(strs); i++) {
		free(*strs[i]);
		*strs[i] = NULL;
	}
	struct strv *lists[] = {&c->rw,       &c->ro,   &c->dev, &c->env_allowed,
				&c->env_bait, &c->skip, &c->only};
	for (size_t i = 0; i < ARRAY_LEN(lists); i++)
		strv_free(lists[i]);
}

static void arg2(struct strv *out, const char *opt, const char *v)
{
	if (!v)
		return;
	strv_push(out, opt);
	strv_push(out, v);
}

static void arg_list(struct strv *out, const char *opt, const struct strv *l)
{
	for (size_t i = 0; i < l->n; i++)
		arg2(out, opt, l->v[i]);
}

void probe_args_build(const struct probe_ctx *c, struct strv *out)
{
	arg2(out, "--fs", fs_mode_name(c->fs));
	arg2(out, "--net", net_mode_name(c->net));
	if (c->allow_ptrace)
		strv_push(out, "--allow-ptrace");
	arg2(out, "--workspace", c->workspace);
	arg2(out, "--home", c->home);
	arg2(out, "--token", c->token);
	arg_list(out, "--rw", &c->rw);
	arg_list(out, "--ro", &c->ro);
	arg_list(out, "--dev", &c->dev);
	arg_list(out, "--env-allowed", &c->env_allowed);
	arg2(out, "--canary", c->canary);
	arg2(out, "--ssh-dir", c->ssh_dir);
	arg2(out, "--unix-run", c->unix_run);
	arg2(out, "--unix-tmp", c->unix_tmp);
	arg2(out, "--abstract", c->abstract);
	if (c->tcp_port > 0)
		strv_pushf(out, "--tcp-port=%d", c->tcp_port);
	if (c->sentinel > 0)
		strv_pushf(out, "--sentinel=%d", (int)c->sentinel);
	if (c->bait_fd >= 0)
		strv_pushf(out, "--bait-fd=%d", c->bait_fd);
	arg_list(out, "--env-bait", &c->env_bait);
	arg_list(out, "--skip", &c->skip);
	arg_list(out, "--only", &c->only);
}

static int parse_num(const char *s, long lo, long hi, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

enum opt_kind { O_STR, O_LIST, O_NUM, O_FS, O_NET };

struct popt {
	const char *name;
	enum opt_kind kind;
	size_t off; /* offset into struct probe_ctx */
};

#define OFF(f) offsetof(struct probe_ctx, f)
static const struct popt popts[] = {
	{"--fs", O_FS, OFF(fs)},
	{"--net", O_NET, OFF(net)},
	{"--workspace", O_STR, OFF(workspace)},
	{"--home", O_STR, OFF(home)},
	{"--token", O_STR, OFF(token)},
	{"--rw", O_LIST, OFF(rw)},
	{"--ro", O_LIST, OFF(ro)},
	{"--dev", O_LIST, OFF(dev)},
	{"--env-allowed", O_LIST, OFF(env_allowed)},
	{"--canary", O_STR, OFF(canary)},
	{"--ssh-dir", O_STR, OFF(ssh_dir)},
	{"--unix-run", O_STR, OFF(unix_run)},
	{"--unix-tmp", O_STR, OFF(unix_tmp)},
	{"--abstract", O_STR, OFF(abstract)},
	{"--tcp-port", O_NUM, OFF(tcp_port)},
	{"--sentinel", O_NUM, OFF(sentinel)},
	{"--bait-fd", O_NUM, OFF(bait_fd)},
	{"--env-bait", O_LIST, OFF(env_bait)},
	{"--skip", O_LIST, OFF(skip)},
	{"--only", O_LIST, OFF(only)},
};

static int apply_popt(const struct popt *p, const char *v, struct probe_ctx *c, struct err *e)
{
	char *base = (char *)c + p->off;
	long n;
	switch (p->kind) {
	case O_STR:
		free(*(char **)base);
		*(char **)base = xstrdup(v);
		return 0;
	case O_LIST:
		strv_push((struct strv *)base, v);
		return 0;
	case O_NUM:
		if (parse_num(v, -1, INT_MAX, &n) < 0)
			return err_set(e, EINVAL, v, "__probe: %s needs a number", p->name);
		if (p->off == OFF(sentinel))
			c->sentinel = (pid_t)n;
		else
			*(int *)base = (int)n;
		return 0;
	case O_FS:
		if (fs_mode_parse(v, &c->fs) < 0)
			return err_set(e, EINVAL, v, "__probe: unknown --fs mode");
		return 0;
	case O_NET:
		if (net_mode_parse(v, &c->net) < 0)
			return err_set(e, EINVAL, v, "__probe: unknown --net mode");
		return 0;
	}
	return err_set(e, EINVAL, p->name, "__probe: internal: unknown option kind");
}

static int parse_flag(const char *a, enum probe_mode *mode, struct probe_ctx *c)
{
	if (!strcmp(a, "--allow-ptrace"))
		c->allow_ptrace = true;
	else if (!strcmp(a, "--euid"))
		*mode = PROBE_MODE_EUID;
	else if (!strcmp(a, "--host-check"))
		*mode = PROBE_MODE_HOST_CHECK;
	else
		return -1;
	return 0;
}

int probe_args_parse(int argc, char **argv, struct probe_ctx *c, enum probe_mode *mode,
		     struct err *e)
{
	*mode = PROBE_MODE_BATTERY;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (parse_flag(a, mode, c) == 0)
			continue;
		const char *eq = strchr(a, '=');
		size_t n = eq ? (size_t)(eq - a) : strlen(a);
		const struct popt *p = NULL;
		for (size_t k = 0; k < ARRAY_LEN(popts) && !p; k++)
			if (strlen(popts[k].name) == n && !strncmp(popts[k].name, a, n))
				p = &popts[k];
		if (!p)
			return err_set(e, EINVAL, a, "__probe: unknown argument");
		const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
		if (!v)
			return err_set(e, EINVAL, a, "__probe: %s needs a value", p->name);
		if (apply_popt(p, v, c, e) < 0)
			return -1;
	}
	if (c->token && (strlen(c->token) != PROBE_TOKEN_LEN ||
			 strspn(c->token, "0123456789abcdef") != PROBE_TOKEN_LEN))
		return err_set(e, EINVAL, c->token, "__probe: --token must be %d hex digits",
			       PROBE_TOKEN_LEN);
	return 0;
}

/* "N->target" for every fd >= 3 except the directory being read. */
static char *list_fds(void)
{
	_cleanup_closedir_ DIR *d = opendir("/proc/self/fd");
	if (!d)
		return xasprintf("(cannot list /proc/self/fd: %s)", ename(errno));
	struct strbuf b = STRBUF_INIT;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		int fd = atoi(de->d_name);
		if (fd < 3 || fd == dirfd(d))
			continue;
		char path[64], target[256];
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(path, target, sizeof target - 1);
		target[n > 0 ? n : 0] = '\0';
		sb_addf(&b, "%s%d->%s", b.len ? ", " : "", fd, n > 0 ? target : "?");
	}
	return sb_steal(&b);
}

void probe_ctx_prepare(struct probe_ctx *c)
{
	free(c->fds_at_start);
	c->fds_at_start = list_fds();
	static const char *const tmpdirs[] = {"/tmp", "/var/tmp", "/dev/shm"};
	for (size_t i = 0; i < ARRAY_LEN(tmpdirs) && !c->scratch; i++) {
		char *t = xasprintf("%s/" BAIT_PREFIX "XXXXXX", tmpdirs[i]);
		if (mkdtemp(t) && chmod(t, 0711) == 0) /* another uid may run a copy in it */
			c->scratch = t;
		else
			free(t);
	}
}

void probe_ctx_finish(struct probe_ctx *c)
{
	if (!c->scratch)
		return;
	DIR *d = opendir(c->scratch);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			(void)unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		(void)closedir(d);
	(void)rmdir(c->scratch);
	free(c->scratch);
	c->scratch = NULL;
}

const char *probe_result_name(enum probe_result r)
{
	static const char *const names[] = {"PASS", "WARN", "FAIL", "SKIP"};
	return (unsigned)r < ARRAY_LEN(names) ? names[r] : "FAIL";
}

int probe_result_parse(const char *s, enum probe_result *out)
{
	for (int r = PROBE_PASS; r <= PROBE_SKIP; r++)
		if (s && !strcmp(s, probe_result_name((enum probe_result)r))) {
			*out = (enum probe_result)r;
			return 0;
		}
	return -1;
}

/* ======================================================================================= */
/* Privileges                                                                              */

static void p_caps(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	static const char *const sets[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
	struct strbuf bad = STRBUF_INIT;
	int seen = 0;
	for (size_t i = 0; i < ARRAY_LEN(sets); i++) {
		char v[64];
		if (!status_field(sets[i], v, sizeof v))
			continue;
		seen++;
		if (strtoull(v, NULL, 16) != 0)
			sb_addf(&bad, "%s%s=%s", bad.len ? " " : "", sets[i], v);
	}
	if (seen != 5)
		set(o, PROBE_FAIL, "only %d of the 5 capability sets in /proc/self/status", seen);
	else if (bad.len)
		set(o, PROBE_FAIL, "capabilities held: %s", sb_str(&bad));
	else
		set(o, PROBE_PASS, "CapInh CapPrm CapEff CapBnd CapAmb are all 0");
	sb_free(&bad);
}

static void p_nnp(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	int v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (v == 1)
		set(o, PROBE_PASS, "no_new_privs is 1");
	else
		set(o, PROBE_FAIL, "no_new_privs is %d: a setuid program would gain privileges", v);
}

static void p_seccomp(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char mode[32] = "", filters[32] = "";
	if (!status_field("Seccomp", mode, sizeof mode)) {
		set(o, PROBE_FAIL, "no Seccomp line in /proc/self/status");
		return;
	}
	(void)status_field("Seccomp_filters", filters, sizeof filters);
	if (!strcmp(mode, "2"))
		set(o, PROBE_PASS, "Seccomp: 2 (filter mode, %s filter%s)",
		    filters[0] ? filters : "?", strcmp(filters, "1") ? "s" : "");
	else
		set(o, PROBE_FAIL, "Seccomp: %s: no syscall filter", mode);
}

/* A write the mounts allow but Landlock's writable view does not: /dev is a private tmpfs in
 * the jail, owned by its user, and not in the list init gives Landlock (/run is: it is part
 * of the writable view). */
static void p_landlock(const struct probe_ctx *c, struct probe_out *o)
{
	int abi = landlock_abi();
	if (abi <= 0) {
		set(o, PROBE_SKIP, "no Landlock in this kernel");
		return;
	}
	static const char *const dirs[] = {"/dev"};
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		struct statvfs sv;
		if (statvfs(dirs[i], &sv) < 0 || (sv.f_flag & ST_RDONLY))
			continue;
		if (try_create(dirs[i], c->token ? c->token : "landlock") == 0) {
			set(o, PROBE_FAIL,
			    "created a file in %s (removed): no Landlock domain "
			    "(kernel ABI %d)",
			    dirs[i], abi);
			return;
		}
		if (errno == EACCES) {
			set(o, PROBE_PASS,
			    "Landlock (ABI %d) refuses a write in %s that the mounts "
			    "allow",
			    abi, dirs[i]);
			return;
		}
	}
	const char *env = getenv("AGENTJAIL_LANDLOCK");
	if (env && strstr(env, ",fs"))
		set(o, PROBE_PASS, "init reports Landlock %s (no directory to test it on)", env);
	else
		set(o, PROBE_FAIL, "kernel ABI %d but no sign of a Landlock domain", abi);
}

static int copy_file(const char *src, const char *dst, mode_t mode)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(dst, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
	if (out < 0) {
		int saved = errno;
		(void)close(in);
		errno = saved;
		return -1;
	}
	ssize_t n;
	while ((n = sendfile(out, in, NULL, 1 << 20)) > 0)
		;
	int saved = errno;
	(void)close(in);
	(void)close(out);
	errno = saved;
	return n < 0 ? -1 : 0;
}

/* Run `copy __probe --euid` in a child that first tries to become another user: the uid the
 * child had before exec and the euid the copy reports. 0, or -1 when nothing could be learnt. */
static int run_copy_euid(const char *copy, long *uid, long *euid)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		if (geteuid() == 0)
			(void)setresuid(65534, 65534, 65534);
		char pre[32];
		int n = snprintf(pre, sizeof pre, "%u ", (unsigned)getuid());
		if (write(p[1], pre, (size_t)n) != n || dup2(p[1], 1) < 0)
			_exit(127);
		char *argv[] = {(char *)copy, (char *)"__probe", (char *)"--euid", NULL};
		char *envp[] = {NULL};
		execve(copy, argv, envp);
		n = snprintf(pre, sizeof pre, "E%d", errno);
		(void)!write(p[1], pre, (size_t)n);
		_exit(127);
	}
	(void)close(p[1]);
	char buf[64];
	size_t off = 0;
	ssize_t n;
	while (pid > 0 && off < sizeof buf - 1 &&
	       ((n = read(p[0], buf + off, sizeof buf - 1 - off)) > 0 || (n < 0 && errno == EINTR)))
		off += n > 0 ? (size_t)n : 0;
	buf[off] = '\0';
	(void)close(p[0]);
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	int exec_err;
	if (sscanf(buf, "%ld E%d", uid, &exec_err) == 2) {
		errno = exec_err;
		return -1;
	}
	if (sscanf(buf, "%ld %ld", uid, euid) != 2) {
		errno = pid < 0 ? errno : EPROTO;
		return -1;
	}
	return 0;
}

static void p_setuid_copy(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->scratch) {
		set(o, PROBE_SKIP, "no writable temporary directory in the jail");
		return;
	}
	_cleanup_free_ char *copy = path_join(c->scratch, "setuid-copy");
	if (copy_file("/proc/self/exe", copy, 0700) < 0) {
		set(o, PROBE_SKIP, "cannot copy agentjail to %s: %s", c->scratch, ename(errno));
		return;
	}
	struct stat st;
	if (chmod(copy, 04755) < 0 || stat(copy, &st) < 0 || !(st.st_mode & S_ISUID)) {
		set(o, PROBE_PASS, "chmod u+s in %s refused or dropped (%s)", c->scratch,
		    ename(errno));
		(void)unlink(copy);
		return;
	}
	long uid = -1, euid = -1;
	int rc = run_copy_euid(copy, &uid, &euid);
	int err = errno;
	(void)unlink(copy);
	struct statvfs sv;
	bool nosuid = statvfs(c->scratch, &sv) == 0 && (sv.f_flag & ST_NOSUID);
	bool nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1;
	const char *why = nosuid && nnp ? "nosuid mount, no_new_privs"
			  : nosuid      ? "nosuid mount"
			  : nnp         ? "no_new_privs"
					: "not owned by another user";
	if (rc < 0 && (err == EACCES || err == EPERM))
		set(o, PROBE_PASS, "the setuid copy in %s cannot be run: %s", c->scratch,
		    ename(err));
	else if (rc < 0)
		set(o, PROBE_SKIP, "cannot run the setuid copy in %s: %s", c->scratch, ename(err));
	else if (euid != uid)
		set(o, PROBE_FAIL, "a setuid copy (owner %u) in %s ran with euid %ld, not %ld",
		    (unsigned)st.st_uid, c->scratch, euid, uid);
	else
		set(o, PROBE_PASS, "a setuid copy in %s keeps euid %ld (%s)", c->scratch, euid,
		    why);
}

/* ======================================================================================= */
/* Setuid and setgid bits: no call may set them from inside (issue 10, item 4). Each probe works
 * on a file of its own in the jail's scratch directory and removes it.                    */

enum setid_how { SETID_CHMOD, SETID_FCHMODAT, SETID_OPEN, SETID_MKNOD };

static long setid_call(enum setid_how how, const char *path, mode_t mode)
{
	switch (how) {
	case SETID_CHMOD:
		return chmod(path, mode);
	case SETID_FCHMODAT:
		return fchmodat(AT_FDCWD, path, mode, 0);
	case SETID_OPEN: {
		int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd >= 0)
			(void)close(fd);
		return fd;
	}
	case SETID_MKNOD:
		return mknod(path, S_IFREG | mode, 0);
	}
	errno = EINVAL;
	return -1;
}

/* PASS when the call is refused or the bit does not stick; FAIL when a file with it exists. */
static void judge_setid(const struct probe_ctx *c, struct probe_out *o, enum setid_how how,
			const char *what, mode_t mode)
{
	if (!c->scratch) {
		set(o, PROBE_SKIP, "no writable temporary directory in the jail");
		return;
	}
	_cleanup_free_ char *p = xasprintf("%s/." BAIT_PREFIX "setid-%s", c->scratch,
					   c->token ? c->token : "probe");
	(void)unlink(p);
	if (how == SETID_CHMOD || how == SETID_FCHMODAT) {
		int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0700);
		if (fd < 0) {
			set(o, PROBE_SKIP, "cannot create a file in %s: %s", c->scratch, ename(errno));
			return;
		}
		(void)close(fd);
	}
	long rc = setid_call(how, p, mode);
	int err = errno;
	struct stat st;
	bool stuck = rc >= 0 && lstat(p, &st) == 0 && (st.st_mode & mode & (S_ISUID | S_ISGID));
	(void)unlink(p);
	if (stuck)
		set(o, PROBE_FAIL, "%s made a file with mode %04o", what, (unsigned)(st.st_mode & 07777));
	else if (rc >= 0)
		set(o, PROBE_PASS, "%s succeeded but the bit was dropped", what);
	else
		set(o, PROBE_PASS, "%s: %s", what, ename(err));
}

static void p_setid_chmod(const struct probe_ctx *c, struct probe_out *o)
{
	judge_setid(c, o, SETID_CHMOD, "chmod(04755)", 04755);
}

static void p_setid_fchmodat(const struct probe_ctx *c, struct probe_out *o)
{
	judge_setid(c, o, SETID_FCHMODAT, "fchmodat(02755)", 02755);
}

static void p_setid_open(const struct probe_ctx *c, struct probe_out *o)
{
	judge_setid(c, o, SETID_OPEN, "open(O_CREAT, 04755)", 04755);
}

static void p_setid_mknod(const struct probe_ctx *c, struct probe_out *o)
{
	judge_setid(c, o, SETID_MKNOD, "mknod(S_IFREG|04755)", 04755);
}

/* ======================================================================================= */
/* Terminals                                                                               */

/* A fresh pty whose slave becomes our controlling terminal (the probe runs in a child of its
 * own, so setsid is ours to call). The slave fd, or -1 with a SKIP set. */
static int own_pty(struct probe_out *o)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	char name[128];
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof name) != 0) {
		set(o, PROBE_SKIP, "no pseudo-terminal to test on (/dev/ptmx: %s)", ename(errno));
		return -1;
	}
	(void)setsid();
	int s = open(name, O_RDWR | O_CLOEXEC);
	if (s < 0) {
		set(o, PROBE_SKIP, "cannot open %s: %s", name, ename(errno));
		return -1;
	}
	(void)ioctl(s, TIOCSCTTY, 0);
	/* m stays open (the pair must live); the probe's process ends soon */
	return s;
}

#define HIGH_BITS 0x100000000UL

static void tiocsti(struct probe_out *o, unsigned long extra)
{
	int s = own_pty(o);
	if (s < 0)
		return;
	char ch = '#';
	long rc = syscall(SYS_ioctl, s, (unsigned long)TIOCSTI | extra, &ch);
	int err = errno;
	if (rc == 0)
		set(o, PROBE_FAIL, "ioctl(TIOCSTI%s) pushed a byte into a terminal's input",
		    extra ? " | 1<<32" : "");
	else
		set(o, PROBE_PASS, "ioctl(TIOCSTI%s): %s", extra ? " | 1<<32" : "", ename(err));
}

static void p_tiocsti(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	tiocsti(o, 0);
}

static void p_tiocsti_high(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	tiocsti(o, HIGH_BITS);
}

/* TIOCLINUX means something only on a virtual console (none is reachable here, and none is
 * opened): the filter must refuse it before any driver sees it, so the answer is EPERM, where
 * the tty layer of a pty would say ENOTTY. */
static void tioclinux(struct probe_out *o, unsigned long extra)
{
	int s = own_pty(o);
	if (s < 0)
		return;
	char sub[2] = {6 /* TIOCL_GETSHIFTSTATE: reads only */, 0};
	long rc = syscall(SYS_ioctl, s, (unsigned long)TIOCLINUX | extra, sub);
	int err = errno;
	const char *what = extra ? "ioctl(TIOCLINUX | 1<<32)" : "ioctl(TIOCLINUX)";
	if (rc == 0)
		set(o, PROBE_FAIL, "%s succeeded", what);
	else if (err == EPERM)
		set(o, PROBE_PASS, "%s: EPERM (refused before the tty layer)", what);
	else
		set(o, PROBE_FAIL,
		    "%s reached the tty layer (%s): on a virtual console it could "
		    "paste into other programs' input",
		    what, ename(err));
}

static void p_tioclinux(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	tioclinux(o, 0);
}

static void p_tioclinux_high(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	tioclinux(o, HIGH_BITS);
}

#if defined(__x86_64__)
/* ioctl through the i386 entry point (int $0x80, eax = 54). The argument must be addressable
 * with 32 bits. */
static long int80_ioctl(int fd, unsigned cmd, uint32_t arg)
{
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(54L), "b"((long)fd), "c"((long)cmd), "d"((long)arg)
			 : "r8", "r9", "r10", "r11", "memory", "cc");
	return ret;
}

static void p_tiocsti_i386(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	int s = own_pty(o);
	if (s < 0)
		return;
	char *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (buf == MAP_FAILED) {
		set(o, PROBE_SKIP, "no memory below 4 GiB for an i386 argument: %s", ename(errno));
		return;
	}
	buf[0] = '#';
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSYS, SIG_DFL);
		signal(SIGSEGV, SIG_DFL);
		long r = int80_ioctl(s, TIOCSTI, (uint32_t)(uintptr_t)buf);
		_exit(r == 0 ? 0 : (r < 0 && r > -256 ? (int)-r : 255));
	}
	int ws = 0;
	while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (pid < 0)
		set(o, PROBE_SKIP, "cannot fork: %s", ename(errno));
	else if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSYS)
		set(o, PROBE_PASS,
		    "int $0x80 ioctl(TIOCSTI): killed by SIGSYS (foreign "
		    "architecture refused)");
	else if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSEGV)
		set(o, PROBE_SKIP, "no IA32 emulation in this kernel (int $0x80 faults)");
	else if (WIFSIGNALED(ws))
		set(o, PROBE_FAIL, "int $0x80 child died of signal %d", WTERMSIG(ws));
	else if (WEXITSTATUS(ws) == 0)
		set(o, PROBE_FAIL, "int $0x80 ioctl(TIOCSTI) pushed a byte into a terminal");
	else
		set(o, PROBE_FAIL,
		    "the i386 entry point reached the kernel (ioctl: %s): no filter "
		    "for that architecture",
		    ename(WEXITSTATUS(ws)));
}
#else
static void p_tiocsti_i386(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	set(o, PROBE_SKIP, "not an x86_64 host: there is no i386 entry point");
}
#endif

/* ======================================================================================= */
/* Namespaces (each probe runs in a child of its own: a namespace it creates dies with it)  */

static void unshare_probe(struct probe_out *o, int flag, const char *name)
{
	long rc = unshare(flag);
	int err = errno;
	char what[64];
	snprintf(what, sizeof what, "unshare(%s)", name);
	judge_fails(o, what, rc, err);
}

static void p_unshare_user(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	unshare_probe(o, CLONE_NEWUSER, "CLONE_NEWUSER");
}

static void p_unshare_mnt(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	unshare_probe(o, CLONE_NEWNS, "CLONE_NEWNS");
}

static void p_unshare_net(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	unshare_probe(o, CLONE_NEWNET, "CLONE_NEWNET");
}

/* The new process exits at once; the parent reaps it. */
static void judge_clone(struct probe_out *o, const char *what, long pid, int err)
{
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
			;
		set(o, PROBE_FAIL, "%s created a process in a new user namespace", what);
		return;
	}
	set(o, PROBE_PASS, "%s: %s", what, ename(err));
}

static void p_clone_newuser(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL,
			   NULL);
	judge_clone(o, "clone(CLONE_NEWUSER)", pid, errno);
}

/* struct clone_args (linux/sched.h, v0: 64 bytes) */
struct clone_args_v0 {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static void p_clone3_newuser(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	struct clone_args_v0 ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
	long pid = syscall(SYS_clone3, &ca, sizeof ca);
	judge_clone(o, "clone3(CLONE_NEWUSER)", pid, errno);
}

/* Joining a namespace: our own user namespace (the kernel says EINVAL when it gets that far)
 * and our own mount namespace (which needs CAP_SYS_ADMIN, and then works). */
static void p_setns(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	int fu = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	int fm = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fu < 0 || fm < 0) {
		set(o, PROBE_SKIP, "cannot open /proc/self/ns: %s", ename(errno));
		return;
	}
	long ru = setns(fu, CLONE_NEWUSER);
	int eu = errno;
	long rm = setns(fm, CLONE_NEWNS);
	int em = errno;
	if (rm == 0)
		set(o, PROBE_FAIL, "setns(mount namespace) succeeded");
	else if (ru == 0)
		set(o, PROBE_FAIL, "setns(user namespace) succeeded");
	else
		set(o, PROBE_PASS, "setns: user %s, mnt %s", ename(eu), ename(em));
}

static void p_chroot(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = chroot("/");
	judge_fails(o, "chroot(\"/\")", rc, errno);
}

/* ======================================================================================= */
/* The mount API. Arguments are chosen so that a call that gets past the permission checks
 * fails right after (a missing path, a bad fd, an unknown tmpfs option): nothing is ever
 * mounted, even where nothing refuses the call.                                           */

#define NO_PATH "/nonexistent-agentjail-verify"

/* A directory of our own that is not a mount point (never "/": unmounting the root remounts
 * its superblock read-only, the host's included). */
static bool scratch_target(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->scratch)
		return true;
	set(o, PROBE_SKIP, "no temporary directory of our own to aim the call at");
	return false;
}

static void p_mount(const struct probe_ctx *c, struct probe_out *o)
{
	if (!scratch_target(c, o))
		return;
	long rc = mount("none", c->scratch, "tmpfs", MS_NOSUID, "agentjail_verify_no_such_option");
	judge(o, "mount(tmpfs)", rc, errno, false);
}

static void p_umount2(const struct probe_ctx *c, struct probe_out *o)
{
	if (!scratch_target(c, o))
		return;
	long rc = umount2(c->scratch, 0); /* not a mount point: EINVAL past the checks */
	judge(o, "umount2", rc, errno, false);
}

static void p_pivot_root(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_pivot_root, NO_PATH "-a", NO_PATH "-b");
	judge(o, "pivot_root", rc, errno, false);
}

static void p_open_tree(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long fd = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	judge(o, "open_tree(OPEN_TREE_CLONE)", fd, err, true);
}

static void p_move_mount(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_move_mount, -1, "", AT_FDCWD, NO_PATH, MOVE_MOUNT_F_EMPTY_PATH);
	judge(o, "move_mount", rc, errno, true);
}

static void p_fsopen(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long fd = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	judge(o, "fsopen(tmpfs)", fd, err, true);
}

static void p_fsconfig(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_fsconfig, -1, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	judge(o, "fsconfig", rc, errno, true);
}

static void p_fsmount(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_fsmount, -1, FSMOUNT_CLOEXEC, 0);
	judge(o, "fsmount", rc, errno, true);
}

static void p_fspick(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_fspick, AT_FDCWD, NO_PATH, FSPICK_CLOEXEC);
	judge(o, "fspick", rc, errno, true);
}

static void p_mount_setattr(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	/* with nothing to change the kernel returns 0 before looking: ask for read-only */
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
	long rc = syscall(SYS_mount_setattr, AT_FDCWD, NO_PATH, 0, &attr, sizeof attr);
	judge(o, "mount_setattr", rc, errno, true);
}

/* ======================================================================================= */
/* Kernel attack surface                                                                   */

static void p_keyctl(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	judge(o, "keyctl(GET_KEYRING_ID)", rc, errno, false);
}

static void p_add_key(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	/* into the probe's own process keyring, which ends with it */
	long rc = syscall(SYS_add_key, "user", BAIT_PREFIX "key", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	judge(o, "add_key", rc, errno, false);
}

static void p_request_key(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_request_key, "user", BAIT_PREFIX "no-such-key", NULL, 0);
	judge(o, "request_key", rc, errno, false);
}

static void p_bpf(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	judge(o, "bpf(BPF_MAP_CREATE)", fd, err, false);
}

static void p_perf_event_open(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof a;
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0UL);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	judge(o, "perf_event_open", fd, err, false);
}

static void p_userfaultfd(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	judge(o, "userfaultfd", fd, err, false);
}

/* struct io_uring_params is 120 bytes; zeroed means "defaults". */
static void p_io_uring(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	uint8_t params[120] = {0};
	long fd = syscall(SYS_io_uring_setup, 1, params);
	int err = errno;
	if (fd >= 0)
		(void)close((int)fd);
	judge(o, "io_uring_setup", fd, err, false);
}

static void p_personality(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = personality(PER_LINUX | ADDR_NO_RANDOMIZE);
	int err = errno;
	if (rc != -1 && (personality(0xffffffff) & ADDR_NO_RANDOMIZE))
		set(o, PROBE_FAIL,
		    "personality(ADDR_NO_RANDOMIZE) accepted: address space "
		    "randomization can be turned off");
	else
		set(o, PROBE_PASS, "personality(ADDR_NO_RANDOMIZE): %s",
		    rc == -1 ? ename(err) : "not applied");
}

/* name_to_handle_at / open_by_handle_at reach any inode of a file system by number, past the
 * mounts that hide it (the "shocker" escape). */
static void p_open_by_handle(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	memset(&h, 0, sizeof h);
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	int mount_id;
	long nr = name_to_handle_at(AT_FDCWD, "/", &h.fh, &mount_id, 0);
	int nerr = errno;
	if (nr < 0) { /* a made-up handle still reaches the call */
		h.fh.handle_bytes = 8;
		h.fh.handle_type = 1;
	}
	int mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC);
	int err = errno;
	if (fd >= 0) {
		(void)close((int)fd);
		set(o, PROBE_FAIL, "open_by_handle_at opened \"/\" by its handle");
		return;
	}
	if (err == EPERM || err == EACCES)
		set(o, PROBE_PASS, "open_by_handle_at: %s (name_to_handle_at: %s)", ename(err),
		    nr < 0 ? ename(nerr) : "ok");
	else
		judge(o, "open_by_handle_at", -1, err, false);
}

static void p_init_module(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_init_module, NULL, 0UL, ""); /* an empty image: ENOEXEC at worst */
	judge(o, "init_module", rc, errno, false);
}

static void p_finit_module(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = syscall(SYS_finit_module, -1, "", 0);
	judge(o, "finit_module", rc, errno, false);
}

static void p_kexec_load(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	/* 17 segments is one more than the kernel accepts: EINVAL right after the permission
	 * check (0 segments would unload a loaded kexec image) */
	long rc = syscall(SYS_kexec_load, 0UL, 17UL, NULL, 0UL);
	judge(o, "kexec_load", rc, errno, false);
}

static void p_af_vsock(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	/* created only, never connected: the host's vsock services are not touched */
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = errno;
	if (fd >= 0) {
		(void)close(fd);
		set(o, PROBE_FAIL, "socket(AF_VSOCK) created: a channel to the hypervisor's host");
	} else if (err == EAFNOSUPPORT || err == EPERM || err == EACCES) {
		set(o, PROBE_PASS, "socket(AF_VSOCK): %s", ename(err));
	} else {
		set(o, PROBE_FAIL, "socket(AF_VSOCK) reached the kernel (%s)", ename(err));
	}
}

static void p_syslog(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	long rc = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	judge(o, "syslog(SIZE_BUFFER)", rc, errno, false);
}

/* ======================================================================================= */
/* ptrace                                                                                  */

/* What a child probe should see: denied by default, working under --allow-ptrace. */
static void judge_policy(const struct probe_ctx *c, struct probe_out *o, const char *what,
			 bool works, int err)
{
	if (works && c->allow_ptrace)
		set(o, PROBE_PASS, "%s works, as --allow-ptrace says", what);
	else if (works)
		set(o, PROBE_FAIL, "%s works", what);
	else if (c->allow_ptrace)
		set(o, PROBE_FAIL, "%s fails (%s) although --allow-ptrace is set", what,
		    ename(err));
	else
		set(o, PROBE_PASS, "%s: %s", what, ename(err));
}

static bool attach_detach(pid_t pid, int *err)
{
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0) {
		*err = errno;
		return false;
	}
	int ws;
	while (waitpid(pid, &ws, __WALL) < 0 && errno == EINTR)
		;
	(void)ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return true;
}

static void p_ptrace_child(const struct probe_ctx *c, struct probe_out *o)
{
	pid_t pid = spawn_sleeper();
	if (pid < 0) {
		set(o, PROBE_SKIP, "cannot fork: %s", ename(errno));
		return;
	}
	int err = 0;
	bool works = attach_detach(pid, &err);
	reap(pid);
	judge_policy(c, o, "PTRACE_ATTACH to a child", works, err);
}

static volatile uint64_t vm_marker = 0x616a2d7665726966ULL;

static void p_vm_readv_child(const struct probe_ctx *c, struct probe_out *o)
{
	pid_t pid = spawn_sleeper();
	if (pid < 0) {
		set(o, PROBE_SKIP, "cannot fork: %s", ename(errno));
		return;
	}
	uint64_t got = 0;
	struct iovec l = {&got, sizeof got}, r = {(void *)&vm_marker, sizeof got};
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	int err = errno;
	reap(pid);
	judge_policy(c, o, "process_vm_readv of a child",
		     n == (ssize_t)sizeof got && got == vm_marker, err);
}

/* PID 1 is touched only when it is a jail's own init (ours, or bwrap's): never a host's. */
static bool pid1_touchable(struct probe_out *o, char *comm, size_t n)
{
	char argv0[256];
	proc_names(1, argv0, sizeof argv0, comm, n);
	if (!strcmp(argv0, BW_INIT_PATH) || !strcmp(comm, "bwrap"))
		return true;
	set(o, PROBE_SKIP, "PID 1 is %s, not a jail's init: not touched (see pid.init)",
	    comm[0] ? comm : "unreadable");
	return false;
}

static void p_ptrace_pid1(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char comm[32];
	if (!pid1_touchable(o, comm, sizeof comm))
		return;
	int err = 0;
	if (attach_detach(1, &err))
		set(o, PROBE_FAIL, "PTRACE_ATTACH to PID 1 (%s) works", comm);
	else
		set(o, PROBE_PASS, "PTRACE_ATTACH to PID 1 (%s): %s", comm, ename(err));
}

/* Address 0 is never mapped: EFAULT means the permission check passed, and nothing is read. */
static void p_vm_readv_pid1(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char comm[32];
	if (!pid1_touchable(o, comm, sizeof comm))
		return;
	char b;
	struct iovec l = {&b, 1}, r = {NULL, 1};
	ssize_t n = process_vm_readv(1, &l, 1, &r, 1, 0);
	int err = errno;
	if (n >= 0 || err == EFAULT)
		set(o, PROBE_FAIL, "process_vm_readv of PID 1 (%s) passes the permission check",
		    comm);
	else
		set(o, PROBE_PASS, "process_vm_readv of PID 1 (%s): %s", comm, ename(err));
}

/* /proc/1/mem is ptrace by another door: opening it (nothing is read) needs the same right. */
static void p_pid1_mem(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char comm[32];
	if (!pid1_touchable(o, comm, sizeof comm))
		return;
	int fd = open("/proc/1/mem", O_RDONLY | O_CLOEXEC);
	int err = errno;
	if (fd >= 0) {
		(void)close(fd);
		set(o, PROBE_FAIL,
		    "/proc/1/mem of PID 1 (%s) opens: its memory can be read and "
		    "written (nothing was read)",
		    comm);
	} else {
		set(o, PROBE_PASS, "/proc/1/mem of PID 1 (%s): %s", comm, ename(err));
	}
}

/* ======================================================================================= */
/* Processes                                                                               */

static void p_pid_init(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char argv0[256], comm[32];
	proc_names(1, argv0, sizeof argv0, comm, sizeof comm);
	if (!strcmp(argv0, BW_INIT_PATH))
		set(o, PROBE_PASS, "PID 1 is the jail's init (%s)", BW_INIT_PATH);
	else
		set(o, PROBE_FAIL, "PID 1 is %s, not the jail's init %s",
		    comm[0] ? comm : "unreadable", BW_INIT_PATH);
}

static void p_sentinel_hidden(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->sentinel <= 0 || !c->token) {
		set(o, PROBE_SKIP, "no sentinel process on the host");
		return;
	}
	char marker[16];
	probe_marker_sentinel(c->token, marker);
	pid_t found[4];
	int seen = 0;
	int n = find_marked(marker, found, 4, &seen);
	if (n > 0)
		set(o, PROBE_FAIL, "the host's sentinel %s is visible in /proc as pid %d", marker,
		    (int)found[0]);
	else
		set(o, PROBE_PASS, "the host's sentinel is not in /proc (%d processes visible)",
		    seen);
}

static void p_sentinel_signal(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->sentinel <= 0 || !c->token) {
		set(o, PROBE_SKIP, "no sentinel process on the host");
		return;
	}
	char marker[16];
	probe_marker_sentinel(c->token, marker);
	if (kill(c->sentinel, 0) < 0)
		set(o, PROBE_PASS, "kill(%d, 0): %s", (int)c->sentinel, ename(errno));
	else if (proc_has_marker(c->sentinel, marker))
		set(o, PROBE_FAIL, "the host's sentinel (pid %d) can be signalled",
		    (int)c->sentinel);
	else
		set(o, PROBE_PASS, "pid %d here is a process of the jail, not the host's sentinel",
		    (int)c->sentinel);
}

/* An orphan that outlives the battery unless the jail's end kills it; it tells when its name
 * is set, so the host's check cannot come too early. */
static void p_orphan(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->token) {
		set(o, PROBE_SKIP, "no token to mark a process with");
		return;
	}
	char marker[16];
	probe_marker_orphan(c->token, marker);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		set(o, PROBE_SKIP, "cannot make a pipe: %s", ename(errno));
		return;
	}
	pid_t mid = fork();
	if (mid == 0) {
		if (fork() == 0) {
			(void)setsid();
			(void)prctl(PR_SET_NAME, marker, 0, 0, 0);
			int null = open("/dev/null", O_RDWR);
			for (int fd = 0; fd < 3 && null >= 0; fd++)
				(void)dup2(null, fd);
			(void)!write(p[1], "k", 1);
			(void)close(p[1]);
			for (int i = 0; i < 100; i++)
				sleep_ms(100);
			_exit(0);
		}
		_exit(0);
	}
	(void)close(p[1]);
	char b = 0;
	struct pollfd pfd = {.fd = p[0], .events = POLLIN};
	bool ok = mid > 0 && poll(&pfd, 1, 2000) == 1 && read(p[0], &b, 1) == 1;
	(void)close(p[0]);
	while (mid > 0 && waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	if (ok)
		set(o, PROBE_PASS,
		    "left an orphan named %s behind; the host checks it is gone once "
		    "the jail has ended",
		    marker);
	else
		set(o, PROBE_SKIP, "could not leave an orphan behind: %s", ename(errno));
}

/* ======================================================================================= */
/* Inheritance                                                                             */

static void p_fds(const struct probe_ctx *c, struct probe_out *o)
{
	const char *l = c->fds_at_start;
	if (!l || !*l) {
		set(o, PROBE_PASS, "only fds 0-2 were open at start%s",
		    c->bait_fd >= 0 ? " (the host left a directory fd open)" : "");
		return;
	}
	set(o, PROBE_FAIL, "inherited fds: %s", l);
}

static bool name_in(const char *name, size_t n, const struct strv *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i]) == n && !strncmp(l->v[i], name, n))
			return true;
	return false;
}

static void p_env_bait(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->env_bait.n) {
		set(o, PROBE_SKIP, "no bait variables were set on the host");
		return;
	}
	struct strbuf bad = STRBUF_INIT;
	for (size_t i = 0; i < c->env_bait.n; i++)
		if (getenv(c->env_bait.v[i]))
			sb_addf(&bad, "%s%s", bad.len ? " " : "", c->env_bait.v[i]);
	for (char **e = environ; c->token && e && *e; e++) {
		size_t n = strcspn(*e, "=");
		if (strstr(*e, c->token) && !name_in(*e, n, &c->env_bait))
			sb_addf(&bad, "%s%.*s", bad.len ? " " : "", (int)n, *e);
	}
	if (bad.len)
		set(o, PROBE_FAIL, "host secrets in the environment: %s", sb_str(&bad));
	else
		set(o, PROBE_PASS, "%zu bait variables absent (%s, ...)", c->env_bait.n,
		    c->env_bait.v[0]);
	sb_free(&bad);
}

static void p_env_forbidden(const struct probe_ctx *c, struct probe_out *o)
{
	static const char *const never[] = {"BASH_ENV",
					    "ENV",
					    "IFS",
					    "SSH_AUTH_SOCK",
					    "DBUS_SESSION_BUS_ADDRESS",
					    "DISPLAY",
					    "WAYLAND_DISPLAY"};
	struct strbuf bad = STRBUF_INIT;
	for (char **e = environ; e && *e; e++) {
		size_t n = strcspn(*e, "=");
		bool forbidden = !strncmp(*e, "LD_", 3);
		for (size_t i = 0; i < ARRAY_LEN(never) && !forbidden; i++)
			forbidden = strlen(never[i]) == n && !strncmp(*e, never[i], n);
		if (forbidden && !name_in(*e, n, &c->env_allowed))
			sb_addf(&bad, "%s%.*s", bad.len ? " " : "", (int)n, *e);
	}
	if (bad.len)
		set(o, PROBE_FAIL, "forbidden variables set: %s", sb_str(&bad));
	else
		set(o, PROBE_PASS,
		    "no LD_*, BASH_ENV, ENV, IFS, SSH_AUTH_SOCK, D-Bus or display "
		    "variable");
	sb_free(&bad);
}

/* ======================================================================================= */
/* Mounts (pure: mountinfo text in, verdict out)                                           */

struct mnt_entry {
	char root[PATH_MAX];
	char point[PATH_MAX];
	char opts[256];
	char fstype[64];
};

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* Parse the line at *p into m and advance *p past it. false at the end of the text. */
static bool mnt_next(const char **p, struct mnt_entry *m)
{
	while (**p) {
		const char *line = *p;
		const char *nl = strchr(line, '\n');
		*p = nl ? nl + 1 : line + strlen(line);
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		_cleanup_free_ char *l = xstrndup(line, len);
		const char *sep = strstr(l, " - ");
		if (!sep ||
		    sscanf(l, "%*s %*s %*s %4095s %4095s %255s", m->root, m->point, m->opts) != 3 ||
		    sscanf(sep + 3, "%63s", m->fstype) != 1)
			continue;
		unescape(m->root);
		unescape(m->point);
		return true;
	}
	return false;
}

static bool has_opt(const char *opts, const char *want)
{
	size_t n = strlen(want);
	for (const char *s = opts; *s;) {
		size_t k = strcspn(s, ",");
		if (k == n && !strncmp(s, want, n))
			return true;
		s += k + (s[k] == ',');
	}
	return false;
}

static const char *const dev_nodes[] = {"/dev/null",    "/dev/zero", "/dev/full",    "/dev/random",
					"/dev/urandom", "/dev/tty",  "/dev/console", NULL};

static bool in_list(const char *s, const char *const *l)
{
	for (size_t i = 0; l[i]; i++)
		if (!strcmp(s, l[i]))
			return true;
	return false;
}

/* A device node bound onto itself: bwrap's --dev set, or a --dev of the policy. */
static bool is_device_bind(const struct probe_ctx *c, const struct mnt_entry *m)
{
	return in_list(m->point, dev_nodes) || strv_contains(&c->dev, m->point);
}

/* Why a writable mount may be writable, or NULL. */
static const char *rw_reason(const struct probe_ctx *c, const struct mnt_entry *m)
{
	static const char *const scratch[] = {"/tmp", "/var/tmp", "/run",        "/dev/shm",
					      "/dev", "/dev/pts", "/dev/mqueue", NULL};
	const char *w = writable_by_policy(c, m->point);
	if (w)
		return w;
	if (in_list(m->point, scratch))
		return "private";
	if (!strcmp(m->point, "/proc") && !strcmp(m->fstype, "proc"))
		return "procfs";
	if (c->home && !strcmp(m->point, c->home) && !strcmp(m->fstype, "tmpfs"))
		return "home tmpfs";
	if (toolcache_is_private_mount(c->home, m->root, m->point))
		return "private package cache";
	return is_device_bind(c, m) ? "device" : NULL;
}

#define LIST_MAX 5

static void list_add(struct strbuf *b, int *n, const char *s)
{
	if ((*n)++ < LIST_MAX)
		sb_addf(b, "%s%s", b->len ? ", " : "", s);
}

static void verdict(struct probe_out *o, struct strbuf *bad, int nbad, int total,
		    const char *fail_fmt, const char *pass_fmt)
{
	if (nbad) {
		char more[32] = "";
		if (nbad > LIST_MAX)
			snprintf(more, sizeof more, " (+%d more)", nbad - LIST_MAX);
		set(o, PROBE_FAIL, "%d %s: %s%s", nbad, fail_fmt, sb_str(bad), more);
	} else {
		set(o, PROBE_PASS, "%d mounts, %s", total, pass_fmt);
	}
	sb_free(bad);
}

void probe_check_mounts_rw(const struct probe_ctx *c, const char *mi, struct probe_out *o)
{
	struct mnt_entry m;
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, total = 0;
	for (const char *p = mi; mnt_next(&p, &m); total++)
		if (has_opt(m.opts, "rw") && !rw_reason(c, &m))
			list_add(&bad, &nbad, m.point);
	verdict(o, &bad, nbad, total, "writable mounts the policy does not allow",
		"writable only where the policy allows");
}

void probe_check_mounts_nosuid(const char *mi, struct probe_out *o)
{
	struct mnt_entry m;
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, total = 0;
	for (const char *p = mi; mnt_next(&p, &m); total++)
		if (!has_opt(m.opts, "nosuid"))
			list_add(&bad, &nbad, m.point);
	verdict(o, &bad, nbad, total, "mounts without nosuid", "all nosuid");
}

void probe_check_mounts_nodev(const struct probe_ctx *c, const char *mi, struct probe_out *o)
{
	struct mnt_entry m;
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, total = 0;
	for (const char *p = mi; mnt_next(&p, &m); total++) {
		bool exempt = is_device_bind(c, &m) ||
			      (!strcmp(m.point, "/dev/pts") && !strcmp(m.fstype, "devpts"));
		if (!exempt && !has_opt(m.opts, "nodev"))
			list_add(&bad, &nbad, m.point);
	}
	verdict(o, &bad, nbad, total, "mounts without nodev",
		"nodev except the device nodes and /dev/pts");
}

static void with_mountinfo(struct probe_out *o, char **mi)
{
	*mi = read_all("/proc/self/mountinfo");
	if (!*mi || !**mi)
		set(o, PROBE_FAIL, "cannot read /proc/self/mountinfo: %s", ename(errno));
}

static void p_mounts_rw(const struct probe_ctx *c, struct probe_out *o)
{
	_cleanup_free_ char *mi = NULL;
	with_mountinfo(o, &mi);
	if (mi && *mi)
		probe_check_mounts_rw(c, mi, o);
}

static void p_mounts_nosuid(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	_cleanup_free_ char *mi = NULL;
	with_mountinfo(o, &mi);
	if (mi && *mi)
		probe_check_mounts_nosuid(mi, o);
}

static void p_mounts_nodev(const struct probe_ctx *c, struct probe_out *o)
{
	_cleanup_free_ char *mi = NULL;
	with_mountinfo(o, &mi);
	if (mi && *mi)
		probe_check_mounts_nodev(c, mi, o);
}

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
	_cleanup_free_ char *mi = read_all("/proc/self/mountinfo");
	struct mnt_entry m;
	char best[PATH_MAX] = "", type[64] = "";
	for (const char *p = mi ? mi : ""; mnt_next(&p, &m);)
		if (path_is_under(dir, m.point) && strlen(m.point) >= strlen(best)) {
			snprintf(best, sizeof best, "%s", m.point);
			snprintf(type, sizeof type, "%s", m.fstype);
		}
	return !strcmp(type, "tmpfs") && in_list(best, priv) ? xstrdup(best) : NULL;
}

static void expect_unwritable(const struct probe_ctx *c, struct probe_out *o, const char *dir)
{
	if (!is_dir(dir)) {
		set(o, PROBE_SKIP, "%s does not exist here", dir);
		return;
	}
	int rc = try_create(dir, tok(c));
	int err = errno;
	const char *why = writable_by_policy(c, dir);
	_cleanup_free_ char *priv = rc == 0 && !why ? private_tmpfs_of(dir) : NULL;
	if (rc == 0 && why)
		set(o, PROBE_WARN, "%s is writable, as %s makes it", dir, why);
	else if (priv)
		set(o, PROBE_PASS, "%s is on the jail's private %s tmpfs: no host file is reached",
		    dir, priv);
	else if (rc == 0)
		set(o, PROBE_FAIL, "created a file in %s (removed)", dir);
	else
		set(o, PROBE_PASS, "cannot create a file in %s: %s", dir, ename(err));
}

static void p_write_usr(const struct probe_ctx *c, struct probe_out *o)
{
	expect_unwritable(c, o, "/usr");
}

static void p_write_etc(const struct probe_ctx *c, struct probe_out *o)
{
	expect_unwritable(c, o, "/etc");
}

static void p_write_root(const struct probe_ctx *c, struct probe_out *o)
{
	expect_unwritable(c, o, "/");
}

static void p_write_home_parent(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->home) {
		set(o, PROBE_SKIP, "no --home given");
		return;
	}
	_cleanup_free_ char *parent = path_dirname(c->home);
	expect_unwritable(c, o, parent);
}

static void p_workspace(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->workspace) {
		set(o, PROBE_SKIP, "no --workspace given");
		return;
	}
	int rc = try_create(c->workspace, tok(c));
	int err = errno;
	bool want = writable_by_policy(c, c->workspace) != NULL;
	const char *fs = fs_mode_name(c->fs);
	if (rc == 0 && want)
		set(o, PROBE_PASS, "writable, as %s says (a file was created and removed)", fs);
	else if (rc == 0)
		set(o, PROBE_FAIL,
		    "writable although the policy is %s (a file was created and "
		    "removed)",
		    fs);
	else if (want)
		set(o, PROBE_FAIL, "not writable (%s) although the policy is %s", ename(err), fs);
	else
		set(o, PROBE_PASS, "read-only, as %s says (%s)", fs, ename(err));
}

/* Writable without changing it: a directory by creating and removing a file in it, a regular
 * file by opening it for writing (no truncation, nothing written). */
static bool path_writable(const char *p, const char *token)
{
	struct stat st;
	if (lstat(p, &st) < 0)
		return false;
	if (S_ISDIR(st.st_mode))
		return try_create(p, token) == 0;
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
		if (exists(p))
			strv_push(out, p);
	}
	_cleanup_free_ char *claude = path_join(ws, ".claude");
	_cleanup_closedir_ DIR *d = opendir(claude);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "settings", 8) && strstr(de->d_name, ".json"))
			strv_push_take(out, path_join(claude, de->d_name));
}

static void p_protected(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->workspace) {
		set(o, PROBE_SKIP, "no --workspace given");
		return;
	}
	struct strv found = STRV_INIT;
	protected_existing(c->workspace, &found);
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0;
	for (size_t i = 0; i < found.n; i++)
		if (path_writable(found.v[i], tok(c)))
			list_add(&bad, &nbad, path_below(found.v[i], c->workspace));
	if (!found.n)
		set(o, PROBE_SKIP,
		    "no protected path (.git/hooks, .bashrc, ...) exists in the "
		    "workspace");
	else if (nbad)
		set(o, PROBE_FAIL, "%d of %zu protected paths writable: %s", nbad, found.n,
		    sb_str(&bad));
	else
		set(o, PROBE_PASS, "%zu protected paths read-only (%s%s)", found.n,
		    path_below(found.v[0], c->workspace), found.n > 1 ? ", ..." : "");
	sb_free(&bad);
	strv_free(&found);
}

static void p_canary(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->canary) {
		set(o, PROBE_SKIP, "no canary file on the host");
		return;
	}
	char buf[256];
	ssize_t n = fs_read_small(c->canary, buf, sizeof buf);
	const char *why = visible_by_policy(c, c->canary);
	if (n < 0)
		set(o, PROBE_PASS, "the canary in $HOME is out of reach: %s", ename(errno));
	else if (c->token && strstr(buf, c->token))
		set(o, why ? PROBE_WARN : PROBE_FAIL, "the canary %s is readable%s%s", c->canary,
		    why ? ", as " : "", why ? why : "");
	else
		set(o, PROBE_PASS, "%s opens but does not hold the canary (masked)", c->canary);
}

static void p_ssh(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->ssh_dir) {
		set(o, PROBE_SKIP, "no ~/.ssh on the host");
		return;
	}
	_cleanup_closedir_ DIR *d = opendir(c->ssh_dir);
	if (!d) {
		set(o, PROBE_PASS, "%s is out of reach: %s", c->ssh_dir, ename(errno));
		return;
	}
	const char *why = visible_by_policy(c, c->ssh_dir);
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
			set(o, why ? PROBE_WARN : PROBE_FAIL, "%s/%s is readable%s%s", c->ssh_dir,
			    de->d_name, why ? ", as " : "", why ? why : "");
			return;
		}
		if (fd >= 0)
			(void)close(fd);
	}
	if (listed)
		set(o, PROBE_WARN, "%s lists %d names, none readable", c->ssh_dir, listed);
	else
		set(o, PROBE_PASS, "%s is empty here", c->ssh_dir);
}

static void p_shadow(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char buf[64];
	ssize_t n = fs_read_small("/etc/shadow", buf, sizeof buf);
	if (n < 0 && errno == ENOENT)
		set(o, PROBE_SKIP, "no /etc/shadow on this host");
	else if (n < 0)
		set(o, PROBE_PASS, "/etc/shadow: %s", ename(errno));
	else if (n == 0)
		set(o, PROBE_PASS, "/etc/shadow is masked (empty)");
	else
		set(o, PROBE_FAIL, "/etc/shadow is readable");
}

/* A hard link made inside the jail to a file outside would stay behind (in the workspace, or in
 * a directory the host shares) pointing at that file. */
static void p_hardlink(const struct probe_ctx *c, struct probe_out *o)
{
	const char *dirs[] = {c->workspace, c->scratch};
	struct strbuf seen = STRBUF_INIT;
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		if (!dirs[i])
			continue;
		_cleanup_free_ char *l = xasprintf("%s/." BAIT_PREFIX "link-%s", dirs[i], tok(c));
		if (link("/etc/passwd", l) == 0) {
			(void)unlink(l);
			set(o, PROBE_FAIL, "hard-linked /etc/passwd into %s (removed)", dirs[i]);
			sb_free(&seen);
			return;
		}
		sb_addf(&seen, "%s%s: %s", seen.len ? ", " : "", dirs[i], ename(errno));
	}
	if (seen.len)
		set(o, PROBE_PASS, "link(/etc/passwd): %s", sb_str(&seen));
	else
		set(o, PROBE_SKIP, "no writable directory to link into");
	sb_free(&seen);
}

static void p_mknod(const struct probe_ctx *c, struct probe_out *o)
{
	if (!scratch_target(c, o))
		return;
	_cleanup_free_ char *p = path_join(c->scratch, "null-copy");
	if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0) {
		(void)unlink(p);
		set(o, PROBE_FAIL, "created a character device node (1:3) in %s (removed)",
		    c->scratch);
	} else {
		set(o, PROBE_PASS, "mknod(char 1:3) in %s: %s", c->scratch, ename(errno));
	}
}

static void p_git_rename(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->workspace) {
		set(o, PROBE_SKIP, "no --workspace given");
		return;
	}
	_cleanup_free_ char *git = path_join(c->workspace, ".git");
	if (!exists(git)) {
		set(o, PROBE_SKIP, "no .git in the workspace");
		return;
	}
	_cleanup_free_ char *moved = xasprintf("%s-" BAIT_PREFIX "%s", git, tok(c));
	if (rename(git, moved) < 0) {
		set(o, PROBE_PASS, "rename(.git): %s", ename(errno));
		return;
	}
	if (rename(moved, git) < 0)
		set(o, PROBE_FAIL,
		    ".git could be renamed, and renaming it back failed (%s): it is "
		    "now %s",
		    ename(errno), moved);
	else
		set(o, PROBE_FAIL, ".git could be renamed (renamed back)");
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
		if (top[i] && is_dir(top[i]) && !strv_contains(out, top[i]))
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
static void p_git_metadata(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->workspace) {
		set(o, PROBE_SKIP, "no --workspace given");
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
			if (!exists(p)) {
				absent++;
				continue;
			}
			tested++;
			if (path_writable(p, tok(c)))
				list_add(&bad, &nbad, p);
		}
	}
	if (!dirs.n)
		set(o, PROBE_SKIP, "no git directory in the workspace");
	else if (nbad)
		set(o, PROBE_FAIL, "%d git metadata paths writable: %s", nbad, sb_str(&bad));
	else
		set(o, PROBE_PASS,
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
		return in_list(name, dirs);
	if (S_ISCHR(st->st_mode))
		return in_list(full, dev_nodes) || !strcmp(name, "ptmx") ||
		       strv_contains(&c->dev, full);
	return false; /* block devices, and anything stranger */
}

static void p_dev_minimal(const struct probe_ctx *c, struct probe_out *o)
{
	_cleanup_closedir_ DIR *d = opendir("/dev");
	if (!d) {
		set(o, PROBE_FAIL, "cannot list /dev: %s", ename(errno));
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
			list_add(&bad, &nbad, de->d_name);
	}
	if (nbad)
		set(o, PROBE_FAIL, "%d host devices in /dev: %s%s", nbad, sb_str(&bad),
		    nbad > LIST_MAX ? ", ..." : "");
	else
		set(o, PROBE_PASS, "/dev holds %d entries, all in the minimal set", total);
	sb_free(&bad);
}

/* ======================================================================================= */
/* /proc                                                                                   */

static void p_proc_sys(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	if (!is_dir("/proc/sys")) {
		set(o, PROBE_SKIP, "no /proc/sys here");
		return;
	}
	/* opened, never written */
	int fd = open("/proc/sys/kernel/hostname", O_WRONLY | O_CLOEXEC);
	int err = errno;
	struct statvfs sv;
	bool ro = statvfs("/proc/sys", &sv) == 0 && (sv.f_flag & ST_RDONLY);
	if (fd >= 0) {
		(void)close(fd);
		set(o, PROBE_FAIL, "/proc/sys/kernel/hostname opens for writing%s",
		    ro ? "" : " (/proc/sys is not read-only)");
	} else {
		set(o, PROBE_PASS, "/proc/sys is %s (open for writing: %s)",
		    ro ? "read-only" : "not writable", ename(err));
	}
}

/* core_pattern names the program the host runs as root on every crash: writing it is a host
 * takeover. The probe writes back the value it read, so even where that works nothing
 * changes. */
static void p_core_pattern(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	static const char path[] = "/proc/sys/kernel/core_pattern";
	char cur[512];
	ssize_t n = fs_read_small(path, cur, sizeof cur);
	if (n < 0 && errno == ENOENT) {
		set(o, PROBE_SKIP, "no %s here", path);
		return;
	}
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		set(o, PROBE_PASS, "core_pattern: %s", ename(errno));
		return;
	}
	if (n <= 0 || (size_t)n >= sizeof cur - 1) {
		(void)close(fd);
		set(o, PROBE_FAIL,
		    "core_pattern opens for writing (not written: its value could "
		    "not be read back whole)");
		return;
	}
	ssize_t w = write(fd, cur, (size_t)n);
	int err = errno;
	(void)close(fd);
	if (w == n)
		set(o, PROBE_FAIL, "core_pattern is writable (its own value was written back)");
	else
		set(o, PROBE_PASS, "core_pattern opens for writing but the write fails (%s)",
		    ename(err));
}

static void p_sysrq(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	if (!exists("/proc/sysrq-trigger")) {
		set(o, PROBE_SKIP, "no /proc/sysrq-trigger on this kernel");
		return;
	}
	int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC); /* never written */
	if (fd >= 0) {
		(void)close(fd);
		set(o, PROBE_FAIL, "/proc/sysrq-trigger opens for writing (nothing written)");
	} else {
		set(o, PROBE_PASS, "/proc/sysrq-trigger: %s", ename(errno));
	}
}

static void p_kernel_info(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	static const char *const files[] = {"/proc/kcore", "/proc/keys", "/proc/timer_list",
					    "/proc/sched_debug", "/proc/kallsyms"};
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, present = 0;
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		char b[64];
		ssize_t n = fs_read_small(files[i], b, sizeof b);
		present += exists(files[i]);
		/* /proc/kallsyms is world-readable by design: only its addresses leak (zeroed
		 * without CAP_SYSLOG) */
		bool leak = n > 0 && (strcmp(files[i], "/proc/kallsyms") || strspn(b, "0") < 16);
		if (leak)
			list_add(&bad, &nbad, files[i]);
	}
	if (nbad)
		set(o, PROBE_FAIL, "kernel internals readable: %s", sb_str(&bad));
	else
		set(o, PROBE_PASS,
		    "kcore, keys, timer_list, sched_debug absent, masked or "
		    "unreadable; kallsyms without addresses (%d present)",
		    present);
	sb_free(&bad);
}

/* ======================================================================================= */
/* Network                                                                                 */

static int connect_unix(const char *name, bool abstract)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	if (n + 1 >= sizeof sa.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path + (abstract ? 1 : 0), name, n);
	socklen_t len =
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int rc = connect(fd, (struct sockaddr *)&sa, len);
	int saved = errno;
	(void)close(fd);
	errno = saved;
	return rc;
}

static void unix_probe(const char *path, struct probe_out *o)
{
	if (!path) {
		set(o, PROBE_SKIP, "no socket planted there on the host");
		return;
	}
	if (connect_unix(path, false) == 0)
		set(o, PROBE_FAIL, "connected to the host's socket %s", path);
	else
		set(o, PROBE_PASS, "the host's socket %s: %s", path, ename(errno));
}

static void p_unix_run(const struct probe_ctx *c, struct probe_out *o)
{
	unix_probe(c->unix_run, o);
}

static void p_unix_tmp(const struct probe_ctx *c, struct probe_out *o)
{
	unix_probe(c->unix_tmp, o);
}

/* Abstract sockets live in the network namespace: unreachable with the network off; with it on,
 * only Landlock scoping (ABI >= 6) keeps the host's out of reach. */
static void p_abstract(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->abstract) {
		set(o, PROBE_SKIP, "no abstract socket planted on the host");
		return;
	}
	int abi = landlock_abi();
	int rc = connect_unix(c->abstract, true);
	int err = errno;
	if (rc < 0)
		set(o, PROBE_PASS, "the host's abstract socket @%s: %s%s", c->abstract, ename(err),
		    err == EPERM ? " (Landlock scoping)" : "");
	else if (c->net == NET_ON && abi < 6)
		set(o, PROBE_WARN,
		    "net on: the host's abstract Unix sockets are reachable (this "
		    "kernel has Landlock ABI %d, scoping needs 6)",
		    abi);
	else
		set(o, PROBE_FAIL,
		    "connected to the host's abstract socket @%s (net %s, Landlock "
		    "ABI %d)",
		    c->abstract, net_mode_name(c->net), abi);
}

static void p_loopback_tcp(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->tcp_port <= 0) {
		set(o, PROBE_SKIP, "no loopback listener planted on the host");
		return;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->tcp_port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {1, 0};
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	int rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&sa, sizeof sa);
	int err = errno;
	if (fd >= 0)
		(void)close(fd);
	if (rc < 0)
		set(o, PROBE_PASS, "the host's 127.0.0.1:%d: %s", c->tcp_port, ename(err));
	else if (c->net == NET_ON)
		set(o, PROBE_WARN,
		    "net on: the host's loopback services are reachable "
		    "(127.0.0.1:%d answered)",
		    c->tcp_port);
	else
		set(o, PROBE_FAIL, "connected to the host's 127.0.0.1:%d with the network %s",
		    c->tcp_port, net_mode_name(c->net));
}

/* connect() on a UDP socket only looks up a route: no packet leaves. */
static void egress(const struct probe_ctx *c, struct probe_out *o, int fam, const char *addr)
{
	struct sockaddr_storage ss = {0};
	socklen_t len;
	if (fam == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(53);
		(void)inet_pton(AF_INET, addr, &s4->sin_addr);
		len = sizeof *s4;
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(53);
		(void)inet_pton(AF_INET6, addr, &s6->sin6_addr);
		len = sizeof *s6;
	}
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = fd < 0 ? -1 : connect(fd, (struct sockaddr *)&ss, len);
	int err = errno;
	if (fd >= 0)
		(void)close(fd);
	if (rc < 0)
		set(o, PROBE_PASS, "no route to %s: %s (nothing sent)", addr, ename(err));
	else if (c->net == NET_ON)
		set(o, PROBE_PASS,
		    "net on: a route to %s exists, as the policy says (nothing "
		    "sent)",
		    addr);
	else
		set(o, PROBE_FAIL, "a route to %s exists with the network %s (nothing sent)", addr,
		    net_mode_name(c->net));
}

static void p_egress4(const struct probe_ctx *c, struct probe_out *o)
{
	egress(c, o, AF_INET, "1.1.1.1");
}

static void p_egress6(const struct probe_ctx *c, struct probe_out *o)
{
	egress(c, o, AF_INET6, "2606:4700:4700::1111");
}

/* ======================================================================================= */
/* The table                                                                               */

const char *const probe_categories[] = {
	"privileges",  "setid",      "terminal",   "namespaces", "mount-api", "kernel",  "ptrace",
	"processes",   "inheritance", "filesystem", "devices",   "proc",      "network", NULL,
};

/* clang-format off */
const struct probe_def probe_table[] = {
	{"priv.caps",              "privileges",  p_caps},
	{"priv.no_new_privs",      "privileges",  p_nnp},
	{"priv.seccomp",           "privileges",  p_seccomp},
	{"priv.landlock",          "privileges",  p_landlock},
	{"priv.setuid_copy",       "privileges",  p_setuid_copy},
	{"setid.chmod",            "setid",       p_setid_chmod},
	{"setid.fchmodat_setgid",  "setid",       p_setid_fchmodat},
	{"setid.open_creat",       "setid",       p_setid_open},
	{"setid.mknod",            "setid",       p_setid_mknod},
	{"tty.tiocsti",            "terminal",    p_tiocsti},
	{"tty.tiocsti_high_bits",  "terminal",    p_tiocsti_high},
	{"tty.tiocsti_i386",       "terminal",    p_tiocsti_i386},
	{"tty.tioclinux",          "terminal",    p_tioclinux},
	{"tty.tioclinux_high_bits","terminal",    p_tioclinux_high},
	{"ns.unshare_user",        "namespaces",  p_unshare_user},
	{"ns.unshare_mount",       "namespaces",  p_unshare_mnt},
	{"ns.unshare_net",         "namespaces",  p_unshare_net},
	{"ns.clone_newuser",       "namespaces",  p_clone_newuser},
	{"ns.clone3_newuser",      "namespaces",  p_clone3_newuser},
	{"ns.setns",               "namespaces",  p_setns},
	{"ns.chroot",              "namespaces",  p_chroot},
	{"mount.mount",            "mount-api",   p_mount},
	{"mount.umount2",          "mount-api",   p_umount2},
	{"mount.pivot_root",       "mount-api",   p_pivot_root},
	{"mount.open_tree",        "mount-api",   p_open_tree},
	{"mount.move_mount",       "mount-api",   p_move_mount},
	{"mount.fsopen",           "mount-api",   p_fsopen},
	{"mount.fsconfig",         "mount-api",   p_fsconfig},
	{"mount.fsmount",          "mount-api",   p_fsmount},
	{"mount.fspick",           "mount-api",   p_fspick},
	{"mount.mount_setattr",    "mount-api",   p_mount_setattr},
	{"kernel.keyctl",          "kernel",      p_keyctl},
	{"kernel.add_key",         "kernel",      p_add_key},
	{"kernel.request_key",     "kernel",      p_request_key},
	{"kernel.bpf",             "kernel",      p_bpf},
	{"kernel.perf_event_open", "kernel",      p_perf_event_open},
	{"kernel.userfaultfd",     "kernel",      p_userfaultfd},
	{"kernel.io_uring",        "kernel",      p_io_uring},
	{"kernel.personality",     "kernel",      p_personality},
	{"kernel.open_by_handle_at","kernel",     p_open_by_handle},
	{"kernel.init_module",     "kernel",      p_init_module},
	{"kernel.finit_module",    "kernel",      p_finit_module},
	{"kernel.kexec_load",      "kernel",      p_kexec_load},
	{"kernel.af_vsock",        "kernel",      p_af_vsock},
	{"kernel.syslog",          "kernel",      p_syslog},
	{"ptrace.child_attach",    "ptrace",      p_ptrace_child},
	{"ptrace.child_vm_readv",  "ptrace",      p_vm_readv_child},
	{"ptrace.pid1_attach",     "ptrace",      p_ptrace_pid1},
	{"ptrace.pid1_vm_readv",   "ptrace",      p_vm_readv_pid1},
	{"ptrace.pid1_mem",        "ptrace",      p_pid1_mem},
	{"pid.init",               "processes",   p_pid_init},
	{"pid.sentinel_hidden",    "processes",   p_sentinel_hidden},
	{"pid.sentinel_signal",    "processes",   p_sentinel_signal},
	{PROBE_SURVIVORS_ID,       "processes",   p_orphan},
	{"inherit.fds",            "inheritance", p_fds},
	{"inherit.env_bait",       "inheritance", p_env_bait},
	{"inherit.env_forbidden",  "inheritance", p_env_forbidden},
	{"fs.mounts_writable",     "filesystem",  p_mounts_rw},
	{"fs.mounts_nosuid",       "filesystem",  p_mounts_nosuid},
	{"fs.mounts_nodev",        "filesystem",  p_mounts_nodev},
	{"fs.write_usr",           "filesystem",  p_write_usr},
	{"fs.write_etc",           "filesystem",  p_write_etc},
	{"fs.write_root",          "filesystem",  p_write_root},
	{"fs.write_home_parent",   "filesystem",  p_write_home_parent},
	{"fs.workspace",           "filesystem",  p_workspace},
	{"fs.protected",           "filesystem",  p_protected},
	{"fs.canary",              "filesystem",  p_canary},
	{"fs.ssh",                 "filesystem",  p_ssh},
	{"fs.shadow",              "filesystem",  p_shadow},
	{"fs.hardlink",            "filesystem",  p_hardlink},
	{"fs.mknod",               "filesystem",  p_mknod},
	{"fs.git_rename",          "filesystem",  p_git_rename},
	{"fs.git_metadata",        "filesystem",  p_git_metadata},
	{"dev.minimal",            "devices",     p_dev_minimal},
	{"proc.sys_readonly",      "proc",        p_proc_sys},
	{"proc.core_pattern",      "proc",        p_core_pattern},
	{"proc.sysrq_trigger",     "proc",        p_sysrq},
	{"proc.kernel_info",       "proc",        p_kernel_info},
	{"net.unix_run",           "network",     p_unix_run},
	{"net.unix_tmp",           "network",     p_unix_tmp},
	{"net.abstract",           "network",     p_abstract},
	{"net.loopback_tcp",       "network",     p_loopback_tcp},
	{"net.egress_ipv4",        "network",     p_egress4},
	{"net.egress_ipv6",        "network",     p_egress6},
};
/* clang-format on */
const size_t probe_count = ARRAY_LEN(probe_table);

/* ======================================================================================= */
/* Running a probe                                                                         */

bool probe_selected(const struct probe_ctx *c, const struct probe_def *d)
{
	if (!c->only.n)
		return true;
	for (size_t i = 0; i < c->only.n; i++)
		if (!strncmp(d->id, c->only.v[i], strlen(c->only.v[i])))
			return true;
	return false;
}

static bool skipped(const struct probe_ctx *c, const struct probe_def *d, struct probe_out *o)
{
	size_t n = strlen(d->id);
	for (size_t i = 0; i < c->skip.n; i++)
		if (!strncmp(c->skip.v[i], d->id, n) && c->skip.v[i][n] == '=') {
			set(o, PROBE_SKIP, "%s", c->skip.v[i] + n + 1);
			return true;
		}
	return false;
}

/* Read exactly one result from the child, waiting at most timeout_ms. */
static int read_result(int fd, int timeout_ms, struct probe_out *o)
{
	size_t got = 0;
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (got < sizeof *o) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = timeout_ms - ((now.tv_sec - start.tv_sec) * 1000 +
					  (now.tv_nsec - start.tv_nsec) / 1000000);
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		int pr = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return -2; /* timed out */
		ssize_t n = read(fd, (char *)o + got, sizeof *o - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1; /* the child died before answering */
		got += (size_t)n;
	}
	return 0;
}

void probe_run(const struct probe_ctx *c, const struct probe_def *d, int timeout_ms,
	       struct probe_out *o)
{
	memset(o, 0, sizeof *o);
	if (skipped(c, d, o))
		return;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		set(o, PROBE_FAIL, "cannot run the probe: pipe: %s", ename(errno));
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		(void)close(p[0]);
		struct probe_out r;
		memset(&r, 0, sizeof r);
		set(&r, PROBE_FAIL, "the probe gave no verdict");
		d->fn(c, &r);
		(void)!write(p[1], &r, sizeof r);
		_exit(0);
	}
	(void)close(p[1]);
	int rc = pid < 0 ? -3 : read_result(p[0], timeout_ms, o);
	int err = errno;
	(void)close(p[0]);
	if (pid > 0)
		(void)kill(pid, SIGKILL);
	int ws = 0;
	while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (rc == -3)
		set(o, PROBE_FAIL, "cannot run the probe: fork: %s", ename(err));
	else if (rc == -2)
		set(o, PROBE_FAIL, "the probe did not answer within %d ms", timeout_ms);
	else if (rc == -1 && WIFSIGNALED(ws))
		set(o, PROBE_FAIL, "the probe crashed (signal %d)", WTERMSIG(ws));
	else if (rc == -1)
		set(o, PROBE_FAIL, "the probe ended without a verdict");
	/* printable ASCII only: the detail may quote paths from the jail */
	o->detail[sizeof o->detail - 1] = '\0';
	for (char *ch = o->detail; *ch; ch++)
		if ((unsigned char)*ch < 0x20 || (unsigned char)*ch > 0x7e)
			*ch = '?';
	if ((unsigned)o->r > PROBE_SKIP)
		set(o, PROBE_FAIL, "the probe returned an unknown verdict");
}

/* ======================================================================================= */
/* Host side                                                                               */

/* Wait (at most ms) until a process that is not our child has died: gone, or a zombie its
 * parent has yet to reap. */
static void wait_gone(pid_t pid, int ms)
{
	for (int waited = 0; waited < ms && !is_dead(pid); waited += 10)
		sleep_ms(10);
}

void probe_host_survivors(const char *token, struct probe_out *o)
{
	char marker[16];
	probe_marker_orphan(token, marker);
	pid_t pids[16];
	int seen = 0;
	int n = find_marked(marker, pids, 16, &seen);
	if (n == 0) {
		set(o, PROBE_PASS, "no process of the jail outlived it (%s gone)", marker);
		return;
	}
	for (int i = 0; i < n; i++)
		(void)kill(pids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		wait_gone(pids[i], 2000);
	set(o, PROBE_FAIL, "%d process%s of the jail outlived it (%s, host pid %d): killed now", n,
	    n > 1 ? "es" : "", marker, (int)pids[0]);
}

/* ---- bait ---- */

static int random_token(char out[PROBE_TOKEN_LEN + 1], struct err *e)
{
	unsigned char raw[PROBE_TOKEN_LEN / 2];
	size_t got = 0;
	while (got < sizeof raw) {
		ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_set(e, errno, NULL,
				       "cannot get random bytes for the bait token");
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

static int listen_unix(const char *name, bool abstract)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	if (n + 1 >= sizeof sa.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path + (abstract ? 1 : 0), name, n);
	socklen_t len =
		(socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (abstract ? 1 : 0));
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 16) < 0) {
		int saved = errno;
		(void)close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static int listen_tcp(int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		int saved = errno;
		(void)close(fd);
		errno = saved;
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* The sentinel: a host process the jail must neither see nor signal, which also accepts (and
 * closes) connections on the bait listeners until it is killed. Never returns. */
__attribute__((noreturn)) static void sentinel_main(const int *fds, int n, const char *marker,
						    pid_t parent, int ready)
{
	for (int s = 1; s < NSIG; s++)
		(void)signal(s, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(0);
	(void)prctl(PR_SET_NAME, marker, 0, 0, 0);
	(void)!write(ready, "r", 1); /* named: the jail may look for it now */
	(void)close(ready);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3 && null >= 0; fd++)
		(void)dup2(null, fd);
	struct pollfd pfd[4];
	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	for (;;) {
		if (poll(pfd, (nfds_t)n, n ? -1 : 60000) < 0 && errno != EINTR)
			_exit(1);
		for (int i = 0; i < n; i++) {
			int cfd = (pfd[i].revents & POLLIN)
					  ? accept4(fds[i], NULL, NULL, SOCK_CLOEXEC)
					  : -1;
			if (cfd >= 0)
				(void)close(cfd);
		}
	}
}

/* Whether the policy shows `p` to the jail (the workspace, --rw, --ro). */
static bool under_policy(const struct policy *pol, const char *p)
{
	if (path_is_under(p, pol->workspace))
		return true;
	const struct strv *l[] = {&pol->rw, &pol->ro};
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < l[k]->n; i++)
			if (path_is_under(p, l[k]->v[i]))
				return true;
	return false;
}

/* A listening socket in dir, unless we cannot write there or the policy shows that path to
 * the jail. Its fd, or -1 with the reason in skip. */
static int plant_unix(const struct policy *pol, const char *dir, const char *token, char *path,
		      size_t n, char *skip, size_t nskip)
{
	if (dir && access(dir, W_OK) < 0) {
		snprintf(skip, nskip, "%s is not writable by this user: no socket planted there",
			 dir);
		return -1;
	}
	if (!dir) {
		snprintf(skip, nskip,
			 "neither /run nor $XDG_RUNTIME_DIR is writable by this user: "
			 "no socket planted there");
		return -1;
	}
	snprintf(path, n, "%s/" BAIT_PREFIX "%s.sock", dir, token);
	if (under_policy(pol, path)) {
		snprintf(skip, nskip, "the policy shows %s to the jail: no socket planted there",
			 dir);
		path[0] = '\0';
		return -1;
	}
	int fd = listen_unix(path, false);
	if (fd < 0) {
		snprintf(skip, nskip, "cannot listen on %s: %s", path, ename(errno));
		path[0] = '\0';
	}
	return fd;
}

static void plant_listeners(struct bait *b, const struct policy *pol, int *fds, int *n)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *rundir = access("/run", W_OK) == 0 ? "/run" : xdg && xdg[0] == '/' ? xdg : NULL;
	int fd = plant_unix(pol, rundir, b->token, b->unix_run, sizeof b->unix_run, b->skip_run,
			    sizeof b->skip_run);
	if (fd >= 0)
		fds[(*n)++] = fd;
	fd = plant_unix(pol, "/tmp", b->token, b->unix_tmp, sizeof b->unix_tmp, b->skip_tmp,
			sizeof b->skip_tmp);
	if (fd >= 0)
		fds[(*n)++] = fd;
	snprintf(b->abstract, sizeof b->abstract, BAIT_PREFIX "%s", b->token);
	fd = listen_unix(b->abstract, true);
	if (fd >= 0)
		fds[(*n)++] = fd;
	else
		b->abstract[0] = '\0';
	fd = listen_tcp(&b->tcp_port);
	if (fd >= 0)
		fds[(*n)++] = fd;
	else
		b->tcp_port = 0;
}

static void plant_canary(struct bait *b, const char *home)
{
	snprintf(b->canary, sizeof b->canary, "%s/." BAIT_PREFIX "canary-%s", home, b->token);
	int fd = open(b->canary, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
	char line[96];
	int len = snprintf(line, sizeof line, "agentjail verify canary %s\n", b->token);
	if (fd < 0 || write(fd, line, (size_t)len) != len) {
		snprintf(b->skip_canary, sizeof b->skip_canary, "cannot write a canary in %s: %s",
			 home, ename(errno));
		if (fd >= 0)
			(void)unlink(b->canary);
		b->canary[0] = '\0';
	}
	if (fd >= 0)
		(void)close(fd);
}

static bool env_named(const struct policy *pol, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < pol->env.n; i++)
		if (!strncmp(pol->env.v[i], name, n) &&
		    (pol->env.v[i][n] == '\0' || pol->env.v[i][n] == '='))
			return true;
	return false;
}

int bait_plant(struct bait *b, const struct policy *pol, const char *home, const char *token,
	       struct err *e)
{
	memset(b, 0, sizeof *b);
	b->fd = -1;
	if (token && (strlen(token) != PROBE_TOKEN_LEN ||
		      strspn(token, "0123456789abcdef") != PROBE_TOKEN_LEN))
		return err_set(e, EINVAL, token, "the bait token must be %d hex digits",
			       PROBE_TOKEN_LEN);
	if (token)
		memcpy(b->token, token, PROBE_TOKEN_LEN + 1);
	else if (random_token(b->token, e) < 0)
		return -1;
	char value[64];
	snprintf(value, sizeof value, "verify-%s", b->token);
	for (size_t i = 0; probe_env_bait_names[i]; i++)
		if (!env_named(pol, probe_env_bait_names[i]))
			(void)setenv(probe_env_bait_names[i], value, 1);
	b->env_set = true;

	int fds[4], n = 0;
	plant_listeners(b, pol, fds, &n);
	char marker[16];
	probe_marker_sentinel(b->token, marker);
	pid_t parent = getpid();
	int ready[2] = {-1, -1};
	b->sentinel = pipe2(ready, O_CLOEXEC) == 0 ? fork() : -1;
	if (b->sentinel == 0)
		sentinel_main(fds, n, marker, parent, ready[1]);
	int saved = errno;
	for (int i = 0; i < n; i++)
		(void)close(fds[i]);
	if (ready[1] >= 0)
		(void)close(ready[1]);
	char r = 0;
	struct pollfd pfd = {.fd = ready[0], .events = POLLIN};
	bool up = b->sentinel > 0 && poll(&pfd, 1, 5000) == 1 && read(ready[0], &r, 1) == 1;
	saved = up ? 0 : (b->sentinel < 0 ? saved : ETIMEDOUT);
	if (ready[0] >= 0)
		(void)close(ready[0]);
	if (!up) {
		b->sentinel = b->sentinel < 0 ? 0 : b->sentinel;
		bait_remove(b);
		return err_set(e, saved, NULL, "cannot start the sentinel process for the bait");
	}
	plant_canary(b, home);
	/* left open without CLOEXEC on purpose: the jail must not inherit it */
	b->fd = open(home, O_RDONLY | O_DIRECTORY);
	return 0;
}

static void ctx_str(char **dst, const char *v)
{
	free(*dst);
	*dst = v && *v ? xstrdup(v) : NULL;
}

static void ctx_bait(const struct bait *b, const struct policy *pol, struct probe_ctx *c)
{
	ctx_str(&c->token, b->token);
	ctx_str(&c->canary, b->canary);
	ctx_str(&c->unix_run, b->unix_run);
	ctx_str(&c->unix_tmp, b->unix_tmp);
	ctx_str(&c->abstract, b->abstract);
	c->tcp_port = b->tcp_port;
	c->sentinel = b->sentinel;
	c->bait_fd = b->fd;
	for (size_t i = 0; b->env_set && probe_env_bait_names[i]; i++)
		if (!env_named(pol, probe_env_bait_names[i]))
			strv_push(&c->env_bait, probe_env_bait_names[i]);
	const char *why[][2] = {{"net.unix_run", b->skip_run},
				{"net.unix_tmp", b->skip_tmp},
				{"fs.canary", b->skip_canary}};
	for (size_t i = 0; i < ARRAY_LEN(why); i++)
		if (why[i][1][0])
			strv_pushf(&c->skip, "%s=%s", why[i][0], why[i][1]);
}

void bait_fill_ctx(const struct bait *b, const struct policy *pol, const char *home,
		   struct probe_ctx *c)
{
	probe_ctx_init(c);
	c->fs = pol->fs;
	c->net = pol->net;
	c->allow_ptrace = pol->allow_ptrace;
	ctx_str(&c->workspace, pol->workspace);
	ctx_str(&c->home, home);
	strv_copy(&c->rw, &pol->rw);
	strv_copy(&c->ro, &pol->ro);
	strv_copy(&c->dev, &pol->dev);
	for (size_t i = 0; i < pol->env.n; i++)
		strv_push_take(&c->env_allowed,
			       xstrndup(pol->env.v[i], strcspn(pol->env.v[i], "=")));
	_cleanup_free_ char *ssh = home ? path_join(home, ".ssh") : NULL;
	struct stat st;
	if (ssh && stat(ssh, &st) == 0 && S_ISDIR(st.st_mode))
		ctx_str(&c->ssh_dir, ssh);
	if (b && b->token[0])
		ctx_bait(b, pol, c);
}

void bait_remove(struct bait *b)
{
	char *paths[] = {b->canary, b->unix_run, b->unix_tmp};
	for (size_t i = 0; i < ARRAY_LEN(paths); i++)
		if (paths[i][0]) {
			(void)unlink(paths[i]);
			paths[i][0] = '\0';
		}
	if (b->sentinel > 0) {
		(void)kill(b->sentinel, SIGKILL);
		while (waitpid(b->sentinel, NULL, 0) < 0 && errno == EINTR)
			;
		b->sentinel = 0;
	}
	if (b->fd >= 0) {
		(void)close(b->fd);
		b->fd = -1;
	}
}
