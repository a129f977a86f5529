/* jstr: a string kept exactly in JSON (a file name, an argument: bytes, not text). Valid UTF-8
 * is a JSON string; anything else, which JSON cannot hold, is {"hex": "…"}, its bytes in
 * lowercase hex. The stored policy (policy.c), the session's argv (store.c) and review's
 * --json (cmd/review.c) write it; jstr_get reads both forms back. Pure. */
#pragma once
#include <jansson.h>

json_t *jstr(const char *s);

/* The string jstr made of v, or NULL when v is neither form (or its hex is not a string's). */
char *jstr_get(const json_t *v);
