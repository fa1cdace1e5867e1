/*
 * test_litmus.c -- release-consistency litmus tests across ranks:
 *   mp        message passing through a lock (data + flag written under a
 *             lock, the reader polls the flag under the lock, then the
 *             data must be the new value), every rank as the writer once;
 *   barrier   rotating writers of slots that share pages, checked by every
 *             rank after each barrier (stale copies must be dropped);
 *   selective release of a range, flag handed over by selective
 *             release/acquire, acquire of the range: the data is current;
 *   trans     transitivity: A writes x and releases L1, B acquires L1 and
 *             releases L2, C acquires L2 only and must see x (C had x
 *             cached before).
 * Every wait is bounded (a lost update would otherwise hang the test).
 */
#include "common.h"

#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#define PAGE 4096
#define WAIT_S 60.0

static int me, n;

/* Poll *flag under lock `lk` until it equals want; 0 on time-out. */
static int wait_locked(volatile long *flag, long want, int lk)
{
    double end = now_s() + WAIT_S;
    for (;;) {
        ph_cluster_lock(lk);
        long v = *flag;
        ph_cluster_unlock(lk);
        if (v == want)
            return 1;
        if (now_s() > end)
            return 0;
        usleep(200);
    }
}

static void test_mp(void)
{
    /* one page per rank, cyclic homes: data of writer w lives on page
     * (w + 1) % n, so the write is remote when n > 1 */
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    long *d = ph_cluster_alloc((size_t)n * PAGE, &pl);
    long *f = ph_cluster_alloc((size_t)n * PAGE, &pl);
    CHECK(d && f);
    if (!d || !f)
        return;
    ph_cluster_barrier();
    for (int w = 0; w < n; w++) {
        size_t slot = (size_t)((w + 1) % n) * (PAGE / sizeof(long));
        /* everybody caches the old values first */
        long before = d[slot] + f[slot];
        CHECK_EQ(before, 0);
        ph_cluster_barrier();
        if (me == w) {
            ph_cluster_lock(3);
            d[slot] = 1000 + w;
            d[slot + 7] = 2000 + w;
            f[slot] = 1;
            ph_cluster_unlock(3);
        } else {
            CHECK(wait_locked(&f[slot], 1, 3));
            ph_cluster_lock(3);
            CHECK_EQ(d[slot], 1000 + w);
            CHECK_EQ(d[slot + 7], 2000 + w);
            ph_cluster_unlock(3);
        }
        ph_cluster_barrier();
    }
    ph_cluster_free(d);
    ph_cluster_free(f);
}

static void test_barrier(void)
{
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    size_t slots = 3 * PAGE / sizeof(long) * (size_t)n;   /* 3 pages / rank */
    long *a = ph_cluster_alloc(slots * sizeof *a, &pl);
    CHECK(a != NULL);
    if (!a)
        return;
    for (int round = 0; round < 6; round++) {
        /* slot s is written by rank (s / 3 + round) % n: pages are shared
         * by writers, writers change every round */
        for (size_t s = 0; s < slots; s++)
            if ((int)((s / 3 + (size_t)round) % (size_t)n) == me)
                a[s] = (long)(s * 131 + (size_t)round);
        ph_cluster_barrier();
        size_t bad = 0;
        for (size_t s = 0; s < slots; s++)
            bad += a[s] != (long)(s * 131 + (size_t)round);
        CHECK_EQ(bad, 0);
        ph_cluster_barrier();
    }
    ph_cluster_free(a);
}

static void test_selective(void)
{
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    size_t words = 4 * PAGE / sizeof(long);
    long *d = ph_cluster_alloc(words * sizeof *d, &pl);
    long *f = ph_cluster_alloc(PAGE, &pl);
    CHECK(d && f);
    if (!d || !f)
        return;
    int src = n - 1, dst = 0;
    /* dst caches the data first */
    long sum = 0;
    for (size_t i = 0; i < words; i++)
        sum += d[i];
    CHECK_EQ(sum, 0);
    ph_cluster_barrier();
    if (me == src) {
        for (size_t i = 0; i < words; i++)
            d[i] = (long)i + 5;
        CHECK(ph_cluster_release(d, words * sizeof *d) == 0);
        *(volatile long *)f = 1;
        CHECK(ph_cluster_release(f, sizeof *f) == 0);
    } else if (me == dst) {
        double end = now_s() + WAIT_S;
        int seen = 0;
        while (now_s() < end) {
            CHECK(ph_cluster_acquire(f, sizeof *f) == 0);
            if (*(volatile long *)f == 1) {
                seen = 1;
                break;
            }
            usleep(200);
        }
        CHECK(seen);
        CHECK(ph_cluster_acquire(d, words * sizeof *d) == 0);
        size_t bad = 0;
        for (size_t i = 0; i < words; i++)
            bad += d[i] != (long)i + 5;
        CHECK_EQ(bad, 0);
    }
    ph_cluster_barrier();
    ph_cluster_free(d);
    ph_cluster_free(f);
}

static void test_transitivity(void)
{
    /* roles: A = 1 % n, B = 2 % n, C = 3 % n (distinct from 4 ranks on) */
    int A = 1 % n, B = 2 % n, C = 3 % n;
    ph_placement_t pl;
    ph_placement_parse(&pl, "cyclic:1");
    long *x = ph_cluster_alloc((size_t)n * PAGE, &pl);
    long *f1 = ph_cluster_alloc(PAGE, &pl);
    long *f2 = ph_cluster_alloc(PAGE, &pl);
    CHECK(x && f1 && f2);
    if (!x || !f1 || !f2)
        return;
    /* x[0] on page 0 (home rank 0); everybody caches it */
    CHECK_EQ(x[0], 0);
    ph_cluster_barrier();
    if (me == A) {
        ph_cluster_lock(11);
        x[0] = 4242;
        *f1 = 1;
        ph_cluster_unlock(11);
    }
    if (me == B) {
        CHECK(wait_locked(f1, 1, 11));
        ph_cluster_lock(12);
        *f2 = 1;
        ph_cluster_unlock(12);
    }
    if (me == C) {
        CHECK(wait_locked(f2, 1, 12));
        ph_cluster_lock(12);
        CHECK_EQ(x[0], 4242);      /* through L1 -> B -> L2, never L1 */
        ph_cluster_unlock(12);
    }
    ph_cluster_barrier();
    CHECK_EQ(x[0], 4242);
    ph_cluster_barrier();
    ph_cluster_free(x);
    ph_cluster_free(f1);
    ph_cluster_free(f2);
}

int main(int argc, char **argv)
{
    cl_init(&argc, &argv);
    me = ph_cluster_rank();
    n = ph_cluster_nranks();
    test_mp();
    test_barrier();
    test_selective();
    test_transitivity();
    return cl_finish("litmus");
}
