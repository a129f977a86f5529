/* clock: the monotonic clock in milliseconds, for timeouts and durations (never a wall time). */
#pragma once

long long clock_mono_ms(void);
