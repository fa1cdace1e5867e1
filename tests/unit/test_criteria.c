/*
 * test_criteria.c -- the migration criteria (src/criteria/criteria.c) on
 * hand-computed examples, properties over seeded random counts, and the
 * n-most-critical selection against a brute-force reference.
 *
 * The hand examples use a 4-node model: nodes {0,1} and {2,3} share a
 * socket; latency 100 ns local, 120 ns same socket, 320 ns other socket;
 * 50 ns per competing node.
 */
#include "check.h"
#include "criteria/criteria.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) <= 1e-9 * (1.0 + fabs((double)(b))))

static double lat4[16];
static double mig4[16];

static void init_model(ph_latency_model *m, int with_cost)
{
    for (int i = 0; i < 4; i++)
        for (int h = 0; h < 4; h++) {
            lat4[i * 4 + h] = i == h ? 100.0 : (i / 2 == h / 2 ? 120.0 : 320.0);
            mig4[h * 4 + i] = 0.0;
        }
    m->nnodes = 4;
    m->lat_ns = lat4;
    m->contention_ns = 50.0;
    m->migrate_ns = with_cost ? mig4 : NULL;
}

/* ---- seeded PRNG (xorshift64*) ---------------------------------------- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static uint32_t rng_below(uint32_t n) { return (uint32_t)(rng() % n); }

/* ---- competitive ------------------------------------------------------- */

static void test_competitive_basic(void)
{
    ph_latency_model m;
    init_model(&m, 0);
    double r = -1.0;

    /* all accesses from node 2, home 0: c(0) = 1, rc = 370; 370000 > 0 */
    uint32_t a1[4] = {0, 0, 1000, 0};
    CHECK_EQ(ph_crit_competitive(&m, a1, 0, 1.0, 0, &r), 2);
    CHECK(isinf(r) && r > 0); /* lacc == 0 */

    /* balanced: c = 0, node 1: 120*100 = 12000 vs 120*100 -> equal, no move */
    uint32_t a2[4] = {100, 100, 100, 100};
    r = -1.0;
    CHECK_EQ(ph_crit_competitive(&m, a2, 0, 1.0, 0, &r), -1);
    CHECK(r == 0.0);
    CHECK_EQ(ph_crit_competitive(&m, a2, 3, 1.0, 1, NULL), -1);

    /* factor: acc {100,0,200,0} home 0: c = 1, rc(2,0) = 370, lhs = 74000;
     * rhs = factor*320*100: 32000 at 1 (moves), 128000 at 4 (stays) */
    uint32_t a3[4] = {100, 0, 200, 0};
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, 1.0, 0, &r), 2);
    CHECK_NEAR(r, 74000.0 / (100.0 * 100.0));
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, 4.0, 0, NULL), -1);
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, 2.3, 0, NULL), 2);  /* 73600 */
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, 2.32, 0, NULL), -1); /* 74240 */

    /* migration cost: ml(0->2) = 50000 -> 82000 > 74000: blocked; the
     * optimistic variant ignores it */
    init_model(&m, 1);
    mig4[0 * 4 + 2] = 50000.0;
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, 1.0, 0, NULL), -1);
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, 1.0, 1, &r), 2);
    CHECK_NEAR(r, 7.4);
    mig4[0 * 4 + 2] = 41999.0; /* 32000 + 41999 < 74000 */
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, 1.0, 0, NULL), 2);
    mig4[0 * 4 + 2] = 42000.0; /* equal: no move */
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, 1.0, 0, NULL), -1);
    /* the cost is read as migrate_ns[h*n+i]: a cost on 2->0 does not count */
    mig4[0 * 4 + 2] = 0.0;
    mig4[2 * 4 + 0] = 1e9;
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, 1.0, 0, NULL), 2);
    init_model(&m, 0);

    /* highest ratio wins, not most accesses: acc {100,300,200,0} home 0,
     * c = 2: node 1 300*(120+100) = 66000 > 12000, node 2 200*(320+100) =
     * 84000 > 32000: both qualify, node 2 wins with 8.4 */
    uint32_t a4[4] = {100, 300, 200, 0};
    CHECK_EQ(ph_crit_competitive(&m, a4, 0, 1.0, 0, &r), 2);
    CHECK_NEAR(r, 8.4);
    /* at factor 2.7 node 2 needs > 86400: out; node 1 (32400) wins */
    CHECK_EQ(ph_crit_competitive(&m, a4, 0, 2.7, 0, &r), 1);
    CHECK_NEAR(r, 6.6);

    /* tie between 2 and 3 (same count, same latency): lowest index */
    uint32_t a5[4] = {100, 0, 200, 200};
    CHECK_EQ(ph_crit_competitive(&m, a5, 0, 1.0, 0, NULL), 2);
    /* home 3 with the same counts: c(3) = 0 (node 2 equal, not more):
     * node 2 -> 3 is same socket: 200*120 = 24000 > 120*200? no (equal);
     * node 0 -> 3: 100*320 vs 320*200: no */
    CHECK_EQ(ph_crit_competitive(&m, a5, 3, 1.0, 0, NULL), -1);

    /* lacc == 0 with several nodes: pick the max racc*rc, not max racc.
     * acc {0,1000,600,0} home 0, c = 2: node 1 1000*220 = 220000,
     * node 2 600*420 = 252000 */
    uint32_t a6[4] = {0, 1000, 600, 0};
    CHECK_EQ(ph_crit_competitive(&m, a6, 0, 1.0, 0, &r), 2);
    CHECK(isinf(r));

    /* a page already at the right place does not move */
    uint32_t a7[4] = {0, 0, 1000, 0};
    CHECK_EQ(ph_crit_competitive(&m, a7, 2, 1.0, 0, NULL), -1);

    /* edge cases */
    uint32_t z[4] = {0, 0, 0, 0};
    r = 5.0;
    CHECK_EQ(ph_crit_competitive(&m, z, 0, 1.0, 0, &r), -1);
    CHECK(r == 0.0);
    CHECK_EQ(ph_crit_competitive(&m, a1, -1, 1.0, 0, NULL), -1);
    CHECK_EQ(ph_crit_competitive(&m, a1, 4, 1.0, 0, NULL), -1);
    CHECK_EQ(ph_crit_competitive(NULL, a1, 0, 1.0, 0, NULL), -1);
    CHECK_EQ(ph_crit_competitive(&m, NULL, 0, 1.0, 0, NULL), -1);
    ph_latency_model m0 = m;
    m0.nnodes = 0;
    CHECK_EQ(ph_crit_competitive(&m0, a1, 0, 1.0, 0, NULL), -1);
    /* NaN factor: nothing qualifies */
    CHECK_EQ(ph_crit_competitive(&m, a3, 0, NAN, 0, NULL), -1);
    /* NaN latency for node 2 -> 0: node 2 cannot qualify, node 1 can */
    lat4[2 * 4 + 0] = NAN;
    CHECK_EQ(ph_crit_competitive(&m, a4, 0, 1.0, 0, NULL), 1);
    CHECK_EQ(ph_crit_competitive(&m, a1, 0, 1.0, 0, NULL), -1);
    init_model(&m, 0);
    /* local latency 0: the model is invalid */
    lat4[0] = 0.0;
    CHECK_EQ(ph_crit_competitive(&m, a1, 0, 1.0, 0, NULL), -1);
    init_model(&m, 0);
    /* negative factor: a node with no access never wins */
    uint32_t a8[4] = {100, 0, 0, 0};
    CHECK_EQ(ph_crit_competitive(&m, a8, 0, -1.0, 1, NULL), -1);

    /* UINT32_MAX counts: no overflow, exact comparison */
    uint32_t u1[4] = {UINT32_MAX, UINT32_MAX, 0, 0};
    CHECK_EQ(ph_crit_competitive(&m, u1, 0, 1.0, 0, NULL), -1); /* equal */
    uint32_t u2[4] = {UINT32_MAX - 1, UINT32_MAX, 0, 0};
    CHECK_EQ(ph_crit_competitive(&m, u2, 0, 1.0, 0, &r), 1);
    /* c = 1: rc = 170: 4294967295*170 / (4294967294*100) */
    CHECK_NEAR(r, (double)UINT32_MAX * 170.0 / ((double)(UINT32_MAX - 1) * 100.0));
    uint32_t u3[4] = {1, 0, 0, UINT32_MAX};
    CHECK_EQ(ph_crit_competitive(&m, u3, 0, 1.0, 0, &r), 3);
    CHECK_NEAR(r, (double)UINT32_MAX * 370.0 / 100.0);
}

/* Asymmetric latencies: the criterion reads ru(i,h) = lat[i*n+h]. */
static void test_competitive_indexing(void)
{
    /* 2 nodes: ru(1,0) = 200, ru(0,1) = 1000, local 100 on both */
    double lat[4] = {100.0, 1000.0, 200.0, 100.0};
    ph_latency_model m = {2, lat, 0.0, NULL};
    /* home 0, acc {100, 150}: c = 1 but contention 0; 150*200 = 30000 >
     * 200*100 = 20000 -> moves.  Were lat[h*n+i] (1000) used, lhs
     * 150000 vs rhs 100000 would also move; so check a case that
     * separates: factor 1.6 -> rhs 32000 (stay) vs 160000/150000 (stay);
     * factor 1.4 -> 28000 (move). */
    uint32_t a[2] = {100, 150};
    CHECK_EQ(ph_crit_competitive(&m, a, 0, 1.4, 0, NULL), 1);
    /* with contention 50: rc = 250: 37500 > 1.6*20000 = 32000 -> moves */
    m.contention_ns = 50.0;
    CHECK_EQ(ph_crit_competitive(&m, a, 0, 1.6, 0, NULL), 1);
    CHECK_EQ(ph_crit_competitive(&m, a, 0, 1.9, 0, NULL), -1); /* 38000 */
    /* home 1, acc {150, 100}: rc(0,1) = 1050: 157500 > 100000 -> moves;
     * ratio = 157500 / (100*100) */
    uint32_t b[2] = {150, 100};
    double r;
    CHECK_EQ(ph_crit_competitive(&m, b, 1, 1.0, 0, &r), 0);
    CHECK_NEAR(r, 15.75);
    CHECK_EQ(ph_crit_competitive(&m, b, 1, 1.6, 0, NULL), -1); /* 160000 */
}

/* Property: for random counts, the result is a qualifying node != home
 * with the highest racc*rc (lowest index on ties), or -1 when none
 * qualifies.  The reference is computed here from the equations. */
static void test_competitive_property(void)
{
    enum { N = 8 };
    double lat[N * N], mig[N * N];
    int bad = 0, moved = 0, stayed = 0;
    for (int iter = 0; iter < 20000; iter++) {
        int n = 1 + (int)rng_below(N);
        for (int i = 0; i < n; i++)
            for (int h = 0; h < n; h++) {
                lat[i * n + h] = i == h ? 80.0 + rng_below(40) : 100.0 + rng_below(400);
                mig[h * n + i] = (double)rng_below(4) * 10000.0;
            }
        ph_latency_model m = {n, lat, (double)rng_below(3) * 25.0,
                              rng_below(2) ? mig : NULL};
        uint32_t acc[N];
        int shape = (int)rng_below(4);
        for (int i = 0; i < n; i++) {
            switch (shape) {
            case 0: acc[i] = rng_below(50); break;
            case 1: acc[i] = rng_below(4) * 100; break; /* many ties */
            case 2: acc[i] = (uint32_t)rng(); break;     /* up to UINT32_MAX */
            default: acc[i] = rng_below(3) == 0 ? 0 : rng_below(100000); break;
            }
        }
        int home = (int)rng_below((uint32_t)n);
        double factor = 1.0 + (double)rng_below(7) * 0.5;
        int opt = (int)rng_below(2);
        double ratio;
        int t = ph_crit_competitive(&m, acc, home, factor, opt, &ratio);

        int c = 0;
        for (int i = 0; i < n; i++)
            c += acc[i] > acc[home];
        double l = lat[home * n + home], lacc = acc[home];
        int ref = -1;
        double ref_lhs = 0;
        for (int i = 0; i < n; i++) {
            if (i == home)
                continue;
            double ru = lat[i * n + home];
            double lhs = (double)acc[i] * (ru + m.contention_ns * c);
            double ml = (!opt && m.migrate_ns) ? mig[home * n + i] : 0.0;
            double rhs = factor * ru * lacc + ml;
            if (acc[i] > 0 && lhs > rhs && (ref < 0 || lhs > ref_lhs)) {
                ref = i;
                ref_lhs = lhs;
            }
        }
        if (t != ref)
            bad++;
        if (t != -1) {
            moved++;
            if (t == home)
                bad++;
            double ru = lat[t * n + home];
            double lhs = (double)acc[t] * (ru + m.contention_ns * c);
            double ml = (!opt && m.migrate_ns) ? mig[home * n + t] : 0.0;
            if (!(lhs > factor * ru * lacc + ml))
                bad++;
            double want = lacc > 0 ? lhs / (lacc * l) : INFINITY;
            if (!(ratio == want))
                bad++;
            /* no other qualifying node has a higher ratio */
            for (int i = 0; i < n; i++) {
                if (i == home || i == t)
                    continue;
                double rui = lat[i * n + home];
                double li = (double)acc[i] * (rui + m.contention_ns * c);
                double mli = (!opt && m.migrate_ns) ? mig[home * n + i] : 0.0;
                if (acc[i] > 0 && li > factor * rui * lacc + mli &&
                    (li > lhs || (li == lhs && i < t)))
                    bad++;
            }
        } else {
            stayed++;
        }
    }
    CHECK_EQ(bad, 0);
    CHECK(moved > 1000 && stayed > 1000); /* both outcomes exercised */
}

static void test_contention_and_remote(void)
{
    uint32_t a[4] = {100, 300, 200, 0};
    CHECK_EQ(ph_crit_contention(a, 4, 0), 2);
    CHECK_EQ(ph_crit_contention(a, 4, 1), 0);
    CHECK_EQ(ph_crit_contention(a, 4, 2), 1);
    CHECK_EQ(ph_crit_contention(a, 4, 3), 3);
    uint32_t eq[4] = {5, 5, 5, 5};
    CHECK_EQ(ph_crit_contention(eq, 4, 2), 0); /* equal is not more */
    uint32_t big[3] = {UINT32_MAX - 1, UINT32_MAX, UINT32_MAX};
    CHECK_EQ(ph_crit_contention(big, 3, 0), 2);
    CHECK_EQ(ph_crit_contention(a, 4, -1), 0);
    CHECK_EQ(ph_crit_contention(a, 4, 4), 0);
    CHECK_EQ(ph_crit_contention(a, 0, 0), 0);
    CHECK_EQ(ph_crit_contention(NULL, 4, 0), 0);

    ph_latency_model m;
    init_model(&m, 0);
    /* c(0) = 2: max(300*220, 200*420, 0) = 84000 */
    CHECK_NEAR(ph_crit_remote_latency_ns(&m, a, 0), 84000.0);
    /* home 1: c = 0: max(100*120, 200*320) = 64000 */
    CHECK_NEAR(ph_crit_remote_latency_ns(&m, a, 1), 64000.0);
    uint32_t local[4] = {0, 0, 77, 0};
    CHECK(ph_crit_remote_latency_ns(&m, local, 2) == 0.0);
    CHECK(ph_crit_remote_latency_ns(&m, a, 7) == 0.0);
    CHECK(ph_crit_remote_latency_ns(NULL, a, 0) == 0.0);
    uint32_t u[4] = {0, 0, 0, UINT32_MAX};
    CHECK_NEAR(ph_crit_remote_latency_ns(&m, u, 0), (double)UINT32_MAX * 370.0);
    lat4[3 * 4 + 0] = NAN;
    CHECK(ph_crit_remote_latency_ns(&m, u, 0) == 0.0); /* NaN term ignored */
    init_model(&m, 0);
}

/* ---- predictive -------------------------------------------------------- */

static void test_predictive(void)
{
    uint32_t prev[4] = {100, 10, 10, 10};
    uint32_t now[4] = {50, 40, 30, 10};
    uint8_t g_none[4] = {0, 0, 0, 0};
    uint8_t g_2[4] = {0, 0, 1, 0};
    uint8_t g_12[4] = {0, 1, 1, 0};
    uint8_t g_3[4] = {0, 0, 0, 1};
    uint8_t g_home[4] = {1, 0, 0, 0};

    CHECK_EQ(ph_crit_predictive(now, prev, 4, 0, g_none), -1);
    CHECK_EQ(ph_crit_predictive(now, prev, 4, 0, g_2), 2);
    /* both 1 and 2 gained and grew: node 1 has more accesses in t */
    CHECK_EQ(ph_crit_predictive(now, prev, 4, 0, g_12), 1);
    /* node 3 gained but did not grow (10 -> 10) */
    CHECK_EQ(ph_crit_predictive(now, prev, 4, 0, g_3), -1);
    /* the home itself gained: never a target */
    CHECK_EQ(ph_crit_predictive(now, prev, 4, 0, g_home), -1);
    /* home did not drop: nothing moves, even if remote nodes grew */
    uint32_t prev2[4] = {50, 10, 10, 10};
    CHECK_EQ(ph_crit_predictive(now, prev2, 4, 0, g_12), -1);
    uint32_t prev3[4] = {40, 10, 10, 10}; /* home grew */
    CHECK_EQ(ph_crit_predictive(now, prev3, 4, 0, g_12), -1);
    /* tie on accesses in t: lowest index */
    uint32_t now_t[4] = {50, 30, 30, 10};
    CHECK_EQ(ph_crit_predictive(now_t, prev, 4, 0, g_12), 1);
    /* the winner is the most accesses in t, not the largest growth */
    uint32_t prev4[4] = {100, 39, 1, 10};
    CHECK_EQ(ph_crit_predictive(now, prev4, 4, 0, g_12), 1);
    uint32_t now5[4] = {50, 40, 45, 10};
    CHECK_EQ(ph_crit_predictive(now5, prev4, 4, 0, g_12), 2);
    /* home 2 */
    uint32_t p6[4] = {0, 5, 90, 0}, n6[4] = {20, 6, 60, 0};
    uint8_t g_0[4] = {1, 0, 0, 0};
    CHECK_EQ(ph_crit_predictive(n6, p6, 4, 2, g_0), 0);
    /* UINT32_MAX counts */
    uint32_t p7[2] = {UINT32_MAX, UINT32_MAX - 1}, n7[2] = {UINT32_MAX - 1, UINT32_MAX};
    uint8_t g7[2] = {0, 1};
    CHECK_EQ(ph_crit_predictive(n7, p7, 2, 0, g7), 1);
    /* edge cases */
    CHECK_EQ(ph_crit_predictive(now, prev, 4, -1, g_2), -1);
    CHECK_EQ(ph_crit_predictive(now, prev, 4, 4, g_2), -1);
    CHECK_EQ(ph_crit_predictive(now, prev, 0, 0, g_2), -1);
    CHECK_EQ(ph_crit_predictive(now, prev, 4, 0, NULL), -1);
    CHECK_EQ(ph_crit_predictive(NULL, prev, 4, 0, g_2), -1);
    CHECK_EQ(ph_crit_predictive(now, NULL, 4, 0, g_2), -1);
    uint32_t z[4] = {0, 0, 0, 0};
    CHECK_EQ(ph_crit_predictive(z, z, 4, 0, g_12), -1);
}

/* ---- ping-pong, melt, self-tuning, cold -------------------------------- */

static void test_pingpong_melt(void)
{
    /* moved 1 -> 0 earlier; now competitive wants 0 -> 1: freeze */
    CHECK_EQ(ph_crit_pingpong(0, 1, 1), 1);
    CHECK_EQ(ph_crit_pingpong(0, 1, 2), 0); /* elsewhere: fine */
    CHECK_EQ(ph_crit_pingpong(0, -1, 1), 0); /* never moved */
    CHECK_EQ(ph_crit_pingpong(0, -1, -1), 0); /* no move, never moved */
    CHECK_EQ(ph_crit_pingpong(0, 1, -1), 0); /* no move */
    CHECK_EQ(ph_crit_pingpong(1, 1, 1), 0); /* not a move */
    CHECK_EQ(ph_crit_pingpong(3, 2, 2), 1);

    CHECK_EQ(ph_crit_melts(10, 15, 10), 0);
    CHECK_EQ(ph_crit_melts(10, 20, 10), 1);
    CHECK_EQ(ph_crit_melts(10, 19, 10), 0);
    CHECK_EQ(ph_crit_melts(10, 10, 0), 1); /* melt_iters 0: at once */
    /* wrap: (4 - 65530) mod 65536 = 10 */
    CHECK_EQ(ph_crit_melts(65530, 4, 10), 1);
    CHECK_EQ(ph_crit_melts(65530, 3, 10), 0);
    CHECK_EQ(ph_crit_melts(65530, 4, 11), 0);
    CHECK_EQ(ph_crit_melts(65535, 0, 1), 1);
    CHECK_EQ(ph_crit_melts(0, 65535, 65535), 1);
    CHECK_EQ(ph_crit_melts(1, 0, 65535), 1); /* elapsed 65535 */
    CHECK_EQ(ph_crit_melts(0, 65535, 65536), 0); /* never */
    CHECK_EQ(ph_crit_melts(0, 0, 65536), 0);
    CHECK_EQ(ph_crit_melts(7, 7, 1), 0);
}

static void test_selftune(void)
{
    /* first invocation */
    CHECK(ph_crit_selftune(-1.0, 5000.0, 1.0, 0.5, 4.0) == 1.0);
    /* grows: +step */
    CHECK(ph_crit_selftune(1000.0, 2000.0, 1.0, 0.5, 4.0) == 1.5);
    CHECK(ph_crit_selftune(0.0, 1.0, 1.0, 0.5, 4.0) == 1.5);
    /* same or lower: unchanged */
    CHECK(ph_crit_selftune(2000.0, 2000.0, 1.5, 0.5, 4.0) == 1.5);
    CHECK(ph_crit_selftune(2000.0, 1000.0, 1.5, 0.5, 4.0) == 1.5);
    /* cap */
    CHECK(ph_crit_selftune(1.0, 2.0, 3.75, 0.5, 4.0) == 4.0);
    CHECK(ph_crit_selftune(1.0, 2.0, 4.0, 0.5, 4.0) == 4.0);
    /* never lowers: factor above the cap, negative step */
    CHECK(ph_crit_selftune(1.0, 2.0, 5.0, 0.5, 4.0) == 5.0);
    CHECK(ph_crit_selftune(1.0, 2.0, 2.0, -0.5, 4.0) == 2.0);
    /* NaN: unchanged */
    CHECK(ph_crit_selftune(NAN, 2.0, 2.0, 0.5, 4.0) == 2.0);
    CHECK(ph_crit_selftune(1.0, NAN, 2.0, 0.5, 4.0) == 2.0);
    CHECK(ph_crit_selftune(1.0, 2.0, 2.0, NAN, 4.0) == 2.0);
    CHECK(ph_crit_selftune(1.0, 2.0, 2.0, 0.5, NAN) == 2.0);
    CHECK(ph_crit_selftune(1.0, INFINITY, 2.0, 0.5, 4.0) == 2.5);
    /* repeated growth climbs to the cap and stays */
    double f = 1.0, prev = -1.0;
    for (int i = 0; i < 20; i++) {
        double metric = 1000.0 * (i + 1);
        f = ph_crit_selftune(prev, metric, f, 0.25, 2.0);
        prev = metric;
    }
    CHECK(f == 2.0);
}

static void test_cold(void)
{
    int cold = -1;
    CHECK_EQ(ph_crit_cold(0, 0, 3, &cold), 1);
    CHECK_EQ(cold, 0);
    CHECK_EQ(ph_crit_cold(1, 0, 3, &cold), 2);
    CHECK_EQ(cold, 0);
    CHECK_EQ(ph_crit_cold(2, 0, 3, &cold), 3);
    CHECK_EQ(cold, 1);
    CHECK_EQ(ph_crit_cold(5, 0, 3, &cold), 6);
    CHECK_EQ(cold, 1);
    /* candidates reset the streak */
    CHECK_EQ(ph_crit_cold(2, 7, 3, &cold), 0);
    CHECK_EQ(cold, 0);
    /* cold_after 0 disables */
    CHECK_EQ(ph_crit_cold(100, 0, 0, &cold), 101);
    CHECK_EQ(cold, 0);
    /* cold_after 1: the first empty invocation */
    CHECK_EQ(ph_crit_cold(0, 0, 1, &cold), 1);
    CHECK_EQ(cold, 1);
    /* saturates */
    CHECK(ph_crit_cold(0xFFFFFFFFu, 0, 3, &cold) == 0xFFFFFFFFu);
    CHECK_EQ(cold, 1);
    /* NULL cold */
    CHECK_EQ(ph_crit_cold(2, 0, 3, NULL), 3);
    /* simulate: 3 empty invocations make it cold */
    unsigned s = 0;
    size_t cands[] = {4, 0, 0, 2, 0, 0, 0};
    int seen_cold_at = -1;
    for (int i = 0; i < 7; i++) {
        s = ph_crit_cold(s, cands[i], 3, &cold);
        if (cold && seen_cold_at < 0)
            seen_cold_at = i;
    }
    CHECK_EQ(seen_cold_at, 6);
}

/* ---- criticality and n most critical ----------------------------------- */

static void test_criticality(void)
{
    int t = 99;
    uint32_t a[4] = {10, 30, 50, 50};
    CHECK(ph_crit_criticality(a, 4, 0, &t) == 5.0);
    CHECK_EQ(t, 2); /* tie 2/3: lowest */
    CHECK(ph_crit_criticality(a, 4, 2, &t) == 1.0);
    CHECK_EQ(t, 3);
    uint32_t b[4] = {0, 3, 0, 0};
    CHECK(isinf(ph_crit_criticality(b, 4, 0, &t)));
    CHECK_EQ(t, 1);
    uint32_t c[4] = {0, 0, 0, 0};
    CHECK(ph_crit_criticality(c, 4, 0, &t) == 0.0);
    CHECK_EQ(t, -1);
    uint32_t d[4] = {0, 0, 9, 0}; /* only local accesses */
    CHECK(ph_crit_criticality(d, 4, 2, &t) == 0.0);
    CHECK_EQ(t, -1);
    uint32_t e[2] = {1, UINT32_MAX};
    CHECK(ph_crit_criticality(e, 2, 0, &t) == (double)UINT32_MAX);
    CHECK_EQ(t, 1);
    CHECK(ph_crit_criticality(e, 2, 1, &t) == 1.0 / (double)UINT32_MAX);
    CHECK_EQ(t, 0);
    CHECK(ph_crit_criticality(a, 4, 4, &t) == 0.0);
    CHECK_EQ(t, -1);
    CHECK(ph_crit_criticality(a, 0, 0, &t) == 0.0);
    CHECK(ph_crit_criticality(NULL, 4, 0, &t) == 0.0);
    CHECK(ph_crit_criticality(a, 4, 0, NULL) == 5.0);
}

static void test_most_critical_small(void)
{
    double r[8] = {2.0, 5.0, 0.5, 5.0, INFINITY, 1.0, NAN, 3.0};
    size_t order[8], scratch[8];
    /* thr 1: eligible 0(2) 1(5) 3(5) 4(inf) 7(3): order 4,1,3,7,0 */
    size_t k = ph_crit_most_critical(r, 8, 1.0, 0, order, scratch);
    CHECK_EQ(k, 5);
    size_t want[5] = {4, 1, 3, 7, 0};
    for (size_t i = 0; i < 5 && i < k; i++)
        CHECK_EQ(order[i], want[i]);
    /* n limit: 3 -> 4,1,3 (heap path) */
    memset(order, 0xff, sizeof order);
    k = ph_crit_most_critical(r, 8, 1.0, 3, order, scratch);
    CHECK_EQ(k, 3);
    for (size_t i = 0; i < 3 && i < k; i++)
        CHECK_EQ(order[i], want[i]);
    CHECK(order[3] == (size_t)-1); /* nothing written past n */
    /* n = 2: the tie 1/3 at the cut: lower index wins */
    k = ph_crit_most_critical(r, 8, 1.0, 2, order, scratch);
    CHECK_EQ(k, 2);
    CHECK_EQ(order[0], 4);
    CHECK_EQ(order[1], 1);
    /* n >= eligible: all of them */
    k = ph_crit_most_critical(r, 8, 1.0, 5, order, scratch);
    CHECK_EQ(k, 5);
    k = ph_crit_most_critical(r, 8, 1.0, 100, order, scratch);
    CHECK_EQ(k, 5);
    CHECK_EQ(order[4], 0);
    /* thr is strict: 1.0 itself not eligible, 0.5 not either at thr 0.5 */
    k = ph_crit_most_critical(r, 8, 0.5, 0, order, scratch);
    CHECK_EQ(k, 6);
    CHECK_EQ(order[5], 5);
    /* high thr: only infinity */
    k = ph_crit_most_critical(r, 8, 1e300, 0, order, scratch);
    CHECK_EQ(k, 1);
    CHECK_EQ(order[0], 4);
    CHECK_EQ(ph_crit_most_critical(r, 8, INFINITY, 0, order, scratch), 0);
    CHECK_EQ(ph_crit_most_critical(r, 8, NAN, 0, order, scratch), 0);
    /* count 0 */
    CHECK_EQ(ph_crit_most_critical(r, 0, 0.0, 0, order, scratch), 0);
    /* no scratch with n > 0: heap path, same answer */
    k = ph_crit_most_critical(r, 8, 1.0, 100, order, NULL);
    CHECK_EQ(k, 5);
    for (size_t i = 0; i < 5 && i < k; i++)
        CHECK_EQ(order[i], want[i]);
    /* all equal: index order */
    double eq[5] = {2, 2, 2, 2, 2};
    k = ph_crit_most_critical(eq, 5, 1.0, 0, order, scratch);
    CHECK_EQ(k, 5);
    for (size_t i = 0; i < 5 && i < k; i++)
        CHECK_EQ(order[i], i);
    k = ph_crit_most_critical(eq, 5, 1.0, 3, order, scratch);
    CHECK_EQ(k, 3);
    for (size_t i = 0; i < 3 && i < k; i++)
        CHECK_EQ(order[i], i);
    /* -0.0 and 0.0 compare equal: index order */
    double zz[3] = {0.0, -0.0, 0.0};
    k = ph_crit_most_critical(zz, 3, -1.0, 2, order, scratch);
    CHECK_EQ(k, 2);
    CHECK_EQ(order[0], 0);
    CHECK_EQ(order[1], 1);
}

typedef struct {
    double r;
    size_t i;
} ref_entry;

/* qsort comparator over self-contained entries (no global context) */
static int ref_cmp(const void *pa, const void *pb)
{
    const ref_entry *a = pa, *b = pb;
    if (a->r > b->r)
        return -1;
    if (a->r < b->r)
        return 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* brute force: O(count * k), the k best by repeated scanning */
static size_t brute_select(const double *r, size_t count, double thr, size_t n,
                           size_t *out, unsigned char *taken)
{
    memset(taken, 0, count);
    size_t k = 0;
    for (;;) {
        if (n && k == n)
            break;
        size_t best = (size_t)-1;
        for (size_t i = 0; i < count; i++) {
            if (taken[i] || !(r[i] > thr))
                continue;
            if (best == (size_t)-1 || r[i] > r[best])
                best = i;
        }
        if (best == (size_t)-1)
            break;
        taken[best] = 1;
        out[k++] = best;
    }
    return k;
}

static double random_ratio(int mode)
{
    uint32_t x = rng_below(1000);
    if (x < 10)
        return INFINITY;
    if (x < 20)
        return NAN;
    if (mode == 0)
        return (double)rng_below(16) * 0.5; /* many ties */
    return (double)(rng() >> 11) / 9007199254740992.0 * 100.0;
}

static void test_most_critical_random(void)
{
    /* small cases against the brute-force reference */
    enum { C = 3000 };
    static double r[C];
    static size_t order[C], scratch[C], ref[C];
    static unsigned char taken[C];
    int bad = 0;
    for (int iter = 0; iter < 200; iter++) {
        size_t count = rng_below(C + 1);
        int mode = (int)rng_below(2);
        for (size_t i = 0; i < count; i++)
            r[i] = random_ratio(mode);
        double thr = (double)rng_below(12) * 0.5;
        size_t n = rng_below(3) == 0 ? 0 : rng_below((uint32_t)count + 2);
        size_t k = ph_crit_most_critical(r, count, thr, n, order, scratch);
        size_t kr = brute_select(r, count, thr, n, ref, taken);
        if (k != kr || memcmp(order, ref, k * sizeof *order) != 0)
            bad++;
    }
    CHECK_EQ(bad, 0);

    /* classic quicksort traps, all selected (sort path) and top 100 */
    enum { P = 20000 };
    static double pr[P];
    static size_t po[P], ps[P];
    static ref_entry pe[P];
    for (int pat = 0; pat < 6; pat++) {
        for (size_t i = 0; i < P; i++) {
            switch (pat) {
            case 0: pr[i] = (double)i; break;                 /* ascending */
            case 1: pr[i] = (double)(P - i); break;           /* descending */
            case 2: pr[i] = 7.0; break;                       /* all equal */
            case 3: pr[i] = (double)(i < P / 2 ? i : P - i); break; /* organ pipe */
            case 4: pr[i] = (double)(i % 17); break;          /* sawtooth */
            default: pr[i] = (i & 1) ? -0.0 : 0.0; break;     /* signed zeros */
            }
            pe[i] = (ref_entry){pr[i], i};
        }
        qsort(pe, P, sizeof *pe, ref_cmp);
        size_t k = ph_crit_most_critical(pr, P, -1.0, 0, po, ps);
        size_t mism = k != P;
        for (size_t i = 0; i < k && i < P; i++)
            mism += po[i] != pe[i].i;
        k = ph_crit_most_critical(pr, P, -1.0, 100, po, ps);
        mism += k != 100;
        for (size_t i = 0; i < k && i < 100; i++)
            mism += po[i] != pe[i].i;
        if (mism)
            fprintf(stderr, "pattern %d: %zu mismatches\n", pat, mism);
        CHECK_EQ(mism, 0);
    }

    /* large: 1 M against a qsort reference, several n */
    const size_t big = 1u << 20;
    double *rb = malloc(big * sizeof *rb);
    size_t *ob = malloc(big * sizeof *ob), *sb = malloc(big * sizeof *sb);
    ref_entry *re = malloc(big * sizeof *re);
    CHECK(rb && ob && sb && re);
    if (!rb || !ob || !sb || !re)
        goto out;
    for (size_t i = 0; i < big; i++)
        rb[i] = random_ratio((int)(i & 1));
    double thr = 1.0;
    size_t m = 0;
    for (size_t i = 0; i < big; i++)
        if (rb[i] > thr)
            re[m++] = (ref_entry){rb[i], i};
    qsort(re, m, sizeof *re, ref_cmp);
    size_t ns[] = {0, 1, 20, 1000, m / 2, m - 1, m, m + 5};
    for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
        size_t k = ph_crit_most_critical(rb, big, thr, ns[t], ob, sb);
        size_t want = ns[t] == 0 || ns[t] > m ? m : ns[t];
        CHECK_EQ(k, want);
        size_t mism = 0;
        for (size_t i = 0; i < k && i < want; i++)
            mism += ob[i] != re[i].i;
        CHECK_EQ(mism, 0);
    }
out:
    free(rb);
    free(ob);
    free(sb);
    free(re);
}

/* 16 M candidates: must be fast (O(count log count)), sorted, complete. */
static void test_most_critical_16m(void)
{
    const size_t count = 16u << 20;
    double *r = malloc(count * sizeof *r);
    size_t *o = malloc(count * sizeof *o), *s = malloc(count * sizeof *s);
    CHECK(r && o && s);
    if (r && o && s) {
        size_t m = 0;
        for (size_t i = 0; i < count; i++) {
            r[i] = (double)(rng() >> 40); /* 24-bit values: many ties */
            m += r[i] > 1000.0;
        }
        clock_t t0 = clock();
        size_t k = ph_crit_most_critical(r, count, 1000.0, 0, o, s);
        double all_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
        CHECK_EQ(k, m);
        size_t bad = 0;
        for (size_t i = 1; i < k; i++)
            bad += !(r[o[i - 1]] > r[o[i]] ||
                     (r[o[i - 1]] == r[o[i]] && o[i - 1] < o[i]));
        CHECK_EQ(bad, 0);
        size_t *top = malloc(100000 * sizeof *top);
        CHECK(top != NULL);
        if (top) {
            t0 = clock();
            size_t k2 = ph_crit_most_critical(r, count, 1000.0, 100000, top, NULL);
            double top_s = (double)(clock() - t0) / CLOCKS_PER_SEC;
            CHECK_EQ(k2, 100000);
            CHECK(memcmp(top, o, 100000 * sizeof *top) == 0);
            printf("16M candidates: all %.2f s, top 100000 %.2f s\n", all_s, top_s);
            free(top);
        }
    }
    free(r);
    free(o);
    free(s);
}

static void test_settled(void)
{
    uint32_t a[4] = {10, 30, 0, 0}, b[4] = {10, 12, 11, 9}, z[4] = {0, 0, 0, 0};
    uint32_t h[4] = {10, 10, 0, 0};
    CHECK_EQ(ph_crit_settled(a, 4, 1, 0.5, 1), 1);  /* 75% */
    CHECK_EQ(ph_crit_settled(a, 4, 1, 0.75, 1), 0); /* not more than 75% */
    CHECK_EQ(ph_crit_settled(a, 4, 1, 0.5, 41), 0); /* 40 accesses: too few */
    CHECK_EQ(ph_crit_settled(a, 4, 1, 0.5, 40), 1);
    CHECK_EQ(ph_crit_settled(a, 4, 0, 0.5, 1), 0);  /* not dominant */
    CHECK_EQ(ph_crit_settled(b, 4, 1, 0.5, 1), 0);  /* dominant, 29% */
    CHECK_EQ(ph_crit_settled(b, 4, 1, 0.25, 1), 1);
    CHECK_EQ(ph_crit_settled(h, 4, 0, 0.5, 1), 0);  /* a tie is no majority */
    CHECK_EQ(ph_crit_settled(z, 4, 0, 0.5, 0), 0);
    CHECK_EQ(ph_crit_settled(a, 4, 4, 0.5, 1), 0);  /* bad node */
    CHECK_EQ(ph_crit_settled(a, 4, -1, 0.5, 1), 0);
}

/* ---- evidence: neighbourhoods, uniformly shared pages, melting ---------- */

/* A 512-page neighbourhood on n nodes where each page got `samples`
 * samples (weight 1) from the node owner(p) says, or from random nodes. */
static void hood_of_pages(ph_crit_hood *h, int n, int samples, int random,
                          int blocks, int shifted)
{
    ph_crit_hood_clear(h);
    for (int p = 0; p < 512; p++) {
        uint32_t acc[8] = {0};
        int owner = p * blocks / 512 % n;
        for (int s = 0; s < samples; s++) {
            int node = random ? (int)rng_below((uint32_t)n) : owner;
            /* shifted: half the samples from the owner of the next block
             * (an owner change over the run) */
            if (!random && shifted && s % 2)
                node = (owner + 1) % n;
            acc[node]++;
        }
        ph_crit_hood_add(h, acc, NULL, n, 1);
    }
}

/* sign (1) alone: enough pages with two samples, at most half pure */
static void test_hood_impure(void)
{
    ph_crit_hood h;
    ph_crit_hood_clear(&h);
    CHECK_EQ(ph_crit_hood_impure(NULL, 1), 0);
    CHECK_EQ(ph_crit_hood_impure(&h, 0), 0);          /* nothing sampled */
    for (int p = 0; p < 10; p++) {                    /* 5 pure, 5 not */
        uint32_t acc[4] = {0};
        acc[p % 4] = 2;
        if (p % 2)
            acc[(p + 1) % 4] = 1;
        ph_crit_hood_add(&h, acc, NULL, 4, 1);
    }
    CHECK_EQ(h.multi, 10);
    CHECK_EQ(h.pure, 5);
    CHECK_EQ(ph_crit_hood_impure(&h, 8), 1);
    CHECK_EQ(ph_crit_hood_impure(&h, 11), 0);         /* too few pages */
    uint32_t one[4] = {3, 0, 0, 0};                   /* a sixth pure page */
    ph_crit_hood_add(&h, one, NULL, 4, 1);
    CHECK_EQ(ph_crit_hood_impure(&h, 8), 0);
    uint32_t single[4] = {0, 1, 0, 0};                /* one sample: not counted */
    ph_crit_hood_add(&h, single, NULL, 4, 1);
    CHECK_EQ(h.multi, 11);
}

static void test_uniform_shared(void)
{
    ph_crit_hood h;
    for (int n = 2; n <= 8; n *= 2) {
        for (int samples = 1; samples <= 4; samples++) {
            /* a table read at random by every node: shared once its
             * pages have two samples (three on two nodes, where two
             * random samples agree half the time); one sample each
             * cannot tell it from an array owned page by page */
            hood_of_pages(&h, n, samples, 1, 1, 0);
            CHECK_EQ(h.sampled, 512);
            if (samples == 1)
                CHECK_EQ(ph_crit_uniform_shared(&h, n, 16), 0);
            else if (samples >= (n == 2 ? 3 : 2))
                CHECK_EQ(ph_crit_uniform_shared(&h, n, 16), 1);
            /* an array owned by blocks: 1, 4 or 16 owners in the
             * neighbourhood, with or without an owner change: not */
            for (int blocks = 1; blocks <= 16; blocks *= 4) {
                hood_of_pages(&h, n, samples, 0, blocks, 0);
                CHECK_EQ(ph_crit_uniform_shared(&h, n, 16), 0);
                hood_of_pages(&h, n, samples, 0, blocks, 1);
                CHECK_EQ(ph_crit_uniform_shared(&h, n, 16), 0);
            }
        }
    }
    /* by hand: pages with two samples from nodes p%4 and (p+1)%4 (none
     * pure), whose dominant (lower index on a tie) changes page by page */
    ph_crit_hood_clear(&h);
    for (int p = 0; p < 15; p++) {
        uint32_t acc[4] = {0};
        acc[p % 4] = 1;
        acc[(p + 1) % 4] = 1;
        ph_crit_hood_add(&h, acc, NULL, 4, 1);
    }
    CHECK_EQ(h.multi, 15);
    CHECK_EQ(h.pure, 0);
    CHECK_EQ(ph_crit_uniform_shared(&h, 4, 16), 0); /* too few to tell */
    uint32_t acc[4] = {0, 1, 0, 1};
    ph_crit_hood_add(&h, acc, NULL, 4, 1);
    /* dominants 0 1 2 0 | 0 1 2 0 ... then 1: 3 of 15 pairs agree */
    CHECK_EQ(h.sampled, 16);
    CHECK_EQ(h.pairs, 15);
    CHECK_EQ(h.agree, 3);
    CHECK_EQ(ph_crit_uniform_shared(&h, 4, 16), 1);
    /* the same pages pure, each from one node (cyclic ownership): not */
    ph_crit_hood_clear(&h);
    for (int p = 0; p < 64; p++) {
        uint32_t a1[4] = {0};
        a1[p % 4] = 2;
        ph_crit_hood_add(&h, a1, NULL, 4, 1);
    }
    CHECK_EQ(h.pure, 64);
    CHECK_EQ(ph_crit_uniform_shared(&h, 4, 16), 0);
    /* neighbours disagree, pages impure, but two nodes have everything:
     * not every node shares it (on 4 nodes) */
    ph_crit_hood_clear(&h);
    for (int p = 0; p < 64; p++) {
        uint32_t a2[4] = {0};
        a2[p % 2] = 2;
        a2[1 - p % 2] = 1;
        ph_crit_hood_add(&h, a2, NULL, 4, 1);
    }
    CHECK_EQ(ph_crit_uniform_shared(&h, 4, 16), 0);
    CHECK_EQ(ph_crit_uniform_shared(&h, 2, 16), 1);
    /* more than half pure: not */
    ph_crit_hood_clear(&h);
    for (int p = 0; p < 64; p++) {
        uint32_t a3[4] = {0};
        a3[p % 4] = 2;
        if (p % 3 == 0)
            a3[(p + 2) % 4] = 1;
        ph_crit_hood_add(&h, a3, NULL, 4, 1);
    }
    CHECK(h.pure * 2 > h.multi);
    CHECK_EQ(ph_crit_uniform_shared(&h, 4, 16), 0);
    /* read at random by every node after one node initialised it (one
     * sample of each page from node 0 first, then one a page in each of
     * two intervals): still shared, judged on the latest interval's
     * samples (over the run node 0 dominates most pages: ties go to it) */
    ph_crit_hood hi;
    ph_crit_hood_clear(&hi);
    for (int p = 0; p < 256; p++) {
        uint32_t a4[4] = {1, 0, 0, 0}, now[4] = {0};
        a4[rng_below(4)]++;
        int last = (int)rng_below(4);
        a4[last]++;
        now[last] = 1;
        ph_crit_hood_add(&hi, a4, now, 4, 1);
    }
    CHECK_EQ(ph_crit_uniform_shared(&hi, 4, 16), 1);
    CHECK(hi.now_sampled == 256 && hi.sampled == 256);
    /* agreement against chance.  The same table, its pairs counted over
     * intervals: a serial initialisation (one node: every pair agrees, as
     * chance would have it) and two intervals in which nodes 0 and 1 ran
     * most (45/45/5/5%: chance 0.41) with neighbours agreeing in 55% of
     * the pairs (a lookup reads neighbouring pages): shared.  Against the
     * old fixed 1/n it read as owned (5/8 of the pairs at most). */
    uint64_t mix[4] = {45, 45, 5, 5}, one[4] = {7, 0, 0, 0}, none[4] = {0};
    double c2 = ph_crit_chance(mix, 4);
    CHECK(c2 > 0.40 && c2 < 0.42);
    CHECK(ph_crit_chance(one, 4) == 1.0);
    CHECK(ph_crit_chance(none, 4) == 0.25);
    CHECK(ph_crit_chance(NULL, 4) == 0);
    hi.pairs = 255 + 2 * 255;
    hi.agree = 255 + (uint32_t)(0.55 * 2 * 255);
    hi.chance = 255 + c2 * 2 * 255;
    CHECK_EQ(ph_crit_uniform_shared(&hi, 4, 16), 1);
    hi.chance = 0;
    CHECK_EQ(ph_crit_uniform_shared(&hi, 4, 16), 0);
    /* an array owned by blocks agrees almost always, whatever the mix */
    hi.agree = hi.pairs - 8;
    hi.chance = 255 + c2 * 2 * 255;
    CHECK_EQ(ph_crit_uniform_shared(&hi, 4, 16), 0);
    /* unsampled pages add nothing; bad arguments */
    uint32_t z[4] = {0};
    ph_crit_hood_add(&h, z, NULL, 4, 1);
    CHECK_EQ(h.sampled, 64);
    CHECK_EQ(ph_crit_uniform_shared(NULL, 4, 16), 0);
    CHECK_EQ(ph_crit_uniform_shared(&h, 1, 16), 0);
}

static void test_page_uniform(void)
{
    uint32_t even[4] = {4, 4, 4, 4}, few[4] = {3, 3, 3, 3}, two[4] = {8, 8, 0, 0};
    uint32_t skew[4] = {9, 3, 2, 2}, thin[4] = {7, 5, 3, 1};
    CHECK_EQ(ph_crit_page_uniform(even, 4, 1), 1);
    CHECK_EQ(ph_crit_page_uniform(few, 4, 1), 0);   /* 12 < 4n samples */
    CHECK_EQ(ph_crit_page_uniform(even, 4, 2), 0);  /* 8 samples of weight 2 */
    CHECK_EQ(ph_crit_page_uniform(two, 4, 1), 0);   /* two nodes share it */
    CHECK_EQ(ph_crit_page_uniform(two, 2, 1), 1);   /* ... all there are */
    CHECK_EQ(ph_crit_page_uniform(skew, 4, 1), 0);  /* 56% > 2/n */
    CHECK_EQ(ph_crit_page_uniform(thin, 4, 1), 0);  /* 6% < 1/(2n) */
    CHECK_EQ(ph_crit_page_uniform(even, 1, 1), 0);
}

static void test_hood_agrees(void)
{
    ph_crit_hood h;
    ph_crit_hood_clear(&h);
    for (int p = 0; p < 20; p++) {
        uint32_t acc[4] = {0};
        acc[p < 16 ? 2 : 1] = 1;
        ph_crit_hood_add(&h, acc, NULL, 4, 1);
    }
    CHECK_EQ(ph_crit_hood_agrees(&h, 4, 2, 16, 0.75), 1); /* 16 of 20 */
    CHECK_EQ(ph_crit_hood_agrees(&h, 4, 2, 16, 0.85), 0);
    CHECK_EQ(ph_crit_hood_agrees(&h, 4, 1, 16, 0.75), 0);
    CHECK_EQ(ph_crit_hood_agrees(&h, 4, 2, 21, 0.75), 0); /* too few pages */
    CHECK_EQ(ph_crit_hood_agrees(&h, 4, 4, 16, 0.75), 0);
    CHECK_EQ(ph_crit_hood_agrees(&h, 4, -1, 16, 0.75), 0);
}

static void test_interval_skewed(void)
{
    uint64_t even[4] = {25, 25, 25, 25}, one[4] = {0, 97, 2, 1};
    uint64_t run_even[4] = {250, 250, 250, 250}, run_one[4] = {0, 970, 20, 10};
    uint64_t two[4] = {50, 50, 0, 0};
    CHECK_EQ(ph_crit_interval_skewed(even, run_even, 4), 0);
    CHECK_EQ(ph_crit_interval_skewed(one, run_even, 4), 1);  /* one thread ran */
    CHECK_EQ(ph_crit_interval_skewed(one, run_one, 4), 0);   /* it always does */
    CHECK_EQ(ph_crit_interval_skewed(two, run_even, 4), 0);  /* 50% = 2/n */
    CHECK_EQ(ph_crit_interval_skewed(one, run_even, 1), 0);
    uint64_t z[4] = {0};
    CHECK_EQ(ph_crit_interval_skewed(z, run_even, 4), 0);
}

static void test_shared_steady(void)
{
    /* 4 nodes, unit 1: the past holds 16 or more samples */
    uint32_t past[4] = {6, 4, 4, 4}, now[4] = {30, 25, 25, 25};
    CHECK_EQ(ph_crit_shared_steady(past, now, 4, 0, 1), 1);
    CHECK_EQ(ph_crit_shared_steady(past, now, 4, 1, 1), 0);  /* not its reader */
    uint32_t other[4] = {25, 30, 25, 25};
    CHECK_EQ(ph_crit_shared_steady(past, other, 4, 0, 1), 0); /* reader changed */
    uint32_t thin[4] = {6, 3, 3, 3};                            /* 15 samples */
    CHECK_EQ(ph_crit_shared_steady(thin, now, 4, 0, 1), 0);
    CHECK_EQ(ph_crit_shared_steady(past, now, 4, 0, 64), 0); /* one sample = 64 */
    uint32_t none[4] = {0};
    CHECK_EQ(ph_crit_shared_steady(none, now, 4, 0, 1), 0);  /* first interval */
    CHECK_EQ(ph_crit_shared_steady(NULL, now, 4, 0, 1), 0);
    CHECK_EQ(ph_crit_shared_steady(past, now, 4, 4, 1), 0);
    CHECK_EQ(ph_crit_shared_steady(past, now, 1, 0, 1), 0);
}

static void test_shared_dominant(void)
{
    /* CG's p on 8 nodes, unit 64: 151 samples from the owner's node, 100
     * from each other one (the model's counts) -- beyond chance */
    uint32_t p[8] = {9689, 6400, 6400, 6400, 6400, 6400, 6400, 6400};
    CHECK_EQ(ph_crit_shared_dominant(p, 8, 0, 64), 1);
    CHECK_EQ(ph_crit_shared_dominant(p, 8, 1, 64), 0);   /* not its reader */
    /* a table read alike by 8 nodes of 100 samples: the largest about
     * 114 (excess 14 < 4 sqrt(100) = 40) */
    uint32_t table[8] = {114, 100, 97, 105, 92, 101, 99, 96};
    CHECK_EQ(ph_crit_shared_dominant(table, 8, 0, 1), 0);
    /* the edge: the others' mean 100 (4 sqrt(100) = 40, 100/4 = 25),
     * measured from the largest of the others */
    uint32_t edge[8] = {140, 100, 100, 100, 100, 100, 100, 100};
    CHECK_EQ(ph_crit_shared_dominant(edge, 8, 0, 1), 0); /* 40: not more */
    edge[0] = 141;
    CHECK_EQ(ph_crit_shared_dominant(edge, 8, 0, 1), 1); /* 41 */
    edge[1] = 99;
    edge[2] = 101;                                       /* mean 100, max 101 */
    CHECK_EQ(ph_crit_shared_dominant(edge, 8, 0, 1), 0); /* 40 */
    edge[0] = 142;
    CHECK_EQ(ph_crit_shared_dominant(edge, 8, 0, 1), 1); /* 41 */
    /* small counts: 4 sqrt(m) is not enough where m / 4 is more (m = 400:
     * 80 and 100) */
    uint32_t big[4] = {490, 400, 400, 400};
    CHECK_EQ(ph_crit_shared_dominant(big, 4, 0, 1), 0);
    big[0] = 501;
    CHECK_EQ(ph_crit_shared_dominant(big, 4, 0, 1), 1);
    /* thin: fewer than 4n samples in all, whatever the shares */
    uint32_t thin[4] = {12, 1, 1, 1};
    CHECK_EQ(ph_crit_shared_dominant(thin, 4, 0, 1), 0);
    CHECK_EQ(ph_crit_shared_dominant(p, 8, 0, 6400), 0); /* one sample = 6400 */
    /* nothing, bad arguments */
    uint32_t none[4] = {0};
    CHECK_EQ(ph_crit_shared_dominant(none, 4, 0, 1), 0);
    CHECK_EQ(ph_crit_shared_dominant(NULL, 4, 0, 1), 0);
    CHECK_EQ(ph_crit_shared_dominant(p, 8, 8, 1), 0);
    CHECK_EQ(ph_crit_shared_dominant(p, 8, -1, 1), 0);
    CHECK_EQ(ph_crit_shared_dominant(p, 1, 0, 1), 0);
    /* unit 0 counts as 1 */
    CHECK_EQ(ph_crit_shared_dominant(big, 4, 0, 0), 1);
}

static void test_melt_after(void)
{
    CHECK_EQ(ph_crit_melt_after(8, 0), 8);
    CHECK_EQ(ph_crit_melt_after(8, 1), 8);
    CHECK_EQ(ph_crit_melt_after(8, 2), 16);
    CHECK_EQ(ph_crit_melt_after(8, 4), 64);
    CHECK_EQ(ph_crit_melt_after(8, 255), 65535);
    CHECK_EQ(ph_crit_melt_after(40000, 2), 65535);
    CHECK_EQ(ph_crit_melt_after(0, 3), 0);
}

static void test_stand_in(void)
{
    /* two sockets of two nodes: 10 local, 12 on the socket, 32 across */
    const double lat[16] = {10, 12, 32, 32, 12, 10, 32, 32,
                            32, 32, 10, 12, 32, 32, 12, 10};
    const uint64_t all = 0xf, even = 0x5; /* nodes 0 and 2 */
    for (int t = 0; t < 4; t++)
        CHECK_EQ(ph_crit_stand_in(lat, 4, all, t), t);
    /* the nearest allowed node, not the lowest */
    CHECK_EQ(ph_crit_stand_in(lat, 4, even, 0), 0);
    CHECK_EQ(ph_crit_stand_in(lat, 4, even, 1), 0);
    CHECK_EQ(ph_crit_stand_in(lat, 4, even, 2), 2);
    CHECK_EQ(ph_crit_stand_in(lat, 4, even, 3), 2);
    /* ties go to the lower index */
    CHECK_EQ(ph_crit_stand_in(lat, 4, 0xc, 0), 2);
    CHECK_EQ(ph_crit_stand_in(lat, 4, 0xc, 1), 2);
    /* one node allowed: everything goes there */
    for (int t = 0; t < 4; t++)
        CHECK_EQ(ph_crit_stand_in(lat, 4, 0x8, t), 3);
    /* a NaN latency never wins; nothing allowed; bad arguments */
    const double nan_lat[9] = {10, NAN, 20, NAN, 10, 20, 20, 20, 10};
    CHECK_EQ(ph_crit_stand_in(nan_lat, 3, 0x6, 0), 2);
    CHECK_EQ(ph_crit_stand_in(nan_lat, 3, 0x2, 0), 1); /* the only one */
    CHECK_EQ(ph_crit_stand_in(lat, 4, 0, 1), -1);
    CHECK_EQ(ph_crit_stand_in(lat, 4, 0x30, 1), -1); /* bits beyond n */
    CHECK_EQ(ph_crit_stand_in(NULL, 4, all, 1), -1);
    CHECK_EQ(ph_crit_stand_in(lat, 4, all, 4), -1);
    CHECK_EQ(ph_crit_stand_in(lat, 4, all, -1), -1);
    CHECK_EQ(ph_crit_stand_in(lat, 65, all, 1), -1);
}

/* The first sweep's runs: page-exact while the traps fit the bound,
 * then the smallest power of two that fits, at most max_run. */
static void test_sweep_run_pages(void)
{
    /* 4096 pages at 3 us: 12.3 ms, within 100 ms */
    CHECK_EQ(ph_crit_sweep_run_pages(4096, 3e3, 100e6, 16), 1);
    /* exactly at the bound: fits */
    CHECK_EQ(ph_crit_sweep_run_pages(1000, 1e5, 100e6, 16), 1);
    CHECK_EQ(ph_crit_sweep_run_pages(1001, 1e5, 100e6, 16), 2);
    /* 4222 pages at 500 us: 2.1 s -> 2112 / 1056 / 528 / 264 traps at
     * 2, 4, 8, 16: 132 ms at 16 still over, capped */
    CHECK_EQ(ph_crit_sweep_run_pages(4222, 5e5, 100e6, 16), 16);
    CHECK_EQ(ph_crit_sweep_run_pages(4222, 5e5, 100e6, 32), 32);
    CHECK_EQ(ph_crit_sweep_run_pages(4222, 5e5, 100e6, 64), 32); /* 66 ms */
    /* 4222 pages at 100 us: 422 ms -> 4 gives 1056 traps, 105.6 ms; 8 */
    CHECK_EQ(ph_crit_sweep_run_pages(4222, 1e5, 100e6, 512), 8);
    /* a cap that is no power of two is reached */
    CHECK_EQ(ph_crit_sweep_run_pages(4222, 5e5, 100e6, 12), 12);
    /* the edges: nothing to sweep, free traps, no coarser runs allowed,
     * no bound, not-a-number */
    CHECK_EQ(ph_crit_sweep_run_pages(0, 5e5, 100e6, 16), 1);
    CHECK_EQ(ph_crit_sweep_run_pages(4222, 0, 100e6, 16), 1);
    CHECK_EQ(ph_crit_sweep_run_pages(4222, 5e5, 100e6, 1), 1);
    CHECK_EQ(ph_crit_sweep_run_pages(4222, 5e5, 100e6, 0), 1);
    CHECK_EQ(ph_crit_sweep_run_pages(4222, 5e5, 0, 16), 1);
    CHECK_EQ(ph_crit_sweep_run_pages(4222, NAN, 100e6, 16), 1);
    /* no coarser than one run for all the pages */
    CHECK_EQ(ph_crit_sweep_run_pages(1, 1e9, 1e6, 16), 1);
    CHECK_EQ(ph_crit_sweep_run_pages(5, 1e9, 1e6, 16), 8);
    /* the largest sweep at the largest run: no overflow */
    CHECK_EQ(ph_crit_sweep_run_pages(SIZE_MAX, 1e9, 1e6, 512), 512);
}

int main(void)
{
    test_sweep_run_pages();
    test_stand_in();
    test_hood_impure();
    test_uniform_shared();
    test_page_uniform();
    test_hood_agrees();
    test_melt_after();
    test_interval_skewed();
    test_shared_steady();
    test_shared_dominant();
    test_settled();
    test_competitive_basic();
    test_competitive_indexing();
    test_competitive_property();
    test_contention_and_remote();
    test_predictive();
    test_pingpong_melt();
    test_selftune();
    test_cold();
    test_criticality();
    test_most_critical_small();
    test_most_critical_random();
    test_most_critical_16m();
    return check_summary("test_criteria");
}
