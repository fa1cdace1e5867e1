/*
 * prog_query_storm.c -- an unmodified OpenMP program that asks the kernel
 * where its pages are from every thread, over and over, while pagehome
 * watches them and arms and lifts its watched runs as often as it can.
 *
 * Under `pagehome run` with the userfaultfd mechanism a watched page is
 * moved out of the program's page table until it is touched or its run is
 * lifted; pagehome's move_pages(2) wrapper must bring every watched page
 * of a queried range back before the kernel looks, so a status query
 * (nodes = NULL) never reports a page of the grid as absent (-ENOENT).
 * The pages are moved out when the sampler arms (every iteration end,
 * i.e. every parallel region here), back when a thread touches them (the
 * service thread) and when the sampler lifts them (next interval): this
 * program keeps all three going at once with the queries.
 *
 * It allocates one grid (a hot area), initialises it serially, then runs
 * parallel regions for SECONDS: in each, every thread queries the whole
 * grid with move_pages(0, n, pages, NULL, status, 0), touches its own
 * share of the grid, and queries again.  Every page was touched before
 * the first region, so every status must be a node.  It prints the
 * queries made and the absent pages seen; exit 1 if any page was absent.
 *
 *   prog_query_storm [SECONDS]     default 3
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <numaif.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define GRID_BYTES (8u << 20)
#define PAGE 4096u

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    if (argc > 2 || seconds <= 0 || seconds > 3600) {
        fprintf(stderr, "usage: prog_query_storm [SECONDS]\n");
        return 2;
    }
    double *g = NULL;
    if (posix_memalign((void **)&g, PAGE, GRID_BYTES) != 0)
        return 1;
    size_t nd = GRID_BYTES / sizeof *g, np = GRID_BYTES / PAGE;
    for (size_t k = 0; k < nd; k++)
        g[k] = (double)(k % 7);
    void **pages = malloc(np * sizeof *pages);
    if (!pages)
        return 1;
    for (size_t i = 0; i < np; i++)
        pages[i] = (char *)g + i * PAGE;

    unsigned long queries = 0, absent = 0, other = 0, regions = 0;
    int bad_call = 0;
    double end = now_s() + seconds;
    int done = 0;
    while (!done) {
#pragma omp parallel reduction(+ : queries, absent, other)
        {
            int *status = malloc(np * sizeof *status);
            int nt = omp_get_num_threads(), t = omp_get_thread_num();
            size_t lo = nd * (size_t)t / (size_t)nt, hi = nd * (size_t)(t + 1) / (size_t)nt;
            for (int pass = 0; status && pass < 2; pass++) {
                if (move_pages(0, np, pages, NULL, status, 0) != 0) {
#pragma omp atomic write
                    bad_call = 1;
                }
                queries++;
                for (size_t i = 0; i < np; i++) {
                    absent += status[i] == -ENOENT;
                    other += status[i] < 0 && status[i] != -ENOENT;
                }
                if (pass == 0)
                    for (size_t k = lo; k < hi; k++)
                        g[k] = 0.5 * g[k] + 1.0;
            }
            free(status);
        }
        regions++;
        done = now_s() >= end;
    }
    if (bad_call) {
        perror("prog_query_storm: move_pages");
        return 1;
    }
    double sum = 0;
    for (size_t k = 0; k < nd; k++)
        sum += g[k];
    printf("prog_query_storm: checksum %.17g\n", sum);
    fprintf(stderr, "prog_query_storm: %lu regions, %lu queries of %zu pages; "
            "absent %lu, other errors %lu\n", regions, queries, np, absent, other);
    free(pages);
    free(g);
    if (absent || other) {
        fprintf(stderr, "prog_query_storm: FAILED: pages vanished from the kernel's view\n");
        return 1;
    }
    return 0;
}
