/*
 * test_map_gap.c SEED [ROUNDS [SPREAD]] -- writes that land while another thread's
 * read fault maps the same page.
 *
 * On Linux < 6.5 (and with cluster_fault=userfaultfd-compat) a read-only
 * mapping takes two steps, mapped then write-protected; a thread that
 * writes the page between them takes no fault.  Each round here, one
 * thread of every rank (the reader) goes through the pages reading a word
 * nobody writes, and announces each page before it touches it; the other
 * threads (the writers) follow it and aim at that moment: each watches
 * the announced page's entry in /proc/self/pagemap and writes its own
 * word of the page as soon as the page is present but not yet
 * write-protected (or present and protected, or after a seeded wait when
 * pagemap cannot be read) -- a thread that touches the page before it is
 * present waits in the reader's fault and would miss the moment.  After a
 * barrier every thread checks every writer's word of every page; a write
 * that no twin or write notice caught is a stale word.  The count of
 * writes caught between the steps is printed (gap_writes; 0 where the
 * kernel maps in one step).
 */
#include "common.h"

#include <fcntl.h>
#include <stdatomic.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define PAGE 4096
#define NPAGES 128
#define WORDS_PER_PAGE (PAGE / 8)
#define MAX_WRITERS 7

static uint64_t value(uint64_t seed, int round, int rank, int t, size_t p)
{
    return cl_h3(seed, (uint64_t)round, (uint64_t)(rank * 16 + t), p) | 1;
}

static inline void pause_for(uint64_t spins)
{
    for (uint64_t i = 0; i < spins; i++)
        __asm__ __volatile__("" ::: "memory");
}

/* Wait until the page at `addr` is mapped here (pagemap bit 63), at most
 * about `limit` polls; 1 when pagemap answered at all. */
static int wait_present(int pm, const void *addr, long limit)
{
    off_t at = (off_t)((uintptr_t)addr / PAGE) * 8;
    for (long i = 0; i < limit; i++) {
        uint64_t e = 0;
        if (pread(pm, &e, sizeof e, at) != (ssize_t)sizeof e)
            return 0;
        if (e >> 63)
            return 1;
    }
    return 1;
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 40;
    uint64_t spread = argc > 3 ? strtoull(argv[3], NULL, 0) : 40000;
    int me = ph_cluster_rank(), n = ph_cluster_nranks();
    if (cl_max_threads() < 2 || n > 8) {
        cl_skip("needs 2 or more threads a rank and at most 8 ranks");
        return cl_finish("map_gap");
    }
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    uint64_t *x = ph_cluster_alloc((size_t)NPAGES * PAGE, &pl);
    CHECK(x != NULL);
    if (!x)
        return cl_finish("map_gap");
    _Atomic long announced = -1;
    int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    long bad = 0;
    int writers = cl_max_threads() - 1;
    if (writers > MAX_WRITERS)
        writers = MAX_WRITERS;
#pragma omp parallel num_threads(writers + 1) reduction(+ : bad)
    {
        int tid = cl_thread_num();
        for (int r = 0; r < rounds; r++) {
            if (tid == 0) {
                volatile uint64_t sink = 0;
                for (size_t p = 0; p < NPAGES; p++) {
                    atomic_store(&announced, (long)p);
                    sink += x[p * WORDS_PER_PAGE];   /* nobody writes it */
                }
                (void)sink;
            } else if (tid <= writers) {
                for (size_t p = 0; p < NPAGES; p++) {
                    while (atomic_load(&announced) < (long)p)
                        ;
                    uint64_t *w = &x[p * WORDS_PER_PAGE];
                    if (pm < 0 || !wait_present(pm, w, 20000))
                        pause_for(cl_h3(seed ^ 0x9a9, (uint64_t)r,
                                        (uint64_t)tid, p) % spread);
                    x[p * WORDS_PER_PAGE + 1 + (size_t)me * MAX_WRITERS +
                      (size_t)(tid - 1)] = value(seed, r, me, tid, p);
                }
            }
            ph_cluster_barrier();
            for (size_t p = 0; p < NPAGES; p++)
                for (int q = 0; q < n; q++)
                    for (int t = 1; t <= writers; t++) {
                        uint64_t got = x[p * WORDS_PER_PAGE + 1 +
                                         (size_t)q * MAX_WRITERS +
                                         (size_t)(t - 1)];
                        bad += got != value(seed, r, q, t, p);
                    }
#pragma omp single
            atomic_store(&announced, -1);
            ph_cluster_barrier();
        }
    }
    if (pm >= 0)
        close(pm);
    CHECK_EQ(bad, 0);
    printf("map_gap: rank %d: %d rounds, %d writers, %lld writes caught "
           "between map and protect, %ld stale words\n",
           me, rounds, writers, cl_stat_of("gap_writes"), bad);
    ph_cluster_free(x);
    return cl_finish("map_gap");
}
