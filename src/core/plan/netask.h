/* netask: `--net ask` (doc/design.md §4, "Ask instead of fail"): a connection, or a name lookup,
 * that the rules do not allow waits while the person decides: allow once, for the session,
 * always (added to the user's configuration), or deny. Pure: the question as every layer sees
 * it, the answers, and what the session has been answered so far. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/plan/netrules.h"
#include "util/strv.h"

#define NETASK_TIMEOUT_S 60      /* the default wait for an answer */
#define NETASK_TIMEOUT_MAX 3600  /* the longest --ask-timeout */
#define NETASK_OPEN_MAX 32       /* questions open at once; more are denied at once */
#define NETASK_LOOKUP_GRANT_MS 30000 /* a lookup allowed once: its connections pass this long
				      * (the DNS answer's life), so one question asks for both */

enum ask_answer { ASK_DENY, ASK_ONCE, ASK_SESSION, ASK_ALWAYS };
const char *ask_answer_name(enum ask_answer a); /* "deny", "once", "session", "always" */
int ask_answer_parse(const char *s, enum ask_answer *out); /* 0, or -1 */

/* A question, as the proxy asks it and the person sees it. */
struct net_question {
	uint64_t id;                 /* > 0, unique in the session */
	char host[NET_HOST_MAX + 1]; /* normalized */
	uint16_t port;               /* 0: a name lookup (the DNS stub) */
	char proto[8];               /* how the first request that asked came: net_proto_name's
				      * word ("connect", "http", "socks", "dns", "tcp") */
	char entry[NET_HOST_MAX + 10]; /* what an allow adds (net_suggest_entry): "evil.example",
					* "db.example:5432" */
	int64_t asked_ms, deadline_ms; /* wall clock */
};

/* What the session has been answered (the proxy's; one thread). An entry's rule stays where it
 * is until netask_memo_free: a connection allowed by it keeps pointing at it. */
struct netask_memo {
	struct netrule **rules;    /* allowed entries: once (for the requests waiting then, or a
				    * lookup's for a while), session and always */
	long long *expires;        /* per rule, on the caller's clock; 0: for the session */
	size_t n;
	struct strv denied;        /* entries denied for the session */
};

void netask_memo_free(struct netask_memo *m);
/* Allow entry until expires (0: the session; a time past already: for the requests waiting
 * now only, which the caller gives the rule). The rule, or NULL when entry is not an
 * allow_domains entry. An entry allowed is no longer denied. */
const struct netrule *netask_memo_allow(struct netask_memo *m, const char *entry,
					long long expires);
/* Deny entry for the session (what allowed it before no longer does). */
void netask_memo_deny(struct netask_memo *m, const char *entry);
/* After the rules said no (not on the list, or not at that port): NV_ALLOW with d->rule the
 * answer's entry; NV_DENY_LISTED when the entry was denied when asked; else NV_NOT_ALLOWED
 * (ask). */
enum net_verdict netask_memo_check(const struct netask_memo *m, const char *host, uint16_t port,
				   long long now, struct net_decision *d);

/* The question's entry and whether an answer to `q` also answers a request for host:port: the
 * same entry (a lookup and the default ports share one). */
bool netask_same(const struct net_question *q, const char *host, uint16_t port);

/* The reason a request ends with, for its event and the client's 403: "evil.example:443 was
 * denied when asked (the terminal)", "… no answer within 60 s", "… allowed once (agentjail net
 * allow)". port 0: a lookup. by: who answered. Allocated. */
char *netask_reason(const char *host, uint16_t port, enum ask_answer a, bool timed_out,
		    const char *by, int timeout_s);
