/* netrun: `--net allow` on the command side (doc/design.md §4). */
#include "cmd/netrun.h"

#include <errno.h>
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
	if (proxy_start(&l, &nr->rules, netsink_fn, nr->sink, &nr->proxy, e) < 0) {
		nr->proxy = NULL;
		tlshelper_reap(&nr->helper);
		err_wrap(e, "--net allow: the proxy could not start");
		return -1;
	}
	return 0;
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
	netsink_free(nr->sink);
	if (nr->rules_built)
		netrules_free(&nr->rules);
	memset(nr, 0, sizeof *nr);
}
