/*
 * test_experiment.c -- `pagehome sim`'s parts (src/experiment/): the cost model on
 * tiny cases whose times the test works out from the formula of
 * doc/sim-model.md with its own numbers, the presets as machines, the
 * workload builder's totals, the IRIX-like engine's threshold,
 * dampening, freezing and melting on two pages, and one fast e1 cell
 * (BT-like, 16 threads, epyc-2s-8n, 8 iterations) run through the real
 * engine on the simulated machine, with the facts that must hold.  Then
 * the TLB term (the reach formula on hand-computed cases, a run with and
 * without it), e6's programs, and a short e6 with its qualitative facts.
 */
#include "check.h"

#include "pagehome.h"

#include "base/error.h"
#include "config/options.h"
#include "experiment/experiments.h"
#include "experiment/irix.h"
#include "experiment/model.h"
#include "experiment/presets.h"
#include "experiment/run.h"
#include "experiment/workload.h"
#include "topo/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 1e-6 * (fabs((double)(b)) + 1))

/* ---- the cost model ---------------------------------------------------- */

/* 2 nodes, 4 pages, 3 threads (0 and 1 on node 0, 2 on node 1).  Local 70
 * ns, remote 190 ns (from node 1 to node 0: 230, to test the direction),
 * 13 ns per competing node. */
static void test_model_tiny(void)
{
    const double L = 70, R01 = 190, R10 = 230, C = 13;
    const double lat[4] = {L, R01, R10, L}; /* [from * 2 + home] */
    ph_exp_costs m = {2, lat, C};
    int node[3] = {0, 0, 1};
    int home[4] = {0, 0, 1, 1};
    /* sorted by page */
    ph_exp_access acc[] = {
        {0, 0, 10}, {0, 2, 30},  /* node 1 (30) > home node 0 (10): c = 1 */
        {1, 0, 4},  {1, 1, 5},   /* only the home: local */
        {2, 0, 7},  {2, 2, 7},   /* node 0 (7) not > home node 1 (7): c = 0 */
        {3, 0, 2},  {3, 1, 2},  {3, 2, 1}, /* node 0 (4) > home (1): c = 1 */
    };
    double tn[3];
    uint64_t remote = ph_exp_phase_ns(&m, acc, sizeof acc / sizeof acc[0],
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
    CHECK(NEAR(ph_exp_barrier_ns(tn, extra, 3), want));
    CHECK(NEAR(ph_exp_barrier_ns(tn, NULL, 3), t2 > t0 ? t2 : t0));

    /* every page moves to node 1: the same accesses, other latencies */
    int home1[4] = {1, 1, 1, 1};
    ph_exp_phase_ns(&m, acc, sizeof acc / sizeof acc[0], node, 3, home1, tn);
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
    ph_exp_phase_ns(&m, acc, 2, node, 3, none, tn);
    CHECK(tn[0] == 0 && tn[1] == 0 && tn[2] == 0);
}

static void test_manager(void)
{
    double busy = 0;
    /* an invocation at 100 costing 40: starts at once */
    double s1 = ph_exp_manager_start(100, &busy, 40);
    CHECK(NEAR(s1, 100));
    CHECK(NEAR(busy, 140));
    /* the next one, posted at 120, waits for the manager */
    double s2 = ph_exp_manager_start(120, &busy, 30);
    CHECK(NEAR(s2, 140));
    CHECK(NEAR(busy, 170));
    /* 3 pages of a 30 ns invocation from 140 arrive at 150, 160, 170 */
    CHECK(NEAR(ph_exp_arrival_ns(s2, 30, 1, 3), 150));
    CHECK(NEAR(ph_exp_arrival_ns(s2, 30, 3, 3), 170));
}

/* The mover's lanes side by side (ph_exp_lanes_time) at its edges. */
static void test_lanes_time(void)
{
    double begin[8], dur[8];
    /* no lane did anything */
    double none[4] = {0, 0, 0, 0};
    CHECK(ph_exp_lanes_time(none, 4, 8, 4, 0, begin, dur) == 0.0);
    CHECK(dur[0] == 0 && dur[3] == 0 && begin[2] == 0);
    /* one lane: the manager's own CPU, even with none idle */
    double one[1] = {50};
    CHECK(ph_exp_lanes_time(one, 1, 0, 32, 0, begin, dur) == 0.0);
    CHECK(NEAR(begin[0], 0) && NEAR(dur[0], 50));
    /* enough idle CPUs: every lane at full speed, nothing taken */
    double four[4] = {10, 40, 0, 20};
    CHECK(ph_exp_lanes_time(four, 4, 3, 16, 0, begin, dur) == 0.0);
    CHECK(NEAR(dur[0], 10) && NEAR(dur[1], 40) && dur[2] == 0 && NEAR(dur[3], 20));
    /* one idle CPU: the dearest lane takes it; the others share the
     * program's CPUs at half speed, one CPU each, and the program loses
     * the most work one of its CPUs gave */
    CHECK(NEAR(ph_exp_lanes_time(four, 4, 1, 16, 0, begin, dur), 20));
    CHECK(NEAR(dur[1], 40) && NEAR(begin[1], 0));
    CHECK(NEAR(dur[3], 40) && NEAR(begin[3], 0));
    CHECK(NEAR(dur[0], 20) && NEAR(begin[0], 0));
    /* no idle CPU counts as one (the manager's) */
    CHECK(NEAR(ph_exp_lanes_time(four, 4, -5, 16, 0, begin, dur), 20));
    /* more sharing lanes than program CPUs: they queue on a CPU, one
     * after the other */
    double five[5] = {30, 10, 10, 10, 10};
    CHECK(NEAR(ph_exp_lanes_time(five, 5, 1, 2, 0, begin, dur), 20));
    CHECK(NEAR(begin[1], 0) && NEAR(dur[1], 20));
    CHECK(NEAR(begin[2], 0) && NEAR(dur[2], 20));
    CHECK(NEAR(begin[3], 20) && NEAR(dur[3], 20));
    CHECK(NEAR(begin[4], 20) && NEAR(dur[4], 20));
    /* ties go to the smaller lane: lane 1 gets the idle CPU */
    double tie[3] = {0, 25, 25};
    CHECK(NEAR(ph_exp_lanes_time(tie, 3, 1, 8, 0, begin, dur), 25));
    CHECK(NEAR(dur[1], 25) && NEAR(dur[2], 50));
    /* as many CPUs as threads, or more: the same as one CPU a thread */
    CHECK(NEAR(ph_exp_lanes_time(five, 5, 1, 2, 2, begin, dur), 20));
    CHECK(NEAR(ph_exp_lanes_time(five, 5, 1, 2, 64, begin, dur), 20));
    CHECK(NEAR(begin[3], 20) && NEAR(dur[3], 20));
    /* more threads than CPUs: 4 threads on 2 CPUs, two a CPU.  The four
     * sharing lanes go two to a CPU, each with a third of it, and each
     * CPU gives both lanes' work: with one CPU a thread (ncpus 0) every
     * lane had a CPU to itself and the loss looked half as large */
    CHECK(NEAR(ph_exp_lanes_time(five, 5, 1, 4, 0, begin, dur), 10));
    CHECK(NEAR(ph_exp_lanes_time(five, 5, 1, 4, 2, begin, dur), 20));
    CHECK(NEAR(dur[0], 30) && NEAR(begin[0], 0));
    CHECK(NEAR(begin[1], 0) && NEAR(dur[1], 30));
    CHECK(NEAR(begin[2], 0) && NEAR(dur[2], 30));
    CHECK(NEAR(begin[3], 30) && NEAR(dur[3], 30));
    CHECK(NEAR(begin[4], 30) && NEAR(dur[4], 30));
    /* three threads on two CPUs: a lane shares with up to two (a third) */
    double two[2] = {5, 12};
    CHECK(NEAR(ph_exp_lanes_time(two, 2, 1, 3, 2, begin, dur), 5));
    CHECK(NEAR(dur[0], 15) && NEAR(dur[1], 12));
}

/* ---- presets ------------------------------------------------------------ */

static void test_presets(void)
{
    const ph_exp_preset *o = ph_exp_preset_find("origin2000-16");
    const ph_exp_preset *e = ph_exp_preset_find("epyc-2s-8n");
    const ph_exp_preset *c = ph_exp_preset_find("cxl-2tier");
    CHECK(o && e && c);
    CHECK(ph_exp_preset_find("vax") == NULL);
    if (!o || !e || !c)
        return;
    ph_topology *t = ph_exp_preset_topology(o);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ(t->nnodes, 16);
        CHECK_EQ(ph_exp_cpus(t), 32);
        /* 300 + 100 * hops: node 0 to 1 (1 hop), 3 (2), 7 (3), 15 (4) */
        CHECK(NEAR(ph_topo_lat(t, 0, 0), 300));
        CHECK(NEAR(ph_topo_lat(t, 0, 1), 400));
        CHECK(NEAR(ph_topo_lat(t, 0, 3), 500));
        CHECK(NEAR(ph_topo_lat(t, 5, 2), 600));
        CHECK(NEAR(ph_topo_lat(t, 0, 15), 700));
        /* 1.1 ms per 16 KiB page (the Origin's), a quarter per 4 KiB */
        CHECK(NEAR(t->migrate_ns_4k[0 * 16 + 9], 1.1e6 / 4));
        CHECK(NEAR(t->migrate_ns_4k[9 * 16 + 9], 0));
        CHECK(NEAR(t->migrate_ns_call, 0));
        int nodes[32];
        CHECK_EQ(ph_exp_bind_threads(o, t, 16, 0, nodes), 0);
        CHECK(nodes[0] == 0 && nodes[1] == 0 && nodes[15] == 7);
        CHECK_EQ(ph_exp_bind_threads(o, t, 16, 16, nodes), 0);
        CHECK(nodes[0] == 8 && nodes[15] == 15);
        CHECK_EQ(ph_exp_bind_threads(o, t, 33, 0, nodes), -1);
        ph_topo_free(t);
    }
    t = ph_exp_preset_topology(e);
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
        CHECK_EQ(ph_exp_bind_threads(e, t, 16, 0, nodes), 0); /* spread */
        CHECK(nodes[0] == 0 && nodes[1] == 0 && nodes[2] == 1 &&
              nodes[15] == 7);
        ph_topo_free(t);
    }
    t = ph_exp_preset_topology(c);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ(t->nnodes, 2);
        CHECK_EQ(t->nodes[1].ncpus, 0);
        CHECK_EQ(ph_exp_cpus(t), 32);
        CHECK(NEAR(ph_topo_lat(t, 0, 1) / ph_topo_lat(t, 0, 0), 2.2));
        ph_topo_free(t);
    }
    char spec[2048];
    CHECK(ph_exp_preset_spec(o, spec, sizeof spec) != NULL);
    CHECK(strstr(spec, "dist=30:40:40:50") != NULL);
    CHECK(ph_exp_preset_spec(o, spec, 64) == NULL); /* does not fit */
}

/* ---- workloads ---------------------------------------------------------- */

static uint64_t array_phase_total(const ph_exp_app *a, int ph, int ar)
{
    uint64_t s = 0;
    const ph_exp_phase *p = &a->phases[ph];
    for (size_t k = 0; k < p->nacc; k++)
        if (p->acc[k].page >= a->arrays[ar].first &&
            p->acc[k].page < a->arrays[ar].first + a->arrays[ar].npages)
            s += p->acc[k].count;
    return s;
}

static void test_workloads(void)
{
    ph_exp_app a;
    /* BT (bt.c, class A): u, f, rhs of 2560 pages; 62 interior planes
     * over 16 threads: 4 planes each for the first 14, 3 for the last 2 */
    CHECK_EQ(ph_exp_app_build(&a, PH_EXP_BT, 16, 128, 1), 0);
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
    ph_exp_app_free(&a);
    /* SP: the 13-point stencil reads two planes on either side */
    CHECK_EQ(ph_exp_app_build(&a, PH_EXP_SP, 16, 128, 1), 0);
    CHECK_EQ(a.iterations, 200);
    int readers6 = 0;
    for (size_t k = 0; k < a.phases[0].nacc; k++)
        readers6 += a.phases[0].acc[k].page == 6 * 40; /* u plane 6 */
    CHECK_EQ(readers6, 2); /* thread 1 and thread 0 (k = 4 + 2) */
    ph_exp_app_free(&a);
    /* 4x phases: the sweeps do four times the work, compute_rhs does not */
    CHECK_EQ(ph_exp_app_build(&a, PH_EXP_BT, 16, 128, 4), 0);
    CHECK(fabs((double)array_phase_total(&a, 1, 2) - 4 * want) <=
          (double)a.phases[1].nacc);
    uint64_t f_rhs = array_phase_total(&a, 0, 1);
    CHECK(fabs((double)f_rhs - 1.0 * 32 * 2560 * 62 / 64 * 62 / 64) <=
          (double)a.phases[0].nacc);
    ph_exp_app_free(&a);
    /* CG: 53 phases; in each matvec every thread reads all of p */
    CHECK_EQ(ph_exp_app_build(&a, PH_EXP_CG, 8, 64, 1), 0);
    CHECK_EQ(a.nphases, 53);
    CHECK_STR(a.arrays[6].name, "p");
    CHECK_EQ(a.arrays[2].npages, (14000UL * 97 * 8 + 4095) / 4096);
    uint64_t p_reads = array_phase_total(&a, 1, 6);
    CHECK(fabs((double)p_reads - 8.0 * 64 * 14000 * 8 / 4096) <= 8.0 * 28);
    CHECK(a.phases[20].alias && a.phases[20].acc == a.phases[2].acc);
    ph_exp_app_free(&a);
    CHECK_EQ(ph_exp_app_find("cg"), PH_EXP_CG);
    CHECK_EQ(ph_exp_app_find("LU"), -1);
}

/* ---- the IRIX-like engine ------------------------------------------------ */

static void test_irix(void)
{
    ph_exp_irix_params p = {.threshold = 100, .dampening = 2,
                            .freeze_after = 2, .period_ns = 1e6};
    ph_exp_irix_page a = {0, -1, 0, 0}, b = {0, -1, 0, 0};
    uint32_t ca[2] = {0, 0}, cb[2] = {0, 0};
    int target;
    /* page b: remote exceeds local by exactly the threshold: no interrupt,
     * and its counters keep growing */
    cb[0] = 50;
    cb[1] = 150;
    CHECK_EQ(ph_exp_irix_check(&p, cb, 2, 0, &b, &target), PH_IRIX_NONE);
    CHECK_EQ(target, -1);
    CHECK_EQ(cb[1], 150);
    /* page a on node 0: node 1 exceeds by 130: an interrupt, dampened */
    ca[0] = 20;
    ca[1] = 150;
    CHECK_EQ(ph_exp_irix_check(&p, ca, 2, 0, &a, &target),
             PH_IRIX_DAMPENED);
    CHECK_EQ(target, 1);
    CHECK(ca[0] == 0 && ca[1] == 0); /* re-armed */
    /* the second consecutive interrupt toward node 1 migrates it */
    ca[1] = 101;
    CHECK_EQ(ph_exp_irix_check(&p, ca, 2, 0, &a, &target), PH_IRIX_MIGRATE);
    CHECK_EQ(target, 1);
    CHECK_EQ(a.migrations, 1);
    CHECK(!a.frozen);
    /* now on node 1; node 0 wants it back twice: migrates and freezes */
    ca[0] = 300;
    CHECK_EQ(ph_exp_irix_check(&p, ca, 2, 1, &a, &target),
             PH_IRIX_DAMPENED);
    ca[0] = 300;
    CHECK_EQ(ph_exp_irix_check(&p, ca, 2, 1, &a, &target), PH_IRIX_MIGRATE);
    CHECK_EQ(target, 0);
    CHECK(a.frozen);
    /* frozen: interrupts are refused */
    ca[1] = 500;
    CHECK_EQ(ph_exp_irix_check(&p, ca, 2, 0, &a, &target), PH_IRIX_FROZEN);
    CHECK_EQ(ph_exp_irix_check(&p, ca, 2, 0, &a, &target), PH_IRIX_NONE);
    /* the periodic operation melts it and halves the counters */
    ca[0] = 7;
    ca[1] = 9;
    ph_exp_irix_periodic(ca, 2, &a);
    CHECK(!a.frozen && a.migrations == 0);
    CHECK(ca[0] == 3 && ca[1] == 4);
    /* page b: one more access tips it over */
    cb[1] = 151;
    CHECK_EQ(ph_exp_irix_check(&p, cb, 2, 0, &b, &target),
             PH_IRIX_DAMPENED);
    ph_exp_irix_params d;
    ph_exp_irix_defaults(&d);
    CHECK(d.threshold == 1024 && d.dampening == 2 && d.period_ns == 10e6);
}

/* ---- one fast e1 cell ---------------------------------------------------- */

/* A cell as e1 runs them (normal phases, the tunable critical_pages,
 * thread notes, no thread migration). */
static ph_exp_cell cell_of(const ph_exp_preset *p, const ph_topology *t,
                           int app, int nthreads, int iterations,
                           int placement, int engine)
{
    ph_exp_cell c;
    memset(&c, 0, sizeof c);
    c.preset = p;
    c.topo = t;
    c.app = app;
    c.nthreads = nthreads;
    c.iterations = iterations;
    c.placement = placement;
    c.engine = engine;
    c.repeat = 1;
    c.critical_pages = -1;
    c.notes = 1;
    c.migrate_at = -1;
    return c;
}

static int run_cell(const ph_exp_preset *p, const ph_topology *t,
                    int placement, int engine, ph_exp_result *r)
{
    ph_exp_cell c = cell_of(p, t, PH_EXP_BT, 16, 8, placement, engine);
    int rc = ph_exp_run_cell(&c, r);
    if (rc != 0)
        fprintf(stderr, "run: %s\n", ph_error_message());
    return rc;
}

/* The modelled run does not depend on where the process's earlier
 * mappings leave room: CG from first touch on epyc-2s-8n (a few pages
 * move, in one lane, so their arrival order is the order the engine and
 * the mover issue them in, which follows the arrays' order in memory),
 * run once as it is and once with the address space riddled with holes
 * of many sizes.  When the arrays were mapped one by one they landed in
 * those holes in another order, and the times changed. */
static void test_layout_independent(void)
{
    const ph_exp_preset *p = ph_exp_preset_find("epyc-2s-8n");
    ph_topology *t = ph_exp_preset_topology(p);
    CHECK(t != NULL);
    if (!t)
        return;
    ph_exp_cell c = cell_of(p, t, PH_EXP_CG, 16, 4, PH_EXP_FIRST_TOUCH,
                            PH_EXP_ENG_ITERATIVE);
    ph_exp_result plain, holes;
    CHECK_EQ(ph_exp_run_cell(&c, &plain), 0);
    enum { NHOLES = 48 };
    void *m[NHOLES];
    size_t len[NHOLES];
    for (int k = 0; k < NHOLES; k++) {
        len[k] = (size_t)(k % 12 + 1) * 300 * 4096;
        m[k] = mmap(NULL, len[k], PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    for (int k = 0; k < NHOLES; k += 2)
        if (m[k] != MAP_FAILED)
            munmap(m[k], len[k]);
    CHECK_EQ(ph_exp_run_cell(&c, &holes), 0);
    for (int k = 1; k < NHOLES; k += 2)
        if (m[k] != MAP_FAILED)
            munmap(m[k], len[k]);
    CHECK(plain.migrated > 0);
    CHECK_EQ(holes.migrated, plain.migrated);
    CHECK(holes.total_ns == plain.total_ns);
    for (int i = 0; i < 4; i++)
        CHECK(holes.iter_ns[i] == plain.iter_ns[i]);
    ph_exp_result_free(&plain);
    ph_exp_result_free(&holes);
    ph_topo_free(t);
}

/* Pages of the BT-like program (16 threads) whose accesses in one
 * iteration come mostly from a node other than `home`. */
static size_t must_move(const ph_exp_preset *p, const ph_topology *t,
                        int home)
{
    ph_exp_app a;
    int nodes[16];
    if (ph_exp_app_build(&a, PH_EXP_BT, 16, p->line_bytes, 1) != 0 ||
        ph_exp_bind_threads(p, t, 16, 0, nodes) != 0)
        return 0;
    size_t n = (size_t)t->nnodes, moved = 0;
    double *acc = calloc(a.npages * n, sizeof *acc);
    for (int ph = 0; acc && ph < a.nphases; ph++)
        for (size_t k = 0; k < a.phases[ph].nacc; k++) {
            const ph_exp_access *x = &a.phases[ph].acc[k];
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
    ph_exp_app_free(&a);
    return moved;
}

static void test_e1_cell(void)
{
    const ph_exp_preset *p = ph_exp_preset_find("epyc-2s-8n");
    ph_topology *t = ph_exp_preset_topology(p);
    CHECK(t != NULL);
    if (!t)
        return;
    ph_exp_result ft, sn, it, again;
    CHECK_EQ(run_cell(p, t, PH_EXP_FIRST_TOUCH, PH_EXP_ENG_OFF, &ft), 0);
    CHECK_EQ(run_cell(p, t, PH_EXP_SINGLE_NODE, PH_EXP_ENG_OFF, &sn), 0);
    CHECK_EQ(run_cell(p, t, PH_EXP_SINGLE_NODE, PH_EXP_ENG_ITERATIVE, &it),
             0);
    CHECK_EQ(run_cell(p, t, PH_EXP_SINGLE_NODE, PH_EXP_ENG_ITERATIVE,
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
    ph_exp_result_free(&ft);
    ph_exp_result_free(&sn);
    ph_exp_result_free(&it);
    ph_exp_result_free(&again);
    ph_topo_free(t);
}

/* CG on origin2000-16 from a single node, hybrid: the mover's lanes
 * against one lane (move_threads=1).  At 32 threads no CPU is idle, so
 * the lanes take work from the program's threads; at 16 they do not. */
static int run_cg(int nthreads, const char *move_threads, ph_exp_result *r)
{
    const ph_exp_preset *p = ph_exp_preset_find("origin2000-16");
    ph_topology *t = ph_exp_preset_topology(p);
    if (!t)
        return -1;
    /* 15 iterations: class A's, as e1 runs it */
    ph_exp_cell c = cell_of(p, t, PH_EXP_CG, nthreads, 15, PH_EXP_SINGLE_NODE,
                            PH_EXP_ENG_HYBRID);
    ph_options_init();
    CHECK_EQ(ph_opt_set(PH_OPT_MOVE_THREADS, move_threads, PH_SRC_API), 0);
    int rc = ph_exp_run_cell(&c, r);
    if (rc != 0)
        fprintf(stderr, "run: %s\n", ph_error_message());
    CHECK_EQ(ph_opt_set(PH_OPT_MOVE_THREADS, "0", PH_SRC_API), 0);
    ph_topo_free(t);
    return rc;
}

static void test_lanes_cell(void)
{
    ph_exp_result one, lanes, sixteen;
    CHECK_EQ(run_cg(32, "1", &one), 0);
    CHECK_EQ(run_cg(32, "0", &lanes), 0);
    CHECK_EQ(run_cg(16, "0", &sixteen), 0);
    printf("   CG 32 threads: one lane %.3f s (moves done in %.3f s), %d lanes %.3f s "
           "(%.3f s, %.1f ms taken from the program)\n",
           one.total_ns / 1e9, one.manager_ns / 1e9, lanes.lanes, lanes.total_ns / 1e9,
           lanes.manager_ns / 1e9, lanes.lanes_loss_ns / 1e6);
    CHECK_EQ(one.lanes, 1);
    CHECK(one.migrated > 3000 && lanes.migrated > 3000);
    CHECK(NEAR(one.manager_ns, one.migrate_ns));
    CHECK(one.lanes_loss_ns == 0.0);
    /* single-node: every page on one node, 15 target nodes; no CPU idle,
     * so one lane a CPU (32), the nodes split, and the work any one
     * program CPU gives is close to its even share (one lane per target
     * node gave 15 lanes and about twice that) */
    CHECK_EQ(lanes.lanes, 32);
    CHECK(lanes.lanes_loss_ns > 0);
    CHECK(lanes.lanes_loss_ns < 1.1 * lanes.migrate_ns / 32);
    CHECK(lanes.critical_ns >= lanes.lanes_loss_ns);
    /* work is conserved; the time until the pages are home is not */
    CHECK(lanes.migrate_ns > 0.95 * one.migrate_ns && lanes.migrate_ns < 1.05 * one.migrate_ns);
    CHECK(lanes.manager_ns < one.manager_ns / 4);
    CHECK(lanes.total_ns < one.total_ns);
    /* 16 threads on 32 CPUs: one lane a CPU left idle, none taken from
     * the program (the engine told the mover of its 16 threads) */
    CHECK_EQ(sixteen.lanes, 16);
    CHECK(sixteen.lanes_loss_ns == 0.0);
    ph_exp_result_free(&one);
    ph_exp_result_free(&lanes);
    ph_exp_result_free(&sixteen);
}

/* The run-length calibration: the formula at its edges, and an Origin
 * cell whose first-touch iteration lasts the real one (450 ms for BT at
 * 16 threads) and whose single-node one 1.79 times that. */
static void test_calibrate(void)
{
    double scale, cpm;
    /* memory 2x slower single-node, real slowdown 1.5: half the real
     * iteration is memory: scale = 0.5 * 100 / 10, compute 1 ns a ns */
    CHECK_EQ(ph_exp_calibrate(100, 1.5, 10, 20, &scale, &cpm), 0);
    CHECK(NEAR(scale, 5));
    CHECK(NEAR(cpm, 1));
    /* a real slowdown above the model's: all memory (f kept at 1) */
    CHECK_EQ(ph_exp_calibrate(100, 3, 10, 20, &scale, &cpm), 0);
    CHECK(NEAR(scale, 10));
    CHECK(NEAR(cpm, 0));
    /* a tiny one: f kept at 0.05 */
    CHECK_EQ(ph_exp_calibrate(100, 1.001, 10, 20, &scale, &cpm), 0);
    CHECK(NEAR(scale, 0.5));
    CHECK(NEAR(cpm, 19));
    /* not calibrated: unknown machine, no slowdown, nothing slower */
    CHECK_EQ(ph_exp_calibrate(0, 1.79, 10, 20, &scale, &cpm), -1);
    CHECK(scale == 1 && cpm == 0);
    CHECK_EQ(ph_exp_calibrate(100, 1, 10, 20, &scale, &cpm), -1);
    CHECK_EQ(ph_exp_calibrate(100, 1.79, 10, 10, &scale, &cpm), -1);
    CHECK_EQ(ph_exp_calibrate(100, 1.79, 0, 10, &scale, &cpm), -1);
    CHECK_EQ(ph_exp_calibrate(NAN, 1.79, 10, 20, &scale, &cpm), -1);

    const ph_exp_preset *p = ph_exp_preset_find("origin2000-16");
    ph_topology *t = ph_exp_preset_topology(p);
    CHECK(t != NULL);
    if (!t)
        return;
    ph_exp_result ft, sn;
    CHECK_EQ(run_cell(p, t, PH_EXP_FIRST_TOUCH, PH_EXP_ENG_OFF, &ft), 0);
    CHECK_EQ(run_cell(p, t, PH_EXP_SINGLE_NODE, PH_EXP_ENG_OFF, &sn), 0);
    CHECK(ft.mem_scale > 1 && ft.compute_per_iter_ns > 0);
    CHECK(fabs(ft.total_ns / ft.iterations - 450e6) <= 0.02 * 450e6);
    CHECK(fabs(sn.total_ns / ft.total_ns - 1.79) <= 0.02);
    ph_exp_result_free(&ft);
    ph_exp_result_free(&sn);
    ph_topo_free(t);
    /* other presets are not calibrated */
    p = ph_exp_preset_find("epyc-2s-8n");
    t = ph_exp_preset_topology(p);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK_EQ(run_cell(p, t, PH_EXP_FIRST_TOUCH, PH_EXP_ENG_OFF, &ft), 0);
    CHECK(ft.mem_scale == 1 && ft.compute_per_iter_ns == 0);
    ph_exp_result_free(&ft);
    ph_topo_free(t);
}

static void test_usage_errors(void)
{
    ph_exp_opts o = {NULL, 0, 0};
    CHECK_EQ(ph_exp_check("e9", &o), -1);
    CHECK_MSG("no experiment 'e9'");
    o.machine = "vax";
    CHECK_EQ(ph_exp_check("e1", &o), -1);
    CHECK_MSG("no machine preset 'vax'");
    o.machine = NULL;
    o.threads = 33;
    CHECK_EQ(ph_exp_check("e1", &o), -1);
    CHECK_MSG("32 CPUs");
    o.threads = 17;
    CHECK_EQ(ph_exp_check("e4", &o), -1); /* two programs */
    o.threads = 16;
    CHECK_EQ(ph_exp_check("e4", &o), 0);
    o.machine = "cxl-2tier";
    o.threads = 64;
    CHECK_EQ(ph_exp_check("e1", &o), -1);
}

/* ---- the TLB term (model.h) ---------------------------------------------- */

static void test_tlb_formula(void)
{
    /* m(W, E) = max(0, 1 - E / W) */
    CHECK(NEAR(ph_exp_tlb_miss_share(4096, 2048), 0.5));
    CHECK(NEAR(ph_exp_tlb_miss_share(3, 2), 1.0 / 3));
    CHECK(NEAR(ph_exp_tlb_miss_share(8192, 2048), 0.75));
    CHECK(ph_exp_tlb_miss_share(2048, 2048) == 0); /* fits exactly */
    CHECK(ph_exp_tlb_miss_share(100, 2048) == 0);  /* fits */
    CHECK(ph_exp_tlb_miss_share(0, 64) == 0);      /* nothing touched */
    CHECK(ph_exp_tlb_miss_share(8, 0) == 1);       /* no entries */

    /* 3 units (1536 pages): units 0 and 2 are 2 MiB pages, unit 1 is
     * 4 KiB pages.  E4 = 10, E2 = 1, 30 ns a walk.
     *   thread 0: pages 0-9 and 1024-1027 (huge: W2 = 2 units, each entry
     *             sw_2m 2, sw_4k 7 that must not count) and 512-531
     *             (small: W4 = 20, sw_4k 3 each);
     *   thread 1: page 5 (huge, W2 = 1) and 600-603 (small, W4 = 4);
     *   thread 5: not a thread of the phase (ignored). */
    ph_exp_access acc[64];
    ph_exp_switches sw[64];
    size_t n = 0;
    for (uint32_t p = 0; p < 10; p++) {
        acc[n] = (ph_exp_access){p, 0, 64};
        sw[n++] = (ph_exp_switches){7, 2};
        if (p == 5) {
            acc[n] = (ph_exp_access){p, 1, 64};
            sw[n++] = (ph_exp_switches){7, 2};
            acc[n] = (ph_exp_access){p, 5, 64};
            sw[n++] = (ph_exp_switches){1000, 1000};
        }
    }
    for (uint32_t p = 512; p < 532; p++) {
        acc[n] = (ph_exp_access){p, 0, 64};
        sw[n++] = (ph_exp_switches){3, 1};
    }
    for (uint32_t p = 600; p < 604; p++) {
        acc[n] = (ph_exp_access){p, 1, 64};
        sw[n++] = (ph_exp_switches){3, 1};
    }
    for (uint32_t p = 1024; p < 1028; p++) {
        acc[n] = (ph_exp_access){p, 0, 64};
        sw[n++] = (ph_exp_switches){7, 2};
    }
    static uint8_t huge[1536];
    memset(huge, 0, sizeof huge);
    memset(huge, 1, 512);
    memset(huge + 1024, 1, 512);
    ph_exp_tlb tlb = {10, 1, 30};
    ph_exp_tlb_thread th[2];
    double ns[2] = {1000, 0};
    double all = ph_exp_phase_tlb(&tlb, acc, sw, n, 2, huge, th, ns);
    CHECK(NEAR(th[0].pages_4k, 20) && NEAR(th[0].units_2m, 2));
    CHECK(NEAR(th[0].switch_4k, 60) && NEAR(th[0].switch_2m, 28));
    /* 60 x (1 - 10/20) + 28 x (1 - 1/2) = 30 + 14 */
    CHECK(NEAR(th[0].misses, 44));
    CHECK(NEAR(ns[0], 1000 + 44 * 30));
    CHECK(NEAR(th[1].pages_4k, 4) && NEAR(th[1].units_2m, 1));
    CHECK(th[1].misses == 0 && ns[1] == 0); /* both fit */
    CHECK(NEAR(all, 44));
    /* split everything: thread 0 has 34 pages of 4 KiB and 158 switches
     * (20 x 3 + 14 x 7), thread 1 five pages (they fit) */
    memset(huge, 0, sizeof huge);
    all = ph_exp_phase_tlb(&tlb, acc, sw, n, 2, huge, th, NULL);
    CHECK(NEAR(th[0].pages_4k, 34) && th[0].units_2m == 0);
    CHECK(NEAR(th[0].switch_4k, 158));
    CHECK(NEAR(th[0].misses, 158 * (1 - 10.0 / 34)));
    CHECK(NEAR(th[1].pages_4k, 5) && th[1].misses == 0);
    CHECK(NEAR(all, 158 * (1 - 10.0 / 34)));
    /* all huge: each thread within E2?  thread 0 touches units 0, 1, 2 */
    memset(huge, 1, sizeof huge);
    ph_exp_phase_tlb(&tlb, acc, sw, n, 2, huge, th, NULL);
    CHECK(NEAR(th[0].units_2m, 3) && th[0].pages_4k == 0);
    CHECK(NEAR(th[0].misses, (14 * 2 + 20 * 1) * (1 - 1.0 / 3)));
    CHECK(NEAR(th[1].units_2m, 2)); /* units 0 and 1 */
    CHECK(NEAR(th[1].misses, (2 + 4 * 1) * 0.5));
}

/* e6's programs: owners, counts and switch counts as workload.c says. */
static void test_e6_workloads(void)
{
    CHECK_EQ(PH_EXP_E6_THREAD_BYTES, (size_t)16 << 20);
    ph_exp_app a;
    CHECK_EQ(ph_exp_app_build(&a, PH_EXP_PRIVATE, 4, 64, 1), 0);
    CHECK_EQ(a.npages, 4 * 4096);
    CHECK_EQ(a.nphases, 2);
    CHECK_EQ(a.iterations, 20);
    CHECK_EQ(ph_exp_app_find("Finely Shared"), PH_EXP_SHARED);
    CHECK_STR(ph_exp_app_name(PH_EXP_PRIVATE), "private blocks");
    if (a.nphases == 2) {
        const ph_exp_phase *up = &a.phases[0], *ga = &a.phases[1];
        CHECK(up->sw && ga->sw && up->nacc == a.npages);
        /* page 5000 belongs to thread 1 (pages 4096-8191) */
        CHECK_EQ(up->acc[5000].thread, 1u);
        CHECK_EQ(up->acc[5000].count, 64u);
        CHECK(up->sw[5000].sw_4k == 1 && up->sw[5000].sw_2m == 0);
        CHECK(up->sw[4096 + 512].sw_2m == 1); /* first page of a unit */
        /* gather: all but 1/4096 of 64 reads switch page; the thread has
         * 512 of its 4096 pages in each unit: all but 1/8 switch unit */
        CHECK(NEAR(ga->sw[5000].sw_4k, 64 * (1 - 1.0 / 4096)));
        CHECK(NEAR(ga->sw[5000].sw_2m, 64 * (1 - 512.0 / 4096)));
    }
    ph_exp_app_free(&a);
    CHECK_EQ(ph_exp_app_build(&a, PH_EXP_SHARED, 4, 64, 1), 0);
    if (a.nphases == 2) {
        const ph_exp_phase *up = &a.phases[0], *ga = &a.phases[1];
        /* unit 0: 4 KiB chunks, owners 0 1 2 3 0 ...; unit 1: 8 KiB
         * chunks, the chunk counter goes on from 512: owners 0 0 1 1 ... */
        CHECK(up->acc[0].thread == 0 && up->acc[1].thread == 1 &&
              up->acc[3].thread == 3 && up->acc[4].thread == 0);
        CHECK(up->acc[512].thread == 0 && up->acc[513].thread == 0 &&
              up->acc[514].thread == 1 && up->acc[519].thread == 3);
        /* unit 4: 64 KiB chunks (16 pages) */
        CHECK(up->acc[4 * 512 + 15].thread == up->acc[4 * 512].thread);
        CHECK(up->acc[4 * 512 + 16].thread != up->acc[4 * 512].thread);
        /* every unit holds every thread's data, 128 pages each */
        size_t per[4] = {0, 0, 0, 0}, firsts = 0;
        for (size_t p = 512 * 7; p < 512 * 8; p++) {
            per[up->acc[p].thread]++;
            firsts += up->sw[p].sw_2m > 0;
        }
        CHECK(per[0] == 128 && per[1] == 128 && per[2] == 128 &&
              per[3] == 128);
        CHECK_EQ(firsts, 4); /* one unit switch per thread and unit */
        CHECK(NEAR(ga->sw[600].sw_2m, 64 * (1 - 128.0 / 4096)));
    }
    ph_exp_app_free(&a);
}

/* One e6-style cell: the private-blocks program with 4 threads. */
static int run_e6_cell(const ph_exp_preset *p, const ph_topology *t,
                       int engine, int huge, int tlb, ph_exp_result *r)
{
    ph_exp_cell c = cell_of(p, t, PH_EXP_PRIVATE, 4, 2, PH_EXP_FIRST_TOUCH,
                            engine);
    c.huge = huge;
    c.tlb = tlb;
    int rc = ph_exp_run_cell(&c, r);
    if (rc != 0)
        fprintf(stderr, "run: %s\n", ph_error_message());
    return rc;
}

/* The TLB term in a run: each thread's walks join its phase time. */
static void test_tlb_run(void)
{
    const ph_exp_preset *p = ph_exp_preset_find("epyc-2s-8n");
    ph_topology *t = ph_exp_preset_topology(p);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(p->tlb_entries_4k == 2048 && p->tlb_entries_2m == 2048 &&
          p->tlb_walk_ns == 35);
    ph_exp_result off, on, big;
    CHECK_EQ(run_e6_cell(p, t, PH_EXP_ENG_OFF, 0, 0, &off), 0);
    CHECK_EQ(run_e6_cell(p, t, PH_EXP_ENG_OFF, 0, 1, &on), 0);
    CHECK_EQ(run_e6_cell(p, t, PH_EXP_ENG_OFF, 1, 1, &big), 0);
    /* per thread and iteration, W4 = 4096 pages > 2048 entries: half of
     * the switches miss.  update: 4096 switches; gather: 4096 x 64 x
     * (1 - 1/4096) = 262080.  (4096 + 262080) / 2 = 133088 misses */
    double per = (4096.0 + 262080.0) / 2;
    CHECK(off.tlb_misses == 0);
    CHECK(NEAR(on.tlb_misses, per * 4 * 2));
    CHECK(NEAR(on.accesses, 4 * 2 * 2 * 4096.0 * 64));
    /* the threads are alike: every phase gets one thread's walks longer */
    CHECK(NEAR(on.total_ns - off.total_ns, per * 2 * 35));
    CHECK(NEAR(on.iter_tlb_misses[1], per * 4));
    /* 2 MiB pages: 8 units a thread, nothing misses */
    CHECK(big.tlb_misses == 0);
    CHECK_EQ(big.huge_units_end, 4 * 8);
    CHECK(NEAR(big.total_ns, off.total_ns));
    CHECK(on.remote_share == 0); /* first touch: every page at home */
    ph_exp_result_free(&off);
    ph_exp_result_free(&on);
    ph_exp_result_free(&big);
    ph_topo_free(t);
}

/* e6 (short): what must hold whatever the exact numbers. */
static void test_e6(void)
{
    ph_exp_opts o = {NULL, 0, 6};
    ph_exp_table x;
    CHECK_EQ(ph_exp_run("e6", &o, &x), 0);
    CHECK_EQ(x.nrows, 6);
    if (x.nrows != 6)
        return;
    const ph_exp_row *pk = &x.rows[0], *pn = &x.rows[1], *pm = &x.rows[2];
    const ph_exp_row *sk = &x.rows[3], *sn = &x.rows[4], *sm = &x.rows[5];
    CHECK_STR(pk->group, "private blocks");
    CHECK_STR(sm->group, "finely shared");
    CHECK_STR(pk->label, "4K");
    CHECK_STR(pn->label, "2M-nosplit");
    CHECK_STR(pm->label, "mixed");
    CHECK_STR(pk->cell.preset->name, "epyc-2s-8n");
    /* the policies as asked: 4 KiB, 2 MiB never split, 2 MiB with the
     * tunable; single-node, iterative, TLB term on */
    CHECK(!pk->cell.huge && pn->cell.huge && pn->cell.no_split &&
          pm->cell.huge && !pm->cell.no_split);
    CHECK(pk->cell.placement == PH_EXP_SINGLE_NODE &&
          sm->cell.engine == PH_EXP_ENG_ITERATIVE && sk->cell.tlb);
    /* private blocks: 2 MiB pages beat 4 KiB (TLB reach) */
    CHECK(pn->res.total_ns < pk->res.total_ns);
    CHECK(pk->res.tlb_misses > 0 && pn->res.tlb_misses == 0);
    /* finely shared: 4 KiB beats 2 MiB without splitting, which leaves
     * the data remote (every unit is every node's) */
    CHECK(sk->res.total_ns < sn->res.total_ns);
    int I = sk->res.iterations;
    CHECK(sn->res.remote_share > 0.8); /* 7 of 8 nodes' accesses, always */
    CHECK(sk->res.remote_share < sn->res.remote_share / 2);
    CHECK(sk->res.iter_remote[I - 1] == 0 && sn->res.iter_remote[I - 1] > 0);
    CHECK_EQ(sn->res.huge_split, 0);
    /* mixed splits the shared units (all of them) and not the private
     * ones, which move whole and stay 2 MiB pages */
    size_t units = x.rows[0].res.hot_pages / 512;
    CHECK_EQ(sm->res.huge_split, units);
    CHECK_EQ(sm->res.huge_units_end, 0);
    CHECK(sm->res.moved_4k > 0);
    CHECK_EQ(pm->res.huge_split, 0);
    CHECK_EQ(pm->res.huge_units_end, units);
    CHECK(pm->res.huge_migrated > 0 && pm->res.moved_4k == 0);
    /* normalised to the best of the three */
    for (int w = 0; w < 2; w++) {
        double lo = 1e300;
        for (int k = 0; k < 3; k++)
            lo = x.rows[3 * w + k].norm_total < lo
                     ? x.rows[3 * w + k].norm_total : lo;
        CHECK(NEAR(lo, 1.0));
    }
    /* the target line says what the rows say */
    CHECK_EQ(x.ntargets, 1);
    double gp = pm->res.total_ns / (pk->res.total_ns < pn->res.total_ns
                                        ? pk->res.total_ns : pn->res.total_ns);
    double gs = sm->res.total_ns / (sk->res.total_ns < sn->res.total_ns
                                        ? sk->res.total_ns : sn->res.total_ns);
    if (x.ntargets == 1) {
        CHECK_EQ(x.targets[0].met, gp <= 1.02 && gs <= 1.02);
        CHECK(strstr(x.targets[0].what, "mixed within 2%") != NULL);
    }
    ph_exp_table_free(&x);
    /* e6 is an experiment; a machine that cannot run 65 threads refuses */
    CHECK(ph_exp_is_experiment("e6"));
    ph_exp_opts bad = {NULL, 65, 0};
    CHECK_EQ(ph_exp_check("e6", &bad), -1);
    CHECK_MSG("64 CPUs");
}

int main(void)
{
    test_model_tiny();
    test_manager();
    test_lanes_time();
    test_presets();
    test_workloads();
    test_irix();
    test_e1_cell();
    test_layout_independent();
    test_lanes_cell();
    test_calibrate();
    test_usage_errors();
    test_tlb_formula();
    test_e6_workloads();
    test_tlb_run();
    test_e6();
    return check_summary("test_experiment");
}
