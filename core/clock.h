/*
 * clock.h - the one monotonic clock of the harness, in seconds: time limits, wall times, throughput. (Backends
 * keep their own: a plugin sees only core/parity_backend.h.)
 */
#ifndef PAR_CLOCK_H
#define PAR_CLOCK_H

#include <time.h>

static inline double par_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
