/*
 * test_stress.c SEED PLACEMENT [ROUNDS] -- a seeded random stress of cluster mode,
 * checked against a sequential reference.
 *
 * Every OpenMP thread of every rank (global thread g of G) runs ROUNDS
 * rounds (default 24) over an array of words spread over pages with the
 * given placement.  In round t the owner of word w is hash(t, w) % G and it
 * writes w iff a hash bit says so, with a value that is a hash of (w, t):
 * writers of one page change from round to round and share pages down to
 * neighbouring words (data-race free, lots of false sharing).  Each thread
 * also reads random words that nobody writes in the round and checks them
 * against the reference (the last value written in an earlier round), and
 * adds random amounts to lock-protected accumulators (random locks, pages
 * shared by accumulators of different locks).  Barriers end the rounds.
 * Every rank can compute the reference alone, so every rank checks
 * everything at the end.
 */
#include "common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define PAGE 4096
#define WORDS (48 * PAGE / 8)
#define ROUNDS_DEFAULT 24
#define READS 1500
#define NACC 96
#define NLOCKS 7
#define INCS 20

static uint64_t seed;

static int writes(size_t w, int t)
{
    return (cl_h3(seed, 1, (uint64_t)t, w) & 3) != 0;        /* 3 in 4 */
}

static long owner(size_t w, int t, long G)
{
    return (long)(cl_h3(seed, 2, (uint64_t)t, w) % (uint64_t)G);
}

static uint64_t value(size_t w, int t)
{
    return cl_h3(seed, 3, (uint64_t)t, w) | 1;                /* never 0 */
}

/* the reference value of w after rounds 0..t */
static uint64_t ref(size_t w, int t)
{
    for (int r = t; r >= 0; r--)
        if (writes(w, r))
            return value(w, r);
    return 0;
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    const char *place = argc > 2 ? argv[2] : "cyclic:1";
    int rounds = argc > 3 ? atoi(argv[3]) : ROUNDS_DEFAULT;
    CHECK(rounds >= 1);
    if (rounds < 1)
        return cl_finish("stress");
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_placement_t pl;
    if (ph_placement_parse(&pl, place) < 0) {
        fprintf(stderr, "bad placement %s: %s\n", place, ph_last_error());
        return 2;
    }
    uint64_t *a = ph_cluster_alloc(WORDS * sizeof *a, &pl);
    uint64_t *acc = ph_cluster_alloc(NACC * 64, &pl); /* 8 words apart */
    CHECK(a && acc);
    if (!a || !acc)
        return cl_finish("stress");
    int threads = cl_max_threads();
    long G = (long)n * threads;
    long bad_reads = 0, bad_final = 0;
#pragma omp parallel reduction(+ : bad_reads)
    {
        int tid = cl_thread_num();
        long g = (long)me * threads + tid;
        for (int t = 0; t < rounds; t++) {
            for (size_t w = 0; w < WORDS; w++)
                if (owner(w, t, G) == g && writes(w, t))
                    a[w] = value(w, t);
            for (int k = 0; k < READS; k++) {
                size_t w = (size_t)(cl_h3(seed, 4, (uint64_t)(t * 1000003 + g),
                                       (uint64_t)k) % WORDS);
                if (writes(w, t))
                    continue;                 /* somebody writes it now */
                if (a[w] != ref(w, t - 1))
                    bad_reads++;
            }
            cl_acc_add(acc, NACC, NLOCKS, INCS, seed, t, g);
            if (t % 5 == 2)
                ph_cluster_barrier();   /* an extra barrier mid-round */
            ph_cluster_barrier();
        }
    }
    CHECK_EQ(bad_reads, 0);
    /* the final state, everywhere */
    for (size_t w = 0; w < WORDS; w++)
        bad_final += a[w] != ref(w, rounds - 1);
    CHECK_EQ(bad_final, 0);
    CHECK_EQ(cl_acc_bad(acc, NACC, INCS, seed, rounds, G), 0);
    ph_cluster_barrier();
    ph_cluster_free(acc);
    ph_cluster_free(a);
    return cl_finish("stress");
}
