/*
 * prog_temps.c -- an unmodified OpenMP program whose iterations sweep a
 * 16 MiB array in parallel and allocate, fill and free a temporary of a
 * new size in serial code each time (2 MiB + 8 KiB per iteration: never
 * the size of a block freed before, so never reused).  Under `pagehome
 * run` (tests/preload/check_temps.sh) the engine must stop once the
 * array's placement is stable, temporaries or not.
 *
 *   prog_temps [ITERATIONS]      (default 150)
 *
 * Prints "prog_temps: sum S expect E ok" (or "BAD", exit 1).
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 150;
    size_t n = (size_t)16 << 20 >> 3;
    double *a = malloc(n * sizeof *a);
    if (!a || iters < 1)
        return 2;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        a[i] = 1.0;
    double sum = 0, expect = 0;
    for (int it = 0; it < iters; it++) {
        double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
        for (size_t i = 0; i < n; i++) {
            a[i] += 1.0;
            s += a[i];
        }
        sum += s;
        /* every element is 2 + it now */
        expect += (double)n * (2.0 + it);
        size_t bytes = ((size_t)2 << 20) + (size_t)it * 8192;
        unsigned char *t = malloc(bytes);
        if (!t)
            return 2;
        memset(t, it & 0xff, bytes);
        sum += t[bytes - 1];
        expect += (double)(it & 0xff);
        free(t);
    }
    int ok = sum == expect;
    printf("prog_temps: sum %.1f expect %.1f %s\n", sum, expect, ok ? "ok" : "BAD");
    free(a);
    return ok ? 0 : 1;
}
