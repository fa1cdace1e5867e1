/*
 * clock.h -- the one monotonic clock of pagehome.
 *
 * Every duration pagehome measures (mover back-off, sampler intervals,
 * engine timing, benchmarks) is a difference of ph_now_ns() readings:
 * CLOCK_MONOTONIC in nanoseconds, which never jumps with the wall clock.
 * clock_gettime(2) is async-signal-safe, so the SIGSEGV handler may call
 * this too.
 */
#ifndef PH_BASE_CLOCK_H
#define PH_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC (an arbitrary but fixed origin). */
static inline uint64_t ph_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
