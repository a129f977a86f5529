/* tlshelper: starting, feeding and reaping agentjail-tls (tlshelper.h, doc/design.md §4d). */
#include "core/jail/tlshelper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/jail/initbin.h"
#include "core/plan/initpath.h"
#include "util/clock.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define HELPER_READY_MS 10000
#define HELPER_EXIT_MS 2000

/* Run agentjail-tls (fd `helper`) with argv and fds 3, 4 as given (-1: none), envp. */
static pid_t spawn(int helper, char *const *argv, int fd3, int fd4, char *const *envp)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	/* fd 3 and 4 exactly, everything else above closed (dup2 clears close-on-exec) */
	int a = fd3 >= 0 ? fcntl(fd3, F_DUPFD_CLOEXEC, 10) : -1;
	int b = fd4 >= 0 ? fcntl(fd4, F_DUPFD_CLOEXEC, 10) : -1;
	int h = fcntl(helper, F_DUPFD_CLOEXEC, 10);
	if ((fd3 >= 0 && a < 0) || (fd4 >= 0 && b < 0) || h < 0)
		_exit(126);
	if ((a >= 0 && dup2(a, 3) < 0) || (b >= 0 && dup2(b, 4) < 0))
		_exit(126);
	/* nothing else of agentjail's reaches it (h, close-on-exec, goes at the exec) */
	(void)close_range(fd4 >= 0 ? 5 : fd3 >= 0 ? 4 : 3, (unsigned)h - 1, 0);
	(void)close_range((unsigned)h + 1, ~0U, 0);
	fexecve(h, argv, envp);
	_exit(126);
}

int tlshelper_ca_pem(const char *state_dir, bool make, char **pem, struct err *e)
{
	*pem = NULL;
	if (!state_dir)
		return err_set(e, 0, "state directory", "no state directory for the CA");
	_cleanup_free_ char *dir = path_join(state_dir, "ca");
	_cleanup_free_ char *cert = path_join(dir, "ca.pem");
	_cleanup_free_ char *key = path_join(dir, "ca.key");
	if ((access(cert, R_OK) < 0 || access(key, F_OK) < 0) && make) {
		_cleanup_free_ char *path = NULL;
		int fd = helperbin_open(&HELPER_TLS, &path, e);
		if (fd < 0)
			return -1;
		if (fs_mkdirs(state_dir, 0700, NULL) < 0) {
			(void)close(fd);
			return err_set(e, errno, state_dir, "cannot make the state directory");
		}
		char *argv[] = {"agentjail-tls", "__ca", dir, NULL};
		char *envp[] = {NULL};
		pid_t pid = spawn(fd, argv, -1, -1, envp);
		(void)close(fd);
		int st = 0;
		while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return err_set(e, pid < 0 ? errno : 0, dir,
				       "agentjail-tls could not make the CA (what it said is above)");
	}
	int fd = fs_open_nofollow(cert, O_RDONLY);
	if (fd < 0 && errno == ENOENT && !make)
		return 0;
	if (fd < 0)
		return err_set(e, errno, cert, "cannot read the CA's certificate");
	struct strbuf b = STRBUF_INIT;
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0 && b.len < 65536)
		sb_addn(&b, buf, (size_t)n);
	(void)close(fd);
	if (n < 0 || !strstr(sb_str(&b), "-----BEGIN CERTIFICATE-----")) {
		sb_free(&b);
		return err_set(e, errno, cert, "the CA's certificate cannot be read");
	}
	*pem = sb_steal(&b);
	return 0;
}

char *tlshelper_bundle(const char *ssl_cert_file, const char *ca_pem, char **host_file)
{
	static const char *const places[] = {"/etc/ssl/certs/ca-certificates.crt",
					     "/etc/pki/tls/certs/ca-bundle.crt",
					     "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem", NULL};
	*host_file = NULL;
	struct strbuf b = STRBUF_INIT;
	const char *src = ssl_cert_file && *ssl_cert_file ? ssl_cert_file : NULL;
	for (size_t i = 0; !src && places[i]; i++)
		if (access(places[i], R_OK) == 0)
			src = places[i];
	int fd = src ? open(src, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		char buf[65536];
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0)
			sb_addn(&b, buf, (size_t)n);
		(void)close(fd);
		*host_file = realpath(src, NULL);
		if (b.len && b.s[b.len - 1] != '\n')
			sb_add(&b, "\n");
	}
	sb_add(&b, "# agentjail's CA, for the hosts agentjail inspects (doc/design.md §4d)\n");
	sb_add(&b, ca_pem ? ca_pem : "");
	return sb_steal(&b);
}

/* Keep only the variables the helper uses of envp. */
static void helper_env(char *const *envp, struct strv *out)
{
	static const char *const keep[] = {"SSL_CERT_FILE=", "SSL_CERT_DIR=", "PATH=", "HOME=",
					   "LANG=", "LC_ALL=", NULL};
	for (size_t i = 0; envp && envp[i]; i++)
		for (size_t k = 0; keep[k]; k++)
			if (!strncmp(envp[i], keep[k], strlen(keep[k])))
				strv_push(out, envp[i]);
}

int tlshelper_start(const struct im_config *cfg, int ssh_listen, char *const *envp,
		    struct tlshelper *h, struct err *e)
{
	h->pid = 0;
	h->ctl = -1;
	_cleanup_free_ char *path = NULL;
	int fd = helperbin_open(&HELPER_TLS, &path, e);
	if (fd < 0)
		return -1;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		(void)close(fd);
		return err_set(e, errno, path, "cannot make agentjail-tls's control socket");
	}
	_cleanup_strv_ struct strv env = STRV_INIT;
	helper_env(envp, &env);
	char *argv[] = {"agentjail-tls", "__serve", NULL};
	pid_t pid = spawn(fd, argv, sp[1], ssh_listen, strv_data(&env));
	int err = errno;
	(void)close(fd);
	(void)close(sp[1]);
	if (pid < 0) {
		(void)close(sp[0]);
		return err_set(e, err, path, "cannot start agentjail-tls");
	}
	h->pid = pid;
	h->ctl = sp[0];
	struct imsg m = {0};
	im_config_encode(cfg, &m);
	ssize_t n;
	do
		n = send(h->ctl, m.b.p, m.b.len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	err = errno;
	size_t len = m.b.len;
	im_wipe(&m); /* the values: agentjail-tls has them now */
	if (n != (ssize_t)len) {
		tlshelper_reap(h);
		return err_set(e, err, path, "cannot configure agentjail-tls");
	}
	/* its answer */
	uint8_t buf[ERR_FMT_MAX + 64];
	struct pollfd pf = {.fd = h->ctl, .events = POLLIN};
	long long end = clock_mono_ms() + HELPER_READY_MS;
	for (;;) {
		long long left = end - clock_mono_ms();
		int r = left > 0 ? poll(&pf, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			tlshelper_reap(h);
			return err_set(e, 0, path, "agentjail-tls did not answer within %d s",
				       HELPER_READY_MS / 1000);
		}
		break;
	}
	do
		n = recv(h->ctl, buf, sizeof buf, 0);
	while (n < 0 && errno == EINTR);
	enum im_type type;
	struct im_iter it;
	struct im_field f;
	if (n <= 0 || im_open(buf, (size_t)n, &type, &it) < 0 || (type != IM_READY && type != IM_FAIL)) {
		tlshelper_reap(h);
		return err_set(e, 0, path, "agentjail-tls stopped before it was ready (a broken "
					   "install? its library libssl3)");
	}
	if (type == IM_FAIL) {
		_cleanup_free_ char *why = im_next(&it, &f) > 0 ? im_strdup(&f) : NULL;
		tlshelper_reap(h);
		return err_set(e, 0, path, "agentjail-tls: %s", why ? why : "failed");
	}
	return 0;
}

void tlshelper_reap(struct tlshelper *h)
{
	if (h->pid <= 0) /* never started (a zeroed struct's ctl 0 is not ours) */
		return;
	if (h->ctl >= 0) {
		(void)close(h->ctl);
		h->ctl = -1;
	}
	long long end = clock_mono_ms() + HELPER_EXIT_MS;
	int st;
	for (;;) {
		pid_t r = waitpid(h->pid, &st, WNOHANG);
		if (r == h->pid || (r < 0 && errno != EINTR))
			break;
		if (clock_mono_ms() >= end) {
			(void)kill(h->pid, SIGKILL);
			while (waitpid(h->pid, &st, 0) < 0 && errno == EINTR)
				;
			break;
		}
		struct timespec ts = {0, 10 * 1000000L};
		(void)nanosleep(&ts, NULL);
	}
	h->pid = 0;
}

int tlshelper_ssh_listen(const char *state_dir, const char *session, char **path, int *fd,
			 struct err *e)
{
	*path = NULL;
	*fd = -1;
	_cleanup_free_ char *run = path_join(state_dir, "run");
	_cleanup_free_ char *dir = path_join(run, session);
	if (fs_mkdirs(run, 0700, NULL) < 0 || (mkdir(dir, 0700) < 0 && errno != EEXIST))
		return err_set(e, errno, dir, "--ssh-agent: cannot make the socket's directory");
	int dfd = fs_open_nofollow(dir, O_PATH | O_DIRECTORY);
	struct stat st;
	if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		if (dfd >= 0)
			(void)close(dfd);
		return err_set(e, errno, dir, "--ssh-agent: the socket's directory is not yours "
					      "alone");
	}
	/* bound through /proc/self/fd/N: the state directory's length does not matter */
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	(void)snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/ssh-agent", dfd);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	_cleanup_free_ char *sock = path_join(dir, "ssh-agent");
	(void)unlink(sock);
	mode_t old = umask(0177);
	int rc = s < 0 ? -1 : bind(s, (struct sockaddr *)&sa, sizeof sa);
	(void)umask(old);
	int err = errno;
	(void)close(dfd);
	if (rc < 0 || listen(s, 64) < 0) {
		err = rc < 0 ? err : errno;
		if (s >= 0)
			(void)close(s);
		return err_set(e, err, sock, "--ssh-agent: cannot listen on the jail's agent socket");
	}
	*path = xstrdup(sock);
	*fd = s;
	return 0;
}

void tlshelper_ssh_remove(const char *path)
{
	if (!path)
		return;
	(void)unlink(path);
	_cleanup_free_ char *dir = path_dirname(path);
	(void)rmdir(dir);
}
