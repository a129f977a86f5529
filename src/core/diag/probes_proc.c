/* probes, categories "processes", "inheritance" and "proc": what a jailed process sees of
 * other processes, what it inherited (fds, environment), and the kernel knobs under /proc. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Processes                                                                               */

void p_pid_init(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char argv0[256], comm[32];
	pr_proc_names(1, argv0, sizeof argv0, comm, sizeof comm);
	if (!strcmp(argv0, BW_INIT_PATH))
		pr_set(o, PROBE_PASS, "PID 1 is the jail's init (%s)", BW_INIT_PATH);
	else
		pr_set(o, PROBE_FAIL, "PID 1 is %s, not the jail's init %s",
		    comm[0] ? comm : "unreadable", BW_INIT_PATH);
}

void p_sentinel_hidden(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->sentinel <= 0 || !c->token) {
		pr_set(o, PROBE_SKIP, "no sentinel process on the host");
		return;
	}
	char marker[16];
	probe_marker_sentinel(c->token, marker);
	pid_t found[4];
	int seen = 0;
	int n = pr_find_marked(marker, found, 4, &seen);
	if (n > 0)
		pr_set(o, PROBE_FAIL, "the host's sentinel %s is visible in /proc as pid %d", marker,
		    (int)found[0]);
	else
		pr_set(o, PROBE_PASS, "the host's sentinel is not in /proc (%d processes visible)",
		    seen);
}

void p_sentinel_signal(const struct probe_ctx *c, struct probe_out *o)
{
	if (c->sentinel <= 0 || !c->token) {
		pr_set(o, PROBE_SKIP, "no sentinel process on the host");
		return;
	}
	char marker[16];
	probe_marker_sentinel(c->token, marker);
	if (kill(c->sentinel, 0) < 0)
		pr_set(o, PROBE_PASS, "kill(%d, 0): %s", (int)c->sentinel, pr_ename(errno));
	else if (pr_proc_has_marker(c->sentinel, marker))
		pr_set(o, PROBE_FAIL, "the host's sentinel (pid %d) can be signalled",
		    (int)c->sentinel);
	else
		pr_set(o, PROBE_PASS, "pid %d here is a process of the jail, not the host's sentinel",
		    (int)c->sentinel);
}

/* An orphan that outlives the battery unless the jail's end kills it; it tells when its name
 * is set, so the host's check cannot come too early. */
void p_orphan(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->token) {
		pr_set(o, PROBE_SKIP, "no token to mark a process with");
		return;
	}
	char marker[16];
	probe_marker_orphan(c->token, marker);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		pr_set(o, PROBE_SKIP, "cannot make a pipe: %s", pr_ename(errno));
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
				pr_sleep_ms(100);
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
		pr_set(o, PROBE_PASS,
		    "left an orphan named %s behind; the host checks it is gone once "
		    "the jail has ended",
		    marker);
	else
		pr_set(o, PROBE_SKIP, "could not leave an orphan behind: %s", pr_ename(errno));
}

/* ======================================================================================= */
/* Inheritance                                                                             */

void p_fds(const struct probe_ctx *c, struct probe_out *o)
{
	const char *l = c->fds_at_start;
	if (!l || !*l) {
		pr_set(o, PROBE_PASS, "only fds 0-2 were open at start%s",
		    c->bait_fd >= 0 ? " (the host left a directory fd open)" : "");
		return;
	}
	pr_set(o, PROBE_FAIL, "inherited fds: %s", l);
}

static bool name_in(const char *name, size_t n, const struct strv *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i]) == n && !strncmp(l->v[i], name, n))
			return true;
	return false;
}

void p_env_bait(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->env_bait.n) {
		pr_set(o, PROBE_SKIP, "no bait variables were set on the host");
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
		pr_set(o, PROBE_FAIL, "host secrets in the environment: %s", sb_str(&bad));
	else
		pr_set(o, PROBE_PASS, "%zu bait variables absent (%s, ...)", c->env_bait.n,
		    c->env_bait.v[0]);
	sb_free(&bad);
}

void p_env_forbidden(const struct probe_ctx *c, struct probe_out *o)
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
		pr_set(o, PROBE_FAIL, "forbidden variables set: %s", sb_str(&bad));
	else
		pr_set(o, PROBE_PASS,
		    "no LD_*, BASH_ENV, ENV, IFS, SSH_AUTH_SOCK, D-Bus or display "
		    "variable");
	sb_free(&bad);
}

/* ======================================================================================= */
/* /proc                                                                                   */

void p_proc_sys(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	if (!pr_is_dir("/proc/sys")) {
		pr_set(o, PROBE_SKIP, "no /proc/sys here");
		return;
	}
	/* opened, never written */
	int fd = open("/proc/sys/kernel/hostname", O_WRONLY | O_CLOEXEC);
	int err = errno;
	struct statvfs sv;
	bool ro = statvfs("/proc/sys", &sv) == 0 && (sv.f_flag & ST_RDONLY);
	if (fd >= 0) {
		(void)close(fd);
		pr_set(o, PROBE_FAIL, "/proc/sys/kernel/hostname opens for writing%s",
		    ro ? "" : " (/proc/sys is not read-only)");
	} else {
		pr_set(o, PROBE_PASS, "/proc/sys is %s (open for writing: %s)",
		    ro ? "read-only" : "not writable", pr_ename(err));
	}
}

/* core_pattern names the program the host runs as root on every crash: writing it is a host
 * takeover. The probe writes back the value it read, so even where that works nothing
 * changes. */
void p_core_pattern(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	static const char path[] = "/proc/sys/kernel/core_pattern";
	char cur[512];
	ssize_t n = fs_read_small(path, cur, sizeof cur);
	if (n < 0 && errno == ENOENT) {
		pr_set(o, PROBE_SKIP, "no %s here", path);
		return;
	}
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_set(o, PROBE_PASS, "core_pattern: %s", pr_ename(errno));
		return;
	}
	if (n <= 0 || (size_t)n >= sizeof cur - 1) {
		(void)close(fd);
		pr_set(o, PROBE_FAIL,
		    "core_pattern opens for writing (not written: its value could "
		    "not be read back whole)");
		return;
	}
	ssize_t w = write(fd, cur, (size_t)n);
	int err = errno;
	(void)close(fd);
	if (w == n)
		pr_set(o, PROBE_FAIL, "core_pattern is writable (its own value was written back)");
	else
		pr_set(o, PROBE_PASS, "core_pattern opens for writing but the write fails (%s)",
		    pr_ename(err));
}

void p_sysrq(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	if (!pr_exists("/proc/sysrq-trigger")) {
		pr_set(o, PROBE_SKIP, "no /proc/sysrq-trigger on this kernel");
		return;
	}
	int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC); /* never written */
	if (fd >= 0) {
		(void)close(fd);
		pr_set(o, PROBE_FAIL, "/proc/sysrq-trigger opens for writing (nothing written)");
	} else {
		pr_set(o, PROBE_PASS, "/proc/sysrq-trigger: %s", pr_ename(errno));
	}
}

void p_kernel_info(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	static const char *const files[] = {"/proc/kcore", "/proc/keys", "/proc/timer_list",
					    "/proc/sched_debug", "/proc/kallsyms"};
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, present = 0;
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		char b[64];
		ssize_t n = fs_read_small(files[i], b, sizeof b);
		present += pr_exists(files[i]);
		/* /proc/kallsyms is world-readable by design: only its addresses leak (zeroed
		 * without CAP_SYSLOG) */
		bool leak = n > 0 && (strcmp(files[i], "/proc/kallsyms") || strspn(b, "0") < 16);
		if (leak)
			pr_list_add(&bad, &nbad, files[i]);
	}
	if (nbad)
		pr_set(o, PROBE_FAIL, "kernel internals readable: %s", sb_str(&bad));
	else
		pr_set(o, PROBE_PASS,
		    "kcore, keys, timer_list, sched_debug absent, masked or "
		    "unreadable; kallsyms without addresses (%d present)",
		    present);
	sb_free(&bad);
}

