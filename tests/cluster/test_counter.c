/*
 * test_counter.c -- lock-protected counters: every OpenMP thread of every
 * rank increments shared counters under cluster locks; no increment may
 * be lost.  Counter c lives on a page homed at rank c % n and is protected
 * by lock c (so lock homes and data homes vary), and a counter pair shares
 * a page under two different locks (false sharing between locks).
 */
#include "common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define PAGE 4096
#define NC 6
#define ITERS 60

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    /* counters 0..NC-1 on pages 0..NC-1; counters NC, NC+1 on page NC */
    long *c = ph_cluster_alloc((NC + 1) * PAGE, &pl);
    CHECK(c != NULL);
    if (!c)
        return cl_finish("counter");
    const size_t stride = PAGE / sizeof(long);
    ph_cluster_barrier();
    int threads = 1;
#pragma omp parallel
    {
#ifdef _OPENMP
#pragma omp single
        threads = omp_get_num_threads();
#endif
        for (int it = 0; it < ITERS; it++) {
            for (int k = 0; k < NC; k++) {
                ph_cluster_lock(k);
                c[(size_t)k * stride] += 1;
                ph_cluster_unlock(k);
            }
            ph_cluster_lock(NC);
            c[NC * stride] += 2;
            ph_cluster_unlock(NC);
            ph_cluster_lock(NC + 1);
            c[NC * stride + 1] += 3;
            ph_cluster_unlock(NC + 1);
        }
        ph_cluster_barrier();
    }
    (void)me;
    long want = (long)ITERS * threads * n;
    for (int k = 0; k < NC; k++)
        CHECK_EQ(c[(size_t)k * stride], want);
    CHECK_EQ(c[NC * stride], 2 * want);
    CHECK_EQ(c[NC * stride + 1], 3 * want);
    ph_cluster_barrier();
    ph_cluster_free(c);
    return cl_finish("counter");
}
