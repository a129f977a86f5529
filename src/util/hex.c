/* hex: see hex.h. */
#include "util/hex.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void hex_encode(const void *data, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static int nibble(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *hex_decode_str(const char *hex)
{
	size_t n = strlen(hex);
	if (n % 2)
		return NULL;
	char *out = xmalloc(n / 2 + 1);
	for (size_t i = 0; i < n / 2; i++) {
		int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
		if (hi < 0 || lo < 0 || (hi | lo) == 0) {
			free(out);
			return NULL;
		}
		out[i] = (char)(hi << 4 | lo);
	}
	out[n / 2] = '\0';
	return out;
}
