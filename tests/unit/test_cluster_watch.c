/*
 * test_cluster_watch.c -- the watchdog's judgement (src/cluster/watch.h),
 * driven look by look, without a cluster:
 *   op          an operation in flight is stuck after the limit of looks
 *               the watchdog ran through, not before; a new operation
 *               starts a new count; none in flight, no verdict;
 *   stop        the whole process stopped (no look) for ten limits with
 *               an operation in flight, then going on: no verdict, and
 *               the count goes on from where it was plus one tick; the
 *               same for a silent role holder;
 *   starved     looks that come late (3 ticks apart) still count a tick
 *               each: a dead peer is judged, later;
 *   holder      a holder whose sign of life changes is never stuck; a
 *               silent one is after the limit; an operation in flight or
 *               no holder resets it.
 */
#include "check.h"

#include "cluster/watch.h"

#define MS 1000000ull

/* looks every tick from *now for `looks`; the last verdict */
static int run(ph_dsm_watch *w, uint64_t *now, int looks, uint64_t since,
               uint64_t beat)
{
    int v = PH_DSM_WATCH_OK;
    for (int i = 0; i < looks; i++) {
        *now += w->tick_ns;
        v = ph_dsm_watch_look(w, *now, since, beat);
    }
    return v;
}

static void test_op(void)
{
    ph_dsm_watch w;
    uint64_t now = 1000 * MS;
    ph_dsm_watch_init(&w, now, 250 * MS, 2000 * MS);
    /* nothing in flight, no holder */
    CHECK_EQ(run(&w, &now, 100, 0, 0), PH_DSM_WATCH_OK);
    /* an operation begins just after a look: 8 ticks = the limit, not more */
    uint64_t since = now + 1;
    CHECK_EQ(run(&w, &now, 8, since, 0), PH_DSM_WATCH_OK);
    CHECK_EQ(run(&w, &now, 1, since, 0), PH_DSM_WATCH_OP_STUCK);
    CHECK(w.op_for_ns > 2000 * MS && w.op_for_ns <= 2250 * MS);
    /* a new operation starts a new count */
    since = now;
    CHECK_EQ(run(&w, &now, 8, since, 0), PH_DSM_WATCH_OK);
    since = now;
    CHECK_EQ(run(&w, &now, 8, since, 0), PH_DSM_WATCH_OK);
    /* it ends */
    CHECK_EQ(run(&w, &now, 20, 0, 0), PH_DSM_WATCH_OK);
    CHECK_EQ(w.op_for_ns, 0);
}

static void test_stop(void)
{
    ph_dsm_watch w;
    uint64_t now = 5000 * MS;
    ph_dsm_watch_init(&w, now, 250 * MS, 2000 * MS);
    uint64_t since = now + 10;
    CHECK_EQ(run(&w, &now, 4, since, 0), PH_DSM_WATCH_OK);
    uint64_t before = w.op_for_ns;
    /* ^Z: no look for 20 s, then the job goes on */
    now += 20000 * MS;
    CHECK_EQ(ph_dsm_watch_look(&w, now, since, 0), PH_DSM_WATCH_OK);
    CHECK_EQ(w.op_for_ns, before + 250 * MS);
    /* still in flight after it: judged by the looks that ran (a tick
     * short of 1 s, then 1.25 s, then 3 more ticks reach 2 s less 10 ns,
     * the next is over) */
    CHECK_EQ(run(&w, &now, 3, since, 0), PH_DSM_WATCH_OK);
    CHECK_EQ(run(&w, &now, 1, since, 0), PH_DSM_WATCH_OP_STUCK);
    /* an operation that began right before the stop */
    ph_dsm_watch_init(&w, now, 250 * MS, 2000 * MS);
    since = now + 5;
    now += 60000 * MS;
    CHECK_EQ(ph_dsm_watch_look(&w, now, since, 0), PH_DSM_WATCH_OK);
    CHECK_EQ(w.op_for_ns, 250 * MS);
    /* a silent holder over a stop: the same */
    ph_dsm_watch_init(&w, now, 250 * MS, 2000 * MS);
    uint64_t beat = now - 3;
    CHECK_EQ(run(&w, &now, 5, 0, beat), PH_DSM_WATCH_OK);
    now += 30000 * MS;
    CHECK_EQ(ph_dsm_watch_look(&w, now, 0, beat), PH_DSM_WATCH_OK);
    CHECK_EQ(w.beat_for_ns, 5 * 250 * MS);    /* 4 looks + the stop's tick */
    CHECK_EQ(run(&w, &now, 3, 0, beat), PH_DSM_WATCH_OK);    /* = 2 s */
    CHECK_EQ(run(&w, &now, 1, 0, beat), PH_DSM_WATCH_HOLDER_STUCK);
}

static void test_starved(void)
{
    ph_dsm_watch w;
    uint64_t now = 7 * MS;
    ph_dsm_watch_init(&w, now, 250 * MS, 2000 * MS);
    uint64_t since = now;
    int v = PH_DSM_WATCH_OK, looks = 0;
    while (v == PH_DSM_WATCH_OK && looks < 100) {
        now += 750 * MS;          /* every look three ticks late */
        v = ph_dsm_watch_look(&w, now, since, 0);
        looks++;
    }
    CHECK_EQ(v, PH_DSM_WATCH_OP_STUCK);
    CHECK_EQ(looks, 9);           /* 8 ticks counted, then over */
}

static void test_holder(void)
{
    ph_dsm_watch w;
    uint64_t now = 100 * MS;
    ph_dsm_watch_init(&w, now, 100 * MS, 1000 * MS);
    /* its sign of life changes at every look: never stuck */
    int v = PH_DSM_WATCH_OK;
    for (int i = 0; i < 100 && v == PH_DSM_WATCH_OK; i++) {
        now += 100 * MS;
        v = ph_dsm_watch_look(&w, now, 0, now - 1);
    }
    CHECK_EQ(v, PH_DSM_WATCH_OK);
    /* silent: stuck after the limit (the first look sees the new value,
     * the next ten count 1 s, the one after is over) */
    uint64_t beat = now;
    CHECK_EQ(run(&w, &now, 11, 0, beat), PH_DSM_WATCH_OK);
    CHECK_EQ(run(&w, &now, 1, 0, beat), PH_DSM_WATCH_HOLDER_STUCK);
    /* an operation in flight resets the holder's count (its wait is the
     * operation's, judged by the other clock) */
    CHECK_EQ(run(&w, &now, 1, now, beat), PH_DSM_WATCH_OK);
    CHECK_EQ(w.beat_for_ns, 0);
    CHECK_EQ(run(&w, &now, 5, 0, beat), PH_DSM_WATCH_OK);
    /* nobody holds the role */
    CHECK_EQ(run(&w, &now, 30, 0, 0), PH_DSM_WATCH_OK);
    CHECK_EQ(w.beat_for_ns, 0);
}

int main(void)
{
    test_op();
    test_stop();
    test_starved();
    test_holder();
    return check_summary("test_cluster_watch");
}
