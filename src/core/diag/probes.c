/* probes: the integrity battery (see probes.h). This file: the arguments and context
 * shared by the host and jail sides, the table, and running a probe. The probes themselves are in
 * probes_<category>.c, the host's bait in probes_bait.c, shared helpers in probes_util.c. */
#include "core/diag/probes_internal.h"
#include "util/clock.h"

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
	if (c->tls_port > 0)
		strv_pushf(out, "--tls-port=%d", c->tls_port);
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
	{"--tls-port", O_NUM, OFF(tls_port)},
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
		return xasprintf("(cannot list /proc/self/fd: %s)", pr_ename(errno));
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
	{"net.raw_tcp_fails_fast", "network",     p_raw_tcp},
	{"net.dns_only_allowed",   "network",     p_dns_stub},
	{"net.capture",            "network",     p_capture},
	{"net.sni_tunnel",         "network",     p_sni_tunnel},
	{"net.sni_capture",        "network",     p_sni_capture},
	{"net.links_routes_fixed", "network",     p_links},
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
			pr_set(o, PROBE_SKIP, "%s", c->skip.v[i] + n + 1);
			return true;
		}
	return false;
}

/* Read exactly one result from the child, waiting at most timeout_ms. */
static int read_result(int fd, int timeout_ms, struct probe_out *o)
{
	size_t got = 0;
	long long start = clock_mono_ms();
	while (got < sizeof *o) {
		long long left = timeout_ms - (clock_mono_ms() - start);
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
		pr_set(o, PROBE_FAIL, "cannot run the probe: pipe: %s", pr_ename(errno));
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		(void)close(p[0]);
		struct probe_out r;
		memset(&r, 0, sizeof r);
		pr_set(&r, PROBE_FAIL, "the probe gave no verdict");
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
		pr_set(o, PROBE_FAIL, "cannot run the probe: fork: %s", pr_ename(err));
	else if (rc == -2)
		pr_set(o, PROBE_FAIL, "the probe did not answer within %d ms", timeout_ms);
	else if (rc == -1 && WIFSIGNALED(ws))
		pr_set(o, PROBE_FAIL, "the probe crashed (signal %d)", WTERMSIG(ws));
	else if (rc == -1)
		pr_set(o, PROBE_FAIL, "the probe ended without a verdict");
	/* printable ASCII only: the detail may quote paths from the jail */
	o->detail[sizeof o->detail - 1] = '\0';
	for (char *ch = o->detail; *ch; ch++)
		if ((unsigned char)*ch < 0x20 || (unsigned char)*ch > 0x7e)
			*ch = '?';
	if ((unsigned)o->r > PROBE_SKIP)
		pr_set(o, PROBE_FAIL, "the probe returned an unknown verdict");
}

