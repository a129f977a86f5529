/* uuid: see uuid.h. */
#include "util/uuid.h"

#include <errno.h>
#include <sys/random.h>
#include <sys/types.h>

#include "util/xalloc.h"

int uuid_v4(char out[UUID_STR_LEN + 1], struct err *e)
{
	unsigned char b[16];
	size_t got = 0;
	while (got < sizeof b) {
		ssize_t r = getrandom(b + got, sizeof b - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return err_set(e, errno, NULL, "cannot get random bytes for a session id");
		}
		got += (size_t)r;
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	static const char hex[] = "0123456789abcdef";
	char *o = out;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*o++ = '-';
		*o++ = hex[b[i] >> 4];
		*o++ = hex[b[i] & 15];
	}
	*o = '\0';
	return 0;
}

char *uuid_v4_new(struct err *e)
{
	char id[UUID_STR_LEN + 1];
	return uuid_v4(id, e) < 0 ? NULL : xstrdup(id);
}
