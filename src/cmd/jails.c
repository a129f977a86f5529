/* `agentjail ps`, `exec ID [-- CMD]`, `stop ID`: the running jails, through each session's
 * control socket (doc/design.md §5, "ps, exec, stop"; cmd/jailctl.h serves it). */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/jail/ctlsock.h"
#include "core/jail/pty.h"
#include "core/plan/ctlproto.h"
#include "core/plan/execwire.h"
#include "core/plan/policy.h"
#include "core/session/sessfmt.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/termtext.h"
#include "util/xalloc.h"

#define CALL_MS 5000

int cmd_session_call(const char *verb, const char *idle, const char *id, const char *line,
		     const int *fds, size_t nfds, struct strv *reply, char **full)
{
	_cleanup_store_ struct store *st = NULL;
	if (cmd_store_existing(&st) < 0)
		return 1;
	if (!st) {
		cmd_warn("%s: no session was recorded here yet", verb);
		return 1;
	}
	struct session s;
	int rc = id ? cmd_session_get(st, id, &s) : cmd_session_last(st, verb, &s);
	if (rc)
		return rc;
	*full = xstrdup(s.id);
	bool running = s.status == SESS_RUNNING;
	session_free(&s);
	if (!running) {
		cmd_warn("%s: session %s is not running: %s", verb, *full, idle);
		return 1;
	}
	_cleanup_free_ char *dir = cmd_state_dir();
	_cleanup_free_ char *path = ctlsock_path(dir, *full);
	struct err e = {0};
	if (ctlsock_call_fds(path, line, fds, nfds, CALL_MS, reply, &e) < 0) {
		err_wrap(&e, "%s: session %s", verb, *full);
		cmd_print_err(&e);
		return 1;
	}
	long n;
	const char *rest;
	if (!reply->n || ctlproto_reply_head(reply->v[0], &n, &rest) != 1) {
		_cleanup_free_ char *said = fmt_clean(reply->n ? reply->v[0] : "no answer");
		cmd_warn("%s: session %s: %s", verb, *full, said);
		return 1;
	}
	return 0;
}

/* A session running on the Landlock backend: it has no control socket (no init to serve one,
 * doc/design.md §4c); its agentjail is the session's pid, alive with the start time recorded. */
static bool ll_session(const struct session *s)
{
	if (s->status != SESS_RUNNING || !s->policy_json ||
	    !store_proc_alive(s->pid, s->pid_start, NULL))
		return false;
	struct policy pol;
	struct err e = {0};
	if (policy_from_json(s->policy_json, &pol, &e) < 0)
		return false; /* a policy it cannot read: not one it can say is Landlock's */
	bool ll = pol.backend == BACKEND_LANDLOCK;
	policy_free(&pol);
	return ll;
}

/* The session ID (or the last) when it runs on the Landlock backend: 1 with *out filled; 0
 * when it does not (the control socket answers for it, or says why not); else the exit
 * status of a lookup that failed (said). */
static int ll_lookup(const char *verb, const char *id, struct store **st, struct session *out)
{
	if (cmd_store_existing(st) < 0)
		return -1;
	if (!*st)
		return 0; /* cmd_session_call says there is nothing */
	int g = id ? cmd_session_get(*st, id, out) : cmd_session_last(*st, verb, out);
	if (g)
		return -g;
	if (ll_session(out))
		return 1;
	session_free(out);
	return 0;
}

/* ---- ps ------------------------------------------------------------------------------------ */

static const char ps_usage[] =
	"usage: agentjail ps [--json]\n"
	"The jails running now, of every workspace: the session's id, the jail's first process on\n"
	"the host (on the landlock backend: its agentjail, marked so), its age, the CPU time and\n"
	"memory (resident) of all its processes, the policy and the command.\n"
	"example: agentjail ps\n";

struct proc_use {
	double cpu_s;
	unsigned long long rss;
	int nproc;
};

/* The processes of the tree under root (the jail: every process in it descends from its first
 * one, orphans included, for they are reparented to it), from /proc. */
static struct proc_use tree_use(long root)
{
	struct proc_use u = {0};
	struct p {
		long pid, ppid;
		unsigned long long ticks;
		long rss;
		bool in;
	} *v = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		char path[64], buf[1024];
		(void)snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		size_t k = fread(buf, 1, sizeof buf - 1, f);
		(void)fclose(f);
		buf[k] = '\0';
		const char *rp = strrchr(buf, ')');
		long ppid, rss;
		unsigned long long ut, stt;
		if (!rp || sscanf(rp + 1,
				  " %*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d "
				  "%*d %*d %*d %*u %*u %ld",
				  &ppid, &ut, &stt, &rss) != 4)
			continue;
		if (n == cap)
			v = xrealloc(v, (cap = cap ? 2 * cap : 256) * sizeof *v);
		v[n++] = (struct p){pid, ppid, ut + stt, rss, pid == root};
	}
	if (d)
		(void)closedir(d);
	for (bool more = true; more;) {
		more = false;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; !v[i].in && j < n; j++)
				if (v[j].in && v[j].pid == v[i].ppid)
					more = v[i].in = true;
	}
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < n; i++) {
		if (!v[i].in)
			continue;
		u.nproc++;
		u.cpu_s += (double)v[i].ticks / (double)(hz > 0 ? hz : 100);
		u.rss += (unsigned long long)(v[i].rss > 0 ? v[i].rss : 0) *
			 (unsigned long long)(page > 0 ? page : 4096);
	}
	free(v);
	return u;
}

static char *human_size(unsigned long long b)
{
	const char *unit = "KMGT";
	double x = (double)b / 1024.0;
	int i = 0;
	while (x >= 1024.0 && i < 3) {
		x /= 1024.0;
		i++;
	}
	return xasprintf(x < 10 ? "%.1f%c" : "%.0f%c", x, unit[i]);
}

/* The session's jail, if it is running and answers: its first process on the host. */
static bool jail_pid(const char *state_dir, const struct session *s, long *pid, bool *stopping)
{
	if (s->status != SESS_RUNNING)
		return false;
	_cleanup_free_ char *path = ctlsock_path(state_dir, s->id);
	struct strv reply = STRV_INIT;
	struct err e = {0};
	long n;
	const char *rest = "";
	bool ok = ctlsock_call(path, "AJ1 ps", 1000, &reply, &e) == 0 && reply.n &&
		  ctlproto_reply_head(reply.v[0], &n, &rest) == 1 &&
		  ctlproto_jail_parse(rest, pid, stopping) == 0;
	strv_free(&reply);
	return ok;
}

int cmd_ps(int argc, char **argv)
{
	bool json = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(ps_usage, stdout);
			return 0;
		} else {
			cmd_warn("ps: unexpected argument %s", argv[i]);
			fputs(ps_usage, stderr);
			return EXIT_USAGE;
		}
	}
	_cleanup_store_ struct store *st = NULL;
	if (cmd_store_existing(&st) < 0)
		return 1;
	struct session *v = NULL;
	size_t n = 0;
	struct err e = {0};
	if (st && store_list(st, NULL, 0, &v, &n, &e) < 0) {
		cmd_print_err(&e);
		return 1;
	}
	_cleanup_free_ char *dir = cmd_state_dir();
	json_t *arr = json_array();
	long long now = store_now_ms();
	size_t shown = 0;
	for (size_t i = 0; i < n; i++) {
		long pid = 0;
		bool stopping = false, ll = false;
		if (!jail_pid(dir, &v[i], &pid, &stopping)) {
			if (!(ll = ll_session(&v[i])))
				continue;
			pid = v[i].pid;
		}
		struct proc_use u = pid > 0 ? tree_use(pid) : (struct proc_use){0};
		long long age_ms = now - v[i].last_started_ms;
		if (json) {
			json_t *cmd = json_array();
			for (size_t k = 0; k < v[i].argv.n; k++)
				json_array_append_new(cmd, json_string(v[i].argv.v[k]));
			json_t *pol = v[i].policy_json ? json_loads(v[i].policy_json, 0, NULL) : NULL;
			json_array_append_new(
				arr, json_pack("{s:s, s:I, s:o, s:s?, s:o, s:s, s:I, s:I, s:f, s:I, s:i, "
					       "s:b, s:s}",
					       "id", v[i].id, "pid", (json_int_t)pid, "command", cmd,
					       "profile", v[i].profile, "policy", pol ? pol : json_null(),
					       "workspace", v[i].workspace ? v[i].workspace : "",
					       "started_ms", (json_int_t)v[i].last_started_ms, "age_ms",
					       (json_int_t)age_ms, "cpu_s", u.cpu_s, "rss_bytes",
					       (json_int_t)u.rss, "processes", u.nproc, "stopping",
					       stopping, "backend", ll ? "landlock" : "bwrap"));
			shown++;
			continue;
		}
		if (!shown++)
			printf("%-8s %8s %7s %7s %7s  %-16s %s\n", "ID", "PID", "AGE", "CPU", "MEM",
			       "POLICY", "COMMAND");
		_cleanup_free_ char *age = sessfmt_duration(age_ms);
		_cleanup_free_ char *cpu = sessfmt_duration((long long)(u.cpu_s * 1000));
		_cleanup_free_ char *mem = human_size(u.rss);
		_cleanup_free_ char *pol = sessfmt_policy(v[i].policy_json);
		_cleanup_free_ char *prof = v[i].profile ? fmt_clean(v[i].profile) : NULL;
		_cleanup_free_ char *pcol = prof ? xasprintf("%s %s", prof, pol) : xstrdup(pol);
		_cleanup_free_ char *cmd = sessfmt_argv(&v[i].argv);
		printf("%-8.8s %8ld %7s %7s %7s  %-16s %s%s\n", v[i].id, pid, age, cpu, mem, pcol, cmd,
		       stopping ? "  (stopping)" : ll ? "  (landlock backend: no exec)" : "");
	}
	if (json) {
		char *s = json_dumps(arr, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		printf("%s\n", s ? s : "[]");
		free(s);
	} else if (!shown) {
		printf("no jail is running\n");
	}
	json_decref(arr);
	sessions_free(v, n);
	return 0;
}

/* ---- stop ---------------------------------------------------------------------------------- */

static const char stop_usage[] =
	"usage: agentjail stop ID|--last\n"
	"End a running session as if it had finished: its command is sent SIGTERM (killed after\n"
	"10 s), then the jail is torn down, its protected paths checked and its record closed, by\n"
	"the agentjail that runs it (on the landlock backend: SIGTERM to that agentjail, which\n"
	"does the same). The session's events say who stopped it.\n"
	"example: agentjail stop 3f2a\n";

int cmd_stop(int argc, char **argv)
{
	const char *id = NULL;
	bool last = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(stop_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--last") && !last) {
			last = true;
		} else if (argv[i][0] != '-' && !id) {
			id = argv[i];
		} else {
			cmd_warn("stop: unexpected argument %s", argv[i]);
			fputs(stop_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (!id == !last) {
		fputs(stop_usage, stderr);
		return EXIT_USAGE;
	}
	struct strv reply = STRV_INIT;
	_cleanup_free_ char *full = NULL;
	struct session ls;
	_cleanup_store_ struct store *lst = NULL;
	int rc = ll_lookup("stop", id, &lst, &ls);
	if (rc < 0)
		return -rc;
	if (rc == 1) { /* its agentjail ends it its usual way on SIGTERM (llrun.h) */
		full = xstrdup(ls.id);
		char *d = cmd_who_detail((long)getuid(), (long)getpid(), "agentjail stop");
		struct err e = {0};
		if (d && store_add_event(lst, ls.id, "session.stop", d, &e) < 0)
			cmd_print_err(&e);
		free(d);
		bool sent = kill((pid_t)ls.pid, SIGTERM) == 0;
		int err = errno;
		session_free(&ls);
		if (!sent) {
			cmd_warn("stop: session %s: cannot signal its agentjail: %s", full,
				 strerror(err));
			return 1;
		}
	} else {
		rc = cmd_session_call("stop", "nothing to stop", id, "AJ1 stop", NULL, 0, &reply,
				      &full);
		strv_free(&reply);
		if (rc)
			return rc;
	}
	/* until its agentjail has closed the record (it waits for the jail, 10 s at most, then
	 * for its checks) */
	_cleanup_store_ struct store *st = NULL;
	for (int i = 0; i < 300 && cmd_store_existing(&st) == 0 && st; i++) {
		struct session s;
		struct err e = {0};
		if (store_get(st, full, &s, &e) != 0)
			break;
		bool ended = s.status != SESS_RUNNING;
		_cleanup_free_ char *status = ended ? sessfmt_status(s.status, s.exit_status) : NULL;
		session_free(&s);
		if (ended) {
			printf("session %s stopped: %s\n", full, status);
			return 0;
		}
		store_close(st);
		st = NULL;
		(void)usleep(100 * 1000);
	}
	printf("session %s is stopping\n", full);
	return 0;
}

/* ---- exec ---------------------------------------------------------------------------------- */

static const char exec_usage[] =
	"usage: agentjail exec ID|--last [--] [CMD [ARG...]]\n"
	"Run CMD (default: the jail's shell) inside a running jail, under the same confinement as\n"
	"its command: its namespaces, seccomp filter, Landlock rules, no_new_privs, limits; never\n"
	"more. The jail's init starts it, as a child of its own. On a terminal, CMD gets a terminal\n"
	"of its own (as the jail's command does), never yours. The exit status is CMD's; 125 when\n"
	"it could not be started there (the session is not running, or ended meanwhile). INT,\n"
	"TERM, HUP and QUIT sent to agentjail exec are passed on to CMD; if agentjail exec is\n"
	"killed, CMD is sent SIGHUP.\n"
	"example: agentjail exec 3f2a -- ps aux\n";

static const int fwd_sigs[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT};

struct exec_io {
	int chan;        /* our end of the exec channel */
	struct pty pty;  /* on a terminal: the command's */
	bool tty;
	struct pty_relay relay;
	struct termios saved;
	bool raw;
	int sfd;         /* SIGWINCH, and the signals passed on to the command */
};

/* Its stdin, stdout, stderr: ours, but a terminal of ours is replaced by a pty (the jail must
 * never hold the user's terminal: TIOCSTI, doc/design.md §2 "Terminal"). */
static int exec_fds(struct exec_io *x, int jfds[3], struct err *e)
{
	int ttyfd = isatty(0) ? 0 : isatty(1) ? 1 : isatty(2) ? 2 : -1;
	x->tty = ttyfd >= 0;
	x->pty = (struct pty){.master = -1, .slave = -1};
	if (x->tty && pty_open(&x->pty, ttyfd, e) < 0)
		return -1;
	for (int i = 0; i < 3; i++)
		jfds[i] = x->tty && isatty(i) ? x->pty.slave : i;
	return 0;
}

/* Wait for the channel's word: the status, or 125 (said). */
static int exec_wait(struct exec_io *x, const char *full)
{
	bool started = false;
	if (x->tty) {
		pty_relay_init(&x->relay, isatty(0) ? 0 : -1, isatty(1) ? 1 : 2, x->pty.master);
		struct err e = {0};
		if (isatty(0) && pty_raw_enter(0, &x->saved, &e) == 0) {
			x->raw = true;
			pty_restore_register(0, &x->saved);
		}
	}
	int status = -1;
	while (status < 0) {
		struct pollfd pfd[2 + PTY_RELAY_NFDS];
		nfds_t n = 0;
		pfd[n++] = (struct pollfd){.fd = x->chan, .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = x->sfd, .events = POLLIN};
		nfds_t nr = 0;
		if (x->tty && x->pty.master >= 0)
			pty_relay_fill_pollfds(&x->relay, pfd + n, &nr);
		if (poll(pfd, n + nr, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (nr) {
			struct err e = {0};
			if (pty_relay_handle(&x->relay, pfd + 2, nr, &e) < 0)
				x->pty.master = -1; /* our terminal went away: wait for the status */
		}
		struct signalfd_siginfo si;
		if ((pfd[1].revents & POLLIN) && read(x->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
			if (si.ssi_signo != SIGWINCH) { /* the command's to handle */
				struct execwire_msg sm = {.type = EXW_SIGNAL, .value = (int)si.ssi_signo};
				(void)send(x->chan, &sm, sizeof sm, MSG_NOSIGNAL | MSG_DONTWAIT);
			} else if (x->tty && x->pty.master >= 0) {
				(void)pty_copy_winsize(isatty(0) ? 0 : isatty(1) ? 1 : 2, x->pty.master);
			}
		}
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct execwire_msg m;
		ssize_t k = recv(x->chan, &m, sizeof m, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k != (ssize_t)sizeof m) { /* init is gone: so is the jail */
			status = 125;
			if (x->raw)
				(void)pty_raw_restore(0, &x->saved);
			cmd_warn("exec: session %s ended %s", full,
				 started ? "while the command ran: it was killed with the jail"
					 : "before the command started");
			break;
		}
		if (m.type == EXW_STARTED)
			started = true;
		else if (m.type == EXW_EXITED)
			status = m.value;
		else if (m.type == EXW_REFUSED) {
			status = 125;
			cmd_warn("exec: the jail's init did not run it: %s", strerror(m.value));
		}
	}
	if (x->tty && x->pty.master >= 0)
		(void)pty_relay_drain(&x->relay, 200);
	if (x->raw) {
		(void)pty_raw_restore(0, &x->saved);
		pty_restore_unregister();
	}
	return status;
}

/* The request written on a new exec channel, handed to the session with the command's fds,
 * then its word waited for: the command's status, or 125 / EXIT_USAGE (said). */
static int exec_start(struct exec_io *x, const char *id, char **cmd, int ncmd)
{
	int jfds[3];
	int sp[2] = {-1, -1};
	struct err e = {0};
	if (exec_fds(x, jfds, &e) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		if (!e.what[0])
			err_set(&e, errno, NULL, "exec: cannot make the exec channel");
		cmd_print_err(&e);
		return 125;
	}
	x->chan = sp[0];
	char *req = xmalloc(EXECWIRE_MAX);
	size_t len = execwire_pack(x->tty ? EXW_TTY : 0, (const char *const *)cmd, (size_t)ncmd,
				   req, EXECWIRE_MAX);
	bool sent = len && send(sp[0], req, len, MSG_NOSIGNAL) == (ssize_t)len;
	int err = errno;
	free(req);
	if (!sent) {
		(void)close(sp[1]);
		if (!len) {
			cmd_warn("exec: the command is too long, or has an empty argument");
			return EXIT_USAGE;
		}
		cmd_warn("exec: cannot write the request: %s", strerror(err));
		return 125;
	}
	/* the window's size for the pty; INT, TERM, HUP, QUIT passed on to the command (on a
	 * terminal in raw mode Ctrl-C is a byte for its pty instead) */
	sigset_t sigs;
	sigemptyset(&sigs);
	for (size_t k = 0; k < sizeof fwd_sigs / sizeof *fwd_sigs; k++)
		sigaddset(&sigs, fwd_sigs[k]);
	(void)sigprocmask(SIG_BLOCK, &sigs, NULL);
	(void)signal(SIGPIPE, SIG_IGN);
	x->sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	int fds[4] = {sp[1], jfds[0], jfds[1], jfds[2]};
	struct strv reply = STRV_INIT;
	_cleanup_free_ char *full = NULL;
	int c = cmd_session_call("exec", "nothing to run in", id, "AJ1 exec", fds, 4, &reply,
				 &full);
	strv_free(&reply);
	(void)close(sp[1]); /* init has its own now */
	if (x->pty.slave >= 0) {
		(void)close(x->pty.slave); /* else the relay never sees the command's end */
		x->pty.slave = -1;
	}
	return c ? 125 : exec_wait(x, full);
}

int cmd_exec(int argc, char **argv)
{
	const char *id = NULL;
	bool last = false;
	int i = 0;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(exec_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "--last") && !id && !last) {
			last = true;
		} else if (argv[i][0] == '-' || id || last) {
			break; /* the command */
		} else {
			id = argv[i];
		}
	}
	if (!id && !last) {
		fputs(exec_usage, stderr);
		return EXIT_USAGE;
	}
	struct session ls;
	_cleanup_store_ struct store *lst = NULL;
	int l = ll_lookup("exec", last ? NULL : id, &lst, &ls);
	if (l < 0)
		return 125;
	if (l == 1) {
		cmd_warn("exec: session %s runs on the landlock backend: there is no init of its own "
			 "to start a command under its confinement (exec is for the bwrap jail); "
			 "agentjail stop %.8s ends it",
			 ls.id, ls.id);
		session_free(&ls);
		return 125;
	}
	store_close(lst);
	lst = NULL;
	struct exec_io x = {.chan = -1, .sfd = -1};
	int rc = exec_start(&x, last ? NULL : id, argv + i, argc - i);
	if (x.chan >= 0)
		(void)close(x.chan);
	if (x.sfd >= 0)
		(void)close(x.sfd);
	pty_close(&x.pty);
	return rc;
}
