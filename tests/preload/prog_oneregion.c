/*
 * prog_oneregion.c -- an unmodified OpenMP program that is ONE long
 * parallel region: the time loop runs inside `#pragma omp parallel`, and
 * each step is two orphaned `#pragma omp for schedule(static)` loops (in
 * functions of their own, called from the region) whose implicit barriers
 * are the only synchronisation:
 *
 *   sweep(): y = 4-point stencil of x
 *   relax(): x = x + 0.5 (y - x)
 *
 * The heap grids are allocated and initialised by the master thread
 * before the region (the first-touch trap).  It knows nothing of pagehome
 * (under `pagehome run` the iteration is the period of the region's
 * barriers).  At the end it prints its checksum to stdout and the share of
 * the grids' pages on their owner's node to stderr (prog_locality.c).
 *
 *   prog_oneregion [ROWS [STEPS]]  defaults 512 rows of 1024 doubles, 8 steps
 */
#include "prog_locality.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define COLS 1024

/* Orphaned worksharing: bound to the enclosing region of the caller. */
static void sweep(const double *x, double *y, int rows)
{
#pragma omp for schedule(static)
    for (int i = 1; i < rows - 1; i++) {
        prog_note_thread(omp_get_thread_num());
        for (int j = 1; j < COLS - 1; j++) {
            size_t k = (size_t)i * COLS + (size_t)j;
            y[k] = 0.25 * (x[k - COLS] + x[k + COLS] + x[k - 1] + x[k + 1]);
        }
    }
}

static void relax(double *x, const double *y, int rows)
{
#pragma omp for schedule(static)
    for (int i = 1; i < rows - 1; i++)
        for (int j = 1; j < COLS - 1; j++) {
            size_t k = (size_t)i * COLS + (size_t)j;
            x[k] += 0.5 * (y[k] - x[k]);
        }
}

int main(int argc, char **argv)
{
    int rows = 512, steps = 8;
    if (argc > 3 || (argc > 1 && prog_parse_int(argv[1], 8, 1 << 20, &rows) != 0) ||
        (argc > 2 && prog_parse_int(argv[2], 1, 1000000, &steps) != 0)) {
        fprintf(stderr, "usage: prog_oneregion [ROWS>=8 [STEPS>=1]]\n");
        return 2;
    }
    size_t n = (size_t)rows * COLS;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b)
        return 1;
    for (size_t k = 0; k < n; k++) { /* serial: the first-touch trap */
        a[k] = (double)((k * 7) % 101);
        b[k] = 0;
    }
    int nthreads = omp_get_max_threads();
#pragma omp parallel
    {
        for (int s = 0; s < steps; s++) {
            sweep(a, b, rows); /* implicit barrier */
            relax(a, b, rows); /* implicit barrier */
        }
    }
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += a[k] * (double)(k % 7 + 1);
    printf("prog_oneregion: checksum %.17g\n", sum);
    prog_tally(a, COLS * sizeof *a, rows, 1, rows - 2, nthreads);
    prog_tally(b, COLS * sizeof *b, rows, 1, rows - 2, nthreads);
    prog_report("prog_oneregion", nthreads);
    free(a);
    free(b);
    return 0;
}
