/*
 * test_amortised.c -- the amortised criterion (src/criteria/amortised.c)
 * on hand-computed examples and at its edges: the first interval (no
 * evidence), unknown remaining run, a huge migration cost, zero counts,
 * NaN, and the remaining-run estimate, the evidence roll, decisive
 * evidence and the phase rule.
 *
 * The 4-node model of test_criteria.c: nodes {0,1} and {2,3} share a
 * socket; 100 ns local, 120 ns same socket, 320 ns other socket; 50 ns per
 * competing node; one migration costs mig4[] (set per test).
 */
#include "check.h"
#include "criteria/amortised.h"

#include <math.h>
#include <stdint.h>

#define CHECK_NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) <= 1e-9 * (1.0 + fabs((double)(b))))

static double lat4[16];
static double mig4[16];

static void init_model(ph_latency_model *m, double ml)
{
    for (int i = 0; i < 4; i++)
        for (int h = 0; h < 4; h++) {
            lat4[i * 4 + h] = i == h ? 100.0 : (i / 2 == h / 2 ? 120.0 : 320.0);
            mig4[h * 4 + i] = i == h ? 0.0 : ml;
        }
    m->nnodes = 4;
    m->lat_ns = lat4;
    m->contention_ns = 50.0;
    m->migrate_ns = mig4;
}

static void test_remaining(void)
{
    /* unknown total: as long again as seen, at least one interval */
    CHECK_NEAR(ph_crit_remaining(0, 0, 0), 1);
    CHECK_NEAR(ph_crit_remaining(1, 1, 0), 1);
    CHECK_NEAR(ph_crit_remaining(5, 3, 0), 5);
    CHECK_NEAR(ph_crit_remaining(0.25, 0, 0), 1);
    /* known total, iterations as intervals */
    CHECK_NEAR(ph_crit_remaining(1, 1, 180), 179);
    CHECK_NEAR(ph_crit_remaining(10, 10, 180), 170);
    /* intervals that are not iterations: in proportion */
    CHECK_NEAR(ph_crit_remaining(20, 10, 180), 20.0 * 170 / 10);
    /* inside the first iteration: every later one at least as long */
    CHECK_NEAR(ph_crit_remaining(1, 0, 15), 14);
    CHECK_NEAR(ph_crit_remaining(3, 0, 15), 42);
    CHECK_NEAR(ph_crit_remaining(3, 0, 1), 0);
    /* at or past the total: nothing left */
    CHECK_NEAR(ph_crit_remaining(4, 10, 10), 0);
    CHECK_NEAR(ph_crit_remaining(4, 12, 10), 0);
    /* NaN: unknown, one interval */
    CHECK_NEAR(ph_crit_remaining(NAN, NAN, NAN), 1);
    CHECK_NEAR(ph_crit_remaining(2, NAN, 10), 2 * 9);
    CHECK(ph_crit_remaining(1, 0, -5) == 1);
}

static void test_saving_by_hand(void)
{
    ph_latency_model m;
    init_model(&m, 0);
    /* home 0, node 2 reads 1000: c(0) = 1, so at home each access costs
     * 320 + 50; on node 2 it is local (100): B = 1000 x 270 */
    double r1[4] = {0, 0, 1000, 0};
    CHECK_NEAR(ph_crit_saving_ns(&m, r1, 0, 2, 1.0), 270000);
    CHECK_NEAR(ph_crit_saving_ns(&m, r1, 0, 0, 1.0), 0);
    /* with the home's own 500: at home 500 x 100 + 1000 x 370 = 420000;
     * on 2 (c(2) = 0): 500 x 320 + 1000 x 100 = 260000 */
    double r2[4] = {500, 0, 1000, 0};
    CHECK_NEAR(ph_crit_saving_ns(&m, r2, 0, 2, 1.0), 160000);
    /* factor 2 counts the home's loss twice: 270000 - 2 x 500 x 220 */
    CHECK_NEAR(ph_crit_saving_ns(&m, r2, 0, 2, 2.0), 50000);
    /* two readers: c(0) = 2 (+100 ns); c(2) = 0, c(1) = 1 */
    double r3[4] = {0, 300, 1000, 0};
    CHECK_NEAR(ph_crit_saving_ns(&m, r3, 0, 2, 1.0),
               300 * 220 + 1000 * 420 - (300 * 320 + 1000 * 100));
    CHECK_NEAR(ph_crit_saving_ns(&m, r3, 0, 1, 1.0),
               300 * 220 + 1000 * 420 - (300 * 100 + 1000 * 370));
    /* invalid arguments: NaN */
    CHECK(isnan(ph_crit_saving_ns(&m, r1, -1, 2, 1.0)));
    CHECK(isnan(ph_crit_saving_ns(&m, r1, 0, 4, 1.0)));
    CHECK(isnan(ph_crit_saving_ns(NULL, r1, 0, 2, 1.0)));
}

static void test_amortised(void)
{
    ph_latency_model m;
    init_model(&m, 1e6); /* 1 ms a move */
    double v = -1;
    uint32_t cur[4] = {0, 0, 1000, 0};
    /* first interval, no evidence; B = 270 us an interval: one interval
     * does not pay a 1 ms move (UPMlib's situation on the Origin)... */
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, 1.0, &v), -1);
    CHECK(v == 0);
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, 3.7, &v), -1);
    /* ...four do: 4 x 270 us - 1 ms */
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, 4.0, &v), 2);
    CHECK_NEAR(v, 4 * 270000.0 - 1e6);
    /* unknown remaining run on the first interval: one interval */
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0,
                               ph_crit_remaining(1, 1, 0), &v), -1);
    /* a count the program gave: 180 iterations, one seen */
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0,
                               ph_crit_remaining(1, 1, 180), &v), 2);
    /* nothing left of the run: no move is worth anything */
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, 0.0, &v), -1);
    /* a huge (or infinite, or NaN) migration cost: never */
    init_model(&m, 1e300);
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, 1e6, &v), -1);
    init_model(&m, INFINITY);
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, 1e6, &v), -1);
    init_model(&m, NAN);
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, 1e6, &v), -1);
    /* no cost at all: any saving moves */
    init_model(&m, 0);
    m.migrate_ns = NULL;
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, 1.0, &v), 2);
    init_model(&m, 1e6);
    /* zero counts and no evidence: nothing */
    uint32_t zero[4] = {0, 0, 0, 0};
    CHECK_EQ(ph_crit_amortised(&m, zero, NULL, 0, 1.0, 1e6, &v), -1);
    CHECK_EQ(ph_crit_amortised(&m, zero, zero, 0, 1.0, 1e6, &v), -1);
    /* only the home uses it: nothing */
    uint32_t local[4] = {1000, 0, 0, 0};
    CHECK_EQ(ph_crit_amortised(&m, local, NULL, 0, 1.0, 1e6, &v), -1);
    /* NaN remaining or a NaN latency: nothing */
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, NAN, &v), -1);
    lat4[2 * 4 + 0] = NAN;
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0, 1e6, &v), -1);
    init_model(&m, 1e6);
    /* invalid home or model: nothing */
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, -1, 1.0, 1e6, &v), -1);
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 4, 1.0, 1e6, &v), -1);
    CHECK_EQ(ph_crit_amortised(NULL, cur, NULL, 0, 1.0, 1e6, &v), -1);
    CHECK_EQ(ph_crit_amortised(&m, NULL, NULL, 0, 1.0, 1e6, &v), -1);
    /* two candidates: the larger value wins (node 2), with R = 10 */
    uint32_t two[4] = {0, 300, 1000, 0};
    CHECK_EQ(ph_crit_amortised(&m, two, NULL, 0, 1.0, 10.0, &v), 2);
    CHECK_NEAR(v, 10.0 * (300 * 220 + 1000 * 420 - (300 * 320 + 1000 * 100)) - 1e6);
    /* a stricter factor: the home's own accesses weigh more */
    uint32_t mixed[4] = {500, 0, 1000, 0};
    CHECK_EQ(ph_crit_amortised(&m, mixed, NULL, 0, 1.0, 10.0, &v), 2); /* 1.6 ms - 1 ms */
    CHECK_EQ(ph_crit_amortised(&m, mixed, NULL, 0, 2.0, 10.0, &v), -1); /* 0.5 ms - 1 ms */
    /* evidence: the past says node 2 reads 1000 an interval, this
     * interval only 200 -> rate 600; B = 600 x 270 = 162 us */
    uint32_t now[4] = {0, 0, 200, 0}, past[4] = {0, 0, 1000, 0};
    CHECK_EQ(ph_crit_amortised(&m, now, past, 0, 1.0, 7.0, &v), 2);
    CHECK_NEAR(v, 7 * 162000.0 - 1e6);
    CHECK_EQ(ph_crit_amortised(&m, now, NULL, 0, 1.0, 7.0, &v), -1); /* 378 us */
    /* old phase: the past says node 3, this interval node 2: the rate is
     * split, and node 2 wins only as the larger */
    uint32_t p3[4] = {0, 0, 0, 1000};
    CHECK_EQ(ph_crit_amortised(&m, cur, p3, 0, 1.0, 100.0, &v), 2);
}

static void test_evidence_roll(void)
{
    uint32_t avg[4] = {0, 0, 0, 0};
    uint32_t c1[4] = {8, 0, 0, 0}, zero[4] = {0, 0, 0, 0};
    ph_crit_evidence_roll(avg, c1, 4); /* no past: the interval itself */
    CHECK(avg[0] == 8 && avg[1] == 0);
    ph_crit_evidence_roll(avg, zero, 4); /* halves */
    CHECK_EQ(avg[0], 4);
    ph_crit_evidence_roll(avg, zero, 4);
    ph_crit_evidence_roll(avg, zero, 4);
    CHECK_EQ(avg[0], 1);
    ph_crit_evidence_roll(avg, zero, 4); /* fades out */
    CHECK_EQ(avg[0], 0);
    uint32_t c2[4] = {0, 6, 0, 0};
    ph_crit_evidence_roll(avg, c2, 4); /* a fresh start */
    CHECK(avg[0] == 0 && avg[1] == 6);
    /* a steady page keeps its rate; no overflow at the top */
    uint32_t big[4] = {UINT32_MAX, 3, 0, 0};
    uint32_t a2[4] = {UINT32_MAX, 3, 0, 0};
    ph_crit_evidence_roll(a2, big, 4);
    CHECK(a2[0] == UINT32_MAX && a2[1] == 3);
    /* the rate: (avg + cur) / 2, or cur without a past */
    double r[4];
    uint32_t cur[4] = {10, 0, 2, 0}, past[4] = {0, 0, 6, 0};
    ph_crit_rate(cur, past, 4, r);
    CHECK_NEAR(r[0], 5);
    CHECK_NEAR(r[2], 4);
    ph_crit_rate(cur, NULL, 4, r);
    CHECK_NEAR(r[0], 10);
    ph_crit_rate(cur, zero, 4, r);
    CHECK_NEAR(r[2], 2);
}

static void test_decisive(void)
{
    uint32_t a[4] = {0, 0, 128, 0};
    CHECK_EQ(ph_crit_decisive(a, 4, 0, 64, 2, 0.9), 2);
    CHECK_EQ(ph_crit_decisive(a, 4, 0, 64, 3, 0.9), -1); /* 2 samples only */
    uint32_t one[4] = {0, 0, 64, 0};
    CHECK_EQ(ph_crit_decisive(one, 4, 0, 64, 2, 0.9), -1);
    uint32_t near[4] = {10, 0, 128, 0}; /* 92.8% */
    CHECK_EQ(ph_crit_decisive(near, 4, 0, 64, 2, 0.9), 2);
    uint32_t split[4] = {20, 0, 128, 0}; /* 86.5% */
    CHECK_EQ(ph_crit_decisive(split, 4, 0, 64, 2, 0.9), -1);
    CHECK_EQ(ph_crit_decisive(a, 4, 2, 64, 2, 0.9), -1);  /* at home */
    CHECK_EQ(ph_crit_decisive(a, 4, -1, 64, 2, 0.9), 2);  /* home unknown */
    uint32_t zero[4] = {0, 0, 0, 0};
    CHECK_EQ(ph_crit_decisive(zero, 4, 0, 1, 0, 0.0), -1);
    CHECK_EQ(ph_crit_decisive(a, 4, 0, 0, 2, 0.9), 2); /* unit 0 counts as 1 */
    CHECK_EQ(ph_crit_decisive(NULL, 4, 0, 1, 1, 0.5), -1);
    CHECK_EQ(ph_crit_decisive(a, 4, 0, 64, 2, NAN), -1);
}

static void test_phase(void)
{
    CHECK_NEAR(ph_crit_phase_remaining(16), 1.0 / 32);
    CHECK_NEAR(ph_crit_phase_remaining(0), 0.5);
    CHECK_NEAR(ph_crit_phase_remaining(1), 0.5);
    /* a phase occurrence that saves 270 us pays a 1 ms round trip only
     * when no thread waits: 270 > 2 x 1000 x T never holds for 1 ms */
    ph_latency_model m;
    init_model(&m, 100000); /* 100 us */
    uint32_t cur[4] = {0, 0, 1000, 0};
    double v;
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0,
                               ph_crit_phase_remaining(1), &v), 2); /* 270 > 200 */
    CHECK_EQ(ph_crit_amortised(&m, cur, NULL, 0, 1.0,
                               ph_crit_phase_remaining(2), &v), -1); /* 270 < 400 */
}

static void test_batch(void)
{
    /* 40 pages worth 10 us each against one 20 us call: worth it */
    CHECK(ph_crit_batch_worth(400e3, 40, 512, 20e3));
    /* worth 15 us in all: not */
    CHECK(!ph_crit_batch_worth(15e3, 40, 512, 20e3));
    /* 1025 pages: three calls */
    CHECK(!ph_crit_batch_worth(59e3, 1025, 512, 20e3));
    CHECK(ph_crit_batch_worth(61e3, 1025, 512, 20e3));
    /* no pages, NaN, batch 0 (counts as 1 a call) */
    CHECK(!ph_crit_batch_worth(1e9, 0, 512, 20e3));
    CHECK(!ph_crit_batch_worth(NAN, 4, 512, 20e3));
    CHECK(!ph_crit_batch_worth(79e3, 4, 0, 20e3));
    CHECK(ph_crit_batch_worth(81e3, 4, 0, 20e3));
    CHECK(ph_crit_batch_worth(1, 4, 512, 0)); /* free calls */
}

/* ph_crit_move_order: water-filling over target nodes, each node's moves
 * in bit-reversed order of their place. */
static void test_move_order(void)
{
    size_t order[8], scratch[8];
    /* node 1 saves 3x what node 0 does a move: it is dealt moves until
     * the saving it still has to come falls below node 0's, then the
     * larger remainder goes first (a tie: node 0); each node's places
     * 0 2 1 3 (bit-reversed) */
    double sv[8] = {1, 1, 1, 1, 3, 3, 3, 3};
    int to[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    CHECK(ph_crit_move_order(sv, to, 8, 2, order, scratch) == 0);
    /* left n0/n1: 4/12 -> n1 4/9 -> n1 4/6 -> n1 4/3 -> n0 3/3 -> n0 2/3
     * -> n1 2/0 -> n0 -> n0 */
    size_t want[8] = {4, 6, 5, 0, 2, 7, 1, 3};
    int same = 1;
    for (int k = 0; k < 8; k++)
        same &= order[k] == want[k];
    CHECK(same);
    /* one node, 5 moves: bit-reversed places 0 4 2 (6) 1 (5) 3 (7) */
    double s5[5] = {1, 1, 1, 1, 1};
    int t5[5] = {0, 0, 0, 0, 0};
    CHECK(ph_crit_move_order(s5, t5, 5, 1, order, scratch) == 0);
    CHECK(order[0] == 0 && order[1] == 4 && order[2] == 2 && order[3] == 1 &&
          order[4] == 3);
    /* NaN and negative savings count as 0; a bad target: list order */
    double sn[3] = {NAN, -5, 2};
    int tn[3] = {0, 0, 1};
    CHECK(ph_crit_move_order(sn, tn, 3, 2, order, scratch) == 0);
    CHECK(order[0] == 2 && order[1] == 0 && order[2] == 1);
    int bad[3] = {0, 2, 1};
    CHECK(ph_crit_move_order(sn, bad, 3, 2, order, scratch) == -1);
    CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2);
    CHECK(ph_crit_move_order(sn, tn, 0, 2, order, scratch) == 0);
}

int main(void)
{
    test_remaining();
    test_saving_by_hand();
    test_amortised();
    test_evidence_roll();
    test_decisive();
    test_phase();
    test_batch();
    test_move_order();
    return check_summary("test_amortised");
}
