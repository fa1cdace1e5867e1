/*
 * schedule.c -- static and affinity work sharing over the global team
 * (see schedule.h).  Pure.
 */
#include "cluster/schedule.h"

#include "base/error.h"

#include <errno.h>

int ph_dsm_static_first(long n, long chunk, long T, long t, long *begin,
                     long *end)
{
    if (n < 0 || chunk < 0 || T < 1 || t < 0 || t >= T || !begin || !end)
        return ph_fail(EINVAL, "static schedule: n %ld, chunk %ld, thread "
                       "%ld of %ld", n, chunk, t, T);
    if (chunk == 0) {
        long q = n / T, r = n % T;
        long b, e;
        if (t < r) {
            b = t * (q + 1);
            e = b + q + 1;
        } else {
            b = t * q + r;
            e = b + q;
        }
        *begin = b;
        *end = e;
        return 0;
    }
    /* chunk t starts at t * chunk (overflow-safe: compare before multiply) */
    if (t > n / chunk) {
        *begin = *end = n;
        return 0;
    }
    long b = t * chunk;
    if (b >= n) {
        *begin = *end = n;
        return 0;
    }
    *begin = b;
    *end = n - b > chunk ? b + chunk : n;
    return 0;
}

int ph_dsm_static_next(long n, long chunk, long T, long t, long *begin,
                    long *end)
{
    if (n < 0 || chunk < 0 || T < 1 || t < 0 || t >= T || !begin || !end)
        return ph_fail(EINVAL, "static schedule: n %ld, chunk %ld, thread "
                       "%ld of %ld", n, chunk, t, T);
    if (chunk == 0)
        return ph_fail(ENOENT, "static schedule: no chunk, one share");
    long b = *begin;
    if (b < 0 || b >= n)
        return ph_fail(ENOENT, "static schedule: no more chunks");
    /* next = b + T * chunk, without overflow */
    if (T > (n - b) / chunk)
        return ph_fail(ENOENT, "static schedule: no more chunks");
    long nb = b + T * chunk;
    if (nb >= n)
        return ph_fail(ENOENT, "static schedule: no more chunks");
    *begin = nb;
    *end = n - nb > chunk ? nb + chunk : n;
    return 0;
}

int ph_dsm_affinity_share(const ph_dsm_erun *runs, size_t nruns, int team,
                       int tid, size_t from, size_t *begin, size_t *end)
{
    if (team < 1 || tid < 0 || tid >= team)
        return ph_fail(EINVAL, "affinity schedule: thread %d of %d", tid,
                       team);
    size_t total = 0;
    for (size_t i = 0; i < nruns; i++)
        total += runs[i].end - runs[i].begin;
    size_t q = total / (size_t)team, r = total % (size_t)team;
    size_t t = (size_t)tid;
    size_t s0 = t < r ? t * (q + 1) : t * q + r;
    size_t e0 = s0 + q + (t < r ? 1 : 0);
    if (s0 == e0)
        return ph_fail(ENOENT, "affinity schedule: no elements for thread "
                       "%d", tid);
    /* walk the runs in concatenated coordinates */
    size_t acc = 0;
    for (size_t i = 0; i < nruns; i++) {
        size_t len = runs[i].end - runs[i].begin;
        size_t lo = acc, hi = acc + len;     /* this run's concatenated span */
        acc = hi;
        size_t a = s0 > lo ? s0 : lo, b = e0 < hi ? e0 : hi;
        if (a >= b)
            continue;
        size_t ea = runs[i].begin + (a - lo), eb = runs[i].begin + (b - lo);
        if (eb <= from)
            continue;
        if (ea < from)
            ea = from;
        *begin = ea;
        *end = eb;
        return 0;
    }
    return ph_fail(ENOENT, "affinity schedule: no more elements for thread "
                   "%d", tid);
}
