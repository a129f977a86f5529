/* `agentjail log [ID | --last] [--json] [--follow]`: the egress proxy's decisions and the
 * violations of a session (doc/design.md §5), as aligned lines or JSON lines; --follow polls
 * the store until the session ends. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/session/netfmt.h"
#include "core/session/sessfmt.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

#define FOLLOW_POLL_MS 250

static const char usage[] =
	"usage: agentjail log [ID | --last] [--json] [--follow]\n"
	"       agentjail log [ID | --last] --suggest [--apply [--yes]]\n"
	"  the network decisions (allowed and denied connections and name lookups, from\n"
	"  --net allow) and the violations of a session, oldest first\n"
	"  ID        a session id or a unique prefix of one (agentjail sessions lists them)\n"
	"  --last    the newest session of this workspace (the default without ID)\n"
	"  --json    one JSON object per line: {\"type\": \"net\" | \"violation\", …}\n"
	"  --follow  keep printing as the session goes on; stop when it ends\n"
	"  --suggest the allow_domains lines that would allow what was denied, one per host\n"
	"            (and port), with how often; --apply adds them to your configuration file\n"
	"            (never a project's) after asking; --yes without asking\n"
	"example: agentjail log --last --follow\n";

struct log_opts {
	bool json, follow;
	size_t width; /* 0: no limit */
	long utc_offset;
	const char *id;
	bool header_done;
};

/* A JSON string of a text that may not be UTF-8: as it is when it is, cleaned when not. */
static json_t *jstr(const char *s, size_t max)
{
	size_t len = strnlen(s, max);
	json_t *j = json_stringn(s, len);
	if (j)
		return j;
	char *raw = xstrndup(s, len);
	char *c = fmt_clean(raw);
	j = json_string(c);
	free(raw);
	free(c);
	return j ? j : json_string("?");
}
#define JFIELD(f) jstr((f), sizeof(f))

static void print_jline(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	if (s)
		printf("%s\n", s);
	free(s);
	json_decref(o);
}

/* The keys every JSON line starts with. */
static json_t *jhead(const struct log_opts *o, const char *type, long long seq, int attempt,
		     long long at_ms)
{
	json_t *j = json_object();
	json_object_set_new(j, "type", json_string(type));
	json_object_set_new(j, "session", json_string(o->id));
	json_object_set_new(j, "seq", json_integer(seq));
	json_object_set_new(j, "attempt", json_integer(attempt));
	json_object_set_new(j, "at_ms", json_integer(at_ms));
	return j;
}

static void print_net(struct log_opts *o, const struct net_row *r)
{
	const struct net_event *ev = &r->ev;
	if (o->json) {
		json_t *j = jhead(o, "net", r->seq, r->attempt, ev->at_ms);
		json_object_set_new(j, "proto", json_string(net_proto_name(ev->proto)));
		json_object_set_new(j, "host", JFIELD(ev->host));
		json_object_set_new(j, "port", json_integer(ev->port));
		json_object_set_new(j, "action", json_string(ev->allowed ? "allow" : "deny"));
		json_object_set_new(j, "failed", json_boolean(ev->allowed && ev->failed));
		json_object_set_new(j, "rule", JFIELD(ev->rule));
		json_object_set_new(j, "addr", JFIELD(ev->addr));
		json_object_set_new(j, "bytes_up", json_integer((json_int_t)ev->bytes_up));
		json_object_set_new(j, "bytes_down", json_integer((json_int_t)ev->bytes_down));
		json_object_set_new(j, "dur_ms", json_integer(ev->dur_ms));
		json_object_set_new(j, "error", JFIELD(ev->error));
		print_jline(j);
		return;
	}
	char *l = netfmt_log_line(ev, o->utc_offset, o->width);
	printf("%s\n", l);
	free(l);
}

static void print_violation(struct log_opts *o, const struct event *ev)
{
	if (o->json) {
		json_t *d = ev->detail_json ? json_loads(ev->detail_json, 0, NULL) : NULL;
		json_t *j = jhead(o, strncmp(ev->kind, "sweep.", 6) ? "violation" : "sweep", ev->seq,
				  ev->attempt, ev->at_ms);
		json_object_set_new(j, "kind", jstr(ev->kind, SIZE_MAX));
		json_object_set_new(j, "detail", d ? d : json_null());
		print_jline(j);
		return;
	}
	char *l = netfmt_log_violation(ev, o->utc_offset, o->width);
	printf("%s\n", l);
	free(l);
}

/* the violations, and what the Landlock backend's sweep moved aside (its own kind: the agent
 * writes there itself, doc/design.md §4c) */
static bool is_violation(const char *kind)
{
	return kind && (!strcmp(kind, "violation") || !strncmp(kind, "violation.", 10) ||
			!strncmp(kind, "sweep.", 6));
}

/* Print what is new since *net_seq / *ev_seq (both advanced), the two kinds merged by time.
 * Returns how many lines were printed, or -1 (said). */
static long print_new(struct store *st, struct log_opts *o, long long *net_seq, long long *ev_seq)
{
	struct err e = {0};
	struct net_row *nr = NULL;
	size_t nn = 0;
	struct event *evs = NULL;
	size_t ne = 0;
	if (store_net_events(st, o->id, *net_seq, 0, &nr, &nn, &e) < 0 ||
	    store_events(st, o->id, &evs, &ne, &e) < 0) {
		cmd_print_err(&e);
		free(nr);
		return -1;
	}
	long printed = 0;
	size_t i = 0, k = 0;
	for (;;) {
		while (k < ne && (evs[k].seq <= *ev_seq || !is_violation(evs[k].kind)))
			k++;
		if (i == nn && k == ne)
			break;
		if (!o->json && !o->header_done) {
			char *h = netfmt_log_header(o->width);
			printf("%s\n", h);
			free(h);
			o->header_done = true;
		}
		if (k == ne || (i < nn && nr[i].ev.at_ms <= evs[k].at_ms)) {
			print_net(o, &nr[i]);
			*net_seq = nr[i++].seq;
		} else {
			print_violation(o, &evs[k]);
			*ev_seq = evs[k++].seq;
		}
		printed++;
	}
	fflush(stdout);
	free(nr);
	events_free(evs, ne);
	return printed;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static int follow(struct store *st, struct log_opts *o, long long *net_seq, long long *ev_seq)
{
	for (;;) {
		/* the status first: a session seen ended has all its events written (netsink.h) */
		struct session s;
		int g = cmd_session_get(st, o->id, &s);
		if (g)
			return g; /* removed meanwhile */
		bool running = s.status == SESS_RUNNING;
		bool gone = running && !store_proc_alive(s.pid, s.pid_start, NULL);
		long pid = s.pid;
		session_free(&s);
		if (print_new(st, o, net_seq, ev_seq) < 0)
			return 1;
		if (gone) {
			cmd_warn("log: session %s: its agentjail (pid %ld) is gone; it is lost", o->id,
				 pid);
			return 0;
		}
		if (!running)
			return 0;
		sleep_ms(FOLLOW_POLL_MS);
	}
}

int cmd_log(int argc, char **argv)
{
	struct log_opts o = {0};
	bool last = false, suggest = false, apply = false, yes = false;
	const char *id = NULL;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			o.json = true;
		else if (!strcmp(argv[i], "--follow") || !strcmp(argv[i], "-f"))
			o.follow = true;
		else if (!strcmp(argv[i], "--last"))
			last = true;
		else if (!strcmp(argv[i], "--suggest"))
			suggest = true;
		else if (!strcmp(argv[i], "--apply"))
			apply = true;
		else if (!strcmp(argv[i], "--yes") || !strcmp(argv[i], "-y"))
			yes = true;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (argv[i][0] != '-' && !id)
			id = argv[i];
		else {
			cmd_warn("log: unexpected argument %s", argv[i]);
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (id && last) {
		cmd_warn("log: give an ID or --last, not both");
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	if ((apply && !suggest) || (yes && !apply) || (suggest && (o.json || o.follow))) {
		cmd_warn("log: --apply goes with --suggest, --yes with --apply, and --suggest "
			 "with neither --json nor --follow\n%s", usage);
		return EXIT_USAGE;
	}
	_cleanup_store_ struct store *st = NULL;
	if (cmd_store_existing(&st) < 0)
		return 1;
	struct session s;
	int rc = id ? cmd_session_get(st, id, &s) : cmd_session_last(st, "log", &s);
	if (rc)
		return rc;
	_cleanup_free_ char *full = xstrdup(s.id);
	session_free(&s);
	o.id = full;
	if (suggest)
		return cmd_log_suggest(st, full, apply, yes);
	o.utc_offset = cmd_utc_offset();
	struct winsize w = {0};
	if (!o.json && isatty(1) && ioctl(1, TIOCGWINSZ, &w) == 0)
		o.width = w.ws_col;
	long long net_seq = 0, ev_seq = 0;
	if (o.follow)
		return follow(st, &o, &net_seq, &ev_seq);
	long n = print_new(st, &o, &net_seq, &ev_seq);
	if (n < 0)
		return 1;
	if (n == 0 && !o.json)
		printf("session %s: no network decisions or violations recorded\n", full);
	return 0;
}
