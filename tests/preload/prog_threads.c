/*
 * prog_threads.c -- an unmodified program whose heavy work runs on
 * threads the OpenMP runtime did not start: as a BLAS library's or a
 * solver's own pthreads do, between the program's OpenMP regions.
 *
 * A grid of T blocks of ROWS/T rows is allocated and initialised by the
 * main thread (the first-touch trap).  Each step, T pthreads (started once,
 * each bound to one node) update their own block, while the main thread
 * waits on a barrier outside every parallel region; then an OpenMP
 * region of the program's own updates a small table (its iteration mark).
 * The pthreads' blocks belong on their nodes; under `pagehome run` the
 * samples of their accesses are what can show it, since no OpenMP
 * thread ever touches the grid.
 *
 * Binding: thread t asks for node t % NODES through ph_thread_set_node
 * when pagehome's library is loaded and runs a simulated machine; else it
 * is pinned to CPU t % (CPUs) with pthread_setaffinity_np.  The program
 * prints "verification: ok" on stdout when every element equals a serial
 * replay of its recurrence, else "verification: FAILED" and exits 1.
 *
 * With T = 0 the main thread sweeps the grid itself: serial code
 * touching the grid between the regions at every step (a program's
 * serial part), whose traps give no sample.
 *
 *   prog_threads [ROWS [STEPS [T]]]    defaults 512 rows of 1024 doubles,
 *                                      20 steps, 4 threads
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "prog_locality.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define COLS 1024
#define MAX_T 64

/* pagehome's library, when `pagehome run` has loaded it */
extern int ph_thread_set_node(int node) __attribute__((weak));

static double *grid;
static int rows, steps, nthreads;
static pthread_barrier_t start_bar, done_bar;

static void block_rows(int b, int *lo, int *hi)
{
    int q = rows / nthreads, r = rows % nthreads;
    *lo = b * q + (b < r ? b : r);
    *hi = *lo + q + (b < r);
}

static double source(size_t k)
{
    return (double)(k % 13) * 0.25;
}

static void bind(int t)
{
    if (ph_thread_set_node && ph_thread_set_node(t % 4) == 0)
        return;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)(t % (ncpu > 0 ? ncpu : 1)), &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *worker(void *arg)
{
    int t = (int)(size_t)arg, lo, hi;
    bind(t);
    block_rows(t, &lo, &hi);
    for (int s = 0; s < steps; s++) {
        pthread_barrier_wait(&start_bar);
        for (size_t k = (size_t)lo * COLS; k < (size_t)hi * COLS; k++)
            grid[k] = 0.5 * grid[k] + source(k);
        pthread_barrier_wait(&done_bar);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    rows = 512;
    steps = 20;
    nthreads = 4;
    if (argc > 4 || (argc > 1 && prog_parse_int(argv[1], 8, 1 << 20, &rows) != 0) ||
        (argc > 2 && prog_parse_int(argv[2], 1, 1000000, &steps) != 0) ||
        (argc > 3 && prog_parse_int(argv[3], 0, MAX_T, &nthreads) != 0) || nthreads > rows) {
        fprintf(stderr, "usage: prog_threads [ROWS>=8 [STEPS>=1 [THREADS 0..%d]]]\n", MAX_T);
        return 2;
    }
    size_t n = (size_t)rows * COLS;
    grid = malloc(n * sizeof *grid);
    double table[256] = {0};
    if (!grid)
        return 1;
    for (size_t k = 0; k < n; k++) /* serial: the first-touch trap */
        grid[k] = (double)(k % 101);
    pthread_barrier_init(&start_bar, NULL, (unsigned)nthreads + 1);
    pthread_barrier_init(&done_bar, NULL, (unsigned)nthreads + 1);
    pthread_t th[MAX_T];
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(size_t)t) != 0) {
            fprintf(stderr, "prog_threads: pthread_create failed\n");
            return 1;
        }
    double t0 = omp_get_wtime();
    for (int s = 0; s < steps; s++) {
        if (nthreads == 0) {
            for (size_t k = 0; k < n; k++)
                grid[k] = 0.5 * grid[k] + source(k);
        } else {
            pthread_barrier_wait(&start_bar); /* the pthreads sweep the grid */
            pthread_barrier_wait(&done_bar);
        }
#pragma omp parallel for schedule(static)
        for (int i = 0; i < 256; i++)
            table[i] += 1.0;
    }
    double secs = omp_get_wtime() - t0;
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    size_t bad = 0;
    for (size_t k = 0; k < n; k++) {
        double x = (double)(k % 101);
        for (int s = 0; s < steps; s++)
            x = 0.5 * x + source(k);
        bad += grid[k] != x;
    }
    for (int i = 0; i < 256; i++)
        bad += table[i] != (double)steps;
    fprintf(stderr, "prog_threads: %d steps of %d rows on %d pthreads in %.3f s\n", steps, rows,
            nthreads, secs);
    printf("prog_threads: rows=%d steps=%d threads=%d\n", rows, steps, nthreads);
    printf("verification: %s\n", bad ? "FAILED" : "ok");
    pthread_barrier_destroy(&start_bar);
    pthread_barrier_destroy(&done_bar);
    free(grid);
    return bad ? 1 : 0;
}
