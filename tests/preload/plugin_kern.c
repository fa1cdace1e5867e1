/*
 * plugin_kern.c -- OpenMP code in a shared library, as an interpreter's
 * extension or a plugin holds it (built by gcc -fopenmp: libgomp; by
 * clang -fopenmp: libomp).  prog_plugin.c loads it with dlopen(3), or
 * links it in (prog_plugin_linked, started by a shell).
 *
 * plugin_stencil(n, iters, npos, pos, out): two arrays of n doubles,
 * initialised serially by the calling thread (so first touch puts them
 * on its node), then iters steps of a three-point average and a copy
 * back, each a `parallel for schedule(static)`: thread t owns the t-th
 * block of both arrays.  out[k] is element pos[k] of the first array at
 * the end.  0, or -1 when out of memory.
 */
#include <stdlib.h>

__attribute__((visibility("default")))
int plugin_stencil(long n, int iters, int npos, const long *pos, double *out);

int plugin_stencil(long n, int iters, int npos, const long *pos, double *out)
{
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    for (long i = 0; i < n; i++) {
        a[i] = (double)((i * 7919) % 1000);
        b[i] = 0.0;
    }
    for (int it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++)
            b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0;
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++)
            a[i] = b[i];
    }
    for (int k = 0; k < npos; k++)
        out[k] = a[pos[k]];
    free(a);
    free(b);
    return 0;
}
