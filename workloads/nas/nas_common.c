/*
 * nas_common.c -- arguments, timing, report, random numbers and
 * deterministic sums shared by the NAS-style kernels (see nas_common.h).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#endif
#include "nas_common.h"

#include <ctype.h>
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int nas_parse_class(const char *s)
{
    if (!s || !s[0] || s[1])
        return -1;
    switch (toupper((unsigned char)s[0])) {
    case 'S':
        return NAS_CLASS_S;
    case 'W':
        return NAS_CLASS_W;
    case 'A':
        return NAS_CLASS_A;
    default:
        return -1;
    }
}

char nas_class_letter(int cls)
{
    static const char letters[NAS_NCLASSES] = {'S', 'W', 'A'};
    return cls >= 0 && cls < NAS_NCLASSES ? letters[cls] : '?';
}

int nas_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !isdigit((unsigned char)s[0]))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

void nas_usage(const char *line)
{
    fprintf(stderr, "usage: %s\n", line);
    exit(2);
}

double nas_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void nas_header(const char *prog, int cls, const char *size, long iters)
{
    printf("%s: class %c, %s, %ld iterations, %d threads\n", prog,
           nas_class_letter(cls), size, iters, omp_get_max_threads());
}

int nas_check_le(const char *prog, const char *name, double value,
                 double limit)
{
    int ok = value <= limit; /* NaN fails */
    printf("%s: %s = %.6e (must be <= %.6e): %s\n", prog, name, value, limit,
           ok ? "yes" : "NO");
    return ok;
}

int nas_finish(const char *prog, double seconds, int ok)
{
    fprintf(stderr, "%s: time %.3f s\n", prog, seconds);
    printf("verification: %s\n", ok ? "ok" : "FAILED");
    fflush(stdout);
    return ok ? 0 : 1;
}

/* VAR=1 in the environment: 1, and "PROG: VAR=1: WHAT" on stderr. */
static int env_switch(const char *var, const char *prog, const char *what)
{
    const char *v = getenv(var);
    if (!v || strcmp(v, "1") != 0)
        return 0;
    fprintf(stderr, "%s: %s=1: %s\n", prog, var, what);
    return 1;
}

int nas_fault(const char *prog, const char *what)
{
    return env_switch("WL_FAULT", prog, what);
}

int nas_serial_build(const char *prog, const char *what)
{
    return env_switch("WL_SERIAL_BUILD", prog, what);
}

void *nas_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

uint64_t nas_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static double to_unit(uint64_t x)
{
    return (double)(x >> 11) * (1.0 / 9007199254740992.0); /* 2^-53 */
}

double nas_uniform(uint64_t seed, uint64_t index)
{
    return to_unit(nas_mix64(nas_mix64(seed) ^ (index * 0x9e3779b97f4a7c15ULL)));
}

void nas_rng_seed(nas_rng_t *r, uint64_t seed)
{
    r->state = nas_mix64(seed);
}

uint64_t nas_rng_next(nas_rng_t *r)
{
    r->state += 0x9e3779b97f4a7c15ULL;
    return nas_mix64(r->state);
}

double nas_rng_uniform(nas_rng_t *r)
{
    return to_unit(nas_rng_next(r));
}

uint64_t nas_rng_below(nas_rng_t *r, uint64_t n)
{
    /* Rejection keeps it exactly uniform. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = nas_rng_next(r);
    while (x >= limit);
    return x % n;
}

double nas_sum_partials(const double *part, int nthreads)
{
    double s = 0.0;
    for (int t = 0; t < nthreads; t++)
        s += part[(size_t)t * NAS_PAD];
    return s;
}
