/* clock: see clock.h. */
#include "util/clock.h"

#include <time.h>

long long clock_mono_ms(void)
{
	struct timespec ts;
	(void)clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail for CLOCK_MONOTONIC */
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
