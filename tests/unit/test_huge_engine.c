/*
 * test_huge_engine.c -- 2 MiB pages in the migration engine (huge.c) and
 * the huge-page criteria (criteria/criteria.c), on the simulated machine.
 *
 * Criteria: made-up subpage counts decide KEEP / MOVE / SPLIT; the
 * dominant node and the one-node test.
 * Engine: an array of 4 units of 2 MiB (THP on the simulated machine,
 * 2048 4 KiB pages) on node 0, accessed through the synthetic source by a
 * per-page owner table the test rewrites between iterations:
 *   - units owned whole by nodes 0..3: three 2 MiB pages move, one move
 *     entry each, and stay huge;
 *   - units whose halves belong to two nodes: each is split, and its
 *     halves end on their owners' nodes as 4 KiB pages;
 *   - a split unit then owned whole by one node: its pages gather there
 *     and, after huge_collapse_after invocations, it is one 2 MiB page
 *     again;
 *   - huge_split_share = 0: a shared unit is never split; it moves whole
 *     to the node with most accesses.
 */
#include "check.h"

#include "../sim/engine_rig.h"

#include "base/error.h"
#include "config/options.h"
#include "engine/engine.h"
#include "engine/engine_int.h"
#include "move/mover.h"
#include "os/os.h"
#include "criteria/criteria.h"
#include "sample/source.h"
#include "topo/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNITS 4
#define UNIT 512
#define NPAGES (UNITS * UNIT)
#define PG 4096u

static ph_topology *topo;

/* ---- criteria --------------------------------------------------------------- */

static void test_criteria(void)
{
    double lat[4] = {100, 200, 200, 100};
    ph_latency_model m = {.nnodes = 2, .lat_ns = lat, .contention_ns = 0};
    uint32_t agg[2];
    int target;
    double ratio;
    /* all subpages from node 1, home 0: move whole */
    uint32_t a[3 * 2] = {0, 10, 0, 12, 1, 9};
    CHECK_EQ(ph_crit_huge(&m, a, 3, 0, 1.0, 1, 0.25, agg, &target, &ratio), PH_HUGE_MOVE);
    CHECK_EQ(target, 1);
    CHECK_EQ(agg[0], 1u);
    CHECK_EQ(agg[1], 31u);
    /* half the accesses from subpages preferring node 0: split */
    uint32_t b[4 * 2] = {10, 0, 12, 0, 0, 11, 0, 11};
    CHECK_EQ(ph_crit_huge(&m, b, 4, 0, 1.0, 1, 0.25, agg, &target, &ratio), PH_HUGE_SPLIT);
    /* the same with splitting off: the aggregate decides (22 vs 22: stays) */
    CHECK_EQ(ph_crit_huge(&m, b, 4, 0, 1.0, 1, 0.0, agg, &target, &ratio), PH_HUGE_KEEP);
    /* a minority below the share: no split, move to the majority */
    uint32_t c[4 * 2] = {3, 0, 0, 20, 0, 20, 0, 20};
    CHECK_EQ(ph_crit_huge(&m, c, 4, 0, 1.0, 1, 0.25, agg, &target, &ratio), PH_HUGE_MOVE);
    CHECK_EQ(target, 1);
    /* one sampled subpage never splits; local accesses keep */
    uint32_t d[1 * 2] = {30, 0};
    CHECK_EQ(ph_crit_huge(&m, d, 1, 0, 1.0, 1, 0.25, agg, &target, &ratio), PH_HUGE_KEEP);
    /* nothing sampled */
    uint32_t z[2 * 2] = {0, 0, 0, 0};
    CHECK_EQ(ph_crit_huge(&m, z, 2, 0, 1.0, 1, 0.25, agg, &target, &ratio), PH_HUGE_KEEP);

    uint32_t e3[3] = {0, 5, 5};
    CHECK_EQ(ph_crit_dominant(e3, 3), 1);
    uint32_t e0[3] = {0, 0, 0};
    CHECK_EQ(ph_crit_dominant(e0, 3), -1);
    int h1[3] = {2, 2, 2}, h2[3] = {2, 1, 2}, h3[3] = {2, -2, 2};
    CHECK_EQ(ph_crit_one_node(h1, 3), 2);
    CHECK_EQ(ph_crit_one_node(h2, 3), -1);
    CHECK_EQ(ph_crit_one_node(h3, 3), -1);
    CHECK_EQ(ph_crit_one_node(h1, 0), -1);
}

/* ---- engine ------------------------------------------------------------------- */

typedef struct owners {
    int owner[NPAGES]; /* node index touching each page */
} owners;

static int model(void *arg, size_t range, size_t page, uint32_t *acc, int nnodes)
{
    owners *o = arg;
    (void)range;
    for (int k = 0; k < nnodes; k++)
        acc[k] = 0;
    if (page < NPAGES && o->owner[page] >= 0)
        acc[o->owner[page]] = 100;
    return 0;
}

typedef struct rig {
    ph_os *os;
    ph_mover *mover;
    ph_engine *e;
    char *mem;
    owners own;
} rig;

/* The mover's settings: the defaults of move_batch_pages, move_retries
 * and node_full_backoff_ms. */
static const ph_mover_cfg mover_cfg = {512, 3, 1000 * 1000000ull, 0};

static void rig_open(rig *r, double split_share, unsigned collapse_after,
                     unsigned stable_after)
{
    memset(r, 0, sizeof *r);
    r->os = ph_os_sim_open(topo);
    r->mover = ph_mover_new(r->os, &mover_cfg);
    r->mem = ph_os_map(r->os, NPAGES * PG, 2u << 20, PH_MAP_HUGE_THP);
    CHECK(r->os && r->mover && r->mem);
    CHECK_EQ(ph_os_populate_on(r->os, r->mem, NPAGES * PG, topo->nodes[0].id), 0);
    ph_engine_cfg c = rig_engine_cfg();
    c.stable_after = stable_after;
    c.cold_after = 0;
    c.optimistic = 1;
    c.huge_split_share = split_share;
    c.huge_collapse_after = collapse_after;
    for (int p = 0; p < NPAGES; p++)
        r->own.owner[p] = -1;
    r->e = rig_engine_open(topo, r->os, r->mover, &c, model, &r->own, 0, 0, 3);
    CHECK(ph_engine_register(r->e, r->mem, NPAGES * PG, "huge grid") != NULL);
}

static void rig_close(rig *r)
{
    ph_engine_free(r->e);
    ph_os_unmap(r->os, r->mem, NPAGES * PG);
    ph_mover_free(r->mover);
    ph_os_close(r->os);
}

/* Node index of every page, and how many units are huge. */
static int survey(rig *r, int *home)
{
    static void *pages[NPAGES];
    uint8_t huge[NPAGES];
    for (int p = 0; p < NPAGES; p++)
        pages[p] = r->mem + (size_t)p * PG;
    CHECK_EQ(ph_os_query(r->os, NPAGES, pages, home), 0);
    for (int p = 0; p < NPAGES; p++)
        home[p] = ph_topo_node_index(topo, home[p]);
    CHECK_EQ(ph_os_huge_state(r->os, r->mem, NPAGES, huge), 0);
    int units = 0;
    for (int u = 0; u < UNITS; u++) {
        int all = 1;
        for (int k = 0; k < UNIT; k++)
            all &= huge[u * UNIT + k];
        units += all;
    }
    return units;
}

static int on_owner(rig *r, const int *home)
{
    int ok = 0;
    for (int p = 0; p < NPAGES; p++)
        ok += home[p] == r->own.owner[p];
    return ok;
}

static ph_engine_totals run(rig *r, int iterations)
{
    for (int i = 0; i < iterations; i++)
        CHECK_EQ(ph_engine_iteration_end(r->e), 0);
    ph_engine_totals t;
    ph_engine_get_totals(r->e, &t);
    return t;
}

static void test_whole_units_move_whole(void)
{
    rig r;
    rig_open(&r, 0.25, 3, 0);
    static int home[NPAGES];
    CHECK_EQ(survey(&r, home), UNITS);
    for (int p = 0; p < NPAGES; p++)
        r.own.owner[p] = p / UNIT; /* unit u belongs to node u */
    ph_engine_totals t = run(&r, 3);
    CHECK_EQ(survey(&r, home), UNITS);
    CHECK_EQ(on_owner(&r, home), NPAGES);
    CHECK_EQ(t.huge_migrated, 3u);
    CHECK_EQ(t.migrated, 3u);
    CHECK_EQ(t.huge_split, 0u);
    CHECK_EQ(t.bytes_moved, 3u * (2u << 20));
    rig_close(&r);
}

static void test_shared_units_split_then_collapse(void)
{
    rig r;
    rig_open(&r, 0.25, 2, 0);
    static int home[NPAGES];
    /* halves of each unit belong to two nodes: 2 MiB false sharing */
    for (int p = 0; p < NPAGES; p++)
        r.own.owner[p] = (p / (UNIT / 2)) % 4;
    ph_engine_totals t = run(&r, 3);
    CHECK_EQ(t.huge_split, (uint64_t)UNITS);
    CHECK_EQ(survey(&r, home), 0);
    CHECK_EQ(on_owner(&r, home), NPAGES);
    CHECK_EQ(t.huge_migrated, 0u);
    /* now unit 1 is used by node 3 only: its pages gather there, and it
     * becomes one 2 MiB page again after 2 invocations in that state */
    for (int p = UNIT; p < 2 * UNIT; p++)
        r.own.owner[p] = 3;
    t = run(&r, 1);
    CHECK_EQ(survey(&r, home), 0);
    for (int p = UNIT; p < 2 * UNIT; p++)
        CHECK_EQ(home[p], 3);
    t = run(&r, 3);
    CHECK_EQ(t.huge_collapsed, 1u);
    CHECK_EQ(survey(&r, home), 1);
    CHECK_EQ(on_owner(&r, home), NPAGES);
    uint8_t huge[UNIT];
    CHECK_EQ(ph_os_huge_state(r.os, r.mem + (size_t)UNIT * PG, UNIT, huge), 0);
    CHECK_EQ(huge[0], 1);
    rig_close(&r);
}

static void test_no_split_when_off(void)
{
    rig r;
    rig_open(&r, 0.0, 0, 0);
    static int home[NPAGES];
    /* unit 0: 3/4 of its pages used by node 2, 1/4 by node 1 */
    for (int p = 0; p < NPAGES; p++)
        r.own.owner[p] = p < UNIT ? (p < UNIT / 4 ? 1 : 2) : 0;
    ph_engine_totals t = run(&r, 2);
    CHECK_EQ(t.huge_split, 0u);
    CHECK_EQ(survey(&r, home), UNITS);
    CHECK_EQ(home[0], 2);
    CHECK_EQ(home[UNIT - 1], 2);
    CHECK_EQ(t.huge_migrated, 1u);
    rig_close(&r);
}

/* Once the placement is stable the engine watches the area no more, and
 * its 2 MiB pages, which the watch left mapped with 4 KiB entries on a
 * real kernel, are mapped whole again: every unit, moved or not. */
static void test_stable_units_mapped_whole(void)
{
    rig r;
    rig_open(&r, 0.25, 3, 2);
    static int home[NPAGES];
    for (int p = 0; p < NPAGES; p++)
        r.own.owner[p] = p / UNIT;
    ph_engine_totals t = run(&r, 2);
    CHECK_EQ(t.huge_migrated, 3u);
    CHECK(t.active);
    CHECK_EQ(r.e->huge_remapped, 0u);
    t = run(&r, 8);
    CHECK(!t.active);
    CHECK_EQ(t.huge_migrated, 3u);
    CHECK_EQ(r.e->huge_remapped, (uint64_t)UNITS);
    CHECK_EQ(survey(&r, home), UNITS);
    CHECK_EQ(on_owner(&r, home), NPAGES);
    /* stopped: later iterations map nothing again */
    run(&r, 3);
    CHECK_EQ(r.e->huge_remapped, (uint64_t)UNITS);
    rig_close(&r);
}

int main(void)
{
    topo = ph_topo_load("nodes=4,cpus_per_node=1,sockets=2,local=10,"
                        "remote=12,remote_socket=32");
    if (!topo) {
        fprintf(stderr, "topology: %s\n", ph_error_message());
        return 1;
    }
    test_criteria();
    test_whole_units_move_whole();
    test_shared_units_split_then_collapse();
    test_no_split_when_off();
    test_stable_units_mapped_whole();
    ph_topo_free(topo);
    return check_summary("test_huge_engine");
}
