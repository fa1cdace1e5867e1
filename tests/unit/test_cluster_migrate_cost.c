/*
 * test_cluster_migrate_cost.c -- home migration by cost
 * (src/cluster/migrate_cost.h), without MPI:
 *   evidence    the decayed mean: first interval, same target, gaps,
 *               another target, no saving;
 *   writers     a page two ranks write, homed at a rank that does not
 *               touch it, moves to the lowest of them when its saving
 *               times the run so far exceeds a fetch; not before;
 *   stays       a home that writes the page (now, or in the interval
 *               before) keeps it; a cold read of data nobody writes moves
 *               nothing; an unclaimed first-touch page; no cost model;
 *   reader      a reader whose fetches cost more than the writers' traffic
 *               takes the page and becomes a reader home, which then
 *               keeps it against the writers;
 *   pingpong    a page the rule would send back where it came from
 *               freezes, melts melt_intervals later and may go back;
 *   jiajia      a page JIAJIA's rule moved at this barrier loses its
 *               evidence and does not move again; the threshold between
 *               two moves;
 *   random      seeded random intervals on 4 ranks: no move to the home,
 *               none away from a home that wrote the page in the
 *               interval, none within min_intervals of the last, and
 *               every target had traffic; two runs agree move for move.
 */
#include "check.h"

#include "cluster/migrate_cost.h"

#include <stdlib.h>
#include <string.h>

#define NP 64
#define MAXR 8

static int homes[NP];
static int home_fn(void *ctx, uint64_t page)
{
    (void)ctx;
    return page < NP ? homes[page] : -1;
}

/* One interval: wrote[r] / fetched[r] are bitmasks of pages (< 64). */
typedef struct iv {
    uint64_t wrote[MAXR], fetched[MAXR];
} iv;

static size_t ranges_of(uint64_t mask, uint64_t *out)
{
    uint64_t pages[64];
    size_t n = 0;
    for (int p = 0; p < 64; p++)
        if (mask >> p & 1)
            pages[n++] = (uint64_t)p;
    return ph_dsm_notice_ranges(pages, n, out);
}

typedef struct world {
    int nranks;
    ph_dsm_rank_cost rc[MAXR];
    ph_dsm_migrate_cfg mig;
    ph_dsm_cost_cfg cfg;
    uint32_t moved_at[NP];
    ph_dsm_evid ev[NP];
    ph_dsm_cost_counts counts;
    ph_dsm_seg prev[NP];          /* the last step's notices */
    size_t nprev;
    uint32_t prev_at;             /* its interval + 1 */
} world;

static void world_init(world *w, int nranks, double f, double d)
{
    memset(w, 0, sizeof *w);
    w->nranks = nranks;
    for (int r = 0; r < nranks; r++)
        w->rc[r] = (ph_dsm_rank_cost){f, d};
    w->mig = (ph_dsm_migrate_cfg){1, 1};
    w->cfg.on = 1;
    w->cfg.melt_intervals = 4;
}

/* Plan barrier `interval` as sync.c feeds it: the notices (one segment
 * per written page), per rank its remote writes (even pages as JIAJIA's
 * candidates, odd ones as writes without a copy: the rule weighs both
 * alike) and its fetches, the notices of the last step that had any;
 * apply the moves to
 * homes[].  Returns the number of move records, *mv gets them (caller
 * frees). */
static long step(world *w, const iv *x, uint32_t interval, ph_dsm_move **mv)
{
    static uint64_t pairs[2 * 64 * 3 * MAXR];
    int cc[MAXR], cd[MAXR], xc[MAXR], xd[MAXR], fc[MAXR], fd[MAXR];
    ph_dsm_seg segs[NP];
    size_t nsegs = 0, at = 0;
    for (int p = 0; p < NP; p++) {
        int nw = 0, wr = -1;
        for (int r = 0; r < w->nranks; r++)
            if (x->wrote[r] >> p & 1) {
                nw++;
                wr = r;
            }
        if (nw)
            segs[nsegs++] = (ph_dsm_seg){(uint64_t)p, 1, nw, nw == 1 ? wr : -1};
    }
    for (int r = 0; r < w->nranks; r++) {
        uint64_t remote = 0;
        for (int p = 0; p < NP; p++)
            if (homes[p] != r)
                remote |= 1ull << p;
        remote &= x->wrote[r];
        cd[r] = (int)at;
        cc[r] = (int)ranges_of(remote & 0x5555555555555555ull, pairs + 2 * at);
        at += (size_t)cc[r];
        xd[r] = (int)at;
        xc[r] = (int)ranges_of(remote & 0xaaaaaaaaaaaaaaaaull, pairs + 2 * at);
        at += (size_t)xc[r];
        fd[r] = (int)at;
        fc[r] = (int)ranges_of(x->fetched[r], pairs + 2 * at);
        at += (size_t)fc[r];
    }
    ph_dsm_cost_in in = {
        .segs = segs, .nsegs = nsegs, .prev = w->prev, .nprev = w->nprev,
        .prev_at = w->prev_at,
        .pairs = pairs, .ccounts = cc, .cdispls = cd, .xcounts = xc,
        .xdispls = xd, .fcounts = fc, .fdispls = fd, .nranks = w->nranks,
        .rc = w->rc, .home = home_fn, .home_ctx = NULL};
    long n = ph_dsm_migrate_cost_plan(&in, &w->mig, &w->cfg, interval,
                                      w->moved_at, w->ev, NP, mv, &w->counts);
    if (nsegs > 0) {             /* sync.c keeps the last exchange's */
        memcpy(w->prev, segs, nsegs * sizeof *segs);
        w->nprev = nsegs;
        w->prev_at = interval + 1;
    }
    for (long i = 0; i < n; i++) {
        CHECK_EQ((*mv)[i].carry, 1);
        for (uint64_t p = (*mv)[i].start; p < (*mv)[i].start + (*mv)[i].len;
             p++)
            homes[p] = (*mv)[i].to;
    }
    return n;
}

static void test_evidence(void)
{
    ph_dsm_evid e;
    memset(&e, 0, sizeof e);
    ph_dsm_evid_update(&e, 2, 1000, 0);
    CHECK_EQ(e.to, 2);
    CHECK(e.gain_ns == 1000);
    CHECK_EQ(e.at, 1);
    ph_dsm_evid_update(&e, 2, 3000, 1);          /* (1000 + 3000) / 2 */
    CHECK(e.gain_ns == 2000);
    ph_dsm_evid_update(&e, 2, 2000, 4);          /* 2000 / 4, then mean */
    CHECK(e.gain_ns == 1250);
    ph_dsm_evid_update(&e, 1, 500, 5);           /* 500 < 1250 / 2: kept */
    CHECK_EQ(e.to, 2);
    CHECK(e.gain_ns == 625);
    ph_dsm_evid_update(&e, 1, 4000, 6);          /* beats 312.5: half */
    CHECK_EQ(e.to, 1);
    CHECK(e.gain_ns == 2000);
    ph_dsm_evid_update(&e, -1, 0, 7);            /* no saving: halved */
    CHECK_EQ(e.to, 1);
    CHECK(e.gain_ns == 1000);
    ph_dsm_evid_update(&e, -1, 0, 100);          /* long gone */
    CHECK_EQ(e.to, -1);
    CHECK(e.gain_ns == 0);
    /* a page never seen: no past, whatever `to` holds */
    memset(&e, 0, sizeof e);
    ph_dsm_evid_update(&e, -1, 0, 3);
    CHECK_EQ(e.to, -1);
}

static void test_writers(void)
{
    world w;
    world_init(&w, 4, 10000, 2000);
    for (int p = 0; p < NP; p++)
        homes[p] = 0;
    /* pages 0-3: ranks 1 and 2 write them at every interval (and so fetch
     * them: the other's writes dropped their copies) */
    iv x = {{0}, {0}};
    x.wrote[1] = x.wrote[2] = 0xf;
    x.fetched[1] = x.fetched[2] = 0xf;
    /* costs where one interval's saving does not pay a fetch: 6000 */
    w.rc[1] = w.rc[2] = (ph_dsm_rank_cost){10000, 1000};
    w.rc[1].fetch_ns = 5000;
    w.rc[2].fetch_ns = 5000;
    w.rc[0].fetch_ns = 5000;
    w.rc[3].fetch_ns = 5000;
    ph_dsm_move *mv = NULL;
    long n = step(&w, &x, 0, &mv);    /* E 6000 * R 1 > 5000: at once */
    CHECK_EQ(n, 1);
    if (n == 1)
        CHECK(mv[0].start == 0 && mv[0].len == 4 && mv[0].to == 1);
    free(mv);
    CHECK_EQ(w.moved_at[0], 1);
    CHECK_EQ(w.ev[0].prev, 1);                    /* left rank 0 */
    CHECK(!(w.ev[0].flags & PH_DSM_EV_READER_HOME));
    CHECK_EQ(w.counts.moves, 4);
    /* home 1 writes them now: they stay, for ever */
    for (uint32_t t = 1; t < 40; t++) {
        n = step(&w, &x, t, &mv);
        CHECK_EQ(n, 0);
        free(mv);
    }
    CHECK_EQ(homes[3], 1);

    /* a saving that needs the run to go on: rank 2's diff, 750 a page
     * and interval, against a fetch of 5000 -> moves once E * R > 5000,
     * at R = 7 (barrier 6) */
    world_init(&w, 4, 5000, 750);
    for (int p = 0; p < NP; p++)
        homes[p] = 0;
    iv y = {{0}, {0}};
    y.wrote[2] = y.wrote[3] = 1ull << 9;
    n = 0;
    uint32_t t = 0;
    for (; t < 10 && n == 0; t++) {
        n = step(&w, &y, t, &mv);
        free(mv);
    }
    CHECK_EQ(t, 7);
    CHECK_EQ(homes[9], 2);
}

static void test_stays(void)
{
    world w;
    world_init(&w, 3, 8000, 1000);
    for (int p = 0; p < NP; p++)
        homes[p] = 1;
    homes[20] = -1;                               /* unclaimed */
    ph_dsm_move *mv = NULL;
    /* page 5: its home 1 writes it every interval, rank 2 reads it */
    iv x = {{0}, {0}};
    x.wrote[1] = 1ull << 5;
    x.fetched[2] = 1ull << 5;
    /* page 6: home 1 writes it every other interval, rank 2 reads it in
     * the others */
    iv even = x, odd = {{0}, {0}};
    even.wrote[1] |= 1ull << 6;
    odd.fetched[2] = 1ull << 6 | 1ull << 5;
    odd.wrote[1] = 1ull << 5;
    /* page 7: nobody ever writes it, rank 2 reads it once */
    odd.fetched[0] = 1ull << 7;
    /* page 20: unclaimed */
    even.wrote[0] = even.wrote[2] = 1ull << 20;
    for (uint32_t t = 0; t < 60; t++) {
        long n = step(&w, t % 2 ? &odd : &even, t, &mv);
        CHECK_EQ(n, 0);
        free(mv);
    }
    CHECK_EQ(homes[5], 1);
    CHECK_EQ(homes[6], 1);
    CHECK_EQ(homes[7], 1);
    /* no cost model, or the rule off: nothing */
    iv z = {{0}, {0}};
    z.wrote[0] = z.wrote[2] = 1ull << 8;
    world_init(&w, 3, 8000, 1000);
    w.rc[2].fetch_ns = 0;
    for (uint32_t t = 0; t < 10; t++) {
        CHECK_EQ(step(&w, &z, t, &mv), 0);
        free(mv);
    }
    world_init(&w, 3, 8000, 1000);
    w.cfg.on = 0;
    for (uint32_t t = 0; t < 10; t++) {
        CHECK_EQ(step(&w, &z, t, &mv), 0);
        free(mv);
    }
    world_init(&w, 3, 8000, 1000);
    w.mig.on = 0;
    for (uint32_t t = 0; t < 10; t++) {
        CHECK_EQ(step(&w, &z, t, &mv), 0);
        free(mv);
    }
}

static void test_reader(void)
{
    world w;
    world_init(&w, 4, 4000, 1000);
    w.rc[3].fetch_ns = 50000;                     /* a slow link */
    for (int p = 0; p < NP; p++)
        homes[p] = 0;
    iv x = {{0}, {0}};
    x.wrote[1] = x.wrote[2] = 1ull << 12;
    x.fetched[3] = 1ull << 12;
    /* its saving, 50000, pays its own slow fetch (the move) at R = 2 */
    ph_dsm_move *mv = NULL;
    CHECK_EQ(step(&w, &x, 0, &mv), 0);
    free(mv);
    long n = step(&w, &x, 1, &mv);
    CHECK_EQ(n, 1);
    if (n == 1)
        CHECK(mv[0].to == 3);
    free(mv);
    CHECK(w.ev[12].flags & PH_DSM_EV_READER_HOME);
    /* the writers pay 5000 each an interval, the reader home would pay
     * 50000 elsewhere: it stays */
    x.wrote[1] = x.wrote[2] = 1ull << 12;
    x.fetched[1] = x.fetched[2] = 1ull << 12;
    x.fetched[3] = 0;
    for (uint32_t t = 2; t < 40; t++) {
        CHECK_EQ(step(&w, &x, t, &mv), 0);
        free(mv);
    }
    CHECK_EQ(homes[12], 3);
}

static void test_pingpong(void)
{
    world w;
    world_init(&w, 3, 4000, 1000);
    for (int p = 0; p < NP; p++)
        homes[p] = 0;
    ph_dsm_move *mv = NULL;
    /* ranks 1 and 2 write page 30: it goes to 1 */
    iv a = {{0}, {0}};
    a.wrote[1] = a.wrote[2] = 1ull << 30;
    a.fetched[1] = a.fetched[2] = 1ull << 30;
    CHECK_EQ(step(&w, &a, 0, &mv), 1);
    free(mv);
    CHECK_EQ(homes[30], 1);
    /* then ranks 0 and 2 write it, rank 1 no more: the rule would send it
     * back to 0 -- it freezes */
    iv b = {{0}, {0}};
    b.wrote[0] = b.wrote[2] = 1ull << 30;
    b.fetched[0] = b.fetched[2] = 1ull << 30;
    uint32_t t = 1;
    long n = 0;
    for (; t < 4; t++) {
        n += step(&w, &b, t, &mv);
        free(mv);
    }
    CHECK_EQ(n, 0);
    CHECK_EQ(w.counts.frozen, 1);
    CHECK(w.ev[30].frozen_at != 0);
    /* melted 4 barriers after it froze: it goes back to 0 */
    uint32_t froze = w.ev[30].frozen_at - 1;
    for (; t < 20 && homes[30] == 1; t++) {
        step(&w, &b, t, &mv);
        free(mv);
    }
    CHECK_EQ(homes[30], 0);
    CHECK(t - 1 >= froze + 4);
}

static void test_jiajia(void)
{
    world w;
    world_init(&w, 3, 4000, 1000);
    w.mig.min_intervals = 5;
    for (int p = 0; p < NP; p++)
        homes[p] = 0;
    ph_dsm_move *mv = NULL;
    iv a = {{0}, {0}};
    a.wrote[1] = a.wrote[2] = 3ull << 40;
    a.fetched[1] = a.fetched[2] = 3ull << 40;
    /* JIAJIA's plan moved page 41 at this barrier (stamped 1) */
    w.moved_at[41] = 1;
    w.ev[41].gain_ns = 1e9f;
    w.ev[41].to = 2;
    w.ev[41].at = 1;
    w.ev[41].flags = PH_DSM_EV_READER_HOME;
    long n = step(&w, &a, 0, &mv);
    CHECK_EQ(n, 1);
    if (n == 1)
        CHECK(mv[0].start == 40 && mv[0].len == 1);
    free(mv);
    CHECK_EQ(w.ev[41].flags, 0);
    CHECK(w.ev[41].gain_ns == 0);
    CHECK_EQ(w.ev[41].home_wrote_at, 1);     /* its new home wrote it */
    /* page 40 went to 1; rank 1 stops writing it: rank 2's evidence
     * waits for the threshold (moved at 0, again at 5 at the earliest) */
    iv b = {{0}, {0}};
    b.wrote[2] = b.wrote[0] = 1ull << 40;
    b.fetched[2] = b.fetched[0] = 1ull << 40;
    uint32_t t = 1;
    for (; t < 20 && homes[40] == 1; t++) {
        step(&w, &b, t, &mv);
        free(mv);
    }
    CHECK(homes[40] == 2 || homes[40] == 0);
    CHECK(t - 1 >= 5);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_random(void)
{
    static world w1, w2;
    int h1[NP], h2[NP];
    world_init(&w1, 4, 6000, 1500);
    w1.rc[2].fetch_ns = 20000;
    w1.mig.min_intervals = 3;
    w2 = w1;
    for (int p = 0; p < NP; p++)
        h1[p] = h2[p] = (int)(next_rand() % 4);
    long moves = 0;
    uint64_t touched[4] = {0};        /* pages each rank ever used */
    for (uint32_t t = 0; t < 400; t++) {
        iv x = {{0}, {0}};
        for (int r = 0; r < 4; r++) {
            x.wrote[r] = next_rand() & next_rand() & next_rand();
            x.fetched[r] = next_rand() & next_rand();
            touched[r] |= x.wrote[r] | x.fetched[r];
        }
        uint32_t before[NP];
        int hb[NP];
        memcpy(before, w1.moved_at, sizeof before);
        memcpy(hb, h1, sizeof hb);
        ph_dsm_move *m1 = NULL, *m2 = NULL;
        memcpy(homes, h1, sizeof homes);
        long n1 = step(&w1, &x, t, &m1);
        memcpy(h1, homes, sizeof homes);
        memcpy(homes, h2, sizeof homes);
        long n2 = step(&w2, &x, t, &m2);
        memcpy(h2, homes, sizeof homes);
        CHECK_EQ(n1, n2);
        if (n1 == n2 && n1 > 0)
            CHECK(memcmp(m1, m2, (size_t)n1 * sizeof *m1) == 0);
        for (long i = 0; i < n1; i++) {
            for (uint64_t p = m1[i].start; p < m1[i].start + m1[i].len; p++) {
                int to = m1[i].to;
                CHECK(to != hb[p]);
                CHECK(!(x.wrote[hb[p]] >> p & 1));
                CHECK(before[p] == 0 || t - (before[p] - 1) >= 3);
                CHECK(touched[to] >> p & 1);
                moves++;
            }
        }
        free(m1);
        free(m2);
        CHECK(memcmp(h1, h2, sizeof h1) == 0);
    }
    CHECK(moves > 0);
}

int main(void)
{
    test_evidence();
    test_writers();
    test_stays();
    test_reader();
    test_pingpong();
    test_jiajia();
    test_random();
    return check_summary("test_cluster_migrate_cost");
}
