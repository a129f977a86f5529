/* Fuzz target: the proxy's SOCKS5 parser (doc/design.md §4). The input is a client's stream:
 * a greeting, then a request right after it. Invariants: no read past len; an OK parse uses
 * no more than it was given and every shorter prefix is NEED_MORE; a domain is the bytes sent
 * (no NUL, space or control, not empty); an IP is the canonical text of the bytes sent; port
 * is never 0; a refused request says which reply to send (1, 7 or 8). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/net/socks5.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int req_copy(const uint8_t *d, size_t n, struct socks5_req *r)
{
	uint8_t *p = fuzz_dup(d, n);
	int rc = socks5_parse_request(p, n, r);
	free(p);
	return rc;
}

static void check_request(const uint8_t *d, size_t n)
{
	struct socks5_req r;
	int rc = req_copy(d, n, &r);
	FUZZ_CHECK(rc == SP_OK || rc == SP_NEED_MORE || rc == SP_BAD);
	if (rc == SP_BAD)
		FUZZ_CHECK(r.bad_rep == 1 || r.bad_rep == 7 || r.bad_rep == 8);
	if (rc != SP_OK) {
		FUZZ_CHECK(r.used == 0);
		return;
	}
	FUZZ_CHECK(r.used >= 8 && r.used <= n && r.port != 0 && r.cmd >= 1 && r.cmd <= 3);
	FUZZ_CHECK(d[0] == 5 && d[2] == 0);
	size_t hl = strnlen(r.host, sizeof r.host);
	FUZZ_CHECK(hl > 0 && hl < sizeof r.host);
	if (d[3] == 3) {
		FUZZ_CHECK(!r.is_ip && hl == d[4] && memcmp(r.host, d + 5, hl) == 0);
		for (size_t i = 0; i < hl; i++)
			FUZZ_CHECK((unsigned char)r.host[i] > 0x20 && r.host[i] != 0x7f);
	} else {
		uint8_t bin[16];
		FUZZ_CHECK(r.is_ip && (d[3] == 1 || d[3] == 4));
		FUZZ_CHECK(inet_pton(d[3] == 1 ? AF_INET : AF_INET6, r.host, bin) == 1);
		FUZZ_CHECK(memcmp(bin, d + 4, d[3] == 1 ? 4 : 16) == 0);
	}
	FUZZ_CHECK(r.port == (d[r.used - 2] << 8 | d[r.used - 1]));
	for (size_t i = 0; i < r.used; i++) {
		struct socks5_req p;
		FUZZ_CHECK(req_copy(d, i, &p) == SP_NEED_MORE);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = fuzz_dup(data, size);
	size_t used = 99;
	bool noauth = true;
	int rc = socks5_parse_greeting(p, size, &used, &noauth);
	free(p);
	FUZZ_CHECK(rc == SP_OK || rc == SP_NEED_MORE || rc == SP_BAD);
	if (rc == SP_OK) {
		FUZZ_CHECK(used >= 3 && used <= size && used == 2u + data[1]);
		FUZZ_CHECK(noauth == (memchr(data + 2, 0, used - 2) != NULL));
		check_request(data + used, size - used);
	} else {
		FUZZ_CHECK(used == 0 && !noauth);
	}
	check_request(data, size);
	uint8_t out[10];
	FUZZ_CHECK(socks5_reply(size ? data[0] : 0, out) == 10 && out[0] == 5 && out[2] == 0);
	return 0;
}
