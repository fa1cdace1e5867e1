/*
 * fft_gangs.c -- the 1D FFT of paper 002 section 3 with gangs, in one
 * process: implementations 0-4 (fft_gangs.h) over ph_gang_split /
 * ph_gang_join / ph_gang_range on the OpenMP team.
 *
 *   fft_gangs IMPL LOG2N [CACHE_KB]
 *
 * IMPL: 0 (sequential hybrid), 1 (gangs, recursive leaves, round-robin
 * pages), 2 (gangs, hybrid leaves, round-robin), 3 (as 1 on block pages),
 * 4 (as 2 on block pages), flat (no gangs: every stage over the whole
 * team).  Round-robin pages are ph_alloc's interleave; block pages are
 * placed by ph_gang_place from inside the team: equal chunks on the nodes
 * of the team's threads in thread order, so the data of the gang at every
 * level is on that gang's nodes.  N = 2^LOG2N complex doubles (3 <= LOG2N
 * <= 26); CACHE_KB (default 256) is the paper's cache size: the hybrid
 * transform goes iterative below it.
 *
 * Verification: the result must equal the sequential hybrid transform of
 * the same input (private memory) point for point -- every implementation
 * does the same arithmetic per point -- and, for N <= 4096, that
 * sequential transform must match the direct DFT to a relative error
 * below 1e-9.  The line before the verdict gives checksum and time_s (the
 * transform).
 */
#include "common.h"
#include "fft_gangs.h"

#include <omp.h>
#include <pagehome.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "fft_gangs"
#define USAGE PROG " 0|1|2|3|4|flat LOG2N [CACHE_KB]  (3 <= LOG2N <= 26, " \
                   "1 <= CACHE_KB <= 1048576)"
#define DFT_MAX_N 4096

static const char *const impls[] = {"0", "1", "2", "3", "4", "flat"};

static int team_barrier(void)
{
#pragma omp barrier
    return 0;
}

static int team_range(size_t n, size_t *b, size_t *e)
{
    size_t T = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
    size_t q = n / T, r = n % T;
    *b = t * q + (t < r ? t : r);
    *e = *b + q + (t < r);
    return 0;
}

static const fg_ops numa_ops = {ph_gang_split, ph_gang_join, ph_gang_barrier,
                                ph_gang_size, ph_gang_range, team_barrier,
                                team_range};

int main(int argc, char **argv)
{
    long log2n, cache_kb = 256;
    if (argc != 3 && argc != 4)
        wl_usage(USAGE);
    int impl = wl_parse_name(argv[1], impls, 6);
    if (impl < 0 || wl_parse_long(argv[2], 3, 26, &log2n) != 0)
        wl_usage(USAGE);
    if (argc == 4 && wl_parse_long(argv[3], 1, 1L << 20, &cache_kb) != 0)
        wl_usage(USAGE);
    size_t n = (size_t)1 << log2n;
    size_t bytes = n * sizeof(fg_cplx);
    int block = impl == 3 || impl == 4 || impl == 5;

    ph_placement_t pl;
    if (ph_placement_parse(&pl, block || impl == 0 ? "first-touch"
                                                   : "interleave") != 0)
        wl_die(PROG, ph_last_error());
    fg_cplx *S = ph_alloc(bytes, &pl), *T = ph_alloc(bytes, &pl);
    fg_cplx *w = malloc(n / 2 * sizeof *w);
    if (!S || !T || !w)
        wl_die(PROG, S && T ? "out of memory" : ph_last_error());
    fg_twiddles(w, n, 0, n / 2);
    fg_plan p = {w, n, ((size_t)cache_kb << 10) / sizeof(fg_cplx),
                 impl == 2 || impl == 4, &numa_ops, 0};
    int nodes_used = 0, place_failed = 0;
    if (block) {
#pragma omp parallel
        {
            /* a barrier of the team: its nodes are known from here on */
            if (ph_gang_barrier() < 0)
                p.failed = 1;
#pragma omp master
            {
                if (ph_gang_place(S, bytes, NULL) < 0 ||
                    ph_gang_place(T, bytes, NULL) < 0)
                    place_failed = 1;
                size_t hist[64] = {0};
                memset(S, 0, bytes);
                ph_node_histogram(S, bytes, hist, 64);
                for (int i = 0; i < 64; i++)
                    nodes_used += hist[i] > 0;
            }
        }
        if (place_failed)
            wl_die(PROG, ph_last_error());
    }
    for (size_t k = 0; k < n; k++)
        S[k] = fg_input(k);

    double t0 = wl_wtime_s();
    if (impl == 0) {
        fg_hybrid(S, T, n, &p);
    } else {
#pragma omp parallel
        {
            if (impl == 5)
                fg_flat(S, T, n, &p);
            else
                fg_impl(S, T, n, &p);
        }
    }
    double time_s = wl_wtime_s() - t0;
    if (wl_fault_injected())
        S[n / 3].re += 1e-6;

    double sum = 0.0;
    for (size_t k = 0; k < n; k++)
        sum += S[k].re + S[k].im;
    printf("%s impl=%s N=%zu cache_kb=%ld threads=%d nodes=%d checksum=%.17g "
           "time_s=%.6f\n", PROG, impls[impl], n, cache_kb,
           omp_get_max_threads(), nodes_used, sum, time_s);

    /* the sequential transform of the same input, in private memory */
    fg_cplx *x = malloc(bytes), *rs = malloc(bytes), *rt = malloc(bytes);
    if (!x || !rs || !rt)
        wl_die(PROG, "out of memory for the reference");
    for (size_t k = 0; k < n; k++)
        x[k] = rs[k] = fg_input(k);
    fg_hybrid(rs, rt, n, &p);
    size_t same;
    double e = fg_compare(S, rs, n, &same);
    int ok = !p.failed && same == n;
    char how[200];
    int len = snprintf(how, sizeof how, "%zu of %zu points equal to the "
                       "sequential hybrid FFT, relative error %.3g%s", same,
                       n, e, p.failed ? ", a gang call FAILED" : "");
    if (n <= DFT_MAX_N) {
        double derr = 0.0, mag = 0.0;
        for (size_t k = 0; k < n; k++) {
            fg_cplx d = fg_dft_point(x, n, k);
            double dd = hypot(d.re - rs[k].re, d.im - rs[k].im);
            double m = hypot(d.re, d.im);
            derr = dd > derr || dd != dd ? dd : derr;
            mag = m > mag ? m : mag;
        }
        double rel = derr / mag;
        ok = ok && rel < 1e-9;
        snprintf(how + len, sizeof how - (size_t)len,
                 "; sequential vs direct DFT %.3g", rel);
    }
    int status = wl_verdict(ok, how);
    free(x);
    free(rs);
    free(rt);
    free(w);
    ph_free(S);
    ph_free(T);
    return status;
}
