/*
 * test_simx.c -- `pagehome sim`'s parts (src/simx/): the cost model on
 * tiny cases whose times the test works out from the formula of
 * doc/sim-model.md with its own numbers, the presets as machines, the
 * workload builder's totals, the IRIX-like engine's threshold,
 * dampening, freezing and melting on two pages, and one fast e1 cell
 * (BT-like, 16 threads, epyc-2s-8n, 8 iterations) run through the real
 * engine on the simulated machine, with the facts that must hold.
 */
#include "check.h"

#include "pagehome.h"

#include "base/error.h"
#include "simx/experiments.h"
#include "simx/irix.h"
#include "simx/model.h"
#include "simx/presets.h"
#include "simx/run.h"
#include "simx/workload.h"
#include "topo/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 1e-6 * (fabs((double)(b)) + 1))

/* ---- the cost model ---------------------------------------------------- */

/* 2 nodes, 4 pages, 3 threads (0 and 1 on node 0, 2 on node 1).  Local 70
 * ns, remote 190 ns (from node 1 to node 0: 230, to test the direction),
 * 13 ns per competing node. */
static void test_model_tiny(void)
{
    const double L = 70, R01 = 190, R10 = 230, C = 13;
    const double lat[4] = {L, R01, R10, L}; /* [from * 2 + home] */
    ph_simx_costs m = {2, lat, C};
    int node[3] = {0, 0, 1};
    int home[4] = {0, 0, 1, 1};
    /* sorted by page */
    ph_simx_access acc[] = {
        {0, 0, 10}, {0, 2, 30},  /* node 1 (30) > home node 0 (10): c = 1 */
        {1, 0, 4},  {1, 1, 5},   /* only the home: local */
        {2, 0, 7},  {2, 2, 7},   /* node 0 (7) not > home node 1 (7): c = 0 */
        {3, 0, 2},  {3, 1, 2},  {3, 2, 1}, /* node 0 (4) > home (1): c = 1 */
    };
    double tn[3];
    uint64_t remote = ph_simx_phase_ns(&m, acc, sizeof acc / sizeof acc[0],
                                       node, 3, home, tn);
    double t0 = 10 * L + 4 * L + 7 * R01 + 2 * (R01 + C * 1);
    double t1 = 5 * L + 2 * (R01 + C * 1);
    double t2 = 30 * (R10 + C * 1) + 7 * L + 1 * L;
    CHECK(NEAR(tn[0], t0));
    CHECK(NEAR(tn[1], t1));
    CHECK(NEAR(tn[2], t2));
    CHECK_EQ(remote, 30 + 7 + 2 + 2);
    double extra[3] = {0, 1e4, 0};
    double want = t2 > t1 + 1e4 ? t2 : t1 + 1e4;
    want = want > t0 ? want : t0;
    CHECK(NEAR(ph_simx_barrier_ns(tn, extra, 3), want));
    CHECK(NEAR(ph_simx_barrier_ns(tn, NULL, 3), t2 > t0 ? t2 : t0));

    /* every page moves to node 1: the same accesses, other latencies */
    int home1[4] = {1, 1, 1, 1};
    ph_simx_phase_ns(&m, acc, sizeof acc / sizeof acc[0], node, 3, home1, tn);
    /* page 0: node 0 (10) not > node 1 (30): c = 0; page 1: node 0 (9) >
     * home node 1 (0): c = 1; page 3: node 0 (4) > 1: c = 1 */
    double u0 = 10 * R01 + 4 * (R01 + C) + 7 * R01 + 2 * (R01 + C);
    double u1 = 5 * (R01 + C) + 2 * (R01 + C);
    double u2 = 30 * L + 7 * L + 1 * L;
    CHECK(NEAR(tn[0], u0));
    CHECK(NEAR(tn[1], u1));
    CHECK(NEAR(tn[2], u2));

    /* a page nobody placed costs nothing */
    int none[4] = {-1, 0, 1, 1};
    ph_simx_phase_ns(&m, acc, 2, node, 3, none, tn);
    CHECK(tn[0] == 0 && tn[1] == 0 && tn[2] == 0);
}

static void test_manager(void)
{
    double busy = 0;
    /* an invocation at 100 costing 40: starts at once */
    double s1 = ph_simx_manager_start(100, &busy, 40);
    CHECK(NEAR(s1, 100));
    CHECK(NEAR(busy, 140));
    /* the next one, posted at 120, waits for the manager */
    double s2 = ph_simx_manager_start(120, &busy, 30);
    CHECK(NEAR(s2, 140));
    CHECK(NEAR(busy, 170));
    /* 3 pages of a 30 ns invocation from 140 arrive at 150, 160, 170 */
    CHECK(NEAR(ph_simx_arrival_ns(s2, 30, 1, 3), 150));
    CHECK(NEAR(ph_simx_arrival_ns(s2, 30, 3, 3), 170));
}

/* ---- presets ------------------------------------------------------------ */

static void test_presets(void)
{
    const ph_simx_preset *o = ph_simx_preset_find("origin2000-16");
    const ph_simx_preset *e = ph_simx_preset_find("epyc-2s-8n");
    const ph_simx_preset *c = ph_simx_preset_find("cxl-2tier");
    CHECK(o && e && c);
    CHECK(ph_simx_preset_find("vax") == NULL);
    if (!o || !e || !c)
        return;
    ph_topology *t = ph_simx_preset_topology(o);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ(t->nnodes, 16);
        CHECK_EQ(ph_simx_cpus(t), 32);
        /* 300 + 100 * hops: node 0 to 1 (1 hop), 3 (2), 7 (3), 15 (4) */
        CHECK(NEAR(ph_topo_lat(t, 0, 0), 300));
        CHECK(NEAR(ph_topo_lat(t, 0, 1), 400));
        CHECK(NEAR(ph_topo_lat(t, 0, 3), 500));
        CHECK(NEAR(ph_topo_lat(t, 5, 2), 600));
        CHECK(NEAR(ph_topo_lat(t, 0, 15), 700));
        CHECK(NEAR(t->migrate_ns_4k[0 * 16 + 9], 1.1e6));
        CHECK(NEAR(t->migrate_ns_4k[9 * 16 + 9], 0));
        CHECK(NEAR(t->migrate_ns_call, 0));
        int nodes[32];
        CHECK_EQ(ph_simx_bind_threads(o, t, 16, 0, nodes), 0);
        CHECK(nodes[0] == 0 && nodes[1] == 0 && nodes[15] == 7);
        CHECK_EQ(ph_simx_bind_threads(o, t, 16, 16, nodes), 0);
        CHECK(nodes[0] == 8 && nodes[15] == 15);
        CHECK_EQ(ph_simx_bind_threads(o, t, 33, 0, nodes), -1);
        ph_topo_free(t);
    }
    t = ph_simx_preset_topology(e);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ(t->nnodes, 8);
        CHECK(NEAR(ph_topo_lat(t, 2, 2), 100));
        CHECK(NEAR(ph_topo_lat(t, 0, 3), 120)); /* same socket */
        CHECK(NEAR(ph_topo_lat(t, 0, 4), 320)); /* across */
        CHECK(NEAR(t->migrate_ns_4k[1], 1200));
        CHECK(NEAR(t->migrate_ns_2m[1], 190000));
        CHECK(NEAR(t->migrate_ns_call, 20000));
        int nodes[64];
        CHECK_EQ(ph_simx_bind_threads(e, t, 16, 0, nodes), 0); /* spread */
        CHECK(nodes[0] == 0 && nodes[1] == 0 && nodes[2] == 1 &&
              nodes[15] == 7);
        ph_topo_free(t);
    }
    t = ph_simx_preset_topology(c);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ(t->nnodes, 2);
        CHECK_EQ(t->nodes[1].ncpus, 0);
        CHECK_EQ(ph_simx_cpus(t), 32);
        CHECK(NEAR(ph_topo_lat(t, 0, 1) / ph_topo_lat(t, 0, 0), 2.2));
        ph_topo_free(t);
    }
    char spec[2048];
    CHECK(ph_simx_preset_spec(o, spec, sizeof spec) != NULL);
    CHECK(strstr(spec, "dist=30:40:40:50") != NULL);
    CHECK(ph_simx_preset_spec(o, spec, 64) == NULL); /* does not fit */
}

/* ---- workloads ---------------------------------------------------------- */

static uint64_t array_phase_total(const ph_simx_app *a, int ph, int ar)
{
    uint64_t s = 0;
    const ph_simx_phase *p = &a->phases[ph];
    for (size_t k = 0; k < p->nacc; k++)
        if (p->acc[k].page >= a->arrays[ar].first &&
            p->acc[k].page < a->arrays[ar].first + a->arrays[ar].npages)
            s += p->acc[k].count;
    return s;
}

static void test_workloads(void)
{
    ph_simx_app a;
    /* BT (bt.c, class A): u, f, rhs of 2560 pages; 62 interior planes
     * over 16 threads: 4 planes each for the first 14, 3 for the last 2 */
    CHECK_EQ(ph_simx_app_build(&a, PH_SIMX_BT, 16, 128, 1), 0);
    CHECK_EQ(a.npages, 3 * 2560);
    CHECK_EQ(a.narrays, 3);
    CHECK_EQ(a.nphases, 5);
    CHECK_EQ(a.iterations, 180);
    CHECK(a.zphase == 3 && a.phases[3].z);
    /* x phase: rhs swept twice over the interior rows (62 of 64) of the
     * interior planes (62 of 64): 2 x 32 lines x 2560 pages x (62/64)^2,
     * within one access per entry (shares of pages are rounded) */
    uint64_t rhs_x = array_phase_total(&a, 1, 2);
    double want = 2.0 * 32 * 2560 * 62.0 / 64 * 62.0 / 64;
    CHECK(fabs((double)rhs_x - want) <= (double)a.phases[1].nacc);
    /* z phase: the same interior swept twice, split the other way */
    uint64_t rhs_z = array_phase_total(&a, 3, 2);
    CHECK(fabs((double)rhs_z - want) <= (double)a.phases[3].nacc);
    CHECK_EQ(array_phase_total(&a, 1, 0), 0); /* x does not read u */
    /* the 7-point stencil: thread 0 owns planes 1-4, thread 1 planes 5-8;
     * u's plane 5 is read by its owner and, as halo, by thread 0 */
    int readers5 = 0;
    for (size_t k = 0; k < a.phases[0].nacc; k++)
        readers5 += a.phases[0].acc[k].page == 5 * 40; /* u plane 5 */
    CHECK_EQ(readers5, 2); /* thread 1 (owner) and thread 0 (halo) */
    /* the z phase's owner of a page is not its first toucher for most
     * entries; the x phase's always is */
    size_t other = 0;
    for (size_t k = 0; k < a.phases[3].nacc; k++)
        other += a.phases[3].acc[k].thread !=
                 a.first_toucher[a.phases[3].acc[k].page];
    CHECK(other > a.phases[3].nacc / 2);
    size_t same = 0;
    for (size_t k = 0; k < a.phases[1].nacc; k++)
        same += a.phases[1].acc[k].thread ==
                a.first_toucher[a.phases[1].acc[k].page];
    CHECK_EQ(same, a.phases[1].nacc);
    ph_simx_app_free(&a);
    /* SP: the 13-point stencil reads two planes on either side */
    CHECK_EQ(ph_simx_app_build(&a, PH_SIMX_SP, 16, 128, 1), 0);
    CHECK_EQ(a.iterations, 200);
    int readers6 = 0;
    for (size_t k = 0; k < a.phases[0].nacc; k++)
        readers6 += a.phases[0].acc[k].page == 6 * 40; /* u plane 6 */
    CHECK_EQ(readers6, 2); /* thread 1 and thread 0 (k = 4 + 2) */
    ph_simx_app_free(&a);
    /* 4x phases: the sweeps do four times the work, compute_rhs does not */
    CHECK_EQ(ph_simx_app_build(&a, PH_SIMX_BT, 16, 128, 4), 0);
    CHECK(fabs((double)array_phase_total(&a, 1, 2) - 4 * want) <=
          (double)a.phases[1].nacc);
    uint64_t f_rhs = array_phase_total(&a, 0, 1);
    CHECK(fabs((double)f_rhs - 1.0 * 32 * 2560 * 62 / 64 * 62 / 64) <=
          (double)a.phases[0].nacc);
    ph_simx_app_free(&a);
    /* CG: 53 phases; in each matvec every thread reads all of p */
    CHECK_EQ(ph_simx_app_build(&a, PH_SIMX_CG, 8, 64, 1), 0);
    CHECK_EQ(a.nphases, 53);
    CHECK_STR(a.arrays[6].name, "p");
    CHECK_EQ(a.arrays[2].npages, (14000UL * 97 * 8 + 4095) / 4096);
    uint64_t p_reads = array_phase_total(&a, 1, 6);
    CHECK(fabs((double)p_reads - 8.0 * 64 * 14000 * 8 / 4096) <= 8.0 * 28);
    CHECK(a.phases[20].alias && a.phases[20].acc == a.phases[2].acc);
    ph_simx_app_free(&a);
    CHECK_EQ(ph_simx_app_find("cg"), PH_SIMX_CG);
    CHECK_EQ(ph_simx_app_find("LU"), -1);
}

/* ---- the IRIX-like engine ------------------------------------------------ */

static void test_irix(void)
{
    ph_simx_irix_params p = {.threshold = 100, .dampening = 2,
                             .freeze_after = 2, .period_ns = 1e6};
    ph_simx_irix_page a = {0, -1, 0, 0}, b = {0, -1, 0, 0};
    uint32_t ca[2] = {0, 0}, cb[2] = {0, 0};
    int target;
    /* page b: remote exceeds local by exactly the threshold: no interrupt,
     * and its counters keep growing */
    cb[0] = 50;
    cb[1] = 150;
    CHECK_EQ(ph_simx_irix_check(&p, cb, 2, 0, &b, &target), PH_IRIX_NONE);
    CHECK_EQ(target, -1);
    CHECK_EQ(cb[1], 150);
    /* page a on node 0: node 1 exceeds by 130: an interrupt, dampened */
    ca[0] = 20;
    ca[1] = 150;
    CHECK_EQ(ph_simx_irix_check(&p, ca, 2, 0, &a, &target),
             PH_IRIX_DAMPENED);
    CHECK_EQ(target, 1);
    CHECK(ca[0] == 0 && ca[1] == 0); /* re-armed */
    /* the second consecutive interrupt toward node 1 migrates it */
    ca[1] = 101;
    CHECK_EQ(ph_simx_irix_check(&p, ca, 2, 0, &a, &target), PH_IRIX_MIGRATE);
    CHECK_EQ(target, 1);
    CHECK_EQ(a.migrations, 1);
    CHECK(!a.frozen);
    /* now on node 1; node 0 wants it back twice: migrates and freezes */
    ca[0] = 300;
    CHECK_EQ(ph_simx_irix_check(&p, ca, 2, 1, &a, &target),
             PH_IRIX_DAMPENED);
    ca[0] = 300;
    CHECK_EQ(ph_simx_irix_check(&p, ca, 2, 1, &a, &target), PH_IRIX_MIGRATE);
    CHECK_EQ(target, 0);
    CHECK(a.frozen);
    /* frozen: interrupts are refused */
    ca[1] = 500;
    CHECK_EQ(ph_simx_irix_check(&p, ca, 2, 0, &a, &target), PH_IRIX_FROZEN);
    CHECK_EQ(ph_simx_irix_check(&p, ca, 2, 0, &a, &target), PH_IRIX_NONE);
    /* the periodic operation melts it and halves the counters */
    ca[0] = 7;
    ca[1] = 9;
    ph_simx_irix_periodic(ca, 2, &a);
    CHECK(!a.frozen && a.migrations == 0);
    CHECK(ca[0] == 3 && ca[1] == 4);
    /* page b: one more access tips it over */
    cb[1] = 151;
    CHECK_EQ(ph_simx_irix_check(&p, cb, 2, 0, &b, &target),
             PH_IRIX_DAMPENED);
    ph_simx_irix_params d;
    ph_simx_irix_defaults(&d);
    CHECK(d.threshold == 1024 && d.dampening == 2 && d.period_ns == 10e6);
}

/* ---- one fast e1 cell ---------------------------------------------------- */

static int run_cell(const ph_simx_preset *p, const ph_topology *t,
                    int placement, int engine, ph_simx_result *r)
{
    ph_simx_cell c;
    memset(&c, 0, sizeof c);
    c.preset = p;
    c.topo = t;
    c.app = PH_SIMX_BT;
    c.nthreads = 16;
    c.iterations = 8;
    c.placement = placement;
    c.engine = engine;
    c.repeat = 1;
    c.critical_pages = -1;
    c.notes = 1;
    c.migrate_at = -1;
    int rc = ph_simx_run(&c, r);
    if (rc != 0)
        fprintf(stderr, "run: %s\n", ph_error_message());
    return rc;
}

/* Pages of the BT-like program (16 threads) whose accesses in one
 * iteration come mostly from a node other than `home`. */
static size_t must_move(const ph_simx_preset *p, const ph_topology *t,
                        int home)
{
    ph_simx_app a;
    int nodes[16];
    if (ph_simx_app_build(&a, PH_SIMX_BT, 16, p->line_bytes, 1) != 0 ||
        ph_simx_bind_threads(p, t, 16, 0, nodes) != 0)
        return 0;
    size_t n = (size_t)t->nnodes, moved = 0;
    double *acc = calloc(a.npages * n, sizeof *acc);
    for (int ph = 0; acc && ph < a.nphases; ph++)
        for (size_t k = 0; k < a.phases[ph].nacc; k++) {
            const ph_simx_access *x = &a.phases[ph].acc[k];
            acc[x->page * n + (size_t)nodes[x->thread]] += x->count;
        }
    for (size_t pg = 0; acc && pg < a.npages; pg++) {
        size_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (acc[pg * n + i] > acc[pg * n + best])
                best = i;
        moved += acc[pg * n + best] > 0 && (int)best != home;
    }
    free(acc);
    ph_simx_app_free(&a);
    return moved;
}

static void test_e1_cell(void)
{
    const ph_simx_preset *p = ph_simx_preset_find("epyc-2s-8n");
    ph_topology *t = ph_simx_preset_topology(p);
    CHECK(t != NULL);
    if (!t)
        return;
    ph_simx_result ft, sn, it, again;
    CHECK_EQ(run_cell(p, t, PH_SIMX_FIRST_TOUCH, PH_SIMX_ENG_OFF, &ft), 0);
    CHECK_EQ(run_cell(p, t, PH_SIMX_SINGLE_NODE, PH_SIMX_ENG_OFF, &sn), 0);
    CHECK_EQ(run_cell(p, t, PH_SIMX_SINGLE_NODE, PH_SIMX_ENG_ITERATIVE, &it),
             0);
    CHECK_EQ(run_cell(p, t, PH_SIMX_SINGLE_NODE, PH_SIMX_ENG_ITERATIVE,
                      &again), 0);
    /* single-node without migration is slower than first touch */
    CHECK(sn.total_ns > 1.5 * ft.total_ns);
    CHECK_EQ(sn.migrated, 0);
    /* pagehome repairs it: the last half within 10% of first touch; every
     * page whose accesses come mostly from another node than the one
     * holding them all (node 7: the partition's last) moved, all in the
     * first two iterations' invocations */
    CHECK(it.last_half_ns <= 1.10 * ft.last_half_ns);
    CHECK(it.total_ns < sn.total_ns);
    size_t must = must_move(p, t, 7);
    CHECK(must > 6000); /* about 7/8 of the 7680 pages */
    CHECK(it.migrated >= must);
    CHECK(it.migrated <= it.hot_pages);
    CHECK_EQ(it.first2, it.migrated);
    CHECK(it.eligible >= it.migrated);
    CHECK(it.remote_per_iter < sn.remote_per_iter);
    /* the first iteration ran on the single-node placement */
    CHECK(NEAR(it.iter_ns[0], sn.iter_ns[0]));
    /* deterministic */
    CHECK(again.total_ns == it.total_ns && again.migrated == it.migrated);
    ph_simx_result_free(&ft);
    ph_simx_result_free(&sn);
    ph_simx_result_free(&it);
    ph_simx_result_free(&again);
    ph_topo_free(t);
}

static void test_usage_errors(void)
{
    ph_simx_opts o = {NULL, 0, 0};
    CHECK_EQ(ph_simx_check("e9", &o), -1);
    CHECK_MSG("no experiment 'e9'");
    o.machine = "vax";
    CHECK_EQ(ph_simx_check("e1", &o), -1);
    CHECK_MSG("no machine preset 'vax'");
    o.machine = NULL;
    o.threads = 33;
    CHECK_EQ(ph_simx_check("e1", &o), -1);
    CHECK_MSG("32 CPUs");
    o.threads = 17;
    CHECK_EQ(ph_simx_check("e4", &o), -1); /* two programs */
    o.threads = 16;
    CHECK_EQ(ph_simx_check("e4", &o), 0);
    o.machine = "cxl-2tier";
    o.threads = 64;
    CHECK_EQ(ph_simx_check("e1", &o), -1);
}

int main(void)
{
    test_model_tiny();
    test_manager();
    test_presets();
    test_workloads();
    test_irix();
    test_e1_cell();
    test_usage_errors();
    return check_summary("test_simx");
}
