/*
 * test_cluster_gang.c -- gangs over the cluster's team (ph_cluster_gang_*):
 *   the shape of nested splits over ranks x threads, down to gangs of one
 *   and one split deeper (EINVAL on every thread);
 *   release consistency of gang barriers: in rounds with seeded random
 *   work, every thread writes its own pages and its slot in a page all
 *   threads share (cyclic homes: the pages live on every rank), a gang
 *   barrier, every thread reads its gang's pages and slots, a gang
 *   barrier -- with gangs inside a rank, across ranks, and (8 threads in
 *   3 gangs) a rank with threads in two gangs at once; after the join
 *   every thread sees every gang's data;
 *   mismatched calls between ranks and inside a rank: EPROTO on every
 *   thread of the gang, the parent still works;
 *   gang-scoped release / acquire;
 *   a synchronisation of the whole team is a barrier (pages one rank wrote
 *   go home whole).
 * Run with OMP_NUM_THREADS=2 (ctest does) on 2 and 4 ranks.
 */
#include "common.h"

#include <omp.h>
#include <sched.h>

#define PAGE 4096
#define PER 3                   /* pages of its own per thread */

static int me, n, T;

static void test_shape(void)
{
    int G = n * T;
    long bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        int tid = ph_cluster_thread_num();
        bad += ph_cluster_gang_size() != G || ph_cluster_gang_level() != 0 ||
               ph_cluster_gang_thread_num() != tid;
        int first = 0, size = G, d = 0;
        while (size > 1) {
            int g = ph_cluster_gang_split(2);
            int q = size / 2, r = size % 2;
            int eg = (tid - first) < r * (q + 1) ? (tid - first) / (q + 1)
                                                 : r + (tid - first - r * (q + 1)) / q;
            bad += g != eg;
            first += eg * q + (eg < r ? eg : r);
            size = q + (eg < r);
            d++;
            bad += ph_cluster_gang_size() != size ||
                   ph_cluster_gang_thread_num() != tid - first ||
                   ph_cluster_gang_level() != d || ph_cluster_gang_num() != eg ||
                   ph_cluster_gang_count() != 2;
            long b, e;
            ph_cluster_gang_block(1000L * G, &b, &e);
            bad += b != 1000L * first || e != 1000L * (first + size);
        }
        errno = 0;
        bad += ph_cluster_gang_split(2) != -1 || errno != EINVAL;
        for (int i = 0; i < d; i++)
            bad += ph_cluster_gang_join() != 0;
        bad += ph_cluster_gang_level() != 0;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(ph_cluster_gang_join(), -1);     /* outside: a team of one */
    CHECK_EQ(errno, EINVAL);
}

/* rounds of write / gang barrier / read / gang barrier under `gangs` */
static long gang_rounds(int gangs, int rounds, uint64_t seed)
{
    int G = n * T;
    size_t own_pages = (size_t)G * PER;
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    long *own = ph_cluster_alloc(own_pages * PAGE, &pl);
    long *slots = ph_cluster_alloc(PAGE, &pl);
    CHECK(own && slots);
    if (!own || !slots)
        return 1;
    long bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        int tid = ph_cluster_thread_num();
        uint64_t st = seed * 7919u + (uint64_t)tid;
        int g = ph_cluster_gang_split(gangs);
        bad += g < 0;
        long b, e;
        ph_cluster_gang_block(G, &b, &e);        /* the gang's threads */
        for (int r = 0; r < rounds; r++) {
            long stamp = (long)r * 1000 + g;
            long *mine = own + (size_t)tid * PER * (PAGE / sizeof(long));
            for (size_t k = 0; k < PER * (PAGE / sizeof(long)); k += 61)
                mine[k] = stamp + (long)k;
            slots[tid] = stamp;
            uint64_t spin = (st = cl_mix(st)) % 200;
            for (volatile uint64_t s = 0; s < spin * 50; s++)
                ;
            bad += ph_cluster_gang_barrier() != 0;
            for (long u = b; u < e; u++) {
                bad += slots[u] != stamp;
                long *theirs = own + (size_t)u * PER * (PAGE / sizeof(long));
                for (size_t k = 0; k < PER * (PAGE / sizeof(long)); k += 61)
                    bad += theirs[k] != stamp + (long)k;
            }
            bad += ph_cluster_gang_barrier() != 0;
        }
        bad += ph_cluster_gang_join() != 0;
        /* after the join: everybody's last round */
        for (int u = 0; u < G; u++) {
            int ug = -1, q = G / gangs, rr = G % gangs;
            ug = u < rr * (q + 1) ? u / (q + 1) : rr + (u - rr * (q + 1)) / q;
            bad += slots[u] != (long)(rounds - 1) * 1000 + ug;
        }
    }
    ph_cluster_free(slots);
    ph_cluster_free(own);
    return bad;
}

static void test_mismatch(void)
{
    long bad = 0;
    char msg[512] = "";
#pragma omp parallel reduction(+ : bad)
    {
        int t = omp_get_thread_num();
        /* between ranks: rank 0 splits in 2, the others in 1 */
        int rc;
        if (n > 1) {
            rc = ph_cluster_gang_split(me == 0 ? 2 : 1);
            bad += rc != -1 || errno != EPROTO;
            if (me == 0 && t == 0)
                snprintf(msg, sizeof msg, "%s", ph_last_error());
        }
        /* the root still works */
        bad += ph_cluster_gang_barrier() != 0;
        /* inside rank 0: a split against a barrier, in a gang of all */
        bad += ph_cluster_gang_split(1) != 0;
        if (me == 0 && t == 0)
            rc = ph_cluster_gang_split(1);
        else
            rc = ph_cluster_gang_barrier();
        bad += rc != -1 || errno != EPROTO;
        bad += ph_cluster_gang_join() != 0;
        bad += ph_cluster_gang_barrier() != 0;
    }
    CHECK_EQ(bad, 0);
    if (me == 0 && n > 1) {
        CHECK(strstr(msg, "ph_cluster_gang_split(2)") != NULL);
        CHECK(strstr(msg, "ph_cluster_gang_split(1)") != NULL);
    }
}

static void test_acquire_release(void)
{
    ph_placement_t pl;
    ph_placement_parse(&pl, "node:0");
    long *x = ph_cluster_alloc(PAGE, &pl);
    CHECK(x != NULL);
    long bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        int tid = ph_cluster_thread_num();
        ph_cluster_gang_split(1);
        if (tid == n * T - 1) {                 /* the last rank's last thread */
            x[1] = 4242;
            bad += ph_cluster_gang_release(x, PAGE) != 0;
        }
        bad += ph_cluster_gang_barrier() != 0;
        bad += ph_cluster_gang_acquire(x, PAGE) != 0;
        bad += x[1] != 4242;
        bad += ph_cluster_gang_barrier() != 0;
        errno = 0;
        bad += ph_cluster_gang_release(NULL, 8) != -1 || errno != EINVAL;
        ph_cluster_gang_join();
    }
    CHECK_EQ(bad, 0);
    ph_cluster_free(x);
}

/* A gang synchronisation of the whole team is a barrier: a page only one
 * rank wrote goes home whole, not as byte runs, or its home moves to its
 * writer, which then sends nothing (JIAJIA's rule, cluster_migrate) -- a
 * gang of some ranks releases exact runs: another gang may write the same
 * page meanwhile, which gang_rounds's shared slot page checks at 4
 * ranks. */
static void test_whole_team(void)
{
    if (n < 2)
        return;
    enum { NP = 4 };
    ph_placement_t pl;
    ph_placement_parse(&pl, "node:0");
    long *x = ph_cluster_alloc(NP * PAGE, &pl);
    CHECK(x != NULL);
    if (!x)
        return;
    CHECK_EQ(ph_cluster_barrier(), 0);
    long long whole0 = cl_stat_of("whole_pages_sent");
    long long unsent0 = cl_stat_of("migrated_unsent");
    long long runs0 = cl_stat_of("diff_runs");
    long long gb0 = cl_stat_of("gang_barriers");
    long long gs0 = cl_stat_of("gang_syncs");
    long bad = 0;
    size_t nl = NP * PAGE / sizeof(long);
#pragma omp parallel reduction(+ : bad)
    {
        bad += ph_cluster_gang_split(2) < 0;
        if (me == n - 1 && omp_get_thread_num() == 0)
            /* 7 of 8 words changed in every byte: 64 runs a page */
            for (size_t i = 0; i < nl; i++)
                x[i] = i % 8 == 0 ? 0 : 0x1111111111111111L + (long)i;
        bad += ph_cluster_gang_join() != 0;
        for (size_t i = 0; i < nl; i++)
            bad += x[i] != (i % 8 == 0 ? 0 : 0x1111111111111111L + (long)i);
    }
    CHECK_EQ(bad, 0);
    /* split and join: every rank in two barriers of the whole team */
    CHECK_EQ(cl_stat_of("gang_barriers") - gb0, 2);
    CHECK_EQ(cl_stat_of("gang_syncs") - gs0, 2);
    if (me == n - 1) {
        CHECK_EQ(cl_stat_of("whole_pages_sent") - whole0 +
                     cl_stat_of("migrated_unsent") - unsent0, NP);
        CHECK_EQ(cl_stat_of("diff_runs") - runs0, 0);
    }
    CHECK_EQ(ph_cluster_barrier(), 0);
    ph_cluster_free(x);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    me = ph_cluster_rank();
    n = ph_cluster_nranks();
    T = omp_get_max_threads();
    uint64_t seed = 11;
    test_shape();
    CHECK_EQ(gang_rounds(2, 40, seed), 0);      /* 2 ranks: one per gang */
    CHECK_EQ(gang_rounds(1, 20, seed + 1), 0);  /* one gang across all */
    if (n * T >= 3)
        CHECK_EQ(gang_rounds(3, 40, seed + 2), 0); /* uneven; 8 threads: a rank in two */
    if (n * T >= 4)
        CHECK_EQ(gang_rounds(4, 30, seed + 3), 0);
    test_mismatch();
    test_acquire_release();
    test_whole_team();
    return cl_finish("test_cluster_gang");
}
