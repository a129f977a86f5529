/* jailctl: see jailctl.h. */
#include "cmd/jailctl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/netask.h"
#include "core/jail/ctlsock.h"
#include "core/jail/supervise.h"
#include "core/plan/ctlproto.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

struct jailctl {
	struct ctlsock *sock; /* NULL when it could not be made */
	struct netask *ask;
	struct sess_rec *rec;
	const char *session;
	struct supervise_jail jail;
	bool stopping;
};

struct jailctl *jailctl_new(const struct run_request *req, struct sess_rec *rec,
			    struct netask *ask)
{
	struct jailctl *c = xcalloc(1, sizeof *c);
	c->ask = ask;
	c->rec = rec;
	c->session = req->session_id ? req->session_id : "ID";
	if (!req->session_id)
		return c;
	_cleanup_free_ char *dir = cmd_state_dir();
	_cleanup_free_ char *path = ctlsock_path(dir, req->session_id);
	struct err e = {0};
	if (ctlsock_listen(path, &c->sock, &e) < 0) {
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		cmd_warn("the session's control socket (agentjail ps, exec, stop%s) is not there: %s",
			 ask ? ", net" : "", buf);
	}
	return c;
}

void jailctl_free(struct jailctl *c)
{
	if (!c)
		return;
	ctlsock_close(c->sock);
	free(c);
}

struct supervise_jail *jailctl_jail(struct jailctl *c)
{
	return c ? &c->jail : NULL;
}

/* Who asked, for the session's events. */
static void record(struct jailctl *c, const char *kind, const struct ctlsock_peer *p,
		   const char *what)
{
	char *d = cmd_who_detail((long)p->uid, (long)p->pid, what);
	cmd_rec_event(c->rec, kind, d);
	free(d);
}

/* exec: the fds the client sent (its exec channel's jail end, then the command's stdin,
 * stdout, stderr) go to the jail's init, which runs the request waiting on the channel. */
static char *do_exec(struct jailctl *c, struct ctlsock_peer *p)
{
	if (p->nfds != 4)
		return xstrdup("err exec: four fds come with it (the exec channel, stdin, stdout, "
			       "stderr)\n");
	if (c->stopping || !c->jail.pid)
		return xstrdup("err exec: the jail is not running (starting, or ending)\n");
	if (supervise_exec(&c->jail, p->fds) < 0)
		return xasprintf("err exec: cannot hand the command to the jail's init: %s\n",
				 strerror(errno));
	record(c, "session.exec", p, NULL);
	return xstrdup("ok exec\n");
}

static char *on_request(void *arg, const struct ctl_req *req, struct ctlsock_peer *p)
{
	struct jailctl *c = arg;
	if (!strcmp(req->verb, "ping") && req->nargs == 0)
		return xasprintf("ok agentjail %d %s\n", CTLPROTO_VERSION, c->session);
	if (!strcmp(req->verb, "ps") && req->nargs == 0)
		return xasprintf("ok jail %ld %s\n", (long)c->jail.pid,
				 c->stopping ? "stopping" : "running");
	if (!strcmp(req->verb, "exec") && req->nargs == 0)
		return do_exec(c, p);
	if (!strcmp(req->verb, "stop") && req->nargs == 0) {
		if (!c->stopping) {
			c->stopping = true;
			record(c, "session.stop", p, "agentjail stop");
			supervise_stop(&c->jail);
		}
		return xstrdup("ok stopping\n");
	}
	char *r = c->ask ? netask_request(c->ask, req, p) : NULL;
	if (r)
		return r;
	return xasprintf("err verb: %s is not a verb of AJ%d here (ping, ps, exec, stop%s)\n",
			 req->verb, CTLPROTO_VERSION, c->ask ? ", questions, answer" : "");
}

size_t jailctl_fill(void *arg, struct pollfd *pfd, size_t max)
{
	struct jailctl *c = arg;
	size_t n = netask_fill(c->ask, pfd, max);
	return n + ctlsock_fill(c->sock, pfd + n, max - n);
}

void jailctl_handle(void *arg, const struct pollfd *pfd, size_t n)
{
	struct jailctl *c = arg;
	size_t k = c->ask ? (n ? 1 : 0) : 0;
	netask_handle(c->ask, pfd, k);
	ctlsock_handle(c->sock, pfd + k, n - k, on_request, c);
}
