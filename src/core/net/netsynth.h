/* netsynth: the addresses of their own that the DNS stub of `--net allow` answers allowed names
 * with, and the way back from such an address to its name (doc/design.md §4, capture). One
 * address per name and family, stable for the session: 198.18.0.0/15 (RFC 2544, benchmarking)
 * for A and 100::/64 (RFC 6666, discard-only) for AAAA, ranges no real host uses and that
 * netaddr_classify already calls reserved. A connection the jail makes to such an address is
 * captured and decided for the name it stands for; the name's real addresses (the host's
 * resolver's answer, kept here for a while) are what the host connects to. Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NETSYNTH_MAX 65535 /* names per session: 198.18.0.1 … 198.18.255.255, 100::1 … 100::ffff */
#define NETSYNTH_KEEP 8    /* real addresses kept per name and family */

struct netsynth_real {
	uint8_t addr[NETSYNTH_KEEP][16]; /* IPv4 in the first 4 bytes */
	size_t n;
	long long expires_ms;            /* the caller's clock; 0: nothing kept */
};

struct netsynth_entry {
	char *name;                      /* normalized (net_host_normalize) */
	struct netsynth_real v4, v6;     /* what the host resolved the name to, lately */
};

struct netsynth {
	struct netsynth_entry *v;        /* v[i] is index i + 1 */
	size_t n, cap;
	uint32_t *slots;                 /* hash of names → index (0 empty) */
	size_t nslots;
};

/* The index of name, given one if it has none yet. 0 when the table is full. */
uint32_t netsynth_for(struct netsynth *s, const char *name);
/* The entry of an index given out, or NULL. */
struct netsynth_entry *netsynth_get(const struct netsynth *s, uint32_t idx);
/* The address of index idx in family (AF_INET: 4 bytes written, AF_INET6: 16). */
void netsynth_addr(uint32_t idx, int family, uint8_t *out);
/* Whether addr lies in one of the two ranges (an IPv4-mapped IPv6 address as its IPv4). */
bool netsynth_in_range(int family, const uint8_t *addr);
/* The index addr stands for (in range, whether given out or not), or 0 outside the ranges or
 * for a number no index has (the ranges' first address and what lies past NETSYNTH_MAX). */
uint32_t netsynth_index_of(int family, const uint8_t *addr);
/* Keep the host's answer for a family of an entry: n addresses (4 or 16 bytes each, packed in
 * addrs as `family` says), good until expires_ms. More than NETSYNTH_KEEP: the first ones. */
void netsynth_remember(struct netsynth_entry *e, int family, const uint8_t *addrs, size_t n,
		       long long expires_ms);
void netsynth_free(struct netsynth *s);
