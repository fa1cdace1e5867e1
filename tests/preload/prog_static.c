/*
 * prog_static.c -- an unmodified OpenMP program whose grids are large C
 * static arrays (in .bss), initialised serially by the master thread (the
 * first-touch trap: every page on the master's node), then swept for
 * STEPS time steps in three parallel regions per step, each a
 * `parallel for schedule(static)` over the same rows:
 *
 *   1. b = 4-point stencil of a
 *   2. a = a + 0.5 (b - a)          (relaxation)
 *   3. max |b - a|                  (reduction(max): exact in any order)
 *
 * It knows nothing of pagehome (under `pagehome run` its .bss segment is a
 * hot area).  At the end it prints its checksum and largest change to
 * stdout, and the share of the grids' pages (the ROWS rows in use) that sit
 * on the node of the thread owning their rows to stderr (prog_locality.c).
 *
 *   prog_static [ROWS [STEPS]]     defaults 512 rows of 1024 doubles, 8 steps;
 *                                  8 <= ROWS <= MAX_ROWS (1024)
 *
 * Built with -DMAX_ROWS=65536 (prog_static_big) its grids are sized for
 * the largest input, as Fortran codes' static arrays often are: 1 GiB of
 * .bss, of which a run of 512 rows touches 8 MiB.  With -DPROG_HEAP as
 * well (prog_pool_big) they are calloc'ed at that size instead.
 */
#include "prog_locality.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define COLS 1024
#ifndef MAX_ROWS
#define MAX_ROWS 1024 /* prog_static_big: 65536, 1 GiB of .bss of which a run uses a part */
#endif

#ifdef PROG_HEAP /* prog_pool_big: the grids calloc'ed at their largest size */
static double (*a)[COLS];
static double (*b)[COLS];
#else
static double a[MAX_ROWS][COLS];
static double b[MAX_ROWS][COLS];
#endif

int main(int argc, char **argv)
{
    int rows = 512, steps = 8;
    if (argc > 3 || (argc > 1 && prog_parse_int(argv[1], 8, MAX_ROWS, &rows) != 0) ||
        (argc > 2 && prog_parse_int(argv[2], 1, 1000000, &steps) != 0)) {
        fprintf(stderr, "usage: prog_static [ROWS (8..%d) [STEPS>=1]]\n", MAX_ROWS);
        return 2;
    }
#ifdef PROG_HEAP
    a = calloc(MAX_ROWS, sizeof *a);
    b = calloc(MAX_ROWS, sizeof *b);
    if (!a || !b) {
        perror("prog_static: calloc");
        return 1;
    }
#endif
    for (int i = 0; i < rows; i++) /* serial: the first-touch trap */
        for (int j = 0; j < COLS; j++) {
            a[i][j] = (double)(((size_t)i * COLS + (size_t)j) * 7 % 101);
            b[i][j] = 0;
        }
    int nthreads = omp_get_max_threads();
    double change = 0;
    for (int s = 0; s < steps; s++) {
#pragma omp parallel for schedule(static)
        for (int i = 1; i < rows - 1; i++) {
            prog_note_thread(omp_get_thread_num());
            for (int j = 1; j < COLS - 1; j++)
                b[i][j] = 0.25 * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
        }
#pragma omp parallel for schedule(static)
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < COLS - 1; j++)
                a[i][j] += 0.5 * (b[i][j] - a[i][j]);
        double m = 0;
#pragma omp parallel for schedule(static) reduction(max : m)
        for (int i = 1; i < rows - 1; i++)
            for (int j = 1; j < COLS - 1; j++) {
                double d = fabs(b[i][j] - a[i][j]);
                if (d > m)
                    m = d;
            }
        change = m;
    }
    double sum = 0;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < COLS; j++)
            sum += a[i][j] * (double)((i * COLS + j) % 7 + 1);
    printf("prog_static: checksum %.17g, last change %.17g\n", sum, change);
    prog_tally(a, sizeof a[0], rows, 1, rows - 2, nthreads);
    prog_tally(b, sizeof b[0], rows, 1, rows - 2, nthreads);
    prog_report("prog_static", nthreads);
    return 0;
}
