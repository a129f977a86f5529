/* tlshello: the server name of a TLS ClientHello (RFC 8446 §4.1.2 and §5.1, RFC 6066 §3),
 * read across records without copying them. Pure. Limits in doc/design.md §4. */
#include "core/net/tlshello.h"

#include <string.h>

#define REC_HDR 5
#define REC_MAX 16384          /* a plaintext record's largest fragment */
#define CT_HANDSHAKE 22
#define HS_CLIENT_HELLO 1
#define HELLO_BODY_MIN 41      /* version 2, random 32, session id 1, suites 2+2, methods 1+1 */
#define EXT_SERVER_NAME 0
#define EXT_EARLY_DATA 42
#define EXT_SUPPORTED_VERSIONS 43
#define EXT_ECH 0xfe0d
#define SNI_EXT_MAX (2 + 1 + 2 + 255)

static int fail(struct tls_hello *o, int rc, const char *why)
{
	o->sni[0] = '\0';
	o->why = why;
	return rc;
}

/* The handshake bytes carried by the records at the start of the stream, read in order across
 * record boundaries. The scan in tls_client_hello_sni has checked every header it crosses. */
struct hs {
	const uint8_t *b;
	size_t n;
	size_t at;   /* the next byte */
	size_t end;  /* the end of at's fragment (at most n) */
	size_t left; /* bytes of the message not read yet */
};

static bool hs_take(struct hs *h, uint8_t *dst, size_t k)
{
	if (k > h->left)
		return false;
	h->left -= k;
	while (k) {
		if (h->at == h->end) {
			if (h->n - h->at < REC_HDR)
				return false;
			size_t rl = (size_t)h->b[h->at + 3] << 8 | h->b[h->at + 4];
			h->at += REC_HDR;
			h->end = h->n - h->at < rl ? h->n : h->at + rl;
			if (h->at == h->end)
				return false;
			continue;
		}
		size_t m = h->end - h->at < k ? h->end - h->at : k;
		if (dst) {
			memcpy(dst, h->b + h->at, m);
			dst += m;
		}
		h->at += m;
		k -= m;
	}
	return true;
}

static bool hs_num(struct hs *h, size_t bytes, size_t *v)
{
	uint8_t t[3];
	if (!hs_take(h, t, bytes))
		return false;
	*v = 0;
	for (size_t i = 0; i < bytes; i++)
		*v = *v << 8 | t[i];
	return true;
}

/* A vector with a length prefix of lb bytes, skipped: its length within [min, max]. */
static bool hs_skip_vec(struct hs *h, size_t lb, size_t min, size_t max)
{
	size_t l;
	return hs_num(h, lb, &l) && l >= min && l <= max && hs_take(h, NULL, l);
}

/* The server_name extension's body (RFC 6066 §3): a list holding one host_name. */
static int read_sni(const uint8_t *e, size_t n, struct tls_hello *o)
{
	if (n < 2 || (size_t)(e[0] << 8 | e[1]) != n - 2)
		return fail(o, TLS_BAD, "the server_name list's length does not match its extension");
	if (n < 2 + 3 + 1)
		return fail(o, TLS_BAD, "an empty server_name list or name");
	if (e[2] != 0)
		return fail(o, TLS_BAD, "a server name of a type other than host_name");
	size_t l = (size_t)e[3] << 8 | e[4];
	if (l + 5 < n)
		return fail(o, TLS_BAD, "more than one server name");
	if (l + 5 > n || l == 0)
		return fail(o, TLS_BAD, "a server name's length does not match its list");
	for (size_t i = 0; i < l; i++)
		if (e[5 + i] <= 0x20 || e[5 + i] >= 0x7f)
			return fail(o, TLS_BAD, "a server name with a byte that is not printable ASCII");
	memcpy(o->sni, e + 5, l);
	o->sni[l] = '\0';
	return TLS_SNI;
}

/* supported_versions (RFC 8446 §4.2.1): the highest TLS version (0x03xx), GREASE ignored. */
static int read_versions(const uint8_t *e, size_t n, struct tls_hello *o)
{
	if (n < 3 || e[0] != n - 1 || (n - 1) % 2)
		return fail(o, TLS_BAD, "a supported_versions list of the wrong length");
	uint16_t best = 0;
	for (size_t i = 1; i < n; i += 2) {
		uint16_t v = (uint16_t)(e[i] << 8 | e[i + 1]);
		if (e[i] == 3 && v > best)
			best = v;
	}
	if (best)
		o->version = best;
	return TLS_NO_SNI;
}

/* The extensions, h->left bytes of them. */
static int read_extensions(struct hs *h, struct tls_hello *o)
{
	uint8_t seen[65536 / 8] = {0};
	int rc = TLS_NO_SNI;
	while (h->left) {
		size_t type, n;
		uint8_t e[SNI_EXT_MAX];
		if (!hs_num(h, 2, &type) || !hs_num(h, 2, &n) || n > h->left)
			return fail(o, TLS_BAD, "an extension runs past the ClientHello");
		if (seen[type / 8] & (1u << (type % 8)))
			return fail(o, TLS_BAD, type == EXT_SERVER_NAME ? "two server_name extensions"
									: "an extension sent twice");
		seen[type / 8] |= (uint8_t)(1u << (type % 8));
		switch (type) {
		case EXT_SERVER_NAME:
			if (n > SNI_EXT_MAX)
				return fail(o, TLS_BAD, "a server_name extension over 260 bytes (more "
							"than one name, or a name over 255)");
			if (!hs_take(h, e, n))
				return fail(o, TLS_BAD, "a truncated extension");
			rc = read_sni(e, n, o);
			break;
		case EXT_SUPPORTED_VERSIONS:
			if (n > 255 || !hs_take(h, e, n))
				return fail(o, TLS_BAD, "a supported_versions list over 254 bytes");
			if (read_versions(e, n, o) < 0)
				return TLS_BAD;
			break;
		default:
			o->early_data |= type == EXT_EARLY_DATA;
			o->ech |= type == EXT_ECH;
			if (!hs_take(h, NULL, n))
				return fail(o, TLS_BAD, "a truncated extension");
		}
		if (rc < 0)
			return rc;
	}
	return rc;
}

/* The ClientHello's body after its 4-byte header, msg bytes of it. */
static int read_hello(struct hs *h, struct tls_hello *o)
{
	size_t v, l;
	if (!hs_num(h, 2, &v) || v >> 8 != 3)
		return fail(o, TLS_BAD, "a ClientHello whose version is not TLS (3.x)");
	o->version = (uint16_t)v;
	if (!hs_take(h, NULL, 32) || !hs_skip_vec(h, 1, 0, 32))
		return fail(o, TLS_BAD, "a ClientHello's session id over 32 bytes");
	if (!hs_num(h, 2, &l) || l < 2 || l % 2 || !hs_take(h, NULL, l))
		return fail(o, TLS_BAD, "a ClientHello's cipher suites of a wrong length");
	if (!hs_skip_vec(h, 1, 1, 255))
		return fail(o, TLS_BAD, "a ClientHello's compression methods of a wrong length");
	if (h->left == 0)
		return TLS_NO_SNI; /* no extensions at all (TLS 1.2 and older may) */
	if (!hs_num(h, 2, &l) || l != h->left)
		return fail(o, TLS_BAD, "the extensions' length does not match the ClientHello's");
	return read_extensions(h, o);
}

/* The first bytes when they are not a TLS handshake record: an SSLv2-format hello (a 2-byte
 * length with the top bit set, then message type 1) or another protocol. */
static int not_handshake(const uint8_t *buf, size_t len, struct tls_hello *o)
{
	if (!(buf[0] & 0x80))
		return fail(o, TLS_NOT_TLS, "not a TLS handshake record");
	if (len < 3)
		return TLS_NEED_MORE;
	if (buf[2] != 1)
		return fail(o, TLS_NOT_TLS, "not a TLS handshake record");
	return fail(o, TLS_BAD, "an SSLv2-format ClientHello (it carries no server name)");
}

int tls_client_hello_sni(const uint8_t *buf, size_t len, struct tls_hello *out)
{
	memset(out, 0, sizeof *out);
	if (len == 0)
		return TLS_NEED_MORE;
	size_t off = 0;      /* the next record's header */
	size_t full = 0;     /* handshake bytes the records so far declare */
	size_t avail = 0;    /* of them, the bytes present */
	size_t need = 4;     /* handshake bytes the hello needs: its header, then the whole */
	bool have_len = false;
	size_t end = 0;      /* where the hello ends at the earliest */
	while (avail < need) {
		if (off >= len)
			return TLS_NEED_MORE;
		const uint8_t *r = buf + off;
		size_t have = len - off;
		if (r[0] != CT_HANDSHAKE || (have > 1 && r[1] != 3) || (have > 2 && r[2] > 4)) {
			if (off == 0)
				return r[0] == CT_HANDSHAKE
					       ? fail(out, TLS_NOT_TLS, "not a TLS handshake record")
					       : not_handshake(buf, len, out);
			return fail(out, TLS_BAD, "a record other than handshake inside the "
						  "ClientHello");
		}
		if (have < REC_HDR)
			return TLS_NEED_MORE;
		size_t rl = (size_t)r[3] << 8 | r[4];
		if (rl == 0)
			return fail(out, TLS_BAD, "an empty handshake record");
		if (rl > REC_MAX)
			return fail(out, TLS_BAD, "a record over 16 KiB");
		if (off == 0 && have > REC_HDR && r[REC_HDR] != HS_CLIENT_HELLO)
			return fail(out, TLS_BAD, "the first handshake message is not a ClientHello");
		avail += have - REC_HDR < rl ? have - REC_HDR : rl;
		full += rl;
		if (!have_len && avail >= 4) {
			struct hs h = {.b = buf, .n = len, .left = 4};
			size_t type, mlen;
			if (!hs_num(&h, 1, &type) || !hs_num(&h, 3, &mlen))
				return fail(out, TLS_BAD, "a truncated handshake header");
			if (mlen < HELLO_BODY_MIN)
				return fail(out, TLS_BAD, "a ClientHello too short to be one");
			need = 4 + mlen;
			have_len = true;
		}
		/* in this record, or after as many full records as it takes */
		size_t rest = need > full ? need - full : 0;
		end = rest ? off + REC_HDR + rl + rest + REC_HDR * ((rest + REC_MAX - 1) / REC_MAX)
				  : off + REC_HDR + rl - (full - need);
		if (end > TLS_HELLO_READ_MAX)
			return fail(out, TLS_BAD, "a ClientHello longer than 32768 bytes");
		off += REC_HDR + rl;
	}
	struct hs h = {.b = buf, .n = len, .left = need};
	if (!hs_take(&h, NULL, 4))
		return fail(out, TLS_BAD, "a truncated handshake header");
	int rc = read_hello(&h, out);
	if (rc > 0)
		out->used = end;
	return rc;
}
