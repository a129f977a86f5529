/* socks5: the proxy's SOCKS5 parser (RFC 1928: no authentication, CONNECT). Pure: no
 * syscalls. Limits in doc/design.md §4. */
#include "core/net/socks5.h"

#include <arpa/inet.h>
#include <string.h>

int socks5_parse_greeting(const uint8_t *buf, size_t len, size_t *used, bool *noauth)
{
	*used = 0;
	*noauth = false;
	if (len < 1)
		return SP_NEED_MORE;
	if (buf[0] != 5)
		return SP_BAD;
	if (len < 2)
		return SP_NEED_MORE;
	size_t n = buf[1];
	if (n == 0)
		return SP_BAD;
	if (len < 2 + n)
		return SP_NEED_MORE;
	for (size_t i = 0; i < n; i++)
		if (buf[2 + i] == 0)
			*noauth = true;
	*used = 2 + n;
	return SP_OK;
}

static int req_bad(struct socks5_req *out, uint8_t rep)
{
	out->bad_rep = rep;
	out->host[0] = '\0';
	out->used = 0;
	return SP_BAD;
}

int socks5_parse_request(const uint8_t *buf, size_t len, struct socks5_req *out)
{
	memset(out, 0, sizeof *out);
	if (len >= 1 && buf[0] != 5)
		return req_bad(out, 1);
	if (len >= 2 && (buf[1] < 1 || buf[1] > 3))
		return req_bad(out, 7);
	if (len >= 3 && buf[2] != 0)
		return req_bad(out, 1);
	if (len < 5)
		return SP_NEED_MORE;
	size_t alen, aoff = 4;
	switch (buf[3]) {
	case 1: alen = 4; break;
	case 4: alen = 16; break;
	case 3:
		alen = buf[4];
		aoff = 5;
		if (alen == 0)
			return req_bad(out, 1);
		break;
	default: return req_bad(out, 8);
	}
	/* a domain is refused as soon as a byte of it is wrong */
	for (size_t i = 0; buf[3] == 3 && i < alen && aoff + i < len; i++) {
		uint8_t c = buf[aoff + i];
		if (c <= 0x20 || c == 0x7f)
			return req_bad(out, 1);
	}
	if (len < aoff + alen + 2)
		return SP_NEED_MORE;
	const uint8_t *a = buf + aoff;
	uint16_t port = (uint16_t)(buf[aoff + alen] << 8 | buf[aoff + alen + 1]);
	if (port == 0)
		return req_bad(out, 1);
	if (buf[3] == 3) {
		memcpy(out->host, a, alen);
		out->host[alen] = '\0';
	} else {
		if (!inet_ntop(buf[3] == 1 ? AF_INET : AF_INET6, a, out->host, sizeof out->host))
			return req_bad(out, 1);
		out->is_ip = true;
	}
	out->cmd = buf[1];
	out->port = port;
	out->used = aoff + alen + 2;
	return SP_OK;
}

size_t socks5_reply(uint8_t rep, uint8_t out[10])
{
	static const uint8_t tail[] = {0, 1, 0, 0, 0, 0, 0, 0}; /* RSV, IPv4, 0.0.0.0, port 0 */
	out[0] = 5;
	out[1] = rep;
	memcpy(out + 2, tail, sizeof tail);
	return 10;
}
