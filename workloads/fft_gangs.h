/*
 * fft_gangs.h -- the 1D FFT of paper 002 section 3, implementations 0-4,
 * written once over gang calls and used by workloads/fft_gangs.c (one
 * process, ph_gang_*) and workloads/cluster/fft_dsm.c (cluster mode,
 * ph_cluster_gang_*).  Radix-2 decimation in time on the paper's two
 * arrays: S holds the input and gets the result, T is the buffer.
 *
 *   Hybrid(S, T, n)  (implementation 0, sequential): n = 1 returns; when
 *     n points fit in the cache size, the iterative transform in place
 *     (bit reversal, butterflies); else split the even points of S into
 *     T[0, n/2) and the odd ones into T[n/2, n), transform both halves
 *     (with S as their buffer), combine into S:
 *     S[j] = T[k] + w^j T[k + n/2], k = j mod n/2, w = exp(-2 pi i / n).
 *   Impl01(S, T, n, gang): the same recursion, the split and combine
 *     loops shared by the threads of the current gang (each its share,
 *     ph_gang_range); with more than one thread the gang splits in two
 *     (the split waits for the shared split loop: the paper's first
 *     barrier), each half-gang takes one half, and the join waits for both
 *     (the second barrier).  A gang of one thread recurses into both
 *     halves alone -- recursively down to n = 1 (implementations 1 and
 *     3), or by switching to Hybrid (2 and 4).
 *   Implementations 1 and 2 use round-robin pages, 3 and 4 block pages
 *   (the caller's placement).  `flat` is the same transform without
 *   gangs: the iterative algorithm with every stage shared by the whole
 *   team and a team barrier after each (what "#pragma omp for" per stage
 *   gives), for the comparison of pages fetched in cluster mode.
 *
 * Twiddles come from one table of the whole transform, w[k] = exp(-2 pi i
 * k / N), k < N/2; a transform of size m uses w[k N / m] (w^(k + m/2) =
 * -w^k), so every implementation does the same arithmetic in the same
 * order per point and matches Hybrid bit for bit.
 */
#ifndef WL_FFT_GANGS_H
#define WL_FFT_GANGS_H

#include "common.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fg_cplx {
    double re, im;
} fg_cplx;

/* The gang calls of one mode. */
typedef struct fg_ops {
    int (*split)(int count);
    int (*join)(void);
    int (*barrier)(void);        /* of the calling thread's gang */
    int (*size)(void);           /* threads of the calling thread's gang */
    int (*range)(size_t n, size_t *b, size_t *e); /* its share of [0, n) */
    int (*team_barrier)(void);   /* the whole team (flat) */
    int (*team_range)(size_t n, size_t *b, size_t *e);
} fg_ops;

typedef struct fg_plan {
    const fg_cplx *w;            /* N / 2 twiddles */
    size_t N;                    /* points of the whole transform */
    size_t cache_points;         /* Hybrid: iterative below this */
    int hybrid_leaves;           /* implementations 2 and 4 */
    const fg_ops *ops;
    int failed;                  /* a gang call failed (any thread) */
} fg_plan;

static inline fg_cplx fg_mul(fg_cplx a, fg_cplx b)
{
    fg_cplx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}

/* S[j] for j in [j0, j1) from the two half transforms in T */
static inline void fg_combine(fg_cplx *S, const fg_cplx *T, size_t n,
                              size_t j0, size_t j1, const fg_plan *p)
{
    size_t h = n / 2, ws = p->N / n;
    for (size_t j = j0; j < j1; j++) {
        size_t k = j < h ? j : j - h;
        fg_cplx t = fg_mul(p->w[k * ws], T[k + h]);
        if (j < h) {
            S[j].re = T[k].re + t.re;
            S[j].im = T[k].im + t.im;
        } else {
            S[j].re = T[k].re - t.re;
            S[j].im = T[k].im - t.im;
        }
    }
}

static inline void fg_split_loop(const fg_cplx *S, fg_cplx *T, size_t n,
                                 size_t j0, size_t j1)
{
    size_t h = n / 2;
    for (size_t j = j0; j < j1; j++) {
        T[j] = S[2 * j];
        T[j + h] = S[2 * j + 1];
    }
}

/* one butterfly of a stage: b in [0, n/2), span len */
static inline void fg_butterfly(fg_cplx *a, size_t b, size_t len,
                                const fg_plan *p, size_t ws_base)
{
    size_t half = len / 2;
    size_t i = (b / half) * len + b % half, k = b % half;
    fg_cplx t = fg_mul(p->w[k * (ws_base / len)], a[i + half]);
    fg_cplx u = a[i];
    a[i].re = u.re + t.re;
    a[i].im = u.im + t.im;
    a[i + half].re = u.re - t.re;
    a[i + half].im = u.im - t.im;
}

static inline size_t fg_bitrev(size_t k, int bits)
{
    size_t r = 0;
    for (int b = 0; b < bits; b++)
        r |= ((k >> b) & 1u) << (bits - 1 - b);
    return r;
}

/* The iterative transform of a[0, n) in place. */
static inline void fg_iterative(fg_cplx *a, size_t n, const fg_plan *p)
{
    int bits = 0;
    while (((size_t)1 << bits) < n)
        bits++;
    for (size_t k = 0; k < n; k++) {
        size_t r = fg_bitrev(k, bits);
        if (r > k) {
            fg_cplx t = a[k];
            a[k] = a[r];
            a[r] = t;
        }
    }
    for (size_t len = 2; len <= n; len *= 2)
        for (size_t b = 0; b < n / 2; b++)
            fg_butterfly(a, b, len, p, p->N);
}

/* Implementation 0 (and the leaves of 2 and 4). */
static inline void fg_hybrid(fg_cplx *S, fg_cplx *T, size_t n,
                             const fg_plan *p)
{
    if (n == 1)
        return;
    if (n < p->cache_points) {
        fg_iterative(S, n, p);
        return;
    }
    fg_split_loop(S, T, n, 0, n / 2);
    fg_hybrid(T, S, n / 2, p);
    fg_hybrid(T + n / 2, S + n / 2, n / 2, p);
    fg_combine(S, T, n, 0, n, p);
}

/* The plain recursion down to one point (a gang of one, impl 1 and 3). */
static inline void fg_recursive(fg_cplx *S, fg_cplx *T, size_t n,
                                const fg_plan *p)
{
    if (n == 1)
        return;
    fg_split_loop(S, T, n, 0, n / 2);
    fg_recursive(T, S, n / 2, p);
    fg_recursive(T + n / 2, S + n / 2, n / 2, p);
    fg_combine(S, T, n, 0, n, p);
}

/* Implementations 1-4: called by every thread of the current gang. */
static inline void fg_impl(fg_cplx *S, fg_cplx *T, size_t n, fg_plan *p)
{
    if (n == 1)
        return;
    const fg_ops *o = p->ops;
    int g = o->size();
    if (g == 1) {
        if (p->hybrid_leaves)
            fg_hybrid(S, T, n, p);
        else
            fg_recursive(S, T, n, p);
        return;
    }
    size_t b, e;
    o->range(n / 2, &b, &e);
    fg_split_loop(S, T, n, b, e);
    int half = o->split(2);
    if (half < 0) {
        p->failed = 1;
        return;
    }
    if (half == 0)
        fg_impl(T, S, n / 2, p);
    else
        fg_impl(T + n / 2, S + n / 2, n / 2, p);
    if (o->join() < 0)
        p->failed = 1;
    o->range(n, &b, &e);
    fg_combine(S, T, n, b, e, p);
}

/* Without gangs: the iterative transform of S, every stage shared by the
 * whole team (result in S; T is the buffer of the bit reversal). */
static inline void fg_flat(fg_cplx *S, fg_cplx *T, size_t n, fg_plan *p)
{
    const fg_ops *o = p->ops;
    int bits = 0;
    while (((size_t)1 << bits) < n)
        bits++;
    size_t b, e;
    o->team_range(n, &b, &e);
    for (size_t k = b; k < e; k++)
        T[k] = S[fg_bitrev(k, bits)];
    if (o->team_barrier() < 0)
        p->failed = 1;
    for (size_t len = 2; len <= n; len *= 2) {
        o->team_range(n / 2, &b, &e);
        for (size_t k = b; k < e; k++)
            fg_butterfly(T, k, len, p, p->N);
        if (o->team_barrier() < 0)
            p->failed = 1;
    }
    o->team_range(n, &b, &e);
    for (size_t k = b; k < e; k++)
        S[k] = T[k];
    if (o->team_barrier() < 0)
        p->failed = 1;
}

/* The input (the same in every mode): x[k] in [-1, 1)^2. */
static inline fg_cplx fg_input(size_t k)
{
    fg_cplx x = {2.0 * wl_unit(wl_random(1, 2 * k)) - 1.0,
                 2.0 * wl_unit(wl_random(1, 2 * k + 1)) - 1.0};
    return x;
}

/* Compare a result with the sequential one: *same = points equal bit for
 * bit; returns max |a - b| / max |b| (NaN counts as an error). */
static inline double fg_compare(const fg_cplx *a, const fg_cplx *b, size_t n,
                                size_t *same)
{
    double err = 0.0, mag = 0.0;
    *same = 0;
    for (size_t k = 0; k < n; k++) {
        *same += a[k].re == b[k].re && a[k].im == b[k].im;
        double d = hypot(a[k].re - b[k].re, a[k].im - b[k].im);
        double m = hypot(b[k].re, b[k].im);
        if (!(d <= err))
            err = d;
        if (m > mag)
            mag = m;
    }
    return mag > 0.0 ? err / mag : err;
}

/* The direct DFT of x[0, n) at point k (angles reduced exactly): checks
 * the sequential transform itself on small sizes. */
static inline fg_cplx fg_dft_point(const fg_cplx *x, size_t n, size_t k)
{
    const double two_pi = 6.283185307179586476925286766559;
    fg_cplx s = {0.0, 0.0};
    for (size_t j = 0; j < n; j++) {
        double a = two_pi * (double)((j * k) % n) / (double)n;
        fg_cplx e = {cos(a), -sin(a)};
        fg_cplx t = fg_mul(x[j], e);
        s.re += t.re;
        s.im += t.im;
    }
    return s;
}

/* The twiddles. */
static inline void fg_twiddles(fg_cplx *w, size_t N, size_t k0, size_t k1)
{
    const double two_pi = 6.283185307179586476925286766559;
    for (size_t k = k0; k < k1; k++) {
        w[k].re = cos(two_pi * (double)k / (double)N);
        w[k].im = -sin(two_pi * (double)k / (double)N);
    }
}

#endif
