/* Fuzz target: the DNS stub's query parser and response builder (doc/design.md §4). The jail
 * writes these bytes. Invariants: no read past len; a parsed query's name fits the limits; a
 * response built for it (answers, rcode, TTL and room chosen by the input) reads back as a
 * response with the same id, opcode, RD, RA set, the question byte for byte, answers of the
 * question's type pointing at its name, and TC exactly when answers were left out; a query
 * whose question was not read gets a header-only answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/net/dnsmsg.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static int parse_copy(const uint8_t *d, size_t n, struct dns_query *q)
{
	uint8_t *p = fuzz_dup(d, n);
	int rc = dns_parse_query(p, n, q);
	free(p);
	return rc;
}

/* The response r (len bytes) to query q, which came from the bytes d. */
static void check_response(const struct dns_query *q, const uint8_t *d, const uint8_t *r,
			   size_t len, int rcode, size_t want_answers)
{
	FUZZ_CHECK(len >= 12 && get16(r) == q->id);
	FUZZ_CHECK((r[2] & 0x80) && ((r[2] >> 3) & 0xf) == q->opcode && (r[2] & 1) == q->rd);
	FUZZ_CHECK((r[3] & 0x80) && (r[3] & 0xf) == rcode && !(r[3] & 0x70));
	FUZZ_CHECK(get16(r + 8) == 0 && get16(r + 10) == 0);
	if (!q->question_end) {
		FUZZ_CHECK(len == 12 && get16(r + 4) == 0 && get16(r + 6) == 0);
		return;
	}
	size_t qe = q->question_end;
	FUZZ_CHECK(get16(r + 4) == 1 && len >= qe && memcmp(r + 12, d + 12, qe - 12) == 0);
	/* the question read back as a query is the same question */
	uint8_t *back = fuzz_dup(r, qe);
	back[2] &= 0x7f;
	back[6] = back[7] = 0;
	struct dns_query q2;
	FUZZ_CHECK(dns_parse_query(back, qe, &q2) == 0);
	FUZZ_CHECK(q2.id == q->id && strcmp(q2.name, q->name) == 0 && q2.qtype == q->qtype &&
	      q2.qclass == q->qclass && q2.question_end == qe);
	free(back);
	size_t an = get16(r + 6), o = qe;
	FUZZ_CHECK(an <= want_answers && ((r[2] & 0x02) != 0) == (an < want_answers));
	for (size_t i = 0; i < an; i++) {
		FUZZ_CHECK(o + 12 <= len && get16(r + o) == 0xC00C && get16(r + o + 2) == q->qtype &&
		      get16(r + o + 4) == DNS_C_IN);
		size_t rl = get16(r + o + 10);
		FUZZ_CHECK(rl == (q->qtype == DNS_T_A ? 4u : 16u) && o + 12 + rl <= len);
		o += 12 + rl;
	}
	FUZZ_CHECK(o == len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query q;
	int rc = parse_copy(data, size, &q);
	FUZZ_CHECK(rc == 0 || rc == 1 || rc == -1);
	if (rc < 0) {
		FUZZ_CHECK(size < 12 || (data[2] & 0x80));
		return 0;
	}
	FUZZ_CHECK(q.id == get16(data));
	static uint8_t out[DNS_TCP_MAX];
	if (rc == 1) {
		FUZZ_CHECK(q.question_end == 0);
		ssize_t n = dns_build_response(&q, q.opcode ? DNS_NOTIMP : DNS_FORMERR, NULL, 0, 0,
					       out, DNS_UDP_MAX);
		FUZZ_CHECK(n == 12);
		check_response(&q, data, out, 12, q.opcode ? DNS_NOTIMP : DNS_FORMERR, 0);
		return 0;
	}
	FUZZ_CHECK(q.question_end >= 17 && q.question_end <= size && strlen(q.name) <= 253);
	FUZZ_CHECK(q.opcode == 0);
	struct dns_query cut;
	FUZZ_CHECK(parse_copy(data, q.question_end - 1, &cut) == 1 && cut.id == q.id);

	/* answers, rcode, TTL and room from the bytes after the question */
	const uint8_t *t = data + q.question_end;
	size_t tn = size - q.question_end;
	static const int rcodes[] = {DNS_NOERROR, DNS_NOERROR, DNS_NXDOMAIN, DNS_REFUSED,
				     DNS_SERVFAIL, DNS_NOTIMP, DNS_FORMERR, DNS_NOERROR};
	int rcode = tn ? rcodes[t[0] % 8] : DNS_NOERROR;
	size_t cap = tn > 1 ? 12 + (size_t)t[1] * 4 : DNS_UDP_MAX;
	struct dns_answer ans[64];
	size_t n = 0, want = 0;
	for (size_t i = 2; i + 1 < tn && n < 64; i += 2, n++) {
		ans[n].family = t[i] & 1 ? AF_INET6 : AF_INET;
		memset(ans[n].addr, t[i + 1], sizeof ans[n].addr);
		if (ans[n].family == (q.qtype == DNS_T_AAAA ? AF_INET6 : AF_INET))
			want++;
	}
	if (rcode != DNS_NOERROR || q.qclass != DNS_C_IN ||
	    (q.qtype != DNS_T_A && q.qtype != DNS_T_AAAA))
		want = 0;
	ssize_t len = dns_build_response(&q, rcode, ans, n, 300, out, cap);
	if (cap < q.question_end) {
		FUZZ_CHECK(len == -1);
		return 0;
	}
	FUZZ_CHECK(len >= 0 && (size_t)len <= cap);
	check_response(&q, data, out, (size_t)len, rcode, want);
	return 0;
}
