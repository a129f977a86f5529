/* execwire: see execwire.h. */
#include "core/plan/execwire.h"

#include <string.h>

#define MAGIC "AJX1"
#define MAGIC_LEN 4

size_t execwire_pack(unsigned flags, const char *const *argv, size_t argc, char *out, size_t cap)
{
	if (argc > EXECWIRE_ARGS_MAX || flags & ~(unsigned)EXW_TTY || cap < MAGIC_LEN + 1)
		return 0;
	memcpy(out, MAGIC, MAGIC_LEN);
	out[MAGIC_LEN] = (char)flags;
	size_t n = MAGIC_LEN + 1;
	for (size_t i = 0; i < argc; i++) {
		size_t k = strlen(argv[i]);
		if (!k || k + 1 > cap - n)
			return 0;
		memcpy(out + n, argv[i], k + 1);
		n += k + 1;
	}
	return n;
}

int execwire_unpack(char *buf, size_t len, unsigned *flags, char **argv, size_t max,
		    size_t *argc)
{
	*argc = 0;
	argv[0] = NULL;
	if (len < MAGIC_LEN + 1 || len > EXECWIRE_MAX || memcmp(buf, MAGIC, MAGIC_LEN) != 0)
		return -1;
	unsigned char f = (unsigned char)buf[MAGIC_LEN];
	if (f & ~(unsigned)EXW_TTY)
		return -1;
	*flags = f;
	for (size_t off = MAGIC_LEN + 1; off < len;) {
		char *nul = memchr(buf + off, '\0', len - off);
		if (!nul || nul == buf + off || *argc >= max)
			return -1;
		argv[(*argc)++] = buf + off;
		off = (size_t)(nul - buf) + 1;
	}
	argv[*argc] = NULL;
	return 0;
}
