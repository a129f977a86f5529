/* Helpers shared by the fuzz targets. */
#pragma once
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An invariant: when it does not hold, say which and abort (libFuzzer keeps the input). */
#define FUZZ_CHECK(c)                                                                      \
	do {                                                                               \
		if (!(c)) {                                                                \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                           \
		}                                                                          \
	} while (0)

/* A copy of exactly n bytes (at least one allocated), so that ASan sees a read past n. */
static inline void *fuzz_dup(const void *d, size_t n)
{
	void *p = malloc(n ? n : 1);
	FUZZ_CHECK(p);
	memcpy(p, d, n);
	return p;
}

/* The input as a NUL-terminated string (a NUL inside ends it early, as C code would read it). */
static inline char *fuzz_cstr(const void *d, size_t n)
{
	char *s = malloc(n + 1);
	FUZZ_CHECK(s);
	memcpy(s, d, n);
	s[n] = '\0';
	return s;
}
