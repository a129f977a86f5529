/* probes, category "privileges": capabilities, no_new_privs, seccomp, Landlock, a setuid copy. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Privileges                                                                              */

void p_caps(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	static const char *const sets[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
	struct strbuf bad = STRBUF_INIT;
	int seen = 0;
	for (size_t i = 0; i < ARRAY_LEN(sets); i++) {
		char v[64];
		if (!pr_status_field(sets[i], v, sizeof v))
			continue;
		seen++;
		if (strtoull(v, NULL, 16) != 0)
			sb_addf(&bad, "%s%s=%s", bad.len ? " " : "", sets[i], v);
	}
	if (seen != 5)
		pr_set(o, PROBE_FAIL, "only %d of the 5 capability sets in /proc/self/status", seen);
	else if (bad.len)
		pr_set(o, PROBE_FAIL, "capabilities held: %s", sb_str(&bad));
	else
		pr_set(o, PROBE_PASS, "CapInh CapPrm CapEff CapBnd CapAmb are all 0");
	sb_free(&bad);
}

void p_nnp(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	int v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (v == 1)
		pr_set(o, PROBE_PASS, "no_new_privs is 1");
	else
		pr_set(o, PROBE_FAIL, "no_new_privs is %d: a setuid program would gain privileges", v);
}

void p_seccomp(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	char mode[32] = "", filters[32] = "";
	if (!pr_status_field("Seccomp", mode, sizeof mode)) {
		pr_set(o, PROBE_FAIL, "no Seccomp line in /proc/self/status");
		return;
	}
	(void)pr_status_field("Seccomp_filters", filters, sizeof filters);
	if (!strcmp(mode, "2"))
		pr_set(o, PROBE_PASS, "Seccomp: 2 (filter mode, %s filter%s)",
		    filters[0] ? filters : "?", strcmp(filters, "1") ? "s" : "");
	else
		pr_set(o, PROBE_FAIL, "Seccomp: %s: no syscall filter", mode);
}

/* A write the mounts allow but Landlock's writable view does not: /dev is a private tmpfs in
 * the jail, owned by its user, and not in the list init gives Landlock (/run is: it is part
 * of the writable view). */
void p_landlock(const struct probe_ctx *c, struct probe_out *o)
{
	int abi = landlock_abi();
	if (abi <= 0) {
		pr_set(o, PROBE_SKIP, "no Landlock in this kernel");
		return;
	}
	static const char *const dirs[] = {"/dev"};
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++) {
		struct statvfs sv;
		if (statvfs(dirs[i], &sv) < 0 || (sv.f_flag & ST_RDONLY))
			continue;
		if (pr_try_create(dirs[i], c->token ? c->token : "landlock") == 0) {
			pr_set(o, PROBE_FAIL,
			    "created a file in %s (removed): no Landlock domain "
			    "(kernel ABI %d)",
			    dirs[i], abi);
			return;
		}
		if (errno == EACCES) {
			pr_set(o, PROBE_PASS,
			    "Landlock (ABI %d) refuses a write in %s that the mounts "
			    "allow",
			    abi, dirs[i]);
			return;
		}
	}
	const char *env = getenv("AGENTJAIL_LANDLOCK");
	if (env && strstr(env, ",fs"))
		pr_set(o, PROBE_PASS, "init reports Landlock %s (no directory to test it on)", env);
	else
		pr_set(o, PROBE_FAIL, "kernel ABI %d but no sign of a Landlock domain", abi);
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

void p_setuid_copy(const struct probe_ctx *c, struct probe_out *o)
{
	if (!c->scratch) {
		pr_set(o, PROBE_SKIP, "no writable temporary directory in the jail");
		return;
	}
	_cleanup_free_ char *copy = path_join(c->scratch, "setuid-copy");
	if (copy_file("/proc/self/exe", copy, 0700) < 0) {
		pr_set(o, PROBE_SKIP, "cannot copy agentjail to %s: %s", c->scratch, pr_ename(errno));
		return;
	}
	struct stat st;
	if (chmod(copy, 04755) < 0 || stat(copy, &st) < 0 || !(st.st_mode & S_ISUID)) {
		pr_set(o, PROBE_PASS, "chmod u+s in %s refused or dropped (%s)", c->scratch,
		    pr_ename(errno));
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
		pr_set(o, PROBE_PASS, "the setuid copy in %s cannot be run: %s", c->scratch,
		    pr_ename(err));
	else if (rc < 0)
		pr_set(o, PROBE_SKIP, "cannot run the setuid copy in %s: %s", c->scratch, pr_ename(err));
	else if (euid != uid)
		pr_set(o, PROBE_FAIL, "a setuid copy (owner %u) in %s ran with euid %ld, not %ld",
		    (unsigned)st.st_uid, c->scratch, euid, uid);
	else
		pr_set(o, PROBE_PASS, "a setuid copy in %s keeps euid %ld (%s)", c->scratch, euid,
		    why);
}

