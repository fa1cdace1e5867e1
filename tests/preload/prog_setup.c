/*
 * prog_setup.c -- an unmodified program with a serial set-up between its
 * first parallel region and its iterations, as solvers have: a parallel
 * region early on (a team-size query, a first-touch initialisation of
 * something small), then seconds of serial work over the grid (reading
 * input, building the matrix), then the time steps, where thread t
 * sweeps its block of rows SWEEPS times.
 *
 * The grid is initialised serially first (its pages all on the main
 * thread's node).  Under `pagehome run` the set-up is what the OpenMP tools interface
 * shows as no iteration for a long while: the sampling mechanism stands
 * in until the steps give a period, and its intervals meanwhile see the
 * serial code's traps alone.  The steps must still get the grid's pages
 * to their threads.
 *
 * The program prints "verification: ok" on stdout when every element
 * equals a serial replay of what it did, else "verification: FAILED" and
 * exits 1.
 *
 *   prog_setup [ROWS [SETUP_MS [STEPS [SWEEPS]]]]   defaults 1024 rows of
 *                                  1024 doubles, 1500 ms, 200 steps of 16
 *                                  sweeps
 */
#include "prog_locality.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define COLS 1024

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int rows = 1024, setup_ms = 1500, steps = 200, sweeps = 16;
    if (argc > 5 || (argc > 1 && prog_parse_int(argv[1], 8, 1 << 20, &rows) != 0) ||
        (argc > 2 && prog_parse_int(argv[2], 0, 3600000, &setup_ms) != 0) ||
        (argc > 3 && prog_parse_int(argv[3], 1, 1000000, &steps) != 0) ||
        (argc > 4 && prog_parse_int(argv[4], 1, 1000, &sweeps) != 0)) {
        fprintf(stderr, "usage: prog_setup [ROWS>=8 [SETUP_MS [STEPS>=1 [SWEEPS>=1]]]]\n");
        return 2;
    }
    size_t n = (size_t)rows * COLS;
    double *grid = malloc(n * sizeof *grid);
    if (!grid)
        return 1;
    for (size_t k = 0; k < n; k++) /* serial: the first-touch trap */
        grid[k] = (double)(k % 7);
    int team = 0;
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
    }
    /* the set-up: serial passes over the grid for setup_ms */
    long passes = 0;
    double t0 = now_s();
    while ((now_s() - t0) * 1000.0 < (double)setup_ms) {
        for (size_t k = 0; k < n; k++)
            grid[k] = 0.5 * grid[k] + 1.0;
        passes++;
    }
    double t1 = now_s();
    for (int s = 0; s < steps; s++) {
#pragma omp parallel
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            prog_note_thread(t);
            size_t lo = (size_t)rows * (size_t)t / (size_t)nt * COLS;
            size_t hi = (size_t)rows * (size_t)(t + 1) / (size_t)nt * COLS;
            for (int sweep = 0; sweep < sweeps; sweep++)
                for (size_t k = lo; k < hi; k++)
                    grid[k] += 1.0;
        }
    }
    double t2 = now_s();
    size_t bad = 0;
    for (size_t k = 0; k < n; k++) {
        double x = (double)(k % 7);
        for (long p = 0; p < passes; p++)
            x = 0.5 * x + 1.0;
        for (int st = 0; st < steps * sweeps; st++)
            x += 1.0;
        bad += grid[k] != x;
    }
    fprintf(stderr, "prog_setup: %ld set-up passes in %.3f s, %d steps in %.3f s, team of %d\n",
            passes, t1 - t0, steps, t2 - t1, team);
    printf("prog_setup: rows=%d steps=%d\n", rows, steps);
    printf("verification: %s\n", bad ? "FAILED" : "ok");
    free(grid);
    return bad ? 1 : 0;
}
