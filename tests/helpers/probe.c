/* probe: one operation per run, for the black-box tests (tests/sh). Runs inside jails (and on the
 * host for control checks and listeners). No project dependencies.
 *
 *   probe SUBCOMMAND ARGS…
 *
 * Prints one line, "ok" or "errno=N (strerror)", and exits 0 when the operation succeeded, 1 when
 * it failed, 2 on a usage error. Exceptions: `env` prints the environment, `caps` prints the five
 * capability sets, `landlock-abi` the ABI version (0: none), the listeners print "ready"
 * (listen-tcp: "ready PORT") then serve until killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int report_errno(int err)
{
	printf("errno=%d (%s)\n", err, strerror(err));
	fflush(stdout);
	return 1;
}

static int report_ok(void)
{
	printf("ok\n");
	fflush(stdout);
	return 0;
}

static int result(int rc)
{
	return rc < 0 ? report_errno(errno) : report_ok();
}

static int usage(void)
{
	fprintf(stderr,
		"usage: probe write PATH [DATA] | read PATH | connect-unix PATH | connect-abstract NAME\n"
		"       | connect-tcp HOST PORT | socket FAMILY | unshare-user | clone-newuser | tiocsti\n"
		"       | caps | nnp | rename A B | link A B | mknod PATH | env | exit N | kill-self SIG\n"
		"       | listen-unix PATH | listen-abstract NAME | listen-tcp HOST PORT | landlock-abi\n"
		"       | mode chmod|fchmodat2|open-creat|mknod-reg OCTAL PATH | setcap-xattr PATH\n"
		"       | forkn N | forkbomb SECS PATH [NPROC] | alloc MIB | fill PATH MIB\n");
	return 2;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int do_write(const char *path, const char *data)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return report_errno(errno);
	size_t n = strlen(data);
	ssize_t w = write(fd, data, n);
	int err = errno;
	if (w < 0 || (size_t)w != n) {
		close(fd);
		return report_errno(w < 0 ? err : EIO);
	}
	if (close(fd) < 0)
		return report_errno(errno);
	return report_ok();
}

static int do_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return report_errno(errno);
	char buf[256];
	ssize_t r = read(fd, buf, sizeof buf);
	int err = errno;
	close(fd);
	if (r < 0)
		return report_errno(err);
	return report_ok();
}

/* Fill a sockaddr_un; abstract names get a leading NUL. Returns the address length or -1. */
static socklen_t make_sun(struct sockaddr_un *sa, const char *name, int abstract)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	size_t n = strlen(name);
	size_t off = abstract ? 1 : 0;
	if (n + off + (abstract ? 0 : 1) > sizeof sa->sun_path)
		return 0;
	memcpy(sa->sun_path + off, name, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + off + n + (abstract ? 0 : 1));
}

static int do_connect_unix(const char *name, int abstract)
{
	struct sockaddr_un sa;
	socklen_t len = make_sun(&sa, name, abstract);
	if (!len)
		return report_errno(ENAMETOOLONG);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report_errno(errno);
	int rc = connect(fd, (struct sockaddr *)&sa, len);
	int err = errno;
	close(fd);
	if (rc < 0)
		return report_errno(err);
	return report_ok();
}

static int do_connect_tcp(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV};
	struct addrinfo *ai = NULL;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g != 0) {
		printf("errno=%d (getaddrinfo: %s)\n", g == EAI_SYSTEM ? errno : 0, gai_strerror(g));
		return 1;
	}
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0) {
		int err = errno;
		freeaddrinfo(ai);
		return report_errno(err);
	}
	int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
	int err = errno;
	close(fd);
	freeaddrinfo(ai);
	if (rc < 0)
		return report_errno(err);
	return report_ok();
}

static int wrong_type(int err)
{
	return err == EINVAL || err == ESOCKTNOSUPPORT || err == EPROTONOSUPPORT ||
	       err == EPROTOTYPE || err == EOPNOTSUPP;
}

static int do_socket(const char *fam_s)
{
	long fam;
	if (parse_int(fam_s, 0, INT_MAX, &fam) < 0)
		return usage();
	static const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET};
	int err = 0;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		int fd = socket((int)fam, types[i] | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			close(fd);
			return report_ok();
		}
		err = errno;
		/* Only a type this family does not support is worth another try. */
		if (!wrong_type(err))
			break;
	}
	return report_errno(err);
}

static int do_unshare_user(void)
{
	return result(unshare(CLONE_NEWUSER));
}

static int do_clone_newuser(void)
{
	/* x86_64/aarch64 argument order: flags, newsp, parent_tid, child_tid, tls. */
	long pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), 0UL, 0UL, 0UL, 0UL);
	if (pid < 0)
		return report_errno(errno);
	if (pid == 0)
		_exit(0);
	int st;
	while (waitpid((pid_t)pid, &st, 0) < 0 && errno == EINTR)
		;
	return report_ok();
}

static int do_tiocsti(void)
{
	int fd = 0;
	int opened = 0;
	if (!isatty(0)) {
		fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd < 0) {
			int err = errno;
			printf("errno=%d (%s; no terminal: stdin is not a tty and /dev/tty failed)\n", err,
			       strerror(err));
			return 1;
		}
		opened = 1;
	}
	char c = 'x';
	int rc = ioctl(fd, TIOCSTI, &c);
	int err = errno;
	if (opened)
		close(fd);
	if (rc < 0)
		return report_errno(err);
	return report_ok();
}

static int do_caps(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return report_errno(errno);
	static const char *const names[] = {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"};
	int found = 0, nonzero = 0;
	char line[512];
	char out[512] = "";
	size_t used = 0;
	while (fgets(line, sizeof line, f)) {
		for (size_t i = 0; i < 5; i++) {
			size_t n = strlen(names[i]);
			if (strncmp(line, names[i], n) != 0 || line[n] != ':')
				continue;
			const char *v = line + n + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			unsigned long long val = strtoull(v, NULL, 16);
			found++;
			if (val)
				nonzero++;
			int w = snprintf(out + used, sizeof out - used, "%s%s=%016llx", used ? " " : "",
					 names[i], val);
			if (w > 0 && (size_t)w < sizeof out - used)
				used += (size_t)w;
		}
	}
	fclose(f);
	printf("%s\n", out);
	if (found != 5) {
		printf("errno=0 (found %d of 5 capability sets)\n", found);
		return 1;
	}
	return nonzero ? 1 : 0;
}

static int do_nnp(void)
{
	int r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (r < 0)
		return report_errno(errno);
	if (r != 1) {
		printf("no_new_privs=%d\n", r);
		return 1;
	}
	return report_ok();
}

static int do_mknod(const char *path)
{
	/* A character device (like /dev/null): needs CAP_MKNOD. */
	return result(mknod(path, S_IFCHR | 0666, makedev(1, 3)));
}

/* Set a mode (octal) on PATH one way: chmod, fchmodat2 (raw: headers may lack it), open-creat
 * (a new file created with that mode), mknod-reg (a regular file made by mknod). */
static int do_mode(const char *how, const char *mode_s, const char *path)
{
	char *end = NULL;
	errno = 0;
	unsigned long mode = strtoul(mode_s, &end, 8);
	if (errno || end == mode_s || *end || mode > 07777)
		return usage();
	if (!strcmp(how, "chmod"))
		return result(chmod(path, (mode_t)mode));
	if (!strcmp(how, "fchmodat2"))
		return result((int)syscall(452, AT_FDCWD, path, (mode_t)mode, 0));
	if (!strcmp(how, "mknod-reg"))
		return result(mknod(path, S_IFREG | (mode_t)mode, 0));
	if (!strcmp(how, "open-creat")) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
		if (fd >= 0)
			close(fd);
		return result(fd);
	}
	return usage();
}

/* A file capability (cap_setuid+ep, revision 2) on PATH. */
static int do_setcap_xattr(const char *path)
{
	const unsigned int v2[5] = {0x02000001u, 1u << 7, 1u << 7, 0, 0}; /* magic|effective */
	return result((int)syscall(SYS_setxattr, path, "security.capability", v2, sizeof v2, 0));
}

static int do_env(void)
{
	for (char **e = environ; *e; e++)
		printf("%s\n", *e);
	return 0;
}

static int do_kill_self(const char *sig_s)
{
	long sig;
	if (parse_int(sig_s, 1, 64, &sig) < 0)
		return usage();
	struct sigaction sa = {.sa_handler = SIG_DFL};
	sigemptyset(&sa.sa_mask);
	if (sig != SIGKILL && sig != SIGSTOP && sigaction((int)sig, &sa, NULL) < 0)
		return report_errno(errno);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, (int)sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	fflush(stdout);
	if (raise((int)sig) != 0)
		return report_errno(errno);
	/* Still here: the signal was ignored (e.g. we are PID 1 of a pid namespace). */
	struct timespec ts = {0, 100 * 1000 * 1000};
	nanosleep(&ts, NULL);
	printf("errno=0 (still alive after raise(%ld); pid %ld)\n", sig, (long)getpid());
	return 3;
}

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

/* Prints the Landlock ABI version (0 when Landlock is unavailable). Always exits 0. */
static int do_landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0UL, 1UL /* _VERSION */);
	printf("%ld\n", v > 0 ? v : 0L);
	return 0;
}

static void serve_forever(int fd)
{
	signal(SIGPIPE, SIG_IGN);
	for (;;) {
		int c = accept(fd, NULL, NULL);
		if (c >= 0)
			close(c);
		else if (errno != EINTR && errno != ECONNABORTED)
			sleep(1);
	}
}

static int do_listen_unix(const char *name, int abstract)
{
	struct sockaddr_un sa;
	socklen_t len = make_sun(&sa, name, abstract);
	if (!len)
		return report_errno(ENAMETOOLONG);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return report_errno(errno);
	if (!abstract)
		unlink(name);
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 64) < 0)
		return report_errno(errno);
	/* Anyone may connect on the host: the test checks the jail is what stops it. */
	if (!abstract && chmod(name, 0777) < 0)
		return report_errno(errno);
	printf("ready\n");
	fflush(stdout);
	serve_forever(fd);
	return 0;
}

static int do_listen_tcp(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE};
	struct addrinfo *ai = NULL;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g != 0) {
		printf("errno=0 (getaddrinfo: %s)\n", gai_strerror(g));
		return 1;
	}
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return report_errno(errno);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0)
		return report_errno(errno);
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char h[NI_MAXHOST], p[NI_MAXSERV];
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p,
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return report_errno(errno);
	printf("ready %s\n", p);
	fflush(stdout);
	serve_forever(fd);
	return 0;
}

/* Start n children that wait; prints "forked K" then ok, or the fork's errno. */
static int do_forkn(const char *arg)
{
	long n;
	if (parse_int(arg, 1, 100000, &n) < 0)
		return usage();
	pid_t *kids = calloc((size_t)n, sizeof *kids);
	if (!kids)
		return report_errno(ENOMEM);
	long k = 0;
	int err = 0;
	for (; k < n; k++) {
		pid_t p = fork();
		if (p == 0) {
			pause();
			_exit(0);
		}
		if (p < 0) {
			err = errno;
			break;
		}
		kids[k] = p;
	}
	for (long i = 0; i < k; i++)
		(void)kill(kids[i], SIGKILL);
	for (long i = 0; i < k; i++)
		(void)waitpid(kids[i], NULL, 0);
	free(kids);
	printf("forked %ld\n", k);
	return err ? report_errno(err) : report_ok();
}

static long mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec;
}

/* One process of the bomb: two children that do the same, then exit; a refused fork is tried
 * again, not given up (so the bomb stays at whatever limit holds). Gone after `until`. */
static _Noreturn void bomb(long until)
{
	int made = 0;
	while (made < 2) {
		if (mono_s() > until)
			_exit(0);
		pid_t p = fork();
		if (p == 0)
			made = 0;
		else if (p > 0)
			made++;
	}
	_exit(0);
}

/* A fork bomb that lasts while this process sleeps SECS, writes PATH ("done") and exits (prints
 * ok). NPROC: RLIMIT_NPROC first (for the bomb too). The bomb runs at nice 19, so a shared
 * machine (and the test's own clock) stays responsive: what a test measures is how the bomb is
 * torn down, not how the scheduler shares 2 cores. Every bomb process gives up 30 s after the
 * start: a case that fails leaves nothing running for long. */
static int do_forkbomb(const char *secs_s, const char *path, const char *nproc_s)
{
	long secs, nproc = 0;
	if (parse_int(secs_s, 0, 60, &secs) < 0 ||
	    (nproc_s && parse_int(nproc_s, 1, 1 << 20, &nproc) < 0))
		return usage();
	struct rlimit rl = {(rlim_t)nproc, (rlim_t)nproc};
	if (nproc && setrlimit(RLIMIT_NPROC, &rl) < 0)
		return report_errno(errno);
	long until = mono_s() + 30;
	pid_t b = fork();
	if (b < 0)
		return report_errno(errno);
	if (b == 0) {
		errno = 0;
		if (nice(19) < 0 && errno)
			_exit(1);
		bomb(until);
	}
	struct timespec t = {secs, 0};
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
	return do_write(path, "done\n");
}

/* Allocate MIB mebibytes and touch every page. */
static int do_alloc(const char *arg)
{
	long mib;
	if (parse_int(arg, 1, 1 << 20, &mib) < 0)
		return usage();
	size_t len = (size_t)mib << 20;
	char *m = malloc(len);
	if (!m)
		return report_errno(errno ? errno : ENOMEM);
	for (size_t off = 0; off < len; off += 4096)
		m[off] = 1;
	return report_ok();
}

/* Write MIB mebibytes into a new file PATH. */
static int do_fill(const char *path, const char *arg)
{
	long mib;
	if (parse_int(arg, 1, 1 << 20, &mib) < 0)
		return usage();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return report_errno(errno);
	static char buf[1 << 20];
	memset(buf, 'x', sizeof buf);
	for (long i = 0; i < mib; i++) {
		size_t off = 0;
		while (off < sizeof buf) {
			ssize_t w = write(fd, buf + off, sizeof buf - off);
			if (w < 0) {
				int err = errno;
				(void)close(fd);
				(void)unlink(path);
				return report_errno(err);
			}
			off += (size_t)w;
		}
	}
	(void)close(fd);
	(void)unlink(path);
	return report_ok();
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *cmd = argv[1];
	int n = argc - 2;
	char **a = argv + 2;

	if (!strcmp(cmd, "write") && (n == 1 || n == 2))
		return do_write(a[0], n == 2 ? a[1] : "x");
	if (!strcmp(cmd, "read") && n == 1)
		return do_read(a[0]);
	if (!strcmp(cmd, "connect-unix") && n == 1)
		return do_connect_unix(a[0], 0);
	if (!strcmp(cmd, "connect-abstract") && n == 1)
		return do_connect_unix(a[0], 1);
	if (!strcmp(cmd, "connect-tcp") && n == 2)
		return do_connect_tcp(a[0], a[1]);
	if (!strcmp(cmd, "socket") && n == 1)
		return do_socket(a[0]);
	if (!strcmp(cmd, "unshare-user") && n == 0)
		return do_unshare_user();
	if (!strcmp(cmd, "clone-newuser") && n == 0)
		return do_clone_newuser();
	if (!strcmp(cmd, "tiocsti") && n == 0)
		return do_tiocsti();
	if (!strcmp(cmd, "caps") && n == 0)
		return do_caps();
	if (!strcmp(cmd, "nnp") && n == 0)
		return do_nnp();
	if (!strcmp(cmd, "rename") && n == 2)
		return result(rename(a[0], a[1]));
	if (!strcmp(cmd, "link") && n == 2)
		return result(link(a[0], a[1]));
	if (!strcmp(cmd, "mknod") && n == 1)
		return do_mknod(a[0]);
	if (!strcmp(cmd, "env") && n == 0)
		return do_env();
	if (!strcmp(cmd, "mode") && n == 3)
		return do_mode(a[0], a[1], a[2]);
	if (!strcmp(cmd, "setcap-xattr") && n == 1)
		return do_setcap_xattr(a[0]);
	if (!strcmp(cmd, "exit") && n == 1) {
		long v;
		if (parse_int(a[0], 0, 255, &v) < 0)
			return usage();
		return (int)v;
	}
	if (!strcmp(cmd, "kill-self") && n == 1)
		return do_kill_self(a[0]);
	if (!strcmp(cmd, "landlock-abi") && n == 0)
		return do_landlock_abi();
	if (!strcmp(cmd, "listen-unix") && n == 1)
		return do_listen_unix(a[0], 0);
	if (!strcmp(cmd, "listen-abstract") && n == 1)
		return do_listen_unix(a[0], 1);
	if (!strcmp(cmd, "listen-tcp") && n == 2)
		return do_listen_tcp(a[0], a[1]);
	if (!strcmp(cmd, "forkn") && n == 1)
		return do_forkn(a[0]);
	if (!strcmp(cmd, "forkbomb") && (n == 2 || n == 3))
		return do_forkbomb(a[0], a[1], n == 3 ? a[2] : NULL);
	if (!strcmp(cmd, "alloc") && n == 1)
		return do_alloc(a[0]);
	if (!strcmp(cmd, "fill") && n == 2)
		return do_fill(a[0], a[1]);
	return usage();
}
