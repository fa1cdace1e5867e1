/*
 * prog_mbind.c -- a NUMA-aware OpenMP program that places some of its data
 * itself, for the NUMA guest (tests/numa-guest/suite.sh, check_mbind.sh).
 *
 *   prog_mbind NODE   binds two arrays to NODE itself: a static one with
 *                     mbind(2) (MPOL_BIND) and a heap one with libnuma's
 *                     numa_tonode_memory, which calls mbind inside libnuma;
 *   prog_mbind -1     binds nothing.
 *   prog_mbind N NODES  also binds the process's memory to NODES (a
 *                     libnuma node string) first thing in main, with
 *                     numa_set_membind (set_mempolicy(2), MPOL_BIND).
 *
 * Two more arrays (heap and static) are left to first touch.  All four are
 * initialised serially (every free page on the master's node: the
 * first-touch trap), then swept by the threads in 30 iterations of
 * schedule(static) loops.  At the end the program asks move_pages(2) where
 * every page is and prints, to stderr:
 *
 *   prog_mbind: bound N pages, M off their node
 *   prog_mbind: free N pages, P% where they should be, Q outside the binding
 *
 * "Where they should be": the node of the thread that sweeps the page when
 * the process may use that node, else any node it may use.  The nodes it
 * may use are those of the task's memory binding (numactl --membind or
 * NODES: MPOL_BIND as the task's policy), or all.  stdout gets a
 * checksum that does not depend on placement.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <numa.h>
#include <numaif.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (2u << 20) /* 16 MiB of doubles per array */
#define PG 4096
#define MAXT 64

static double s_free[N] __attribute__((aligned(4096)));
static double s_bound[N] __attribute__((aligned(4096)));
static int thread_node[MAXT];

/* The task's memory binding: allowed[n] = 1 for the nodes it may use. */
static void binding(int *allowed, int maxnode)
{
    int mode = 0;
    unsigned long mask[16] = {0};
    for (int n = 0; n < maxnode; n++)
        allowed[n] = 1;
    if (get_mempolicy(&mode, mask, 16 * 64 + 1, NULL, 0) != 0 || (mode & 0xff) != MPOL_BIND)
        return;
    for (int n = 0; n < maxnode; n++)
        allowed[n] = (int)((mask[n / 64] >> (n % 64)) & 1u);
}

static void tally(const double *a, int bound_node, int nthreads, const int *allowed,
                  long *pages, long *right, long *outside)
{
    size_t np = (size_t)N * sizeof *a / PG;
    void **p = malloc(np * sizeof *p);
    int *st = malloc(np * sizeof *st);
    if (!p || !st)
        exit(2);
    for (size_t i = 0; i < np; i++)
        p[i] = (char *)a + i * PG;
    if (move_pages(0, np, p, NULL, st, 0) != 0) {
        perror("prog_mbind: move_pages");
        exit(2);
    }
    for (size_t i = 0; i < np; i++) {
        /* schedule(static): thread t sweeps elements [t*N/T, (t+1)*N/T) */
        size_t elem = i * (PG / sizeof *a);
        int t = (int)(elem * (size_t)nthreads / N);
        int want = bound_node >= 0 ? bound_node : thread_node[t];
        int on = st[i];
        (*pages)++;
        if (on < 0 || on >= 1024)
            continue;
        if (bound_node < 0 && !allowed[on])
            (*outside)++;
        if (on == want || (bound_node < 0 && !allowed[want] && allowed[on]))
            (*right)++;
    }
    free(p);
    free(st);
}

int main(int argc, char **argv)
{
    if (numa_available() < 0) {
        fprintf(stderr, "prog_mbind: no NUMA support\n");
        return 77;
    }
    int node = argc > 1 ? atoi(argv[1]) : -1;
    int maxnode = numa_max_node() + 1;
    if (argc > 2) {
        /* the process binds its memory itself, first thing in main */
        struct bitmask *m = numa_parse_nodestring(argv[2]);
        if (!m) {
            fprintf(stderr, "prog_mbind: no such nodes: %s\n", argv[2]);
            return 77;
        }
        numa_set_membind(m);
        numa_bitmask_free(m);
    }
    if (node >= maxnode) {
        fprintf(stderr, "prog_mbind: node %d does not exist\n", node);
        return 77;
    }
    double *h_free = aligned_alloc(PG, N * sizeof(double));
    double *h_bound = aligned_alloc(PG, N * sizeof(double));
    if (!h_free || !h_bound)
        return 2;
    if (node >= 0) {
        unsigned long mask = 1ul << node;
        if (mbind(s_bound, sizeof s_bound, MPOL_BIND, &mask, 64, 0) != 0) {
            perror("prog_mbind: mbind");
            return 2;
        }
        numa_tonode_memory(h_bound, N * sizeof(double), node);
    }
    for (size_t i = 0; i < N; i++) {
        h_free[i] = (double)i;
        s_free[i] = (double)(i % 7);
        h_bound[i] = 1.0;
        s_bound[i] = 2.0;
    }
    int nthreads = 1;
    double sum = 0.0;
    for (int it = 0; it < 30; it++) {
#pragma omp parallel reduction(+ : sum)
        {
            int t = omp_get_thread_num();
            if (t < MAXT)
                thread_node[t] = numa_node_of_cpu(sched_getcpu());
#pragma omp single
            nthreads = omp_get_num_threads();
#pragma omp for schedule(static)
            for (size_t i = 0; i < N; i++) {
                h_free[i] += 1.0;
                s_free[i] += 0.5;
                h_bound[i] += h_free[i] * 1e-9;
                s_bound[i] += s_free[i] * 1e-9;
                sum += h_free[i] + s_free[i];
            }
        }
    }
    double check = 0.0;
    for (size_t i = 0; i < N; i += 97)
        check += h_free[i] + s_free[i] + h_bound[i] + s_bound[i];
    printf("prog_mbind: checksum %.6e %.6e\n", sum, check);
    if (nthreads > MAXT)
        return 77;
    int *allowed = calloc((size_t)maxnode, sizeof *allowed);
    if (!allowed)
        return 2;
    binding(allowed, maxnode);
    long bp = 0, bright = 0, bout = 0, fp = 0, fright = 0, fout = 0;
    if (node >= 0) {
        tally(h_bound, node, nthreads, allowed, &bp, &bright, &bout);
        tally(s_bound, node, nthreads, allowed, &bp, &bright, &bout);
        fprintf(stderr, "prog_mbind: bound %ld pages, %ld off their node\n", bp, bp - bright);
    }
    tally(h_free, -1, nthreads, allowed, &fp, &fright, &fout);
    tally(s_free, -1, nthreads, allowed, &fp, &fright, &fout);
    fprintf(stderr, "prog_mbind: free %ld pages, %.1f%% where they should be, %ld outside "
            "the binding\n", fp, fp ? 100.0 * (double)fright / (double)fp : 0.0, fout);
    free(allowed);
    return 0;
}
