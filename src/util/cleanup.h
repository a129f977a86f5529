/* cleanup: scope-bound release of memory and file descriptors. */
#pragma once
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}
static inline void fclosep(FILE **f)
{
	if (*f)
		(void)fclose(*f);
}
static inline void closedirp(DIR **d)
{
	if (*d)
		(void)closedir(*d);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Hand ownership out of a cleanup-managed variable. */
#define steal_pointer(pp)                          \
	({                                         \
		__typeof__(*(pp)) _tmp = *(pp);    \
		*(pp) = NULL;                      \
		_tmp;                              \
	})
#define steal_fd(fdp)              \
	({                         \
		int _tmp = *(fdp); \
		*(fdp) = -1;       \
		_tmp;              \
	})
