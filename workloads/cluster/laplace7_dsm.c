/*
 * laplace7_dsm.c -- the seven Laplace implementations of paper 002
 * (SCASH, section 2, Table 1) on cluster mode's distributed shared memory:
 * one program, the implementation chosen by its first argument.
 *
 *   laplace7_dsm VARIANT N ITERS [PLACEMENT] [--no-check] [--stats PREFIX]
 *
 * The problem and the expression per point are those of workloads/laplace.c
 * (laplace_point.h): Jacobi sweeps over an N x N grid whose edge rows and
 * columns keep their values, reading one grid and writing the other, then
 * swapping them.  Both grids come from ph_cluster_alloc with PLACEMENT
 * (default block; the paper's two are `round-robin` -- Omni's malloc, page
 * k on rank k mod R -- and `block` -- ompsm_galloc, contiguous bands of
 * pages).  "A barrier" below is ph_cluster_barrier: every thread of every
 * rank, and the point where writes become visible (diffs home, write
 * notices, invalidations; home migration decides there).
 *
 * What each implementation changes (the paper's numbering):
 *   0 seq               the sequential code: rank 0, one thread, private
 *                       malloc'ed grids, no DSM in the loop (the other
 *                       ranks wait).  Table 1's column "1" of row 0.
 *   1 naive             `#pragma omp parallel for` before the row loop: per
 *                       iteration a parallel region whose implied barriers
 *                       at its start (the fork) and end (the join) are two
 *                       cluster barriers; rows 1..N-2 split schedule(static)
 *                       over the global team (ph_cluster_static_range of
 *                       N-2 rows, offset 1) -- the split that does not
 *                       match block homes (thread 0 gets rows 1..k, the
 *                       last thread fewer rows than its band).
 *   2 barrier           "barrier minimised": one parallel region around
 *                       the time loop and an `omp for` per iteration, so
 *                       one barrier per iteration (the `for`'s implied
 *                       one); each thread swaps its own grid pointers.
 *                       The row split of 1.
 *   3 manual            "manual locality": 1's structure (two barriers per
 *                       iteration) with the paper's fixed loop -- y runs
 *                       over ALL N rows with schedule(static) and skips 0
 *                       and N-1 -- so thread t's rows are exactly the band
 *                       block homes give its rank.
 *   4 manual_barrier    3's loop in 2's structure (one region, one barrier
 *                       per iteration): workloads/cluster/laplace_dsm.
 *   5 affinity          Omni's schedule(affinity, mem[y][*]): the rows
 *                       whose first byte lies in a page homed on this rank
 *                       (ph_cluster_affinity_range/_next over the grid
 *                       being written, asked again every iteration, so
 *                       rows follow homes that migrated), split over the
 *                       rank's threads; rows 0 and N-1 skipped.  1's
 *                       structure (two barriers per iteration).
 *   6 affinity_barrier  5's schedule in 2's structure (one barrier per
 *                       iteration).
 * With block homes 3-6 compute where the rows live and fetch only the one
 * row above and below each band per sweep; with round-robin homes 1-4
 * write pages homed elsewhere until migration (cluster_migrate, on by
 * default) moves each page to its single writer; 5 and 6 give the rows
 * to the ranks that home their first page, whatever the placement (with
 * round-robin and 2 pages per row that is the even ranks only).
 *
 * Every implementation computes each point with wl_laplace_row from the
 * same inputs, so the result is bit-identical to the sequential one.
 * Prints on rank 0
 *   laplace7 variant=NAME homes=PLACEMENT ranks=R threads=T n=N iters=K
 *            seconds=S first_half=A second_half=B barriers=P checksum=C
 * (S: wall time of the iterations, from a barrier before them to the last
 * one; A and B: its parts before and after the barrier ending iteration
 * K/2; P: cluster barriers per iteration; C: the sum of all N*N values in
 * row order, %.17g), then "verification: ok (HOW)" or "verification:
 * FAILED (HOW)" (exit 1): rank 0 runs the iterations sequentially on
 * private grids and compares every value bit for bit (--no-check skips
 * it).  WL_FAULT=1 corrupts one shared value first, to show that the check
 * can fail.  --stats PREFIX: every rank writes its DSM statistics
 * (ph_cluster_stats_write) to PREFIX.rR.begin.json before the first
 * iteration, PREFIX.rR.half.json at the barrier ending iteration K/2 and
 * PREFIX.rR.end.json after the last, so that the iterations' own counts
 * are the differences (bench/cluster/laplace_table1.py).
 */
#include "common.h"
#include "dsm_stats.h"
#include "laplace_point.h"

#include <omp.h>
#include <pagehome.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "laplace7_dsm"
#define USAGE PROG " VARIANT N ITERS [PLACEMENT] [--no-check] [--stats PREFIX]\n" \
    "  VARIANT: 0|seq 1|naive 2|barrier 3|manual 4|manual_barrier 5|affinity " \
    "6|affinity_barrier\n  (8 <= N <= 16384, 1 <= ITERS <= 10000000)"

enum variant {
    V_SEQ, V_NAIVE, V_BARRIER, V_MANUAL, V_MANUAL_BARRIER, V_AFFINITY,
    V_AFFINITY_BARRIER, V_COUNT
};
static const char *const names[V_COUNT] = {
    "seq", "naive", "barrier", "manual", "manual_barrier", "affinity",
    "affinity_barrier"};

/* one region around the time loop (one barrier per iteration) or a region
 * per iteration (two) */
static int one_region(int v)
{
    return v == V_BARRIER || v == V_MANUAL_BARRIER || v == V_AFFINITY_BARRIER;
}

static int parse_variant(const char *s)
{
    for (int v = 0; v < V_COUNT; v++) {
        char num[4];
        snprintf(num, sizeof num, "%d", v);
        if (!strcmp(s, names[v]) || !strcmp(s, num))
            return v;
    }
    return -1;
}

static void sweep_row(double *dst, const double *src, int n, long i)
{
    wl_laplace_row(dst + (size_t)i * n, src + (size_t)(i - 1) * n,
                   src + (size_t)i * n, src + (size_t)(i + 1) * n, n);
}

/* This thread's rows of one sweep, as the variant shares them out. */
static void sweep(int v, double *dst, const double *src, int n)
{
    long b, e;
    switch (v) {
    case V_NAIVE:
    case V_BARRIER:
        /* for (y = 1; y < n-1; y++), schedule(static) */
        if (ph_cluster_static_range(n - 2, 0, &b, &e) < 0)
            wl_die(PROG, ph_last_error());
        for (long i = b + 1; i < e + 1; i++)
            sweep_row(dst, src, n, i);
        break;
    case V_MANUAL:
    case V_MANUAL_BARRIER:
        /* for (y = 0; y < n; y++) { if (y == 0 || y == n-1) continue; } */
        if (ph_cluster_static_range(n, 0, &b, &e) < 0)
            wl_die(PROG, ph_last_error());
        for (long i = b; i < e; i++)
            if (i != 0 && i != n - 1)
                sweep_row(dst, src, n, i);
        break;
    default: {
        /* schedule(affinity, dst[y][*]) */
        size_t row_bytes = (size_t)n * sizeof(double);
        int rc = ph_cluster_affinity_range(dst, row_bytes, (size_t)n, &b, &e);
        while (rc == 0) {
            for (long i = b; i < e; i++)
                if (i != 0 && i != n - 1)
                    sweep_row(dst, src, n, i);
            rc = ph_cluster_affinity_next(dst, row_bytes, (size_t)n, &b, &e);
        }
        if (errno != ENOENT)
            wl_die(PROG, ph_last_error());
        break;
    }
    }
}

static double *private_grid(int n)
{
    double *g = malloc((size_t)n * (size_t)n * sizeof *g);
    if (!g)
        wl_die(PROG, "out of memory for a private grid");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            g[(size_t)i * n + j] = wl_laplace_initial(n, i, j);
    return g;
}

/* The sequential code on private grids: the reference, and variant 0.
 * *half_s (when not NULL) gets the time of the first ITERS/2 iterations. */
static double *sequential(int n, long iters, double *half_s)
{
    double *u = private_grid(n), *v = private_grid(n);
    double t0 = wl_wtime_s();
    for (long it = 0; it < iters; it++) {
        for (long i = 1; i < n - 1; i++)
            sweep_row(v, u, n, i);
        double *t = u;
        u = v;
        v = t;
        if (half_s && it + 1 == iters / 2)
            *half_s = wl_wtime_s() - t0;
    }
    free(v);
    return u;
}

/* PREFIX.rR.WHEN.json: this rank's DSM statistics now. */
int main(int argc, char **argv)
{
    long n_l = 0, iters = 0;
    const char *place = "block", *stats = NULL;
    int check = 1, variant = -1, pos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-check"))
            check = 0;
        else if (!strcmp(argv[i], "--stats") && i + 1 < argc)
            stats = argv[++i];
        else if (pos == 0 && (variant = parse_variant(argv[i])) >= 0)
            pos = 1;
        else if (pos == 1 && wl_parse_long(argv[i], 8, 16384, &n_l) == 0)
            pos = 2;
        else if (pos == 2 && wl_parse_long(argv[i], 1, 10000000, &iters) == 0)
            pos = 3;
        else if (pos == 3) {
            place = argv[i];
            pos = 4;
        } else
            wl_usage(USAGE);
    }
    if (pos < 3)
        wl_usage(USAGE);
    int n = (int)n_l;
    if (ph_cluster_init(&argc, &argv) < 0)
        wl_die(PROG, ph_last_error());
    int me = ph_cluster_rank(), ranks = ph_cluster_nranks();
    ph_placement_t pl;
    if (ph_placement_parse(&pl, place) < 0)
        wl_die(PROG, ph_last_error());
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *u = ph_cluster_alloc(bytes, &pl);
    double *v = ph_cluster_alloc(bytes, &pl);
    if (!u || !v)
        wl_die(PROG, ph_last_error());
    int threads = omp_get_max_threads();
    double seconds = 0, half = 0;
    const double *res = NULL;
    double *seq_res = NULL;

    /* both grids' initial values, each thread writing the rows of the
     * static split over all rows (what 3 and 4 compute; with fixed homes
     * who initialises decides nothing but the first fetches) */
#pragma omp parallel
    {
        long b, e;
        ph_cluster_static_range(n, 0, &b, &e);
        for (long i = b; i < e; i++)
            for (int j = 0; j < n; j++)
                u[(size_t)i * n + j] = v[(size_t)i * n + j] =
                    wl_laplace_initial(n, (int)i, j);
        ph_cluster_barrier();
    }
    wl_dsm_stats_snapshot(PROG, stats, me, "begin");

    if (variant == V_SEQ) {
        if (me == 0) {
            double t0 = wl_wtime_s();
            seq_res = sequential(n, iters, &half);
            seconds = wl_wtime_s() - t0;
        }
        ph_cluster_barrier();
        wl_dsm_stats_snapshot(PROG, stats, me, "half");
        res = seq_res;
    } else if (one_region(variant)) {
        double t0 = 0;
#pragma omp parallel
        {
            double *src = u, *dst = v;
#pragma omp master
            t0 = wl_wtime_s();
            for (long it = 0; it < iters; it++) {
                sweep(variant, dst, src, n);
                ph_cluster_barrier();          /* the `for`'s implied barrier */
                double *t = src;
                src = dst;
                dst = t;
                if (it + 1 == iters / 2) {
#pragma omp master
                    {
                        half = wl_wtime_s() - t0;
                        wl_dsm_stats_snapshot(PROG, stats, me, "half");
                    }
                }
            }
#pragma omp master
            seconds = wl_wtime_s() - t0;
        }
        res = iters % 2 ? v : u;
    } else {
        double *src = u, *dst = v;
        double t0 = wl_wtime_s();
        for (long it = 0; it < iters; it++) {
#pragma omp parallel
            {
                ph_cluster_barrier();          /* the region's fork */
                sweep(variant, dst, src, n);
                ph_cluster_barrier();          /* its join */
            }
            double *t = src;
            src = dst;
            dst = t;
            if (it + 1 == iters / 2) {
                half = wl_wtime_s() - t0;
                wl_dsm_stats_snapshot(PROG, stats, me, "half");
            }
        }
        seconds = wl_wtime_s() - t0;
        res = src;
    }
    if (iters < 2)
        wl_dsm_stats_snapshot(PROG, stats, me, "half");
    wl_dsm_stats_snapshot(PROG, stats, me, "end");

    if (wl_fault_injected() && me == ranks - 1 && variant != V_SEQ)
        ((double *)res)[(size_t)(n / 2) * n + n / 2] += 1e-9;
    if (wl_fault_injected() && me == 0 && variant == V_SEQ)
        seq_res[(size_t)(n / 2) * n + n / 2] += 1e-9;
    ph_cluster_barrier();
    int status = 0;
    if (me == 0) {
        double sum = 0;
        for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
            sum += res[k];
        int per_iter = variant == V_SEQ ? 0 : one_region(variant) ? 1 : 2;
        printf("laplace7 variant=%s homes=%s ranks=%d threads=%d n=%d iters=%ld "
               "seconds=%.6f first_half=%.6f second_half=%.6f barriers=%d "
               "checksum=%.17g\n", names[variant], place, ranks,
               variant == V_SEQ ? 1 : threads, n, iters, seconds, half,
               seconds - half, per_iter, sum);
        fflush(stdout);
        if (check) {
            double *ref = sequential(n, iters, NULL);
            size_t bad = 0;
            for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
                bad += memcmp(&ref[k], &res[k], sizeof ref[k]) != 0;
            char how[200];
            snprintf(how, sizeof how, "%zu of %zu values differ from a "
                     "sequential run, bit for bit; variant %s, placement %s",
                     bad, (size_t)n * (size_t)n, names[variant], place);
            status = wl_verdict(bad == 0, how);
            free(ref);
        }
    }
    free(seq_res);
    /* everybody learns the verdict */
    int *verdict = ph_cluster_alloc(sizeof(int), NULL);
    if (!verdict)
        wl_die(PROG, ph_last_error());
    if (me == 0)
        *verdict = status;
    ph_cluster_barrier();
    status = *verdict;
    ph_cluster_barrier();
    ph_cluster_free(verdict);
    ph_cluster_free(v);
    ph_cluster_free(u);
    ph_cluster_finalize();
    return status;
}
