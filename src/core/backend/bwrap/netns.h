/* netns: the namespace holder of `--net allow` (doc/design.md §2, §4). In the child that is
 * about to exec bwrap, a user + network namespace of its own (the caller's ids mapped to
 * themselves), `lo` up, and the proxy's listeners opened inside it and handed to the agentjail
 * process over a socketpair (SCM_RIGHTS); bwrap then runs in that namespace (--share-net). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "core/backend/bwrap/nschild.h"
#include "util/err.h"

/* The listeners opened inside the namespace (-1: absent; only tcp6 may be, when the namespace
 * has no ::1). */
struct netns_listeners {
	int tcp4;     /* 127.0.0.1:3128, listening */
	int tcp6;     /* [::1]:3128, listening, IPV6_V6ONLY */
	int dns_udp;  /* 127.0.0.1:53, bound */
	int dns_tcp;  /* 127.0.0.1:53, listening */
};
#define NETNS_LISTENERS_NONE ((struct netns_listeners){-1, -1, -1, -1})
void netns_listeners_close(struct netns_listeners *l);

/* What the holder needs, prepared before the fork: the child then only makes system calls
 * and touches its own stack (launch.c's child may be a vfork child). */
struct netns_holder {
	int sock;              /* the child's end of the hand-over socketpair */
	uid_t uid;
	gid_t gid;
	struct nsc_inject inject; /* test builds: fail this step with EPERM
				   * (AGENTJAIL_TEST_NETNS_FAIL) */
};

/* The socketpair: h gets the child's end, *parent_end ours (both close-on-exec). */
int netns_prepare(struct netns_holder *h, int *parent_end, struct err *e) WUR;

/* In the child, before exec: make itself dumpable (needed to write its own maps; set back at
 * once, since a vfork child shares the parent's mm), unshare user + net, deny setgroups, map
 * uid and gid to themselves, bring lo up, open the listeners, send them, close them. 0, or -1
 * after sending the failed step and its errno instead. Async-signal-safe. */
int netns_enter(const struct netns_holder *h);

/* In the parent: wait at most timeout_ms for the holder's message. 0 with l filled, or -1 with
 * e naming the step that failed, why, and the fix. */
int netns_receive(int sock, int timeout_ms, struct netns_listeners *l, struct err *e) WUR;

/* doctor: can the namespace be built here? A forked child does every step; 0, or -1 with e. */
int netns_probe(struct err *e) WUR;
