/* jstr: see jstr.h. */
#include "core/plan/jstr.h"

#include <stdlib.h>
#include <string.h>

#include "util/hex.h"
#include "util/xalloc.h"

json_t *jstr(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	size_t n = strlen(s);
	char *hex = xmalloc(2 * n + 1);
	hex_encode(s, n, hex);
	j = json_pack("{s:s}", "hex", hex);
	free(hex);
	return j;
}

char *jstr_get(const json_t *v)
{
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	const char *hex = json_string_value(json_object_get(v, "hex"));
	return hex ? hex_decode_str(hex) : NULL;
}
