/* proxy_ask.c: `--net ask` in the proxy (doc/design.md §4, "Ask instead of fail"). A request the
 * rules refuse (not on the list, or not at that port; never one a deny entry refuses) waits,
 * its connection or DNS query held, while the person is asked: one question per entry (a name
 * lookup and its default ports share one; a second request for it joins the first), at most
 * NETASK_OPEN_MAX open. The question goes out through proxy_ask's `asked`; the answer comes in
 * as a job (proxy_answer); no answer in time denies it. The loop never blocks on either. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/proxy_internal.h"
#include "core/net/netsuggest.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define PX_WAITERS_MAX 64 /* requests waiting on one question; more are turned away */

struct px_question {
	struct net_question q;
	long long deadline;      /* monotonic */
	struct px_wait *waiters;
	size_t n_waiters;
	struct px_question *next;
};

struct px_ask {
	struct proxy_ask cfg;
	struct netask_memo memo;
	struct px_question *open;
	size_t n_open;
	uint64_t next_id;
};

int px_ask_setup(struct proxy *p, const struct proxy_ask *cfg)
{
	if (!cfg)
		return 0;
	p->ask = xcalloc(1, sizeof *p->ask);
	p->ask->cfg = *cfg;
	if (p->ask->cfg.timeout_s <= 0 || p->ask->cfg.timeout_s > NETASK_TIMEOUT_MAX)
		p->ask->cfg.timeout_s = NETASK_TIMEOUT_S;
	p->ask->next_id = 1;
	return 0;
}

static void unlink_wait(struct px_wait *w)
{
	struct px_question *q = w->q;
	if (!q)
		return;
	if (w->prev)
		w->prev->next = w->next;
	else
		q->waiters = w->next;
	if (w->next)
		w->next->prev = w->prev;
	w->prev = w->next = NULL;
	w->q = NULL;
	q->n_waiters--;
}

int px_ask(struct proxy *p, const char *host, uint16_t port, enum net_proto proto,
	   struct net_decision *d, struct px_wait *w, char **reason)
{
	*reason = NULL;
	struct px_ask *a = p->ask;
	if (!a)
		return -1;
	struct net_decision got;
	enum net_verdict v = netask_memo_check(&a->memo, host, port, clock_mono_ms(), &got);
	if (v == NV_ALLOW) { /* the answer's entry decides; a mapping of the name still holds */
		d->v = got.v;
		d->rule = got.rule;
		return 1;
	}
	if (v == NV_DENY_LISTED) {
		*reason = netask_reason(host, port, ASK_DENY, false,
					"earlier in this session", a->cfg.timeout_s);
		return -1;
	}
	struct px_question *q = a->open;
	while (q && !netask_same(&q->q, host, port))
		q = q->next;
	if (!q && a->n_open >= NETASK_OPEN_MAX) {
		*reason = xasprintf("%s:%u was not allowed: %d questions are open already (--net "
				    "ask)", host, (unsigned)port, NETASK_OPEN_MAX);
		return -1;
	}
	if (q && q->n_waiters >= PX_WAITERS_MAX) {
		*reason = xasprintf("%s:%u was not allowed: too many requests wait for its question",
				    host, (unsigned)port);
		return -1;
	}
	if (!q) {
		q = xcalloc(1, sizeof *q);
		q->q.id = a->next_id++;
		(void)snprintf(q->q.host, sizeof q->q.host, "%s", host);
		q->q.port = port;
		(void)snprintf(q->q.proto, sizeof q->q.proto, "%s", net_proto_name(proto));
		char *entry = net_suggest_entry(host, port);
		(void)snprintf(q->q.entry, sizeof q->q.entry, "%s", entry);
		free(entry);
		q->q.asked_ms = px_wall_ms();
		q->q.deadline_ms = q->q.asked_ms + a->cfg.timeout_s * 1000LL;
		q->deadline = clock_mono_ms() + a->cfg.timeout_s * 1000LL;
		q->next = a->open;
		a->open = q;
		a->n_open++;
		if (a->cfg.asked)
			a->cfg.asked(a->cfg.arg, &q->q);
	}
	w->q = q;
	w->prev = NULL;
	w->next = q->waiters;
	if (q->waiters)
		q->waiters->prev = w;
	q->waiters = w;
	q->n_waiters++;
	return 0;
}

void px_ask_leave(struct proxy *p, struct px_wait *w)
{
	(void)p;
	unlink_wait(w); /* the question stays: someone may still answer it for later */
}

/* Settle q: tell its waiters (d NULL: denied, with the reason), say so, free it. */
static void settle(struct proxy *p, struct px_question *q, enum ask_answer ans, bool timed_out,
		   const struct netrule *rule, const char *by)
{
	struct px_ask *a = p->ask;
	struct px_question **pp = &a->open;
	while (*pp && *pp != q)
		pp = &(*pp)->next;
	if (*pp) {
		*pp = q->next;
		a->n_open--;
	}
	if (a->cfg.settled)
		a->cfg.settled(a->cfg.arg, &q->q, ans, timed_out, by);
	struct net_decision d = {.v = NV_ALLOW, .rule = rule};
	while (q->waiters) {
		struct px_wait *w = q->waiters;
		unlink_wait(w);
		/* each its own reason: a lookup and a connection share the question */
		const char *host = q->q.host;
		w->done(p, w, rule ? &d : NULL,
			netask_reason(host, q->q.port, ans, timed_out, by, a->cfg.timeout_s));
	}
	free(q);
}

/* What the answer allows or denies from now on, and the rule its waiters go by (NULL: denied). */
static const struct netrule *remember(struct px_ask *a, const char *entry, uint16_t port,
				      enum ask_answer ans)
{
	long long now = clock_mono_ms();
	switch (ans) {
	case ASK_DENY:
		netask_memo_deny(&a->memo, entry);
		return NULL;
	case ASK_ONCE:
		/* the requests waiting now; a lookup's connections that follow it too */
		return netask_memo_allow(&a->memo, entry, port ? 1 : now + NETASK_LOOKUP_GRANT_MS);
	case ASK_SESSION:
	case ASK_ALWAYS:
		return netask_memo_allow(&a->memo, entry, 0);
	}
	return NULL;
}

void px_ask_answer(struct proxy *p, const struct px_answer_job *j)
{
	struct px_ask *a = p->ask;
	if (!a)
		return;
	struct px_question *next;
	bool any = false;
	for (struct px_question *q = a->open; q; q = next) {
		next = q->next;
		if (j->id ? q->q.id != j->id : strcmp(q->q.entry, j->entry) != 0)
			continue;
		any = true;
		const struct netrule *rule = remember(a, q->q.entry, q->q.port, j->a);
		if (j->a != ASK_DENY && !rule) /* cannot be allowed (not an entry): denied */
			settle(p, q, ASK_DENY, false, NULL, "not an allow_domains entry");
		else
			settle(p, q, j->a, false, rule, j->by);
	}
	/* `agentjail net allow|deny ID HOST` with nothing asked: for the requests to come */
	if (!any && !j->id && j->a != ASK_ONCE)
		(void)remember(a, j->entry, 1, j->a);
}

void px_ask_sweep(struct proxy *p, long long now)
{
	if (!p->ask)
		return;
	struct px_question *next;
	for (struct px_question *q = p->ask->open; q; q = next) {
		next = q->next;
		if (now >= q->deadline)
			settle(p, q, ASK_DENY, true, NULL, "no answer");
	}
}

void px_ask_free(struct proxy *p)
{
	struct px_ask *a = p->ask;
	if (!a)
		return;
	while (a->open) {
		struct px_question *q = a->open;
		a->open = q->next;
		a->n_open--;
		while (q->waiters) {
			struct px_wait *w = q->waiters;
			unlink_wait(w);
			w->done(p, w, NULL, xasprintf("%s: the run ended before an answer", q->q.host));
		}
		free(q);
	}
	netask_memo_free(&a->memo);
	free(a);
	p->ask = NULL;
}
