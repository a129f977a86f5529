/* publish: see publish.h. */
#include "core/plan/publish.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* A port: 1-5 decimal digits, 1-65535, nothing around it. */
static int port_of(const char *s, size_t n, uint16_t *out)
{
	if (n == 0 || n > 5)
		return -1;
	unsigned v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

int publish_parse(const char *spec, struct publish *out, struct err *e)
{
	const char *colon = strchr(spec, ':');
	bool two = colon != NULL;
	int rc = two ? port_of(spec, (size_t)(colon - spec), &out->host_port) |
			       port_of(colon + 1, strlen(colon + 1), &out->port)
		     : port_of(spec, strlen(spec), &out->port);
	if (rc < 0) {
		err_set(e, 0, spec, "--publish needs [HOSTPORT:]PORT, each a port from 1 to 65535");
		err_hint(e, "e.g. --publish 3000 (the jail's port 3000 on the host's 127.0.0.1:3000) "
			    "or --publish 8080:3000 (on the host's 127.0.0.1:8080); the host side "
			    "is always 127.0.0.1");
		return -1;
	}
	if (!two)
		out->host_port = out->port;
	return 0;
}

int publish_list(const struct strv *specs, struct publish **out, size_t *n, struct err *e)
{
	*out = NULL;
	*n = 0;
	if (specs->n > PUBLISH_MAX) {
		err_set(e, 0, specs->v[PUBLISH_MAX], "--publish: more than %d entries", PUBLISH_MAX);
		err_hint(e, "publish the ports the run needs");
		return -1;
	}
	struct publish *v = specs->n ? xcalloc(specs->n, sizeof *v) : NULL;
	for (size_t i = 0; i < specs->n; i++) {
		if (publish_parse(specs->v[i], &v[i], e) < 0)
			goto fail;
		for (size_t j = 0; j < i; j++) {
			if (v[j].host_port != v[i].host_port)
				continue;
			err_set(e, 0, specs->v[i], "--publish: the host port %u is given twice (%s and "
						   "%s)",
				(unsigned)v[i].host_port, specs->v[j], specs->v[i]);
			err_hint(e, "one host port serves one jail port: --publish HOSTPORT:PORT with "
				    "another HOSTPORT");
			goto fail;
		}
	}
	*out = v;
	*n = specs->n;
	return 0;
fail:
	free(v);
	return -1;
}

void publish_format(const struct publish *p, char *out, size_t cap)
{
	if (p->host_port == p->port)
		(void)snprintf(out, cap, "%u", (unsigned)p->port);
	else
		(void)snprintf(out, cap, "%u:%u", (unsigned)p->host_port, (unsigned)p->port);
}
