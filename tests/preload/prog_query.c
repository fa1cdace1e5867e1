/*
 * prog_query.c -- an unmodified OpenMP program that asks the kernel where
 * its pages are, and moves them, while pagehome may be watching them.
 *
 * Under `pagehome run` the sampler keeps a share of the hot pages
 * PROT_NONE between touches.  Before Linux 6.5 the kernel's page lookup
 * for move_pages(2) and get_mempolicy(MPOL_F_ADDR) treats such a page as
 * absent: a query returns -ENOENT, a move skips it, get_mempolicy fails
 * with EFAULT.  pagehome's preload opens watched pages for those calls;
 * this program checks that none of its calls sees a page vanish.
 *
 * It allocates one 8 MiB grid (a hot area), initialises it serially and
 * runs STEPS parallel regions over it.  At the start of the last one,
 * before any thread touches the grid in it, one thread counts the grid's
 * pages that are PROT_NONE in /proc/self/maps (pages pagehome is watching
 * right now: printed, so a run shows whether the calls met watched pages
 * at all), then:
 *   - move_pages(0, n, pages, NULL, status): every status must be a node;
 *   - get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR) on every page: must succeed
 *     and agree with the status;
 *   - move_pages to the node each page is on: every status must be a node.
 * Finally it reads the grid (checksum to stdout).  Exit 1 on any failure.
 *
 *   prog_query [STEPS]     default 8
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRID_BYTES (8u << 20)
#define PAGE 4096u

/* Pages of [lo, hi) inside PROT_NONE mappings ("---p"). */
static size_t protnone_pages(uintptr_t lo, uintptr_t hi)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) != 3 || strncmp(perms, "---", 3) != 0)
            continue;
        uintptr_t s = a > lo ? a : lo, e = b < hi ? b : hi;
        if (s < e)
            n += (e - s) / PAGE;
    }
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    int steps = 8;
    if (argc > 2 || (argc == 2 && ((steps = atoi(argv[1])) < 1 || steps > 100000))) {
        fprintf(stderr, "usage: prog_query [STEPS>=1]\n");
        return 2;
    }
    double *g = NULL;
    if (posix_memalign((void **)&g, PAGE, GRID_BYTES) != 0)
        return 1;
    size_t nd = GRID_BYTES / sizeof *g, np = GRID_BYTES / PAGE;
    for (size_t k = 0; k < nd; k++)
        g[k] = (double)(k % 13);
    void **pages = malloc(np * sizeof *pages);
    int *status = malloc(np * sizeof *status), *nodes = malloc(np * sizeof *nodes);
    if (!pages || !status || !nodes)
        return 1;
    for (size_t i = 0; i < np; i++)
        pages[i] = (char *)g + i * PAGE;
    size_t watched = 0, qfail = 0, gfail = 0, mfail = 0;
    int bad_call = 0;
    for (int s = 0; s < steps; s++) {
#pragma omp parallel
        {
            /* The last step asks first, before any thread of the region
             * touches the grid (the single's barrier holds them back). */
            if (s == steps - 1) {
#pragma omp single
                {
                    watched = protnone_pages((uintptr_t)g, (uintptr_t)g + GRID_BYTES);
                    if (move_pages(0, np, pages, NULL, status, 0) != 0)
                        bad_call = 1;
                    for (size_t i = 0; i < np; i++)
                        qfail += status[i] < 0;
                    for (size_t i = 0; i < np; i++) {
                        int node = -1;
                        if (get_mempolicy(&node, NULL, 0, pages[i],
                                          MPOL_F_NODE | MPOL_F_ADDR) != 0 ||
                            (status[i] >= 0 && node != status[i]))
                            gfail++;
                    }
                    for (size_t i = 0; i < np; i++)
                        nodes[i] = status[i] >= 0 ? status[i] : 0;
                    if (move_pages(0, np, pages, nodes, status, MPOL_MF_MOVE) < 0)
                        bad_call = 1;
                    for (size_t i = 0; i < np; i++)
                        mfail += status[i] < 0;
                }
            }
#pragma omp for schedule(static)
            for (size_t k = 0; k < nd; k++)
                g[k] = 0.5 * g[k] + 1.0;
        }
    }
    if (bad_call) {
        perror("prog_query: move_pages");
        return 1;
    }

    double sum = 0;
    for (size_t k = 0; k < nd; k++)
        sum += g[k] * (double)(k % 5 + 1);
    printf("prog_query: checksum %.17g\n", sum);
    fprintf(stderr, "prog_query: %zu pages, %zu watched at the query; failures: "
            "query %zu, get_mempolicy %zu, move %zu\n", np, watched, qfail, gfail, mfail);
    free(pages);
    free(status);
    free(nodes);
    free(g);
    if (qfail || gfail || mfail) {
        fprintf(stderr, "prog_query: FAILED: pages vanished from the kernel's view\n");
        return 1;
    }
    return 0;
}
