#include "core/plan/netevent.h"

const char *net_proto_name(enum net_proto p)
{
	switch (p) {
	case NP_CONNECT:
		return "connect";
	case NP_HTTP:
		return "http";
	case NP_SOCKS:
		return "socks";
	case NP_DNS:
		return "dns";
	}
	return "?";
}
