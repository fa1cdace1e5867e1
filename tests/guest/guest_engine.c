/*
 * guest_engine.c -- the migration engine on a real kernel (NUMA guest).
 *
 * A small OpenMP stencil (Jacobi sweeps over two grids, rows split by
 * schedule(static)) whose grids were placed on ONE node -- the seeds'
 * worst case -- runs with the iterative mechanism: page-protection
 * samples, the competitive criterion, move_pages on the memory-manager
 * thread.  After a few iterations at least 90% of the grid pages must be
 * on the node of the thread that owns their rows (checked page by page
 * with move_pages status queries), and the result must be bit-for-bit the
 * result of the same sweeps without pagehome.
 *
 * Run with OMP_NUM_THREADS = nodes, OMP_PROC_BIND=true, OMP_PLACES=cores
 * (suite.sh does), NUMA balancing off.  Exit 77 on a one-node machine.
 */
#include "pagehome.h"

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 512
#define COLS 1024 /* 8 KiB a row: 2 pages */
#define ITERS 6

static int passed, failed;

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("guest_engine: FAILED: %s (%s)\n", what, ph_last_error());
    }
}

static void init(double *a, double *b)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) {
            a[(size_t)i * COLS + j] = (double)((i * 31 + j * 17) % 101);
            b[(size_t)i * COLS + j] = 0.0;
        }
}

/* ITERS Jacobi sweeps; engine != 0: with pagehome's calls. */
static double *sweeps(double *a, double *b, int engine, int *thread_node)
{
    for (int it = 0; it < ITERS; it++) {
#pragma omp parallel
        {
            if (engine)
                ph_thread_note(omp_get_thread_num(), omp_get_num_threads());
            if (thread_node)
                thread_node[omp_get_thread_num()] = ph_current_node();
#pragma omp for schedule(static)
            for (int i = 1; i < ROWS - 1; i++)
                for (int j = 1; j < COLS - 1; j++) {
                    size_t k = (size_t)i * COLS + (size_t)j;
                    b[k] = 0.25 * (a[k - COLS] + a[k + COLS] + a[k - 1] +
                                   a[k + 1]);
                }
        }
        if (engine)
            ph_iteration_end();
        double *t = a;
        a = b;
        b = t;
    }
    return a;
}

static double checksum(const double *a)
{
    double s = 0;
    for (size_t k = 0; k < (size_t)ROWS * COLS; k++)
        s += a[k] * (double)(k % 7 + 1);
    return s;
}

/* Node of the thread whose static block holds row i. */
static int owner_node(int i, int nthreads, const int *thread_node)
{
    /* libgomp's schedule(static): N/T each, the first N%T one more */
    int q = ROWS / nthreads, r = ROWS % nthreads;
    int t = i < r * (q + 1) ? i / (q + 1) : r + (i - r * (q + 1)) / q;
    return thread_node[t];
}

/* Share of pages on their owner's node; pages on owner boundaries count
 * for the owner of their first row. */
static double local_share(const double *g, int nthreads,
                          const int *thread_node, int *absent)
{
    size_t bytes = (size_t)ROWS * COLS * sizeof(double);
    size_t npages = bytes / 4096;
    int *st = malloc(npages * sizeof *st);
    ph_query(g, bytes, st);
    size_t ok = 0;
    *absent = 0;
    for (size_t p = 0; p < npages; p++) {
        int row = (int)(p * 4096 / (COLS * sizeof(double)));
        ok += st[p] == owner_node(row, nthreads, thread_node);
        *absent += st[p] < 0;
    }
    free(st);
    return (double)ok / (double)npages;
}

int main(void)
{
    const ph_topology_t *topo = ph_machine_topology();
    if (!topo) {
        printf("guest_engine: no topology: %s\n", ph_last_error());
        return 1;
    }
    int nnodes = ph_topology_nnodes(topo);
    if (nnodes < 2) {
        printf("guest_engine: one node only: nothing to migrate (skipped)\n");
        return 77;
    }
    size_t bytes = (size_t)ROWS * COLS * sizeof(double);

    /* The reference: plain memory, no pagehome. */
    double *ra = malloc(bytes), *rb = malloc(bytes);
    init(ra, rb);
    double ref = checksum(sweeps(ra, rb, 0, NULL));

    /* The same on grids placed on node 0, with the engine. */
    ph_placement_t pl;
    check(ph_placement_parse(&pl, "node:0@4K") == 0, "placement");
    double *a = ph_alloc(bytes, &pl), *b = ph_alloc(bytes, &pl);
    check(a && b, "ph_alloc");
    if (!a || !b)
        return 1;
    init(a, b);
    size_t counts[64];
    ph_node_histogram(a, bytes, counts, 64);
    check(counts[0] == bytes / 4096, "grid a starts on node 0");
    ph_hotarea_t *ha = ph_area_register(a, bytes, "a");
    ph_hotarea_t *hb = ph_area_register(b, bytes, "b");
    check(ha && hb, "ph_area_register");
    int nthreads = omp_get_max_threads();
    int *thread_node = calloc((size_t)nthreads, sizeof *thread_node);
    double *res = sweeps(a, b, 1, thread_node);
    check(ph_engine_flush() == 0, "flush");
    double got = checksum(res);
    check(memcmp(&got, &ref, sizeof got) == 0, "checksum equals the run "
                                               "without pagehome");
    printf("guest_engine: %d threads on nodes", nthreads);
    for (int t = 0; t < nthreads; t++)
        printf(" %d", thread_node[t]);
    printf("\n");
    int absent_a, absent_b;
    double sa = local_share(a, nthreads, thread_node, &absent_a);
    double sb = local_share(b, nthreads, thread_node, &absent_b);
    ph_engine_stats_t st;
    check(ph_engine_stats(&st) == 0, "stats");
    printf("guest_engine: pages on their owner's node: a %.1f%%, b %.1f%% "
           "(absent %d, %d); %llu migrated, %llu failed, %llu accesses sampled, "
           "%llu invocations, %.1f ms in move_pages\n",
           100 * sa, 100 * sb, absent_a, absent_b,
           (unsigned long long)st.migrated, (unsigned long long)st.failed,
           (unsigned long long)st.accesses,
           (unsigned long long)st.invocations, st.move_ns / 1e6);
    check(sa >= 0.9, "a: >= 90% of pages on the owner's node");
    check(sb >= 0.9, "b: >= 90% of pages on the owner's node");
    check(st.migrated >= (uint64_t)(bytes / 4096), "pages migrated");
    ph_area_stats_t as;
    check(ph_area_stats(ha, &as) == 0 && as.migrated > 0, "area stats");
    check(ph_area_unregister(ha) == 0 && ph_area_unregister(hb) == 0,
          "unregister");
    check(ph_area_unregister(ha) == -1, "unregister twice fails");
    check(ph_finalize() == 0, "finalize");
    check(ph_iteration_end() == -1, "iteration end after finalize fails");
    ph_free(a);
    ph_free(b);
    free(ra);
    free(rb);
    free(thread_node);
    printf("guest_engine: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
