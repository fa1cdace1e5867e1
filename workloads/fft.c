/*
 * fft.c -- a 1D complex FFT by recursive divide and conquer, the FFT
 * kernel of the "OpenMP on a software DSM" studies: radix-2 decimation in
 * time (Cooley-Tukey), each level an OpenMP task per half down to a
 * cutoff, below which a sequential iterative (bit-reversal + butterflies)
 * transform does the work -- the hybrid sequential base case.  The
 * butterflies of the levels above the cutoff are tasks too, one per
 * CUTOFF/2 pairs.  The access pattern is what makes placement matter:
 * every level reads its input at a stride twice the previous one, so no
 * data layout keeps all accesses local, and interleaving spreads the
 * traffic.
 *
 *   fft PLACEMENT LOG2N [CUTOFF]
 *
 * PLACEMENT is first-touch, interleave (pages round-robin over the nodes)
 * or block (one contiguous chunk per node); every array (input, output,
 * twiddle table, inverse result) comes from ph_alloc with it and is
 * initialised serially, as the original codes did.  N = 2^LOG2N complex
 * doubles; CUTOFF (default 1024) is the largest transform done by the
 * sequential base case, a power of two >= 2.
 *
 * Verification: for N <= 4096 the result must equal a direct O(N^2) DFT
 * (computed with exactly reduced angles) to a relative error below 1e-9;
 * for every N the inverse transform of the result must give the input
 * back to a relative error below 1e-9.  The checksum (sum of the real and
 * imaginary parts) does not depend on the placement or the thread count.
 */
#include "common.h"

#include <omp.h>
#include <pagehome.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PROG "fft"
#define USAGE PROG " first-touch|interleave|block LOG2N [CUTOFF]" \
                   "  (3 <= LOG2N <= 28; CUTOFF a power of two, 2..2^28, default 1024)"
#define DFT_MAX_N 4096
#define MAX_REL_ERROR 1e-9

typedef struct cplx {
    double re, im;
} cplx;

static const char *const placements[] = {"first-touch", "interleave", "block"};

static cplx cmul(cplx a, cplx b)
{
    cplx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}

/* Twiddles of the whole transform: w[k] = exp(-2 pi i k / N), k < N/2;
 * a transform of size m uses w[k * N/m]. */
typedef struct plan {
    const cplx *w;
    size_t cutoff;
} plan;

/* out[k] = in[rev(k) * stride], then butterflies in place. */
static void fft_base(const cplx *in, size_t stride, cplx *out, size_t m,
                     size_t wstride, const plan *p)
{
    int bits = 0;
    while (((size_t)1 << bits) < m)
        bits++;
    for (size_t k = 0; k < m; k++) {
        size_t r = 0;
        for (int b = 0; b < bits; b++)
            r |= ((k >> b) & 1u) << (bits - 1 - b);
        out[k] = in[r * stride];
    }
    for (size_t len = 2; len <= m; len *= 2) {
        size_t half = len / 2, step = wstride * (m / len);
        for (size_t b = 0; b < m; b += len) {
            for (size_t k = 0; k < half; k++) {
                cplx t = cmul(p->w[k * step], out[b + k + half]);
                cplx a = out[b + k];
                out[b + k].re = a.re + t.re;
                out[b + k].im = a.im + t.im;
                out[b + k + half].re = a.re - t.re;
                out[b + k + half].im = a.im - t.im;
            }
        }
    }
}

static void butterflies(cplx *out, size_t half, size_t k0, size_t k1,
                        size_t wstride, const plan *p)
{
    for (size_t k = k0; k < k1; k++) {
        cplx t = cmul(p->w[k * wstride], out[half + k]);
        cplx a = out[k];
        out[k].re = a.re + t.re;
        out[k].im = a.im + t.im;
        out[half + k].re = a.re - t.re;
        out[half + k].im = a.im - t.im;
    }
}

/* The transform of the m elements in[0], in[stride], ... into out[0..m). */
static void fft_rec(const cplx *in, size_t stride, cplx *out, size_t m,
                    size_t wstride, const plan *p)
{
    if (m <= p->cutoff) {
        fft_base(in, stride, out, m, wstride, p);
        return;
    }
    size_t half = m / 2;
#pragma omp task
    fft_rec(in, 2 * stride, out, half, 2 * wstride, p);
#pragma omp task
    fft_rec(in + stride, 2 * stride, out + half, half, 2 * wstride, p);
#pragma omp taskwait
    size_t grain = p->cutoff / 2;
    for (size_t k0 = 0; k0 < half; k0 += grain) {
        size_t k1 = k0 + grain < half ? k0 + grain : half;
#pragma omp task
        butterflies(out, half, k0, k1, wstride, p);
    }
#pragma omp taskwait
}

static void fft(const cplx *in, cplx *out, size_t n, const plan *p)
{
#pragma omp parallel
#pragma omp single
    fft_rec(in, 1, out, n, 1, p);
}

static cplx *alloc_placed(size_t count, const ph_placement_t *pl)
{
    cplx *a = ph_alloc(count * sizeof(cplx), pl);
    if (!a)
        wl_die(PROG, ph_last_error());
    return a;
}

/* max |a - b| / max |b| */
static double rel_error(const cplx *a, const cplx *b, size_t n)
{
    double err = 0.0, mag = 0.0;
    for (size_t k = 0; k < n; k++) {
        double d = hypot(a[k].re - b[k].re, a[k].im - b[k].im);
        double m = hypot(b[k].re, b[k].im);
        if (!(d <= err))
            err = d; /* also catches NaN */
        if (m > mag)
            mag = m;
    }
    return mag > 0.0 ? err / mag : err;
}

/* Direct DFT: the angle of x[j] in X[k] is 2 pi (j k mod n) / n. */
static cplx *direct_dft(const cplx *x, size_t n)
{
    cplx *X = malloc(n * sizeof *X);
    cplx *e = malloc(n * sizeof *e);
    if (!X || !e)
        wl_die(PROG, "out of memory for the DFT");
    const double two_pi = 6.283185307179586476925286766559;
    for (size_t m = 0; m < n; m++) {
        e[m].re = cos(two_pi * (double)m / (double)n);
        e[m].im = -sin(two_pi * (double)m / (double)n);
    }
    for (size_t k = 0; k < n; k++) {
        cplx s = {0.0, 0.0};
        for (size_t j = 0; j < n; j++) {
            cplx t = cmul(x[j], e[(j * k) % n]);
            s.re += t.re;
            s.im += t.im;
        }
        X[k] = s;
    }
    free(e);
    return X;
}

int main(int argc, char **argv)
{
    long log2n, cutoff = 1024;
    if (argc != 3 && argc != 4)
        wl_usage(USAGE);
    int which = wl_parse_name(argv[1], placements, 3);
    if (which < 0 || wl_parse_long(argv[2], 3, 28, &log2n) != 0)
        wl_usage(USAGE);
    if (argc == 4 && (wl_parse_long(argv[3], 2, 1L << 28, &cutoff) != 0 ||
                      (cutoff & (cutoff - 1)) != 0))
        wl_usage(USAGE);
    size_t n = (size_t)1 << log2n;

    ph_placement_t pl;
    if (ph_placement_parse(&pl, placements[which]) != 0)
        wl_die(PROG, ph_last_error());
    cplx *x = alloc_placed(n, &pl);
    cplx *y = alloc_placed(n, &pl);
    cplx *z = alloc_placed(n, &pl);
    cplx *w = alloc_placed(n / 2, &pl);

    /* serial initialisation: input in [-1, 1)^2, twiddles */
    const double two_pi = 6.283185307179586476925286766559;
    for (size_t k = 0; k < n; k++) {
        x[k].re = 2.0 * wl_unit(wl_random(1, 2 * k)) - 1.0;
        x[k].im = 2.0 * wl_unit(wl_random(1, 2 * k + 1)) - 1.0;
    }
    for (size_t k = 0; k < n / 2; k++) {
        w[k].re = cos(two_pi * (double)k / (double)n);
        w[k].im = -sin(two_pi * (double)k / (double)n);
    }
    plan p = {w, (size_t)cutoff};

    double t0 = wl_wtime_s();
    fft(x, y, n, &p);
    double time_s = wl_wtime_s() - t0;
    if (wl_fault_injected())
        y[n / 3].re += 1e-3 * sqrt((double)n);

    double sum = 0.0;
    for (size_t k = 0; k < n; k++)
        sum += y[k].re + y[k].im;
    printf("%s %s: N=%zu cutoff=%ld threads=%d checksum=%.17g time_s=%.6f\n",
           PROG, placements[which], n, cutoff, omp_get_max_threads(), sum, time_s);

    int ok = 1;
    char how[160];
    int len = 0;
    if (n <= DFT_MAX_N) {
        cplx *X = direct_dft(x, n);
        double e = rel_error(y, X, n);
        ok = e < MAX_REL_ERROR;
        len = snprintf(how, sizeof how, "direct DFT: relative error %.3g; ", e);
        free(X);
    }
    /* inverse: x = conj(FFT(conj(y))) / n, into z */
    for (size_t k = 0; k < n; k++)
        y[k].im = -y[k].im;
    fft(y, z, n, &p);
    for (size_t k = 0; k < n; k++) {
        z[k].re = z[k].re / (double)n;
        z[k].im = -z[k].im / (double)n;
    }
    double e = rel_error(z, x, n);
    ok = ok && e < MAX_REL_ERROR;
    snprintf(how + len, sizeof how - (size_t)len,
             "inverse transform: relative error %.3g; limit %g", e, MAX_REL_ERROR);
    int status = wl_verdict(ok, how);
    ph_free(x);
    ph_free(y);
    ph_free(z);
    ph_free(w);
    return status;
}
