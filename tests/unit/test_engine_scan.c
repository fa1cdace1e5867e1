/*
 * test_engine_scan.c -- the engine's pass over an area (invoke.c: scan,
 * 2 MiB units, 4 KiB criterion with its fast path, roll, chunk by chunk)
 * against a straightforward reference, on seeded random counts.
 *
 * Each case maps 8 units of 2 MiB on the simulated machine; a random half
 * of those wholly inside the area stay 2 MiB pages on a random node, the
 * others are split and their 4 KiB pages sent to random nodes.  The area registered starts `off` pages into
 * the mapping (0: units and chunks aligned; 100: every unit straddles two
 * chunks) and ends 37 pages before its end (a partial last chunk).
 * Counts, put in with ph_hot_add:
 *   round 0 (the evidence): random pages of random chunks, then a roll;
 *   round 1 (the interval): per chunk one of: nothing sampled; a few pages
 *     and both pages at its edges; every page from its home alone (the
 *     fast path); every page from random nodes.
 * Then one invocation (iterative, fresh engine: nothing frozen, nothing
 * moved before).  The reference, from a copy of the counts and the homes
 * taken before it: the sampled pages in order; for a unit that is one
 * 2 MiB page, ph_crit_huge on its sampled subpages' rows copied side by
 * side; for every other page the criterion (amortised or competitive),
 * the neighbourhood's shared test (the chunk's pairs of neighbours
 * counted along), and the statistics.  Checked: every page's home after,
 * the invocation's log entry, the counts rolled (evidence, cumulative,
 * cur = 0) including chunks with nothing sampled, the chunks' neighbour
 * pairs, and the chunks' sampled counters back to 0.
 */
#include "check.h"

#include "../sim/engine_rig.h"

#include "base/rng.h"
#include "criteria/amortised.h"
#include "criteria/criteria.h"
#include "engine/engine_int.h"
#include "engine/hot.h"
#include "move/mover.h"
#include "os/os.h"
#include "topo/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT 512u
#define MAP_UNITS 8u
#define MAP_PAGES (MAP_UNITS * UNIT)
#define TAIL 37u
#define PG 4096u
#define NN 4
#define HOOD_MIN_MULTI 8 /* invoke.c */

static ph_topology *topo;
static const ph_mover_cfg mover_cfg = {512, 3, 1000 * 1000000ull, 0};

static uint64_t rnd(uint64_t *s, uint64_t n)
{
    return ph_splitmix64_next(s) % n;
}

static uint64_t remote(const uint32_t *acc, int home)
{
    uint64_t r = 0;
    for (int k = 0; k < NN; k++)
        if (k != home)
            r += acc[k];
    return r;
}

/* Random accesses for page i: 1..3 nodes, 1..40 each (sometimes many). */
static void add_random(ph_hot *h, size_t i, uint64_t *s)
{
    int k = 1 + (int)rnd(s, 3);
    for (int j = 0; j < k; j++) {
        uint32_t c = 1 + (uint32_t)rnd(s, 40);
        if (rnd(s, 8) == 0)
            c *= 50;
        CHECK_EQ(ph_hot_add(h, i, (int)rnd(s, NN), c, 0), 0);
    }
}

/* The synthetic source's model: no access (the test puts the counts in). */
static int silent(void *arg, size_t range, size_t page, uint32_t *acc, int nnodes)
{
    (void)arg, (void)range, (void)page;
    for (int k = 0; k < nnodes; k++)
        acc[k] = 0;
    return 0;
}

/* Homes of the mapping: whole 2 MiB pages on random nodes, or split
 * units (two thirds at random, and the units only partly in an area that
 * starts `off` pages in) with random 4 KiB homes or all on one node. */
static void place_units(ph_os *os, char *mem, size_t off, uint64_t *s)
{
    for (size_t u = 0; u < MAP_UNITS; u++) {
        char *a = mem + u * UNIT * PG;
        int node = (int)rnd(s, NN);
        CHECK_EQ(ph_os_populate_on(os, a, UNIT * PG, topo->nodes[node].id), 0);
        /* units only partly in the area are split: the 4 KiB
         * algorithm would move their 2 MiB page for each subpage */
        int partial = (u == 0 && off) || u == MAP_UNITS - 1;
        int kind = (int)rnd(s, 3);
        if (kind == 0 && !partial)
            continue;
        CHECK_EQ(ph_os_huge_split(os, a, UNIT * PG, 1), 0);
        /* split: 4 KiB pages on random nodes, or all on one (a block
         * placement's, which the fast path may find settled) */
        void *pages[UNIT];
        int nodes[UNIT], st[UNIT];
        for (size_t k = 0; k < UNIT; k++) {
            pages[k] = a + k * PG;
            nodes[k] = topo->nodes[kind == 2 ? node : (int)rnd(s, NN)].id;
        }
        CHECK(ph_os_move(os, UNIT, pages, nodes, st) >= 0);
    }
}

static void one_case(uint64_t seed, size_t off, int competitive)
{
    uint64_t s = seed;
    const size_t np = MAP_PAGES - off - TAIL;
    ph_os *os = ph_os_sim_open(topo);
    ph_mover *mv = ph_mover_new(os, &mover_cfg);
    char *mem = ph_os_map(os, MAP_PAGES * PG, 2u << 20, PH_MAP_HUGE_THP);
    CHECK(os && mv && mem);
    if (!os || !mv || !mem)
        return;
    place_units(os, mem, off, &s);
    ph_engine_cfg c = rig_engine_cfg();
    c.stable_after = 0;
    c.cold_after = 0;
    c.criterion = competitive ? PH_CRITERION_COMPETITIVE : PH_CRITERION_AMORTISED;
    ph_engine *e = rig_engine_open(topo, os, mv, &c, silent, NULL, 0, 0, seed);
    CHECK(e != NULL);
    if (!e)
        return;
    char *base = mem + off * PG;
    ph_hot *h = ph_engine_register(e, base, np * PG, "scan");
    CHECK(h != NULL);
    if (!h)
        return;
    const int n = h->nnodes;
    CHECK_EQ(n, NN);
    const size_t pw = ph_hot_page_words(h);
    void **addr = malloc(np * sizeof *addr);
    int *home = malloc(np * sizeof *home), *want = malloc(np * sizeof *want);
    for (size_t i = 0; i < np; i++)
        addr[i] = base + i * PG;
    CHECK_EQ(ph_engine_query(e, np, addr, home), 0);

    /* round 0: evidence */
    for (size_t ch = 0; ch < h->nchunks; ch++) {
        if (rnd(&s, 4) == 0)
            continue; /* never sampled: no counts */
        size_t first = ch * UNIT, last = first + UNIT < np ? first + UNIT : np;
        for (size_t i = first; i < last; i++)
            if (rnd(&s, 3) == 0) {
                if (rnd(&s, 2))
                    CHECK_EQ(ph_hot_add(h, i, home[i], 1 + (uint32_t)rnd(&s, 30), 0), 0);
                else
                    add_random(h, i, &s);
            }
    }
    ph_hot_roll(h);
    /* round 1: the interval */
    for (size_t ch = 0; ch < h->nchunks; ch++) {
        size_t first = ch * UNIT, last = first + UNIT < np ? first + UNIT : np;
        switch (rnd(&s, 4)) {
        case 0: /* nothing sampled */
            break;
        case 1: /* a few, and both edges */
            add_random(h, first, &s);
            add_random(h, last - 1, &s);
            for (int k = 0; k < 6; k++)
                add_random(h, first + rnd(&s, last - first), &s);
            break;
        case 2: /* every page from its home alone */
            for (size_t i = first; i < last; i++)
                CHECK_EQ(ph_hot_add(h, i, home[i], 1 + (uint32_t)rnd(&s, 30), 0), 0);
            break;
        default: /* every page, random nodes */
            for (size_t i = first; i < last; i++)
                add_random(h, i, &s);
        }
    }
    /* the copy the reference works on */
    size_t cw = UNIT * pw;
    uint32_t *cnt = calloc(h->nchunks * cw, sizeof *cnt);
    int *had = calloc(h->nchunks, sizeof *had);
    for (size_t ch = 0; ch < h->nchunks; ch++)
        if (h->chunks[ch]) {
            had[ch] = 1;
            memcpy(cnt + ch * cw, h->chunks[ch], cw * sizeof *cnt);
        }
    /* a chunk's three sections (hot.h): cur, prev, cum */
#define CUR(i) (cnt + ((i) / UNIT) * cw + ((i) % UNIT) * NN)
#define PREV(i) (CUR(i) + UNIT * NN)
#define CUM(i) (CUR(i) + 2 * UNIT * NN)
    uint8_t *sampled = calloc(np, 1);
    for (size_t i = 0; i < np; i++)
        if (had[i / UNIT])
            for (int k = 0; k < n; k++)
                sampled[i] |= CUR(i)[k] != 0;
    double factor = h->factor;
    size_t nunits = h->nunits, ufirst = h->unit_first;
    uint8_t *huge = malloc(nunits ? nunits : 1);
    for (size_t u = 0; u < nunits; u++) {
        uint8_t st[UNIT];
        CHECK_EQ(ph_os_huge_state(os, base + (ufirst + u * UNIT) * PG, UNIT, st), 0);
        huge[u] = 1;
        for (size_t k = 0; k < UNIT; k++)
            huge[u] &= st[k] != 0;
    }

    uint64_t nlog = e->nlog;
    uint64_t moved = ph_engine_invoke(e, PH_INV_ITERATIVE, 0, 0);
    CHECK_EQ(e->nlog, nlog + 1);
    const ph_invocation *got = &e->log[e->nlog - 1];

    /* ---- the reference ---- */
    ph_invocation x = {0};
    ph_latency_model lm = e->lat, am = e->lat;
    if (c.optimistic)
        am.migrate_ns = NULL; /* decide.c */
    uint32_t unit_w = c.sample_weight ? c.sample_weight : 1;
    uint8_t *in4k = malloc(np);
    for (size_t i = 0; i < np; i++) {
        in4k[i] = sampled[i];
        want[i] = home[i];
    }
    /* 2 MiB units */
    for (size_t u = 0; u < nunits; u++) {
        size_t p0 = ufirst + u * UNIT;
        uint32_t rows[UNIT * NN];
        size_t m = 0;
        int uhome = -1;
        for (size_t i = p0; i < p0 + UNIT; i++)
            if (sampled[i]) {
                memcpy(rows + m * NN, CUR(i), NN * sizeof *rows);
                m++;
                if (uhome < 0)
                    uhome = home[i];
            }
        if (!m || !huge[u] || uhome < 0)
            continue;
        uint32_t agg[NN];
        int target;
        double ratio;
        int d = ph_crit_huge(&lm, rows, m, uhome, factor, c.optimistic,
                             c.huge_split_share, agg, &target, &ratio);
        if (d == PH_HUGE_SPLIT) {
            x.huge_split++;
            continue; /* its subpages go on as 4 KiB pages */
        }
        for (size_t i = p0; i < p0 + UNIT; i++)
            in4k[i] = 0;
        x.scanned += m;
        for (int k = 0; k < n; k++)
            x.accesses += agg[k];
        x.remote_before += remote(agg, uhome);
        if (d == PH_HUGE_MOVE) {
            x.candidates++;
            x.huge_migrated++;
            x.migrated++;
            x.remote_after += remote(agg, target);
            for (size_t i = p0; i < p0 + UNIT; i++)
                want[i] = target;
        } else {
            x.remote_after += remote(agg, uhome);
        }
    }
    /* 4 KiB pages */
    uint16_t *pairs = calloc(h->nchunks, sizeof *pairs);
    uint16_t *agree = calloc(h->nchunks, sizeof *agree);
    uint16_t *chance = calloc(h->nchunks, sizeof *chance);
    size_t adj_chunk = SIZE_MAX, hood_chunk = SIZE_MAX;
    int adj_last = -1, hood_shared = 0;
    /* the area's mix of nodes in the interval, and over the run */
    uint64_t now_t[NN] = {0}, run_t[NN] = {0};
    for (size_t i = 0; i < np; i++)
        for (int k = 0; k < n; k++) {
            now_t[k] += CUR(i)[k];
            run_t[k] += (uint64_t)CUM(i)[k] + CUR(i)[k];
        }
    double by_chance = ph_crit_chance(now_t, n), carry = 0;
    for (size_t i = 0; i < np; i++) {
        if (!in4k[i])
            continue;
        const uint32_t *cur = CUR(i);
        size_t ch = i / UNIT;
        int dnow = ph_crit_dominant(cur, n);
        if (ch != adj_chunk) {
            adj_chunk = ch;
            adj_last = -1;
        }
        if (dnow >= 0) {
            if (adj_last >= 0) {
                pairs[ch]++;
                agree[ch] += dnow == adj_last;
                carry += by_chance;
                uint16_t whole = (uint16_t)carry;
                carry -= whole;
                chance[ch] += whole;
            }
            adj_last = dnow;
        }
        x.scanned++;
        for (int k = 0; k < n; k++)
            x.accesses += cur[k];
        uint64_t rem = remote(cur, home[i]);
        x.remote_before += rem;
        double ratio = 0;
        int t = competitive
                    ? ph_crit_competitive(&lm, cur, home[i], factor,
                                          c.optimistic, &ratio)
                    : ph_crit_amortised(&am, cur, PREV(i), home[i], factor,
                                        e->remaining, &ratio);
        if (t >= 0 && ch != hood_chunk) {
            ph_crit_hood hd;
            ph_crit_hood_clear(&hd);
            for (size_t p = ch * UNIT; p < (ch + 1) * UNIT && p < np; p++) {
                uint32_t tot[NN];
                for (int k = 0; k < n; k++)
                    tot[k] = CUM(p)[k] > UINT32_MAX - CUR(p)[k]
                                 ? UINT32_MAX : CUM(p)[k] + CUR(p)[k];
                ph_crit_hood_add(&hd, tot, CUR(p), n, unit_w);
            }
            if ((ch + 1) * UNIT <= np) {
                hd.pairs = pairs[ch];
                hd.agree = agree[ch];
                hd.chance = chance[ch];
            }
            for (int k = 0; k < n; k++)
                hd.share[k] = (double)run_t[k];
            hood_chunk = ch;
            hood_shared = ph_crit_uniform_shared(&hd, n, HOOD_MIN_MULTI);
        }
        if (t >= 0 && (hood_shared || ph_crit_page_uniform(cur, n, unit_w)) &&
            !(ph_crit_shared_steady(PREV(i), cur, n, t, unit_w) ||
              ph_crit_shared_dominant(cur, n, t, unit_w))) {
            x.shared++;
            t = -1;
        }
        if (t < 0) {
            x.remote_after += rem;
            continue;
        }
        x.candidates++;
        x.migrated++;
        x.remote_after += remote(cur, t);
        want[i] = t;
    }
    /* ---- compared ---- */
    CHECK_EQ(got->scanned, x.scanned);
    CHECK_EQ(got->candidates, x.candidates);
    CHECK_EQ(got->migrated, x.migrated);
    CHECK_EQ(got->huge_migrated, x.huge_migrated);
    CHECK_EQ(got->huge_split, x.huge_split);
    CHECK_EQ(got->accesses, x.accesses);
    CHECK_EQ(got->remote_before, x.remote_before);
    CHECK_EQ(got->remote_after, x.remote_after);
    CHECK_EQ(got->shared, x.shared);
    CHECK_EQ(got->frozen, 0);
    CHECK_EQ(moved, x.migrated);
    int *after = malloc(np * sizeof *after);
    CHECK_EQ(ph_engine_query(e, np, addr, after), 0);
    size_t bad = 0;
    for (size_t i = 0; i < np; i++)
        bad += after[i] != want[i];
    CHECK_EQ(bad, 0);
    /* the roll, the neighbour pairs, the sampled counters */
    size_t bad_roll = 0, bad_adj = 0, bad_meta = 0;
    for (size_t ch = 0; ch < h->nchunks; ch++) {
        bad_adj += h->adj_pairs[ch] != pairs[ch] || h->adj_agree[ch] != agree[ch] ||
                   h->adj_chance[ch] != chance[ch];
        if (!had[ch]) {
            bad_roll += h->chunks[ch] != NULL;
            continue;
        }
        bad_meta += ph_hot_chunk_meta(h, h->chunks[ch])[PH_HOT_FRESH] != 0;
        for (size_t p = ch * UNIT; p < (ch + 1) * UNIT; p++) {
            uint32_t ev[NN], cum[NN];
            memcpy(ev, PREV(p), sizeof ev);
            ph_crit_evidence_roll(ev, CUR(p), n);
            for (int k = 0; k < n; k++)
                cum[k] = CUM(p)[k] > UINT32_MAX - CUR(p)[k] ? UINT32_MAX
                                                            : CUM(p)[k] + CUR(p)[k];
            uint32_t *w = h->chunks[ch] + (p % UNIT) * ph_hot_stride(h);
            const uint32_t *wp = ph_cnt_prev(w, n), *wc = ph_cnt_cum(w, n);
            for (int k = 0; k < n; k++)
                bad_roll += w[k] != 0 || wp[k] != ev[k] || wc[k] != cum[k];
        }
    }
    CHECK_EQ(bad_roll, 0);
    CHECK_EQ(bad_adj, 0);
    CHECK_EQ(bad_meta, 0);
    if (bad || bad_roll || bad_adj || got->scanned != x.scanned)
        fprintf(stderr, "  (seed %llu, offset %zu, %s)\n",
                (unsigned long long)seed, off,
                competitive ? "competitive" : "amortised");
#undef CUR
#undef PREV
#undef CUM
    free(after), free(pairs), free(agree), free(chance), free(in4k), free(huge);
    free(sampled), free(had), free(cnt), free(addr), free(home), free(want);
    ph_engine_free(e);
    ph_os_unmap(os, mem, MAP_PAGES * PG);
    ph_mover_free(mv);
    ph_os_close(os);
}

/* The sampled-pages counter of ph_hot_add: pages, not samples; zero
 * counts do not make a page sampled; the roll resets it, and a chunk
 * with neither samples nor evidence is left as it is. */
static void test_fresh_counter(void)
{
    ph_hot *h = ph_hot_new(0x10000000, 3 * UNIT, "fresh", 0, NN);
    CHECK(h != NULL);
    if (!h)
        return;
    CHECK_EQ(ph_hot_add(h, 5, 1, 3, 0), 0);
    CHECK_EQ(ph_hot_add(h, 5, 2, 3, 0), 0);
    CHECK_EQ(ph_hot_add(h, 6, 0, 0, 0), 0);
    CHECK_EQ(ph_hot_add(h, UNIT - 1, 3, 1, 0), 0);
    CHECK_EQ(ph_hot_add(h, 3 * UNIT, 0, 1, 0), -1);
    CHECK_EQ(ph_hot_add(h, 7, NN, 1, 0), -1);
    CHECK_EQ(ph_hot_chunk_meta(h, h->chunks[0])[PH_HOT_FRESH], 2);
    CHECK(h->chunks[1] == NULL);
    ph_hot_roll(h);
    uint32_t *m = ph_hot_chunk_meta(h, h->chunks[0]);
    CHECK_EQ(m[PH_HOT_FRESH], 0);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & PH_EV_LEFT, PH_EV_LEFT);
    /* the evidence halves at every roll without samples, then is 0 */
    for (int r = 0; r < 4; r++)
        ph_hot_roll(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE], 0);
    uint32_t *c5 = ph_hot_counts(h, 5, 0);
    for (int k = 0; k < NN; k++)
        CHECK_EQ(ph_cnt_prev(c5, NN)[k], 0);
    CHECK_EQ(ph_cnt_cum(c5, NN)[1], 3);
    ph_hot_free(h);
}

/* The chunk's bits that spare the fast path its look at every page
 * (hot.h): a sample from elsewhere than its page's home, or of a page
 * whose home is not known, sets PH_CUR_AWAY; a roll clears it and sets
 * PH_EV_AWAY exactly when some page's evidence is not from its home
 * alone; a change of home sets both, setting the same home does not;
 * forgetting the interval clears PH_CUR_AWAY. */
static void test_at_home_bits(void)
{
    const uintptr_t base = 0x30000000;
    ph_hot *h = ph_hot_new(base, 2 * UNIT, "bits", 0, NN);
    CHECK(h != NULL);
    if (!h)
        return;
    const uint32_t away = PH_EV_AWAY | PH_CUR_AWAY;
    for (size_t i = 0; i < 2 * UNIT; i++)
        ph_hot_set_home(h, i, (int)(i % NN)); /* no chunk yet: no bits */
    ph_sample sm[16];
    uint64_t added;
    for (size_t i = 0; i < 10; i++)
        sm[i] = (ph_sample){base + i * PG, (int)(i % NN), 1u << 20};
    CHECK_EQ(ph_hot_add_samples(h, sm, 10, 1, &added), 10);
    uint32_t *m = ph_hot_chunk_meta(h, h->chunks[0]);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & away, 0);
    ph_hot_roll(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE], PH_EV_LEFT);
    /* from elsewhere than the home */
    sm[0] = (ph_sample){base + 11 * PG, (11 + 1) % NN, 5};
    CHECK_EQ(ph_hot_add_samples(h, sm, 1, 1, &added), 1);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & away, PH_CUR_AWAY);
    ph_hot_roll(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE], PH_EV_LEFT | PH_EV_AWAY);
    /* page 11 now lives where it was accessed from: its evidence is from
     * its home, which the next roll finds */
    ph_hot_set_home(h, 11, (11 + 1) % NN);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & away, away);
    ph_hot_roll(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE], PH_EV_LEFT);
    /* the same home again changes nothing; another one sets both */
    ph_hot_set_home(h, 3, 3 % NN);
    CHECK_EQ(m[PH_HOT_EVIDENCE], PH_EV_LEFT);
    ph_hot_set_home(h, 3, (3 + 2) % NN);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & away, away);
    ph_hot_roll(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE], PH_EV_LEFT | PH_EV_AWAY);
    /* a home no longer known: the page's samples are "elsewhere" */
    ph_hot_set_home(h, 3, 3 % NN);
    ph_hot_roll(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE], PH_EV_LEFT);
    ph_hot_set_home(h, 4, -1);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & away, away);
    ph_hot_roll(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE], PH_EV_LEFT | PH_EV_AWAY);
    sm[0] = (ph_sample){base + 4 * PG, 4 % NN, 5};
    CHECK_EQ(ph_hot_add_samples(h, sm, 1, 1, &added), 1);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & PH_CUR_AWAY, PH_CUR_AWAY);
    ph_hot_forget_interval(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & PH_CUR_AWAY, 0);
    /* the evidence gone: nothing left, nothing away */
    for (int r = 0; r < 24; r++)
        ph_hot_roll(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE], 0);
    /* the second chunk was never sampled */
    CHECK(h->chunks[1] == NULL);
    ph_hot_free(h);
}

/* A chunk's settled home (hot.h: PH_EV_HOME): what ph_hot_chunk_settled
 * finds page by page (every home known and the same, none frozen, every
 * first home recorded); the ingest then judges its samples by it; the
 * rolls keep it; a change of one page's home or a freeze breaks it, the
 * same home again does not; a chunk without counts has none. */
static void test_settled_home(void)
{
    const uintptr_t base = 0x40000000;
    const size_t np = 2 * UNIT - TAIL;
    ph_hot *h = ph_hot_new(base, np, "settled", 0, NN);
    CHECK(h != NULL);
    if (!h)
        return;
    CHECK_EQ(ph_hot_chunk_home(h, 0), -1);
    CHECK_EQ(ph_hot_chunk_settled(h, 0), -1); /* no home known */
    for (size_t i = 0; i < np; i++)
        ph_hot_set_home(h, i, i < UNIT ? 2 : 1);
    CHECK_EQ(ph_hot_chunk_settled(h, 0), -1); /* no first home recorded */
    for (size_t i = 0; i < np; i++)
        h->pages[i].first_home = h->pages[i].home;
    CHECK_EQ(ph_hot_chunk_settled(h, 0), 2);
    CHECK_EQ(ph_hot_chunk_settled(h, 1), 1); /* the short last chunk */
    CHECK_EQ(ph_hot_chunk_settled(h, 2), -1); /* no such chunk */
    h->pages[7].first_home = -1;
    h->pages[7].flags |= PH_PG_MOVED; /* moved: its first home is known */
    CHECK_EQ(ph_hot_chunk_settled(h, 0), 2);
    ph_hot_chunk_settle(h, 0, 2); /* no counts yet: nothing to mark */
    CHECK_EQ(ph_hot_chunk_home(h, 0), -1);
    CHECK(ph_hot_chunk_new(h, 0) && ph_hot_chunk_new(h, 1));
    ph_hot_chunk_settle(h, 0, 2);
    ph_hot_chunk_settle(h, 1, 1);
    CHECK_EQ(ph_hot_chunk_home(h, 0), 2);
    CHECK_EQ(ph_hot_chunk_home(h, 1), 1);
    /* from the settled home: nothing away; from elsewhere: away */
    ph_sample sm[2] = {{base + 3 * PG, 2, 9}, {base + 4 * PG, 2, 9}};
    uint64_t added;
    CHECK_EQ(ph_hot_add_samples(h, sm, 2, 1, &added), 2);
    uint32_t *m = ph_hot_chunk_meta(h, h->chunks[0]);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & PH_CUR_AWAY, 0);
    sm[0].node = 3;
    CHECK_EQ(ph_hot_add_samples(h, sm, 1, 1, &added), 1);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & PH_CUR_AWAY, PH_CUR_AWAY);
    /* the rolls keep it, with and without evidence, and so does
     * forgetting the interval */
    ph_hot_roll(h);
    ph_hot_forget_interval(h);
    for (int r = 0; r < 24; r++)
        ph_hot_roll(h);
    CHECK_EQ(m[PH_HOT_EVIDENCE] & ~(uint32_t)PH_EV_HOME, 0);
    CHECK_EQ(ph_hot_chunk_home(h, 0), 2);
    /* the same home again keeps it; another home breaks it */
    ph_hot_set_home(h, 5, 2);
    CHECK_EQ(ph_hot_chunk_home(h, 0), 2);
    ph_hot_set_home(h, 5, 0);
    CHECK_EQ(ph_hot_chunk_home(h, 0), -1);
    CHECK_EQ(ph_hot_chunk_settled(h, 0), -1);
    /* a freeze breaks the other chunk's, and only its */
    ph_hot_freeze(h, UNIT + 1, 3, 1);
    CHECK_EQ(ph_hot_chunk_home(h, 1), -1);
    CHECK_EQ(ph_hot_chunk_settled(h, 1), -1);
    CHECK_EQ(h->pages[UNIT + 1].freezes, 1);
    CHECK_EQ(h->pages[UNIT + 1].frozen_since, 3);
    ph_hot_free(h);
}

/* ph_hot_add_samples (the ingest's loop) against a plain reference, one
 * sample at a time, on seeded random streams: runs of pages in order from
 * one node, pages sampled by several nodes, pages again later, zero
 * counts, nodes out of range, weights that saturate, and a stream that
 * leaves the area (the call stops there, the rest is a second area's).
 * Checked: every page's interval counts, every chunk's sampled pages and
 * whether it was made, the area's sums by node (this interval and the
 * run), the accesses added and the samples taken. */
static void test_add_samples(void)
{
    const size_t np = 3 * UNIT - TAIL;
    const uintptr_t base = 0x20000000;
    for (uint64_t seed = 1; seed <= 16; seed++) {
        uint64_t s = seed * 0x9e3779b97f4a7c15ull;
        ph_hot *h = ph_hot_new(base, np, "batch", 0, NN);
        CHECK(h != NULL);
        if (!h)
            return;
        size_t cap = 4 * np + 64, ns = 0;
        ph_sample *sm = malloc(cap * sizeof *sm);
        uint64_t *ref = calloc(np * NN, sizeof *ref);
        CHECK(sm && ref);
        if (!sm || !ref) {
            free(sm), free(ref), ph_hot_free(h);
            return;
        }
        const uint64_t weight = seed % 4 == 0 ? 3000000000ull : 1 + rnd(&s, 64);
        /* two "drains" (the fresh counts go on across calls) */
        for (int drain = 0; drain < 2; drain++) {
            ns = 0;
            size_t p = rnd(&s, 100);
            while (p < np && ns + 8 < cap) {
                int node = (int)rnd(&s, NN);
                size_t run = 1 + rnd(&s, 40);
                for (size_t r = 0; r < run && p < np && ns + 8 < cap; r++) {
                    uint32_t c = rnd(&s, 10) == 0 ? 0 : 1 + (uint32_t)rnd(&s, 1000);
                    int nd = rnd(&s, 50) == 0 ? (rnd(&s, 2) ? -1 : NN) : node;
                    sm[ns++] = (ph_sample){base + p * PG, nd, c};
                    if (rnd(&s, 8) == 0) /* a second node on the same page */
                        sm[ns++] = (ph_sample){base + p * PG, (nd + 1) % NN, 1};
                    p += 1 + (rnd(&s, 4) == 0 ? rnd(&s, 600) : 0);
                }
            }
            /* then pages seen before, and one outside the area */
            for (int r = 0; r < 4 && ns + 2 < cap; r++)
                sm[ns++] = (ph_sample){base + rnd(&s, np) * PG, (int)rnd(&s, NN), 7};
            size_t inside = ns;
            sm[ns++] = (ph_sample){base + np * PG, 0, 1};
            sm[ns++] = (ph_sample){base, 0, 1};

            /* the reference and its expectations */
            uint64_t want_added = 0;
            for (size_t k = 0; k < inside; k++) {
                size_t i = (sm[k].page - base) / PG;
                int nd = sm[k].node;
                if (nd < 0 || nd >= NN)
                    continue;
                uint64_t c = (uint64_t)sm[k].count * weight;
                if (c > UINT32_MAX)
                    c = UINT32_MAX;
                uint64_t *r = &ref[i * NN + nd];
                *r = *r + c > UINT32_MAX ? UINT32_MAX : *r + c;
                want_added += c;
            }
            uint64_t now_before[NN], run_before[NN];
            memcpy(now_before, h->now_acc, sizeof now_before);
            memcpy(run_before, h->run_acc, sizeof run_before);
            uint64_t added = 0;
            CHECK_EQ(ph_hot_add_samples(h, sm, ns, weight, &added), inside);
            CHECK_EQ(added, want_added);
            uint64_t got_now = 0, got_run = 0;
            for (int k = 0; k < NN; k++) {
                got_now += h->now_acc[k] - now_before[k];
                got_run += h->run_acc[k] - run_before[k];
            }
            CHECK_EQ(got_now, want_added);
            CHECK_EQ(got_run, want_added);
        }
        /* every page's counts, every chunk's sampled pages, by node sums */
        uint64_t by_node[NN] = {0};
        for (size_t c = 0; c * UNIT < np; c++) {
            uint32_t fresh = 0;
            for (size_t i = c * UNIT; i < (c + 1) * UNIT && i < np; i++) {
                uint64_t or = 0;
                for (int k = 0; k < NN; k++) {
                    or |= ref[i * NN + k];
                    by_node[k] += ref[i * NN + k];
                }
                fresh += or != 0;
                uint32_t *cnt = ph_hot_counts(h, i, 0);
                for (int k = 0; k < NN; k++)
                    CHECK_EQ(cnt ? ph_cnt_cur(cnt, NN)[k] : 0, ref[i * NN + k]);
            }
            if (h->chunks[c])
                CHECK_EQ(ph_hot_chunk_meta(h, h->chunks[c])[PH_HOT_FRESH], fresh);
            else
                CHECK_EQ(fresh, 0);
        }
        for (int k = 0; k < NN; k++) {
            /* the saturated pages aside, the sums by node are the counts' */
            if (weight < 1000000)
                CHECK_EQ(h->now_acc[k], by_node[k]);
            CHECK_EQ(h->run_acc[k], h->now_acc[k]);
        }
        free(sm), free(ref);
        ph_hot_free(h);
    }
}

/* ---- the fast path against the general path ----------------------------
 * Two engines on two simulated machines set up alike get the same samples
 * for 24 intervals; one may take invoke.c's fast path for blocks whose
 * pages were all accessed from home, the other (general_only) never does.
 * Chunks per interval: nothing; a few random pages; every page from its
 * home (the fast path); the same but one page from elsewhere (the general
 * path); every page from a random node; every page from an owner that
 * alternates between two nodes from one interval to the next (moves, then
 * ping-pong freezes, which melt in later intervals at home).  After every
 * invocation all the engines keep must be equal: the log entry, every
 * page's bookkeeping, the counts, the neighbour pairs, the units' states,
 * the homes. */
typedef struct twin {
    ph_os *os;
    ph_mover *mv;
    char *mem;
    ph_engine *e;
    ph_hot *h;
} twin;

static int twin_open(twin *t, uint64_t seed, size_t off, int competitive,
                     int general_only)
{
    uint64_t s = seed;
    memset(t, 0, sizeof *t);
    t->os = ph_os_sim_open(topo);
    t->mv = ph_mover_new(t->os, &mover_cfg);
    t->mem = ph_os_map(t->os, MAP_PAGES * PG, 2u << 20, PH_MAP_HUGE_THP);
    CHECK(t->os && t->mv && t->mem);
    if (!t->os || !t->mv || !t->mem)
        return -1;
    place_units(t->os, t->mem, off, &s);
    ph_engine_cfg c = rig_engine_cfg();
    c.stable_after = 0;
    c.cold_after = 0;
    c.melt_iters = 2;
    c.criterion = competitive ? PH_CRITERION_COMPETITIVE : PH_CRITERION_AMORTISED;
    t->e = rig_engine_open(topo, t->os, t->mv, &c, silent, NULL, 0, 0, seed);
    CHECK(t->e != NULL);
    if (!t->e)
        return -1;
    t->e->general_only = general_only;
    t->h = ph_engine_register(t->e, t->mem + off * PG,
                              (MAP_PAGES - off - TAIL) * PG, "fast");
    CHECK(t->h != NULL);
    return t->h ? 0 : -1;
}

static void twin_close(twin *t)
{
    if (t->e)
        ph_engine_free(t->e);
    if (t->mv)
        ph_mover_free(t->mv);
    if (t->mem)
        ph_os_unmap(t->os, t->mem, MAP_PAGES * PG);
    if (t->os)
        ph_os_close(t->os);
}

/* Every chunk whose home the area says is settled keeps the promise
 * page by page (hot.h: PH_EV_HOME); returns how many chunks are settled. */
static size_t settled_chunks(const ph_hot *h)
{
    size_t settled = 0;
    for (size_t c = 0; c < h->nchunks; c++) {
        if (ph_hot_chunk_home(h, c) < 0)
            continue;
        settled++;
        CHECK_EQ(ph_hot_chunk_settled(h, c), ph_hot_chunk_home(h, c));
    }
    return settled;
}

static void fast_case(uint64_t seed, size_t off, int competitive,
                      uint64_t *fast, uint64_t *melted, uint64_t *frozen,
                      uint64_t *settled)
{
    twin a, b;
    if (twin_open(&a, seed, off, competitive, 0) != 0 ||
        twin_open(&b, seed, off, competitive, 1) != 0) {
        twin_close(&a);
        twin_close(&b);
        return;
    }
    const size_t np = a.h->npages;
    const int n = a.h->nnodes;
    void **addr = malloc(np * sizeof *addr), **addr_b = malloc(np * sizeof *addr_b);
    int *home = malloc(np * sizeof *home), *home_b = malloc(np * sizeof *home_b);
    for (size_t i = 0; i < np; i++) {
        addr[i] = (char *)a.h->base + i * PG;
        addr_b[i] = (char *)b.h->base + i * PG;
    }
    uint64_t s = seed ^ 0x5eedf00du;
    uint8_t *kind = malloc(a.h->nchunks);
    for (size_t ch = 0; ch < a.h->nchunks; ch++)
        kind[ch] = (uint8_t)rnd(&s, 6);
    size_t bad_pages = 0, bad_counts = 0, bad_adj = 0, bad_units = 0, bad_homes = 0;
    for (int r = 0; r < 24; r++) {
        CHECK_EQ(ph_engine_query(a.e, np, addr, home), 0);
        for (size_t ch = 0; ch < a.h->nchunks; ch++) {
            size_t first = ch * UNIT, last = first + UNIT < np ? first + UNIT : np;
            if (rnd(&s, 4) == 0) /* a chunk changes its kind now and then */
                kind[ch] = (uint8_t)rnd(&s, 6);
            size_t odd = first + rnd(&s, last - first);
            int owner = (int)((ch + (size_t)r) % 2);
            for (size_t i = first; i < last; i++) {
                int node = -1;
                uint32_t cnt = 1 + (uint32_t)rnd(&s, 30);
                switch (kind[ch]) {
                case 0: break;
                case 1: node = rnd(&s, 64) == 0 ? (int)rnd(&s, NN) : -1; break;
                case 2: node = home[i]; break;
                case 3: node = i == odd ? (home[i] + 1) % NN : home[i]; break;
                case 4: node = (int)rnd(&s, NN); break;
                default: node = owner; break;
                }
                if (node < 0)
                    continue;
                CHECK_EQ(ph_hot_add(a.h, i, node, cnt, 0), 0);
                CHECK_EQ(ph_hot_add(b.h, i, node, cnt, 0), 0);
            }
        }
        a.e->iteration = b.e->iteration = (uint32_t)r + 1;
        uint64_t ma = ph_engine_invoke(a.e, PH_INV_ITERATIVE, 0, 0);
        uint64_t mb = ph_engine_invoke(b.e, PH_INV_ITERATIVE, 0, 0);
        CHECK_EQ(ma, mb);
        const ph_invocation *x = &a.e->log[a.e->nlog - 1],
                            *y = &b.e->log[b.e->nlog - 1];
        CHECK_EQ(x->scanned, y->scanned);
        CHECK_EQ(x->candidates, y->candidates);
        CHECK_EQ(x->migrated, y->migrated);
        CHECK_EQ(x->frozen, y->frozen);
        CHECK_EQ(x->melted, y->melted);
        CHECK_EQ(x->shared, y->shared);
        CHECK_EQ(x->unsettled, y->unsettled);
        CHECK_EQ(x->accesses, y->accesses);
        CHECK_EQ(x->remote_before, y->remote_before);
        CHECK_EQ(x->remote_after, y->remote_after);
        CHECK_EQ(x->huge_migrated, y->huge_migrated);
        CHECK_EQ(x->huge_split, y->huge_split);
        CHECK_EQ(x->huge_collapsed, y->huge_collapsed);
        CHECK(x->factor == y->factor);
        *melted += x->melted;
        *frozen += x->frozen;
        *settled += settled_chunks(a.h);
        CHECK_EQ(settled_chunks(b.h), 0); /* only the fast path settles */
        bad_pages += memcmp(a.h->pages, b.h->pages, np * sizeof *a.h->pages) != 0;
        /* the counts and the chunks' words, but the settled home, which
         * only the fast path sets */
        const size_t words = UNIT * ph_hot_page_words(a.h) + PH_HOT_EVIDENCE;
        const uint32_t keep = ~(uint32_t)PH_EV_HOME;
        for (size_t ch = 0; ch < a.h->nchunks; ch++) {
            const uint32_t *ca = a.h->chunks[ch], *cb = b.h->chunks[ch];
            bad_counts += (!ca != !cb) ||
                          (ca && (memcmp(ca, cb, words * sizeof *ca) != 0 ||
                                  (ca[words] & keep) != (cb[words] & keep)));
            bad_adj += a.h->adj_pairs[ch] != b.h->adj_pairs[ch] ||
                       a.h->adj_agree[ch] != b.h->adj_agree[ch] ||
                       a.h->adj_chance[ch] != b.h->adj_chance[ch];
        }
        bad_units += a.h->nunits != b.h->nunits ||
                     (a.h->nunits &&
                      memcmp(a.h->unit_state, b.h->unit_state, a.h->nunits) != 0);
        CHECK_EQ(ph_engine_query(a.e, np, addr, home), 0);
        CHECK_EQ(ph_engine_query(b.e, np, addr_b, home_b), 0);
        bad_homes += memcmp(home, home_b, np * sizeof *home) != 0;
    }
    (void)n;
    CHECK_EQ(bad_pages, 0);
    CHECK_EQ(bad_counts, 0);
    CHECK_EQ(bad_adj, 0);
    CHECK_EQ(bad_units, 0);
    CHECK_EQ(bad_homes, 0);
    CHECK_EQ(b.e->fast_blocks, 0);
    *fast += a.e->fast_blocks;
    free(kind);
    free(addr), free(addr_b), free(home), free(home_b);
    twin_close(&a);
    twin_close(&b);
}

/* A chunk becomes settled only when every page keeps the promise: one
 * with a frozen page at home takes the fast path, which melts the page
 * in time, and is settled only after that; a move breaks it again. */
static void test_settle_after_melt(void)
{
    ph_os *os = ph_os_sim_open(topo);
    ph_mover *mv = ph_mover_new(os, &mover_cfg);
    const size_t np = 2 * UNIT;
    char *mem = ph_os_map(os, np * PG, 2u << 20, PH_MAP_NO_THP);
    CHECK(os && mv && mem);
    if (!os || !mv || !mem)
        goto out;
    CHECK_EQ(ph_os_populate_on(os, mem, np * PG, topo->nodes[1].id), 0);
    ph_engine_cfg c = rig_engine_cfg();
    c.stable_after = 0;
    c.cold_after = 0;
    c.melt_iters = 3;
    ph_engine *e = rig_engine_open(topo, os, mv, &c, silent, NULL, 0, 0, 1);
    CHECK(e != NULL);
    ph_hot *h = e ? ph_engine_register(e, mem, np * PG, "settle") : NULL;
    CHECK(h != NULL);
    if (!h) {
        if (e)
            ph_engine_free(e);
        goto out;
    }
    int settled_at = -1;
    for (int r = 1; r <= 12; r++) {
        if (r == 2) /* after the first invocation has learned the homes */
            ph_hot_freeze(h, 5, (uint16_t)(r - 1), 1);
        for (size_t i = 0; i < np; i++)
            CHECK_EQ(ph_hot_add(h, i, 1, 10, 0), 0);
        e->iteration = (uint32_t)r;
        ph_engine_invoke(e, PH_INV_ITERATIVE, 0, 0);
        settled_chunks(h);
        if (h->pages[5].flags & PH_PG_FROZEN)
            CHECK_EQ(ph_hot_chunk_home(h, 0), -1);
        if (settled_at < 0 && ph_hot_chunk_home(h, 0) >= 0)
            settled_at = r;
    }
    CHECK(e->fast_blocks > 0);
    CHECK(!(h->pages[5].flags & PH_PG_FROZEN));
    CHECK(settled_at > 2); /* not while page 5 was frozen */
    CHECK_EQ(ph_hot_chunk_home(h, 0), 1);
    CHECK_EQ(ph_hot_chunk_home(h, 1), 1);
    /* a move of one page breaks its chunk's promise */
    void *pg7 = mem + 7 * PG;
    int to = topo->nodes[2].id, st;
    CHECK(ph_os_move(os, 1, &pg7, &to, &st) >= 0);
    ph_hot_set_home(h, 7, 2);
    CHECK_EQ(ph_hot_chunk_home(h, 0), -1);
    CHECK_EQ(ph_hot_chunk_home(h, 1), 1);
    ph_engine_free(e);
out:
    if (mem)
        ph_os_unmap(os, mem, np * PG);
    if (mv)
        ph_mover_free(mv);
    if (os)
        ph_os_close(os);
}

static void test_fast_path(void)
{
    uint64_t fast = 0, melted = 0, frozen = 0, settled = 0;
    for (uint64_t seed = 1; seed <= 8; seed++)
        fast_case(seed * 0x2545f4914f6cdd1dull, seed % 2 ? 100 : 0,
                  seed % 4 == 0, &fast, &melted, &frozen, &settled);
    /* the cases reach what they are for */
    CHECK(fast > 0);
    CHECK(frozen > 0);
    CHECK(melted > 0);
    CHECK(settled > 0);
    printf("fast path: %llu blocks, %llu pages frozen, %llu melted, "
           "%llu chunks settled after an invocation\n",
           (unsigned long long)fast, (unsigned long long)frozen,
           (unsigned long long)melted, (unsigned long long)settled);
}

int main(void)
{
    topo = ph_topo_load("nodes=4,cpus_per_node=1,sockets=2,local=10,"
                        "remote=12,remote_socket=32");
    if (!topo) {
        fprintf(stderr, "topology: %s\n", ph_error_message());
        return 1;
    }
    test_fresh_counter();
    test_add_samples();
    test_at_home_bits();
    test_settled_home();
    test_settle_after_melt();
    test_fast_path();
    for (uint64_t seed = 1; seed <= 24; seed++)
        one_case(seed * 0x9e3779b97f4a7c15ull, seed % 2 ? 100 : 0,
                 seed % 3 == 0);
    ph_topo_free(topo);
    return check_summary("test_engine_scan");
}
