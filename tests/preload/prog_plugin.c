/*
 * prog_plugin.c -- a program that names no OpenMP runtime and runs OpenMP
 * code all the same: it loads a library with dlopen(3) and calls its
 * plugin_stencil (plugin_kern.c), as Python's ctypes, R or a MEX host
 * load an extension built with -fopenmp.  Built with PLUGIN_LINKED, the
 * kernel is linked in instead (prog_plugin_linked: a gcc OpenMP program,
 * which check_plugin.sh starts from a shell script).
 *
 * It prints "verification: ok" when nine elements of the result (the
 * ends, the blocks' edges for 2 to 4 threads, the middle) equal a serial
 * replay of the same arithmetic, else "verification: FAILED" and exits
 * 1.  An element after k steps depends only on the 2k + 1 elements
 * around it at the start, so the replay needs no second copy of the
 * arrays (which would be hot memory of the program's own), and the
 * threads' order cannot change a bit of it.
 *
 *   prog_plugin LIBRARY [N [ITERS]]   (prog_plugin_linked [N [ITERS]])
 *                                      defaults 4000000 doubles, 30 steps
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*stencil_fn)(long, int, int, const long *, double *);

#ifdef PLUGIN_LINKED
int plugin_stencil(long n, int iters, int npos, const long *pos, double *out);
#endif

#define NPOS 9

/* Element j of the first array after iters steps, from the elements
 * within iters of it: the window's edges go wrong one element a step
 * (their outer neighbours are missing) but never reach j, except where
 * the edge is the array's own end, which no step changes. */
static int replay_at(long n, int iters, long j, double *out)
{
    long lo = j - iters > 0 ? j - iters : 0;
    long hi = j + iters < n - 1 ? j + iters : n - 1;
    size_t w = (size_t)(hi - lo + 1);
    double *a = malloc(w * sizeof *a), *b = malloc(w * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return -1;
    }
    for (long i = lo; i <= hi; i++) {
        a[i - lo] = (double)((i * 7919) % 1000);
        b[i - lo] = 0.0;
    }
    for (int it = 0; it < iters; it++) {
        for (long i = lo + 1; i < hi; i++)
            b[i - lo] = (a[i - lo - 1] + a[i - lo] + a[i - lo + 1]) / 3.0;
        for (long i = lo + 1; i < hi; i++)
            a[i - lo] = b[i - lo];
    }
    *out = a[j - lo];
    free(a);
    free(b);
    return 0;
}

int main(int argc, char **argv)
{
    int arg = 1;
#ifdef PLUGIN_LINKED
    stencil_fn run = plugin_stencil;
#else
    if (argc < 2) {
        fprintf(stderr, "usage: %s LIBRARY [N [ITERS]]\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[arg++], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "prog_plugin: %s\n", dlerror());
        return 1;
    }
    stencil_fn run;
    void *sym = dlsym(lib, "plugin_stencil");
    if (!sym) {
        fprintf(stderr, "prog_plugin: %s\n", dlerror());
        return 1;
    }
    memcpy(&run, &sym, sizeof run);
#endif
    long n = argc > arg ? atol(argv[arg]) : 4000000;
    int iters = argc > arg + 1 ? atoi(argv[arg + 1]) : 30;
    if (n < 16 || iters < 0) {
        fprintf(stderr, "prog_plugin: N >= 16 and ITERS >= 0\n");
        return 2;
    }
    long pos[NPOS] = {0, 1, n / 4, n / 3, n / 2, 2 * n / 3, 3 * n / 4, n - 2, n - 1};
    double got[NPOS];
    if (run(n, iters, NPOS, pos, got) != 0) {
        fprintf(stderr, "prog_plugin: out of memory\n");
        return 1;
    }
    int ok = 1;
    for (int k = 0; k < NPOS; k++) {
        double want;
        if (replay_at(n, iters, pos[k], &want) != 0) {
            fprintf(stderr, "prog_plugin: out of memory\n");
            return 1;
        }
        printf("element %ld: %.12f\n", pos[k], got[k]);
        if (memcmp(&got[k], &want, sizeof want) != 0) {
            printf("  replay: %.12f\n", want);
            ok = 0;
        }
    }
    printf("verification: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
