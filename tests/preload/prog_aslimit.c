/*
 * prog_aslimit.c -- an OpenMP program sized to its address space: a
 * 128 MiB static array and a 128 MiB heap one, updated by parallel loops
 * and checked.  check_aslimit.sh runs it under `ulimit -v` a little above
 * what it needs under pagehome, where pagehome must not take as much
 * address space again as the arrays.  Prints "prog_aslimit: ok" and its
 * peak virtual size (VmPeak, KiB), or says what went wrong and exits 1.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N ((128L << 20) / 8)

static double grid[N];

int main(void)
{
    double *h = malloc(N * sizeof *h);
    if (!h) {
        fprintf(stderr, "prog_aslimit: FAILED: malloc of 128 MiB\n");
        return 1;
    }
    for (long i = 0; i < N; i++) {
        grid[i] = (double)i;
        h[i] = 2.0 * (double)i;
    }
    for (int step = 0; step < 30; step++) {
#pragma omp parallel for schedule(static)
        for (long i = 0; i < N; i++) {
            grid[i] += 1.0;
            h[i] += grid[i] - (double)i;
        }
    }
    /* h[i] = 2i + (1 + 2 + ... + 30) */
    for (long i = 0; i < N; i++)
        if (grid[i] != (double)i + 30.0 || h[i] != 2.0 * (double)i + 465.0) {
            fprintf(stderr, "prog_aslimit: FAILED: element %ld: %g %g\n", i, grid[i], h[i]);
            return 1;
        }
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long peak_kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmPeak:", 7) == 0)
            peak_kib = atol(line + 7);
    if (f)
        fclose(f);
    free(h);
    printf("prog_aslimit: ok\nprog_aslimit: VmPeak %ld\n", peak_kib);
    return 0;
}
