/* netsuggest: the allow_domains entries that would have allowed what a session's proxy denied
 * (`agentjail log ID --suggest`, doc/design.md §4, §8). Pure. */
#pragma once
#include <stddef.h>

#include "core/plan/netrules.h"

struct net_denial {
	const char *host; /* as the proxy logged it (normalized when it was a valid name) */
	int port;         /* 0: a name lookup (the DNS stub) */
	long long n;      /* how often */
};

struct net_suggestion {
	char *entry;      /* as allow_domains takes it: "evil.example", "evil.example:8443",
			   * "[2001:db8::1]:8080" */
	long long n;      /* the denials it would have allowed */
	char *detail;     /* how they split: ":443 ×2, :80, lookup" */
};

struct net_unsuggested {
	char *what;       /* "bad.example:443", "x.example (dns)" */
	long long n;
	char *why;        /* "refused by the deny entry bad.example" */
};

struct net_suggest {
	struct net_suggestion *add;
	size_t n_add;
	struct net_unsuggested *skip;
	size_t n_skip;
};

/* From the denials (the session's, with the rules it ran under): one entry per host and port,
 * ports 80 and 443 and name lookups folded into the bare name (what an entry without a port
 * allows), the most denied first. A denial no allow entry would change is listed in skip with
 * why: a deny entry refused it (deny wins), or the rules allowed the name and something else
 * refused it (its address, the name inside the connection, a malformed request). */
void net_suggest_build(const struct net_denial *v, size_t n, const struct netrules *rules,
		       struct net_suggest *out);
void net_suggest_free(struct net_suggest *s);

/* The lines to add to a configuration file: "[agent.NAME]" (agent non-NULL; its name quoted
 * when it is not a bare key) or "[policy]", then allow_domains with an entry per line and a
 * comment with its count, then the denials left out as comments. Valid TOML. */
char *net_suggest_render(const struct net_suggest *s, const char *agent);

/* The table's header text, "[policy]" or "[agent.NAME]" (quoted as above). Allocated. */
char *net_suggest_table(const char *agent);
