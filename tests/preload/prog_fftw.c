/*
 * prog_fftw.c -- an FFT code as our users write it: FFTW's own OpenMP
 * threads (libfftw3_omp, built against libgomp) on arrays from
 * fftw_malloc, planned with FFTW_MEASURE (which allocates, times and
 * frees scratch arrays while planning; at most a quarter of a second a
 * plan, fftw_set_timelimit), then forward and backward
 * transforms between parallel loops of the program's own.  Run under
 * `pagehome run` by check_libs.sh.
 *
 * Usage: prog_fftw LOG2N REPS.  stdout holds no timing, so that it equals
 * a plain run's; the program checks its own result (backward(forward(x))
 * = n x) and prints "verification: ok" or exits 1.
 */
#include <fftw3.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static void fill(fftw_complex *a, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        a[i][0] = sin(0.001 * (double)i);
        a[i][1] = cos(0.003 * (double)i);
    }
}

int main(int argc, char **argv)
{
    int lg = argc > 1 ? atoi(argv[1]) : 18, reps = argc > 2 ? atoi(argv[2]) : 10;
    if (lg < 4 || lg > 26 || reps < 1) {
        fprintf(stderr, "usage: prog_fftw LOG2N REPS\n");
        return 2;
    }
    size_t n = (size_t)1 << lg;
    if (!fftw_init_threads())
        return 2;
    fftw_plan_with_nthreads(omp_get_max_threads());
    fftw_set_timelimit(0.25);
    fftw_complex *a = fftw_malloc(n * sizeof *a), *b = fftw_malloc(n * sizeof *b);
    if (!a || !b)
        return 2;
    /* FFTW_MEASURE overwrites the arrays while it plans */
    fftw_plan fwd = fftw_plan_dft_1d((int)n, a, b, FFTW_FORWARD, FFTW_MEASURE);
    fftw_plan bwd = fftw_plan_dft_1d((int)n, b, a, FFTW_BACKWARD, FFTW_MEASURE);
    if (!fwd || !bwd)
        return 2;
    fill(a, n);
    double t0 = omp_get_wtime();
    for (int r = 0; r < reps; r++) {
        fftw_execute(fwd);
        fftw_execute(bwd);
        double scale = 1.0 / (double)n;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) {
            a[i][0] *= scale;
            a[i][1] *= scale;
        }
    }
    double t = omp_get_wtime() - t0, err = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(a[i][0] - sin(0.001 * (double)i)) +
                   fabs(a[i][1] - cos(0.003 * (double)i));
        if (e > err)
            err = e;
    }
    fprintf(stderr, "prog_fftw: %d round trips of 2^%d points in %.3f s, max error %.2e\n",
            reps, lg, t, err);
    printf("prog_fftw: n=2^%d reps=%d threads=%d verification: %s\n", lg, reps,
           omp_get_max_threads(), err < 1e-9 ? "ok" : "FAILED");
    fftw_destroy_plan(fwd);
    fftw_destroy_plan(bwd);
    fftw_free(a);
    fftw_free(b);
    fftw_cleanup_threads();
    return err < 1e-9 ? 0 : 1;
}
