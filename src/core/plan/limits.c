#include "core/plan/limits.h"

#include <stdio.h>
#include <string.h>

int limits_parse_count(const char *s, uint64_t *out)
{
	if (!s)
		return -1;
	if (!strcmp(s, "unlimited")) {
		*out = LIMIT_UNLIMITED;
		return 0;
	}
	if (!*s)
		return -1;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX / 2 - d) / 10) /* far beyond anything real: refused */
			return -1;
		v = v * 10 + d;
	}
	if (v == 0)
		return -1;
	*out = v;
	return 0;
}

int limits_parse_size(const char *s, uint64_t *out)
{
	if (!s)
		return -1;
	if (!strcmp(s, "unlimited")) {
		*out = LIMIT_UNLIMITED;
		return 0;
	}
	size_t digits = strspn(s, "0123456789");
	if (digits == 0 || digits > 19)
		return -1;
	const char *suf = s + digits;
	unsigned shift = 0;
	static const char units[] = "KMGT";
	if (*suf) {
		const char *u = strchr(units, *suf >= 'a' && *suf <= 'z' ? *suf - 32 : *suf);
		if (!u)
			return -1;
		shift = 10 * (unsigned)(u - units + 1);
		const char *rest = suf + 1;
		if (strcmp(rest, "") && strcmp(rest, "i") && strcmp(rest, "iB") && strcmp(rest, "B"))
			return -1;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < digits; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	if (v == 0 || v > (UINT64_MAX / 2) >> shift)
		return -1;
	*out = v << shift;
	return 0;
}

const char *limits_format_size(uint64_t v, char *buf, unsigned long len)
{
	if (v == LIMIT_UNLIMITED) {
		snprintf(buf, len, "unlimited");
		return buf;
	}
	static const char units[] = "TGMK";
	for (unsigned i = 0; i < 4; i++) {
		unsigned shift = 10 * (4 - i);
		if (v && v % (1ULL << shift) == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift), units[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

uint64_t limits_default_memory(uint64_t ram)
{
	if (ram == 0)
		return 4ULL << 30;
	uint64_t half = ram / 2;
	if (half > LIMITS_DEFAULT_MEM_CAP)
		half = LIMITS_DEFAULT_MEM_CAP;
	if (half < LIMITS_MIN_MEM)
		half = LIMITS_MIN_MEM;
	return half & ~(uint64_t)0xfffff; /* whole MiB: it reads well in --dry-run */
}

void limits_resolve(uint64_t *memory, uint64_t *pids, uint64_t ram)
{
	if (*memory == LIMIT_UNSET)
		*memory = limits_default_memory(ram);
	if (*pids == LIMIT_UNSET)
		*pids = LIMITS_DEFAULT_PIDS;
}

#define MIB (1ULL << 20)

void limits_tmpfs_sizes(uint64_t mem, struct tmpfs_sizes *out)
{
	/* the defaults (generous for builds) and the least each keeps under a small limit */
	static const uint64_t def[5] = {4096 * MIB, 1024 * MIB, 64 * MIB, 1024 * MIB, 1024 * MIB};
	static const uint64_t min[5] = {8 * MIB, 2 * MIB, 1 * MIB, 2 * MIB, 2 * MIB};
	uint64_t got[5], sum_def = 0, sum_min = 0;
	for (int i = 0; i < 5; i++) {
		sum_def += def[i];
		sum_min += min[i];
		got[i] = def[i];
	}
	if (mem != LIMIT_UNSET && mem != LIMIT_UNLIMITED && mem < sum_def) {
		uint64_t spare = mem > sum_min ? mem - sum_min : 0;
		for (int i = 0; i < 5; i++) {
			/* in MiB to keep the product small; rounded down, so the sum stays <= mem */
			uint64_t share = (spare / MIB) * ((def[i] - min[i]) / MIB) /
					 ((sum_def - sum_min) / MIB);
			got[i] = min[i] + share * MIB;
		}
	}
	out->tmp = got[0];
	out->vartmp = got[1];
	out->run = got[2];
	out->shm = got[3];
	out->home = got[4];
}
