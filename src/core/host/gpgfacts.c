/* gpgfacts: the user's gpg-agent and gpg home, from gpgconf (gpgfacts.h). */
#include "core/host/gpgfacts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

char *gpgfacts_unescape(const char *s)
{
	struct strbuf b = STRBUF_INIT;
	for (; *s; s++) {
		if (*s != '%') {
			sb_addc(&b, *s);
			continue;
		}
		unsigned v;
		if (sscanf(s + 1, "%2x", &v) != 1 || !s[1] || !s[2] || v == 0) {
			sb_free(&b);
			return NULL;
		}
		sb_addc(&b, (char)v);
		s += 2;
	}
	return sb_steal(&b);
}

/* Run gpgconf with args; its first stdout line (without the newline) into *out. */
static int gpgconf(char *const *argv, char **out, struct err *e)
{
	*out = NULL;
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_set(e, errno, "gpgconf", "--gpg-agent: cannot run gpgconf");
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (dup2(p[1], STDOUT_FILENO) < 0 || (null >= 0 && dup2(null, STDIN_FILENO) < 0))
			_exit(127);
		execvp("gpgconf", argv);
		_exit(127);
	}
	(void)close(p[1]);
	if (pid < 0) {
		(void)close(p[0]);
		return err_set(e, errno, "gpgconf", "--gpg-agent: cannot run gpgconf");
	}
	struct strbuf b = STRBUF_INIT;
	char buf[1024];
	ssize_t n;
	while ((n = read(p[0], buf, sizeof buf)) > 0 && b.len < 65536)
		sb_addn(&b, buf, (size_t)n);
	(void)close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		sb_free(&b);
		err_set(e, 0, "gpgconf", "--gpg-agent: `gpgconf %s %s` failed (%s %d)", argv[1],
			argv[2] ? argv[2] : "", WIFEXITED(st) ? "exit status" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		err_hint(e, "is gnupg installed (Debian's gnupg, gpg-agent)? gpgconf is how "
			    "agentjail finds your agent");
		return -1;
	}
	char *s = sb_steal(&b);
	s[strcspn(s, "\n")] = '\0';
	*out = s;
	return 0;
}

int gpgfacts_read(bool launch, char **extra_sock, char **homedir, struct err *e)
{
	*extra_sock = *homedir = NULL;
	char *launch_argv[] = {"gpgconf", "--launch", "gpg-agent", NULL};
	char *sock_argv[] = {"gpgconf", "--list-dirs", "agent-extra-socket", NULL};
	char *home_argv[] = {"gpgconf", "--list-dirs", "homedir", NULL};
	char *ignored = NULL, *raw_sock = NULL, *raw_home = NULL;
	if ((launch && gpgconf(launch_argv, &ignored, e) < 0) ||
	    gpgconf(sock_argv, &raw_sock, e) < 0 || gpgconf(home_argv, &raw_home, e) < 0) {
		free(ignored);
		free(raw_sock);
		free(raw_home);
		return -1;
	}
	free(ignored);
	*extra_sock = raw_sock[0] == '/' ? gpgfacts_unescape(raw_sock) : NULL;
	*homedir = raw_home[0] == '/' ? gpgfacts_unescape(raw_home) : NULL;
	free(raw_sock);
	free(raw_home);
	struct stat st;
	if (!*extra_sock || !*homedir) {
		err_set(e, 0, "gpgconf", "--gpg-agent: gpgconf named no extra socket or gpg home");
	} else if (launch && (lstat(*extra_sock, &st) < 0 || !S_ISSOCK(st.st_mode))) {
		err_set(e, errno, *extra_sock, "--gpg-agent: gpg-agent's extra socket is not there");
		err_hint(e, "is `extra-socket none` in gpg-agent.conf? --gpg-agent shares only that "
			    "restricted socket");
	} else {
		return 0;
	}
	free(*extra_sock);
	free(*homedir);
	*extra_sock = *homedir = NULL;
	return -1;
}
