/* base64: RFC 4648 base64 with padding (HTTP Basic credentials, ssh key blobs in known_hosts).
 * Pure. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Decode n characters (padding required when the length needs it; no whitespace) into out,
 * which holds at least n / 4 * 3 bytes. The decoded length, or -1 when the text is not
 * canonical base64. */
long base64_decode(const char *in, size_t n, uint8_t *out);
/* Encode n bytes into out, which holds at least base64_encoded_len(n) + 1 bytes (a NUL
 * follows). The length written. */
size_t base64_encode(const uint8_t *in, size_t n, char *out);
static inline size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}
