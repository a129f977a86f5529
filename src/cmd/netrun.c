/* netrun: `--net allow` on the command side (doc/design.md §4). */
#include "cmd/netrun.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#include "cmd/cmd.h"
#include "cmd/netsink.h"
#include "cmd/secrun.h"

static void close_fds(int tcp4, int tcp6, int dns_udp, int dns_tcp)
{
	const int fds[] = {tcp4, tcp6, dns_udp, dns_tcp};
	for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
		if (fds[i] >= 0)
			(void)close(fds[i]);
}

int netrun_ready(struct netrun *nr, int tcp4, int tcp6, int dns_udp, int dns_tcp, struct err *e)
{
	if (nr->proxy) { /* one jail, one proxy */
		close_fds(tcp4, tcp6, dns_udp, dns_tcp);
		return err_set(e, EBUSY, NULL, "--net allow: the proxy is already running");
	}
	if (!nr->rules_built) {
		if (netrules_build(&nr->pol->allow_domains, &nr->pol->deny_domains,
				   &nr->pol->map_hosts, &nr->rules, e) < 0) {
			close_fds(tcp4, tcp6, dns_udp, dns_tcp);
			err_wrap(e, "--net allow: the rules");
			return -1;
		}
		nr->rules_built = true;
	}
	if (!nr->sink)
		nr->sink = netsink_new(nr->rec ? nr->rec->st : NULL, nr->rec ? nr->rec->id : NULL,
				       0);
	struct proxy_listeners l = {.tcp4 = tcp4, .tcp6 = tcp6, .dns_udp = dns_udp,
				    .dns_tcp = dns_tcp, .inspect_fd = -1};
	if (nr->sr && nr->sr->helper) { /* doc/design.md §4d: before the proxy hands it tunnels */
		if (tlshelper_start(&nr->sr->cfg, nr->sr->ssh_listen, environ, &nr->helper, e) < 0) {
			im_config_free(&nr->sr->cfg); /* the values: no longer needed anywhere */
			close_fds(tcp4, tcp6, dns_udp, dns_tcp);
			err_wrap(e, "--net allow: the TLS inspector could not start (nothing is "
				    "passed unread instead)");
			return -1;
		}
		im_config_free(&nr->sr->cfg);
		nr->rules.inspect = &nr->sr->in;
		l.inspect_fd = nr->helper.ctl;
		nr->helper.ctl = -1; /* the proxy's now */
	}
	if (proxy_start(&l, &nr->rules, nr->ask, netsink_fn, nr->sink, &nr->proxy, e) < 0) {
		nr->proxy = NULL;
		tlshelper_reap(&nr->helper);
		err_wrap(e, "--net allow: the proxy could not start");
		return -1;
	}
	return 0;
}

int netrun_publish_listen(struct netrun *nr, struct err *e)
{
	if (!nr->pol->publish.n)
		return 0;
	if (publish_list(&nr->pol->publish, &nr->pub, &nr->n_pub, e) < 0)
		return -1;
	for (size_t i = 0; i < PUBLISH_MAX; i++)
		nr->pub_fds[i] = -1;
	return proxy_publish_listen(nr->pub, nr->n_pub, nr->pub_fds, e);
}

int netrun_publish(struct netrun *nr, int chan, struct err *e)
{
	/* --net off: the proxy serves the published ports only (no rules, no resolver) */
	if (!nr->proxy && netrun_ready(nr, -1, -1, -1, -1, e) < 0) {
		(void)close(chan);
		return -1;
	}
	int rc = proxy_publish(nr->proxy, nr->pub, nr->pub_fds, nr->n_pub, chan, e);
	for (size_t i = 0; i < nr->n_pub; i++)
		nr->pub_fds[i] = -1; /* the proxy's now, whatever happened */
	if (rc < 0)
		err_wrap(e, "--publish");
	return rc;
}

void netrun_publish_banner(const struct netrun *nr)
{
	for (size_t i = 0; i < nr->n_pub; i++)
		cmd_warn("publish: the jail's port %u is on http://127.0.0.1:%u (this host only)",
			 (unsigned)nr->pub[i].port, (unsigned)nr->pub[i].host_port);
}

void netrun_capture(struct netrun *nr, int listener, int chan)
{
	struct err e = {0};
	if (!nr->proxy) {
		(void)close(listener);
		(void)close(chan);
		err_set(&e, 0, NULL, "the proxy is not running");
	} else if (proxy_capture(nr->proxy, listener, chan, &e) == 0) {
		return;
	}
	err_wrap(&e, "--net allow: direct connections cannot be captured (they fail)");
	cmd_print_err(&e);
}

void netrun_stop_begin(struct netrun *nr)
{
	proxy_stop_begin(nr->proxy);
}

void netrun_stop(struct netrun *nr)
{
	if (!nr->proxy)
		return;
	proxy_stop(nr->proxy, &nr->stats);
	nr->proxy = NULL;
	tlshelper_reap(&nr->helper);
	netsink_report(nr->sink);
	if (nr->stats.events_dropped)
		cmd_warn("the proxy's event queue overflowed: %llu decisions were not recorded",
			 (unsigned long long)nr->stats.events_dropped);
}

void netrun_free(struct netrun *nr)
{
	netrun_stop(nr);
	for (size_t i = 0; i < nr->n_pub; i++)
		if (nr->pub_fds[i] >= 0)
			(void)close(nr->pub_fds[i]); /* never handed to the proxy */
	free(nr->pub);
	netsink_free(nr->sink);
	if (nr->rules_built)
		netrules_free(&nr->rules);
	memset(nr, 0, sizeof *nr);
}
