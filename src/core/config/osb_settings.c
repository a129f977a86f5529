/* osb_settings: see osb_settings.h. */
#include "core/config/osb_settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/xalloc.h"

static const char *const keys[] = {"url",    "api_key_env", "image",   "entrypoint", "cpu",
				   "memory", "timeout",	    "workdir", "sync_max",   NULL};

const char *osb_key_name(enum osb_key k)
{
	return k < OK__N ? keys[k] : "?";
}

const char *const *osb_key_names(void)
{
	return keys;
}

static bool env_name_ok(const char *s)
{
	if (!*s || isdigit((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* A Kubernetes-style quantity: digits, an optional fraction, an optional suffix. */
static bool quantity_ok(const char *s, const char *const *suffixes)
{
	const char *p = s;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == s)
		return false;
	if (*p == '.') {
		const char *q = ++p;
		while (isdigit((unsigned char)*p))
			p++;
		if (p == q)
			return false;
	}
	if (!*p)
		return true;
	for (; *suffixes; suffixes++)
		if (!strcmp(p, *suffixes))
			return true;
	return false;
}

static int parse_u64(const char *v, uint64_t *out)
{
	char *end = NULL;
	errno = 0;
	if (!isdigit((unsigned char)*v))
		return -1;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || !end)
		return -1;
	uint64_t mul = 1;
	if (*end == 'K' || *end == 'k')
		mul = 1ull << 10, end++;
	else if (*end == 'M')
		mul = 1ull << 20, end++;
	else if (*end == 'G')
		mul = 1ull << 30, end++;
	if (*end || (n && mul > UINT64_MAX / n))
		return -1;
	*out = n * mul;
	return 0;
}

int osb_key_check(enum osb_key k, const char *v, struct err *e)
{
	static const char *const cpu_sfx[] = {"m", NULL};
	static const char *const mem_sfx[] = {"Ki", "Mi", "Gi", "Ti", "K", "M", "G", "T", NULL};
	switch (k) {
	case OK_URL:
		if ((strncmp(v, "http://", 7) && strncmp(v, "https://", 8)) || strchr(v, '?') ||
		    strchr(v, '#') || strchr(v, '@') || !strchr(v, ':')[3])
			return err_set(e, 0, v, "`url` must be http://HOST[:PORT][/PREFIX] or "
						"https://…, without credentials, query or fragment");
		return 0;
	case OK_API_KEY_ENV:
		if (!env_name_ok(v))
			return err_set(e, 0, v, "`api_key_env` is the NAME of a variable holding "
						"the key (letters, digits, _), never the key itself");
		return 0;
	case OK_IMAGE:
	case OK_ENTRYPOINT:
		if (!*v || strpbrk(v, "\n\r"))
			return err_set(e, 0, v, "`%s` must be a non-empty line", keys[k]);
		return 0;
	case OK_CPU:
		if (!quantity_ok(v, cpu_sfx))
			return err_set(e, 0, v, "`cpu` must be cores (1, 0.5) or millicores (500m)");
		return 0;
	case OK_MEMORY:
		if (!quantity_ok(v, mem_sfx))
			return err_set(e, 0, v, "`memory` must be a quantity like 512Mi or 2Gi");
		return 0;
	case OK_TIMEOUT: {
		uint64_t n;
		if (parse_u64(v, &n) < 0 || (n && n < 60) || n > OSB_TIMEOUT_MAX)
			return err_set(e, 0, v, "`timeout` must be seconds, at least 60 and at most "
						"%d (the service's API allows no more), or 0 for the "
						"longest",
				       OSB_TIMEOUT_MAX);
		return 0;
	}
	case OK_WORKDIR:
		if (v[0] != '/' || !strcmp(v, "/") || strstr(v, "/..") || strpbrk(v, "\n\r"))
			return err_set(e, 0, v, "`workdir` must be an absolute directory other "
						"than /");
		return 0;
	case OK_SYNC_MAX: {
		uint64_t n;
		if (parse_u64(v, &n) < 0 || !n)
			return err_set(e, 0, v, "`sync_max` must be a size like 512M or 2G");
		return 0;
	}
	case OK__N:
		break;
	}
	return err_set(e, 0, "", "unknown [opensandbox] key");
}

void osb_settings_free(struct osb_settings *s)
{
	free(s->url);
	free(s->api_key_env);
	free(s->image);
	strv_free(&s->entrypoint);
	free(s->cpu);
	free(s->memory);
	free(s->workdir);
	memset(s, 0, sizeof *s);
}

int osb_settings_from(const char *const vals[OK__N], struct osb_settings *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	for (int k = 0; k < OK__N; k++)
		if (vals[k] && osb_key_check(k, vals[k], e) < 0) {
			err_wrap(e, "[opensandbox] %s", keys[k]);
			return -1;
		}
	if (!vals[OK_URL])
		return err_set(e, 0, "", "the opensandbox backend needs the service's URL"),
		       err_hint(e, "set `url` in the [opensandbox] table of "
				   "~/.config/agentjail/config.toml"),
		       -1;
	size_t ul = strlen(vals[OK_URL]);
	while (ul && vals[OK_URL][ul - 1] == '/')
		ul--;
	if (ul >= 3 && !strncmp(vals[OK_URL] + ul - 3, "/v1", 3))
		ul -= 3;
	out->url = xstrndup(vals[OK_URL], ul);
	out->api_key_env = xstrdup(vals[OK_API_KEY_ENV] ? vals[OK_API_KEY_ENV] : OSB_DEFAULT_KEY_ENV);
	out->image = xstrdup(vals[OK_IMAGE] ? vals[OK_IMAGE] : OSB_DEFAULT_IMAGE);
	_cleanup_free_ char *ep = xstrdup(vals[OK_ENTRYPOINT] ? vals[OK_ENTRYPOINT]
							      : OSB_DEFAULT_ENTRYPOINT);
	for (char *save = NULL, *t = strtok_r(ep, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		strv_push(&out->entrypoint, t);
	out->cpu = xstrdup(vals[OK_CPU] ? vals[OK_CPU] : OSB_DEFAULT_CPU);
	out->memory = xstrdup(vals[OK_MEMORY] ? vals[OK_MEMORY] : OSB_DEFAULT_MEMORY);
	out->timeout = vals[OK_TIMEOUT] ? strtol(vals[OK_TIMEOUT], NULL, 10) : OSB_DEFAULT_TIMEOUT;
	out->workdir = xstrdup(vals[OK_WORKDIR] ? vals[OK_WORKDIR] : OSB_DEFAULT_WORKDIR);
	out->sync_max = OSB_DEFAULT_SYNC_MAX;
	if (vals[OK_SYNC_MAX] && parse_u64(vals[OK_SYNC_MAX], &out->sync_max) < 0)
		return err_set(e, 0, vals[OK_SYNC_MAX], "[opensandbox] sync_max: not a size");
	return 0;
}
