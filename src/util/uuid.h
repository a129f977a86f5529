/* uuid: random (version 4) UUIDs, the ids of sessions and of agents' own sessions. From the
 * kernel's random source only: when it cannot give 16 bytes the caller gets an error, never a
 * guessable id. */
#pragma once
#include "util/err.h"

#define UUID_STR_LEN 36 /* xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx */

/* Write a new UUID and its NUL into out. 0, or -1 with e filled. */
int uuid_v4(char out[UUID_STR_LEN + 1], struct err *e) WUR;
/* The same, malloc'd; NULL with e filled. */
char *uuid_v4_new(struct err *e) WUR;
