/* dnsmsg: the DNS stub's message parser and answer builder (RFC 1035). Pure. Nothing from the
 * jail is forwarded: the stub answers from what the host resolver said, or NXDOMAIN. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DNS_UDP_MAX 512     /* answers over UDP fit here or are truncated (TC) */
#define DNS_TCP_MAX 65535

enum { DNS_NOERROR = 0, DNS_FORMERR = 1, DNS_SERVFAIL = 2, DNS_NXDOMAIN = 3, DNS_NOTIMP = 4,
       DNS_REFUSED = 5 };
enum { DNS_T_A = 1, DNS_T_CNAME = 5, DNS_T_AAAA = 28, DNS_T_ANY = 255, DNS_C_IN = 1 };

struct dns_query {
	uint16_t id;
	bool rd;
	uint8_t opcode;
	char name[256];     /* dotted, as sent (case kept), no trailing dot; "" for the root */
	uint16_t qtype, qclass;
	size_t question_end;/* offset just past the (first and only) question; 0: none read */
	const char *why;    /* when dns_parse_query returns 1 or -1: what is malformed, a static
			     * string ("not exactly one question", "a DNS response, not a query") */
};

/* 0 and q filled for a query with exactly one question (no compression pointers needed);
 * 1 when the header is readable but the rest is not (q->id set: answer FORMERR, or NOTIMP
 * when q->opcode is not 0, a standard query); -1 when not even a header (drop it). Responses
 * (QR=1) are -1. For 1 and -1, q->why says what is wrong. Strict: QDCOUNT 1, ANCOUNT and NSCOUNT 0, labels of letters, digits, '-'
 * and '_' only (else 1). The additional section (EDNS OPT) is not read, and answers carry
 * no OPT: clients then keep to 512-byte UDP answers. */
int dns_parse_query(const uint8_t *buf, size_t len, struct dns_query *q);

struct dns_answer { int family; uint8_t addr[16]; }; /* AF_INET (4 bytes) or AF_INET6 */

/* A response to q with rcode and, for NOERROR, the answers of q's type (A: the AF_INET ones,
 * AAAA: the AF_INET6 ones), name compressed to the question, TTL ttl. When they do not fit
 * in cap, as many as fit and TC set. RA set, id, opcode, RD and the question copied (none
 * when q->question_end is 0). Returns the length, or -1 if not even the header and question
 * fit. */
ssize_t dns_build_response(const struct dns_query *q, int rcode, const struct dns_answer *ans,
			   size_t n, uint32_t ttl, uint8_t *out, size_t cap);
