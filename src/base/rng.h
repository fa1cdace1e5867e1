/*
 * rng.h -- splitmix64 (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014), the one pseudo-random
 * source of pagehome.
 *
 * Two uses, one function:
 *   - a hash: ph_splitmix64(x) scrambles x, so a value derived from
 *     (seed, index) is reproducible without any state (random placement,
 *     injected failures);
 *   - a stream: ph_splitmix64_next(&state) advances a 64-bit state by the
 *     golden-ratio increment and returns the hash of the old state, the
 *     generator as its authors give it (shuffles, synthetic workloads).
 * Not for anything secret.
 */
#ifndef PH_BASE_RNG_H
#define PH_BASE_RNG_H

#include <stdint.h>

#define PH_SPLITMIX64_GAMMA 0x9E3779B97F4A7C15ull

/* The splitmix64 output for state x (the hash of x). */
static inline uint64_t ph_splitmix64(uint64_t x)
{
    uint64_t z = x + PH_SPLITMIX64_GAMMA;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The next number of the stream in *state. */
static inline uint64_t ph_splitmix64_next(uint64_t *state)
{
    uint64_t x = *state;
    *state = x + PH_SPLITMIX64_GAMMA;
    return ph_splitmix64(x);
}

/* Uniform in [0, 1) from the top 53 bits of r. */
static inline double ph_rng_unit(uint64_t r)
{
    return (double)(r >> 11) * (1.0 / 9007199254740992.0);
}

#endif
