/*
 * guest_huge.c -- the engine and 2 MiB pages on a real kernel (NUMA
 * guest, THP): huge.c's whole-page moves and splits.
 *
 *   1. block: a 16 MiB array of 2 MiB pages (placement node:0@2M), 8
 *      units; thread t (one per node) updates units 2t and 2t+1 every
 *      iteration.  After the iterations every unit must be wholly on its
 *      owner's node and still a huge page (kpageflags THP), moved with one
 *      entry per 2 MiB page (huge_migrated >= 6, no split);
 *   2. shared: a 4 MiB array of 2 MiB pages on node 0, whose units are
 *      each used half by one thread and half by another (2 MiB false
 *      sharing): each unit must be split (huge_split >= 2) and >= 90% of
 *      its 4 KiB pages must end on the node of the thread using them.
 * Every update is also applied to a private copy; the arrays must equal
 * it bit for bit at the end (no data lost across moves and splits).
 *
 * Run with OMP_NUM_THREADS = nodes, OMP_PROC_BIND=true, OMP_PLACES=cores,
 * PAGEHOME_ENGINE_SYNC=1, PAGEHOME_SAMPLE_PAGES=0 (suite.sh does), NUMA
 * balancing off.  Exit 77 on a one-node machine or without THP.
 */
#include "pagehome.h"

#include "os/os.h"
#include "topo/topo.h"

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_BYTES (2u << 20)
#define UNIT_DOUBLES (UNIT_BYTES / sizeof(double))
#define ITERS 6

static int passed, failed;

static void check(int ok, const char *what)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("guest_huge: FAILED: %s (%s)\n", what, ph_last_error());
    }
}

/* One update of [lo, hi) of a and of its private copy c. */
static void update(double *a, double *c, size_t lo, size_t hi, int it)
{
    for (size_t k = lo; k < hi; k++) {
        a[k] = 0.5 * a[k] + (double)((k + (size_t)it) % 13);
        c[k] = 0.5 * c[k] + (double)((k + (size_t)it) % 13);
    }
}

/* Node index of the thread using each half unit: who[2u] and who[2u+1]. */
static void run(double *a, double *c, int units, const int *who, int *thread_node,
                int nthreads)
{
    for (int it = 0; it < ITERS; it++) {
#pragma omp parallel num_threads(nthreads)
        {
            int t = omp_get_thread_num();
            ph_thread_note(t, omp_get_num_threads());
            thread_node[t] = ph_current_node();
            for (int h = 0; h < 2 * units; h++)
                if (who[h] == t)
                    update(a, c, (size_t)h * UNIT_DOUBLES / 2,
                           (size_t)(h + 1) * UNIT_DOUBLES / 2, it);
        }
        ph_iteration_end();
    }
    ph_engine_flush();
}

int main(void)
{
    const ph_topology_t *topo = ph_machine_topology();
    if (!topo || ph_topology_nnodes(topo) < 2) {
        printf("guest_huge: needs 2 or more nodes: skipped\n");
        return 77;
    }
    int nnodes = ph_topology_nnodes(topo);
    int nthreads = omp_get_max_threads();
    if (nthreads < nnodes)
        nthreads = nnodes;
    if (nthreads > 4)
        nthreads = 4;
    static int thread_node[64];
    ph_placement_t pl;
    check(ph_placement_parse(&pl, "node:0@2M") == 0, "placement");

    /* 1. block */
    int units = 2 * nthreads;
    size_t bytes = (size_t)units * UNIT_BYTES;
    double *a = ph_alloc(bytes, &pl), *c = malloc(bytes);
    if (!a || !c) {
        printf("guest_huge: no 2 MiB memory (%s): skipped\n", ph_last_error());
        return 77;
    }
    for (size_t k = 0; k < bytes / sizeof *a; k++)
        a[k] = c[k] = (double)(k % 101);
    ph_topology *it = ph_topo_from_hwloc();
    ph_os *os = it ? ph_os_linux_open(it) : NULL;
    uint8_t *huge = malloc(bytes / 4096);
    check(os && huge && ph_os_huge_state(os, a, bytes / 4096, huge) == 0, "huge state");
    size_t nhuge = 0;
    for (size_t p = 0; p < bytes / 4096; p++)
        nhuge += huge[p];
    if (nhuge < bytes / 4096) {
        printf("guest_huge: the kernel gave %zu of %zu pages as THP: skipped\n", nhuge,
               bytes / 4096);
        return 77;
    }
    ph_hotarea_t *ha = ph_area_register(a, bytes, "block");
    check(ha != NULL, "register block");
    int who[64];
    for (int h = 0; h < 2 * units; h++)
        who[h] = h / 4; /* units 2t, 2t+1 = halves 4t..4t+3 */
    run(a, c, units, who, thread_node, nthreads);
    int *node = malloc(bytes / 4096 * sizeof *node);
    ph_query(a, bytes, node);
    int units_ok = 0;
    for (int u = 0; u < units; u++) {
        int want = thread_node[u / 2], all = 1;
        for (size_t p = (size_t)u * 512; p < (size_t)(u + 1) * 512; p++)
            all &= node[p] == want;
        units_ok += all;
    }
    printf("guest_huge: block: %d of %d units wholly on their owner's node\n", units_ok, units);
    check(units_ok == units, "every unit on its owner's node");
    check(ph_os_huge_state(os, a, bytes / 4096, huge) == 0, "huge state after");
    nhuge = 0;
    for (size_t p = 0; p < bytes / 4096; p++)
        nhuge += huge[p];
    check(nhuge == bytes / 4096, "still 2 MiB pages");
    ph_area_stats_t as;
    check(ph_area_stats(ha, &as) == 0, "area stats");
    printf("guest_huge: block: %llu huge pages moved, %llu split\n",
           (unsigned long long)as.huge_migrated, (unsigned long long)as.huge_split);
    check(as.huge_migrated >= (uint64_t)(units - 2), "moved whole");
    check(as.huge_split == 0, "no split");
    check(memcmp(a, c, bytes) == 0, "block data intact");
    check(ph_area_unregister(ha) == 0, "unregister block");
    ph_free(a);
    free(c);
    free(node);

    /* 2. shared: unit u's halves are used by threads u+1 and u+2 */
    units = 2;
    bytes = (size_t)units * UNIT_BYTES;
    a = ph_alloc(bytes, &pl);
    c = malloc(bytes);
    node = malloc(bytes / 4096 * sizeof *node);
    check(a && c && node, "alloc shared");
    for (size_t k = 0; k < bytes / sizeof *a; k++)
        a[k] = c[k] = (double)(k % 97);
    ha = ph_area_register(a, bytes, "shared");
    check(ha != NULL, "register shared");
    for (int h = 0; h < 2 * units; h++)
        who[h] = (h + 1) % nthreads;
    run(a, c, units, who, thread_node, nthreads);
    ph_query(a, bytes, node);
    size_t right = 0;
    for (size_t p = 0; p < bytes / 4096; p++)
        right += node[p] == thread_node[who[p / 256]];
    check(ph_area_stats(ha, &as) == 0, "area stats shared");
    printf("guest_huge: shared: %llu huge pages split, %zu of %zu pages on their user's node\n",
           (unsigned long long)as.huge_split, right, bytes / 4096);
    check(as.huge_split >= (uint64_t)units, "every shared unit split");
    check(right * 10 >= bytes / 4096 * 9, ">= 90% of the pages on their user's node");
    check(memcmp(a, c, bytes) == 0, "shared data intact");
    check(ph_area_unregister(ha) == 0, "unregister shared");
    ph_free(a);
    free(c);
    free(node);
    free(huge);
    if (os)
        ph_os_close(os);
    ph_topo_free(it);
    ph_finalize();
    printf("guest_huge: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
