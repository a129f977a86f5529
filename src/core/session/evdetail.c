/* evdetail: file names in an event's detail JSON, kept exactly (see evdetail.h). */
#include "core/session/evdetail.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hex.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* s with every byte that does not start or continue valid UTF-8 replaced by U+FFFD: jansson
 * accepts the result (it is what json_string refused only for those bytes). */
static char *readable(const char *s)
{
	struct strbuf b = STRBUF_INIT;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3
					 : (*p & 0xf8) == 0xf0 ? 4 : 0;
		bool ok = n > 0;
		for (size_t i = 1; ok && i < n; i++)
			ok = (p[i] & 0xc0) == 0x80;
		if (ok && n > 1) {
			char tmp[5] = {0};
			memcpy(tmp, p, n);
			json_t *t = json_string(tmp); /* overlong, surrogates, > U+10FFFF: refused */
			ok = t != NULL;
			json_decref(t);
		}
		if (ok) {
			sb_addn(&b, (const char *)p, n);
			p += n;
		} else {
			sb_add(&b, "\xef\xbf\xbd");
			p++;
		}
	}
	return sb_steal(&b);
}

void evdetail_set(json_t *o, const char *key, const char *s)
{
	if (!s)
		return;
	json_t *v = json_string(s);
	if (v) {
		json_object_set_new(o, key, v);
		return;
	}
	char *r = readable(s);
	json_object_set_new(o, key, json_string(r));
	free(r);
	size_t n = strlen(s);
	char *hex = xmalloc(2 * n + 1);
	hex_encode(s, n, hex);
	char *k = xasprintf("%s_hex", key);
	json_object_set_new(o, k, json_string(hex));
	free(k);
	free(hex);
}

char *evdetail_get(const json_t *o, const char *key)
{
	char *k = xasprintf("%s_hex", key);
	const char *hex = json_string_value(json_object_get(o, k));
	free(k);
	/* not hex, or a NUL: not a file name we wrote (the readable form then) */
	char *out = hex && *hex ? hex_decode_str(hex) : NULL;
	if (out)
		return out;
	const char *v = json_string_value(json_object_get(o, key));
	return v ? xstrdup(v) : NULL;
}
