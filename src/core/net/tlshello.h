/* tlshello: the server name (SNI) of a TLS ClientHello at the start of a client's stream, read
 * by the proxy before a tunnel relays a byte upstream (doc/design.md §4). Pure: no syscalls, no
 * allocation. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ClientHello must be complete within this many bytes of the stream (records and their
 * headers): a caller buffers at most this much before it decides. A real hello is 200 bytes to
 * 2 KiB; a hello larger than one record (16 KiB) is read across records. */
#define TLS_HELLO_READ_MAX 32768

enum tls_hello_rc {
	TLS_NEED_MORE = 0, /* a valid prefix: read more (bounded by TLS_HELLO_READ_MAX) */
	TLS_SNI = 1,       /* a whole ClientHello with one host_name: out->sni */
	TLS_NO_SNI = 2,    /* a whole ClientHello without a server_name extension */
	TLS_BAD = -1,      /* a TLS record, but not a well-formed ClientHello: out->why */
	TLS_NOT_TLS = -2,  /* the first bytes are not a TLS handshake record (another protocol) */
};

struct tls_hello {
	char sni[256];        /* TLS_SNI: the host_name as sent (1..255 bytes of printable ASCII,
			       * no space; case and a trailing dot kept: the caller normalizes) */
	uint16_t version;     /* the highest version offered: supported_versions' highest
			       * (0x0304 for TLS 1.3), else the hello's legacy_version */
	bool ech;             /* encrypted_client_hello is present: sni is the outer name; the
			       * inner one is encrypted to the server and not seen */
	bool early_data;      /* early_data (TLS 1.3 0-RTT) is offered */
	size_t used;          /* TLS_SNI / TLS_NO_SNI: the stream's bytes up to the hello's last
			       * (what follows, in its record or after, is not read) */
	const char *why;      /* TLS_BAD / TLS_NOT_TLS: a short static reason */
};

/* Read the ClientHello at the start of buf[0, len): records of type handshake (22) whose
 * fragments are joined, so a hello split across TCP segments or records, or larger than one
 * record, is read whole. Strict, so that no server can read a name other than the one
 * returned: exactly one server_name extension holding exactly one host_name entry, no
 * extension twice, every length consistent, nothing after the extensions. Record headers,
 * the message's type and its length are judged as soon as they arrive, the body once it is
 * whole; a prefix of a good hello is always TLS_NEED_MORE. Bytes after the hello (early data,
 * a ChangeCipherSpec) are not read. An SSLv2-format hello (no extensions, so no name) is
 * TLS_BAD. */
int tls_client_hello_sni(const uint8_t *buf, size_t len, struct tls_hello *out);
