/* Fuzz target: the rules of `--net allow` read text from the command line, the session store
 * and, through the proxy, from the jail (the host of a CONNECT or a SOCKS request). They must
 * never crash, leak or read out of bounds, and keep their invariants: a normalized host is
 * normalized again unchanged and is lowercase LDH or an IP literal; a parsed rule's host parses
 * again to the same rule; a check always decides, deny rules win, and a reason is one line. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/plan/netrules.h"

#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_host(const char *h)
{
	char *again = NULL;
	struct err e = {0};
	if (net_host_normalize(h, &again, &e) < 0 || strcmp(again, h) != 0)
		abort(); /* idempotent */
	free(again);
	if (strlen(h) > NET_HOST_MAX)
		abort();
	uint8_t a[16];
	if (inet_pton(AF_INET6, h, a) == 1 || inet_pton(AF_INET, h, a) == 1)
		return;
	for (const char *p = h; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
			abort();
}

static void check_rule(const struct netrule *r)
{
	check_host(r->host);
	struct netrule again;
	struct err e = {0};
	/* the host with its port, as a flag would give it */
	size_t n = strlen(r->host) + 16;
	char *spec = malloc(n);
	if (!spec)
		abort();
	const char *pre = r->kind == NR_WILDCARD ? "*." : r->kind == NR_IPV6 && r->port ? "[" : "";
	const char *post = r->kind == NR_IPV6 && r->port ? "]" : "";
	if (r->port)
		snprintf(spec, n, "%s%s%s:%d", pre, r->host, post, r->port);
	else
		snprintf(spec, n, "%s%s", pre, r->host);
	if (netrule_parse(spec, &again, &e) < 0 || again.kind != r->kind ||
	    strcmp(again.host, r->host) != 0 || again.port != r->port ||
	    memcmp(again.addr, r->addr, sizeof r->addr) != 0)
		abort();
	netrule_free(&again);
	free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);
	/* the input as one host, one rule, one mapping */
	char *h = NULL;
	struct err e = {0};
	if (net_host_normalize(s, &h, &e) == 0) {
		check_host(h);
		free(h);
	} else if (h) {
		abort(); /* nothing returned on failure */
	}
	struct netrule r;
	if (netrule_parse(s, &r, &e) == 0) {
		check_rule(&r);
		netrule_free(&r);
	}
	struct netmap m;
	if (netmap_parse(s, &m, &e) == 0) {
		check_host(m.host);
		netmap_free(&m);
	}
	/* lines: "+RULE", "-RULE", "=MAP", then hosts to check ("?HOST PORT") */
	struct strv allow = STRV_INIT, deny = STRV_INIT, map = STRV_INIT, ask = STRV_INIT;
	char *save = NULL;
	for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct strv *v = line[0] == '+' ? &allow : line[0] == '-' ? &deny
			       : line[0] == '=' ? &map : &ask;
		strv_push(v, line[0] == '+' || line[0] == '-' || line[0] == '=' ? line + 1 : line);
	}
	struct netrules rules;
	if (netrules_build(&allow, &deny, &map, &rules, &e) == 0) {
		for (size_t i = 0; i < ask.n; i++) {
			char *host = NULL;
			const char *q = ask.v[i];
			uint16_t port = (uint16_t)(strlen(q) * 37u);
			if (net_host_normalize(q, &host, &e) < 0)
				host = strdup(q); /* the proxy never does this; check must cope */
			if (!host)
				abort();
			struct net_decision d;
			enum net_verdict v = netrules_check(&rules, host, port, &d);
			if (v != d.v || v > NV_BAD_PORT)
				abort();
			if (v == NV_DENY_LISTED && !d.rule)
				abort();
			if (v == NV_ALLOW && !d.rule && !d.mapped)
				abort();
			char *why = net_deny_reason(&d, host, port);
			if (strchr(why, '\n'))
				abort();
			free(why);
			uint8_t addr[16];
			memset(addr, 0, sizeof addr);
			memcpy(addr, data, size < 16 ? size : 16);
			(void)netrules_addr_ok(&rules, &d, AF_INET, addr);
			(void)netrules_addr_ok(&rules, &d, AF_INET6, addr);
			(void)netaddr_class_name(netaddr_classify(AF_INET6, addr));
			free(host);
		}
		netrules_free(&rules);
	}
	strv_free(&allow);
	strv_free(&deny);
	strv_free(&map);
	strv_free(&ask);
	free(s);
	return 0;
}
