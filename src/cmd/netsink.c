/* netsink: the egress proxy's decisions into the session store, and the denied line at the
 * end of the run (see netsink.h). */
#include "cmd/netsink.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/session/netfmt.h"
#include "core/session/store.h"
#include "util/xalloc.h"

/* Distinct host:port pairs remembered for the denied and failed lines; more are still
 * counted. */
#define DENIED_MAX 256
/* Decisions recorded per run at the most: a jail flooding the proxy with requests (each
 * denied at once) must not fill the host's disk through the store. The rest are counted. */
#define RECORD_MAX 100000
struct netsink {
	pthread_mutex_t mu;
	const struct store *run_st; /* the run's store, until our own connection is opened */
	struct store *st; /* our own connection, NULL when none */
	char *id;
	int attempt;
	bool warned, capped;
	unsigned long long allowed, failed, denied_conns, denied_lookups, malformed, recorded;
	struct net_count *denied; /* n_denied of them, by first appearance, with the reason */
	size_t n_denied;
	struct net_count *fails; /* the allowed whose upstream failed, with the error */
	size_t n_fails;
};

static void sink_warn(struct netsink *ns, const struct err *e)
{
	if (ns->warned)
		return;
	ns->warned = true;
	char buf[ERR_FMT_MAX];
	err_format(e, buf, sizeof buf);
	cmd_warn("network decisions of this run are not recorded (%s); it runs anyway", buf);
}

struct netsink *netsink_new(struct store *st, const char *session_id, int attempt)
{
	struct netsink *ns = xcalloc(1, sizeof *ns);
	pthread_mutex_init(&ns->mu, NULL);
	ns->attempt = attempt;
	if (st && session_id) { /* the connection is opened with the first batch (netsink.h) */
		ns->run_st = st;
		ns->id = xstrdup(session_id);
	}
	return ns;
}

/* Our own connection to the run's store, on the thread that delivers the first batch (the
 * proxy's writer): opening it (≈ 0.4 ms) is off the path to the command's start, and a run
 * that decides nothing never opens it. Under ns->mu. */
static void open_store(struct netsink *ns)
{
	const struct store *st = ns->run_st;
	ns->run_st = NULL;
	struct err e = {0};
	if (store_open_again(st, &ns->st, &e) < 0) {
		ns->st = NULL;
		free(ns->id);
		ns->id = NULL;
		sink_warn(ns, &e);
	}
}

/* Count ev under its host and port in *v (the first one's reason `why` kept). */
static void count_by_host(struct net_count **v, size_t *n, const struct net_event *ev,
			  const char *why, size_t why_size)
{
	size_t hl = strnlen(ev->host, sizeof ev->host);
	for (size_t i = 0; i < *n; i++) {
		struct net_count *c = &(*v)[i];
		if (c->port == ev->port && strlen(c->host) == hl && !memcmp(c->host, ev->host, hl)) {
			c->n++;
			return;
		}
	}
	if (*n == DENIED_MAX)
		return; /* counted in the totals, shown as "and N more" */
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = (struct net_count){xstrndup(ev->host, hl), ev->port, 1,
					  xstrndup(why, strnlen(why, why_size))};
}

static void count_event(struct netsink *ns, const struct net_event *ev)
{
	if (ev->allowed) {
		ns->allowed++;
		if (ev->failed) {
			ns->failed++;
			count_by_host(&ns->fails, &ns->n_fails, ev, ev->error, sizeof ev->error);
		}
		return;
	}
	if (net_event_malformed(ev)) {
		ns->malformed++; /* apart from the names: there is none to list */
		return;
	}
	if (ev->proto == NP_DNS)
		ns->denied_lookups++;
	else
		ns->denied_conns++;
	count_by_host(&ns->denied, &ns->n_denied, ev, ev->rule, sizeof ev->rule);
}

void netsink_fn(void *arg, const struct net_event *ev, size_t n)
{
	struct netsink *ns = arg;
	if (!ns || !n)
		return;
	pthread_mutex_lock(&ns->mu);
	if (ns->run_st)
		open_store(ns);
	for (size_t i = 0; i < n; i++)
		count_event(ns, &ev[i]);
	size_t room = ns->recorded < RECORD_MAX ? RECORD_MAX - ns->recorded : 0;
	if (n > room && !ns->capped && ns->st) {
		ns->capped = true;
		cmd_warn("more than %d network decisions in this run: the rest are counted, not "
			 "recorded",
			 RECORD_MAX);
	}
	size_t k = n < room ? n : room;
	if (ns->st && k) {
		struct err e = {0};
		if (store_add_net_events(ns->st, ns->id, ns->attempt, ev, k, &e) < 0)
			sink_warn(ns, &e);
		else
			ns->recorded += k;
	}
	pthread_mutex_unlock(&ns->mu);
}

static int by_count(const void *a, const void *b)
{
	const struct net_count *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	int c = strcmp(x->host, y->host);
	return c ? c : x->port - y->port;
}

void netsink_report(struct netsink *ns)
{
	if (!ns)
		return;
	pthread_mutex_lock(&ns->mu);
	/* where every decision is: the session's log (a run not recorded has none) */
	char more[64] = "";
	if (ns->id && ns->st)
		snprintf(more, sizeof more, "agentjail log %.8s", ns->id);
	if (ns->denied_conns + ns->denied_lookups + ns->malformed > 0) {
		qsort(ns->denied, ns->n_denied, sizeof *ns->denied, by_count);
		char *line = netfmt_denied_line(ns->denied, ns->n_denied,
						(long long)ns->denied_conns,
						(long long)ns->denied_lookups,
						(long long)ns->malformed, more);
		cmd_warn("%s", line);
		free(line);
	}
	if (ns->failed > 0) {
		qsort(ns->fails, ns->n_fails, sizeof *ns->fails, by_count);
		char *line = netfmt_failed_line(ns->fails, ns->n_fails, (long long)ns->allowed,
						(long long)ns->failed, more);
		cmd_warn("%s", line);
		free(line);
	}
	pthread_mutex_unlock(&ns->mu);
}

void netsink_counts(struct netsink *ns, unsigned long long *allowed, unsigned long long *denied)
{
	pthread_mutex_lock(&ns->mu);
	if (allowed)
		*allowed = ns->allowed;
	if (denied)
		*denied = ns->denied_conns + ns->denied_lookups + ns->malformed;
	pthread_mutex_unlock(&ns->mu);
}

void netsink_free(struct netsink *ns)
{
	if (!ns)
		return;
	store_close(ns->st);
	net_counts_free(ns->denied, ns->n_denied);
	net_counts_free(ns->fails, ns->n_fails);
	free(ns->id);
	pthread_mutex_destroy(&ns->mu);
	free(ns);
}

#ifdef AJ_TEST_BUILD
static struct netsink *test_sink;

static void str_field(json_t *o, const char *key, char *dst, size_t size)
{
	const char *v = json_string_value(json_object_get(o, key));
	snprintf(dst, size, "%s", v ? v : "");
}

void netsink_test_feed(struct store *st, const char *session_id, const char *var)
{
	const char *path = getenv(var);
	if (!path || !path[0])
		return;
	FILE *f = fopen(path, "re");
	if (!f) {
		cmd_warn("test: %s=%s: cannot open", var, path);
		return;
	}
	if (!test_sink)
		test_sink = netsink_new(st, session_id, 0);
	enum { BATCH = 1000 }; /* as the proxy's writer hands them over */
	struct net_event *b = xcalloc(BATCH, sizeof *b);
	size_t nb = 0;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		if (!o)
			continue;
		struct net_event *ev = &b[nb++];
		memset(ev, 0, sizeof *ev);
		ev->at_ms = json_integer_value(json_object_get(o, "at_ms"));
		if (!ev->at_ms)
			ev->at_ms = store_now_ms();
		if (net_proto_parse(json_string_value(json_object_get(o, "proto")), &ev->proto) < 0)
			ev->proto = NP_CONNECT;
		str_field(o, "host", ev->host, sizeof ev->host);
		ev->port = (uint16_t)json_integer_value(json_object_get(o, "port"));
		ev->allowed = json_is_true(json_object_get(o, "allowed"));
		ev->failed = json_is_true(json_object_get(o, "failed"));
		str_field(o, "rule", ev->rule, sizeof ev->rule);
		str_field(o, "addr", ev->addr, sizeof ev->addr);
		ev->bytes_up = (uint64_t)json_integer_value(json_object_get(o, "bytes_up"));
		ev->bytes_down = (uint64_t)json_integer_value(json_object_get(o, "bytes_down"));
		ev->dur_ms = json_integer_value(json_object_get(o, "dur_ms"));
		str_field(o, "error", ev->error, sizeof ev->error);
		json_decref(o);
		if (nb == BATCH) {
			netsink_fn(test_sink, b, nb);
			nb = 0;
		}
	}
	netsink_fn(test_sink, b, nb);
	free(b);
	free(line);
	fclose(f);
}

void netsink_test_end(void)
{
	netsink_report(test_sink);
	netsink_free(test_sink);
	test_sink = NULL;
}
#endif
