/* limits: the jail's memory and process limits as values (issue 10 item 8). Pure: parsing and
 * formatting sizes, the defaults, and how the jail's tmpfs mounts share the memory limit. The
 * enforcement (a cgroup v2 scope, else a v1 pids scope, else rlimits) lives in cgroup.c and
 * init.c. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define LIMIT_UNSET 0                 /* not given: the default applies */
#define LIMIT_UNLIMITED UINT64_MAX    /* `unlimited`: lifted */

/* The defaults. Memory: half of the host's RAM, at most 16 GiB (a `cargo build`, `make -j`
 * or `npm install` of a large project stays well under this). Processes: 4096 tasks (threads
 * count): gcc with make -j32 and cargo's thread pools stay in the hundreds. */
#define LIMITS_DEFAULT_MEM_CAP (16ULL << 30)
#define LIMITS_DEFAULT_PIDS 4096ULL
/* Below these a jail cannot even start (bwrap, init, a shell). */
#define LIMITS_MIN_MEM (32ULL << 20)
#define LIMITS_MIN_PIDS 8ULL

/* How the limits are enforced on this host (found by core/confine/cgroup.c). */
enum limits_mech {
	LIMITS_NONE = 0,  /* nothing: not probed, or danger-full-access */
	LIMITS_CGROUP,    /* a cgroup v2 scope per jail */
	LIMITS_RLIMIT,    /* rlimits set by the jail's init */
	LIMITS_CGROUP_V1, /* a cgroup v1 pids scope per jail (pids.max); memory by RLIMIT_DATA */
};

/* "512M", "4G", "1.5G" is refused (whole numbers only), "1073741824" (bytes), K/M/G/T with an
 * optional "i"/"iB"/"B" (all binary: 1K = 1024), "unlimited". 0, or -1 when malformed, zero or
 * too large; *out untouched then. */
int limits_parse_size(const char *s, uint64_t *out);
/* A count: digits, or "unlimited". 0, or -1. */
int limits_parse_count(const char *s, uint64_t *out);
/* The shortest exact form: "unlimited", "4G", "512M", "64K", or bytes. Writes into buf. */
const char *limits_format_size(uint64_t v, char *buf, unsigned long len);

/* The default memory limit on a host with `ram` bytes of RAM (0 when unknown: 4 GiB). */
uint64_t limits_default_memory(uint64_t ram);

/* Unset limits take their defaults (memory from the host's RAM); set ones stay. */
void limits_resolve(uint64_t *memory, uint64_t *pids, uint64_t ram);

/* The jail's five tmpfs mounts. */
struct tmpfs_sizes {
	uint64_t tmp, vartmp, run, shm, home;
};
/* Sizes for a jail with memory limit `mem` (UNSET or UNLIMITED: the full defaults, 7 GiB in
 * all). Otherwise each mount keeps a minimum and the rest of the limit is shared in proportion
 * to the defaults, so the five together never promise more than the limit (page multiples). */
void limits_tmpfs_sizes(uint64_t mem, struct tmpfs_sizes *out);
