/*
 * bench_run_kernel.c -- a long-running, unmodified OpenMP program for
 * bench_run.sh: a 2-D Jacobi (5-point) stencil over two heap grids.
 *
 *   bench_run_kernel [STEPS [N]]      (defaults: 100 steps, N = 4096)
 *
 * Two N x N grids of doubles (N = 4096: 128 MiB each, 256 MiB in all) come
 * from the heap (posix_memalign, 4 KiB aligned) and are initialised in
 * parallel (first touch by the threads that later sweep them,
 * schedule(static) everywhere); each time step is one parallel region that
 * sweeps one grid into the other.  It knows nothing of
 * pagehome: under `pagehome run` the grids are hot areas, the regions are
 * seen through OMPT and the period (one region per step) drives the engine.
 * The grids are 4 KiB aligned because pagehome's hot blocks always are and
 * glibc's large malloc blocks are not (16 bytes past a page): with plain
 * malloc the stencil's alignment, not pagehome, decided the comparison
 * (about 13% faster under `pagehome run` here, see bench/README.md).
 *
 * It prints a checksum of the final grid (summed serially, so it is the same
 * under any OpenMP runtime) and nothing else on stdout; bench_run.sh checks
 * the output is the same with and without pagehome.  No timing here: the
 * harness times the whole process.
 */
#include "bench_common.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    size_t steps_arg = 100, n_arg = 4096;
    if (argc > 3 || (argc > 1 && bench_parse_count(argv[1], 1, 100000000, &steps_arg) != 0) ||
        (argc > 2 && bench_parse_count(argv[2], 8, (size_t)1 << 17, &n_arg) != 0)) {
        fprintf(stderr, "usage: bench_run_kernel [STEPS [N]]  (STEPS >= 1, 8 <= N; "
                        "defaults 100 and 4096: two 128 MiB grids)\n");
        return 2;
    }
    long steps = (long)steps_arg, n = (long)n_arg;
    size_t cells = (size_t)n * (size_t)n;
    void *pa = NULL, *pb = NULL;
    if (posix_memalign(&pa, 4096, cells * sizeof(double)) != 0 ||
        posix_memalign(&pb, 4096, cells * sizeof(double)) != 0) {
        fprintf(stderr, "bench_run_kernel: cannot allocate 2 x %zu bytes\n",
                cells * sizeof(double));
        return 1;
    }
    double *a = pa, *b = pb;

    /* parallel first touch; hot boundary on the left edge, cold elsewhere */
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++) {
            double v = (j == 0) ? 100.0 : (double)((i * 31 + j * 17) % 97) * 0.01;
            a[i * n + j] = v;
            b[i * n + j] = v;
        }

    for (long s = 0; s < steps; s++) {
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++) {
            const double *up = a + (i - 1) * n, *mid = a + i * n, *dn = a + (i + 1) * n;
            double *out = b + i * n;
            for (long j = 1; j < n - 1; j++)
                out[j] = 0.25 * (up[j] + dn[j] + mid[j - 1] + mid[j + 1]);
        }
        double *t = a;
        a = b;
        b = t;
    }

    double sum = 0.0;
    for (size_t k = 0; k < cells; k++)
        sum += a[k] * (double)(1 + k % 7);
    printf("bench_run_kernel: n=%ld steps=%ld checksum=%.12e\n", n, steps, sum);
    free(a);
    free(b);
    return 0;
}
