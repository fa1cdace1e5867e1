/*
 * test_gang.c -- gangs in one process (pagehome.h "Gangs", base/gang.h):
 * the arithmetic of splits and blocks, nested splits down to gangs of one
 * thread, gang barriers that synchronise a gang and nothing more (seeded
 * random work), uneven counts, the bad input (counts out of range,
 * nesting deeper than the team, threads in different calls, a thread that
 * never comes), and the gang's data on the gang's nodes (a simulated
 * 4-node machine).
 */
#include "check.h"

#include "base/gang.h"
#include "base/rng.h"

#include <errno.h>
#include <omp.h>
#include <pagehome.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAXT 16

/* ---- arithmetic ---------------------------------------------------- */

static void test_arithmetic(void)
{
    int bad = 0;
    for (int S = 1; S <= 40; S++) {
        for (int G = 1; G <= S; G++) {
            int next = 0, lo = S, hi = 0;
            for (int g = 0; g < G; g++) {
                int f, sz;
                ph_gang_shape(S, G, g, &f, &sz);
                bad += f != next || sz < 1;
                lo = sz < lo ? sz : lo;
                hi = sz > hi ? sz : hi;
                for (int t = f; t < f + sz; t++)
                    bad += ph_gang_of(S, G, t) != g;
                next = f + sz;
            }
            bad += next != S || hi - lo > 1;
        }
    }
    CHECK_EQ(bad, 0);
    /* 5 threads in 2 gangs: 3 + 2; in 3: 2 + 2 + 1 */
    int f, sz;
    ph_gang_shape(5, 2, 1, &f, &sz);
    CHECK_EQ(f, 3);
    CHECK_EQ(sz, 2);
    ph_gang_shape(5, 3, 2, &f, &sz);
    CHECK_EQ(f, 4);
    CHECK_EQ(sz, 1);
    /* blocks: contiguous, covering, proportional to threads */
    uint64_t b, e, prev = 0;
    for (int t = 0; t < 7; t++) {
        ph_gang_block_of(1000003, t, 1, 7, &b, &e);
        bad += b != prev;
        prev = e;
    }
    CHECK_EQ(prev, 1000003);
    ph_gang_block_of(100, 3, 2, 5, &b, &e); /* threads 3-4 of 5: 60..100 */
    CHECK_EQ(b, 60);
    CHECK_EQ(e, 100);
    /* no overflow near the top of the range */
    ph_gang_block_of(UINT64_MAX, 1, 1, 2, &b, &e);
    CHECK(b == UINT64_MAX / 2 && e == UINT64_MAX);
    ph_gang_share(10, 4, 0, &b, &e);
    CHECK(b == 0 && e == 3);
    ph_gang_share(10, 4, 3, &b, &e);
    CHECK(b == 8 && e == 10);
    CHECK_EQ(bad, 0);
}

/* ---- outside a parallel region: a team of one ------------------------ */

static void test_serial(void)
{
    CHECK_EQ(ph_gang_num(), 0);
    CHECK_EQ(ph_gang_count(), 1);
    CHECK_EQ(ph_gang_size(), 1);
    CHECK_EQ(ph_gang_thread_num(), 0);
    CHECK_EQ(ph_gang_level(), 0);
    CHECK_EQ(ph_gang_barrier(), 0);
    errno = 0;
    CHECK_EQ(ph_gang_split(2), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("cannot split into 2 gangs");
    CHECK_EQ(ph_gang_split(0), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_gang_join(), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_MSG("not split");
    CHECK_EQ(ph_gang_split(1), 0);
    CHECK_EQ(ph_gang_level(), 1);
    CHECK_EQ(ph_gang_join(), 0);
    CHECK_EQ(ph_gang_level(), 0);
    size_t b, e;
    CHECK_EQ(ph_gang_block(10, &b, &e), 0);
    CHECK(b == 0 && e == 10);
    CHECK_EQ(ph_gang_block(10, NULL, &e), -1);
    CHECK_EQ(ph_gang_release(NULL, 4), -1);
    CHECK_EQ(ph_gang_acquire(&b, sizeof b), 0);
}

/* ---- nested splits: binary down to gangs of one ---------------------- */

typedef struct trace {
    int num[8], count[8], size[8], tnum[8], level[8];
    int depth;
    int deeper_rc, deeper_err;
    int join_rc;
} trace;

static void test_nested(int T)
{
    trace tr[MAXT];
    memset(tr, 0, sizeof tr);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        trace *x = &tr[t];
        int d = 0;
        for (;;) {
            x->num[d] = ph_gang_num();
            x->count[d] = ph_gang_count();
            x->size[d] = ph_gang_size();
            x->tnum[d] = ph_gang_thread_num();
            x->level[d] = ph_gang_level();
            if (x->size[d] == 1)
                break;
            if (ph_gang_split(2) < 0)
                break;
            d++;
        }
        x->depth = d;
        /* a gang of one: deeper than the team */
        x->deeper_rc = ph_gang_split(2);
        x->deeper_err = errno;
        x->join_rc = 0;
        for (int i = 0; i < d; i++)
            x->join_rc |= ph_gang_join();
    }
    int bad = 0;
    for (int t = 0; t < T; t++) {
        const trace *x = &tr[t];
        /* replay the splits: thread t's gang at each level */
        int first = 0, size = T;
        for (int d = 0; d <= x->depth; d++) {
            bad += x->size[d] != size || x->tnum[d] != t - first ||
                   x->level[d] != d;
            if (d == x->depth)
                break;
            int g = ph_gang_of(size, 2, t - first), off, sz;
            ph_gang_shape(size, 2, g, &off, &sz);
            bad += x->num[d + 1] != g || x->count[d + 1] != 2;
            first += off;
            size = sz;
        }
        bad += size != 1;
        bad += x->deeper_rc != -1 || x->deeper_err != EINVAL || x->join_rc;
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(ph_gang_level(), 0);
}

/* ---- barriers among gangs: seeded random work ------------------------ */

static void spin_work(uint64_t *st, int max_us)
{
    uint64_t r = ph_splitmix64_next(st) % (uint64_t)(max_us + 1);
    double t0 = omp_get_wtime();
    while ((omp_get_wtime() - t0) * 1e6 < (double)r)
        ;
}

/* Every gang runs `rounds` rounds: each thread publishes (round, value)
 * in its slot after random work, a gang barrier, then every thread checks
 * the slots of its gang's threads, a gang barrier.  A barrier that let a
 * thread through early shows as a slot from an older round. */
static int gang_rounds(int gangs, int rounds, uint64_t seed, int T)
{
    static _Atomic long slot[MAXT];
    static int bad_by[MAXT];
    memset(bad_by, 0, sizeof bad_by);
    for (int i = 0; i < MAXT; i++)
        atomic_store(&slot[i], -1);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        uint64_t st = seed * 1000003u + (uint64_t)t;
        int g = ph_gang_split(gangs);
        if (g < 0)
            bad_by[t]++;
        size_t b = 0, e = 0;
        ph_gang_block((size_t)T, &b, &e);      /* the gang's threads */
        for (int r = 0; r < rounds; r++) {
            spin_work(&st, 50);
            atomic_store(&slot[t], (long)r * 1000 + g);
            if (ph_gang_barrier() < 0)
                bad_by[t]++;
            for (size_t u = b; u < e; u++)
                if (atomic_load(&slot[u]) != (long)r * 1000 + g)
                    bad_by[t]++;
            spin_work(&st, 20);
            if (ph_gang_barrier() < 0)
                bad_by[t]++;
        }
        if (ph_gang_join() < 0)
            bad_by[t]++;
    }
    int bad = 0;
    for (int t = 0; t < T; t++)
        bad += bad_by[t];
    return bad;
}

/* Gang 0 runs all its barriers while gang 1 waits for it to finish: a
 * barrier that involved the whole team would never end (the timeout
 * turns that into a failure). */
static int gangs_independent(int T)
{
    static _Atomic int done0;
    static int rc_by[MAXT];
    atomic_store(&done0, 0);
    memset(rc_by, 0, sizeof rc_by);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        int g = ph_gang_split(2);
        if (g == 0) {
            for (int i = 0; i < 200; i++)
                rc_by[t] |= ph_gang_barrier();
            if (ph_gang_thread_num() == 0)
                atomic_store(&done0, 1);
        } else {
            while (!atomic_load(&done0))
                sched_yield();
            rc_by[t] |= ph_gang_barrier();
        }
        rc_by[t] |= ph_gang_join();
    }
    int bad = 0;
    for (int t = 0; t < T; t++)
        bad += rc_by[t] != 0;
    return bad;
}

/* ---- uneven counts --------------------------------------------------- */

static void test_uneven(void)
{
    int T = 5, sizes[MAXT], nums[MAXT];
    size_t bb[MAXT], ee[MAXT];
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        nums[t] = ph_gang_split(3);
        sizes[t] = ph_gang_size();
        ph_gang_block(1000, &bb[t], &ee[t]);
        ph_gang_join();
    }
    /* 2 + 2 + 1 threads; blocks 0-400, 400-800, 800-1000 */
    CHECK(nums[0] == 0 && nums[1] == 0 && nums[2] == 1 && nums[3] == 1 &&
          nums[4] == 2);
    CHECK(sizes[0] == 2 && sizes[2] == 2 && sizes[4] == 1);
    CHECK(bb[0] == 0 && ee[0] == 400 && bb[3] == 400 && ee[3] == 800 &&
          bb[4] == 800 && ee[4] == 1000);
}

/* ---- bad use --------------------------------------------------------- */

static void test_mismatch(void)
{
    int rc[4], err[4], join_rc[4], again[4];
    char msg[4][256];
#pragma omp parallel num_threads(4)
    {
        int t = omp_get_thread_num();
        ph_gang_split(2);
        if (t == 0)
            rc[t] = ph_gang_split(2);            /* gang 0: split ... */
        else if (t == 1)
            rc[t] = ph_gang_barrier();           /* ... against barrier */
        else
            rc[t] = ph_gang_split(t == 2 ? 2 : 1); /* gang 1: counts differ */
        err[t] = errno;
        snprintf(msg[t], sizeof msg[t], "%s", ph_last_error());
        again[t] = ph_gang_barrier();          /* the gang is broken */
        join_rc[t] = ph_gang_join();             /* the parent is fine */
    }
    for (int t = 0; t < 4; t++) {
        CHECK_EQ(rc[t], -1);
        CHECK_EQ(err[t], EPROTO);
        CHECK_EQ(again[t], -1);
        CHECK_EQ(join_rc[t], 0);
    }
    CHECK_CONTAINS(msg[0], "ph_gang_barrier");
    CHECK_CONTAINS(msg[1], "ph_gang_split");
    CHECK_CONTAINS(msg[2], "same arguments");
    CHECK_EQ(ph_gang_level(), 0);
}

static void test_timeout(void)
{
    CHECK_EQ(ph_config_set("gang_timeout_ms", "200"), 0);
    int rc0 = 0, err0 = 0, late = 0, join_rc[2];
    char msg[256] = "";
#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num();
        ph_gang_split(1);                      /* one gang of both */
        if (t == 0) {
            rc0 = ph_gang_barrier();           /* thread 1 never comes */
            err0 = errno;
            snprintf(msg, sizeof msg, "%s", ph_last_error());
        }
#pragma omp barrier
        if (t == 1)
            late = ph_gang_barrier();          /* too late: broken */
        join_rc[t] = ph_gang_join();
    }
    CHECK_EQ(rc0, -1);
    CHECK_EQ(err0, ETIMEDOUT);
    CHECK_CONTAINS(msg, "thread(s) 1 of the gang");
    CHECK_EQ(late, -1);
    CHECK(join_rc[0] == 0 && join_rc[1] == 0);
    CHECK_EQ(ph_config_set("gang_timeout_ms", "0"), 0);
}

/* a region ended inside a gang: the next team of another size is told */
static void test_stale(void)
{
#pragma omp parallel num_threads(2)
    ph_gang_split(2);
    int rc[3], err[3];
#pragma omp parallel num_threads(3)
    {
        int t = omp_get_thread_num();
        rc[t] = ph_gang_num();
        err[t] = errno;
    }
    CHECK(rc[0] == -1 && err[0] == EINVAL);
    CHECK(rc[2] == 0);                       /* thread 2 was never split */
    /* the state was reset: the team splits again */
    int ok[3];
#pragma omp parallel num_threads(3)
    {
        int t = omp_get_thread_num();
        ok[t] = ph_gang_split(3) == t && ph_gang_join() == 0;
    }
    CHECK(ok[0] && ok[1] && ok[2]);
}

/* ---- the gang's data on the gang's nodes ----------------------------- */

static void test_place(void)
{
    size_t bytes = 8 * 4096;
    char *buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(buf != MAP_FAILED);
    int status[8], rc = -2, nodes_ok = 1;
#pragma omp parallel num_threads(4)
    {
        int g = ph_gang_split(2);
        if (g == 1 && ph_gang_thread_num() == 0)
            rc = ph_gang_place(buf, bytes, NULL);
        ph_gang_join();
        nodes_ok &= ph_current_node() == omp_get_thread_num();
    }
    CHECK(nodes_ok);
    CHECK_EQ(rc, 0);
    memset(buf, 1, bytes);
    CHECK_EQ(ph_query(buf, bytes, status), 0);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(status[i], i < 4 ? 2 : 3);
    munmap(buf, bytes);
}

int main(void)
{
    /* a simulated 4-node machine, one CPU per node: thread t of 4 on node t */
    setenv("PAGEHOME_TOPOLOGY", "nodes=4,cpus_per_node=1", 1);
    omp_set_dynamic(0);
    test_arithmetic();
    test_serial();
    for (int T = 1; T <= 7; T++)
        test_nested(T);
    test_nested(MAXT);
    uint64_t seed = 1;
    const char *s = getenv("PH_TEST_SEED");
    if (s)
        seed = strtoull(s, NULL, 10);
    CHECK_EQ(gang_rounds(2, 300, seed, 4), 0);
    CHECK_EQ(gang_rounds(3, 200, seed + 1, 7), 0);
    CHECK_EQ(gang_rounds(4, 200, seed + 2, 4), 0);
    CHECK_EQ(gang_rounds(1, 100, seed + 3, 3), 0);
    CHECK_EQ(ph_config_set("gang_timeout_ms", "20000"), 0);
    CHECK_EQ(gangs_independent(4), 0);
    CHECK_EQ(ph_config_set("gang_timeout_ms", "0"), 0);
    test_uneven();
    test_mismatch();
    test_timeout();
    test_stale();
    test_place();
    return check_summary("test_gang");
}
