/* doctor: the host checks. The report and its text and JSON renderings are in doctor_render.c. */
#include "core/diag/doctor.h"
#include "core/plan/dirs.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/backend/bwrap/avail.h"
#include "core/confine/cgroup.h"
#include "core/host/etcscan.h"
#include "core/confine/landlock.h"
#include "core/plan/profile.h"
#include "core/host/shim.h"
#include "core/backend/bwrap/launch.h"
#include "core/backend/bwrap/netns.h"
#include "core/backend/bwrap/ovlns.h"
#include "core/confine/seccomp.h"
#include "core/host/userns_diag.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/xalloc.h"
#include "util/clock.h"

/* ======================================================================================== */
/* Pure helpers */

int doctor_bwrap_version_parse(const char *text, int v[3])
{
	const char *p = text ? strstr(text, "bubblewrap ") : NULL;
	if (!p)
		return -1;
	p += strlen("bubblewrap ");
	v[0] = v[1] = v[2] = 0;
	for (int i = 0; i < 3; i++) {
		if (*p < '0' || *p > '9')
			return i >= 2 ? 0 : -1;
		char *end;
		long n = strtol(p, &end, 10);
		if (n < 0 || n > 100000)
			return -1;
		v[i] = (int)n;
		p = end;
		if (*p != '.')
			return i >= 1 ? 0 : -1;
		p++;
	}
	return 0;
}

int doctor_version_cmp(const int a[3], const int b[3])
{
	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

char *doctor_landlock_features(int abi)
{
	static const char *const feat[] = {
	        "filesystem",       "refer",
	        "truncate",         "network",
	        "ioctl on devices", "scoping of abstract Unix sockets and signals",
	        "audit logging"};
	const int known = (int)(sizeof feat / sizeof *feat);
	if (abi <= 0)
		return xstrdup("not available");
	struct strbuf b = STRBUF_INIT;
	sb_addf(&b, "ABI %d: ", abi);
	for (int i = 0; i < abi && i < known; i++)
		sb_addf(&b, "%s%s (%d)", i ? ", " : "", feat[i], i + 1);
	if (abi > known)
		sb_addf(&b, ", and what ABI %d-%d add", known + 1, abi);
	return sb_steal(&b);
}

/* Skip a terminal escape sequence starting at p (ESC ...); returns the byte after it. */
static const char *skip_escape(const char *p)
{
	p++;             /* ESC */
	if (*p == '[') { /* CSI: parameters, then a final byte in @..~ */
		for (p++; *p && !(*p >= '@' && *p <= '~'); p++)
			;
		return *p ? p + 1 : p;
	}
	if (*p == ']') { /* OSC: until BEL or ESC \ */
		for (p++; *p && *p != '\a' && !(p[0] == '\033' && p[1] == '\\'); p++)
			;
		return *p == '\a' ? p + 1 : (*p ? p + 2 : p);
	}
	return *p ? p + 1 : p;
}

char *doctor_clean_line(const char *text, size_t max)
{
	struct strbuf b = STRBUF_INIT;
	const char *p = text ? text : "";
	for (;;) {
		b.len = 0;
		if (b.s)
			b.s[0] = '\0';
		while (*p && *p != '\n') {
			if (*p == '\033') {
				p = skip_escape(p);
				continue;
			}
			if ((unsigned char)*p >= 0x20 && *p != 0x7f)
				sb_addc(&b, *p == '\t' ? ' ' : *p);
			p++;
		}
		const char *s = sb_str(&b);
		while (*s == ' ')
			s++;
		if (*s || !*p)
			break;
		p++; /* a blank line: take the next one */
	}
	const char *s = sb_str(&b);
	while (*s == ' ')
		s++;
	size_t len = strlen(s);
	while (len && s[len - 1] == ' ')
		len--;
	if (len > max) {
		len = max;
		/* do not cut a UTF-8 sequence in half */
		while (len && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	char *out = xstrndup(s, len);
	sb_free(&b);
	return out;
}

/* ======================================================================================== */
/* Running a program for its --version: no terminal, stdin on /dev/null, a deadline */

struct capture {
	const char *path; /* absolute */
	char **argv;
	char **envp;
	pid_t pid; /* -1 when it could not be started */
	int fd;    /* read end of its stdout+stderr, -1 when closed */
	struct strbuf out;
	bool exited;
	bool timed_out;
	int wstatus;
	int spawn_errno;
};

#define CAPTURE_MAX 16384

static void capture_child(const struct capture *c, int wfd)
{
	/* a session of its own: no controlling terminal, so the program cannot reach the user's
	 * tty even through /dev/tty, and our terminal's signals do not reach it */
	if (setsid() < 0)
		_exit(126);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(wfd, 1) < 0 || dup2(wfd, 2) < 0)
		_exit(126);
	execve(c->path, c->argv, c->envp);
	_exit(127);
}

static void capture_start(struct capture *c)
{
	c->pid = -1;
	c->fd = -1;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		c->spawn_errno = errno;
		return;
	}
	pid_t pid = fork();
	if (pid == 0)
		capture_child(c, p[1]);
	c->spawn_errno = pid < 0 ? errno : 0;
	(void)close(p[1]);
	if (pid < 0) {
		(void)close(p[0]);
		return;
	}
	(void)fcntl(p[0], F_SETFL, O_NONBLOCK);
	c->pid = pid;
	c->fd = p[0];
}

/* Read what is there now; close at end of file. */
static void capture_drain(struct capture *c)
{
	char buf[4096];
	while (c->fd >= 0) {
		ssize_t n = read(c->fd, buf, sizeof buf);
		if (n > 0) {
			if (c->out.len < CAPTURE_MAX)
				sb_addn(&c->out, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || errno != EAGAIN) {
			(void)close(c->fd);
			c->fd = -1;
		}
		return;
	}
}

static void capture_reap(struct capture *c)
{
	if (c->pid < 0 || c->exited)
		return;
	pid_t w = waitpid(c->pid, &c->wstatus, WNOHANG);
	if (w == c->pid) {
		c->exited = true;
		/* what it wrote before exiting; a descendant keeping the pipe open is not waited
		 * for */
		capture_drain(c);
		if (c->fd >= 0) {
			(void)close(c->fd);
			c->fd = -1;
		}
	}
}

static void capture_kill(struct capture *c)
{
	if (c->pid < 0 || c->exited)
		return;
	(void)kill(-c->pid, SIGKILL); /* its whole session's process group */
	(void)kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &c->wstatus, 0) < 0 && errno == EINTR)
		;
	c->exited = true;
	c->timed_out = true;
	if (c->fd >= 0) {
		(void)close(c->fd);
		c->fd = -1;
	}
}

static bool capture_all_done(struct capture *c, size_t n)
{
	bool done = true;
	for (size_t i = 0; i < n; i++) {
		capture_reap(&c[i]);
		done = done && (c[i].pid < 0 || c[i].exited);
	}
	return done;
}

/* Start all, wait for all (together) until timeout_ms; kill what is left. */
static void capture_run(struct capture *c, size_t n, int timeout_ms)
{
	for (size_t i = 0; i < n; i++)
		capture_start(&c[i]);
	long deadline = clock_mono_ms() + timeout_ms;
	struct pollfd *pfd = xcalloc(n ? n : 1, sizeof *pfd);
	while (!capture_all_done(c, n)) {
		long left = deadline - clock_mono_ms();
		if (left <= 0)
			break;
		for (size_t i = 0; i < n; i++)
			pfd[i] = (struct pollfd){.fd = c[i].fd, .events = POLLIN};
		/* short slices: a program that exited while a descendant holds its pipe is
		 * noticed by waitpid, not by poll */
		(void)poll(pfd, n, (int)(left < 20 ? left : 20));
		for (size_t i = 0; i < n; i++)
			if (pfd[i].revents)
				capture_drain(&c[i]);
	}
	free(pfd);
	for (size_t i = 0; i < n; i++)
		capture_kill(&c[i]);
}

static void capture_free(struct capture *c)
{
	if (c->fd >= 0)
		(void)close(c->fd);
	sb_free(&c->out);
}

char *doctor_capture(const char *path, char **argv, char **envp, int timeout_ms, int *wstatus)
{
	struct capture c = {.path = path, .argv = argv, .envp = envp};
	capture_run(&c, 1, timeout_ms);
	char *out = NULL;
	*wstatus = c.pid < 0 || c.timed_out ? -1 : c.wstatus;
	if (*wstatus != -1)
		out = xstrdup(sb_str(&c.out));
	capture_free(&c);
	return out;
}

/* ======================================================================================== */
/* The checks */

static const char *home_dir(void)
{
	const char *h = getenv("HOME");
	if (h && h[0] == '/')
		return h;
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/";
}

/* err_format without the hint (the hint is the check's fix). */
static void err_line(const struct err *e, char *buf, size_t len)
{
	struct err copy = *e;
	copy.hint[0] = '\0';
	err_format(&copy, buf, len);
}

static const char BWRAP_FIX[] =
        "apt-get install bubblewrap (agentjail looks in /usr/bin and /usr/local/bin); with "
        "AGENTJAIL_BWRAP set, point it at a root-owned bwrap whose directories are root-owned and "
        "not writable by group or others, or unset it";

/* Returns the trusted bwrap (to free), or NULL. */
static char *check_bwrap(struct doctor_report *r)
{
	const char *conf = getenv("AGENTJAIL_BWRAP");
	bool configured = conf && *conf;
	char *bwrap = NULL;
	struct err e = {0};
	if (launch_find_bwrap(conf, &bwrap, &e) < 0) {
		char line[2200];
		err_line(&e, line, sizeof line);
		doctor_add(r, "bwrap", DOCTOR_FAIL, e.hint[0] ? e.hint : BWRAP_FIX, "%s%s%s%s",
		           configured ? "AGENTJAIL_BWRAP=" : "", configured ? conf : "",
		           configured ? ": " : "", line);
		return NULL;
	}
	doctor_add(r, "bwrap", DOCTOR_OK, NULL,
	           "%s (%s): trusted, it and every directory above it are owned by root and not "
	           "writable by group or others",
	           bwrap, configured ? "AGENTJAIL_BWRAP" : "default location");
	return bwrap;
}

static void check_bwrap_version(struct doctor_report *r, const char *bwrap)
{
	if (!bwrap) {
		doctor_add(r, "bwrap_version", DOCTOR_WARN, "see the bwrap check",
		           "not run: no trusted bwrap (an untrusted one is never executed)");
		return;
	}
	char a0[] = "bwrap", a1[] = "--version";
	char *argv[] = {a0, a1, NULL};
	char *envp[] = {NULL};
	struct capture c = {.path = bwrap, .argv = argv, .envp = envp};
	capture_run(&c, 1, DOCTOR_VERSION_TIMEOUT_MS);
	_cleanup_free_ char *line = doctor_clean_line(sb_str(&c.out), 120);
	static const int min[3] = {0, 8, 0}; /* DOCTOR_BWRAP_MIN */
	int v[3];
	if (c.pid < 0 || c.timed_out || doctor_bwrap_version_parse(line, v) < 0) {
		const char *how = c.pid < 0     ? "could not be run"
		                  : c.timed_out ? "timed out"
		                                : "said";
		const char *what = c.pid < 0 ? strerror(c.spawn_errno) : *line ? line : "(nothing)";
		doctor_add(r, "bwrap_version", DOCTOR_WARN,
		           "check that this file is bubblewrap: `bwrap --version` should print "
		           "`bubblewrap X.Y.Z`",
		           "`%s --version` %s: %s", bwrap, how, what);
	} else if (doctor_version_cmp(v, min) < 0) {
		doctor_add(r, "bwrap_version", DOCTOR_FAIL,
		           "install bubblewrap " DOCTOR_BWRAP_MIN " or newer (Debian 12: apt-get "
		           "install bubblewrap; Ubuntu 22.04: from backports or a newer release)",
		           "%s is older than " DOCTOR_BWRAP_MIN
		           ", which agentjail needs (--disable-userns)",
		           line);
	} else {
		doctor_add(r, "bwrap_version", DOCTOR_OK, NULL,
		           "%s (>= " DOCTOR_BWRAP_MIN " needed)", line);
	}
	capture_free(&c);
}

static void knob(struct strbuf *b, const char *name, long v)
{
	if (v < 0)
		sb_addf(b, "%s absent; ", name);
	else
		sb_addf(b, "%s = %ld; ", name, v);
}

static void check_userns(struct doctor_report *r)
{
	struct userns_facts f;
	avail_userns_facts(&f);
	struct strbuf b = STRBUF_INIT;
	knob(&b, "user.max_user_namespaces", f.max_user_ns);
	knob(&b, "kernel.unprivileged_userns_clone", f.unpriv_clone);
	knob(&b, "kernel.apparmor_restrict_unprivileged_userns", f.apparmor_restrict);
	if (f.userns_works) {
		doctor_add(r, "userns", DOCTOR_OK, NULL,
		           "%sa user namespace can be created and its uid map written", sb_str(&b));
	} else {
		struct userns_cause c = userns_diagnose(&f);
		doctor_add(r, "userns", DOCTOR_FAIL, c.fix,
		           "%sa user namespace cannot be created here: %s", sb_str(&b), c.cause);
	}
	sb_free(&b);
}

static const char *aa_state(int v)
{
	return v == 1 ? "loaded" : v == 0 ? "not loaded" : "unknown (the list of profiles is unreadable)";
}

/* Ubuntu's AppArmor restriction of unprivileged user namespaces (issue 28): whether agentjail's
 * profile (the --net allow namespace holder) and bwrap's are loaded, with the exact fix. */
static void check_apparmor(struct doctor_report *r)
{
	struct userns_facts f;
	avail_userns_facts(&f);
	if (f.apparmor_restrict != 1) {
		doctor_add(r, "apparmor", DOCTOR_OK, NULL,
		           "AppArmor does not restrict user namespaces here "
		           "(kernel.apparmor_restrict_unprivileged_userns %s)",
		           f.apparmor_restrict < 0 ? "absent" : "= 0");
		return;
	}
	const char *ours = aa_state(f.aa_agentjail), *theirs = aa_state(f.aa_bwrap);
	if (f.uid == 0 || (f.aa_agentjail == 1 && f.aa_bwrap == 1)) {
		doctor_add(r, "apparmor", DOCTOR_OK, NULL,
		           "kernel.apparmor_restrict_unprivileged_userns = 1%s; agentjail's profile: "
		           "%s; bwrap's: %s",
		           f.uid == 0 ? " (root is not restricted)" : "", ours, theirs);
		return;
	}
	doctor_add(r, "apparmor", DOCTOR_WARN, userns_aa_fix(&f),
	           "kernel.apparmor_restrict_unprivileged_userns = 1: an unprivileged program needs "
	           "an AppArmor profile granting `userns` to create a user namespace; agentjail's "
	           "profile (for --net allow): %s; bwrap's (for every jail): %s",
	           ours, theirs);
}

static void check_jail(struct doctor_report *r)
{
	struct avail_result a;
	struct err e = {0};
	char line[2200];
	/* the jail `run` builds by default: the bwrap backend's test run */
	if (backend_by_id(BACKEND_LOCAL)->available(&a, &e) < 0) {
		err_line(&e, line, sizeof line);
		doctor_add(r, "jail", DOCTOR_FAIL,
		           e.hint[0] ? e.hint
		           : a.bwrap ? "see the detail"
		                     : BWRAP_FIX,
		           "not attempted: %s", line);
		avail_result_free(&a);
		return;
	}
	_cleanup_free_ char *left =
	        a.leftover ? xasprintf(" (could not remove its scratch directory %s)", a.leftover)
	                   : xstrdup("");
	const char *msg = a.message && *a.message ? a.message : "(no message)";
	switch (a.outcome) {
	case AVAIL_OK:
		doctor_add(r, "jail", DOCTOR_OK, NULL,
		           "the jail `agentjail run` builds (default policy: --fs workspace-write "
		           "--net off, scratch workspace) ran /bin/true with %s in %ld ms%s",
		           a.bwrap, a.elapsed_ms, left);
		break;
	case AVAIL_NOT_STARTED:
		doctor_add(r, "jail", DOCTOR_FAIL, a.diag.fix,
		           "%s could not start the jail: \"%s\"; cause: %s%s", a.bwrap, msg,
		           a.diag.cause, left);
		break;
	case AVAIL_CMD_FAILED:
		doctor_add(
		        r, "jail", DOCTOR_FAIL,
		        "look at the jail with `agentjail run --dry-run -- /bin/true` and report "
		        "this output as a bug",
		        "the jail started but /bin/true exited %d in it: \"%s\"%s", a.status, msg,
		        left);
		break;
	case AVAIL_TIMEOUT:
		doctor_add(r, "jail", DOCTOR_FAIL,
		           "run `agentjail run -- /bin/true` to see where it hangs",
		           "the jail did not finish /bin/true within %d s (killed): \"%s\"%s",
		           AVAIL_TIMEOUT_MS / 1000, msg, left);
		break;
	case AVAIL_PREPARE:
		err_line(&a.prep_err, line, sizeof line);
		doctor_add(r, "jail", DOCTOR_FAIL,
		           a.prep_err.hint[0] ? a.prep_err.hint : "see the detail",
		           "the jail could not be prepared: %s%s", line, left);
		break;
	}
	avail_result_free(&a);
}

/* --net allow: a child builds the namespace the holder builds (user + net, maps, lo up, the
 * listeners) and hands the listeners over, exactly as a run does (core/backend/bwrap/netns.c). */
static void check_netns(struct doctor_report *r)
{
	struct err e = {0};
	char line[2200];
	if (netns_probe(&e) == 0) {
		doctor_add(r, "netns", DOCTOR_OK, NULL,
		           "--net allow works here: a child created a user + network namespace "
		           "(its uid mapped to itself), brought lo up and handed over listeners on "
		           "127.0.0.1:3128 and :53");
		return;
	}
	err_line(&e, line, sizeof line);
	doctor_add(r, "netns", DOCTOR_WARN, e.hint[0] ? e.hint : "run `agentjail doctor` as the "
	           "user who runs the agents",
	           "--net allow (the agents' default) cannot work here, --net off and on still "
	           "do: %s", line);
}

/* --fs review: a child mounts the review overlay exactly as a run's holder does (a user and
 * a mount namespace of its own, overlayfs with userxattr, upper and work in the state
 * directory), over the current directory as the workspace (core/backend/bwrap/ovlns.c). */
static void check_review(struct doctor_report *r, const char *state)
{
	_cleanup_free_ char *cwd = realpath(".", NULL);
	/* a state directory inside the directory: a run there is refused; probe the file
	 * systems anyway, over /tmp */
	bool inside = cwd && path_is_under(state, cwd);
	const char *lower = cwd && !inside ? cwd : "/tmp";
	/* the upper layer's file system is the state directory's: a temporary directory in it,
	 * or in its nearest existing ancestor (doctor never makes the state directory) */
	_cleanup_free_ char *base = xstrdup(state);
	struct stat st;
	while (lstat(base, &st) < 0 && strcmp(base, "/")) {
		char *up = path_dirname(base);
		free(base);
		base = up;
	}
	char *real = realpath(base, NULL); /* the probe opens it without following a link */
	if (real) {
		free(base);
		base = real;
	}
	struct err e = {0};
	char line[2200];
	if (ovlns_probe(base, lower, &e) == 0) {
		doctor_add(r, "review", inside ? DOCTOR_WARN : DOCTOR_OK,
		           inside ? "run agents in a project directory, not one holding the state "
		                    "directory"
		                  : NULL,
		           "--fs review works here: a child mounted overlayfs in a user namespace, "
		           "lower %s, upper in %s%s",
		           lower, state,
		           inside ? "; but here the state directory lies inside this directory, "
		                    "where review refuses to run"
		                  : "");
		return;
	}
	err_line(&e, line, sizeof line);
	doctor_add(r, "review", DOCTOR_WARN, e.hint[0] ? e.hint : "see the detail",
	           "--fs review cannot work here (the other modes still do): %s", line);
}

/* The kernel accepts seccomp filters (SECCOMP_GET_ACTION_AVAIL, Linux 4.14; before that the
 * EFAULT/EACCES a NULL filter gets tells filter mode apart from its absence, EINVAL). */
static bool kernel_has_filter(void)
{
	unsigned act = SECCOMP_RET_ERRNO;
	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &act) == 0)
		return true;
	if (errno == EOPNOTSUPP)
		return false;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) < 0 &&
	       (errno == EFAULT || errno == EACCES);
}

/* The "Seccomp:" line of /proc/self/status, or -1. */
static int status_seccomp(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	int v = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Seccomp: %d", &v) == 1)
			break;
	return v;
}

static const char SECCOMP_KERNEL_FIX[] =
        "boot a kernel with CONFIG_SECCOMP=y and CONFIG_SECCOMP_FILTER=y (every mainstream "
        "distribution kernel has both)";

static void check_seccomp(struct doctor_report *r)
{
	struct seccomp_opts o = {0};
	int fd = -1;
	struct err e = {0};
	char line[2200];
	if (seccomp_build_fd(&o, &fd, &e) < 0) {
		err_line(&e, line, sizeof line);
		doctor_add(r, "seccomp", DOCTOR_FAIL,
		           "report a bug: agentjail cannot build its filter on this architecture",
		           "the jail's filter cannot be built: %s", line);
		return;
	}
	struct stat st;
	long insns = fstat(fd, &st) == 0 ? (long)st.st_size / 8 : -1;
	(void)close(fd);
	int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	int field = status_seccomp();
	if (mode < 0 || !kernel_has_filter()) {
		doctor_add(r, "seccomp", DOCTOR_FAIL, SECCOMP_KERNEL_FIX,
		           "the jail's filter builds (%ld BPF instructions) but the kernel has no "
		           "seccomp filter mode (%s)",
		           insns, mode < 0 ? "PR_GET_SECCOMP fails" : "filters are refused");
		return;
	}
	doctor_add(r, "seccomp", DOCTOR_OK, NULL,
	           "the jail's filter builds (%ld BPF instructions); the kernel has seccomp filter "
	           "mode (Seccomp: %d for doctor itself%s)",
	           insns, field >= 0 ? field : mode,
	           mode == 2 ? ", already filtered by a container: the jail's filter stacks on it"
	                     : "");
}

static void check_landlock(struct doctor_report *r)
{
	int abi = landlock_abi();
	_cleanup_free_ char *feat = doctor_landlock_features(abi);
	/* which backends work here: the jail check says it for bwrap, this one for landlock */
	const char *backend = abi >= 4 ? "; `run --backend landlock` works here (without namespaces; "
	                                 "its --net allow matches the proxy's port, not its "
	                                 "address: a direct connection to another host on that "
	                                 "same port is not stopped)"
	                      : abi >= 3 ? "; `run --backend landlock` works here with --net off "
	                                   "or on (--net allow needs ABI 4)"
	                                 : "; `run --backend landlock` cannot work here (ABI 3 "
	                                   "needed)";
	if (abi >= 6) {
		doctor_add(r, "landlock", DOCTOR_OK, NULL,
		           "%s; the jail's abstract Unix sockets and signals are scoped to it%s",
		           feat, backend);
	} else if (abi > 0) {
		doctor_add(r, "landlock", DOCTOR_WARN,
		           "Linux 6.12 or newer brings Landlock ABI 6 (scoping); until then prefer "
		           "--net off or allow",
		           "%s; no scoping (ABI 6): with --net on the jail can reach the host's "
		           "abstract Unix sockets%s",
		           feat, backend);
	} else {
		doctor_add(
		        r, "landlock", DOCTOR_WARN,
		        "boot a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in its lsm= "
		        "list (Linux 6.12 or newer for scoping)",
		        "Landlock is not available: no defence in depth under bwrap's mounts, and "
		        "with --net on the jail can reach the host's abstract Unix sockets%s",
		        backend);
	}
}

/* What `backend = "auto"` would choose here (doc/design.md §2a), from the jail check's outcome
 * and Landlock's ABI, as backend_auto_choose decides at a run. */
static void check_auto(struct doctor_report *r)
{
	const struct doctor_check *jail = NULL;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i].id, "jail"))
			jail = &r->v[i];
	if (jail && jail->status == DOCTOR_OK) {
		doctor_add(r, "backend_auto", DOCTOR_OK, NULL,
		           "backend = \"auto\" would choose the bwrap jail (the jail check passed)");
		return;
	}
	const struct backend_caps *c = &backend_caps_landlock;
	int abi = landlock_abi();
	if (abi >= c->min_landlock_abi_net) {
		doctor_add(r, "backend_auto", DOCTOR_WARN, "see the jail check's fix",
		           "backend = \"auto\" would choose the Landlock backend (%s): the bwrap "
		           "jail cannot be built here",
		           c->auto_note);
	} else if (abi >= c->min_landlock_abi) {
		doctor_add(r, "backend_auto", DOCTOR_WARN, "see the jail check's fix",
		           "backend = \"auto\" would choose the Landlock backend (%s) for --net off "
		           "or on; with --net allow (the agents' default) it would refuse to run "
		           "(Landlock ABI %d, %d needed)",
		           c->auto_note, abi, c->min_landlock_abi_net);
	} else {
		doctor_add(r, "backend_auto", DOCTOR_FAIL, "see the jail check's fix",
		           "backend = \"auto\" would refuse to run (exit 125): the bwrap jail "
		           "cannot be built here and Landlock's ABI is %d (%d needed)",
		           abi, c->min_landlock_abi);
	}
}

/* How a jail's --memory and --pids hold on this host (cgroup.h). */
static void check_limits(struct doctor_report *r)
{
	struct cg_probe cp;
	cg_probe_host(&cp);
	if (cp.mech == LIMITS_CGROUP)
		doctor_add(r, "limits", DOCTOR_OK, NULL, "%s", cp.why);
	else if (cp.mech == LIMITS_CGROUP_V1)
		doctor_add(r, "limits", DOCTOR_WARN, cp.fix,
		           "pids: a cgroup v1 scope per jail under %s (pids.max); memory: rlimits "
		           "only, --memory sets RLIMIT_DATA per process (not the jail's total; the "
		           "default memory bounds only the tmpfs mounts); no cgroup v2 scope: %s",
		           cp.parent, cp.why);
	else
		doctor_add(r, "limits", DOCTOR_WARN, cp.fix,
		           "rlimits only: --memory sets RLIMIT_DATA per process (not the jail's "
		           "total; the default memory bounds only the tmpfs mounts)%s; no cgroup v2 "
		           "scope: %s",
		           getuid() == 0 ? ", no process limit (root is exempt from RLIMIT_NPROC)"
		                         : ", RLIMIT_NPROC in the jail's user namespace",
		           cp.why);
	cg_probe_free(&cp);
}

static void check_pty(struct doctor_report *r)
{
	static const char fix[] =
	        "mount devpts (mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts and "
	        "link /dev/ptmx to pts/ptmx), or give the container a /dev/pts";
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	char name[128] = "";
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof name) != 0) {
		int saved = errno;
		if (m >= 0)
			(void)close(m);
		doctor_add(r, "pty", DOCTOR_WARN, fix,
		           "cannot allocate a pseudo-terminal (%s): interactive sessions cannot "
		           "start (commands without a terminal still can)",
		           strerror(saved));
		return;
	}
	int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	int saved = errno;
	(void)close(m);
	if (s < 0) {
		doctor_add(r, "pty", DOCTOR_WARN, fix,
		           "got %s but cannot open it (%s): interactive sessions cannot start",
		           name, strerror(saved));
		return;
	}
	(void)close(s);
	doctor_add(r, "pty", DOCTOR_OK, NULL, "pseudo-terminals work (/dev/ptmx gave %s)", name);
}

/* The nearest existing ancestor of a missing path (to free), or NULL. */
static char *existing_ancestor(const char *path)
{
	char *cur = path_dirname(path);
	struct stat st;
	while (stat(cur, &st) < 0) {
		if (errno != ENOENT || !strcmp(cur, "/")) {
			free(cur);
			return NULL;
		}
		char *up = path_dirname(cur);
		free(cur);
		cur = up;
	}
	return cur;
}

static void state_missing(struct doctor_report *r, const char *dir, const char *src)
{
	_cleanup_free_ char *anc = existing_ancestor(dir);
	struct stat st;
	if (anc && stat(anc, &st) == 0 && S_ISDIR(st.st_mode) && access(anc, W_OK | X_OK) == 0) {
		doctor_add(r, "state_dir", DOCTOR_OK, NULL,
		           "%s (%s): not created yet; it will be, below %s (writable)", dir, src,
		           anc);
		return;
	}
	_cleanup_free_ char *fix = xasprintf(
	        "create it yourself (mkdir -p -m 0700 %s) or set AGENTJAIL_STATE_DIR to a "
	        "directory of yours",
	        dir);
	doctor_add(r, "state_dir", DOCTOR_WARN, fix,
	           "%s (%s) does not exist and cannot be created: %s is not a writable directory; "
	           "sessions and quarantined files cannot be kept",
	           dir, src, anc ? anc : "no ancestor");
}

static void check_state_dir(struct doctor_report *r, const char *dir, const char *src)
{
	struct stat st;
	if (stat(dir, &st) < 0) {
		if (errno == ENOENT) {
			state_missing(r, dir, src);
			return;
		}
		doctor_add(r, "state_dir", DOCTOR_WARN,
		           "make it reachable, or set AGENTJAIL_STATE_DIR to a directory of yours",
		           "%s (%s) cannot be examined: %s", dir, src, strerror(errno));
		return;
	}
	_cleanup_free_ char *fix = NULL;
	const char *problem = NULL;
	if (!S_ISDIR(st.st_mode)) {
		problem = "is not a directory";
		fix = xstrdup("move it away, or set AGENTJAIL_STATE_DIR to a directory of yours");
	} else if (st.st_uid != geteuid()) {
		problem = "is owned by another user";
		fix = xasprintf("chown %u %s, or set AGENTJAIL_STATE_DIR to a directory of yours",
		                (unsigned)geteuid(), dir);
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		problem = "is writable by group or others";
		fix = xasprintf("chmod go-w %s", dir);
	} else if (access(dir, W_OK | X_OK) < 0) {
		problem = "is not writable";
		fix = xasprintf("chmod u+rwx %s", dir);
	}
	if (problem) {
		doctor_add(r, "state_dir", DOCTOR_WARN, fix,
		           "%s (%s) %s: sessions and quarantined files are not safe there", dir,
		           src, problem);
		return;
	}
	doctor_add(r, "state_dir", DOCTOR_OK, NULL, "%s (%s): yours, mode %04o, writable", dir, src,
	           (unsigned)(st.st_mode & 07777));
}

static bool written_since(const char *path, const struct timespec *t0)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return false;
	return st.st_mtim.tv_sec > t0->tv_sec ||
	       (st.st_mtim.tv_sec == t0->tv_sec && st.st_mtim.tv_nsec >= t0->tv_nsec);
}

/* The other read-only system trees of root's jails, rescanned (a refresh is the remedy for what
 * a cached scan cannot notice, see etcscan.h): one phrase for the etcscan line. */
static char *scan_trees(const char *scan_dir)
{
	static const char *const roots[] = {"/usr", "/opt", NULL};
	static const char *const how[] = {"", "every entry checked per run",
					  "every directory checked per run",
					  ("checked per run by its top directories and the package "
					   "database, rescanned hourly")};
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; roots[i]; i++) {
		struct stat st;
		if (lstat(roots[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		struct strv list = STRV_INIT;
		struct scan_info info;
		struct err e = {0};
		if (b.len)
			sb_add(&b, ", ");
		if (treescan_bound(scan_dir, roots[i], true, &list, &info, &e) < 0) {
			char line[2200];
			err_line(&e, line, sizeof line);
			sb_addf(&b, "%s cannot be scanned (%s): masked whole", roots[i], line);
			continue;
		}
		sb_addf(&b, "%s: %zu masked of %zu entries (%s%s)", roots[i], list.n,
			info.nentries, how[info.check],
			info.stored ? "" : "; cache not written now, each run rescans");
		strv_free(&list);
	}
	return sb_steal(&b);
}

static void check_etcscan(struct doctor_report *r, const char *state_dir)
{
	if (getuid() != 0) {
		doctor_add(r, "etcscan", DOCTOR_OK, NULL,
		           "not needed: only jails started by root mask the /etc entries other "
		           "users cannot read");
		return;
	}
	/* the same files hostfacts_gather reads: etcscan.cache and treescan-*.cache in root's scan
	 * directory (treescan_cache_dir of the canonical state dir) */
	char *real = realpath(state_dir, NULL);
	_cleanup_free_ char *scan_dir = treescan_cache_dir(real ? real : state_dir);
	_cleanup_free_ char *cache = path_join(scan_dir, "etcscan.cache");
	free(real);
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME_COARSE, &t0);
	struct strv list = STRV_INIT;
	struct err e = {0};
	if (etcscan_get("/etc", cache, true, &list, &e) < 0) {
		char line[2200];
		err_line(&e, line, sizeof line);
		doctor_add(r, "etcscan", DOCTOR_FAIL,
		           "make /etc readable by root (runs as root stop at this scan)",
		           "cannot scan /etc: %s", line);
		return;
	}
	bool fresh = written_since(cache, &t0);
	_cleanup_free_ char *trees = scan_trees(scan_dir);
	doctor_add(r, "etcscan", DOCTOR_OK, NULL,
	           "%zu /etc entries other users cannot read are masked in root's jails; %s %s; %s",
	           list.n,
	           fresh ? "cache refreshed:"
	                 : "cache not written now (a directory in /etc "
	                   "changed within 2 s, or the state directory is not writable), each run "
	                   "rescans:",
	           cache, trees);
	strv_free(&list);
}

/* The first executable regular file NAME in PATH's absolute entries (to free), or NULL;
 * agentjail itself (a shim) is passed over when `self` is given. */
static char *find_on_path(const char *name, const char *path, const char *self)
{
	_cleanup_free_ char *copy = xstrdup(path);
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		if (d[0] != '/')
			continue; /* ".", "" and relative entries would run whatever is in the cwd
			           */
		char *cand = path_join(d, name);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
			_cleanup_free_ char *real = self ? realpath(cand, NULL) : NULL;
			if (!real || strcmp(real, self) != 0)
				return cand;
		}
		free(cand);
	}
	return NULL;
}

static void report_agent(struct doctor_report *r, const struct profile *ag, const char *path,
                         struct capture *c)
{
	_cleanup_free_ char *id = xasprintf("agent.%s", ag->name);
	if (!path) {
		doctor_add(r, id, DOCTOR_OK, NULL, "not installed (%s is not on PATH)",
		           ag->exe[0]);
		return;
	}
	_cleanup_free_ char *fix = xasprintf(
	        "check that `%s --version` works in a terminal (doctor runs it without one, with "
	        "only PATH and HOME set)",
	        ag->exe[0]);
	_cleanup_free_ char *line = doctor_clean_line(sb_str(&c->out), 120);
	if (c->pid < 0)
		doctor_add(r, id, DOCTOR_WARN, fix, "%s: cannot run it: %s", path,
		           strerror(c->spawn_errno));
	else if (c->timed_out)
		doctor_add(r, id, DOCTOR_WARN, fix,
		           "%s: slow to answer: `%s --version` said nothing in %d s (stopped)", path,
		           ag->exe[0], DOCTOR_VERSION_TIMEOUT_MS / 1000);
	else if (!WIFEXITED(c->wstatus) || WEXITSTATUS(c->wstatus) != 0)
		doctor_add(r, id, DOCTOR_WARN, fix, "%s: `%s --version` %s %d: %s", path,
		           ag->exe[0], WIFEXITED(c->wstatus) ? "exited" : "died of signal",
		           WIFEXITED(c->wstatus) ? WEXITSTATUS(c->wstatus) : WTERMSIG(c->wstatus),
		           *line ? line : "(no output)");
	else
		doctor_add(r, id, DOCTOR_OK, NULL, "%s: %s", path,
		           *line ? line
		                 : "(no version "
		                   "printed)");
}

struct agent_run {
	char *path; /* where it was found, or NULL */
	char argv0[64];
	char *argv[3];
	size_t slot; /* its capture */
};

static void check_agents(struct doctor_report *r)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	_cleanup_free_ char *env_path = xasprintf("PATH=%s", path);
	_cleanup_free_ char *env_home = xasprintf("HOME=%s", home_dir());
	char *envp[] = {env_path, env_home, NULL};
	static char version_flag[] = "--version";
	const struct profile *const *ag = profile_all();
	size_t nag = 0;
	while (ag[nag])
		nag++;
	_cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
	struct agent_run *ar = xcalloc(nag, sizeof *ar);
	struct capture *c = xcalloc(nag, sizeof *c);
	size_t nrun = 0;
	for (size_t i = 0; i < nag; i++) {
		struct agent_run *a = &ar[i];
		a->path = find_on_path(ag[i]->exe[0], path, self);
		if (!a->path)
			continue;
		snprintf(a->argv0, sizeof a->argv0, "%s", ag[i]->exe[0]);
		a->argv[0] = a->argv0;
		a->argv[1] = version_flag;
		a->slot = nrun;
		c[nrun++] = (struct capture){.path = a->path, .argv = a->argv, .envp = envp};
	}
	capture_run(c, nrun, DOCTOR_VERSION_TIMEOUT_MS);
	for (size_t i = 0; i < nag; i++)
		report_agent(r, ag[i], ar[i].path, ar[i].path ? &c[ar[i].slot] : NULL);
	for (size_t i = 0; i < nrun; i++)
		capture_free(&c[i]);
	for (size_t i = 0; i < nag; i++)
		free(ar[i].path);
	free(ar);
	free(c);
}

/* Installed shims: reached first on PATH, or shadowed (then `claude` runs unjailed). */
static void check_shims(struct doctor_report *r)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	_cleanup_free_ char *dir = shim_default_dir(home_dir(), getenv("XDG_DATA_HOME"));
	const struct profile *const *ag = profile_all();
	for (size_t i = 0; ag[i]; i++) {
		const char *exe = ag[i]->exe[0];
		if (shim_check(dir, exe) != SHIM_OURS)
			continue;
		_cleanup_free_ char *id = xasprintf("shim.%s", ag[i]->name);
		_cleanup_free_ char *shim = path_join(dir, exe);
		_cleanup_free_ char *first = find_on_path(exe, path, NULL);
		const char *rc;
		char *line;
		shim_path_hint(getenv("SHELL"), dir, &rc, &line);
		_cleanup_free_ char *fix = xasprintf("put %s first on PATH: add `%s` to %s (and "
		                                     "remove what shadows it)",
		                                     dir, line, rc);
		free(line);
		if (first && !strcmp(first, shim))
			doctor_add(r, id, DOCTOR_OK, NULL, "%s is first on PATH: `%s` runs jailed",
			           shim, exe);
		else if (first)
			doctor_add(r, id, DOCTOR_WARN, fix,
			           "%s comes before the shim %s on PATH: `%s` runs unjailed", first,
			           shim, exe);
		else
			doctor_add(r, id, DOCTOR_WARN, fix, "%s is installed but %s is not on PATH",
			           shim, dir);
	}
}

/* Move every check of `from` to the end of `to`. */
static void report_take(struct doctor_report *to, struct doctor_report *from)
{
	for (size_t i = 0; i < from->n; i++) {
		if (to->n == to->cap) {
			to->cap = to->cap ? to->cap * 2 : 16;
			to->v = xrealloc(to->v, to->cap * sizeof *to->v);
		}
		to->v[to->n++] = from->v[i];
	}
	free(from->v);
	memset(from, 0, sizeof *from);
}

char *doctor_check_bwrap(struct doctor_report *r)
{
	char *bwrap = check_bwrap(r);
	check_bwrap_version(r, bwrap);
	return bwrap;
}

void doctor_run(struct doctor_report *r)
{
	const char *home = home_dir();
	const char *env_sd = getenv("AGENTJAIL_STATE_DIR");
	_cleanup_free_ char *state = dirs_state_dir(env_sd, getenv("XDG_STATE_HOME"), home);
	const char *src = env_sd && env_sd[0] == '/' ? "AGENTJAIL_STATE_DIR"
	                  : env_sd && *env_sd        ? "default; a relative AGENTJAIL_STATE_DIR "
	                                               "is ignored"
	                                             : "default";
	/* the state directory is judged before anything can create it (the /etc scan cache
	 * and the probe's own run write there); it is reported further down */
	struct doctor_report early = {0};
	check_state_dir(&early, state, src);
	doctor_check_config(&early);

	free(doctor_check_bwrap(r));
	check_userns(r);
	check_apparmor(r);
	check_etcscan(&early, state); /* refreshed before the probe reads it */
	check_jail(r);
	check_netns(r);
	check_review(r, state);
	check_seccomp(r);
	check_landlock(r);
	check_auto(r);
	check_limits(r);
	check_pty(r);
	report_take(r, &early);
	check_agents(r);
	check_shims(r);
	doctor_check_toolchains(r, home, state);
	doctor_check_secrets(r, state);
}
