/*
 * test_period.c -- the iteration detector of the transparent mode
 * (src/preload/period.c): plain cycles, a cold first iteration, irregular
 * regions, a change of pattern, an iteration whose part repeats (a
 * V-cycle, and seeded programs of that shape), too few regions, random noise, seeded
 * random programs, and the early boundary (cfg.early).
 */
#include "check.h"

#include "preload/period.h"

#include <errno.h>
#include <stdint.h>

/* Region ids look like code addresses. */
#define R(x) ((uintptr_t)0x401000u + (uintptr_t)(x) * 0x40u)

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Feed n ids; count boundaries, and those not before `anchor`. */
typedef struct {
    int boundaries, wrong;
} tally;

static void feed(ph_period *pd, tally *t, uintptr_t id, uintptr_t anchor)
{
    if (ph_period_feed(pd, id)) {
        t->boundaries++;
        if (id != anchor)
            t->wrong++;
    }
}

static void test_defaults(void)
{
    ph_period_cfg c;
    ph_period_cfg_default(&c);
    CHECK_EQ(c.history, 4096);
    CHECK_EQ(c.max_period, 256);
    CHECK_EQ(c.fallback_after, 64);
    CHECK_EQ(c.early, 0);
    c.history = 100; /* < 2 * max_period */
    errno = 0;
    CHECK(ph_period_new_cfg(&c) == NULL);
    CHECK_EQ(errno, EINVAL);
    ph_period_free(NULL);
}

static void test_plain_cycle(void)
{
    ph_period *pd = ph_period_new();
    CHECK(pd != NULL);
    CHECK(ph_period_fallback(pd)); /* nothing fed yet */
    tally t = {0, 0};
    int first_boundary_step = -1;
    for (int step = 0; step < 50; step++) {
        for (int r = 0; r < 4; r++) {
            int b = ph_period_feed(pd, R(r));
            if (b) {
                t.boundaries++;
                if (r != 0)
                    t.wrong++;
                if (first_boundary_step < 0)
                    first_boundary_step = step;
            }
        }
    }
    /* Locked after two cycles: boundaries before steps 2..49. */
    CHECK_EQ(first_boundary_step, 2);
    CHECK_EQ(t.boundaries, 48);
    CHECK_EQ(t.wrong, 0);
    CHECK_EQ(ph_period_length(pd), 4);
    CHECK_EQ(ph_period_anchor(pd), R(0));
    CHECK(!ph_period_fallback(pd));
    ph_period_report rep;
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.ids, 200);
    CHECK_EQ(rep.boundaries, 48);
    CHECK_EQ(rep.locks, 1);
    CHECK_EQ(rep.unlocks, 0);
    CHECK_EQ(rep.mismatches, 0);
    CHECK_EQ(rep.period, 4);
    CHECK_EQ(rep.anchor, R(0));
    CHECK_EQ(rep.fallback, 0);

    /* The ompt test's shape: 3 regions x 10 steps -> 8 boundaries. */
    ph_period_reset(pd);
    tally u = {0, 0};
    for (int step = 0; step < 10; step++)
        for (int r = 0; r < 3; r++)
            feed(pd, &u, R(10 + r), R(10));
    CHECK_EQ(u.boundaries, 8);
    CHECK_EQ(u.wrong, 0);
    ph_period_free(pd);
}

static void test_short_periods(void)
{
    ph_period *pd = ph_period_new();
    /* One region per step: a period of 1 needs 4 in a row. */
    tally t = {0, 0};
    for (int i = 0; i < 20; i++)
        feed(pd, &t, R(7), R(7));
    CHECK_EQ(ph_period_length(pd), 1);
    CHECK_EQ(t.boundaries, 16);
    /* "A A B C" is not a period of 1. */
    ph_period_reset(pd);
    tally u = {0, 0};
    int ids[] = {1, 1, 2, 3};
    for (int step = 0; step < 20; step++)
        for (int r = 0; r < 4; r++)
            feed(pd, &u, R(ids[r]), R(1));
    CHECK_EQ(ph_period_length(pd), 4);
    ph_period_report rep;
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.locks, 1);
    CHECK_EQ(u.boundaries, 18);
    /* The anchor is an id that occurs once per cycle (not A, which occurs
     * twice): B, the first of those the program ran. */
    CHECK_EQ(ph_period_anchor(pd), R(2));
    ph_period_free(pd);
}

static void test_cold_first_iteration(void)
{
    ph_period *pd = ph_period_new();
    tally t = {0, 0};
    feed(pd, &t, R(100), 0); /* init regions */
    feed(pd, &t, R(101), 0);
    feed(pd, &t, R(102), 0);
    /* First step differs: an extra region in the middle (cold). */
    feed(pd, &t, R(0), R(0));
    feed(pd, &t, R(1), R(0));
    feed(pd, &t, R(103), R(0));
    feed(pd, &t, R(2), R(0));
    feed(pd, &t, R(3), R(0));
    for (int step = 1; step < 30; step++)
        for (int r = 0; r < 4; r++)
            feed(pd, &t, R(r), R(0));
    CHECK_EQ(ph_period_length(pd), 4);
    /* Despite the lock starting mid-cycle, the anchor is the loop's first
     * region. */
    CHECK_EQ(ph_period_anchor(pd), R(0));
    CHECK_EQ(t.wrong, 0);
    CHECK(t.boundaries >= 26 && t.boundaries <= 28);
    ph_period_free(pd);
}

static void test_irregular_inserts(void)
{
    ph_period *pd = ph_period_new();
    tally t = {0, 0};
    for (int step = 0; step < 200; step++) {
        for (int r = 0; r < 4; r++)
            feed(pd, &t, R(r), R(0));
        if (step % 10 == 9)
            feed(pd, &t, R(50), R(0)); /* convergence check */
        if (step % 7 == 3)
            feed(pd, &t, R(51), R(0)); /* a second irregular region */
        if (step % 13 == 5)
            feed(pd, &t, R(1), R(0));  /* a cycle region, run twice */
    }
    ph_period_report rep;
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.locks, 1);
    CHECK_EQ(rep.unlocks, 0);
    CHECK_EQ(rep.period, 4);
    CHECK_EQ(t.wrong, 0);
    CHECK(t.boundaries >= 196);
    CHECK(rep.mismatches > 0);

    /* A region skipped now and then (not the anchor). */
    ph_period_reset(pd);
    tally u = {0, 0};
    for (int step = 0; step < 100; step++)
        for (int r = 0; r < 4; r++)
            if (!(r == 2 && step % 9 == 8))
                feed(pd, &u, R(r), R(0));
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.unlocks, 0);
    CHECK_EQ(u.wrong, 0);
    CHECK(u.boundaries >= 97);
    ph_period_free(pd);
}

static void test_period_change(void)
{
    ph_period *pd = ph_period_new();
    tally t = {0, 0};
    for (int step = 0; step < 30; step++)
        for (int r = 0; r < 4; r++)
            feed(pd, &t, R(r), R(0));
    CHECK_EQ(ph_period_length(pd), 4);
    /* A new phase of the program: another loop, no common region. */
    tally u = {0, 0};
    for (int step = 0; step < 40; step++)
        for (int r = 0; r < 3; r++)
            feed(pd, &u, R(20 + r), R(20));
    CHECK_EQ(ph_period_length(pd), 3);
    CHECK_EQ(ph_period_anchor(pd), R(20));
    CHECK_EQ(u.wrong, 0);
    CHECK(u.boundaries >= 30);
    ph_period_report rep;
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.locks, 2);
    CHECK_EQ(rep.unlocks, 1);
    CHECK_EQ(rep.last_period, 3);

    /* Same first region, the rest of the step changed for good. */
    tally v = {0, 0};
    int ids[] = {20, 30, 31, 32, 33};
    for (int step = 0; step < 40; step++)
        for (int r = 0; r < 5; r++)
            feed(pd, &v, R(ids[r]), R(20));
    CHECK_EQ(ph_period_length(pd), 5);
    CHECK_EQ(ph_period_anchor(pd), R(20));
    CHECK_EQ(v.wrong, 0);
    CHECK(v.boundaries >= 35);
    ph_period_free(pd);
}

static void test_too_few_regions(void)
{
    ph_period *pd = ph_period_new();
    CHECK(ph_period_fallback(pd));
    CHECK_EQ(ph_period_feed(pd, R(1)), 0); /* one long region */
    CHECK(ph_period_fallback(pd));
    CHECK_EQ(ph_period_length(pd), 0);
    /* A few distinct regions: not yet a fallback, no period either. */
    for (int i = 2; i < 10; i++)
        CHECK_EQ(ph_period_feed(pd, R(i)), 0);
    CHECK(!ph_period_fallback(pd));
    /* No repetition within fallback_after ids. */
    for (int i = 10; i < 66; i++)
        ph_period_feed(pd, R(i));
    CHECK(ph_period_fallback(pd));
    ph_period_report rep;
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.fallback, 1);
    CHECK_EQ(rep.locks, 0);
    CHECK_EQ(rep.boundaries, 0);
    /* A period longer than max_period is not found. */
    ph_period_cfg c;
    ph_period_cfg_default(&c);
    c.max_period = 8;
    c.history = 64;
    ph_period *small = ph_period_new_cfg(&c);
    CHECK(small != NULL);
    for (int step = 0; step < 20; step++)
        for (int r = 0; r < 9; r++)
            ph_period_feed(small, R(r));
    CHECK_EQ(ph_period_length(small), 0);
    CHECK(ph_period_fallback(small));
    ph_period_free(small);
    ph_period_free(pd);
}

static void test_noise(void)
{
    ph_period *pd = ph_period_new();
    rng_state = 0x9e3779b97f4a7c15ull;
    /* Many distinct regions in random order: never a period. */
    int boundaries = 0;
    for (int i = 0; i < 20000; i++)
        boundaries += ph_period_feed(pd, R(rng() % 1000));
    ph_period_report rep;
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.locks, 0);
    CHECK_EQ(boundaries, 0);
    CHECK(ph_period_fallback(pd));

    /* Few regions in random order: short chance repetitions may lock, but
     * such locks are dropped soon and report few boundaries. */
    ph_period_reset(pd);
    boundaries = 0;
    int locked_ids = 0;
    for (int i = 0; i < 20000; i++) {
        boundaries += ph_period_feed(pd, R(rng() % 16));
        locked_ids += ph_period_length(pd) != 0;
    }
    ph_period_get_report(pd, &rep);
    printf("noise over 16 ids: %d boundaries, %d locks, %d ids locked "
           "of 20000\n", boundaries, (int)rep.locks, locked_ids);
    CHECK(boundaries < 20000 / 100);
    CHECK(locked_ids < 20000 / 10);
    CHECK_EQ(rep.locks, rep.unlocks + (rep.period != 0));
    ph_period_free(pd);
}

/* Seeded random programs: a cycle of distinct regions, a cold prefix,
 * random irregular regions. */
static void test_seeded(void)
{
    ph_period *pd = ph_period_new();
    int failures = 0;
    for (uint64_t seed = 1; seed <= 300; seed++) {
        rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
        ph_period_reset(pd);
        size_t len = 1 + (size_t)(rng() % 60);
        uintptr_t cyc[64];
        for (size_t j = 0; j < len; j++)
            cyc[j] = R(1000 * seed + j); /* distinct */
        int prefix = (int)(rng() % 6);
        for (int i = 0; i < prefix; i++)
            ph_period_feed(pd, R(500000 + rng() % 1000));
        int steps = 100, inserts = 0;
        tally t = {0, 0};
        for (int step = 0; step < steps; step++) {
            /* One step in eight runs an irregular region somewhere. */
            size_t at = rng() % 8 == 0 ? (size_t)(rng() % len) : SIZE_MAX;
            for (size_t j = 0; j < len; j++) {
                feed(pd, &t, cyc[j], cyc[0]);
                if (j == at) {
                    feed(pd, &t, R(600000 + rng() % 100000), cyc[0]);
                    inserts++;
                }
            }
        }
        ph_period_report rep;
        ph_period_get_report(pd, &rep);
        int ok = rep.period == len && rep.anchor == cyc[0] && t.wrong == 0 &&
                 t.boundaries >= steps - 12 && rep.unlocks == 0;
        if (!ok) {
            failures++;
            fprintf(stderr, "seed %llu: len %zu prefix %d inserts %d: "
                    "period %zu anchor %s, %d boundaries (%d wrong), "
                    "%llu locks %llu unlocks\n", (unsigned long long)seed,
                    len, prefix, inserts, rep.period,
                    rep.anchor == cyc[0] ? "ok" : "WRONG", t.boundaries,
                    t.wrong, (unsigned long long)rep.locks,
                    (unsigned long long)rep.unlocks);
        }
    }
    CHECK_EQ(failures, 0);
    ph_period_free(pd);
}

/* The report says when the unlocked stream is repeating itself (the
 * watchdog of ompt.c waits longer then). */
static void test_repeating(void)
{
    ph_period *pd = ph_period_new();
    ph_period_report rep;
    /* two init regions, then the first cycle of 6: no repetition yet */
    ph_period_feed(pd, R(100));
    ph_period_feed(pd, R(101));
    for (int r = 0; r < 6; r++)
        ph_period_feed(pd, R(r));
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.repeating, 0);
    /* one id of the second cycle: a single match is not a streak yet */
    ph_period_feed(pd, R(0));
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.repeating, 0);
    /* two: period 6 is repeating, not locked yet */
    ph_period_feed(pd, R(1));
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.period, 0);
    CHECK_EQ(rep.repeating, 6);
    /* locked after the second cycle: no longer "repeating" */
    for (int r = 2; r < 6; r++)
        ph_period_feed(pd, R(r));
    ph_period_feed(pd, R(0));
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.period, 6);
    CHECK_EQ(rep.repeating, 0);
    /* a stream of distinct ids never repeats */
    ph_period_reset(pd);
    for (int i = 0; i < 40; i++)
        ph_period_feed(pd, R(200 + i));
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.repeating, 0);
    ph_period_free(pd);
}

/* From a reset: 40 iterations of A, (B C) `reps` times, then `tail`
 * ids of their own. */
static void feed_inner_loop(ph_period *pd, int reps, int tail)
{
    ph_period_reset(pd);
    for (int step = 0; step < 40; step++) {
        ph_period_feed(pd, R(40));
        for (int k = 0; k < reps; k++) {
            ph_period_feed(pd, R(41));
            ph_period_feed(pd, R(42));
        }
        for (int k = 0; k < tail; k++)
            ph_period_feed(pd, R(43 + k));
    }
}

/* An iteration whose part repeats a few regions (a multigrid V-cycle:
 * the up-sweep runs zero, prolongate, residual and smooth once per
 * level) first locks onto that part; once two whole iterations are seen,
 * and a quarter of their ids did not fit the part's cycle, the detector
 * relocks onto the iteration and reports one boundary per iteration.
 * The ids are those of workloads/nas/mg.c's class S under the transparent
 * mode: a region's id is its call site, and the compiler inlines the
 * grid functions, so the bottom level's and the top level's calls have
 * sites of their own while the up-sweep's loop shares one per function. */
static void test_nested(void)
{
    enum { RESTRICT = 1, ZERO1, SMOOTH1, ZERO, PROLONG, RESID, SMOOTH,
           PROLONG_T, RESID_T, SMOOTH_T, RESID_IT, NORM, ZERO_U, ZERO_R,
           HALO, RESID_0, NORM_0 };
    uintptr_t it[32];
    int n = 0;
    for (int k = 0; k < 4; k++)
        it[n++] = R(RESTRICT);
    it[n++] = R(ZERO1);
    it[n++] = R(SMOOTH1);
    for (int k = 2; k < 5; k++) {
        it[n++] = R(ZERO);
        it[n++] = R(PROLONG);
        it[n++] = R(RESID);
        it[n++] = R(SMOOTH);
    }
    it[n++] = R(PROLONG_T);
    it[n++] = R(RESID_T);
    it[n++] = R(SMOOTH_T);
    it[n++] = R(RESID_IT);
    it[n++] = R(NORM);
    CHECK_EQ(n, 23);
    ph_period_cfg cfg;
    ph_period_cfg_default(&cfg);
    cfg.early = 1; /* as the transparent mode feeds its regions */
    ph_period *pd = ph_period_new_cfg(&cfg);
    ph_period_report rep;
    /* the set-up: every level's arrays zeroed, a halo exchange, the first
     * residual and its norm (NAS MG's order) */
    for (int k = 0; k < 5; k++) {
        ph_period_feed(pd, R(ZERO_U));
        ph_period_feed(pd, R(ZERO_R));
    }
    ph_period_feed(pd, R(ZERO_U));
    ph_period_feed(pd, R(HALO));
    ph_period_feed(pd, R(RESID_0));
    ph_period_feed(pd, R(NORM_0));
    int late = 0, late_wrong = 0;
    for (int step = 0; step < 30; step++) {
        for (int j = 0; j < n; j++) {
            int b = ph_period_feed(pd, it[j]);
            if (step >= 10 && b) {
                late++;
                late_wrong += ph_period_anchor(pd) != it[j];
            }
        }
    }
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.period, 23);
    CHECK(rep.locks >= 2);       /* a part's cycle first */
    CHECK_EQ(rep.locks, rep.unlocks + 1);
    CHECK_EQ(late, 20);          /* one boundary per iteration */
    CHECK_EQ(late_wrong, 0);

    /* A part that is most of the iteration keeps its period: (B C) five
     * times between A and D, two ids of twelve off the cycle. */
    feed_inner_loop(pd, 5, 1);
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.period, 2);
    CHECK_EQ(rep.unlocks, 0);

    /* Twice (B C), then D E F A: four of nine off, the iteration wins. */
    feed_inner_loop(pd, 2, 4);
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.period, 9);
    CHECK_EQ(rep.locks, rep.unlocks + 1);
    ph_period_free(pd);
}

/* Seeded programs of that shape: an iteration of a prefix, an inner
 * loop of L regions run m times, and a suffix (ids distinct but for the
 * inner loop's), after a set-up of a few other regions.  Where the prefix
 * and suffix are more than a third of the iteration the detector must end
 * on the whole iteration, with one boundary an iteration at the same id;
 * where they are under a fifth it may keep the inner loop (either is an
 * iteration then); in every case a lock is held at the end, and every
 * lock but the last was dropped. */
static void test_nested_seeded(void)
{
    ph_period_cfg cfg;
    ph_period_cfg_default(&cfg);
    cfg.early = 1;
    ph_period *pd = ph_period_new_cfg(&cfg);
    int failures = 0, whole = 0;
    for (uint64_t seed = 1; seed <= 400; seed++) {
        rng_state = seed * 0x9e3779b97f4a7c15ull + 7;
        ph_period_reset(pd);
        size_t pre = rng() % 6, len = 1 + rng() % 6, m = 2 + rng() % 5,
               suf = rng() % 7;
        if (pre + suf == 0)
            suf = 1;
        size_t total = pre + len * m + suf;
        uintptr_t it[128];
        size_t n = 0;
        for (size_t j = 0; j < pre; j++)
            it[n++] = R(10000 * seed + j);
        for (size_t k = 0; k < m; k++)
            for (size_t j = 0; j < len; j++)
                it[n++] = R(10000 * seed + 100 + j);
        for (size_t j = 0; j < suf; j++)
            it[n++] = R(10000 * seed + 200 + j);
        size_t setup = rng() % 8;
        for (size_t j = 0; j < setup; j++)
            ph_period_feed(pd, R(10000 * seed + 300 + rng() % 3));
        int late = 0;
        uintptr_t late_id = 0;
        int late_mixed = 0;
        for (int step = 0; step < 40; step++)
            for (size_t j = 0; j < n; j++)
                if (ph_period_feed(pd, it[j]) && step >= 20) {
                    late++;
                    if (late_id && it[j] != late_id)
                        late_mixed = 1;
                    late_id = it[j];
                }
        ph_period_report rep;
        ph_period_get_report(pd, &rep);
        double outside = (double)(pre + suf) / (double)total;
        int ok = rep.period != 0 && rep.locks == rep.unlocks + 1;
        if (outside > 1.0 / 3.0) {
            ok = ok && rep.period == total && late == 20 && !late_mixed;
            whole++;
        } else if (outside < 0.2) {
            ok = ok && (rep.period == total || rep.period == len);
        }
        if (!ok) {
            failures++;
            fprintf(stderr, "nested seed %llu: pre %zu inner %zu x %zu suf "
                    "%zu (setup %zu): period %zu, %d late boundaries%s, "
                    "%llu locks %llu unlocks\n", (unsigned long long)seed,
                    pre, len, m, suf, setup, rep.period, late,
                    late_mixed ? " at several ids" : "",
                    (unsigned long long)rep.locks,
                    (unsigned long long)rep.unlocks);
        }
    }
    CHECK_EQ(failures, 0);
    CHECK(whole > 100); /* the seeds cover the case that matters */
    ph_period_free(pd);
}

/* The indices (into a stream of ids) at which pd reported boundaries,
 * at most max of them; returns how many. */
static int boundaries_at(ph_period *pd, const uintptr_t *ids, int n,
                         int *at, int max)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (ph_period_feed(pd, ids[i]) && k < max)
            at[k++] = i;
    return k;
}

static void test_early(void)
{
    uintptr_t ids[64];
    int at[64];
    ph_period_report rep;

    /* One region an iteration: without early the lock needs four, and the
     * first boundary is the fifth; with early, the second is one too. */
    for (int i = 0; i < 20; i++)
        ids[i] = R(7);
    ph_period *plain = ph_period_new();
    int k = boundaries_at(plain, ids, 20, at, 64);
    CHECK_EQ(k, 16);
    CHECK_EQ(at[0], 4);
    ph_period_free(plain);
    ph_period_cfg c;
    ph_period_cfg_default(&c);
    c.early = 1;
    ph_period *pd = ph_period_new_cfg(&c);
    CHECK(pd != NULL);
    k = boundaries_at(pd, ids, 20, at, 64);
    CHECK_EQ(k, 17);
    CHECK_EQ(at[0], 1);
    CHECK_EQ(at[1], 4); /* nothing between it and the lock's */
    CHECK_EQ(at[16], 19);
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.early, 1);
    CHECK_EQ(rep.boundaries, 17);
    CHECK_EQ(rep.period, 1);

    /* An init region, then a cycle of three: early at the cycle's second
     * start, then the lock's boundaries at every later one. */
    ph_period_reset(pd);
    ids[0] = R(50);
    for (int i = 1; i < 31; i++)
        ids[i] = R((i - 1) % 3);
    k = boundaries_at(pd, ids, 31, at, 64);
    CHECK_EQ(at[0], 4);
    CHECK_EQ(at[1], 7);
    CHECK_EQ(k, 1 + (31 - 7 + 2) / 3);
    for (int j = 0; j < k; j++)
        CHECK_EQ(ids[at[j]], R(0));

    /* Once only, also when the lock is lost and found again. */
    ph_period_reset(pd);
    for (int i = 0; i < 64; i++)
        ids[i] = i < 24 ? R(i % 2) : R(10 + i % 5);
    k = boundaries_at(pd, ids, 64, at, 64);
    CHECK_EQ(at[0], 2);
    ph_period_get_report(pd, &rep);
    CHECK(rep.locks >= 2);
    CHECK_EQ(rep.early, 1);
    int at_plain[64];
    plain = ph_period_new();
    int kp = boundaries_at(plain, ids, 64, at_plain, 64);
    ph_period_free(plain);
    CHECK_EQ(k, kp + 1); /* the same boundaries and the early one */
    for (int j = 0; j + 1 < k && j < kp; j++)
        CHECK_EQ(at[j + 1], at_plain[j]);

    /* Noise: one repetition gives the one early boundary, no lock ever. */
    ph_period_reset(pd);
    rng_state = 0x243f6a8885a308d3ull;
    int b = 0;
    for (int i = 0; i < 5000; i++)
        b += ph_period_feed(pd, R(rng() % 1000));
    ph_period_get_report(pd, &rep);
    CHECK_EQ(b, 1);
    CHECK_EQ(rep.locks, 0);
    CHECK(ph_period_fallback(pd));

    /* A stream of distinct ids never repeats: no boundary. */
    ph_period_reset(pd);
    b = 0;
    for (int i = 0; i < 40; i++)
        b += ph_period_feed(pd, R(200 + i));
    CHECK_EQ(b, 0);
    ph_period_get_report(pd, &rep);
    CHECK_EQ(rep.early, 0);
    ph_period_free(pd);
}

int main(void)
{
    test_defaults();
    test_plain_cycle();
    test_short_periods();
    test_cold_first_iteration();
    test_irregular_inserts();
    test_period_change();
    test_nested();
    test_nested_seeded();
    test_too_few_regions();
    test_repeating();
    test_noise();
    test_seeded();
    test_early();
    return check_summary("test_period");
}
