/*
 * bench_common.c -- the thread's CPU clock, medians, command-line numbers,
 * the /proc/self/status reader for the benchmark programs (see
 * bench_common.h).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#endif
#include "bench_common.h"

#include "base/sort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, ph_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t bench_median_u64(uint64_t *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, ph_cmp_u64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_parse_count(const char *s, size_t lo, size_t hi, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
        return -1;
    *out = (size_t)v;
    return 0;
}

size_t bench_parse_bytes(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return 0;
    unsigned long long mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1ull << 10;
    else if (*end == 'M' || *end == 'm')
        mult = 1ull << 20;
    else if (*end == 'G' || *end == 'g')
        mult = 1ull << 30;
    if (mult != 1)
        end++;
    if (*end || v > SIZE_MAX / mult)
        return 0;
    return (size_t)(v * mult);
}

size_t bench_status_bytes(const char *name)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kb = 0, len = strlen(name);
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, name, len) && line[len] == ':') {
            kb = strtoull(line + len + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kb * 1024;
}
