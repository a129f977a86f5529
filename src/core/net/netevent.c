/* netevent: the names of the proxy's protocols (see netevent.h). */
#include "core/net/netevent.h"

#include <string.h>

static const char *const proto_names[] = {
	[NP_CONNECT] = "connect",
	[NP_HTTP] = "http",
	[NP_SOCKS] = "socks",
	[NP_DNS] = "dns",
	[NP_TCP] = "tcp",
	[NP_PUBLISH] = "publish",
	[NP_HTTPS] = "https",
	[NP_SSH_AGENT] = "ssh-agent",
};

const char *net_proto_name(enum net_proto p)
{
	return (unsigned)p < sizeof proto_names / sizeof *proto_names ? proto_names[p] : "?";
}

int net_proto_parse(const char *s, enum net_proto *out)
{
	for (size_t i = 0; i < sizeof proto_names / sizeof *proto_names; i++) {
		if (s && !strcmp(s, proto_names[i])) {
			*out = (enum net_proto)i;
			return 0;
		}
	}
	return -1;
}

bool net_event_malformed(const struct net_event *ev)
{
	return ev->proto == NP_DNS && ev->host[0] == '\0';
}
