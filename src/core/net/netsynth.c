/* netsynth: the stub's addresses of its own and the way back to their names (see netsynth.h). */
#include "core/net/netsynth.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/xalloc.h"

static const uint8_t v4_base[4] = {198, 18, 0, 0};            /* 198.18.0.0/15 */
static const uint8_t v6_base[16] = {0x01, 0x00};              /* 100::/64 */
static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* The slot holding name, or the empty slot where it would go. */
static size_t find_slot(const struct netsynth *s, const char *name)
{
	size_t mask = s->nslots - 1;
	for (size_t i = hash(name) & mask;; i = (i + 1) & mask) {
		uint32_t idx = s->slots[i];
		if (!idx || !strcmp(s->v[idx - 1].name, name))
			return i;
	}
}

static void grow_slots(struct netsynth *s)
{
	size_t old = s->nslots;
	uint32_t *was = s->slots;
	s->nslots = old ? old * 2 : 64;
	s->slots = xcalloc(s->nslots, sizeof *s->slots);
	for (size_t i = 0; i < old; i++)
		if (was[i])
			s->slots[find_slot(s, s->v[was[i] - 1].name)] = was[i];
	free(was);
}

uint32_t netsynth_for(struct netsynth *s, const char *name)
{
	if (s->nslots) {
		size_t i = find_slot(s, name);
		if (s->slots[i])
			return s->slots[i];
	}
	if (s->n >= NETSYNTH_MAX)
		return 0;
	if ((s->n + 1) * 2 > s->nslots)
		grow_slots(s);
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	memset(&s->v[s->n], 0, sizeof s->v[s->n]);
	s->v[s->n].name = xstrdup(name);
	uint32_t idx = (uint32_t)++s->n;
	s->slots[find_slot(s, name)] = idx;
	return idx;
}

struct netsynth_entry *netsynth_get(const struct netsynth *s, uint32_t idx)
{
	return idx >= 1 && idx <= s->n ? &s->v[idx - 1] : NULL;
}

void netsynth_addr(uint32_t idx, int family, uint8_t *out)
{
	if (family == AF_INET) {
		memcpy(out, v4_base, 4);
		out[2] = (uint8_t)(idx >> 8);
		out[3] = (uint8_t)idx;
	} else {
		memcpy(out, v6_base, 16);
		out[14] = (uint8_t)(idx >> 8);
		out[15] = (uint8_t)idx;
	}
}

bool netsynth_in_range(int family, const uint8_t *addr)
{
	if (family == AF_INET6 && !memcmp(addr, v4mapped, 12))
		return netsynth_in_range(AF_INET, addr + 12);
	if (family == AF_INET)
		return addr[0] == v4_base[0] && (addr[1] & 0xfe) == v4_base[1];
	return family == AF_INET6 && !memcmp(addr, v6_base, 8);
}

uint32_t netsynth_index_of(int family, const uint8_t *addr)
{
	if (!netsynth_in_range(family, addr))
		return 0;
	if (family == AF_INET6 && !memcmp(addr, v4mapped, 12))
		return netsynth_index_of(AF_INET, addr + 12);
	uint32_t idx;
	if (family == AF_INET) {
		if (addr[1] != v4_base[1]) /* 198.19/16: the range's upper half, never given out */
			return 0;
		idx = (uint32_t)addr[2] << 8 | addr[3];
	} else {
		static const uint8_t zero[6];
		if (memcmp(addr + 8, zero, 6))
			return 0;
		idx = (uint32_t)addr[14] << 8 | addr[15];
	}
	return idx <= NETSYNTH_MAX ? idx : 0;
}

void netsynth_remember(struct netsynth_entry *e, int family, const uint8_t *addrs, size_t n,
		       long long expires_ms)
{
	struct netsynth_real *r = family == AF_INET ? &e->v4 : &e->v6;
	size_t len = family == AF_INET ? 4 : 16;
	memset(r, 0, sizeof *r);
	for (size_t i = 0; i < n && i < NETSYNTH_KEEP; i++)
		memcpy(r->addr[i], addrs + i * len, len);
	r->n = n < NETSYNTH_KEEP ? n : NETSYNTH_KEEP;
	r->expires_ms = expires_ms;
}

void netsynth_free(struct netsynth *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	free(s->slots);
	memset(s, 0, sizeof *s);
}
