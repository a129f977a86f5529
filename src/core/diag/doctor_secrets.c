/* doctor's checks of secrets, inspected hosts and the agents (doc/design.md §4d): agentjail-tls
 * (found and checked as a run finds it), the CA jails trust for inspected hosts (agentjail is
 * static and reads no certificate: agentjail-tls __ca-info describes it; the key's mode and
 * owner are checked here), the user's ssh agent (reachable, how many keys) and gpg-agent's
 * extra socket. None of them fails: runs without secrets, rules or agents need none of it. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/diag/doctor.h"
#include "core/jail/initbin.h"
#include "core/plan/initpath.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

#define TLS_DOCTOR_TIMEOUT_MS 10000

static void check_ca(struct doctor_report *r, const char *tls, const char *state)
{
	_cleanup_free_ char *dir = state ? path_join(state, "ca") : NULL;
	_cleanup_free_ char *key = dir ? path_join(dir, "ca.key") : NULL;
	struct stat st;
	if (!key || lstat(key, &st) < 0) {
		doctor_add(r, "ca", DOCTOR_OK, NULL, "%s: not made yet (made at the first run that "
						     "adds a secret or checks request rules)",
			   dir ? dir : "the state directory");
		return;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		doctor_add(r, "ca", DOCTOR_WARN, "remove the directory: the next run makes a new CA",
			   "%s is not a file of yours of mode 0600 (mode %03o): agentjail-tls will "
			   "not use it", key, (unsigned)(st.st_mode & 0777));
		return;
	}
	if (!tls) {
		doctor_add(r, "ca", DOCTOR_OK, NULL, "%s: its key is yours, mode 0600 (no "
						     "agentjail-tls to describe it)", dir);
		return;
	}
	char *argv[] = {(char *)"agentjail-tls", (char *)"__ca-info", dir, NULL};
	char *envp[] = {NULL};
	int ws;
	_cleanup_free_ char *out = doctor_capture(tls, argv, envp, TLS_DOCTOR_TIMEOUT_MS, &ws);
	char *line = out ? doctor_clean_line(out, 400) : xstrdup("no answer");
	bool good = ws != -1 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
	doctor_add(r, "ca", good ? DOCTOR_OK : DOCTOR_WARN,
		   "remove the CA's directory: the next run makes a new one", "%s; key mode 0600",
		   line);
	free(line);
}

/* How many keys the agent at path lists, or -1 (*why says). */
static long agent_keys(const char *path, const char **why)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof sa.sun_path) {
		*why = "the path is too long for a socket";
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path));
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = {.tv_sec = 2};
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	static const uint8_t req[5] = {0, 0, 0, 1, 11}; /* REQUEST_IDENTITIES */
	uint8_t ans[9];
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		*why = strerror(errno);
		return -1;
	}
	size_t got = 0;
	if (send(fd, req, sizeof req, MSG_NOSIGNAL) != (ssize_t)sizeof req)
		got = SIZE_MAX;
	while (got < sizeof ans) {
		ssize_t n = recv(fd, ans + got, sizeof ans - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got != sizeof ans || ans[4] != 12) {
		*why = "it gave no list of keys";
		return -1;
	}
	return (long)((uint32_t)ans[5] << 24 | (uint32_t)ans[6] << 16 | (uint32_t)ans[7] << 8 |
		      ans[8]);
}

static void check_ssh_agent(struct doctor_report *r)
{
	const char *sock = getenv("SSH_AUTH_SOCK");
	if (!sock || sock[0] != '/') {
		doctor_add(r, "ssh_agent", DOCTOR_OK, NULL,
			   "no ssh agent (SSH_AUTH_SOCK is not set): --ssh-agent needs one");
		return;
	}
	const char *why = NULL;
	long n = agent_keys(sock, &why);
	const char *home = getenv("HOME");
	_cleanup_free_ char *kh = home && home[0] == '/' ? path_join(home, ".ssh/known_hosts") : NULL;
	bool have_kh = kh && access(kh, R_OK) == 0;
	if (n < 0)
		doctor_add(r, "ssh_agent", DOCTOR_WARN,
			   "start your agent (eval $(ssh-agent); ssh-add), or unset SSH_AUTH_SOCK",
			   "SSH_AUTH_SOCK=%s does not answer: %s", sock, why);
	else
		doctor_add(r, "ssh_agent", have_kh ? DOCTOR_OK : DOCTOR_WARN,
			   "connect once with ssh to each host the jail may push to, so known_hosts "
			   "lists it: --ssh-agent signs only for those",
			   "SSH_AUTH_SOCK=%s lists %ld key%s; %s: with --ssh-agent the jail's agent "
			   "lists them and signs only for hosts %s lists that the jail may reach",
			   sock, n, n == 1 ? "" : "s", have_kh ? kh : "no ~/.ssh/known_hosts",
			   "~/.ssh/known_hosts");
}

static void check_gpg_agent(struct doctor_report *r)
{
	char *argv[] = {(char *)"gpgconf", (char *)"--list-dirs", (char *)"agent-extra-socket",
			NULL};
	extern char **environ;
	int ws;
	_cleanup_free_ char *gpgconf = NULL;
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = xstrdup(path ? path : "/usr/bin:/bin");
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d && !gpgconf;
	     d = strtok_r(NULL, ":", &save)) {
		char *c = path_join(d, "gpgconf");
		if (d[0] == '/' && access(c, X_OK) == 0)
			gpgconf = c;
		else
			free(c);
	}
	if (!gpgconf) {
		doctor_add(r, "gpg_agent", DOCTOR_OK, NULL,
			   "no gpgconf (gnupg is not installed): --gpg-agent needs it");
		return;
	}
	_cleanup_free_ char *out = doctor_capture(gpgconf, argv, environ, TLS_DOCTOR_TIMEOUT_MS, &ws);
	char *line = out ? doctor_clean_line(out, 300) : xstrdup("");
	struct stat st;
	bool running = line[0] == '/' && lstat(line, &st) == 0 && S_ISSOCK(st.st_mode);
	if (ws == -1 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || line[0] != '/')
		doctor_add(r, "gpg_agent", DOCTOR_WARN, "check gpgconf --list-dirs",
			   "gpgconf names no extra socket of gpg-agent: --gpg-agent cannot work");
	else
		doctor_add(r, "gpg_agent", DOCTOR_OK, NULL,
			   "gpg-agent's extra socket (the restricted one --gpg-agent shares): %s%s",
			   line, running ? "" : " (the agent is not running: --gpg-agent starts it)");
	free(line);
}

void doctor_check_secrets(struct doctor_report *r, const char *state)
{
	struct err e = {0};
	_cleanup_free_ char *tls = NULL;
	int fd = helperbin_open(&HELPER_TLS, &tls, &e);
	if (fd >= 0) {
		(void)close(fd);
		doctor_add(r, "tls", DOCTOR_OK, NULL, "%s: the TLS inspector and ssh-agent filter "
						      "(runs with a secret, request rules or "
						      "--ssh-agent)", tls);
	} else {
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		doctor_add(r, "tls", DOCTOR_WARN, e.hint[0] ? e.hint : NULL,
			   "%s: a run that adds a secret (an agent's key under --net allow), checks "
			   "request rules or has --ssh-agent stops (exit 125)", buf);
	}
	check_ca(r, fd >= 0 ? tls : NULL, state);
	check_ssh_agent(r);
	check_gpg_agent(r);
}
