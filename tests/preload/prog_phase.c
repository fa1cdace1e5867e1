/*
 * prog_phase.c -- an unmodified OpenMP program with a *phase*: an ADI-like
 * time step of three parallel regions over one grid of ROWS rows,
 *
 *   sweep_x   rows split schedule(static): thread t updates block t
 *   sweep_y   the same ownership (another update of block t)
 *   sweep_z   a different ownership: thread t updates block (t + 1) % T
 *             (as BT's z sweep, parallelised over another dimension,
 *             touches the other threads' data)
 *
 * The grid is allocated and initialised by the master thread (the
 * first-touch trap).  Two of every three regions want block t on thread
 * t's node; under `pagehome run --migrate hybrid` the iterative part
 * places the grid for them, and then sweep_z, whose accesses differ from
 * the rest, becomes a phase: its pages move to the neighbour before it and
 * back after it.  At the end the program prints its checksum to stdout
 * and, to stderr, the share of the grid's pages on the node of their
 * sweep_x/sweep_y owner (prog_locality.c).
 *
 *   prog_phase [ROWS [STEPS]]    defaults 512 rows of 1024 doubles, 12 steps
 */
#include "prog_locality.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define COLS 1024

/* Rows [lo, hi) of block b of nb (schedule(static) split of rows). */
static void block_rows(int rows, int b, int nb, int *lo, int *hi)
{
    int q = rows / nb, r = rows % nb;
    *lo = b * q + (b < r ? b : r);
    *hi = *lo + q + (b < r);
}

static void update(double *g, int lo, int hi, double w)
{
    for (int i = lo; i < hi; i++)
        for (int j = 0; j < COLS; j++) {
            size_t k = (size_t)i * COLS + (size_t)j;
            g[k] = w * g[k] + (1.0 - w) * (double)((i + j) % 17);
        }
}

int main(int argc, char **argv)
{
    int rows = 512, steps = 12;
    if (argc > 3 || (argc > 1 && prog_parse_int(argv[1], 8, 1 << 20, &rows) != 0) ||
        (argc > 2 && prog_parse_int(argv[2], 1, 1000000, &steps) != 0)) {
        fprintf(stderr, "usage: prog_phase [ROWS>=8 [STEPS>=1]]\n");
        return 2;
    }
    size_t n = (size_t)rows * COLS;
    double *g = malloc(n * sizeof *g);
    if (!g)
        return 1;
    for (size_t k = 0; k < n; k++) /* serial: the first-touch trap */
        g[k] = (double)(k % 101);
    int nthreads = omp_get_max_threads();
    for (int s = 0; s < steps; s++) {
#pragma omp parallel
        { /* sweep_x */
            int t = omp_get_thread_num(), lo, hi;
            prog_note_thread(t);
            block_rows(rows, t, omp_get_num_threads(), &lo, &hi);
            update(g, lo, hi, 0.5);
        }
#pragma omp parallel
        { /* sweep_y */
            int t = omp_get_thread_num(), lo, hi;
            block_rows(rows, t, omp_get_num_threads(), &lo, &hi);
            update(g, lo, hi, 0.25);
        }
#pragma omp parallel
        { /* sweep_z: the neighbour's block */
            int nt = omp_get_num_threads(), t = omp_get_thread_num(), lo, hi;
            block_rows(rows, (t + 1) % nt, nt, &lo, &hi);
            update(g, lo, hi, 0.75);
        }
    }
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += g[k] * (double)(k % 7 + 1);
    printf("prog_phase: checksum %.17g\n", sum);
    prog_tally(g, COLS * sizeof *g, rows, 0, rows - 1, nthreads);
    prog_report("prog_phase", nthreads);
    free(g);
    return 0;
}
