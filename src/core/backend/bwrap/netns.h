/* netns: the namespace holder of `--net allow` (doc/design.md §2, §4). A child of agentjail's
 * makes a user + network namespace of its own (the caller's ids mapped to themselves), brings
 * `lo` up, opens the proxy's listeners inside it and hands them and the namespaces to the
 * agentjail process over a socketpair (SCM_RIGHTS); the child that execs bwrap joins them, and
 * bwrap runs in that network namespace (--share-net). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

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

/* The holder, started ahead (doc/design.md §4, §7): a child forked as soon as a run is known
 * to need the namespace (struct backend's ahead), so the namespace is built on another CPU
 * while agentjail plans the jail. It makes the user + network namespace, brings lo up, opens
 * the listeners in it, sends them and the two namespaces (as fds) over a socketpair and exits;
 * the child that execs bwrap joins those namespaces (netns_join). */
struct netns_ahead {
	pid_t pid; /* the holder until it is reaped, or -1 */
	int sock;  /* our end of its report, or -1 */
};
#define NETNS_AHEAD_NONE ((struct netns_ahead){-1, -1})

/* The namespaces the holder made, for the child that execs bwrap (-1: absent). */
struct netns_fds {
	int userns; /* the holder's user namespace (/proc/self/ns/user) */
	int netns;  /* its network namespace */
};
#define NETNS_FDS_NONE ((struct netns_fds){-1, -1})
void netns_fds_close(struct netns_fds *f);

/* Fork the holder. 0 with *a filled, or -1 with e (nothing started). */
int netns_spawn(struct netns_ahead *a, struct err *e) WUR;
/* The same with the step whose name starts with fail_step made to fail with EPERM (tests;
 * NULL: none). */
int netns_spawn_failing(struct netns_ahead *a, const char *fail_step, struct err *e) WUR;

/* Wait at most timeout_ms for the holder's report: 0 with the listeners and the namespaces
 * (close-on-exec, ours), or -1 with e naming the step that failed, why, and the fix. The holder
 * is reaped by netns_ahead_free. */
int netns_take(struct netns_ahead *a, int timeout_ms, struct netns_listeners *l,
	       struct netns_fds *ns, struct err *e) WUR;

/* The holder gone (killed if it is still there, reaped) and our end closed; *a is NONE. */
void netns_ahead_free(struct netns_ahead *a);

/* In the child that is about to exec bwrap (a vfork child: system calls only): join the
 * holder's user namespace, then its network namespace. 0, or -1 with errno. */
int netns_join(const struct netns_fds *ns);

/* doctor: can the namespace be built here? A holder does every step; 0, or -1 with e. */
int netns_probe(struct err *e) WUR;
