/*
 * test_engine_amortised.c -- the engine with the amortised criterion (the
 * default) and the hybrid mechanism's early looks, on the simulated
 * machine with exact counts (tests/sim/engine_rig.h).
 *
 * Machine: 4 nodes, 2 sockets of 2 (SLIT 10/12/32, 100 ns local, so 320 ns
 * across sockets), one migration costing 1 ms (the Origin's order), no
 * per-call cost.  The array's pages all start on node 0; node 2 (the
 * other socket) reads each page 1000 times an interval: a move saves
 * 1000 x (320 + 50 - 100) = 270 us an interval, less than one migration.
 */
#include "check.h"

#include "../sim/engine_rig.h"

#include "base/error.h"
#include "base/json_write.h"
#include "engine/engine.h"
#include "os/os.h"
#include "topo/topo.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPAGES 64
#define PG 4096u
#define ML_NS 1e6

static ph_topology *topo;

typedef struct model {
    uint32_t acc[4];    /* every page's accesses per interval, by node */
    size_t split;       /* 0, or: pages from split on read acc_hi */
    uint32_t acc_hi[4];
} model;

static int model_fn(void *m, size_t range, size_t page, uint32_t *acc,
                    int nnodes)
{
    const model *x = m;
    (void)range;
    const uint32_t *a = x->split && page >= x->split ? x->acc_hi : x->acc;
    for (int k = 0; k < nnodes && k < 4; k++)
        acc[k] = a[k];
    return 0;
}

typedef struct rig {
    ph_os *sim;
    ph_mover *mover;
    ph_engine *e;
    char *mem;
    model m;
} rig;

static const ph_mover_cfg mover_cfg = {512, 3, 1000 * 1000000ull, 0};

/* The nodes the process may use (ph_sim_set_allowed), 0: all. */
static uint64_t rig_allowed;

static void rig_open(rig *r, ph_engine_cfg *c, uint32_t n0, uint32_t n2)
{
    memset(r, 0, sizeof *r);
    r->m.acc[0] = n0;
    r->m.acc[2] = n2;
    r->sim = ph_os_sim_open(topo);
    r->mover = ph_mover_new(r->sim, &mover_cfg);
    r->mem = ph_os_map(r->sim, NPAGES * PG, PG, PH_MAP_NO_THP);
    if (!r->sim || !r->mover || !r->mem ||
        ph_os_populate_on(r->sim, r->mem, NPAGES * PG, topo->nodes[0].id)) {
        fprintf(stderr, "rig: %s\n", ph_error_message());
        exit(1);
    }
    if (rig_allowed)
        ph_sim_set_allowed(r->sim, rig_allowed);
    r->e = rig_engine_open(topo, r->sim, r->mover, c, model_fn, &r->m, 0, 0.0, 7);
    CHECK(ph_engine_register(r->e, r->mem, NPAGES * PG, "grid") != NULL);
}

static void rig_close(rig *r)
{
    ph_engine_free(r->e);
    ph_os_unmap(r->sim, r->mem, NPAGES * PG);
    ph_mover_free(r->mover);
    ph_os_close(r->sim);
}

/* Pages on node index `node`. */
static size_t on_node(rig *r, int node)
{
    void *pg[NPAGES];
    int st[NPAGES];
    for (size_t p = 0; p < NPAGES; p++)
        pg[p] = r->mem + p * PG;
    ph_os_query(r->sim, NPAGES, pg, st);
    size_t k = 0;
    for (size_t p = 0; p < NPAGES; p++)
        k += ph_topo_node_index(topo, st[p]) == node;
    return k;
}

static size_t on_node2(rig *r)
{
    return on_node(r, 2);
}

static ph_engine_cfg cfg_of(int criterion)
{
    ph_engine_cfg c = rig_engine_cfg();
    c.criterion = criterion;
    c.stable_after = 0;
    c.cold_after = 0;
    c.critical_pages = 0;
    c.iterations_expected = 0;
    return c;
}

/* Unknown run length: the run is expected to last as long again as it
 * has, so the 1 ms move is worth it once 4 intervals were seen (4 x 270
 * us); UPMlib's criterion never moves (370 us remote an interval against
 * 1 ms). */
static void test_unknown_length(void)
{
    for (int crit = 0; crit < 2; crit++) {
        ph_engine_cfg c = cfg_of(crit ? PH_CRITERION_COMPETITIVE
                                      : PH_CRITERION_AMORTISED);
        rig r;
        rig_open(&r, &c, 0, 1000);
        for (int it = 1; it <= 6; it++) {
            CHECK_EQ(ph_engine_iteration_end(r.e), 0);
            size_t want = crit == 0 && it >= 4 ? NPAGES : 0;
            if (on_node2(&r) != want)
                fprintf(stderr, "criterion %d iteration %d: %zu on node 2, want %zu\n",
                        crit, it, on_node2(&r), want);
            CHECK_EQ(on_node2(&r), want);
        }
        rig_close(&r);
    }
}

/* A count the program gave: the first interval decides. */
static void test_known_length(void)
{
    ph_engine_cfg c = cfg_of(PH_CRITERION_AMORTISED);
    rig r;
    rig_open(&r, &c, 0, 1000);
    CHECK_EQ(ph_engine_set_iterations(r.e, 100), 0);
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    CHECK_EQ(on_node2(&r), NPAGES);
    ph_engine_totals t;
    ph_engine_get_totals(r.e, &t);
    CHECK_EQ(t.migrated, NPAGES);
    rig_close(&r);
    /* the same count through the configuration (the tunable) */
    c.iterations_expected = 100;
    rig_open(&r, &c, 0, 1000);
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    CHECK_EQ(on_node2(&r), NPAGES);
    rig_close(&r);
    /* a program at its last iteration: nothing is worth a move */
    c.iterations_expected = 1;
    rig_open(&r, &c, 0, 1000);
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    CHECK_EQ(on_node2(&r), 0);
    rig_close(&r);
}

/* Evidence: the page's history joins this interval.  Node 0 reads 1000
 * an interval (at home), then the pattern changes to node 2; the saving
 * grows as the old phase fades. */
static void test_evidence(void)
{
    ph_engine_cfg c = cfg_of(PH_CRITERION_AMORTISED);
    rig r;
    rig_open(&r, &c, 1000, 0);
    CHECK_EQ(ph_engine_set_iterations(r.e, 1000), 0);
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    CHECK_EQ(on_node2(&r), 0); /* at home */
    r.m.acc[0] = 0;
    r.m.acc[2] = 1000;
    /* rate now (1000 + 0) / 2 from node 0 and 500 from node 2: moving
     * it loses as much as it gains, nothing moves */
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    CHECK_EQ(on_node2(&r), 0);
    /* next: node 0's evidence is 500, halved to 250 in the rate; node
     * 2's 750: the move pays */
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    CHECK_EQ(on_node2(&r), NPAGES);
    rig_close(&r);
}

/* The hybrid mechanism's early look: inside the first iteration, pages
 * whose evidence is decisive move; the look is logged as "early", counts
 * among the first iterations' migrations, and ends with the first
 * iteration. */
static void test_early_look(void)
{
    ph_engine_cfg c = cfg_of(PH_CRITERION_AMORTISED);
    c.mech = PH_MECH_HYBRID;
    c.early_period_ms = 20;
    rig r;
    rig_open(&r, &c, 0, 1000);
    CHECK_EQ(ph_engine_set_iterations(r.e, 15), 0);
    /* 1000 accesses seen, 14 more iterations at least as long: 14 x 270 us */
    CHECK_EQ(ph_engine_look(r.e), NPAGES);
    CHECK_EQ(on_node2(&r), NPAGES);
    ph_invocation inv;
    size_t nlog = ph_engine_log(r.e, 0, &inv, 1);
    CHECK(nlog >= 1);
    CHECK_EQ(inv.kind, PH_INV_EARLY);
    CHECK_EQ(inv.migrated, NPAGES);
    CHECK_EQ(ph_engine_look(r.e), 0); /* all home now */
    /* the iteration's own invocation sees all of its counts, at home */
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    ph_engine_totals t;
    ph_engine_get_totals(r.e, &t);
    CHECK_EQ(t.migrated, NPAGES);
    CHECK_EQ(ph_engine_look(r.e), 0); /* after the first iteration: none */
    /* the statistics say so */
    char path[] = "/tmp/ph_test_early_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK_EQ(ph_engine_write_json(r.e, fd), 0);
        close(fd);
        FILE *f = fopen(path, "r");
        char buf[1 << 16];
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        buf[n] = '\0';
        if (f)
            fclose(f);
        CHECK(strstr(buf, "\"criterion\": \"amortised\"") != NULL ||
              strstr(buf, "\"criterion\":\"amortised\"") != NULL);
        CHECK(strstr(buf, "\"kind\": \"early\"") != NULL ||
              strstr(buf, "\"kind\":\"early\"") != NULL);
        CHECK(strstr(buf, "\"migrated_first2\": 64") != NULL ||
              strstr(buf, "\"migrated_first2\":64") != NULL);
        /* the start share counts the pages moved early, at their
         * first home (node 0, none local to node 2's accesses) */
        CHECK(strstr(buf, "\"start_pages\": 64") != NULL ||
              strstr(buf, "\"start_pages\":64") != NULL);
        CHECK(strstr(buf, "\"owner_local_share_start\": 0,") != NULL ||
              strstr(buf, "\"owner_local_share_start\": 0.0") != NULL ||
              strstr(buf, "\"owner_local_share_start\":0") != NULL);
        unlink(path);
    }
    rig_close(&r);

    /* node 2 outside the process's binding (nodes 0, 1, 3): the early
     * look sends the pages to its stand-in, node 3 (the same socket) */
    rig_allowed = 0xb;
    rig_open(&r, &c, 0, 1000);
    rig_allowed = 0;
    CHECK_EQ(ph_engine_set_iterations(r.e, 15), 0);
    CHECK_EQ(ph_engine_look(r.e), NPAGES);
    CHECK_EQ(on_node2(&r), 0);
    CHECK_EQ(on_node(&r, 3), NPAGES);
    CHECK_EQ(ph_engine_look(r.e), 0); /* at the stand-in: done */
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    CHECK_EQ(on_node(&r, 3), NPAGES);
    rig_close(&r);

    /* unknown length: what was seen is worth one more such part only;
     * 270 us does not pay 1 ms */
    c.iterations_expected = 0;
    rig_open(&r, &c, 0, 1000);
    CHECK_EQ(ph_engine_look(r.e), 0);
    CHECK_EQ(on_node2(&r), 0);
    rig_close(&r);

    /* not decisive: node 0 keeps 30% of the accesses */
    rig_open(&r, &c, 300, 700);
    CHECK_EQ(ph_engine_set_iterations(r.e, 1000), 0);
    CHECK_EQ(ph_engine_look(r.e), 0);
    CHECK_EQ(on_node2(&r), 0);
    rig_close(&r);

    /* the iterative mechanism does not look; nor does hybrid with the
     * period 0 */
    c.mech = PH_MECH_ITERATIVE;
    rig_open(&r, &c, 0, 1000);
    CHECK_EQ(ph_engine_set_iterations(r.e, 1000), 0);
    CHECK_EQ(ph_engine_look(r.e), 0);
    rig_close(&r);
    c.mech = PH_MECH_HYBRID;
    c.early_period_ms = 0;
    rig_open(&r, &c, 0, 1000);
    CHECK_EQ(ph_engine_set_iterations(r.e, 1000), 0);
    CHECK_EQ(ph_engine_look(r.e), 0);
    rig_close(&r);
}

/* A look re-arms the source in the middle of the iteration; the samples
 * it drained stay in the iteration's counts, and the iteration's own
 * invocation runs on them even when nothing came after the look (it was
 * skipped as an empty interval: the look's arm had reset the count). */
static void test_early_then_quiet(void)
{
    ph_engine_cfg c = cfg_of(PH_CRITERION_AMORTISED);
    c.mech = PH_MECH_HYBRID;
    c.early_period_ms = 20;
    rig r;
    rig_open(&r, &c, 300, 700); /* node 2 has 70%: not decisive */
    CHECK_EQ(ph_engine_set_iterations(r.e, 1000), 0);
    CHECK_EQ(ph_engine_look(r.e), 0);
    r.m.acc[0] = r.m.acc[2] = 0; /* nothing after the look */
    CHECK_EQ(ph_engine_iteration_end(r.e), 0);
    ph_invocation inv[8];
    size_t n = ph_engine_log(r.e, 0, inv, 8);
    size_t iterative = 0;
    for (size_t i = 0; i < n && i < 8; i++)
        if (inv[i].kind == PH_INV_ITERATIVE && inv[i].scanned == NPAGES)
            iterative++;
    CHECK_EQ(iterative, 1);
    /* and it decides on the whole iteration's counts: 700 of 1000 from
     * node 2 over 999 more iterations pays the move */
    CHECK_EQ(on_node2(&r), NPAGES);
    rig_close(&r);
}

/* The order of an early look's moves (ph_crit_move_order), as the
 * simulated OS's move log shows it: the first half of the pages is read
 * by node 1 (same socket as their home, node 0: 3000 x 70 ns = 210 us
 * saved an interval each), the second half by node 2 (the other socket:
 * 1000 x 270 ns = 270 us each).  Node 2 has the more saving to come, so
 * its pages go first; the nodes then take turns, and each node's pages go
 * spread over its range, not in address order.  Batches of 4 pages (each
 * sorted by target, then address, as the mover sends them). */
static void test_early_order(void)
{
    ph_engine_cfg c = cfg_of(PH_CRITERION_AMORTISED);
    c.mech = PH_MECH_HYBRID;
    c.early_period_ms = 20;
    rig r;
    rig_open(&r, &c, 0, 0);
    r.m.acc[1] = 3000;
    r.m.split = NPAGES / 2;
    r.m.acc_hi[2] = 1000;
    ph_mover_cfg mc = mover_cfg;
    mc.batch_pages = 4;
    ph_mover_set_cfg(r.mover, &mc);
    CHECK_EQ(ph_engine_set_iterations(r.e, 15), 0);
    CHECK_EQ(ph_sim_set_move_log(r.sim, 1), 0);
    CHECK_EQ(ph_engine_look(r.e), NPAGES);
    ph_sim_moved *log = NULL;
    size_t nlog = 0;
    CHECK_EQ(ph_sim_move_log_take(r.sim, &log, &nlog), 0);
    CHECK_EQ(nlog, NPAGES);
    if (nlog == NPAGES) {
        size_t page[NPAGES];
        for (size_t j = 0; j < nlog; j++)
            page[j] = (size_t)((char *)log[j].addr - r.mem) / PG;
        /* the first batch is node 2's (its saving to come, 32 x 270 us,
         * stays above node 1's 32 x 210 us for its first 8 moves) */
        int first = 1;
        for (size_t j = 0; j < 4; j++)
            first &= page[j] >= NPAGES / 2;
        CHECK(first);
        /* both nodes among the first 16 moves: they take turns */
        size_t low = 0;
        for (size_t j = 0; j < 16; j++)
            low += page[j] < NPAGES / 2;
        CHECK(low >= 4 && low <= 12);
        /* node 2's first 4 moves spread over its 32 pages */
        size_t lo = SIZE_MAX, hi = 0, k = 0;
        for (size_t j = 0; j < nlog && k < 4; j++)
            if (page[j] >= NPAGES / 2) {
                lo = page[j] < lo ? page[j] : lo;
                hi = page[j] > hi ? page[j] : hi;
                k++;
            }
        CHECK(hi - lo >= NPAGES / 4);
    }
    free(log);
    rig_close(&r);
}

/* The memory-manager thread looks by itself every early_period_ms. */
static void test_early_manager(void)
{
    ph_engine_cfg c = cfg_of(PH_CRITERION_AMORTISED);
    c.mech = PH_MECH_HYBRID;
    c.early_period_ms = 5;
    c.sync = 0;
    rig r;
    rig_open(&r, &c, 0, 1000);
    CHECK_EQ(ph_engine_set_iterations(r.e, 15), 0);
    size_t got = 0;
    for (int w = 0; w < 400 && got < NPAGES; w++) {
        usleep(5000);
        got = on_node2(&r);
    }
    CHECK_EQ(got, NPAGES);
    rig_close(&r);
}

int main(void)
{
    topo = ph_topo_from_spec("nodes=4,cpus_per_node=2,sockets=2,local=10,"
                             "remote=12,remote_socket=32");
    if (!topo) {
        fprintf(stderr, "topology: %s\n", ph_error_message());
        return 1;
    }
    int n = topo->nnodes;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            topo->migrate_ns_4k[i * n + j] = i == j ? 0 : ML_NS;
    topo->migrate_ns_call = 0;
    test_unknown_length();
    test_known_length();
    test_evidence();
    test_early_look();
    test_early_then_quiet();
    test_early_order();
    test_early_manager();
    ph_topo_free(topo);
    return check_summary("test_engine_amortised");
}
