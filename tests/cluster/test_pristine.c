/*
 * test_pristine.c -- misses on pages nobody has written since their
 * allocation map zeroes without a fetch (src/cluster/coherence.c,
 * PRISTINE), on N ranks, and every way a write reaches a rank ends that:
 *   read     the ranks other than the home read 64 fresh pages: zeroes,
 *            every page mapped as pristine, none fetched;
 *   write    each of them writes its own words of 64 more fresh pages
 *            (several writers a page with 3 ranks or more): no fetch, and
 *            after the barrier every rank reads every rank's words, by
 *            fetches (the barrier's notices ended the pages' pristine
 *            state everywhere);
 *   lock     rank 0 writes 32 fresh pages it homes, and a flag, under a
 *            lock; the others, which have not touched the
 *            pages, poll the flag under the lock and then read the pages:
 *            the new values (the notice log, or its "every page" entry
 *            when it is small: run with cluster_notice_log=64 too);
 *   range    the same handed over by ph_cluster_release/acquire of the
 *            ranges (an acquire names no pages: its whole range);
 *   reuse    pages written and freed read as zero once allocated again,
 *            and are pristine again;
 *   first touch  a page mapped so does not map ahead pages nobody has
 *            claimed yet: the next one goes to the rank touching it.
 * With cluster_pristine=0 nothing is mapped as pristine and the fresh
 * pages are fetched; the values are the same.
 */
#include "common.h"

#include <time.h>

#define PAGE 4096
#define WPP (PAGE / 8)
#define NP 64
#define LP 32
#define WAIT_S 60.0

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t value(int phase, size_t word)
{
    return cl_h3(11, (uint64_t)phase, word, 0) | 1;
}

static uint64_t *alloc_at(const char *placement, size_t pages)
{
    ph_placement_t pl;
    CHECK(ph_placement_parse(&pl, placement) == 0);
    uint64_t *a = ph_cluster_alloc(pages * PAGE, &pl);
    CHECK(a != NULL);
    return a;
}

static int me, n, on;

/* Fresh pages read where they are not homed: zeroes, no fetch. */
static void t_read(void)
{
    uint64_t *a = alloc_at("node:0", NP);
    if (!a)
        return;
    long long f0 = cl_stat_of("pages_fetched"), m0 = cl_stat_of("pristine_mapped");
    long nonzero = 0;
    for (size_t i = 0; i < (size_t)NP * WPP; i++)
        nonzero += a[i] != 0;
    CHECK_EQ(nonzero, 0);
    long long fetched = cl_stat_of("pages_fetched") - f0;
    long long mapped = cl_stat_of("pristine_mapped") - m0;
    if (me != 0 && on) {
        CHECK_EQ(mapped, NP);
        CHECK_EQ(fetched, 0);
    } else if (me != 0) {
        CHECK_EQ(mapped, 0);
        CHECK_EQ(fetched, NP);
    } else {
        CHECK_EQ(mapped, 0);                /* the home maps its own */
        CHECK_EQ(fetched, 0);
    }
    if (me == 1)
        printf("pristine: read: %lld pages mapped as zeroes, %lld fetched\n",
               mapped, fetched);
    CHECK(ph_cluster_barrier() == 0);
    CHECK(ph_cluster_free(a) == 0);
}

/* Word w of page p is written by rank 1 + (p + w) % (n - 1). */
static int writer_of(size_t p, size_t w)
{
    return 1 + (int)((p + w) % (size_t)(n - 1));
}

static void t_write(void)
{
    uint64_t *a = alloc_at("node:0", NP);
    if (!a)
        return;
    long long f0 = cl_stat_of("pages_fetched");
    if (me != 0)
        for (size_t p = 0; p < NP; p++)
            for (size_t w = 0; w < WPP; w++)
                if (writer_of(p, w) == me)
                    a[p * WPP + w] = value(1, p * WPP + w);
    long long fetched = cl_stat_of("pages_fetched") - f0;
    if (me != 0)
        CHECK_EQ(fetched, on ? 0 : NP);
    CHECK(ph_cluster_barrier() == 0);
    long long m0 = cl_stat_of("pristine_mapped");
    long bad = 0;
    for (size_t i = 0; i < (size_t)NP * WPP; i++)
        bad += a[i] != value(1, i);
    CHECK_EQ(bad, 0);
    /* written: no rank maps them as zeroes any more */
    CHECK_EQ(cl_stat_of("pristine_mapped") - m0, 0);
    if (me == 1)
        printf("pristine: write: %d writer(s) a page, %lld fetched while "
               "writing, %ld words wrong after the barrier\n",
               n - 1 < WPP ? n - 1 : WPP, fetched, bad);
    CHECK(ph_cluster_barrier() == 0);
    CHECK(ph_cluster_free(a) == 0);
}

/* Rank 0 writes LP fresh pages it homes, then a flag; the
 * others wait for the flag, then read the pages.  by_lock: data and flag
 * under lock 0; else selective release/acquire of the two ranges. */
static void t_handover(int by_lock)
{
    uint64_t *a = alloc_at("node:0", LP);
    uint64_t *f = alloc_at("node:0", 1);
    if (!a || !f)
        return;
    int phase = by_lock ? 2 : 3;
    long bad = 0;
    if (me == 0) {
        if (by_lock)
            CHECK(ph_cluster_lock(0) == 0);
        for (size_t i = 0; i < (size_t)LP * WPP; i++)
            a[i] = value(phase, i);
        if (!by_lock)
            CHECK(ph_cluster_release(a, LP * PAGE) == 0);
        *(volatile uint64_t *)f = 1;
        if (by_lock)
            CHECK(ph_cluster_unlock(0) == 0);
        else
            CHECK(ph_cluster_release(f, sizeof *f) == 0);
    } else {
        double end = now_s() + WAIT_S;
        int seen = 0;
        while (!seen && now_s() < end) {
            if (by_lock) {
                CHECK(ph_cluster_lock(0) == 0);
                seen = *(volatile uint64_t *)f == 1;
                CHECK(ph_cluster_unlock(0) == 0);
            } else {
                CHECK(ph_cluster_acquire(f, sizeof *f) == 0);
                seen = *(volatile uint64_t *)f == 1;
            }
            if (!seen)
                usleep(200);
        }
        CHECK(seen);
        if (!by_lock)
            CHECK(ph_cluster_acquire(a, LP * PAGE) == 0);
        for (size_t i = 0; i < (size_t)LP * WPP; i++)
            bad += a[i] != value(phase, i);
        CHECK_EQ(bad, 0);
    }
    if (me == 1 && by_lock)
        printf("pristine: lock: %ld words wrong (notice log %ld entries, %lld "
               "\"every page\" acquires)\n", bad,
               cl_tunable("cluster_notice_log"), cl_stat_of("invalidate_all"));
    else if (me == 1)
        printf("pristine: range: %ld words wrong\n", bad);
    CHECK(ph_cluster_barrier() == 0);
    CHECK(ph_cluster_free(f) == 0);
    CHECK(ph_cluster_free(a) == 0);
}

/* Written, freed, allocated again: zeroes, and pristine again. */
static void t_reuse(void)
{
    uint64_t *a = alloc_at("node:0", NP);
    if (!a)
        return;
    if (me == n - 1)
        for (size_t i = 0; i < (size_t)NP * WPP; i++)
            a[i] = value(4, i);
    CHECK(ph_cluster_barrier() == 0);
    long bad = 0;
    for (size_t i = 0; i < (size_t)NP * WPP; i++)
        bad += a[i] != value(4, i);
    CHECK_EQ(bad, 0);
    CHECK(ph_cluster_barrier() == 0);
    CHECK(ph_cluster_free(a) == 0);
    uint64_t *b = alloc_at("node:0", NP);
    if (!b)
        return;
    long long m0 = cl_stat_of("pristine_mapped");
    long nonzero = 0;
    for (size_t i = 0; i < (size_t)NP * WPP; i++)
        nonzero += b[i] != 0;
    CHECK_EQ(nonzero, 0);
    if (me != 0)
        CHECK_EQ(cl_stat_of("pristine_mapped") - m0, on ? NP : 0);
    if (me == 1)
        printf("pristine: reuse: the range %s, %ld words not zero\n",
               b == a ? "came back" : "is another", nonzero);
    CHECK(ph_cluster_barrier() == 0);
    CHECK(ph_cluster_free(b) == 0);
}

/* First-touch homes: a page mapped as zeroes does not map ahead the pages
 * nobody claimed yet -- each goes to the rank that touches it first. */
static void t_first_touch(void)
{
    uint64_t *a = alloc_at("first-touch", 8);
    if (!a)
        return;
    if (me == 0)
        CHECK_EQ(*(volatile uint64_t *)a, 0);         /* claims page 0 */
    CHECK(ph_cluster_barrier() == 0);
    if (me == 1) {
        long long m0 = cl_stat_of("pristine_mapped");
        CHECK_EQ(*(volatile uint64_t *)a, 0);         /* rank 0's page */
        CHECK_EQ(cl_stat_of("pristine_mapped") - m0, on ? 1 : 0);
        CHECK_EQ(*(volatile uint64_t *)(a + WPP), 0); /* claims page 1 */
    }
    CHECK(ph_cluster_barrier() == 0);
    CHECK_EQ(ph_cluster_home(a), 0);
    CHECK_EQ(ph_cluster_home(a + WPP), 1);
    if (me == 1)
        printf("pristine: first touch: page 1 homed at rank %d\n",
               ph_cluster_home(a + WPP));
    CHECK(ph_cluster_barrier() == 0);
    CHECK(ph_cluster_free(a) == 0);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    me = ph_cluster_rank();
    n = ph_cluster_nranks();
    if (n < 2)
        cl_skip("pristine: needs 2 ranks or more");
    on = cl_tunable("cluster_pristine") == 1;
    t_read();
    t_write();
    t_handover(1);
    t_handover(0);
    t_reuse();
    t_first_touch();
    return cl_finish("pristine");
}
