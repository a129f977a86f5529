/* connreply: the client side of one HTTP CONNECT through the jail's proxy, as
 * `agentjail-init __connect HOST PORT` (ssh's ProxyCommand inside a jail) speaks it. Pure. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define CONNECT_REPLY_MAX 8192  /* a longer reply head is refused */

/* "CONNECT HOST:PORT HTTP/1.1\r\nHost: HOST:PORT\r\n\r\n" (an IPv6 literal in brackets).
 * NULL when HOST is empty, longer than 253 or holds a character outside letters, digits,
 * '-', '.', '_', ':' (an IPv6 literal) or a bracket pair around it. Allocated. */
char *connect_request(const char *host, uint16_t port, size_t *len);

struct connect_reply {
	int status;         /* the status code: 200 means the tunnel is open */
	char reason[256];   /* X-Proxy-Error's value, else the status line's text; control
			     * characters replaced by '?' (it is printed to a terminal) */
	size_t head_len;    /* bytes of the head, through the empty line; what follows is
			     * already tunnel data */
};

enum { CR_NEED_MORE = 0, CR_OK = 1, CR_BAD = -1, CR_TOO_BIG = -2 };
/* Parse the reply head at the start of buf. */
int connect_reply_parse(const char *buf, size_t len, struct connect_reply *r);
