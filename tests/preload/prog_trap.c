/*
 * prog_trap.c -- an unmodified OpenMP program that falls into the
 * first-touch trap: its grids are allocated and initialised by the master
 * thread alone (so every page lands on the master's node), then swept by
 * all threads, rows split by schedule(static), for STEPS time steps.
 *
 * It knows nothing of pagehome.  At the end it prints its checksum and,
 * measured by itself with move_pages(2) status queries, the share of grid
 * pages that sit on the node of the thread that owns their rows -- so a
 * run under `pagehome run` can be compared with a plain run (the checksum
 * must match exactly; the local share should rise to >= 90% on a NUMA
 * machine).
 *
 *   prog_trap [ROWS [STEPS]]       defaults 512 rows of 1024 doubles, 8 steps
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <numaif.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COLS 1024

static int node_of_cpu(int cpu)
{
    char path[96];
    for (int n = 0; n < 64; n++) {
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpu%d", n, cpu);
        if (access(path, F_OK) == 0)
            return n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rows = argc > 1 ? atoi(argv[1]) : 512;
    int steps = argc > 2 ? atoi(argv[2]) : 8;
    if (rows < 8 || steps < 1) {
        fprintf(stderr, "usage: prog_trap [ROWS>=8 [STEPS>=1]]\n");
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
    int *tnode = calloc((size_t)nthreads, sizeof *tnode);
    for (int s = 0; s < steps; s++) {
#pragma omp parallel
        {
            tnode[omp_get_thread_num()] = node_of_cpu(sched_getcpu());
#pragma omp for schedule(static)
            for (int i = 1; i < rows - 1; i++)
                for (int j = 1; j < COLS - 1; j++) {
                    size_t k = (size_t)i * COLS + (size_t)j;
                    b[k] = 0.25 * (a[k - COLS] + a[k + COLS] + a[k - 1] + a[k + 1]);
                }
        }
        double *t = a;
        a = b;
        b = t;
    }
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += a[k] * (double)(k % 7 + 1);
    /* where are the pages of a?  owner = thread of the row's static block */
    size_t bytes = n * sizeof *a;
    uintptr_t first = ((uintptr_t)a + 4095) & ~(uintptr_t)4095;
    size_t npages = ((uintptr_t)a + bytes - first) / 4096;
    void **pages = malloc(npages * sizeof *pages);
    int *st = malloc(npages * sizeof *st);
    for (size_t p = 0; p < npages; p++)
        pages[p] = (void *)(first + p * 4096);
    long rc = move_pages(0, npages, pages, NULL, st, 0);
    size_t local = 0;
    int q = rows / nthreads, r = rows % nthreads;
    for (size_t p = 0; rc == 0 && p < npages; p++) {
        int row = (int)(((uintptr_t)pages[p] - (uintptr_t)a) / (COLS * sizeof(double)));
        int t = row < r * (q + 1) ? row / (q + 1) : r + (row - r * (q + 1)) / q;
        local += st[p] == tnode[t < nthreads ? t : nthreads - 1];
    }
    printf("prog_trap: checksum %.17g\n", sum);
    fprintf(stderr, "prog_trap: %d threads, %zu pages, %.1f%% on their owner's node\n",
            nthreads, npages, npages ? 100.0 * (double)local / (double)npages : 0.0);
    free(pages);
    free(st);
    free(tnode);
    free(a);
    free(b);
    return 0;
}
