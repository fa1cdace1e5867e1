/*
 * bench_regions.c -- a program of many small parallel regions: what
 * `pagehome run` adds to each one (bench_run.sh runs it plain and under
 * pagehome).  Every region is an iteration to pagehome's detector (one
 * region repeated), so the engine hears of an iteration end every few
 * microseconds.
 *
 *   bench_regions N    N regions, each summing 1024 doubles of a 128 MiB
 *                      array (first touched in parallel), a different
 *                      stretch each time
 *
 * Prints the sum (the same in every run) and time_s= on stdout, and the
 * time per region on stderr.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long regions = argc > 1 ? atol(argv[1]) : 100000;
    if (argc > 2 || regions < 1) {
        fprintf(stderr, "usage: bench_regions [REGIONS]\n");
        return 2;
    }
    size_t n = (size_t)16 << 20;
    double *g = malloc(n * sizeof *g);
    if (!g)
        return 1;
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < n; k++)
        g[k] = (double)(k % 7);
    double sum = 0, t0 = omp_get_wtime();
    for (long r = 0; r < regions; r++) {
        size_t base = (size_t)r * 4096 % (n - 1024);
#pragma omp parallel for schedule(static) reduction(+ : sum)
        for (int i = 0; i < 1024; i++)
            sum += g[base + (size_t)i];
    }
    double t = omp_get_wtime() - t0;
    printf("sum=%.0f\ntime_s=%.3f\n", sum, t);
    fprintf(stderr, "bench_regions: %ld regions, %.2f us each\n", regions, t / (double)regions * 1e6);
    free(g);
    return 0;
}
