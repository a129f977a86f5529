/* netrun: `--net allow` on the command side (doc/design.md §4) — the rules built from the
 * policy and the proxy started on the listeners a backend hands up (the bwrap jail's namespace
 * holder, the Landlock backend's loopback listener: struct backend_io's net_ready), its
 * decisions going to the session store through cmd/netsink. */
#pragma once
#include <stdbool.h>

#include "core/jail/tlshelper.h"
#include "core/net/proxy.h"
#include "core/plan/netrules.h"
#include "core/plan/policy.h"
#include "core/plan/publish.h"
#include "util/err.h"

struct sess_rec;
struct netsink;
struct secrun;

struct netrun {
	const struct policy *pol;   /* set by the caller: the rules come from its lists */
	struct publish *pub;        /* --publish: the entries (netrun_publish_listen) */
	size_t n_pub;
	int pub_fds[PUBLISH_MAX];   /* … their host listeners, until the proxy takes them */
	struct sess_rec *rec;       /* set by the caller: the run's record, or NULL */
	const struct proxy_ask *ask; /* set by the caller: --net ask (cmd/netask.h), or NULL */
	struct netrules rules;
	bool rules_built;
	struct netsink *sink;       /* where the proxy's events go (cmd/netsink.h) */
	struct proxy *proxy;        /* running between netrun_ready and netrun_stop */
	struct proxy_stats stats;   /* filled by netrun_stop */
	struct secrun *sr;          /* set by the caller: the run's secrets and agents (§4d), or
				     * NULL; with sr->helper, agentjail-tls starts with the proxy */
	struct tlshelper helper;
};

/* The body of launch's net_ready hook (called once the session is recorded, before the
 * command may start): build the rules, start the proxy on the listeners (owned from here on).
 * -1 with e: the launch stops (exit 125). */
int netrun_ready(struct netrun *nr, int tcp4, int tcp6, int dns_udp, int dns_tcp, struct err *e)
	WUR;
/* --publish, before the jail is started: the host's listeners (127.0.0.1:HOSTPORT). -1 with e
 * (exit 2: the port is in use, or below 1024 for a user); 0 with nothing to do without
 * --publish. */
int netrun_publish_listen(struct netrun *nr, struct err *e) WUR;
/* The body of launch's publish hook: serve the listeners through the jail's init (chan, owned
 * from here on); under --net off the proxy starts for them alone. -1 with e: exit 125. */
int netrun_publish(struct netrun *nr, int chan, struct err *e) WUR;
/* One line per published port, for the start of the run. */
void netrun_publish_banner(const struct netrun *nr);
/* The body of launch's net_capture hook: the proxy serves the capture's listener and init's
 * channel (owned from here on). A failure is said on stderr: the jail's direct connections then fail, nothing
 * else changes. */
void netrun_capture(struct netrun *nr, int listener, int chan);
/* After the run and before the session is marked ended: stop the proxy (its last events are
 * written, and agentjail-tls's), reap agentjail-tls, then say what was denied. Nothing when the proxy never started. */
void netrun_stop(struct netrun *nr);
/* The jail is gone: the proxy begins to stop on its own threads (proxy_stop_begin), so that
 * overlaps the checks after the run; netrun_stop then waits for it. */
void netrun_stop_begin(struct netrun *nr);
void netrun_free(struct netrun *nr);
