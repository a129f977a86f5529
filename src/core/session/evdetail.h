/* evdetail: file names in an event's detail JSON, kept exactly (doc/design.md §5).
 *
 * A name a jail chose is bytes, not text: JSON strings hold UTF-8 only, so a violation whose path
 * held a byte like 0xff was stored with no detail at all, and `quarantine` could neither list
 * nor restore what had been moved aside. evdetail_set stores such a value twice: KEY, readable
 * (each byte that is not UTF-8 as U+FFFD), and KEY_hex, the exact bytes in hex; evdetail_get
 * prefers KEY_hex. A valid UTF-8 value is stored as KEY alone, as before. */
#pragma once

#include <jansson.h>

/* Set KEY (and KEY_hex when s is not UTF-8) in object o; nothing when s is NULL. */
void evdetail_set(json_t *o, const char *key, const char *s);
/* The exact bytes stored under KEY (from KEY_hex when present and well formed), or NULL; free
 * it. */
char *evdetail_get(const json_t *o, const char *key);
