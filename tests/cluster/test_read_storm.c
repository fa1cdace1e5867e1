/*
 * test_read_storm.c SEED [ROUNDS] -- many threads miss on the same pages
 * at the same moment, round after round.
 *
 * Each round one rank rewrites every page of a block-homed array (a
 * different rank each round, so every copy elsewhere is invalidated at
 * the barrier), then every thread of every rank reads the whole array,
 * all in the same page order: the threads of a rank fault on the same
 * page together.  The first fault maps the page; the others find it
 * mapped and only set its protection, which on Linux clears the page's
 * entry for a moment -- a thread reading in that moment takes a minor
 * fault on a page that is mapped and waits for a wake-up.  A lost one
 * is a hang (run.sh's time limit); every value read is checked.
 */
#include "common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define PAGE 4096
#define NPAGES 32
#define WORDS (NPAGES * PAGE / 8)

static uint64_t value(uint64_t seed, int round, size_t w)
{
    return cl_h3(seed, 7, (uint64_t)round, w);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 60;
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    ph_placement_t pl;
    ph_placement_parse(&pl, "block");
    uint64_t *x = ph_cluster_alloc(WORDS * sizeof *x, &pl);
    CHECK(x != NULL);
    if (!x)
        return cl_finish("read_storm");
    long bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        int tid = 0, nt = 1;   /* the writers share a page's words */
#ifdef _OPENMP
        tid = omp_get_thread_num();
        nt = omp_get_num_threads();
#endif
        for (int r = 0; r < rounds; r++) {
            if (r % n == me)
                for (size_t w = (size_t)tid; w < WORDS; w += (size_t)nt)
                    x[w] = value(seed, r, w);
            ph_cluster_barrier();
            /* every thread: every word of every page, the pages in
             * order (a thread stays on a page while the others fault
             * on it) */
            for (size_t w = 0; w < WORDS; w++)
                bad += x[w] != value(seed, r, w);
            ph_cluster_barrier();
        }
    }
    CHECK_EQ(bad, 0);
    ph_cluster_free(x);
    return cl_finish("read_storm");
}
