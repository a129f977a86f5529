/* netsuggest: allow_domains entries from a session's denials. Pure. doc/design.md §4, §8. */
#include "core/net/netsuggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

/* Printable ASCII, one line: what came from the jail goes into comments. */
static char *shown(const char *host, int port)
{
	struct strbuf b = STRBUF_INIT;
	for (const char *p = host; *p && b.len < NET_HOST_MAX + 3; p++)
		sb_addc(&b, (unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f ? '?' : *p);
	if (port)
		sb_addf(&b, ":%d", port);
	else
		sb_add(&b, " (dns)");
	return sb_steal(&b);
}

static void add_skip(struct net_suggest *s, const char *host, int port, long long n,
		     char *why)
{
	s->skip = xrealloc(s->skip, (s->n_skip + 1) * sizeof *s->skip);
	s->skip[s->n_skip++] = (struct net_unsuggested){shown(host, port), n, why};
}

/* One part of an entry's detail: ":443 ×2", "lookup". */
static void detail_add(char **detail, int port, long long n)
{
	struct strbuf b = STRBUF_INIT;
	if (*detail)
		sb_addf(&b, "%s, ", *detail);
	if (port)
		sb_addf(&b, ":%d", port);
	else
		sb_add(&b, "lookup");
	if (n > 1)
		sb_addf(&b, " ×%lld", n);
	free(*detail);
	*detail = sb_steal(&b);
}

static void add_entry(struct net_suggest *s, char *entry, int port, long long n)
{
	for (size_t i = 0; i < s->n_add; i++)
		if (!strcmp(s->add[i].entry, entry)) {
			s->add[i].n += n;
			detail_add(&s->add[i].detail, port, n);
			free(entry);
			return;
		}
	s->add = xrealloc(s->add, (s->n_add + 1) * sizeof *s->add);
	s->add[s->n_add] = (struct net_suggestion){.entry = entry, .n = n};
	detail_add(&s->add[s->n_add].detail, port, n);
	s->n_add++;
}

static void one(const struct net_denial *x, const struct netrules *rules, struct net_suggest *s)
{
	char *h = NULL;
	struct err e = {0};
	if (net_host_normalize(x->host, &h, &e) < 0) {
		add_skip(s, x->host, x->port, x->n, xstrdup("not a valid host name"));
		return;
	}
	struct net_decision d;
	enum net_verdict v = netrules_check(rules, h, (uint16_t)x->port, &d);
	struct strbuf why = STRBUF_INIT;
	if (v == NV_DENY_LISTED) {
		sb_addf(&why, "refused by the deny entry %s (a deny entry wins over any allow)",
			d.rule ? d.rule->spec : "?");
	} else if (v == NV_ALLOW) {
		sb_add(&why, "its name was allowed; something else refused it (its address, the "
			     "name inside the connection, the request: agentjail log says what)");
	} else {
		char *entry = net_suggest_entry(h, x->port);
		struct netrule r;
		if (netrule_parse(entry, &r, &e) == 0) {
			netrule_free(&r);
			add_entry(s, entry, x->port, x->n);
			free(h);
			return;
		}
		sb_addf(&why, "no entry can allow it: %s", e.what);
		free(entry);
	}
	free(h);
	add_skip(s, x->host, x->port, x->n, sb_steal(&why));
}

static int by_count(const void *a, const void *b)
{
	const struct net_suggestion *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->entry, y->entry);
}

void net_suggest_build(const struct net_denial *v, size_t n, const struct netrules *rules,
		       struct net_suggest *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < n; i++)
		one(&v[i], rules, out);
	if (out->n_add > 1)
		qsort(out->add, out->n_add, sizeof *out->add, by_count);
}

void net_suggest_free(struct net_suggest *s)
{
	for (size_t i = 0; i < s->n_add; i++) {
		free(s->add[i].entry);
		free(s->add[i].detail);
	}
	for (size_t i = 0; i < s->n_skip; i++) {
		free(s->skip[i].what);
		free(s->skip[i].why);
	}
	free(s->add);
	free(s->skip);
	memset(s, 0, sizeof *s);
}

static bool bare_key(const char *k)
{
	if (!*k)
		return false;
	for (const char *p = k; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return false;
	return true;
}

char *net_suggest_table(const char *agent)
{
	struct strbuf b = STRBUF_INIT;
	if (!agent) {
		sb_add(&b, "[policy]");
	} else if (bare_key(agent)) {
		sb_addf(&b, "[agent.%s]", agent);
	} else {
		sb_add(&b, "[agent.\"");
		for (const char *p = agent; *p; p++) {
			unsigned char c = (unsigned char)*p;
			if (c == '"' || c == '\\')
				sb_addf(&b, "\\%c", c);
			else if (c < 0x20 || c == 0x7f)
				sb_addf(&b, "\\u%04x", c);
			else
				sb_addc(&b, (char)c);
		}
		sb_add(&b, "\"]");
	}
	return sb_steal(&b);
}

static void times(struct strbuf *b, long long n)
{
	if (n == 1)
		sb_add(b, "once");
	else
		sb_addf(b, "%lld times", n);
}

char *net_suggest_render(const struct net_suggest *s, const char *agent)
{
	struct strbuf b = STRBUF_INIT;
	if (s->n_add) {
		char *t = net_suggest_table(agent);
		sb_addf(&b, "%s\nallow_domains = [\n", t);
		free(t);
		for (size_t i = 0; i < s->n_add; i++) {
			/* entries are normalized names and addresses: nothing to escape */
			sb_addf(&b, "  \"%s\", # denied ", s->add[i].entry);
			times(&b, s->add[i].n);
			sb_addf(&b, " (%s)\n", s->add[i].detail);
		}
		sb_add(&b, "]\n");
	}
	if (s->n_skip)
		sb_add(&b, "# not suggested:\n");
	for (size_t i = 0; i < s->n_skip; i++) {
		sb_addf(&b, "#   %s, denied ", s->skip[i].what);
		times(&b, s->skip[i].n);
		sb_addf(&b, ": %s\n", s->skip[i].why);
	}
	return sb_steal(&b);
}
