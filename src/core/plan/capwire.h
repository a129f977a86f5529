/* capwire: the messages on the capture's channel between agentjail's proxy and the jail's init
 * (doc/design.md §4, capture). The capture never lets a connect() of the jail go on by itself
 * (the address and the descriptor could be changed under it): agentjail carries each one out on
 * the very socket it inspected. A Unix socket's path means something only in the jail's mount
 * namespace, so those are sent to init, which connects the socket (passed with the request,
 * SCM_RIGHTS) to the address read once, and answers. One request per SOCK_SEQPACKET message. */
#pragma once
#include <stdint.h>

#define CAPWIRE_ADDR_MAX 128 /* sizeof(struct sockaddr_storage): what connect() takes */

struct capwire_req {
	uint64_t id;                     /* the proxy's, echoed in the answer */
	int32_t tid;                     /* the caller, in the jail's pid namespace (0: unknown):
					  * a relative path is resolved in its working directory */
	uint32_t len;                    /* of addr */
	uint8_t addr[CAPWIRE_ADDR_MAX];  /* the sockaddr as the caller gave it */
};

struct capwire_res {
	uint64_t id;
	int32_t err;                     /* 0, or the errno connect() gave */
	int32_t pad;
};
