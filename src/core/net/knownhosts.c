/* knownhosts: OpenSSH's known_hosts lines (knownhosts.h). */
#include "core/net/knownhosts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "util/xalloc.h"

void kh_entry_free(struct kh_entry *e)
{
	strv_free(&e->patterns);
	free(e->key);
	memset(e, 0, sizeof *e);
}

/* The next blank-separated field of *p (advanced), or NULL. */
static char *field(char **p)
{
	char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	char *end = s + strcspn(s, " \t");
	if (*end)
		*end++ = '\0';
	*p = end;
	return s;
}

/* "|1|BASE64SALT|BASE64HASH" */
static bool parse_hashed(const char *pat, struct kh_entry *e)
{
	if (strncmp(pat, "|1|", 3))
		return false;
	const char *salt = pat + 3, *bar = strchr(salt, '|');
	if (!bar)
		return false;
	uint8_t buf[96];
	size_t sn = (size_t)(bar - salt), hn = strlen(bar + 1);
	if (sn > 88 || hn > 40)
		return false;
	long k = base64_decode(salt, sn, buf);
	if (k <= 0 || (size_t)k > sizeof e->salt)
		return false;
	memcpy(e->salt, buf, (size_t)k);
	e->salt_len = (size_t)k;
	k = base64_decode(bar + 1, hn, buf);
	if (k != 20)
		return false;
	memcpy(e->hash, buf, 20);
	e->hashed = true;
	return true;
}

/* The fields of a line (copy, written into): 1, 0 none, -1 unreadable. */
static int parse_fields(char *p, struct kh_entry *out)
{
	char *f = field(&p);
	if (!f || f[0] == '#')
		return 0;
	if (f[0] == '@') {
		if (!strcmp(f, "@revoked"))
			out->marker = KH_REVOKED;
		else if (!strcmp(f, "@cert-authority"))
			out->marker = KH_CERT_AUTHORITY;
		else
			return -1;
		f = field(&p);
		if (!f)
			return -1;
	}
	char *hosts = f, *type = field(&p), *b64 = field(&p);
	if (!type || !b64 || strlen(type) >= sizeof out->type)
		return -1;
	if (hosts[0] == '|') {
		if (!parse_hashed(hosts, out))
			return -1;
	} else {
		for (char *save = NULL, *h = strtok_r(hosts, ",", &save); h;
		     h = strtok_r(NULL, ",", &save))
			strv_push(&out->patterns, h);
		if (!out->patterns.n)
			return -1;
	}
	snprintf(out->type, sizeof out->type, "%s", type);
	size_t n = strlen(b64);
	out->key = xmalloc(n / 4 * 3 + 1);
	long k = base64_decode(b64, n, out->key);
	if (k <= 0)
		return -1;
	out->key_len = (size_t)k;
	return 1;
}

int kh_parse_line(const char *line, struct kh_entry *out)
{
	memset(out, 0, sizeof *out);
	char *copy = xstrdup(line);
	copy[strcspn(copy, "\r\n")] = '\0';
	int rc = parse_fields(copy, out);
	free(copy);
	if (rc <= 0)
		kh_entry_free(out);
	return rc;
}

char *kh_host_name(const char *host, uint16_t port)
{
	return port == 22 ? xstrdup(host) : xasprintf("[%s]:%u", host, (unsigned)port);
}

/* OpenSSH's match_pattern: '*' any run, '?' one character; here without case. */
static bool wild(const char *p, const char *s)
{
	for (;; p++, s++) {
		if (*p == '\0')
			return *s == '\0';
		if (*p == '*') {
			while (p[1] == '*')
				p++;
			if (!p[1])
				return true;
			for (; *s; s++)
				if (wild(p + 1, s))
					return true;
			return false;
		}
		if (!*s)
			return false;
		if (*p != '?' && tolower((unsigned char)*p) != tolower((unsigned char)*s))
			return false;
	}
}

bool kh_pattern_match(const char *pattern, const char *name)
{
	return wild(pattern, name);
}

bool kh_entry_names(const struct kh_entry *e, const char *host, uint16_t port)
{
	if (e->hashed)
		return false;
	char *name = kh_host_name(host, port);
	bool yes = false, no = false;
	for (size_t i = 0; i < e->patterns.n; i++) {
		const char *pat = e->patterns.v[i];
		bool neg = pat[0] == '!';
		if (kh_pattern_match(neg ? pat + 1 : pat, name))
			*(neg ? &no : &yes) = true;
	}
	free(name);
	return yes && !no;
}
