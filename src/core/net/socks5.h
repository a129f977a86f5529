/* socks5: the proxy's SOCKS5 parser (RFC 1928, no authentication, CONNECT only). Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum socks_parse { SP_NEED_MORE = 0, SP_OK = 1, SP_BAD = -1 };

/* "VER=5 NMETHODS METHODS…". *used = its length; *noauth: method 0 was offered. */
int socks5_parse_greeting(const uint8_t *buf, size_t len, size_t *used, bool *noauth);

struct socks5_req {
	uint8_t cmd;          /* 1 CONNECT (2 BIND, 3 UDP ASSOCIATE are refused with reply 7) */
	char host[256];       /* a domain as sent (ATYP 3), or the IPv4/IPv6 text (ATYP 1/4) */
	bool is_ip;
	uint16_t port;
	size_t used;          /* bytes of the request */
	uint8_t bad_rep;      /* SP_BAD: the reply code to send (7 unknown command, 8 unknown
			       * address type, 1 anything else) */
};
/* "VER=5 CMD RSV ATYP ADDR PORT". SP_OK for CMD 1, 2 and 3 (the caller refuses 2 and 3);
 * SP_BAD for anything else, RSV not 0, an empty domain or one with a NUL, space or control
 * byte, port 0. A wrong byte is refused as soon as it arrives. */
int socks5_parse_request(const uint8_t *buf, size_t len, struct socks5_req *out);

/* The reply with code rep (0 success, 2 not allowed by ruleset, 4 host unreachable, 5
 * refused, 7 command not supported, 8 address type not supported, 1 general failure) and a
 * bound address of 0.0.0.0:0. Returns its length (10). */
size_t socks5_reply(uint8_t rep, uint8_t out[10]);
