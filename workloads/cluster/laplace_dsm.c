/*
 * laplace_dsm.c -- the 2D Laplace Jacobi solver of workloads/laplace.c on
 * cluster mode's distributed shared memory: the OpenMP program paper 002
 * runs on SCASH, written against pagehome's cluster API.
 *
 *   laplace_dsm N ITERS [PLACEMENT] [--no-check]
 *
 * Both grids come from ph_cluster_alloc with PLACEMENT (default block:
 * each rank is the home of a contiguous band of rows).  One parallel
 * region per rank around the time loop; every sweep gives each thread of
 * the global team (ranks x OMP_NUM_THREADS) its rows with
 * ph_cluster_static_range over ALL N rows, skipping the two boundary rows
 * -- paper 002's fix that makes the work split match the block homes --
 * then ph_cluster_barrier, then the grids swap.  A rank only ever reads
 * the one row above and below its band from other ranks (fetched once per
 * sweep, invalidated by the barrier's write notices).  The initial values
 * and the expression per point are those of workloads/laplace.c, so the
 * checksum equals `laplace seq N ITERS` (and laplace_mpi's) bit for bit.
 *
 * Prints on rank 0
 *   laplace ranks=R threads=T seconds=S checksum=C
 * (S: wall time of the iterations between two cluster barriers, C: the
 * sum of all N*N values in row order, %.17g), then "verification: ok
 * (HOW)" or "verification: FAILED (HOW)" (exit 1): rank 0 runs the same
 * iterations sequentially on private grids and compares every value
 * (--no-check skips it).  WL_FAULT=1 corrupts one shared value first, to
 * show that the check can fail.
 */
#include "common.h"
#include "laplace_point.h"

#include <omp.h>
#include <pagehome.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "laplace_dsm"
#define USAGE PROG " N ITERS [PLACEMENT] [--no-check]  (8 <= N <= 16384, " \
                   "1 <= ITERS <= 10000000)"

static double *reference(int n, long iters)
{
    double *u = malloc((size_t)n * (size_t)n * sizeof *u);
    double *v = malloc((size_t)n * (size_t)n * sizeof *v);
    if (!u || !v)
        wl_die(PROG, "out of memory for the reference grids");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            u[(size_t)i * n + j] = v[(size_t)i * n + j] = wl_laplace_initial(n, i, j);
    for (long it = 0; it < iters; it++) {
        for (int i = 1; i < n - 1; i++)
            wl_laplace_row(v + (size_t)i * n, u + (size_t)(i - 1) * n,
                      u + (size_t)i * n, u + (size_t)(i + 1) * n, n);
        double *t = u;
        u = v;
        v = t;
    }
    free(v);
    return u;
}

int main(int argc, char **argv)
{
    long n_l = 0, iters = 0;
    const char *place = "block";
    int check = 1;
    int pos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-check"))
            check = 0;
        else if (pos == 0 && wl_parse_long(argv[i], 8, 16384, &n_l) == 0)
            pos = 1;
        else if (pos == 1 && wl_parse_long(argv[i], 1, 10000000, &iters) == 0)
            pos = 2;
        else if (pos == 2) {
            place = argv[i];
            pos = 3;
        } else
            wl_usage(USAGE);
    }
    if (pos < 2)
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
    double seconds = 0;
#pragma omp parallel
    {
        long b, e;
        /* each thread initialises the rows it will compute (so first-touch
         * placements put them where they are used) */
        ph_cluster_static_range(n, 0, &b, &e);
        for (long i = b; i < e; i++)
            for (int j = 0; j < n; j++)
                u[(size_t)i * n + j] = v[(size_t)i * n + j] =
                    wl_laplace_initial(n, (int)i, j);
        ph_cluster_barrier();
        double t0 = wl_wtime_s();
        double *src = u, *dst = v;
        for (long it = 0; it < iters; it++) {
            for (long i = b; i < e; i++) {
                if (i == 0 || i == n - 1)
                    continue;
                wl_laplace_row(dst + (size_t)i * n, src + (size_t)(i - 1) * n,
                          src + (size_t)i * n, src + (size_t)(i + 1) * n, n);
            }
            ph_cluster_barrier();
            double *t = src;
            src = dst;
            dst = t;
        }
#pragma omp master
        seconds = wl_wtime_s() - t0;
    }
    double *res = iters % 2 ? v : u;
    if (wl_fault_injected() && me == ranks - 1)
        res[(size_t)(n / 2) * n + n / 2] += 1e-9;
    ph_cluster_barrier();
    int status = 0;
    if (me == 0) {
        double sum = 0;
        for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
            sum += res[k];
        printf("laplace ranks=%d threads=%d seconds=%.6f checksum=%.17g\n",
               ranks, threads, seconds, sum);
        fflush(stdout);
        if (check) {
            double *ref = reference(n, iters);
            size_t bad = 0;
            for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
                bad += memcmp(&ref[k], &res[k], sizeof ref[k]) != 0;
            char how[160];
            snprintf(how, sizeof how, "%zu of %zu values differ from a "
                     "sequential run, bit for bit; placement %s", bad,
                     (size_t)n * (size_t)n, place);
            status = wl_verdict(bad == 0, how);
            free(ref);
        }
    }
    /* everybody learns the verdict */
    int *verdict = ph_cluster_alloc(sizeof(int), NULL);
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
