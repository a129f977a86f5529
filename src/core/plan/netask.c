/* netask: see netask.h. */
#include "core/plan/netask.h"

#include <stdlib.h>
#include <string.h>

#include "core/plan/netrules.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static const char *const answers[] = {
	[ASK_DENY] = "deny", [ASK_ONCE] = "once", [ASK_SESSION] = "session",
	[ASK_ALWAYS] = "always",
};

const char *ask_answer_name(enum ask_answer a)
{
	return (unsigned)a < sizeof answers / sizeof *answers ? answers[a] : "?";
}

int ask_answer_parse(const char *s, enum ask_answer *out)
{
	for (size_t i = 0; s && i < sizeof answers / sizeof *answers; i++)
		if (!strcmp(s, answers[i])) {
			*out = (enum ask_answer)i;
			return 0;
		}
	return -1;
}

void netask_memo_free(struct netask_memo *m)
{
	for (size_t i = 0; i < m->n; i++) {
		netrule_free(m->rules[i]);
		free(m->rules[i]);
	}
	free(m->rules);
	free(m->expires);
	strv_free(&m->denied);
	memset(m, 0, sizeof *m);
}

static void undeny(struct netask_memo *m, const char *entry)
{
	for (size_t i = 0; i < m->denied.n; i++)
		if (!strcmp(m->denied.v[i], entry)) {
			free(m->denied.v[i]);
			memmove(&m->denied.v[i], &m->denied.v[i + 1],
				(m->denied.n - i) * sizeof *m->denied.v); /* with the NULL */
			m->denied.n--;
			return;
		}
}

const struct netrule *netask_memo_allow(struct netask_memo *m, const char *entry,
					long long expires)
{
	undeny(m, entry);
	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->rules[i]->spec, entry))
			continue;
		/* allowed again: the longer of the two */
		if (!expires || (m->expires[i] && expires > m->expires[i]))
			m->expires[i] = expires;
		return m->rules[i];
	}
	struct netrule *r = xcalloc(1, sizeof *r);
	struct err e = {0};
	if (netrule_parse(entry, r, &e) < 0) {
		free(r);
		return NULL;
	}
	m->rules = xrealloc(m->rules, (m->n + 1) * sizeof *m->rules);
	m->expires = xrealloc(m->expires, (m->n + 1) * sizeof *m->expires);
	m->rules[m->n] = r;
	m->expires[m->n++] = expires;
	return r;
}

void netask_memo_deny(struct netask_memo *m, const char *entry)
{
	if (!strv_contains(&m->denied, entry))
		strv_push(&m->denied, entry);
	for (size_t i = 0; i < m->n; i++) /* a deny takes back an allow */
		if (!strcmp(m->rules[i]->spec, entry))
			m->expires[i] = 1; /* past: it allows nothing more */
}

enum net_verdict netask_memo_check(const struct netask_memo *m, const char *host, uint16_t port,
				   long long now, struct net_decision *d)
{
	memset(d, 0, sizeof *d);
	d->v = NV_NOT_ALLOWED;
	char *entry = net_suggest_entry(host, port);
	bool denied = strv_contains(&m->denied, entry);
	free(entry);
	if (denied) {
		d->v = NV_DENY_LISTED;
		return d->v;
	}
	for (size_t i = 0; i < m->n; i++) {
		if (m->expires[i] && m->expires[i] <= now)
			continue;
		/* one entry at a time: d->rule then points at the entry, which stays put */
		struct netrules one = {.allow = m->rules[i], .n_allow = 1};
		struct net_decision got;
		if (netrules_check(&one, host, port, &got) == NV_ALLOW) {
			*d = got;
			d->rule = m->rules[i];
			return d->v;
		}
	}
	return d->v;
}

bool netask_same(const struct net_question *q, const char *host, uint16_t port)
{
	char *entry = net_suggest_entry(host, port);
	bool same = !strcmp(entry, q->entry);
	free(entry);
	return same;
}

char *netask_reason(const char *host, uint16_t port, enum ask_answer a, bool timed_out,
		    const char *by, int timeout_s)
{
	struct strbuf b = STRBUF_INIT;
	if (port)
		sb_addf(&b, strchr(host, ':') ? "[%s]:%u" : "%s:%u", host, (unsigned)port);
	else
		sb_addf(&b, "%s (lookup)", host);
	if (timed_out)
		sb_addf(&b, " was not allowed: no answer within %d s to the question (--net ask)",
			timeout_s);
	else if (a == ASK_DENY)
		sb_addf(&b, " was denied when asked (%s)", by && *by ? by : "?");
	else
		sb_addf(&b, " was allowed %s when asked (%s)",
			a == ASK_ONCE ? "once" : a == ASK_SESSION ? "for the session" : "always",
			by && *by ? by : "?");
	return sb_steal(&b);
}
