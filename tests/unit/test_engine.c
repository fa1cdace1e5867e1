/*
 * test_engine.c -- the migration engine on the simulated machine, driven
 * by the synthetic workloads of tests/sim/workloads.h through the
 * synthetic access source: deterministic counts, exact expectations.
 *
 * Machine: 4 nodes, 2 sockets of 2 (SLIT 10/12/32).  Every test builds a
 * rig: the simulator (wrapped in the fault injector), a mover, an engine
 * with sync invocations, and one array of NPAGES pages placed as the test
 * asks (single node, round-robin, owner = what first touch by the owners
 * would give).
 */
#include "check.h"

#include "../sim/engine_rig.h"
#include "../sim/workloads.h"

#include "base/clock.h"
#include "base/error.h"
#include "base/json_write.h"
#include "config/options.h"
#include "engine/engine.h"
#include "os/os.h"
#include "topo/topo.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NPAGES 256
#define PG 4096u

static ph_topology *topo;

typedef struct rig {
    ph_os *sim, *os;
    ph_mover *mover;
    ph_engine *e;
    workload wl;
    char *mem;
    size_t npages;
    ph_hot *h;
} rig;

static ph_engine_cfg base_cfg(void)
{
    ph_engine_cfg c = rig_engine_cfg();
    c.stable_after = 3;
    c.cold_after = 3;
    c.melt_iters = 8;
    c.critical_pages = 0;
    return c;
}

static int node_id(int idx)
{
    return topo->nodes[idx].id;
}

/* Place page p of the rig's array on node index `idx`. */
static void put(rig *r, size_t p, int idx)
{
    if (ph_os_populate_on(r->sim, r->mem + p * PG, PG, node_id(idx)))
        fprintf(stderr, "populate_on: %s\n", ph_error_message());
}

enum init { INIT_NODE0, INIT_RR, INIT_OWNER };

/* The mover's settings: the defaults of move_batch_pages, move_retries
 * and node_full_backoff_ms. */
static const ph_mover_cfg mover_cfg = {512, 3, 1000 * 1000000ull, 0};

/* The nodes the process may use (ph_sim_set_allowed), 0: all. */
static uint64_t rig_allowed;

static void rig_open(rig *r, wl_kind kind, size_t npages, enum init init,
                     const ph_engine_cfg *cfg, size_t budget, double noise,
                     const ph_fault_plan *faults)
{
    memset(r, 0, sizeof *r);
    r->sim = ph_os_sim_open(topo);
    r->os = ph_os_faulty_open(r->sim, faults);
    r->mover = ph_mover_new(r->os, &mover_cfg);
    r->npages = npages;
    r->wl = (workload){.kind = kind, .nnodes = topo->nnodes,
                       .npages = npages, .acc = 1000};
    r->mem = ph_os_map(r->sim, npages * PG, PG, PH_MAP_NO_THP);
    if (!r->sim || !r->os || !r->mover || !r->mem) {
        fprintf(stderr, "rig: %s\n", ph_error_message());
        exit(1);
    }
    for (size_t p = 0; p < npages; p++)
        put(r, p, init == INIT_NODE0 ? 0
                  : init == INIT_RR  ? (int)(p % (size_t)topo->nnodes)
                                     : wl_owner(&r->wl, p));
    if (rig_allowed && ph_sim_set_allowed(r->sim, rig_allowed) != 0)
        exit(1);
    r->e = rig_engine_open(topo, r->os, r->mover, cfg, wl_model, &r->wl, budget, noise, 7);
    r->h = ph_engine_register(r->e, r->mem, npages * PG, "grid");
    CHECK(r->h != NULL);
}

static void rig_close(rig *r)
{
    ph_engine_free(r->e);
    ph_os_unmap(r->sim, r->mem, r->npages * PG);
    ph_mover_free(r->mover);
    ph_os_close(r->os);
}

/* Node index of every page. */
static void homes(rig *r, int *home)
{
    void **pg = malloc(r->npages * sizeof *pg);
    for (size_t p = 0; p < r->npages; p++)
        pg[p] = r->mem + p * PG;
    ph_os_query(r->sim, r->npages, pg, home);
    for (size_t p = 0; p < r->npages; p++)
        home[p] = ph_topo_node_index(topo, home[p]);
    free(pg);
}

/* Pages on the workload's target node (pages without a single target
 * are not counted). */
static size_t on_target(rig *r)
{
    int *h = malloc(r->npages * sizeof *h);
    homes(r, h);
    size_t ok = 0;
    for (size_t p = 0; p < r->npages; p++)
        ok += wl_target(&r->wl, p) >= 0 && h[p] == wl_target(&r->wl, p);
    free(h);
    return ok;
}

static size_t with_target(rig *r)
{
    size_t n = 0;
    for (size_t p = 0; p < r->npages; p++)
        n += wl_target(&r->wl, p) >= 0;
    return n;
}

static void iterate(rig *r)
{
    CHECK_EQ(ph_engine_iteration_end(r->e), 0);
    r->wl.iteration++;
}

static ph_engine_totals totals(rig *r)
{
    ph_engine_totals t;
    ph_engine_get_totals(r->e, &t);
    return t;
}

static uint64_t sim_moved(rig *r)
{
    ph_sim_counters c;
    ph_sim_counters_get(r->sim, &c);
    return c.moved_pages;
}

/* ---- convergence ---------------------------------------------------- */

static void test_converges(wl_kind kind, enum init init, const char *what)
{
    ph_engine_cfg c = base_cfg();
    rig r;
    rig_open(&r, kind, NPAGES, init, &c, 0, 0.0, NULL);
    iterate(&r);
    iterate(&r);
    size_t ok = on_target(&r), want = with_target(&r);
    if (ok != want)
        fprintf(stderr, "%s: %zu of %zu pages on their owner\n", what, ok,
                want);
    CHECK_EQ(ok, want);
    /* nothing moves once placement is right */
    uint64_t moved = sim_moved(&r);
    iterate(&r);
    iterate(&r);
    CHECK_EQ(sim_moved(&r), moved);
    ph_engine_totals t = totals(&r);
    CHECK(t.remote_accesses_after < t.remote_accesses_before);
    rig_close(&r);
}

/* A process that may place pages on nodes 0 and 2 only (numactl
 * --membind=0,2): pages owned by threads on nodes 1 and 3 go to the
 * allowed node nearest to their owner -- 0 and 2, the nodes of their own
 * socket (12 against 32), not the lowest allowed one -- and no move ever
 * names a node outside the binding. */
static void test_allowed_nodes(void)
{
    ph_engine_cfg c = base_cfg();
    rig r;
    rig_allowed = (1u << 0) | (1u << 2);
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    rig_allowed = 0;
    CHECK_EQ(ph_os_allowed_nodes(r.os), (uint64_t)0x5);
    for (int i = 0; i < 4; i++)
        iterate(&r);
    int *h = malloc(NPAGES * sizeof *h);
    homes(&r, h);
    static const int stand_in[4] = {0, 0, 2, 2};
    size_t right = 0, moved_pages = 0;
    for (size_t p = 0; p < NPAGES; p++) {
        right += h[p] == stand_in[wl_owner(&r.wl, p)];
        moved_pages += h[p] != 0;
    }
    CHECK_EQ(right, (size_t)NPAGES);
    CHECK_EQ(moved_pages, (size_t)NPAGES / 2); /* nodes 2 and 3's halves */
    ph_fault_stats fs;
    CHECK_EQ(ph_os_faulty_stats(r.os, &fs), 0);
    CHECK_EQ(fs.pages_to_node[1], 0u);
    CHECK_EQ(fs.pages_to_node[3], 0u);
    CHECK(fs.pages_to_node[2] > 0);
    ph_sim_counters sc;
    ph_sim_counters_get(r.sim, &sc);
    CHECK_EQ(sc.move_failed_pages, 0u);
    /* and it stays so */
    uint64_t moved = sim_moved(&r);
    iterate(&r);
    iterate(&r);
    CHECK_EQ(sim_moved(&r), moved);
    free(h);
    rig_close(&r);
}

/* The program binds its memory after the engine started (libnuma's
 * numa_set_membind: the OS table's process_policy): the next invocation
 * keeps to the binding; lifted while the engine is still active (an
 * engine that called the placement stable stays so), pages go to their
 * owners' own nodes. */
static void test_binding_later(void)
{
    ph_engine_cfg c = base_cfg();
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    static const int bind[2] = {0, 2};
    CHECK_EQ(ph_os_process_policy(r.os, 1, bind, 2), 0);
    CHECK_EQ(ph_os_allowed_nodes(r.os), (uint64_t)0x5);
    iterate(&r);
    iterate(&r);
    int *h = malloc(NPAGES * sizeof *h);
    homes(&r, h);
    static const int stand_in[4] = {0, 0, 2, 2};
    size_t right = 0;
    for (size_t p = 0; p < NPAGES; p++)
        right += h[p] == stand_in[wl_owner(&r.wl, p)];
    CHECK_EQ(right, (size_t)NPAGES);
    ph_fault_stats fs;
    CHECK_EQ(ph_os_faulty_stats(r.os, &fs), 0);
    CHECK_EQ(fs.pages_to_node[1], 0u);
    CHECK_EQ(fs.pages_to_node[3], 0u);
    /* back to the default policy: every node again */
    CHECK_EQ(ph_os_process_policy(r.os, 0, NULL, 0), 0);
    CHECK_EQ(ph_os_allowed_nodes(r.os), (uint64_t)0xf);
    CHECK(totals(&r).active);
    iterate(&r);
    iterate(&r);
    CHECK_EQ(on_target(&r), NPAGES);
    free(h);
    rig_close(&r);
}

static void test_first_touch_stays(void)
{
    ph_engine_cfg c = base_cfg();
    rig r;
    rig_open(&r, WL_LAPLACE, NPAGES, INIT_OWNER, &c, 0, 0.0, NULL);
    for (int i = 0; i < 4; i++)
        iterate(&r);
    CHECK_EQ(sim_moved(&r), 0);
    CHECK_EQ(totals(&r).migrated, 0);
    rig_close(&r);
    /* a vector every node reads equally stays where it is, too */
    rig_open(&r, WL_CG, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    for (int i = 0; i < 4; i++)
        iterate(&r);
    CHECK_EQ(sim_moved(&r), 0);
    rig_close(&r);
}

static void test_noise_and_budget(void)
{
    /* sampling noise: every access kept with probability 0.3 */
    ph_engine_cfg c = base_cfg();
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.7, NULL);
    iterate(&r);
    iterate(&r);
    CHECK_EQ(on_target(&r), NPAGES);
    rig_close(&r);
    /* a budget of a quarter of the pages per iteration: rotation reaches
     * every page within 4 iterations */
    c.full_snapshot = 0;
    rig_open(&r, WL_OWNER, NPAGES, INIT_RR, &c, NPAGES / 4, 0.0, NULL);
    for (int i = 0; i < 4; i++)
        iterate(&r);
    CHECK_EQ(on_target(&r), NPAGES);
    rig_close(&r);
}

static void test_deactivates(void)
{
    ph_engine_cfg c = base_cfg();
    c.stable_after = 2;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    iterate(&r); /* moves */
    CHECK(totals(&r).active);
    iterate(&r); /* quiet 1 */
    iterate(&r); /* quiet 2: stops */
    CHECK(!totals(&r).active);
    uint64_t inv = totals(&r).invocations;
    iterate(&r);
    CHECK_EQ(totals(&r).invocations, inv);
    CHECK_EQ(totals(&r).iterations, 4);
    rig_close(&r);
}

/* Areas registered for a while only -- a program's temporary, allocated
 * and freed inside one iteration and kept by transparent mode for reuse
 * (idle) -- neither postpone the stop nor restart a stopped engine; one
 * still in use at the next iteration end does both, from then on. */
static void test_fresh_areas(void)
{
    ph_engine_cfg c = base_cfg();
    c.stable_after = 2;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    const size_t tp = 16;
    char *tmp = ph_os_map(r.sim, 3 * tp * PG, PG, PH_MAP_NO_THP);
    CHECK(tmp != NULL);
    CHECK_EQ(ph_os_populate_on(r.sim, tmp, 3 * tp * PG, node_id(0)), 0);
    iterate(&r); /* moves */
    iterate(&r); /* quiet 1 */
    /* a temporary that went idle before the iteration end: the next
     * invocation, quiet 2, stops (the synthetic source drops its interval
     * when a range leaves it, so that may be an iteration later) */
    ph_hot *t1 = ph_engine_register(r.e, tmp, tp * PG, "temp 1");
    CHECK(t1 != NULL);
    CHECK_EQ(ph_engine_area_idle(r.e, t1, 1), 0);
    uint64_t inv = totals(&r).invocations;
    for (int i = 0; i < 8 && totals(&r).active; i++)
        iterate(&r);
    CHECK(!totals(&r).active);
    CHECK_EQ(totals(&r).invocations, inv + 1);
    inv = totals(&r).invocations;
    /* stopped: another temporary, idle again before the end, restarts
     * nothing */
    ph_hot *t2 = ph_engine_register(r.e, tmp + tp * PG, tp * PG, "temp 2");
    CHECK(t2 != NULL);
    CHECK(!totals(&r).active);
    CHECK_EQ(ph_engine_area_idle(r.e, t2, 1), 0);
    iterate(&r);
    iterate(&r);
    CHECK(!totals(&r).active);
    CHECK_EQ(totals(&r).invocations, inv);
    /* a kept block taken again, still in use at the end: the engine looks
     * again from that end on */
    CHECK_EQ(ph_engine_area_idle(r.e, t1, 0), 0);
    CHECK(!totals(&r).active);
    iterate(&r);
    CHECK(totals(&r).active);
    /* and stops again after stable_after quiet invocations */
    for (int i = 0; i < 8 && totals(&r).active; i++)
        iterate(&r);
    CHECK(!totals(&r).active);
    /* a new area in use at the end restarts it too */
    ph_hot *t3 = ph_engine_register(r.e, tmp + 2 * tp * PG, tp * PG, "array");
    CHECK(t3 != NULL);
    iterate(&r);
    CHECK(totals(&r).active);
    /* misuse */
    CHECK_EQ(ph_engine_area_idle(r.e, NULL, 1), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(ph_engine_unregister(r.e, t1), 0);
    CHECK_EQ(ph_engine_area_idle(r.e, t1, 1), -1);
    CHECK_EQ(errno, ENOENT);
    CHECK_EQ(ph_engine_unregister(r.e, t2), 0);
    CHECK_EQ(ph_engine_unregister(r.e, t3), 0);
    ph_os_unmap(r.sim, tmp, 3 * tp * PG);
    rig_close(&r);
}

/* Iterate until the engine calls the placement stable, at most max
 * iterations; *seen: the source's samples at the last iteration that left
 * it active.  Returns the iterations run. */
static int until_stable(rig *r, int max, uint64_t *seen)
{
    ph_source *src = ph_engine_source(r->e);
    int iters = 0;
    *seen = 0;
    while (totals(r).active && iters < max) {
        ph_source_stats b;
        iterate(r);
        src->ops->stats(src, &b);
        if (totals(r).active)
            *seen = b.samples;
        iters++;
    }
    return iters;
}

/* Stability from evidence: intervals that trapped nothing are no
 * invocations and never make the placement "stable", and with a budget
 * the engine stops only after every page was looked at since the last
 * migration. */
static void test_stable_needs_evidence(void)
{
    ph_engine_cfg c = base_cfg();
    c.stable_after = 2;
    c.cold_after = 0;
    rig r;
    /* the workload touches nothing (the pages watched are not used in
     * these iterations): no sample, so no decision at all */
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    r.wl.acc = 0;
    for (int i = 0; i < 10; i++)
        iterate(&r);
    CHECK(totals(&r).active);
    CHECK_EQ(totals(&r).invocations, 0);
    CHECK_EQ(totals(&r).iterations, 10);
    /* once it is used, the engine acts on what it sees */
    r.wl.acc = 1000;
    iterate(&r);
    CHECK_EQ(on_target(&r), NPAGES);
    iterate(&r); /* quiet 1 */
    iterate(&r); /* quiet 2: now stable */
    CHECK(!totals(&r).active);
    rig_close(&r);

    /* a budget of an eighth of the pages per interval, every page at
     * home: two quiet invocations are not enough, a sweep (8 intervals)
     * is */
    c.full_snapshot = 0;
    rig_open(&r, WL_OWNER, NPAGES, INIT_OWNER, &c, NPAGES / 8, 0.0, NULL);
    for (int i = 0; i < 7; i++) {
        iterate(&r);
        CHECK(totals(&r).active);
    }
    iterate(&r);
    CHECK(!totals(&r).active);
    CHECK_EQ(totals(&r).invocations, 8);
    CHECK_EQ(sim_moved(&r), 0);
    rig_close(&r);

    /* every page watched each interval, but one access a page seen with
     * probability 0.02 (about 5 of 256): two quiet invocations with
     * samples are not evidence enough; quiet samples for an eighth of the
     * pages (32) are */
    c.full_snapshot = 1;
    rig_open(&r, WL_OWNER, NPAGES, INIT_OWNER, &c, 0, 0.98, NULL);
    r.wl.acc = 1;
    uint64_t seen; /* samples while not yet stable */
    until_stable(&r, 200, &seen);
    CHECK(!totals(&r).active);
    CHECK(totals(&r).invocations > 2);
    ph_source_stats end;
    ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &end);
    CHECK(end.samples >= NPAGES / 8); /* stable on 32 samples or more */
    CHECK(seen < NPAGES / 8);         /* and as soon as it had them */
    CHECK_EQ(sim_moved(&r), 0);
    rig_close(&r);
}

/* The touched pages a source reports (touched_pages, counted up to limit
 * + 1 as its contract says), set by the test: what a program still
 * setting up its data shows the engine. */
static size_t touched_now;
static size_t touched_looks;
static size_t touched_report(ph_source *s, size_t limit)
{
    (void)s;
    touched_looks++;
    return touched_now > limit ? limit + 1 : touched_now;
}

/* A rig whose every page is at home, with a few samples an interval
 * (about 5 of 256: under an eighth of the watched pages, so the rule
 * counts the touched ones), its source reporting touched_now. */
static ph_source_ops with_touched;
static void open_touched(rig *r, const ph_engine_cfg *c)
{
    rig_open(r, WL_OWNER, NPAGES, INIT_OWNER, c, 0, 0.98, NULL);
    r->wl.acc = 1;
    ph_source *src = ph_engine_source(r->e);
    with_touched = *src->ops;
    with_touched.touched_pages = touched_report;
    src->ops = &with_touched;
}

static void test_stable_needs_settled_set(void)
{
    ph_engine_cfg c = base_cfg();
    c.stable_after = 2;
    c.cold_after = 0;
    rig r;
    open_touched(&r, &c);
    /* the program touches 8 more pages an iteration (a set-up zeroing its
     * grids): quiet invocations with samples for far more than an eighth
     * of what is touched are no evidence while it grows */
    touched_now = 0;
    touched_looks = 0;
    for (int i = 0; i < 12; i++) {
        touched_now += 8;
        iterate(&r);
        CHECK(totals(&r).active);
    }
    CHECK(totals(&r).invocations >= 6);
    CHECK(touched_looks >= 6);
    /* it stops growing: two equal looks in a row (the last growing
     * invocation's look already counts the whole set), then stable */
    uint64_t seen;
    int iters = until_stable(&r, 20, &seen);
    CHECK(!totals(&r).active);
    CHECK(iters <= 3);
    CHECK_EQ(sim_moved(&r), 0);
    rig_close(&r);

    /* more touched than the samples cover (200: 25 samples needed), then
     * the same count once they cover it: stable then, not restarted for
     * ever by the change from "more than the limit" to a count */
    open_touched(&r, &c);
    touched_now = 200;
    until_stable(&r, 200, &seen);
    CHECK(!totals(&r).active);
    ph_source_stats end;
    ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &end);
    CHECK(end.samples >= 25);
    CHECK(seen < NPAGES / 8); /* before the samples covered every page */
    CHECK_EQ(sim_moved(&r), 0);
    rig_close(&r);
}

/* A table every node reads at random: under the sampling mechanism (one
 * sample per watched page and wake-up, from a random node) it stays
 * where it is; an array owned by blocks moves, with one sample per page,
 * on its neighbours' word. */
static uint64_t uni_rng = 0x243F6A8885A308D3ull;
static int uniform_model(void *model, size_t range, size_t page, uint32_t *acc,
                         int nnodes)
{
    (void)model;
    (void)range;
    (void)page;
    memset(acc, 0, (size_t)nnodes * sizeof *acc);
    uni_rng = uni_rng * 6364136223846793005ull + 1442695040888963407ull;
    acc[(uni_rng >> 33) % (uint64_t)nnodes] = 1;
    return 0;
}

static void test_uniform_table_stays(void)
{
    ph_engine_cfg c = base_cfg();
    c.mech = PH_MECH_SAMPLING;
    c.cold_after = 0;
    c.sample_weight = 64;
    enum { TABLE = 2048 };
    ph_os *sim = ph_os_sim_open(topo);
    ph_mover *mv = ph_mover_new(sim, &mover_cfg);
    char *mem = ph_os_map(sim, TABLE * PG, PG, PH_MAP_NO_THP);
    CHECK(sim && mv && mem);
    for (size_t p = 0; p < TABLE; p++)
        ph_os_populate_on(sim, mem + p * PG, PG, node_id(0));
    ph_engine *e = rig_engine_open(topo, sim, mv, &c, uniform_model, NULL, 0, 0.0, 7);
    CHECK(ph_engine_register(e, mem, TABLE * PG, "table") != NULL);
    for (int i = 0; i < 20; i++)
        CHECK_EQ(ph_engine_tick(e), 0);
    ph_engine_totals t;
    ph_engine_get_totals(e, &t);
    ph_sim_counters sc;
    ph_sim_counters_get(sim, &sc);
    /* the target: at most 1% of the table moved */
    CHECK(sc.moved_pages * 100 <= TABLE);
    CHECK(t.scanned >= 20 * (uint64_t)TABLE);
    ph_engine_free(e);
    ph_os_unmap(sim, mem, TABLE * PG);
    ph_mover_free(mv);
    ph_os_close(sim);

    /* the same mechanism on an array owned by blocks, from node 0: one
     * wake-up of samples (one per page) is enough to move them */
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    r.wl.acc = 1; /* one sample (of weight 64) per page */
    CHECK_EQ(ph_engine_tick(r.e), 0);
    /* all but the pages next to the 3 boundaries between owners (fewer
     * than 3/4 of their 16 neighbours on each side agree); node 0's
     * quarter was there already */
    size_t moved1 = on_target(&r);
    CHECK(moved1 >= NPAGES - 3 * 16);
    /* the second sample settles those */
    CHECK_EQ(ph_engine_tick(r.e), 0);
    CHECK_EQ(on_target(&r), NPAGES);
    rig_close(&r);
}

/* Homes come from the bookkeeping, and from the OS every 8th scan: a page
 * moved behind the engine's back is noticed (and brought home) within 8
 * invocations, and the other invocations ask the OS for no page at all. */
static void test_home_refresh(void)
{
    ph_engine_cfg c = base_cfg();
    c.cold_after = 0;
    c.stable_after = 0;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_OWNER, &c, 0, 0.0, NULL);
    iterate(&r); /* scan 0: every home asked of the OS */
    ph_sim_counters a, b;
    ph_sim_counters_get(r.sim, &a);
    iterate(&r);
    ph_sim_counters_get(r.sim, &b);
    CHECK_EQ(b.query_pages - a.query_pages, 0);
    void *pg = r.mem;
    int to = node_id(2), st = -1;
    CHECK_EQ(ph_os_move(r.sim, 1, &pg, &to, &st), 0);
    int h[NPAGES];
    int back = 0;
    for (int i = 0; i < 8 && !back; i++) {
        iterate(&r);
        homes(&r, h);
        back = h[0] == 0;
    }
    CHECK(back);
    rig_close(&r);
}

/* ---- ping-pong, self-tuning, cold areas ----------------------------- */

/* WL_PINGPONG on its first 8 pages, never stable, never cold. */
static void pingpong_open(rig *r, ph_engine_cfg *c)
{
    c->stable_after = 0;
    c->cold_after = 0;
    rig_open(r, WL_PINGPONG, NPAGES, INIT_OWNER, c, 0, 0.0, NULL);
    r->wl.pp_pages = 8;
}

/* From now on only their block's node (node 0) uses the 8 pages: 1 once
 * they are all there, within 40 iterations. */
static int settles_on_owner(rig *r)
{
    r->wl.kind = WL_OWNER;
    r->wl.pp_pages = 0;
    int h[NPAGES];
    for (int i = 0; i < 40; i++) {
        iterate(r);
        homes(r, h);
        int all = 1;
        for (int p = 0; p < 8; p++)
            all &= h[p] == 0;
        if (all)
            return 1;
    }
    return 0;
}

static void test_pingpong(void)
{
    ph_engine_cfg c = base_cfg();
    c.melt_iters = 4;
    rig r;
    pingpong_open(&r, &c);
    iterate(&r); /* it 0: node 0 dominates, pages are home */
    iterate(&r); /* it 1: node 1 dominates: they move to 1 */
    int h[NPAGES];
    homes(&r, h);
    for (int p = 0; p < 8; p++)
        CHECK_EQ(h[p], 1);
    uint64_t moved = sim_moved(&r);
    iterate(&r); /* it 2: back to 0 would be ping-pong: they freeze */
    CHECK_EQ(sim_moved(&r), moved);
    ph_hot_stats st;
    CHECK_EQ(ph_engine_area_stats(r.e, r.h, &st), 0);
    CHECK_EQ(st.frozen, 8);
    homes(&r, h);
    for (int p = 0; p < 8; p++)
        CHECK_EQ(h[p], 1);
    iterate(&r); /* frozen: no move */
    iterate(&r);
    CHECK_EQ(sim_moved(&r), moved);
    /* melt after melt_iters iterations.  A page that ping-ponged has two
     * owners that alternate: once melted it moves only to a node its
     * whole history settles on (ph_crit_settled) -- neither here, the two
     * nodes have half each -- so it stays where it froze and never
     * freezes again.  (It used to move once more at every melt and freeze
     * again, for ever: pages that never settle.) */
    for (int i = 0; i < 12; i++) {
        iterate(&r);
        CHECK_EQ(ph_engine_area_stats(r.e, r.h, &st), 0);
        CHECK_EQ(sim_moved(&r), moved);
        CHECK_EQ(st.frozen, 8);
    }
    CHECK_EQ(st.melted, 8);
    homes(&r, h);
    for (int p = 0; p < 8; p++)
        CHECK_EQ(h[p], 1);
    rig_close(&r);
}

/* A page that ping-ponged and then really changed owner: once its
 * history settles on the new node it moves there. */
static void test_pingpong_then_settles(void)
{
    ph_engine_cfg c = base_cfg();
    c.melt_iters = 2;
    rig r;
    pingpong_open(&r, &c);
    iterate(&r); /* at home on 0 */
    iterate(&r); /* to 1 */
    iterate(&r); /* back to 0 would ping-pong: frozen on 1 */
    ph_hot_stats st;
    CHECK_EQ(ph_engine_area_stats(r.e, r.h, &st), 0);
    CHECK_EQ(st.frozen, 8);
    uint64_t moved = sim_moved(&r);
    /* from now on only their block's node uses them (WL_OWNER: node 0 for
     * the first pages), whose share of their history is below 3/4 at
     * first and grows every iteration */
    CHECK(settles_on_owner(&r));
    CHECK_EQ(sim_moved(&r) - moved, 8); /* once each, no more */
    CHECK_EQ(ph_engine_area_stats(r.e, r.h, &st), 0);
    CHECK_EQ(st.frozen, 8);
    rig_close(&r);
}

/* The iterative mechanism on thin evidence (each page's counts in an
 * interval are one sample, sample_weight accesses): a page moved on one
 * sample does not move again on another -- it waits until its whole
 * history settles on the new node (3/4 of it).  Rich counts (the two
 * tests above) move it back at once, or freeze it. */
static void test_thin_second_move(void)
{
    ph_engine_cfg c = base_cfg();
    c.sample_weight = 64;
    rig r;
    pingpong_open(&r, &c);
    r.wl.acc = 1; /* one sample (of weight 64) per page and interval */
    iterate(&r); /* it 0: node 0 dominates, pages are home */
    iterate(&r); /* it 1: node 1: the first move, on one sample */
    int h[NPAGES];
    homes(&r, h);
    for (int p = 0; p < 8; p++)
        CHECK_EQ(h[p], 1);
    uint64_t moved = sim_moved(&r);
    /* node 0 and node 1 alternate: each sample alone would send the pages
     * back and forth; their history never gives either 3/4 */
    for (int i = 0; i < 8; i++)
        iterate(&r);
    CHECK_EQ(sim_moved(&r), moved);
    ph_hot_stats st;
    CHECK_EQ(ph_engine_area_stats(r.e, r.h, &st), 0);
    CHECK_EQ(st.frozen, 0);
    homes(&r, h);
    for (int p = 0; p < 8; p++)
        CHECK_EQ(h[p], 1);
    /* from now on node 0 alone: once it holds 3/4 of the history the
     * pages move, once each */
    CHECK(settles_on_owner(&r));
    CHECK_EQ(sim_moved(&r) - moved, 8);
    rig_close(&r);
}

static void test_selftune(void)
{
    ph_engine_cfg c = base_cfg();
    c.tune_step = 0.5;
    c.tune_max = 2.0;
    c.stable_after = 0;
    c.cold_after = 0;
    rig r;
    rig_open(&r, WL_BT, NPAGES, INIT_OWNER, &c, 0, 0.0, NULL);
    iterate(&r); /* all local: metric 0 */
    CHECK(r.h->factor == 1.0);
    r.wl.phase = 1; /* now every page is touched from another node */
    iterate(&r);
    CHECK(r.h->factor == 1.5);
    /* latency falls (the pages moved): the factor stays */
    iterate(&r);
    CHECK(r.h->factor == 1.5);
    r.wl.phase = 0;
    iterate(&r); /* grows again */
    CHECK(r.h->factor == 2.0);
    r.wl.phase = 1;
    iterate(&r);
    iterate(&r);
    CHECK(r.h->factor == 2.0); /* capped */
    rig_close(&r);
}

static void test_cold(void)
{
    ph_engine_cfg c = base_cfg();
    c.cold_after = 3;
    c.stable_after = 0;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_OWNER, &c, 0, 0.0, NULL);
    for (int i = 0; i < 3; i++)
        iterate(&r);
    CHECK(r.h->cold);
    ph_hot_stats st;
    ph_engine_area_stats(r.e, r.h, &st);
    uint64_t scans = st.invocations;
    iterate(&r);
    iterate(&r);
    ph_engine_area_stats(r.e, r.h, &st);
    CHECK_EQ(st.invocations, scans); /* cold: not scanned */
    ph_source_stats s0, s1;
    ph_source *src = ph_engine_source(r.e);
    src->ops->stats(src, &s0);
    iterate(&r);
    src->ops->stats(src, &s1);
    CHECK_EQ(s1.armed_pages, s0.armed_pages); /* nor watched */
    /* a thread migration makes it hot again */
    CHECK_EQ(ph_engine_note_thread(r.e, 0, 4, 0), 0);
    CHECK(r.h->cold);
    CHECK_EQ(ph_engine_note_thread(r.e, 0, 4, 2), 0);
    CHECK_EQ(ph_engine_note_thread(r.e, 0, 4, 2), 0);
    CHECK(!r.h->cold);
    rig_close(&r);
}

/* ---- predictive criterion ------------------------------------------- */

static void note_team(rig *r)
{
    for (int t = 0; t < 4; t++) {
        int node = t;
        if (r->wl.iteration >= r->wl.migrate_at && node == r->wl.from)
            node = r->wl.to;
        CHECK_EQ(ph_engine_note_thread(r->e, t, 4, node), 0);
    }
}

static void test_predictive(void)
{
    ph_engine_cfg c = base_cfg();
    c.stable_after = 2;
    rig r;
    rig_open(&r, WL_MIGRATE, NPAGES, INIT_OWNER, &c, 0, 0.0, NULL);
    r.wl.migrate_at = 4;
    r.wl.from = 1;
    r.wl.to = 3;
    for (int i = 0; i < 4; i++) { /* stable, then inactive */
        note_team(&r);
        note_team(&r);
        iterate(&r);
    }
    CHECK(!totals(&r).active);
    CHECK_EQ(sim_moved(&r), 0);
    /* iteration 4: thread 1 runs on node 3, seen at two boundaries */
    note_team(&r);
    CHECK_EQ(totals(&r).thread_migrations, 0); /* once is not enough */
    note_team(&r);
    CHECK_EQ(totals(&r).thread_migrations, 1);
    CHECK(totals(&r).predictive);
    CHECK(totals(&r).active);
    iterate(&r);
    size_t ok = on_target(&r);
    CHECK_EQ(ok, NPAGES); /* node 1's quarter followed its thread */
    CHECK_EQ(sim_moved(&r), NPAGES / 4);
    note_team(&r);
    note_team(&r);
    iterate(&r); /* nothing qualifies any more: back to competitive */
    CHECK(!totals(&r).predictive);
    CHECK_EQ(sim_moved(&r), NPAGES / 4);
    /* a short excursion (one boundary) triggers nothing */
    CHECK_EQ(ph_engine_note_thread(r.e, 0, 4, 2), 0);
    CHECK_EQ(ph_engine_note_thread(r.e, 0, 4, 0), 0);
    CHECK_EQ(ph_engine_note_thread(r.e, 0, 4, 2), 0);
    CHECK_EQ(totals(&r).thread_migrations, 1);
    /* a thread that the first team did not have */
    CHECK_EQ(ph_engine_note_thread(r.e, 4, 5, 2), 0);
    CHECK_EQ(totals(&r).thread_migrations, 2);
    rig_close(&r);
}

/* A team of one (serial code: the initial thread, a region with if(0))
 * is not the first team, nor a smaller team before the first invocation:
 * the threads of the first real team do not join it.  (cg with its
 * matrix built serially that way sent the first invocation to the
 * predictive criterion, which moved nothing.) */
/* A first team of `small` threads (one: serial code; two: a smaller
 * team), then two boundaries of four and an iteration, before which no
 * invocation ran: nobody joined, the criterion stays the default one. */
static void small_team_first(rig *r, const ph_engine_cfg *c, int small)
{
    rig_open(r, WL_MIGRATE, NPAGES, INIT_OWNER, c, 0, 0.0, NULL);
    r->wl.migrate_at = 1000; /* no thread moves */
    for (int t = 0; t < small; t++)
        CHECK_EQ(ph_engine_note_thread(r->e, t, small, t), 0);
    note_team(r);
    note_team(r);
    CHECK_EQ(totals(r).thread_migrations, 0);
    CHECK(!totals(r).predictive);
    iterate(r);
    CHECK_EQ(totals(r).thread_migrations, 0);
    CHECK(!totals(r).predictive);
}

static void test_serial_team(void)
{
    ph_engine_cfg c = base_cfg();
    rig r;
    small_team_first(&r, &c, 1);
    /* back to one thread and up to four again: the first team is four */
    CHECK_EQ(ph_engine_note_thread(r.e, 0, 1, 0), 0);
    note_team(&r);
    CHECK_EQ(totals(&r).thread_migrations, 0);
    /* a fifth thread, which the first team did not have, joins */
    CHECK_EQ(ph_engine_note_thread(r.e, 4, 5, 2), 0);
    CHECK_EQ(totals(&r).thread_migrations, 1);
    CHECK(totals(&r).predictive);
    rig_close(&r);

    /* two, then four: the first team is four (no past to forward pages
     * from); a team of six after the first invocation brings two joining
     * threads */
    small_team_first(&r, &c, 2);
    for (int t = 0; t < 6; t++)
        CHECK_EQ(ph_engine_note_thread(r.e, t, 6, t % 4), 0);
    CHECK_EQ(totals(&r).thread_migrations, 2);
    CHECK(totals(&r).predictive);
    rig_close(&r);
}

/* ---- record / replay / undo ----------------------------------------- */

static void check_homes_shift(rig *r, int shift, size_t limit)
{
    int h[NPAGES];
    homes(r, h);
    size_t shifted = 0, home = 0;
    for (size_t p = 0; p < r->npages; p++) {
        int o = wl_owner(&r->wl, p);
        shifted += h[p] == (o + shift) % 4;
        home += h[p] == o;
    }
    if (shift == 0) {
        CHECK_EQ(home, r->npages);
    } else {
        CHECK_EQ(shifted, limit);
        CHECK_EQ(home, r->npages - limit);
    }
}

static void test_replay(size_t critical)
{
    ph_engine_cfg c = base_cfg();
    c.mech = PH_MECH_REPLAY;
    c.critical_pages = critical;
    size_t n = critical ? critical : NPAGES;
    rig r;
    rig_open(&r, WL_BT, NPAGES, INIT_OWNER, &c, 0, 0.0, NULL);
    CHECK_EQ(ph_engine_phase_pages(r.e, 1), -1);
    for (int it = 0; it < 3; it++) {
        r.wl.phase = 0;
        uint64_t before = sim_moved(&r);
        CHECK_EQ(ph_engine_phase_begin(r.e, 1), 0);
        r.wl.phase = 1;
        if (it == 0) {
            CHECK_EQ(sim_moved(&r), before); /* recording moves nothing */
        } else {
            CHECK_EQ(sim_moved(&r), before + n);
            check_homes_shift(&r, 1, n);
        }
        CHECK_EQ(ph_engine_phase_end(r.e, 1), 0);
        r.wl.phase = 0;
        if (it == 0)
            CHECK_EQ(ph_engine_phase_pages(r.e, 1), (long)n);
        else
            CHECK_EQ(sim_moved(&r), before + 2 * n);
        check_homes_shift(&r, 0, 0);
        iterate(&r);
    }
    ph_engine_totals t = totals(&r);
    CHECK_EQ(t.replayed, 2 * n);
    CHECK_EQ(t.undone, 2 * n);
    rig_close(&r);
}

static void test_hybrid(void)
{
    ph_engine_cfg c = base_cfg();
    c.mech = PH_MECH_HYBRID;
    c.hybrid_iters = 2;
    rig r;
    rig_open(&r, WL_BT, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    /* iterative part: phases are checked but ignored */
    for (int it = 0; it < 2; it++) {
        CHECK_EQ(ph_engine_phase_begin(r.e, 1), 0);
        CHECK_EQ(ph_engine_phase_end(r.e, 1), 0);
        iterate(&r);
    }
    CHECK_EQ(on_target(&r), NPAGES);
    CHECK_EQ(ph_engine_phase_pages(r.e, 1), -1);
    /* then record and replay */
    uint64_t m0 = sim_moved(&r);
    CHECK_EQ(ph_engine_phase_begin(r.e, 1), 0);
    r.wl.phase = 1;
    CHECK_EQ(ph_engine_phase_end(r.e, 1), 0);
    r.wl.phase = 0;
    iterate(&r);
    CHECK_EQ(ph_engine_phase_pages(r.e, 1), NPAGES);
    CHECK_EQ(ph_engine_phase_begin(r.e, 1), 0);
    CHECK_EQ(sim_moved(&r), m0 + NPAGES);
    CHECK_EQ(ph_engine_phase_end(r.e, 1), 0);
    CHECK_EQ(sim_moved(&r), m0 + 2 * NPAGES);
    check_homes_shift(&r, 0, 0);
    rig_close(&r);
}

/* The hybrid mechanism watching a part of the pages an interval (32 of
 * 256): its iterative part goes on past hybrid_iters until it has seen
 * the placement whole, so that no page is left where it started when the
 * phases take over.  Switching at hybrid_iters, as it did, recorded the
 * phase when the two intervals had looked at node 0's own pages only:
 * nothing had moved (64 of 256 pages home), and the 192 others became the
 * phase's moves, made and undone at every occurrence. */
static void test_hybrid_sees_whole(void)
{
    ph_engine_cfg c = base_cfg();
    c.mech = PH_MECH_HYBRID;
    c.hybrid_iters = 2;
    c.full_snapshot = 0;
    rig r;
    rig_open(&r, WL_LAPLACE, NPAGES, INIT_NODE0, &c, NPAGES / 8, 0.0, NULL);
    CHECK_EQ(with_target(&r), NPAGES);
    int it = 0;
    while (ph_engine_phase_pages(r.e, 1) < 0 && it < 100) {
        CHECK_EQ(ph_engine_phase_begin(r.e, 1), 0);
        size_t placed = on_target(&r);
        CHECK_EQ(ph_engine_phase_end(r.e, 1), 0);
        if (ph_engine_phase_pages(r.e, 1) >= 0) {
            /* the occurrence that recorded: every page was home first */
            CHECK_EQ(placed, NPAGES);
            /* a rotation of the 256 pages at 32 an interval */
            CHECK(it >= 8);
        }
        iterate(&r);
        it++;
    }
    CHECK_EQ(ph_engine_phase_pages(r.e, 1), 0); /* the phase wants nothing */
    CHECK_EQ(on_target(&r), NPAGES);
    rig_close(&r);
}

/* ---- the runtime starts after the arrays' serial initialisation ------ */

/* The workload's model, or while `serial` is set the initial thread
 * alone (node index 0) touching every page: the serial code before the
 * OpenMP runtime starts. */
typedef struct serial_then {
    workload *wl;
    int serial;
} serial_then;

static int serial_then_model(void *model, size_t range, size_t page, uint32_t *acc,
                             int nnodes)
{
    serial_then *m = model;
    if (!m->serial)
        return wl_model(m->wl, range, page, acc, nnodes);
    memset(acc, 0, (size_t)nnodes * sizeof *acc);
    acc[0] = 1000;
    return 0;
}

/* One run from node 0: with `serial`, the source first reports the
 * initial thread's touches of every page (drained by a look, as the
 * hybrid mechanism's memory manager drains before the first iteration
 * ends), then the runtime starts if `started`; then one iteration of
 * the workload.  Returns the pages on their owners' nodes after it;
 * *accesses: the accesses the engine took in. */
static size_t run_serial_first(int serial, int started, uint64_t *accesses,
                               uint64_t *swept_extra)
{
    ph_engine_cfg c = base_cfg();
    c.mech = PH_MECH_HYBRID;
    c.early_period_ms = 1; /* the looks are on */
    rig r;
    memset(&r, 0, sizeof r);
    r.sim = ph_os_sim_open(topo);
    r.os = ph_os_faulty_open(r.sim, NULL);
    r.mover = ph_mover_new(r.os, &mover_cfg);
    r.npages = NPAGES;
    r.wl = (workload){.kind = WL_LAPLACE, .nnodes = topo->nnodes, .npages = NPAGES, .acc = 1000};
    r.mem = ph_os_map(r.sim, NPAGES * PG, PG, PH_MAP_NO_THP);
    if (!r.sim || !r.os || !r.mover || !r.mem) {
        fprintf(stderr, "rig: %s\n", ph_error_message());
        exit(1);
    }
    for (size_t p = 0; p < NPAGES; p++)
        put(&r, p, 0);
    serial_then m = {&r.wl, serial};
    r.e = rig_engine_open(topo, r.os, r.mover, &c, serial_then_model, &m, 0, 0.0, 7);
    r.h = ph_engine_register(r.e, r.mem, NPAGES * PG, "grid");
    CHECK(r.h != NULL);
    ph_source_stats ss0, ss1;
    ph_source *src = ph_engine_source(r.e);
    src->ops->stats(src, &ss0);
    if (serial) {
        /* a look drains the serial touches into the counts: every page
         * seen from node 0, where it is, so nothing is decisive yet */
        CHECK_EQ(ph_engine_look(r.e), 0);
    }
    if (started)
        CHECK_EQ(ph_engine_runtime_started(r.e), 0);
    src->ops->stats(src, &ss1);
    *swept_extra = ss1.swept_pages - ss0.swept_pages;
    m.serial = 0;
    iterate(&r);
    size_t placed = on_target(&r);
    *accesses = totals(&r).accesses;
    /* after an iteration end the call changes nothing */
    src->ops->stats(src, &ss0);
    CHECK_EQ(ph_engine_runtime_started(r.e), 0);
    src->ops->stats(src, &ss1);
    CHECK_EQ(ss1.swept_pages, ss0.swept_pages);
    rig_close(&r);
    return placed;
}

static void test_runtime_starts_late(void)
{
    uint64_t acc_plain, acc_serial, acc_dropped, extra, extra_serial;
    size_t plain = run_serial_first(0, 0, &acc_plain, &extra);
    CHECK_EQ(extra, 0);
    size_t serial = run_serial_first(1, 0, &acc_serial, &extra_serial);
    size_t dropped = run_serial_first(1, 1, &acc_dropped, &extra);
    /* the first iteration decides every page from its owner's accesses */
    CHECK_EQ(plain, (size_t)NPAGES);
    /* the serial touches counted: the interval's one report of each
     * page came from node 0, where every page already is */
    CHECK(serial < (size_t)NPAGES);
    /* dropped: the engine took in exactly the plain run's accesses, and
     * the interval watched every page again (one arm more than the
     * look's own) */
    CHECK_EQ(acc_dropped, acc_plain);
    CHECK_EQ(dropped, plain);
    CHECK_EQ(extra - extra_serial, (uint64_t)NPAGES);
    (void)acc_serial;
}

/* ---- sampling mechanism --------------------------------------------- *//* ---- sampling mechanism --------------------------------------------- */

static void test_sampling(void)
{
    ph_engine_cfg c = base_cfg();
    c.mech = PH_MECH_SAMPLING;
    c.full_snapshot = 0;
    c.sample_max_moves = 16;
    rig r;
    /* 1024 pages, 64 watched per wake, at most 16 moved per wake, with
     * sampling noise */
    rig_open(&r, WL_LAPLACE, 1024, INIT_NODE0, &c, 64, 0.5, NULL);
    int wakes = 0;
    while (on_target(&r) < 1024 && wakes < 200) {
        CHECK_EQ(ph_engine_tick(r.e), 0);
        wakes++;
    }
    if (on_target(&r) != 1024) {
        ph_invocation d[4];
        size_t nd = ph_engine_log(r.e, 0, d, 4);
        for (size_t i = 0; i < nd && i < 4; i++)
            fprintf(stderr, "  sampling wake %zu: scanned %llu accesses %llu candidates %llu migrated %llu\n", i,
                    (unsigned long long)d[i].scanned, (unsigned long long)d[i].accesses,
                    (unsigned long long)d[i].candidates, (unsigned long long)d[i].migrated);
    }
    CHECK_EQ(on_target(&r), 1024);
    /* 768 misplaced pages at 16 a wake: at least 48 wakes */
    CHECK(wakes >= 48);
    ph_invocation inv[256];
    size_t n = ph_engine_log(r.e, 0, inv, 256);
    int capped = 1;
    for (size_t i = 0; i < n && i < 256; i++)
        capped &= inv[i].migrated <= 16 && inv[i].kind == PH_INV_SAMPLING;
    CHECK(capped);
    rig_close(&r);
}

/* The sampling mechanism on a table every node reads: nothing to wait for
 * (cold_after, stable_after 0) and no cap on the moves. */
static ph_engine_cfg shared_table_cfg(void)
{
    ph_engine_cfg c = base_cfg();
    c.mech = PH_MECH_SAMPLING;
    c.full_snapshot = 0;
    c.cold_after = 0;
    c.stable_after = 0;
    c.sample_max_moves = 0;
    return c;
}

/* A table every node reads (XSBench-like: no node owns a page), sampled
 * with heavy noise so that each wake-up sees a few random nodes per page:
 * the sampling mechanism must not chase the samples (issue target: <= 1%
 * of the pages moved more than once; and nothing to gain by moving). */
static void test_sampling_shared_no_thrash(void)
{
    ph_engine_cfg c = shared_table_cfg();
    rig r;
    rig_open(&r, WL_CG, 1024, INIT_RR, &c, 256, 0.97, NULL);
    for (int w = 0; w < 120; w++)
        CHECK_EQ(ph_engine_tick(r.e), 0);
    size_t twice = 0;
    for (size_t p = 0; p < 1024; p++)
        twice += r.h->pages[p].migrations >= 2;
    ph_engine_totals t = totals(&r);
    fprintf(stderr, "  shared table under sampling: %llu moves, %zu pages moved twice\n",
            (unsigned long long)t.migrated, twice);
    CHECK(twice <= 10);
    /* and no placement helps: it should hardly move at all (without the
     * settled rule: ~190 moves here) */
    CHECK(t.migrated <= 10);
    rig_close(&r);
}

/* The same table in a first interval one node dominated: its threads ran
 * and the others hardly did (a loaded machine), so most pages' few
 * samples name that node and their neighbours agree.  With no history
 * the interval is judged against the team (one thread a node here): it
 * moves nothing, and the even intervals after it move nothing either
 * (before, the first wake moved 77 of the 1024 pages). */
static void test_sampling_skewed_first(void)
{
    ph_engine_cfg c = shared_table_cfg();
    rig r;
    rig_open(&r, WL_CG, 1024, INIT_RR, &c, 1024, 0.995, NULL);
    for (int t = 0; t < topo->nnodes; t++)
        CHECK_EQ(ph_engine_note_thread(r.e, t, topo->nnodes, t), 0);
    r.wl.cg_weight[1] = 8;
    CHECK_EQ(ph_engine_tick(r.e), 0);
    ph_engine_totals t1 = totals(&r);
    r.wl.cg_weight[1] = 0;
    for (int w = 0; w < 10; w++)
        CHECK_EQ(ph_engine_tick(r.e), 0);
    ph_engine_totals t = totals(&r);
    fprintf(stderr, "  shared table, first interval skewed: %llu moves in it, "
            "%llu in all\n", (unsigned long long)t1.migrated,
            (unsigned long long)t.migrated);
    CHECK_EQ(t1.migrated, 0);
    CHECK(t.migrated <= 10);
    rig_close(&r);
}

/* The budget: when sampling costs more than its share of the interval
 * the watched pages are cut, at least by half and in proportion when far
 * over; when it costs less than half, they double. */
static void test_budget_adapts(void)
{
    ph_engine_cfg c = base_cfg();
    c.mech = PH_MECH_SAMPLING;
    c.full_snapshot = 0;
    c.sample_pages = 512;
    c.sample_budget = 0.01;
    c.cold_after = 0; /* the area has no candidates: it would go cold */
    c.sample_trap_ns = 1e9; /* every sample "costs" a second: too much */
    rig r;
    rig_open(&r, WL_OWNER, 1024, INIT_OWNER, &c, 512, 0.0, NULL);
    ph_source_stats s0, s1;
    ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s0);
    CHECK_EQ(s0.armed_pages, 512); /* the first interval */
    /* far over: 512 -> the floor (64), and even the floor costs more
     * than the budget: no interval is armed during the pause */
    for (int i = 0; i < 3; i++)
        CHECK_EQ(ph_engine_tick(r.e), 0);
    ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s1);
    CHECK_EQ(s1.armed_pages - s0.armed_pages, 0);
    rig_close(&r);
    /* 20 us a sample: the first interval's 512 samples "cost" 10.24 ms,
     * a little more than the bucket holds (1% of a second): cut to the
     * floor and a pause of a few tens of ms; then 64 pages, whose 1.28 ms
     * empty the bucket again, and another pause */
    c.sample_trap_ns = 2e4;
    rig_open(&r, WL_OWNER, 1024, INIT_OWNER, &c, 512, 0.0, NULL);
    CHECK_EQ(ph_engine_tick(r.e), 0); /* 512 watched, cut to 64, pause */
    ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s0);
    CHECK_EQ(ph_engine_tick(r.e), 0);
    ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s1);
    CHECK_EQ(s1.armed_pages - s0.armed_pages, 0);
    uint64_t armed = 0;
    for (int i = 0; i < 250 && !armed; i++) { /* the pause ends: armed */
        usleep(20000);
        CHECK_EQ(ph_engine_tick(r.e), 0);
        ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s0);
        armed = s0.armed_pages - s1.armed_pages;
    }
    CHECK_EQ(armed, 64);
    CHECK_EQ(ph_engine_tick(r.e), 0); /* and paused again */
    ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s1);
    CHECK_EQ(s1.armed_pages - s0.armed_pages, 0);
    rig_close(&r);
    /* 1 us a sample, intervals of microseconds: each is far over the
     * budget (cut to the floor), but 64 us an interval are paid from the
     * bucket's 10 ms -- a short program is sampled, not paused after its
     * first interval */
    c.sample_trap_ns = 1e3;
    rig_open(&r, WL_OWNER, 1024, INIT_OWNER, &c, 512, 0.0, NULL);
    CHECK_EQ(ph_engine_tick(r.e), 0);
    int paused = 0;
    for (int i = 0; i < 20; i++) {
        ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s0);
        CHECK_EQ(ph_engine_tick(r.e), 0);
        ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s1);
        paused += s1.armed_pages == s0.armed_pages;
        CHECK(s1.armed_pages - s0.armed_pages <= 64);
    }
    CHECK_EQ(paused, 0);
    rig_close(&r);
    c.sample_trap_ns = 0; /* free: grows to the whole area */
    rig_open(&r, WL_OWNER, 1024, INIT_OWNER, &c, 512, 0.0, NULL);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(ph_engine_tick(r.e), 0);
    ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s0);
    CHECK_EQ(ph_engine_tick(r.e), 0);
    ph_engine_source(r.e)->ops->stats(ph_engine_source(r.e), &s1);
    CHECK_EQ(s1.armed_pages - s0.armed_pages, 1024);
    rig_close(&r);
}

/* The sweep tests' engine: a budget of 128 pages an interval, a first
 * sweep of up to first_pages. */
static ph_engine_cfg sweep_cfg(size_t first_pages)
{
    ph_engine_cfg c = base_cfg();
    c.full_snapshot = 0;
    c.sample_pages = 128;
    c.sample_first_pages = first_pages;
    return c;
}

/* The first sweep: the first interval watches up to sample_first_pages,
 * so that a wrong placement of every page is corrected after one
 * iteration; then the budget is sample_pages again.  Without it, the
 * first interval sees the first 128 pages (owner 0's, already home). */
static size_t first_sweep_run(size_t first_pages, uint64_t *second_armed)
{
    ph_engine_cfg c = sweep_cfg(first_pages);
    rig r;
    rig_open(&r, WL_OWNER, 1024, INIT_NODE0, &c, 128, 0.0, NULL);
    ph_source *src = ph_engine_source(r.e);
    ph_source_stats s0, s1;
    src->ops->stats(src, &s0);
    iterate(&r);
    size_t ok = on_target(&r);
    src->ops->stats(src, &s1);
    *second_armed = s1.armed_pages - s0.armed_pages;
    iterate(&r);
    CHECK_EQ(totals(&r).invocations, 2);
    rig_close(&r);
    return ok;
}

/* A first interval that saw under an eighth of what it watched (here
 * one access a page, seen with probability 0.05: about 51 of 1024) is
 * followed by a second sweep; that one ends it whatever it saw. */
static void test_first_sweep_short(void)
{
    ph_engine_cfg c = sweep_cfg(1024);
    rig r;
    rig_open(&r, WL_OWNER, 1024, INIT_NODE0, &c, 128, 0.95, NULL);
    ph_source *src = ph_engine_source(r.e);
    ph_source_stats s0, s1, s2;
    src->ops->stats(src, &s0);
    r.wl.acc = 1;
    iterate(&r);
    src->ops->stats(src, &s1);
    CHECK_EQ(totals(&r).invocations, 1);
    CHECK(s1.samples - s0.samples < 128);
    CHECK_EQ(s1.armed_pages - s0.armed_pages, 1024); /* swept again */
    r.wl.acc = 1;
    iterate(&r);
    src->ops->stats(src, &s2);
    CHECK_EQ(totals(&r).invocations, 2);
    CHECK_EQ(s2.armed_pages - s1.armed_pages, 128); /* the second ends it */
    rig_close(&r);
}

/* Areas registered after the sweep was armed are swept by a second arm
 * while the hot set still fits in sample_first_pages (1024 + 256 <=
 * 1280); grown beyond it (1024 + 1024), the sweep ends: the budget's
 * 128 pages are watched next, not 1280 of the 2048 at a trap each. */
static void test_first_sweep_grown(void)
{
    for (int big = 0; big < 2; big++) {
        ph_engine_cfg c = sweep_cfg(1280);
        rig r;
        rig_open(&r, WL_OWNER, 1024, INIT_NODE0, &c, 128, 0.0, NULL);
        size_t late = big ? 1024 : 256;
        uint8_t *mem = ph_os_map(r.sim, late * PG, PG, PH_MAP_NO_THP);
        CHECK(mem != NULL);
        for (size_t p = 0; p < late; p++)
            ph_os_populate_on(r.sim, mem + p * PG, PG, node_id(0));
        ph_hot *h = ph_engine_register(r.e, mem, late * PG, "late");
        CHECK(h != NULL);
        ph_source *src = ph_engine_source(r.e);
        ph_source_stats s0, s1;
        src->ops->stats(src, &s0);
        iterate(&r);
        src->ops->stats(src, &s1);
        CHECK_EQ(s1.armed_pages - s0.armed_pages, big ? 128u : 1280u);
        CHECK_EQ(ph_engine_unregister(r.e, h), 0);
        ph_os_unmap(r.sim, mem, late * PG);
        rig_close(&r);
    }
}

/* What the sweep's samples cost sizes the interval after it: at a
 * second a sample the sweep of 1024 pages is far over the budget, and
 * the next interval watches the floor (64), not sample_pages (128). */
static void test_first_sweep_cost(void)
{
    for (int costly = 0; costly < 2; costly++) {
        ph_engine_cfg c = sweep_cfg(1024);
        c.sample_budget = 0.01;
        c.sample_trap_ns = costly ? 1e9 : 0;
        c.cold_after = 0;
        rig r;
        rig_open(&r, WL_OWNER, 1024, INIT_NODE0, &c, 128, 0.0, NULL);
        ph_source *src = ph_engine_source(r.e);
        ph_source_stats s0, s1;
        src->ops->stats(src, &s0);
        CHECK_EQ(s0.armed_pages, 1024);
        iterate(&r);
        src->ops->stats(src, &s1);
        CHECK_EQ(s1.armed_pages - s0.armed_pages, costly ? 64u : 128u);
        rig_close(&r);
    }
}

static void test_first_sweep(void)
{
    uint64_t armed;
    CHECK_EQ(first_sweep_run(1024, &armed), 1024);
    CHECK_EQ(armed, 128);   /* the second interval: sample_pages again */
    CHECK_EQ(first_sweep_run(0, &armed), 256);
    CHECK_EQ(armed, 128);
    CHECK_EQ(first_sweep_run(64, &armed), 256); /* fewer: not a sweep */
    CHECK_EQ(armed, 128);
    /* a sweep of 512 of the 1024 hot pages would not see them whole:
     * the first interval is a normal one */
    CHECK_EQ(first_sweep_run(512, &armed), 256);
    CHECK_EQ(armed, 128);
    CHECK_EQ(first_sweep_run(1023, &armed), 256);
    CHECK_EQ(first_sweep_run(4096, &armed), 1024);
}

/* ---- the memory-manager thread -------------------------------------- */

static void test_manager_thread(void)
{
    ph_engine_cfg c = base_cfg();
    c.sync = 0;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_RR, &c, 0, 0.0, NULL);
    CHECK_EQ(ph_engine_iteration_end(r.e), 0); /* posted */
    CHECK_EQ(ph_engine_wait(r.e), 0);
    CHECK_EQ(on_target(&r), NPAGES);
    CHECK(totals(&r).invocations >= 1);
    rig_close(&r);
}

/* Iteration ends 20 us apart (a program of small parallel regions) are
 * served in batches, not one wake-up of the manager each: within
 * PH_END_LINGER_MS of a serve, posts do not wake it.  All of them are
 * counted. */
static void test_manager_batches(void)
{
    ph_engine_cfg c = base_cfg();
    c.sync = 0;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_OWNER, &c, 0, 0.0, NULL);
    enum { ENDS = 2000 };
    for (int i = 0; i < ENDS; i++) {
        uint64_t t0 = ph_now_ns();
        CHECK_EQ(ph_engine_iteration_end(r.e), 0);
        while (ph_now_ns() - t0 < 20000)
            ;
    }
    CHECK_EQ(ph_engine_wait(r.e), 0);
    CHECK_EQ(totals(&r).iterations, ENDS);
    uint64_t serves = ph_engine_manager_serves(r.e);
    printf("manager batches: %d ends served in %llu batches\n", ENDS,
           (unsigned long long)serves);
    CHECK(serves >= 1);
    CHECK(serves <= ENDS / 5);
    rig_close(&r);
}

/* An iteration end the program signals while the manager is still
 * arming (the engine lock held) ends no interval: that interval watched
 * a part of an iteration at most.  It goes on to the next end. */
static const ph_source_ops *slow_orig;
static atomic_int slow_arming;
static int slow_arm(ph_source *s, int full)
{
    atomic_store(&slow_arming, 1);
    usleep(30000);
    return slow_orig->arm(s, full);
}

static void test_end_during_arm(void)
{
    ph_engine_cfg c = base_cfg();
    c.sync = 0;
    c.stable_after = 0;
    c.cold_after = 0;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_OWNER, &c, 0, 0.0, NULL);
    ph_source *src = ph_engine_source(r.e);
    static ph_source_ops slow;
    slow_orig = src->ops;
    slow = *src->ops;
    slow.arm = slow_arm;
    src->ops = &slow;
    atomic_store(&slow_arming, 0);
    CHECK_EQ(ph_engine_iteration_end(r.e), 0); /* invoked, then armed */
    for (int i = 0; i < 5000 && !atomic_load(&slow_arming); i++)
        usleep(1000);
    CHECK(atomic_load(&slow_arming));
    CHECK_EQ(ph_engine_iteration_end(r.e), 0); /* during the arm */
    CHECK_EQ(ph_engine_wait(r.e), 0);
    CHECK_EQ(totals(&r).invocations, 1);
    CHECK_EQ(totals(&r).iterations, 2);
    CHECK_EQ(ph_engine_iteration_end(r.e), 0); /* after it: the end */
    CHECK_EQ(ph_engine_wait(r.e), 0);
    CHECK_EQ(totals(&r).invocations, 2);
    src->ops = slow_orig;
    rig_close(&r);
}

/* Transparent mode's fallback: an iterative engine that never hears of
 * an iteration is switched to sampling at run time; the manager then
 * wakes by itself. */
static void test_switch_mechanism(void)
{
    ph_engine_cfg c = base_cfg();
    c.sync = 0;
    c.sample_period_ms = 2;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    CHECK_EQ(ph_engine_set_mechanism(r.e, PH_MECH_SAMPLING), 0);
    for (int i = 0; i < 2000 && on_target(&r) < NPAGES; i++)
        usleep(1000);
    CHECK_EQ(on_target(&r), NPAGES);
    CHECK_EQ(ph_engine_set_mechanism(r.e, (ph_mechanism)9), -1);
    rig_close(&r);
    /* a sync engine switches too (no manager: ticks drive it) */
    c.sync = 1;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    CHECK_EQ(ph_engine_set_mechanism(r.e, PH_MECH_SAMPLING), 0);
    CHECK_EQ(ph_engine_tick(r.e), 0);
    CHECK_EQ(on_target(&r), NPAGES);
    rig_close(&r);
}

/* Unregister and free while the manager works on the area: the classic
 * crash, designed out (the engine lock spans an invocation). */
typedef struct churn_arg {
    rig *r;
    atomic_int stop;
} churn_arg;

static void *poster(void *v)
{
    churn_arg *a = v;
    while (!atomic_load(&a->stop)) {
        ph_engine_iteration_end(a->r->e);
        a->r->wl.iteration++;
    }
    return NULL;
}

static void test_unregister_races(void)
{
    ph_engine_cfg c = base_cfg();
    c.sync = 0;
    c.stable_after = 0;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    churn_arg a = {.r = &r};
    pthread_t t;
    pthread_create(&t, NULL, poster, &a);
    int bad = 0;
    for (int round = 0; round < 200; round++) {
        char *m = ph_os_map(r.sim, 16 * PG, PG, PH_MAP_NO_THP);
        if (!m) {
            bad++;
            continue;
        }
        ph_os_populate_on(r.sim, m, 16 * PG, node_id(0));
        ph_hot *h = ph_engine_register(r.e, m, 16 * PG, "churn");
        if (!h)
            bad++;
        else if (ph_engine_unregister(r.e, h) != 0)
            bad++;
        ph_os_unmap(r.sim, m, 16 * PG);
    }
    atomic_store(&a.stop, 1);
    pthread_join(t, NULL);
    ph_engine_wait(r.e);
    CHECK_EQ(bad, 0);
    rig_close(&r);
}

/* ---- injected failures ---------------------------------------------- */

static void test_injected_failures(void)
{
    ph_fault_plan fp;
    ph_fault_plan_init(&fp);
    fp.seed = 3;
    fp.p_busy = 0.1;
    fp.p_fault = 0.1;
    fp.enomem_node = node_id(2);
    ph_engine_cfg c = base_cfg();
    c.stable_after = 0;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, &fp);
    memset(r.mem, 0x5a, NPAGES * PG);
    for (int i = 0; i < 6; i++)
        iterate(&r);
    ph_hot_stats st;
    CHECK_EQ(ph_engine_area_stats(r.e, r.h, &st), 0);
    CHECK(st.failed_nomem > 0);
    CHECK(st.failed_fault + st.failed_busy > 0);
    int h[NPAGES];
    homes(&r, h);
    size_t ok = 0, on2 = 0;
    for (size_t p = 0; p < NPAGES; p++) {
        int o = wl_owner(&r.wl, p);
        ok += h[p] == o;
        on2 += h[p] == 2;
    }
    CHECK_EQ(on2, 0);                 /* node 2 is "full" */
    CHECK(ok >= NPAGES / 2 + NPAGES / 4 - 4); /* the others arrived */
    int intact = 1;
    for (size_t i = 0; i < NPAGES * PG; i++)
        intact &= r.mem[i] == 0x5a;
    CHECK(intact);
    rig_close(&r);
}

/* ---- API misuse, statistics, bookkeeping cost ----------------------- */

static void test_misuse(void)
{
    ph_engine_cfg c = base_cfg();
    c.mech = PH_MECH_REPLAY;
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_OWNER, &c, 0, 0.0, NULL);
    CHECK(ph_engine_register(r.e, r.mem + 10 * PG, PG, "inside") == NULL);
    CHECK_EQ(errno, EEXIST);
    CHECK(strstr(ph_error_message(), "overlaps hot area \"grid\"") != NULL);
    CHECK(ph_engine_register(r.e, NULL, PG, "x") == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK(ph_engine_register(r.e, r.mem, 0, "x") == NULL);
    CHECK_EQ(ph_engine_phase_end(r.e, 3), -1);
    CHECK(strstr(ph_error_message(), "without having begun") != NULL);
    CHECK_EQ(ph_engine_phase_begin(r.e, 64), -1);
    CHECK_EQ(ph_engine_phase_begin(r.e, -1), -1);
    CHECK_EQ(ph_engine_phase_begin(r.e, 2), 0);
    CHECK_EQ(ph_engine_phase_begin(r.e, 2), -1);
    CHECK_EQ(ph_engine_phase_begin(r.e, 5), -1); /* recording 2 */
    CHECK_EQ(errno, EBUSY);
    CHECK_EQ(ph_engine_phase_end(r.e, 2), 0);
    CHECK_EQ(ph_engine_note_thread(r.e, 5, 4, 0), -1);
    CHECK_EQ(ph_engine_note_thread(r.e, 0, 4, 9), -1);
    ph_hot *h = r.h;
    CHECK_EQ(ph_engine_unregister(r.e, h), 0);
    CHECK_EQ(ph_engine_unregister(r.e, h), -1);
    CHECK_EQ(errno, ENOENT);
    r.h = NULL;
    rig_close(&r);
}

static void test_stats_json(void)
{
    ph_engine_cfg c = base_cfg();
    rig r;
    rig_open(&r, WL_OWNER, NPAGES, INIT_NODE0, &c, 0, 0.0, NULL);
    iterate(&r);
    iterate(&r);
    iterate(&r);
    char path[] = "/tmp/ph_stats_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_EQ(ph_engine_write_json(r.e, fd), 0);
    close(fd);
    json_error_t err;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    unlink(path);
    CHECK(j != NULL);
    if (j) {
        const json_t *areas = json_object_get(j, "areas");
        const json_t *a0 = json_array_get(areas, 0);
        CHECK(a0 != NULL);
        const json_t *mig = json_object_get(a0, "migrated");
        const json_t *f2 = json_object_get(a0, "migrated_first2");
        CHECK(mig && f2);
        /* UPMlib Table 1: all migrations in the first two iterations */
        if (mig && f2)
            CHECK(json_number_value(mig) == 3.0 * NPAGES / 4 &&
                  json_number_value(f2) == json_number_value(mig));
        const json_t *inv = json_object_get(j, "invocations");
        CHECK(json_array_get(inv, 2) != NULL);
        json_decref(j);
    }
    ph_engine_totals t = totals(&r);
    CHECK_EQ(t.migrated, 3 * NPAGES / 4);
    CHECK_EQ(t.bytes_moved, 3 * NPAGES / 4 * PG);
    rig_close(&r);
}

static void test_bookkeeping_cost(void)
{
    /* 4 GiB of address space (1 M pages), reserved, never touched */
    size_t bytes = (size_t)4 << 30;
    void *m = mmap(NULL, bytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        fprintf(stderr, "bookkeeping: cannot reserve 4 GiB, skipped\n");
        return;
    }
    workload wl = {.kind = WL_OWNER, .nnodes = topo->nnodes,
                   .npages = bytes / PG, .acc = 1};
    ph_os *sim = ph_os_sim_open(topo);
    ph_mover *mv = ph_mover_new(sim, &mover_cfg);
    ph_engine_cfg c = base_cfg();
    ph_engine *e = rig_engine_open(topo, sim, mv, &c, wl_model, &wl, 0, 0, 1);
    ph_hot *h = ph_engine_register(e, m, bytes, "big");
    CHECK(h != NULL);
    ph_engine_totals t;
    ph_engine_get_totals(e, &t);
    CHECK_EQ(t.hot_pages, bytes / PG);
    /* 8 bytes a page, plus small change: per 512-page chunk a pointer and
     * three 2-byte neighbourhood counts, per 2 MiB unit two bytes */
    CHECK(t.bookkeeping_bytes <= 8 * (bytes / PG) + (bytes / PG) / 16);
    ph_engine_free(e);
    ph_mover_free(mv);
    ph_os_close(sim);
    munmap(m, bytes);
}

int main(void)
{
    topo = ph_topo_load("nodes=4,cpus_per_node=1,sockets=2,local=10,"
                        "remote=12,remote_socket=32");
    if (!topo) {
        fprintf(stderr, "topology: %s\n", ph_error_message());
        return 1;
    }
    test_converges(WL_OWNER, INIT_NODE0, "owner from one node");
    test_converges(WL_OWNER, INIT_RR, "owner from round-robin");
    test_converges(WL_LAPLACE, INIT_NODE0, "laplace from one node");
    test_converges(WL_BT, INIT_RR, "bt from round-robin");
    test_first_touch_stays();
    test_allowed_nodes();
    test_binding_later();
    test_noise_and_budget();
    test_sampling_shared_no_thrash();
    test_sampling_skewed_first();
    test_deactivates();
    test_home_refresh();
    test_fresh_areas();
    test_stable_needs_evidence();
    test_stable_needs_settled_set();
    test_uniform_table_stays();
    test_pingpong();
    test_pingpong_then_settles();
    test_thin_second_move();
    test_selftune();
    test_cold();
    test_predictive();
    test_serial_team();
    test_replay(0);
    test_replay(40);
    test_hybrid();
    test_hybrid_sees_whole();
    test_runtime_starts_late();
    test_sampling();
    test_budget_adapts();
    test_first_sweep();
    test_first_sweep_short();
    test_first_sweep_cost();
    test_first_sweep_grown();
    test_manager_thread();
    test_end_during_arm();
    test_manager_batches();
    test_switch_mechanism();
    test_unregister_races();
    test_injected_failures();
    test_misuse();
    test_stats_json();
    test_bookkeeping_cost();
    ph_topo_free(topo);
    return check_summary("test_engine");
}
