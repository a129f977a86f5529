/* pubwire: the messages of the publish channel between agentjail's proxy and the jail's init
 * (--publish, doc/design.md §4 "Dev servers"). The channel is a SOCK_SEQPACKET socketpair that
 * launch hands init (core/jail/ctl.h CTL_PUBLISH) before the command starts; one message a
 * packet (util/fdmsg.h), answered in the order asked. Init is in the jail's network namespace,
 * which the host cannot enter: for each connection accepted on a published host port, the
 * proxy asks init for a socket connecting to the jail's loopback there, and relays. */
#pragma once
#include <stdint.h>

enum pubwire_type {
	PUB_CONNECT = 1, /* proxy → init: value = the jail port, | PUB_V6 for ::1 (else
			  * 127.0.0.1) */
	PUB_SOCKET,      /* init → proxy, the socket attached: created in the jail's namespace,
			  * connecting (non-blocking): the proxy waits for the connect's end */
	PUB_REFUSED,     /* init → proxy: value = the errno; EPERM for a port init was not given
			  * with --publish: it connects to no other */
};
#define PUB_V6 0x10000

struct pubwire_msg {
	uint32_t type;
	int32_t value;
};
