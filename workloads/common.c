/*
 * common.c -- argument parsing, timing, verdicts and random numbers for
 * the workload programs (see common.h).
 */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int wl_parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s)
        return -1;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    errno = 0;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (errno != 0 || !end || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int wl_parse_name(const char *s, const char *const *names, int count)
{
    if (!s)
        return -1;
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

void wl_usage(const char *line)
{
    fprintf(stderr, "usage: %s\n", line);
    exit(2);
}

void wl_die(const char *prog, const char *what)
{
    fflush(stdout);
    fprintf(stderr, "%s: %s\n", prog, what);
    exit(1);
}

double wl_wtime_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int wl_fault_injected(void)
{
    const char *f = getenv("WL_FAULT");
    return f && strcmp(f, "1") == 0;
}

int wl_verdict(int ok, const char *how)
{
    printf("verification: %s (%s)\n", ok ? "ok" : "FAILED", how);
    fflush(stdout);
    return ok ? 0 : 1;
}

uint64_t wl_mix64(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

double wl_unit(uint64_t x)
{
    return (double)(x >> 11) * 0x1.0p-53;
}

uint64_t wl_random(uint64_t seed, uint64_t k)
{
    return wl_mix64(wl_mix64(seed) ^ (k * UINT64_C(0xd1b54a32d192ed03)));
}
