/* secretsrc: a secret's value, read on the host (secretsrc.h). */
#include "core/host/secretsrc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

void secretsrc_wipe(char *value, size_t len)
{
	if (value) {
		explicit_bzero(value, len);
		free(value);
	}
}

static char *describe_cmd(const struct secret_def *d)
{
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < d->command.n; i++) {
		if (i)
			sb_add(&b, " ");
		sb_add_shquoted(&b, d->command.v[i]);
	}
	return sb_steal(&b);
}

/* Run the command; its stdout into *out (at most SECRET_VALUE_MAX + 1 bytes kept). */
static int run_command(const struct secret_def *d, char **out, size_t *len, struct err *e)
{
	char *cmd = describe_cmd(d);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		err_set(e, errno, cmd, "secret %s: cannot run its command", d->name);
		free(cmd);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		/* stdin and stderr stay the user's: a password manager may ask */
		if (dup2(p[1], STDOUT_FILENO) < 0)
			_exit(127);
		(void)signal(SIGPIPE, SIG_DFL);
		execvp(d->command.v[0], strv_data((struct strv *)&d->command));
		_exit(errno == ENOENT ? 127 : 126);
	}
	(void)close(p[1]);
	if (pid < 0) {
		(void)close(p[0]);
		err_set(e, errno, cmd, "secret %s: cannot run its command", d->name);
		free(cmd);
		return -1;
	}
	size_t cap = SECRET_VALUE_MAX + 2, n = 0;
	char *buf = xmalloc(cap);
	long long end = clock_mono_ms() + SECRET_COMMAND_SECONDS * 1000LL;
	bool timeout = false;
	for (;;) {
		long long left = end - clock_mono_ms();
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		if (left <= 0 || poll(&pf, 1, (int)left) == 0) {
			timeout = true;
			break;
		}
		ssize_t k = read(p[0], buf + n, cap - 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == cap - 1)
			break; /* too long: refused below, the rest not read */
	}
	(void)close(p[0]);
	if (timeout)
		(void)kill(pid, SIGKILL);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int rc = 0;
	if (timeout)
		rc = err_set(e, 0, cmd, "secret %s: its command gave no value within %d s", d->name,
			     SECRET_COMMAND_SECONDS);
	else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		rc = err_set(e, 0, cmd, "secret %s: its command failed (%s %d)", d->name,
			     WIFEXITED(st) ? "exit status" : "signal",
			     WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	if (rc < 0) {
		err_hint(e, "run it yourself to see why; agentjail runs no jail without the value");
		secretsrc_wipe(buf, cap);
		free(cmd);
		return -1;
	}
	if (n && buf[n - 1] == '\n')
		n--;
	if (n && buf[n - 1] == '\r')
		n--;
	buf[n] = '\0';
	*out = buf;
	*len = n;
	free(cmd);
	return 0;
}

int secretsrc_read(const struct secret_def *d, const struct strv *env, char **value, size_t *len,
		   struct err *e)
{
	*value = NULL;
	*len = 0;
	if (d->src == SS_ENV) {
		size_t k = strlen(d->env);
		const char *v = NULL;
		for (size_t i = 0; env && i < env->n && !v; i++)
			if (!strncmp(env->v[i], d->env, k) && env->v[i][k] == '=')
				v = env->v[i] + k + 1;
		if (!v)
			return err_set(e, 0, d->env, "secret %s: $%s is not set", d->name, d->env);
		*len = strlen(v);
		*value = xstrdup(v);
	} else if (run_command(d, value, len, e) < 0) {
		return -1;
	}
	if (secret_value_check(d->name, *value, *len, e) < 0) {
		secretsrc_wipe(*value, *len);
		*value = NULL;
		return -1;
	}
	return 0;
}
