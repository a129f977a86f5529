/* probes, the host side: plant the bait before the jail starts (canary, listeners, sentinel,
 * variables), fill the probe context from it, remove it afterwards; look for survivors. */
#include "core/diag/probes_internal.h"
#include "util/hex.h"

/* ======================================================================================= */
/* Host side                                                                               */

/* Wait (at most ms) until a process that is not our child has died: gone, or a zombie its
 * parent has yet to reap. */
static void wait_gone(pid_t pid, int ms)
{
	for (int waited = 0; waited < ms && !pr_is_dead(pid); waited += 10)
		pr_sleep_ms(10);
}

void probe_host_survivors(const char *token, struct probe_out *o)
{
	char marker[16];
	probe_marker_orphan(token, marker);
	pid_t pids[16];
	int seen = 0;
	int n = pr_find_marked(marker, pids, 16, &seen);
	if (n == 0) {
		pr_set(o, PROBE_PASS, "no process of the jail outlived it (%s gone)", marker);
		return;
	}
	for (int i = 0; i < n; i++)
		(void)kill(pids[i], SIGKILL);
	for (int i = 0; i < n; i++)
		wait_gone(pids[i], 2000);
	pr_set(o, PROBE_FAIL, "%d process%s of the jail outlived it (%s, host pid %d): killed now", n,
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
	hex_encode(raw, sizeof raw, out);
	return 0;
}

static int listen_unix(const char *name, bool abstract)
{
	struct sockaddr_un sa;
	socklen_t len;
	if (pr_unix_addr(name, abstract, &sa, &len) < 0)
		return -1;
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

/* The TLS bait's side of a connection that reached it: whatever came within a moment, then
 * PROBE_TLS_BAIT_REPLY (the probe sees what passed agentjail's check). */
static void tls_bait_reply(int cfd)
{
	char buf[4096];
	struct pollfd p = {.fd = cfd, .events = POLLIN};
	if (poll(&p, 1, 2000) == 1 && read(cfd, buf, sizeof buf) > 0)
		(void)!write(cfd, PROBE_TLS_BAIT_REPLY, sizeof PROBE_TLS_BAIT_REPLY - 1);
}

/* The sentinel: a host process the jail must neither see nor signal, which also accepts (and
 * closes) connections on the bait listeners until it is killed; on fds[reply_at] (the TLS
 * bait, or -1) it answers first. Never returns. */
__attribute__((noreturn)) static void sentinel_main(const int *fds, int n, int reply_at,
						    const char *marker, pid_t parent, int ready)
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
	struct pollfd pfd[5];
	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	for (;;) {
		if (poll(pfd, (nfds_t)n, n ? -1 : 60000) < 0 && errno != EINTR)
			_exit(1);
		for (int i = 0; i < n; i++) {
			int cfd = (pfd[i].revents & POLLIN)
					  ? accept4(fds[i], NULL, NULL, SOCK_CLOEXEC)
					  : -1;
			if (cfd >= 0 && i == reply_at)
				tls_bait_reply(cfd);
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
		snprintf(skip, nskip, "cannot listen on %s: %s", path, pr_ename(errno));
		path[0] = '\0';
	}
	return fd;
}

/* *reply_at: the index of the TLS bait's listener (--net allow only), or -1. */
static void plant_listeners(struct bait *b, const struct policy *pol, int *fds, int *n,
			    int *reply_at)
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
	*reply_at = -1;
	fd = pol->net == NET_ALLOW ? listen_tcp(&b->tls_port) : -1;
	if (fd >= 0) {
		*reply_at = *n;
		fds[(*n)++] = fd;
	} else {
		b->tls_port = 0;
	}
}

static void plant_canary(struct bait *b, const char *home)
{
	snprintf(b->canary, sizeof b->canary, "%s/." BAIT_PREFIX "canary-%s", home, b->token);
	int fd = open(b->canary, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
	char line[96];
	int len = snprintf(line, sizeof line, "agentjail verify canary %s\n", b->token);
	if (fd < 0 || write(fd, line, (size_t)len) != len) {
		snprintf(b->skip_canary, sizeof b->skip_canary, "cannot write a canary in %s: %s",
			 home, pr_ename(errno));
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

	int fds[5], n = 0, reply_at = -1;
	plant_listeners(b, pol, fds, &n, &reply_at);
	char marker[16];
	probe_marker_sentinel(b->token, marker);
	pid_t parent = getpid();
	int ready[2] = {-1, -1};
	b->sentinel = pipe2(ready, O_CLOEXEC) == 0 ? fork() : -1;
	if (b->sentinel == 0)
		sentinel_main(fds, n, reply_at, marker, parent, ready[1]);
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
	c->tls_port = b->tls_port;
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
