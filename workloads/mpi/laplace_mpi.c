/*
 * laplace_mpi.c -- the 2D Laplace Jacobi solver of workloads/laplace.c
 * written by hand for MPI: what a cluster runs when its programmer
 * distributes the data, the physical limit cluster mode's DSM Laplace is
 * measured against (bench/cluster, bench/README.md "Cluster").
 *
 *   laplace_mpi N ITERS [--no-check]
 *
 * Row-block decomposition: the N-2 interior rows are split into R
 * contiguous blocks (the first (N-2) mod R ranks one row more), rank r
 * holding its rows plus one halo row above and below.  Each iteration
 * sends the block's first row up and last row down with MPI_Sendrecv
 * (MPI_PROC_NULL past the ends, where the halo is the fixed boundary
 * row), then sweeps the block with `#pragma omp parallel for
 * schedule(static)` (OpenMP threads inside each rank: OMP_NUM_THREADS),
 * then swaps the grids: Jacobi as in paper 002's Laplace, the same
 * initial values and the same expression per point as workloads/laplace.c,
 * so the checksum is the same bit for bit as `laplace seq N ITERS`.
 *
 * Prints on rank 0
 *   laplace ranks=R threads=T seconds=S checksum=C
 * (S: wall time of the iterations, between two barriers; C: the sum of
 * all N*N values in row order, %.17g), then "verification: ok (HOW)" or
 * "verification: FAILED (HOW)" (exit 1): rank 0 gathers the grid and
 * compares every value and the checksum with a sequential run of the same
 * iterations on one grid (--no-check skips it).  WL_FAULT=1 corrupts one
 * gathered value first, to show that the check can fail.
 */
#include "common.h"
#include "laplace_point.h"

#include <mpi.h>
#include <omp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "laplace_mpi N ITERS [--no-check]  (8 <= N <= 16384, 1 <= ITERS <= 10000000)"

/* Rank r's interior rows [lo, hi) of 1..n-2. */
static void block_of(int n, int ranks, int r, int *lo, int *hi)
{
    int rows = n - 2, base = rows / ranks, extra = rows % ranks;
    *lo = 1 + r * base + (r < extra ? r : extra);
    *hi = *lo + base + (r < extra);
}

static double *grid_alloc(size_t rows, int n)
{
    double *g = malloc(rows * (size_t)n * sizeof *g);
    if (!g)
        wl_die("laplace_mpi", "out of memory for the grids");
    return g;
}

/* The same iterations on one whole grid (the reference). */
static double *sequential(int n, long iters)
{
    double *u = grid_alloc((size_t)n, n), *un = grid_alloc((size_t)n, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            u[(size_t)i * n + j] = un[(size_t)i * n + j] = wl_laplace_initial(n, i, j);
    for (long t = 0; t < iters; t++) {
        for (int i = 1; i < n - 1; i++)
            wl_laplace_row(un + (size_t)i * n, u + (size_t)(i - 1) * n, u + (size_t)i * n,
                      u + (size_t)(i + 1) * n, n);
        double *tmp = u;
        u = un;
        un = tmp;
    }
    free(un);
    return u;
}

static double checksum(const double *g, int n)
{
    double s = 0.0;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        s += g[k];
    return s;
}

int main(int argc, char **argv)
{
    long n_l, iters;
    int check = 1;
    if (argc == 4 && strcmp(argv[3], "--no-check") == 0)
        check = 0;
    else if (argc != 3)
        wl_usage(USAGE);
    if (wl_parse_long(argv[1], 8, 16384, &n_l) != 0 ||
        wl_parse_long(argv[2], 1, 10000000, &iters) != 0)
        wl_usage(USAGE);
    int n = (int)n_l, rank, ranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks > n - 2) {
        if (rank == 0)
            fprintf(stderr, "laplace_mpi: %d ranks for %d interior rows\n", ranks, n - 2);
        MPI_Finalize();
        return 2;
    }
    int lo, hi;
    block_of(n, ranks, rank, &lo, &hi);
    int rows = hi - lo; /* local row k+1 is global row lo+k; 0 and rows+1 are halos */
    double *u = grid_alloc((size_t)rows + 2, n), *un = grid_alloc((size_t)rows + 2, n);
    /* both grids hold the initial values: the halos at the ends are the
     * fixed boundary rows, the first and last columns never change */
#pragma omp parallel for schedule(static)
    for (int k = 0; k < rows + 2; k++)
        for (int j = 0; j < n; j++)
            u[(size_t)k * n + j] = un[(size_t)k * n + j] = wl_laplace_initial(n, lo - 1 + k, j);
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long t = 0; t < iters; t++) {
        /* my first row to the rank above, its last row into my top halo */
        MPI_Sendrecv(u + (size_t)1 * n, n, MPI_DOUBLE, up, 0, u + (size_t)(rows + 1) * n, n,
                     MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(u + (size_t)rows * n, n, MPI_DOUBLE, down, 1, u, n, MPI_DOUBLE, up, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp parallel for schedule(static)
        for (int k = 1; k <= rows; k++)
            wl_laplace_row(un + (size_t)k * n, u + (size_t)(k - 1) * n, u + (size_t)k * n,
                      u + (size_t)(k + 1) * n, n);
        double *tmp = u;
        u = un;
        un = tmp;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double seconds = MPI_Wtime() - t0;

    /* the whole grid on rank 0: boundary rows from the halos of the end
     * ranks, interior rows from every block */
    int *counts = NULL, *displs = NULL;
    double *all = NULL;
    if (rank == 0) {
        all = grid_alloc((size_t)n, n);
        counts = malloc((size_t)ranks * sizeof *counts);
        displs = malloc((size_t)ranks * sizeof *displs);
        if (!counts || !displs)
            wl_die("laplace_mpi", "out of memory");
        for (int r = 0; r < ranks; r++) {
            int a, b;
            block_of(n, ranks, r, &a, &b);
            counts[r] = (b - a) * n;
            displs[r] = a * n;
        }
        memcpy(all, u, (size_t)n * sizeof *all);
    }
    MPI_Gatherv(u + n, rows * n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    if (rank == ranks - 1 && rank != 0)
        MPI_Send(u + (size_t)(rows + 1) * n, n, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    int status = 0;
    if (rank == 0) {
        if (ranks > 1)
            MPI_Recv(all + (size_t)(n - 1) * n, n, MPI_DOUBLE, ranks - 1, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        else
            memcpy(all + (size_t)(n - 1) * n, u + (size_t)(rows + 1) * n,
                   (size_t)n * sizeof *all);
        if (wl_fault_injected())
            all[(size_t)(n / 2) * n + n / 2] += 1e-3;
        double sum = checksum(all, n);
        printf("laplace ranks=%d threads=%d seconds=%.6f checksum=%.17g\n", ranks,
               omp_get_max_threads(), seconds, sum);
        fflush(stdout);
        if (check) {
            double *ref = sequential(n, iters);
            size_t bad = 0;
            for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
                bad += memcmp(&ref[k], &all[k], sizeof(double)) != 0;
            double ref_sum = checksum(ref, n);
            char how[256];
            snprintf(how, sizeof how, "every value and the checksum against a sequential "
                     "run: %zu of %d values differ, sequential checksum %.17g", bad, n * n,
                     ref_sum);
            status = wl_verdict(bad == 0 && ref_sum == sum, how);
            free(ref);
        } else {
            status = wl_verdict(1, "not checked (--no-check)");
        }
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(counts);
    free(displs);
    free(u);
    free(un);
    MPI_Finalize();
    return status;
}
