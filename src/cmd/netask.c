/* netask: see netask.h. */
#include "cmd/netask.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/netrun.h"
#include "core/jail/ctlsock.h"
#include "core/plan/ctlproto.h"
#include "core/net/netsuggest.h"
#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/termtext.h"
#include "util/xalloc.h"

/* What the proxy's thread hands over. */
struct note {
	bool settled;
	long long at_ms; /* wall clock, when it was settled */
	struct net_question q;
	enum ask_answer a;
	bool timed_out;
	char by[128];
};

struct netask {
	struct netrun *net;
	struct sess_rec *rec;
	const char *session;      /* the run's id (req's) */
	const char *agent;        /* the session's profile: where "always" writes */
	bool terminal;            /* the question can be put at the terminal */
	struct proxy_ask hooks;
	struct askprompt_src prompt;
	/* from the proxy's thread */
	pthread_mutex_t mu;
	struct note *notes;
	size_t n_notes, cap_notes;
	int efd;
	/* the main thread's */
	struct net_question open[NETASK_OPEN_MAX];
	size_t n_open;
};

/* ---- the proxy's thread ---- */

static void push(struct netask *a, const struct note *n)
{
	(void)pthread_mutex_lock(&a->mu);
	if (a->n_notes < 4 * NETASK_OPEN_MAX) { /* settled ones follow their questions */
		if (a->n_notes == a->cap_notes) {
			a->cap_notes = a->cap_notes ? 2 * a->cap_notes : 16;
			a->notes = xrealloc(a->notes, a->cap_notes * sizeof *a->notes);
		}
		a->notes[a->n_notes++] = *n;
	}
	(void)pthread_mutex_unlock(&a->mu);
	uint64_t one = 1;
	if (write(a->efd, &one, sizeof one) != sizeof one)
		(void)0; /* non-zero already: the loop wakes anyway */
}

static void on_asked(void *arg, const struct net_question *q)
{
	struct note n = {.q = *q};
	push(arg, &n);
}

static void on_settled(void *arg, const struct net_question *q, enum ask_answer ans,
		       bool timed_out, const char *by)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	struct note n = {.settled = true, .q = *q, .a = ans, .timed_out = timed_out,
			 .at_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000};
	(void)snprintf(n.by, sizeof n.by, "%s", by ? by : "");
	push(arg, &n);
}

/* ---- the main thread ---- */

/* A line while the run goes on: the terminal may be raw, the jail's output mid-line. */
static void live_line(const char *text)
{
	bool tty = isatty(STDERR_FILENO);
	_cleanup_free_ char *shown = fmt_clean(text);
	fprintf(stderr, "%sagentjail: %s%s", tty ? "\r\n" : "", shown, tty ? "\r\n" : "\n");
	(void)fflush(stderr);
}

static char *what_of(const struct net_question *q)
{
	return q->port ? xasprintf(strchr(q->host, ':') ? "[%s]:%u" : "%s:%u", q->host,
				   (unsigned)q->port)
		       : xasprintf("%s (a name lookup)", q->host);
}

static void record(struct netask *a, const struct note *n)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:s}", "id", (json_int_t)n->q.id, "entry",
			      n->q.entry, "host", n->q.host, "port", (int)n->q.port, "proto",
			      n->q.proto);
	if (o && n->settled) {
		json_object_set_new(o, "answer", json_string(n->timed_out ? "timeout"
									  : ask_answer_name(n->a)));
		json_object_set_new(o, "by", json_string(n->by));
		json_object_set_new(o, "waited_ms", json_integer(n->at_ms - n->q.asked_ms));
	}
	char *d = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(o);
	cmd_rec_event(a->rec, n->settled ? "net.answer" : "net.ask", d);
	free(d);
}

static void take(struct netask *a, const struct note *n)
{
	record(a, n);
	if (!n->settled) {
		if (a->n_open < NETASK_OPEN_MAX)
			a->open[a->n_open++] = n->q;
		if (!a->terminal) { /* no one sees a prompt: say where to answer */
			_cleanup_free_ char *what = what_of(&n->q);
			_cleanup_free_ char *l = xasprintf(
				"the jail asks to connect to %s: agentjail net allow %s %s (or deny; "
				"agentjail tui); denied in %lld s without an answer",
				what, a->session, n->q.entry,
				(long long)(n->q.deadline_ms - n->q.asked_ms) / 1000);
			live_line(l);
		}
		return;
	}
	for (size_t i = 0; i < a->n_open; i++)
		if (a->open[i].id == n->q.id) {
			a->open[i] = a->open[--a->n_open];
			break;
		}
	if (!a->terminal && n->timed_out) {
		_cleanup_free_ char *what = what_of(&n->q);
		_cleanup_free_ char *l = xasprintf("no answer about %s: denied", what);
		live_line(l);
	}
}

static void drain(struct netask *a)
{
	uint64_t k;
	if (read(a->efd, &k, sizeof k) < 0)
		(void)0; /* EAGAIN: nothing new */
	(void)pthread_mutex_lock(&a->mu);
	struct note *v = a->notes;
	size_t n = a->n_notes;
	a->notes = NULL;
	a->n_notes = a->cap_notes = 0;
	(void)pthread_mutex_unlock(&a->mu);
	for (size_t i = 0; i < n; i++)
		take(a, &v[i]);
	free(v);
}

/* The answer carried out: "always" adds the entry to the user's configuration first (failing
 * that, it is an answer for the session, and says so). entry: the questions' (id 0) or of
 * the one asked. 0, or -1 with why (allocated). */
static int answer(struct netask *a, uint64_t id, const char *entry, enum ask_answer ans,
		  const char *by, char **why)
{
	*why = NULL;
	if (!a->net->proxy) {
		*why = xstrdup("the proxy is not running");
		return -1;
	}
	if (ans == ASK_ALWAYS) {
		struct strv add = STRV_INIT;
		strv_push(&add, entry);
		struct cmd_allow_edit ed;
		struct err e = {0};
		int rc = cmd_allow_edit(a->agent, &add, &ed, &e);
		if (rc == 0 && ed.added)
			rc = cmd_allow_write(&ed, &e);
		strv_free(&add);
		_cleanup_free_ char *l = NULL;
		if (rc < 0) {
			char buf[ERR_FMT_MAX];
			err_format(&e, buf, sizeof buf);
			l = xasprintf("could not add %s to your configuration (%s): allowed for this "
				      "session only", entry, buf);
			ans = ASK_SESSION;
		} else {
			l = xasprintf("%s %s in allow_domains of %s in %s", entry,
				      ed.added ? "added" : "already", ed.header, ed.path);
		}
		live_line(l);
		cmd_allow_edit_free(&ed);
	}
	proxy_answer(a->net->proxy, id, entry, ans, by);
	return 0;
}

static void prompt_answered(void *arg, uint64_t id, enum ask_answer ans)
{
	struct netask *a = arg;
	for (size_t i = 0; i < a->n_open; i++) {
		if (a->open[i].id != id)
			continue;
		char *why = NULL;
		if (answer(a, id, a->open[i].entry, ans, "the terminal", &why) < 0)
			live_line(why);
		free(why);
		return;
	}
}

static bool prompt_question(void *arg, const uint64_t *later, size_t nlater,
			    struct net_question *q)
{
	struct netask *a = arg;
	/* the oldest not put aside */
	const struct net_question *best = NULL;
	for (size_t i = 0; i < a->n_open; i++) {
		bool aside = false;
		for (size_t k = 0; k < nlater && !aside; k++)
			aside = later[k] == a->open[i].id;
		if (!aside && (!best || a->open[i].id < best->id))
			best = &a->open[i];
	}
	if (best)
		*q = *best;
	return best != NULL;
}

/* An entry as `agentjail net` or the TUI sends it, in the questions' form (net_suggest_entry;
 * a wildcard kept). NULL when it is none. */
static char *entry_of(const char *s)
{
	struct netrule r;
	struct err e = {0};
	if (netrule_parse(s, &r, &e) < 0)
		return NULL;
	char *out = r.kind == NR_WILDCARD ? xstrdup(r.spec) : net_suggest_entry(r.host, r.port);
	netrule_free(&r);
	return out;
}

char *netask_request(struct netask *a, const struct ctl_req *req, const struct ctlsock_peer *p)
{
	if (!strcmp(req->verb, "questions") && req->nargs == 0) {
		struct strbuf b = STRBUF_INIT;
		size_t n = 0;
		char line[CTLPROTO_LINE_MAX];
		for (size_t i = 0; i < a->n_open; i++)
			n += ctlproto_question_format(&a->open[i], line, sizeof line) == 0;
		sb_addf(&b, "ok list %zu\n", n);
		for (size_t i = 0; i < a->n_open; i++)
			if (ctlproto_question_format(&a->open[i], line, sizeof line) == 0)
				sb_addf(&b, "%s\n", line);
		return sb_steal(&b);
	}
	if (!strcmp(req->verb, "answer") && req->nargs == 3) {
		enum ask_answer ans;
		if (ask_answer_parse(req->args[1], &ans) < 0)
			return xstrdup("err answer: once, session, always or deny\n");
		char *end = NULL;
		unsigned long long id = strtoull(req->args[0], &end, 10);
		bool by_id = req->args[0][0] >= '0' && req->args[0][0] <= '9' && !*end && id;
		_cleanup_free_ char *entry = NULL;
		size_t matched = 0;
		for (size_t i = 0; i < a->n_open; i++)
			if (by_id && a->open[i].id == id) {
				entry = xstrdup(a->open[i].entry);
				matched = 1;
			}
		if (by_id && !matched)
			return xasprintf("err no open question %llu (answered, or out of time)\n", id);
		if (!by_id && !(entry = entry_of(req->args[0])))
			return xstrdup("err not an entry: HOST, HOST:PORT, IP, [IPv6]:PORT, "
				       "*.DOMAIN\n");
		for (size_t i = 0; !by_id && i < a->n_open; i++)
			matched += !strcmp(a->open[i].entry, entry);
		_cleanup_free_ char *by = xasprintf("agentjail %s, uid %u", req->args[2],
						    (unsigned)p->uid);
		char *why = NULL;
		if (answer(a, by_id ? id : 0, entry, ans, by, &why) < 0) {
			char *r = xasprintf("err %s\n", why);
			free(why);
			return r;
		}
		return xasprintf("ok answered %zu %s\n", matched, entry);
	}
	return NULL;
}

size_t netask_fill(struct netask *a, struct pollfd *pfd, size_t max)
{
	if (!a || !max)
		return 0;
	pfd[0] = (struct pollfd){.fd = a->efd, .events = POLLIN};
	return 1;
}

void netask_handle(struct netask *a, const struct pollfd *pfd, size_t n)
{
	if (a && n && (pfd[0].revents & POLLIN))
		drain(a);
}

struct netask *netask_new(struct netrun *net, const struct run_request *req,
			  struct sess_rec *rec)
{
	struct netask *a = xcalloc(1, sizeof *a);
	a->net = net;
	a->rec = rec;
	a->session = req->session_id ? req->session_id : "ID";
	a->agent = req->pol.profile;
	a->terminal = isatty(STDIN_FILENO) && (isatty(STDOUT_FILENO) || isatty(STDERR_FILENO));
	(void)pthread_mutex_init(&a->mu, NULL);
	a->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	a->hooks = (struct proxy_ask){.timeout_s = req->pol.ask_timeout, .asked = on_asked,
				      .settled = on_settled, .arg = a};
	a->prompt = (struct askprompt_src){.question = prompt_question,
					   .answered = prompt_answered,
					   .session = a->session, .arg = a};
	if (a->efd < 0)
		cmd_warn("--net ask: cannot make an eventfd (%s): no question will be shown",
			 strerror(errno));
	return a;
}

const struct proxy_ask *netask_proxy(struct netask *a)
{
	return a ? &a->hooks : NULL;
}

const struct askprompt_src *netask_prompt(struct netask *a)
{
	return a ? &a->prompt : NULL;
}

void netask_free(struct netask *a)
{
	if (!a)
		return;
	if (a->efd >= 0)
		(void)close(a->efd);
	free(a->notes);
	(void)pthread_mutex_destroy(&a->mu);
	free(a);
}
