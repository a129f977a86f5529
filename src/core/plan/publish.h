/* publish: `--publish [HOSTPORT:]PORT` (config `publish`; doc/design.md §4, "Dev servers"): a
 * server listening on the jail's loopback port PORT is reachable from the host on
 * 127.0.0.1:HOSTPORT, and only there. Pure: the entries' syntax, the checks of a list, the
 * jail ports init may connect to. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "util/strv.h"

#define PUBLISH_MAX 32 /* entries per run: each is a listener of the host's */

struct publish {
	uint16_t host_port; /* on the host's 127.0.0.1 */
	uint16_t port;      /* on the jail's loopback */
};

/* "3000" (the same port on both sides) or "8080:3000" (HOSTPORT:PORT), each 1-65535 in
 * decimal, nothing else (no address: the host side is 127.0.0.1 only). -1 with e naming the
 * entry and what is wrong. */
int publish_parse(const char *spec, struct publish *out, struct err *e) WUR;

/* Every entry of specs parsed (in order), at most PUBLISH_MAX, no host port twice (two
 * listeners cannot share one; a jail port may be published on several host ports). *out is
 * allocated (NULL when n is 0). -1 with e naming the entry. */
int publish_list(const struct strv *specs, struct publish **out, size_t *n, struct err *e) WUR;

/* The entry as the user would write it again: "8080:3000", or "3000" when both are one. */
void publish_format(const struct publish *p, char *out, size_t cap);
