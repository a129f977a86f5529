/* dnsmsg: the DNS stub's query parser and response builder (RFC 1035). Pure: no syscalls.
 * Limits in doc/design.md §4. */
#include "core/net/dnsmsg.h"

#include <string.h>
#include <sys/socket.h>

#define DNS_HDR 12
#define DNS_NAME_MAX 255 /* wire length of a name, length bytes and the root included */

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Letters, digits, '-' and '_': a host name's labels (and SRV-style "_tcp"). Anything else
 * (a '.' inside a label, a NUL, a control, a byte over 0x7f) is a malformed query here. */
static bool label_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/* The question's name at buf+off into the dotted text; *end past it. NULL, or why it is
 * malformed. */
static const char *read_name(const uint8_t *buf, size_t len, size_t off, char name[256],
			     size_t *end)
{
	size_t wire = 0, out = 0;
	for (;;) {
		if (off >= len)
			return "the question is cut short";
		uint8_t n = buf[off++];
		wire += 1u + n;
		if (wire > DNS_NAME_MAX)
			return "a name longer than 255 bytes";
		if (n == 0)
			break;
		if (n > 63) /* 0xC0 a compression pointer, 0x40/0x80 reserved: none in a question */
			return (n & 0xc0) == 0xc0 ? "a compression pointer in the question"
						  : "a label longer than 63 bytes";
		if (off + n > len)
			return "the question is cut short";
		if (out)
			name[out++] = '.';
		for (size_t i = 0; i < n; i++) {
			if (!label_char(buf[off + i]))
				return "a name with a byte other than a letter, digit, '-' or '_'";
			name[out++] = (char)buf[off + i];
		}
		off += n;
	}
	name[out] = '\0';
	*end = off;
	return NULL;
}

int dns_parse_query(const uint8_t *buf, size_t len, struct dns_query *q)
{
	memset(q, 0, sizeof *q);
	if (len < DNS_HDR) {
		q->why = "shorter than a DNS header";
		return -1;
	}
	if (buf[2] & 0x80) { /* QR: a response, never answered */
		q->why = "a DNS response, not a query";
		return -1;
	}
	q->id = get16(buf);
	q->opcode = (buf[2] >> 3) & 0xf;
	q->rd = buf[2] & 1;
	if (q->opcode != 0) {
		q->why = "not a standard query (opcode is not 0)";
		return 1;
	}
	if (get16(buf + 4) != 1) {
		q->why = "not exactly one question";
		return 1;
	}
	if (get16(buf + 6) != 0 || get16(buf + 8) != 0) {
		q->why = "answer or authority records in a query";
		return 1;
	}
	size_t end = 0;
	q->why = read_name(buf, len, DNS_HDR, q->name, &end);
	if (!q->why && end + 4 > len)
		q->why = "the question is cut short";
	if (q->why) {
		q->name[0] = '\0';
		return 1;
	}
	q->qtype = get16(buf + end);
	q->qclass = get16(buf + end + 2);
	q->question_end = end + 4;
	return 0;
}

/* q->name back to wire form at out (room checked by the caller: strlen + 2). */
static size_t write_name(const char *name, uint8_t *out)
{
	size_t o = 0;
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t n = dot ? (size_t)(dot - name) : strlen(name);
		out[o++] = (uint8_t)n;
		memcpy(out + o, name, n);
		o += n;
		name += n + (dot ? 1 : 0);
	}
	out[o++] = 0;
	return o;
}

ssize_t dns_build_response(const struct dns_query *q, int rcode, const struct dns_answer *ans,
			   size_t n, uint32_t ttl, uint8_t *out, size_t cap)
{
	bool has_q = q->question_end != 0;
	size_t qlen = has_q ? (q->name[0] ? strlen(q->name) + 2 : 1) + 4 : 0;
	if (cap < DNS_HDR + qlen)
		return -1;
	memset(out, 0, DNS_HDR);
	put16(out, q->id);
	out[2] = (uint8_t)(0x80 | (q->opcode & 0xf) << 3 | (q->rd ? 1 : 0));
	out[3] = (uint8_t)(0x80 | (rcode & 0xf)); /* RA */
	size_t o = DNS_HDR;
	if (has_q) {
		put16(out + 4, 1);
		o += write_name(q->name, out + o);
		put16(out + o, q->qtype);
		put16(out + o + 2, q->qclass);
		o += 4;
	}
	int fam = q->qtype == DNS_T_A ? AF_INET : q->qtype == DNS_T_AAAA ? AF_INET6 : -1;
	if (!has_q || rcode != DNS_NOERROR || fam < 0 || q->qclass != DNS_C_IN)
		return (ssize_t)o;
	size_t alen = fam == AF_INET ? 4 : 16, count = 0;
	for (size_t i = 0; i < n; i++) {
		if (ans[i].family != fam)
			continue;
		if (o + 12 + alen > cap || count == UINT16_MAX) {
			out[2] |= 0x02; /* TC */
			break;
		}
		put16(out + o, 0xC000 | DNS_HDR); /* the question's name */
		put16(out + o + 2, q->qtype);
		put16(out + o + 4, DNS_C_IN);
		put16(out + o + 6, (uint16_t)(ttl >> 16));
		put16(out + o + 8, (uint16_t)ttl);
		put16(out + o + 10, (uint16_t)alen);
		memcpy(out + o + 12, ans[i].addr, alen);
		o += 12 + alen;
		count++;
	}
	put16(out + 6, (uint16_t)count);
	return (ssize_t)o;
}
