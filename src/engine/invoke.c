/*
 * invoke.c -- one invocation of the page migration algorithm (UPMlib,
 * Figure 1 of the ICS 2000 paper), over every hot area:
 *
 *   for each hot area that is not cold:
 *     for each page sampled in the interval:
 *       melt it if it was frozen long enough; skip it if still frozen;
 *       candidate target = predictive criterion (after a thread migration)
 *                          or competitive criterion (otherwise);
 *       competitive: a move back to where the page came from freezes it
 *       (ping-pong prevention) instead of moving it;
 *     (2 MiB pages first, as a whole: huge.c);
 *     keep the n most critical candidates when a cap is set;
 *     migrate the candidates in batches (the mover sorts them by target);
 *     feed the per-page results back into the bookkeeping;
 *     self-tune: raise the area's factor when its remote latency grew;
 *     mark the area cold after cold_after invocations without candidates.
 *   if the predictive criterion found nothing anywhere, return to the
 *   competitive criterion.
 *
 * Homes: the engine keeps the home of every page it scanned, and asks the
 * OS (query) again for all of them every PH_HOME_REFRESH scans of an area:
 * other code (the kernel's balancing, the program, ph_place) may have
 * moved them.
 *
 * The cost per hot page (bench/README.md, bench_engine): an area is one
 * pass over its blocks (a 2 MiB unit wholly inside it, or else a chunk of
 * 512 pages of its bookkeeping), each block's counts read while they are
 * in the cache: the scan lists its sampled pages and their homes, huge.c
 * decides its unit, the 4 KiB algorithm runs on the rest, and the chunks
 * the block completes roll their counts (those holding candidates after
 * the moves, which still read them).  A page whose accesses all came from
 * its home, in this interval and in the evidence, takes a fast path: no
 * criterion can send it anywhere, so none runs.  A block whose sampled
 * pages all do (most blocks of a program whose pages are where they
 * belong) is not listed at all: fast_block counts it, keeps the
 * neighbours' agreement and rolls its chunk in one loop, without even a
 * look at each page first when the chunk's bits promise that every count
 * came from its page's home (the ingest and the roll keep them, and a
 * change of home clears the promise: hot.h), nor a read of their
 * ph_page when all its pages are settled at one home.  Chunks without
 * a sample in the interval are not scanned (hot.h keeps a count per
 * chunk), nor rolled once their evidence is gone.  The decisions are
 * those of the plain sequence -- scan all, 2 MiB units, 4 KiB pages,
 * moves, roll -- which tests/unit/test_engine_scan.c checks, and it runs
 * the fast path beside the general one over many intervals.
 */
#include "engine/engine_int.h"

#include "base/clock.h"
#include "base/log.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every this many scans of an area, the homes of its sampled pages are
 * asked of the OS again instead of taken from the bookkeeping. */
#define PH_HOME_REFRESH 8

/* Sampling mechanism (ph_crit_settled): the share of a page's accesses
 * over the run its target must exceed (a page moved before: the larger
 * one), and the samples the page must have had. */
#define SAMPLING_MIN_SHARE 0.5
#define SAMPLING_MOVED_SHARE 0.75
#define SAMPLING_MIN_SAMPLES 2

/* Neighbourhood evidence.  Uniformly shared (ph_crit_uniform_shared):
 * the pages of a 512-page chunk with two samples or more it needs.  A
 * page with one sample moves on its neighbours' word
 * (ph_crit_hood_agrees): the pages within HOOD_RADIUS of it, of which at
 * least HOOD_MIN_SAMPLED sampled and HOOD_AGREE_SHARE of those with the
 * target as their dominant node. */
#define HOOD_MIN_MULTI 8
#define HOOD_RADIUS 16
#define HOOD_MIN_SAMPLED 16
#define HOOD_AGREE_SHARE 0.75

/* Work arrays of one area's invocation.  Kept by the engine between
 * invocations (e->work): regrowing them at every invocation cost about a
 * quarter of a hot area's scan. */
typedef struct ph_work {
    /* the candidates, in page order */
    size_t n, cap;
    size_t *idx;      /* page index in the area */
    void **addr;
    int *home;        /* node index or negative errno */
    int *target;
    double *ratio;
    int *status;
    size_t *order, *scratch;
    /* the sampled pages of one block (the whole area for the sampling
     * mechanism, which looks at all of them before deciding any) */
    size_t sn, scap;
    size_t *sidx;
    int *shome;
    /* chunks holding candidates, in order: rolled after the moves */
    size_t nlater, cap_later;
    size_t *later;
    ph_huge_moves hmv;
} work;

static void work_free(work *w)
{
    free(w->idx);
    free(w->addr);
    free(w->home);
    free(w->target);
    free(w->ratio);
    free(w->status);
    free(w->order);
    free(w->scratch);
    free(w->sidx);
    free(w->shome);
    free(w->later);
    ph_huge_moves_free(&w->hmv);
    memset(w, 0, sizeof *w);
}

#define GROW(w, f, cap)                                                      \
    do {                                                                     \
        void *p_ = realloc((w)->f, (cap) * sizeof *(w)->f);                  \
        if (!p_)                                                             \
            return -1;                                                       \
        (w)->f = p_;                                                         \
    } while (0)

static int work_grow(work *w, size_t need)
{
    if (need <= w->cap)
        return 0;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < need)
        cap *= 2;
    GROW(w, idx, cap);
    GROW(w, addr, cap);
    GROW(w, home, cap);
    GROW(w, target, cap);
    GROW(w, ratio, cap);
    GROW(w, status, cap);
    GROW(w, order, cap);
    GROW(w, scratch, cap);
    w->cap = cap;
    return 0;
}

static int list_grow(work *w, size_t need)
{
    if (need <= w->scap)
        return 0;
    size_t cap = w->scap ? w->scap : PH_HOT_CHUNK_PAGES;
    while (cap < need)
        cap *= 2;
    GROW(w, sidx, cap);
    GROW(w, shome, cap);
    w->scap = cap;
    return 0;
}

/* Chunk c holds a candidate (called in page order). */
static int later_add(work *w, size_t c)
{
    if (w->nlater && w->later[w->nlater - 1] == c)
        return 0;
    if (w->nlater == w->cap_later) {
        size_t cap = w->cap_later ? 2 * w->cap_later : 64;
        GROW(w, later, cap);
        w->cap_later = cap;
    }
    w->later[w->nlater++] = c;
    return 0;
}
#undef GROW

int ph_engine_query(ph_engine *e, size_t n, void **pages, int *home)
{
    size_t batch = 4096;
    for (size_t off = 0; off < n; off += batch) {
        size_t k = n - off < batch ? n - off : batch;
        if (ph_os_query(e->os, k, pages + off, home + off) != 0)
            return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (home[i] >= 0)
            home[i] = ph_topo_node_index(e->topo, home[i]);
    return 0;
}

void ph_engine_add_failures(ph_invocation *inv, const ph_move_stats *ms)
{
    inv->failed_busy += ms->failed_busy;
    inv->failed_nomem += ms->failed_nomem;
    inv->failed_access += ms->failed_access;
    inv->failed_fault += ms->failed_fault;
    inv->failed_other += ms->failed_other + ms->outvoted;
    inv->failed += ms->failed_busy + ms->failed_nomem + ms->failed_access +
                   ms->failed_fault + ms->failed_other + ms->outvoted;
}

uint64_t ph_engine_move(ph_engine *e, size_t n, void **pages,
                        const int *to_idx, int *status, ph_invocation *inv)
{
    if (n == 0)
        return 0;
    int *to_os = malloc(n * sizeof *to_os);
    if (!to_os) {
        inv->failed += n;
        inv->failed_other += n;
        for (size_t i = 0; i < n; i++)
            status[i] = -ENOMEM;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        to_os[i] = e->topo->nodes[to_idx[i]].id;
    ph_move_stats ms;
    uint64_t t0 = ph_now_ns();
    ph_mover_move(e->mover, n, pages, to_os, status, &ms);
    inv->move_ns += ph_now_ns() - t0;
    free(to_os);
    ph_engine_add_failures(inv, &ms);
    uint64_t moved = 0;
    for (size_t i = 0; i < n; i++) {
        if (status[i] >= 0)
            status[i] = ph_topo_node_index(e->topo, status[i]);
        if (status[i] == to_idx[i])
            moved++;
        /* the bookkeeping learns where the page is now */
        ph_hot *h = ph_engine_find_locked(e, (uintptr_t)pages[i]);
        if (!h)
            continue;
        size_t at = ((uintptr_t)pages[i] - h->base) / 4096;
        if (status[i] >= 0)
            ph_hot_set_home(h, at, status[i]);
        else if (status[i] == -ENOENT || status[i] == -EFAULT)
            ph_hot_set_home(h, at, -1);
    }
    return moved;
}

/* Remote accesses of a page with the given home (all accesses when the
 * home is unknown). */
static uint64_t remote_of(const uint32_t *acc, int n, int home)
{
    uint64_t r = 0;
    for (int i = 0; i < n; i++)
        if (i != home)
            r += acc[i];
    return r;
}

/* The area's self-tuning metric: the largest, over accessing nodes, of
 * the estimated latency due to that node's remote accesses to the
 * area, per sampled access (so that intervals that sampled different
 * numbers of pages compare). */
static double area_metric(const double *per_node, int n, uint64_t samples)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        if (per_node[i] > m)
            m = per_node[i];
    return samples ? m / (double)samples : 0.0;
}

static void add_remote_latency(const ph_engine *e, const uint32_t *acc,
                               int home, double *per_node)
{
    int n = e->nnodes;
    int c = ph_crit_contention(acc, n, home);
    for (int i = 0; i < n; i++) {
        if (i == home || !acc[i])
            continue;
        double rc = e->lat_ns[i * n + home] + e->cfg.contention_ns * c;
        per_node[i] += (double)acc[i] * rc;
    }
}

/* The state of one area's pass (invoke_area). */
typedef struct pass {
    ph_invocation inv;
    int kind;
    int refresh;             /* homes asked of the OS for every page */
    int skewed;              /* sampling: the interval moves nothing */
    uint16_t now;
    uint32_t unit;           /* accesses a sample stands for */
    double per_node[PH_MAX_NODES];
    size_t m;                /* candidates in w */
    /* the scan: the chunk it is in, and its sampled pages not yet seen */
    size_t scan_chunk;
    uint32_t scan_left;
    /* the rolls: the next chunk to roll, the next of w->later to pass */
    size_t roll_next, later_pos;
    /* the neighbourhood of the chunk hood_chunk, made when a page of it
     * first has a target (most pages at home need none) */
    ph_crit_hood hood;
    size_t hood_chunk;
    int hood_shared;
    /* the chunks' agreement of neighbours, this interval's pairs added,
     * with the pairs that agree by chance given the interval's mix of
     * nodes (ph_crit_chance of the area's accesses in it; whole pairs
     * added, the fraction carried).  The chance and the carry are fixed
     * point, CHANCE_ONE = 1: every sampled page adds to the carry, and in
     * floating point that chain (add, truncate, convert back, subtract:
     * each step waits for the one before) held a fifth of the profile's
     * samples in the fast path. */
    size_t adj_chunk;
    int adj_last;
    uint64_t chance, chance_carry;
} pass;

#define CHANCE_SHIFT 32
#define CHANCE_ONE ((uint64_t)1 << CHANCE_SHIFT)

/* ph_crit_chance's probability p in [0, 1] in CHANCE_ONE units. */
static uint64_t chance_fixed(double p)
{
    if (!(p > 0))
        return 0;
    if (p >= 1)
        return CHANCE_ONE;
    return (uint64_t)(p * (double)CHANCE_ONE + 0.5);
}

/* One pair's chance added to the carry: the whole pairs it completes. */
static inline uint32_t chance_add(uint64_t *carry, uint64_t chance)
{
    uint64_t c = *carry + chance;
    *carry = c & (CHANCE_ONE - 1);
    return (uint32_t)(c >> CHANCE_SHIFT);
}

/* The counts of page i of h (its chunk has them). */
static inline uint32_t *counts_at(const ph_hot *h, size_t i, size_t pw)
{
    return h->chunks[i / PH_HOT_CHUNK_PAGES] + (i % PH_HOT_CHUNK_PAGES) * pw;
}

/* The blocks a pass goes through: the 2 MiB units wholly inside the area
 * (huge.c decides a unit on all its sampled pages at once) and, outside
 * them, the chunks; none is longer than PH_HOT_CHUNK_PAGES.  The end of
 * the block from b0; *u its unit, SIZE_MAX none. */
static size_t block_end(const ph_hot *h, size_t b0, size_t *u)
{
    size_t ufirst = h->unit_first, uend = ufirst + h->nunits * PH_HOT_CHUNK_PAGES;
    if (h->nunits && b0 >= ufirst && b0 < uend) {
        *u = (b0 - ufirst) / PH_HOT_CHUNK_PAGES;
        return b0 + PH_HOT_CHUNK_PAGES;
    }
    *u = SIZE_MAX;
    size_t b1 = (b0 / PH_HOT_CHUNK_PAGES + 1) * PH_HOT_CHUNK_PAGES;
    if (h->nunits && b0 < ufirst && b1 > ufirst)
        b1 = ufirst;
    return b1 < h->npages ? b1 : h->npages;
}

/* Append the pages of [b0, b1) sampled in this interval to w's list, with
 * their homes; a unit (u) goes to huge.c first, and leaves the list when
 * it takes it.  Chunks without a sample this interval are not looked at,
 * and a chunk's scan stops at its last sampled page. */
static int scan_block(ph_engine *e, ph_hot *h, work *w, pass *ps, size_t b0,
                      size_t b1, size_t u)
{
    const int n = e->nnodes;
    const size_t pw = ph_hot_stride(h);
    size_t start = w->sn;
    /* Homes: the bookkeeping's where known (the engine's own moves keep
     * it right), the OS's for the rest, and the OS's for all of them
     * every PH_HOME_REFRESH scans of the area, so that moves made by
     * others (the program, the kernel) are noticed.  Querying every page
     * at every invocation would cost a move_pages entry per sampled page.
     * Where the engine first found each page, before it moved any, is
     * kept too. */
    void *qa[PH_HOT_CHUNK_PAGES];
    size_t qj[PH_HOT_CHUNK_PAGES];
    int qs[PH_HOT_CHUNK_PAGES];
    size_t nq = 0;
    for (size_t p0 = b0; p0 < b1;) {
        size_t c = p0 / PH_HOT_CHUNK_PAGES;
        size_t p1 = (c + 1) * PH_HOT_CHUNK_PAGES;
        if (p1 > b1)
            p1 = b1;
        uint32_t *b = h->chunks[c];
        if (c != ps->scan_chunk) {
            ps->scan_chunk = c;
            ps->scan_left = b ? ph_hot_chunk_meta(h, b)[PH_HOT_FRESH] : 0;
        }
        /* every page left in the chunk sampled (a hot chunk): no need to
         * look at their counts here */
        size_t chunk_end = (c + 1) * PH_HOT_CHUNK_PAGES;
        if (chunk_end > h->npages)
            chunk_end = h->npages;
        int all = ps->scan_left == chunk_end - p0;
        for (size_t i = p0; i < p1 && ps->scan_left; i++) {
            if (!all) {
                if (!ph_cnt_or(b + (i % PH_HOT_CHUNK_PAGES) * pw, n))
                    continue;
            }
            ps->scan_left--;
            size_t j = w->sn++;
            w->sidx[j] = i;
            ph_page *pg = &h->pages[i];
            if (!ps->refresh && (pg->flags & PH_PG_HOME_KNOWN)) {
                w->shome[j] = pg->home;
                if (pg->first_home < 0 && pg->home >= 0 &&
                    !(pg->flags & PH_PG_MOVED))
                    pg->first_home = pg->home;
            } else {
                qj[nq] = j;
                qa[nq] = (void *)(h->base + i * 4096);
                nq++;
            }
        }
        p0 = p1;
    }
    if (w->sn == start)
        return 0;
    if (nq && ph_engine_query(e, nq, qa, qs) != 0)
        return -1;
    for (size_t q = 0; q < nq; q++) {
        size_t j = qj[q];
        ph_page *pg = &h->pages[w->sidx[j]];
        w->shome[j] = qs[q];
        ph_hot_set_home(h, w->sidx[j], qs[q]);
        if (qs[q] >= 0 && pg->first_home < 0 && !(pg->flags & PH_PG_MOVED))
            pg->first_home = (int8_t)qs[q];
    }
    /* 2 MiB pages first: moved whole, split, or collapsed (huge.c); the
     * 4 KiB algorithm gets the rest */
    if (u != SIZE_MAX &&
        ph_engine_huge_unit(e, h, u, w->sn - start, w->sidx + start,
                            w->shome + start, &w->hmv, &ps->inv))
        w->sn = start;
    return 0;
}

/* Roll the chunks before chunk `upto` not rolled yet, but those holding
 * candidates (w->later: rolled after the moves, which read their counts). */
static void roll_done(ph_hot *h, work *w, pass *ps, size_t upto)
{
    while (ps->roll_next < upto) {
        size_t c = ps->roll_next++;
        while (ps->later_pos < w->nlater && w->later[ps->later_pos] < c)
            ps->later_pos++;
        if (ps->later_pos < w->nlater && w->later[ps->later_pos] == c)
            continue;
        ph_hot_roll_chunk(h, c);
    }
}

/* Keep the cap most critical of the candidates in w (compacting w's
 * target/addr/idx arrays to them).  Candidates are w[0..m). */
static size_t keep_critical(work *w, size_t m, size_t cap)
{
    if (cap == 0 || m <= cap)
        return m;
    size_t k = ph_crit_most_critical(w->ratio, m, -1.0, cap, w->order,
                                     w->scratch);
    /* order[] holds the kept indexes, highest first; keep address order
     * for the mover's batches. */
    for (size_t j = 0; j < k; j++)
        w->scratch[j] = w->order[j];
    /* simple insertion sort of k kept indexes (k is the cap) */
    for (size_t a = 1; a < k; a++) {
        size_t v = w->scratch[a], b = a;
        while (b > 0 && w->scratch[b - 1] > v) {
            w->scratch[b] = w->scratch[b - 1];
            b--;
        }
        w->scratch[b] = v;
    }
    for (size_t j = 0; j < k; j++) {
        size_t s = w->scratch[j];
        w->idx[j] = w->idx[s];
        w->addr[j] = w->addr[s];
        w->home[j] = w->home[s];
        w->target[j] = w->target[s];
        w->ratio[j] = w->ratio[s];
    }
    return k;
}

/* The neighbourhood of pages [first, last) of h: the whole-run counts
 * (cumulative plus this interval) of its sampled pages. */
static void hood_of(ph_engine *e, ph_hot *h, size_t first, size_t last,
                    ph_crit_hood *hd)
{
    int n = e->nnodes;
    uint32_t unit = e->cfg.sample_weight ? e->cfg.sample_weight : 1;
    ph_crit_hood_clear(hd);
    if (last > h->npages)
        last = h->npages;
    for (size_t p = first; p < last; p++) {
        uint32_t *cnt = ph_hot_counts(h, p, 0);
        if (!cnt) { /* a chunk without counts */
            p = (p / PH_HOT_CHUNK_PAGES + 1) * PH_HOT_CHUNK_PAGES - 1;
            continue;
        }
        const uint32_t *cur = ph_cnt_cur(cnt, n), *cum = ph_cnt_cum(cnt, n);
        uint32_t tot[PH_MAX_NODES];
        for (int k = 0; k < n; k++)
            tot[k] = cum[k] > UINT32_MAX - cur[k] ? UINT32_MAX : cum[k] + cur[k];
        ph_crit_hood_add(hd, tot, cur, n, unit);
    }
    /* neighbours' agreement over every interval, not this one's alone: in
     * one interval a few threads may take most first touches (the others
     * descheduled), and a table read at random then looks owned */
    size_t c = first / PH_HOT_CHUNK_PAGES;
    if (c < h->nchunks && last - first == PH_HOT_CHUNK_PAGES) {
        hd->pairs = h->adj_pairs[c];
        hd->agree = h->adj_agree[c];
        hd->chance = h->adj_chance[c];
    }
}

/* The accesses in a page's counts t[0..n). */
static uint64_t tot_samples(const uint32_t *t, int n)
{
    uint64_t s = 0;
    for (int k = 0; k < n; k++)
        s += t[k];
    return s;
}

/* The pages within HOOD_RADIUS of page i of h agree that target owns
 * them (ph_crit_hood_agrees on their latest interval). */
static int near_agrees(ph_engine *e, ph_hot *h, size_t i, int target)
{
    ph_crit_hood near;
    hood_of(e, h, i > HOOD_RADIUS ? i - HOOD_RADIUS : 0, i + HOOD_RADIUS + 1,
            &near);
    return ph_crit_hood_agrees(&near, e->nnodes, target, HOOD_MIN_SAMPLED,
                               HOOD_AGREE_SHARE);
}

/* A frozen page melts when it was frozen long enough. */
static void melt(const ph_engine *e, ph_page *pg, pass *ps)
{
    if ((pg->flags & PH_PG_FROZEN) &&
        ph_crit_melts(pg->frozen_since, ps->now,
                      ph_crit_melt_after(e->cfg.melt_iters, pg->freezes))) {
        pg->flags &= (uint8_t)~PH_PG_FROZEN;
        /* a melted page starts afresh: judged against its previous
         * home it would freeze again on the very move it needs when
         * its users really changed */
        pg->prev_home = -1;
        ps->inv.melted++;
    }
}

/* The end of the piece of [p0, b1) in p0's chunk. */
static inline size_t piece_end(size_t p0, size_t b1)
{
    size_t end = (p0 / PH_HOT_CHUNK_PAGES + 1) * PH_HOT_CHUNK_PAGES;
    return end < b1 ? end : b1;
}

/* The fast path for a block [b0, b1) of a fused pass (a chunk, or a
 * 2 MiB unit of 4 KiB pages that huge.c would pass on untouched) whose
 * sampled pages all had their accesses, in this interval and in the
 * evidence, from their homes, and whose homes the bookkeeping knows (not
 * a refresh): the 4 KiB algorithm would only count them, add their
 * neighbours' agreement, and melt the frozen ones -- done here in page
 * order without listing them.  A first loop checks every sampled page
 * of a chunk whose bits (PH_EV_AWAY, PH_CUR_AWAY: hot.h) do not promise
 * it already, a second does the work; 0 (nothing done) as soon as one
 * page needs the general path.  A chunk the block
 * holds whole, every page of it sampled, is also rolled in the second
 * loop (no candidate reads its counts later), so ph_hot_roll_chunk does
 * not read them all again; when every page it saw kept the promise of
 * one settled home (hot.h: PH_EV_HOME), the chunk is marked settled, and
 * later passes and the ingest take the pages' homes from that mark
 * without reading their ph_page.  The same results as scan_block, decide_list
 * and the roll: tests/unit/test_engine_scan.c runs both side by side.
 * The state the loop updates is kept in locals: the stores into the
 * ph_page bytes would make the compiler reload every field. */
static int fast_block(ph_engine *e, ph_hot *h, pass *ps, size_t b0,
                      size_t b1)
{
    if (ps->refresh)
        return 0;
    const int n = e->nnodes;
    const size_t pw = ph_hot_stride(h);
    for (size_t p0 = b0, p1; p0 < b1; p0 = p1) {
        size_t c = p0 / PH_HOT_CHUNK_PAGES;
        p1 = piece_end(p0, b1);
        uint32_t *b = h->chunks[c];
        if (!b || !ph_hot_chunk_meta(h, b)[PH_HOT_FRESH])
            continue;
        /* the chunk's bits promise it: no page needs a look (hot.h) */
        if (!(ph_hot_chunk_meta(h, b)[PH_HOT_EVIDENCE] &
              (PH_EV_AWAY | PH_CUR_AWAY)))
            continue;
        const uint32_t *cur = b + (p0 % PH_HOT_CHUNK_PAGES) * pw;
        const uint32_t *end = b + PH_HOT_CHUNK_PAGES * pw;
        const int settled = ph_hot_chunk_home(h, c);
        for (size_t i = p0; i < p1; i++, cur += pw) {
            /* the lines ahead, and this page's cumulative counts, which
             * the second loop reads */
            ph_hot_prefetch(cur, end, n, 0);
            __builtin_prefetch(ph_cnt_cum((uint32_t *)cur, n), 1, 3);
            if (!ph_cnt_or(cur, n))
                continue;
            int home = settled;
            if (home < 0) {
                const ph_page *pg = &h->pages[i];
                home = pg->flags & PH_PG_HOME_KNOWN ? pg->home : -1;
            }
            if (home < 0 || !ph_cnt_only(cur, n, home) ||
                !ph_cnt_only(ph_cnt_prev((uint32_t *)cur, n), n, home))
                return 0;
        }
    }
    uint64_t scanned = 0, accesses = 0;
    uint64_t carry = ps->chance_carry;
    const uint64_t chance = ps->chance;
    for (size_t p0 = b0, p1; p0 < b1; p0 = p1) {
        size_t c = p0 / PH_HOT_CHUNK_PAGES;
        p1 = piece_end(p0, b1);
        uint32_t *b = h->chunks[c];
        /* the scan's count of the chunk's sampled pages not seen yet */
        if (c != ps->scan_chunk) {
            ps->scan_chunk = c;
            ps->scan_left = b ? ph_hot_chunk_meta(h, b)[PH_HOT_FRESH] : 0;
        }
        uint32_t left = ps->scan_left;
        if (!left)
            continue;
        size_t cend = (c + 1) * PH_HOT_CHUNK_PAGES < h->npages
                          ? (c + 1) * PH_HOT_CHUNK_PAGES
                          : h->npages;
        const int all = left == cend - c * PH_HOT_CHUNK_PAGES;
        const int roll = all && p0 == c * PH_HOT_CHUNK_PAGES && p1 == cend &&
                         ps->roll_next == c;
        /* neighbours' agreement, as decide_list keeps it: a sampled
         * page's dominant node is its home here */
        if (c != ps->adj_chunk) {
            ps->adj_chunk = c;
            ps->adj_last = -1;
        }
        int last = ps->adj_last;
        uint32_t pairs = h->adj_pairs[c], agree = h->adj_agree[c],
                 chn = h->adj_chance[c];
        uint32_t evidence = 0;
        uint32_t *cur = b + (p0 % PH_HOT_CHUNK_PAGES) * pw;
        const uint32_t *end = b + PH_HOT_CHUNK_PAGES * pw;
        /* a settled chunk's pages need no look at their ph_page (hot.h);
         * otherwise a chunk whose every page is seen here may become
         * settled: plain while each page seen keeps the promise of the
         * first one's home, uni */
        const int settled = ph_hot_chunk_home(h, c);
        int plain = 1, uni = -1;
        for (size_t i = p0; i < p1 && left; i++, cur += pw) {
            /* the first loop did not bring the counts in when the chunk's
             * bits spared it */
            ph_hot_prefetch(cur, end, n, roll);
            if (!all && !ph_cnt_or(cur, n))
                continue;
            left--;
            int home = settled;
            if (home < 0) {
                ph_page *pg = &h->pages[i];
                home = pg->home;
                if (pg->first_home < 0 && !(pg->flags & PH_PG_MOVED))
                    pg->first_home = (int8_t)home;
                if (pg->flags & PH_PG_FROZEN)
                    melt(e, pg, ps);
                if (uni < 0)
                    uni = home;
                plain &= ph_hot_page_settled(pg, uni);
            }
            if (last >= 0) {
                if (pairs == UINT16_MAX) {
                    pairs /= 2;
                    agree /= 2;
                    chn /= 2;
                }
                pairs++;
                agree += home == last;
                chn = (uint16_t)(chn + chance_add(&carry, chance));
            }
            last = home;
            scanned++;
            accesses += cur[home];
            if (roll)
                PH_CNT_BY_NODES(n, evidence |= ph_hot_roll_page(cur, nn_))
        }
        ps->scan_left = left;
        ps->adj_last = last;
        h->adj_pairs[c] = (uint16_t)pairs;
        h->adj_agree[c] = (uint16_t)agree;
        h->adj_chance[c] = (uint16_t)chn;
        if (roll) {
            uint32_t *meta = ph_hot_chunk_meta(h, b);
            meta[PH_HOT_FRESH] = 0;
            /* every page was sampled and had all its accesses, in the
             * interval and in the evidence, from its home */
            meta[PH_HOT_EVIDENCE] = (meta[PH_HOT_EVIDENCE] & PH_EV_HOME) |
                                    (evidence ? PH_EV_LEFT : 0);
            ps->roll_next = c + 1;
            /* every page of the chunk was seen */
            if (settled < 0 && plain && uni >= 0)
                ph_hot_chunk_settle(h, c, uni);
        }
    }
    ps->chance_carry = carry;
    ps->inv.scanned += scanned;
    ps->inv.accesses += accesses;
    return 1;
}

/* The 4 KiB algorithm on the n sampled pages idx/home (page order) of h:
 * its candidates are appended to w (ps->m).  A page whose accesses, in
 * this interval and in the evidence, all came from its home takes the
 * fast path: no criterion can pick a target for it (competitive and
 * predictive need a remote access now, amortised a remote rate), and it
 * adds nothing to the remote latencies.  -1 when out of memory. */
static int decide_list(ph_engine *e, ph_hot *h, work *w, pass *ps,
                       const size_t *idx, const int *homes, size_t nl)
{
    const int n = e->nnodes;
    const size_t pw = ph_hot_stride(h);
    const int kind = ps->kind;
    const uint16_t now = ps->now;
    const uint32_t unit = ps->unit;
    ph_invocation *inv = &ps->inv;
    for (size_t j = 0; j < nl; j++) {
        size_t i = idx[j];
        ph_page *pg = &h->pages[i];
        uint32_t *cnt = counts_at(h, i, pw);
        const uint32_t *cur = ph_cnt_cur(cnt, n);
        int home = homes[j];
        uint64_t sum = ph_cnt_sum(cur, n);
        uint64_t rem = home >= 0 ? sum - cur[home] : sum;
        int dnow = home >= 0 && rem == 0 ? (cur[home] ? home : -1)
                                         : ph_crit_dominant(cur, n);
        if (i / PH_HOT_CHUNK_PAGES != ps->adj_chunk) {
            ps->adj_chunk = i / PH_HOT_CHUNK_PAGES;
            ps->adj_last = -1;
        }
        if (dnow >= 0) {
            size_t ac = ps->adj_chunk;
            if (ps->adj_last >= 0) {
                if (h->adj_pairs[ac] == UINT16_MAX) {
                    h->adj_pairs[ac] /= 2;
                    h->adj_agree[ac] /= 2;
                    h->adj_chance[ac] /= 2;
                }
                h->adj_pairs[ac]++;
                h->adj_agree[ac] += dnow == ps->adj_last;
                h->adj_chance[ac] += (uint16_t)chance_add(&ps->chance_carry,
                                                          ps->chance);
            }
            ps->adj_last = dnow;
        }
        inv->scanned++;
        inv->accesses += sum;
        if (home < 0) {
            inv->remote_before += rem;
            inv->remote_after += rem;
            continue;
        }
        if (pg->home != home)
            ph_hot_set_home(h, i, home);
        if (rem == 0) {
            if (ph_cnt_only(ph_cnt_prev(cnt, n), n, home)) {
                /* the fast path: every access local */
                melt(e, pg, ps);
                continue;
            }
        }
        inv->remote_before += rem;
        add_remote_latency(e, cur, home, ps->per_node);
        melt(e, pg, ps);
        int target = -1;
        double ratio = 0;
        if (!(pg->flags & PH_PG_FROZEN)) {
            if (e->predictive) {
                target = ph_engine_stand_in(
                    e, ph_crit_predictive(cur, ph_cnt_prev(cnt, n), n, home, e->gained),
                    home);
                if (target >= 0)
                    ratio = ph_crit_criticality(cur, n, home, NULL);
            } else {
                target = ph_engine_decide(e, h, cnt, home, &ratio);
                uint32_t tot[PH_MAX_NODES];
                const uint32_t *cum = ph_cnt_cum(cnt, n);
                for (int k = 0; k < n; k++)
                    tot[k] = cum[k] > UINT32_MAX - cur[k] ? UINT32_MAX
                                                          : cum[k] + cur[k];
                if (target >= 0 && i / PH_HOT_CHUNK_PAGES != ps->hood_chunk) {
                    ps->hood_chunk = i / PH_HOT_CHUNK_PAGES;
                    hood_of(e, h, ps->hood_chunk * PH_HOT_CHUNK_PAGES,
                            (ps->hood_chunk + 1) * PH_HOT_CHUNK_PAGES,
                            &ps->hood);
                    for (int k = 0; k < n; k++)
                        ps->hood.share[k] = (double)h->run_acc[k];
                    ps->hood_shared = ph_crit_uniform_shared(&ps->hood, n,
                                                             HOOD_MIN_MULTI);
                }
                /* a page of a table every node reads at random stays
                 * where it is: moving it chases the last sample -- unless
                 * the iterations' rich counts name the same largest
                 * reader every time (ph_crit_shared_steady), or this
                 * iteration's alone name it beyond chance
                 * (ph_crit_shared_dominant: the first iteration has no
                 * past, and a vector its owners write would wait a whole
                 * iteration on the wrong node) */
                if (target >= 0 &&
                    (ps->hood_shared || ph_crit_page_uniform(cur, n, unit)) &&
                    !(kind == PH_INV_ITERATIVE &&
                      (ph_crit_shared_steady(ph_cnt_prev(cnt, n), cur, n,
                                             target, unit) ||
                       ph_crit_shared_dominant(cur, n, target, unit)))) {
                    inv->shared++;
                    target = -1;
                }
                /* the sampling mechanism wakes at arbitrary moments: a
                 * page moves only to the node that dominates its whole
                 * history (two samples, or one its neighbourhood agrees
                 * with); and a page that ping-ponged before (two owners
                 * alternate) moves again only as clearly claimed.  So
                 * does a page that moved before when this interval's
                 * evidence is thin (fewer than 4n samples: the first
                 * touch after the arm, which the owner of another phase
                 * sometimes takes): one such sample sent it once, and
                 * another must not send it again (rich counts still
                 * move it at once) */
                if (target >= 0 && ps->skewed) {
                    inv->unsettled++;
                    target = -1;
                }
                if (target >= 0 &&
                    (kind == PH_INV_SAMPLING || pg->freezes ||
                     (pg->migrations && sum < 4 * (uint64_t)n * unit))) {
                    /* a page moved before must be claimed more clearly */
                    double share = pg->migrations || pg->freezes
                                       ? SAMPLING_MOVED_SHARE
                                       : SAMPLING_MIN_SHARE;
                    uint64_t min_total = (uint64_t)SAMPLING_MIN_SAMPLES * unit;
                    int ok = ph_crit_settled(tot, n, target, share, min_total);
                    if (!ok && kind == PH_INV_SAMPLING && !pg->migrations &&
                        !pg->freezes &&
                        ph_crit_settled(tot, n, target, share, 1)) {
                        ok = near_agrees(e, h, i, target);
                    }
                    /* few samples all from one node, in a chunk whose
                     * pages with two samples are mostly not from one node
                     * (ph_crit_hood_impure): chance, unless the
                     * neighbours agree */
                    if (ok && kind == PH_INV_SAMPLING &&
                        ps->hood_chunk == i / PH_HOT_CHUNK_PAGES &&
                        tot_samples(tot, n) < 4 * (uint64_t)n * unit &&
                        ph_crit_hood_impure(&ps->hood, HOOD_MIN_MULTI)) {
                        ok = near_agrees(e, h, i, target);
                    }
                    if (!ok) {
                        inv->unsettled++;
                        target = -1;
                    }
                }
                target = ph_engine_stand_in(e, target, home);
                if (target >= 0 &&
                    ph_crit_pingpong(home, pg->prev_home, target)) {
                    ph_hot_freeze(h, i, now, 1);
                    inv->frozen++;
                    inv->candidates++;
                    target = -1;
                }
            }
        }
        if (target < 0) {
            inv->remote_after += rem;
            continue;
        }
        inv->candidates++;
        if (work_grow(w, ps->m + 1) != 0 ||
            later_add(w, i / PH_HOT_CHUNK_PAGES) != 0)
            return -1;
        size_t m = ps->m++;
        w->idx[m] = i;
        w->addr[m] = (void *)(h->base + i * 4096);
        w->home[m] = home;
        w->target[m] = target;
        w->ratio[m] = isinf(ratio) ? 1e300 : ratio;
    }
    return 0;
}

/* invoke_area out of memory: the area is only rolled. */
static uint64_t area_failed(ph_hot *h, work *w, pass *ps, int fused)
{
    ph_warn("engine: out of memory scanning hot area \"%s\"", h->name);
    if (fused) {
        roll_done(h, w, ps, h->nchunks);
        for (size_t k = 0; k < w->nlater; k++)
            ph_hot_roll_chunk(h, w->later[k]);
        memset(h->now_acc, 0, sizeof h->now_acc);
    } else {
        ph_hot_roll(h);
    }
    w->hmv.n = 0;
    return 0;
}

/* The share of an interval's samples each node is expected to take when
 * the area has no history to compare with (the sampling mechanism's
 * first interval): its threads in the team, as ph_engine_note_thread
 * last placed them; one each when no thread is known.  Without it, a
 * first interval in which one node's threads ran and the others' hardly
 * did (a loaded machine) is its own baseline and never skewed, and the
 * few samples of a table every node reads, nearly all from that node,
 * agree with their neighbours and move (measured: 3.3% of xsbench's
 * table, and 77 of 1024 pages in test_engine's model of it). */
static void team_shares(const ph_engine *e, uint64_t *out)
{
    int n = e->nnodes, known = 0;
    for (int k = 0; k < n; k++)
        out[k] = 0;
    for (int t = 0; t < e->nthreads && t < PH_MAX_THREADS; t++)
        if (e->thr[t].stable >= 0 && e->thr[t].stable < n) {
            out[e->thr[t].stable]++;
            known++;
        }
    if (known == 0)
        for (int k = 0; k < n; k++)
            out[k] = 1;
}

/* The algorithm on one area, and the roll of its counts.  Returns
 * migrations; *found gets the number of candidates.
 *
 * One pass over the area's blocks (block_end) does, for each, the scan of
 * its sampled pages, huge.c's unit, the 4 KiB algorithm, and the roll of
 * the chunks it completes, while their counts are in the cache; the
 * chunks that hold candidates are rolled after the moves.  The sampling
 * mechanism looks at all the area's sampled pages first (whether one node
 * dominated the interval: ph_crit_interval_skewed) and a page's
 * neighbourhood may lie in the chunk before: it scans the whole area,
 * decides, moves, then rolls, in three passes. */
static uint64_t invoke_area(ph_engine *e, ph_hot *h, work *w, int kind,
                            size_t *left, uint64_t sampler_ns,
                            size_t *found, uint64_t hot_total)
{
    int n = e->nnodes;
    uint64_t t0 = ph_now_ns();
    pass *ps = &(pass){
        .inv = {.seq = e->seq, .iteration = e->iteration, .kind = kind,
                .predictive = e->predictive, .area_id = h->id, .phase = -1,
                .sampler_ns = sampler_ns},
        .kind = kind,
        .refresh = h->st.invocations % PH_HOME_REFRESH == 0,
        .now = (uint16_t)e->iteration,
        .unit = e->cfg.sample_weight ? e->cfg.sample_weight : 1,
        .scan_chunk = SIZE_MAX,
        .hood_chunk = SIZE_MAX,
        .adj_chunk = SIZE_MAX,
        .adj_last = -1,
        .chance = chance_fixed(ph_crit_chance(h->now_acc, n))};
    const int fused = kind != PH_INV_SAMPLING;
    *found = 0;
    w->n = 0;
    w->sn = 0;
    w->nlater = 0;
    w->hmv.n = 0;
    if (list_grow(w, PH_HOT_CHUNK_PAGES) != 0)
        return area_failed(h, w, ps, fused);
    for (size_t b0 = 0, b1, u; b0 < h->npages; b0 = b1) {
        b1 = block_end(h, b0, &u);
        if (fused)
            w->sn = 0;
        else if (list_grow(w, w->sn + (b1 - b0)) != 0)
            return area_failed(h, w, ps, fused);
        /* a block at home takes the fast path */
        if (fused && !e->general_only &&
            (u == SIZE_MAX || ph_engine_huge_passive(h, u)) &&
            fast_block(e, h, ps, b0, b1)) {
            e->fast_blocks++;
            roll_done(h, w, ps, b1 / PH_HOT_CHUNK_PAGES);
            continue;
        }
        if (scan_block(e, h, w, ps, b0, b1, u) != 0)
            return area_failed(h, w, ps, fused);
        if (fused) {
            if (decide_list(e, h, w, ps, w->sidx, w->shome, w->sn) != 0)
                return area_failed(h, w, ps, fused);
            roll_done(h, w, ps, b1 / PH_HOT_CHUNK_PAGES);
        }
    }
    ph_engine_huge_moves(e, h, &w->hmv, &ps->inv);
    if (fused) {
        roll_done(h, w, ps, h->nchunks);
    } else {
        /* the sampling mechanism: an interval one node dominated (the
         * others did not run much) moves nothing */
        uint64_t now_t[PH_MAX_NODES] = {0}, run_t[PH_MAX_NODES] = {0};
        const size_t pw = ph_hot_stride(h);
        for (size_t j = 0; j < w->sn; j++) {
            uint32_t *cnt = counts_at(h, w->sidx[j], pw);
            const uint32_t *cur = ph_cnt_cur(cnt, n), *cum = ph_cnt_cum(cnt, n);
            for (int k = 0; k < n; k++) {
                now_t[k] += cur[k];
                run_t[k] += (uint64_t)cum[k] + cur[k];
            }
        }
        uint64_t sum_now = 0, sum_run = 0;
        for (int k = 0; k < n; k++) {
            sum_now += now_t[k];
            sum_run += run_t[k];
        }
        /* the area's first interval is its whole run: it is weighed
         * against the team instead */
        if (sum_run == sum_now)
            team_shares(e, run_t);
        ps->skewed = ph_crit_interval_skewed(now_t, run_t, n);
        if (decide_list(e, h, w, ps, w->sidx, w->shome, w->sn) != 0)
            return area_failed(h, w, ps, fused);
    }
    ph_invocation inv = ps->inv;
    size_t m = ps->m;
    const double *per_node = ps->per_node;
    const size_t pw = ph_hot_stride(h);
    *found = (size_t)inv.candidates;
    size_t kept = e->cfg.observe ? 0 : keep_critical(w, m, *left == SIZE_MAX ? 0 : *left);
    if (*left != SIZE_MAX)
        *left -= kept;
    uint64_t moved = ph_engine_move(e, kept, w->addr, w->target, w->status,
                                    &inv);
    for (size_t j = 0; j < kept; j++) {
        size_t i = w->idx[j];
        ph_page *pg = &h->pages[i];
        const uint32_t *cur = counts_at(h, i, pw);
        int now_home = w->status[j] >= 0 ? w->status[j] : w->home[j];
        if (w->status[j] >= 0 && w->status[j] == w->target[j] &&
            w->target[j] != w->home[j]) {
            pg->prev_home = (int8_t)w->home[j];
            ph_hot_set_home(h, i, w->target[j]);
            if (pg->migrations < 255)
                pg->migrations++;
            pg->flags |= PH_PG_MOVED;
        }
        inv.remote_after += remote_of(cur, n, now_home);
    }
    /* pages capped away keep their remote accesses */
    for (size_t j = kept; j < m; j++) {
        const uint32_t *cur = counts_at(h, w->idx[j], pw);
        inv.remote_after += remote_of(cur, n, w->home[j]);
    }
    /* the rest of the roll */
    if (fused) {
        for (size_t k = 0; k < w->nlater; k++)
            ph_hot_roll_chunk(h, w->later[k]);
        memset(h->now_acc, 0, sizeof h->now_acc);
    } else {
        ph_hot_roll(h);
    }
    inv.migrated += moved;
    inv.bytes_moved += moved * 4096;
    moved = inv.migrated;
    /* self-tuning (Figure 1, lines 13-16), once per sweep */
    uint64_t armed = ph_engine_armed_pages(e);
    for (int k = 0; k < n; k++)
        h->sweep_ns[k] += per_node[k];
    h->sweep_samples += inv.accesses;
    double metric = h->prev_remote_ns;
    if (armed - h->sweep_mark >= hot_total && h->sweep_samples) {
        metric = area_metric(h->sweep_ns, n, h->sweep_samples);
        h->factor = ph_crit_selftune(h->prev_remote_ns, metric, h->factor,
                                     e->cfg.tune_step, e->cfg.tune_max);
        h->prev_remote_ns = metric;
        memset(h->sweep_ns, 0, sizeof h->sweep_ns);
        h->sweep_samples = 0;
        h->sweep_mark = armed;
    }
    /* Cold areas count full sweeps of the hot pages without a candidate
     * (with a sampling budget one invocation sees only part of them). */
    if (inv.candidates)
        h->armed_mark = armed;
    uint64_t sweeps = hot_total ? (armed - h->armed_mark) / hot_total : 0;
    int cold = 0;
    h->cold_streak = ph_crit_cold(sweeps ? (unsigned)sweeps - 1 : 0,
                                  (size_t)inv.candidates, e->cfg.cold_after,
                                  &cold);
    if (cold && !h->cold) {
        h->cold = 1;
        /* not scanned any more, so not watched either */
        (void)ph_engine_unwatch(e, h);
        ph_info("engine: hot area \"%s\" is cold", h->name);
        ph_engine_huge_remap(h);
    }
    inv.factor = h->factor;
    inv.remote_ns = metric;
    inv.engine_ns = ph_now_ns() - t0;
    /* the area's counters */
    h->st.invocations++;
    h->st.scanned += inv.scanned;
    h->st.candidates += inv.candidates;
    h->st.migrated += moved;
    h->st.failed_busy += inv.failed_busy;
    h->st.failed_nomem += inv.failed_nomem;
    h->st.failed_access += inv.failed_access;
    h->st.failed_fault += inv.failed_fault;
    h->st.failed_other += inv.failed_other;
    h->st.frozen += inv.frozen;
    h->st.melted += inv.melted;
    h->st.remote_accesses += inv.remote_before;
    h->st.bytes_moved += inv.bytes_moved;
    h->st.huge_migrated += inv.huge_migrated;
    h->st.huge_split += inv.huge_split;
    h->st.huge_collapsed += inv.huge_collapsed;
    if (h->st.invocations <= 2)
        h->st.migrated_first2 += moved;
    ph_engine_log_add(e, &inv);
    return moved;
}

uint64_t ph_engine_invoke(ph_engine *e, int kind, size_t max_moves,
                          uint64_t sampler_ns)
{
    e->seq++;
    ph_engine_plan_remaining(e);
    ph_engine_plan_stand_ins(e);
    if (!e->work && !(e->work = calloc(1, sizeof *e->work))) {
        ph_warn("engine: out of memory for an invocation");
        return 0;
    }
    work *w = e->work;
    w->n = 0;
    uint64_t moved = 0;
    size_t found_all = 0;
    /* pages the invocation may still move: SIZE_MAX = no cap */
    size_t left = max_moves ? max_moves : SIZE_MAX;
    uint64_t hot_total = 0; /* pages the source watches */
    for (size_t a = 0; a < e->nhots; a++)
        if (e->hots[a]->watched)
            hot_total += e->hots[a]->npages;
    for (size_t a = 0; a < e->nhots; a++) {
        ph_hot *h = e->hots[a];
        if ((h->cold && !e->predictive) || left == 0) {
            ph_hot_roll(h);
            continue;
        }
        size_t found = 0;
        /* rolls the area's counts too */
        moved += invoke_area(e, h, w, kind, &left, sampler_ns, &found,
                             hot_total);
        found_all += found;
    }
    if (e->predictive && found_all == 0) {
        e->predictive = 0;
        memset(e->gained, 0, sizeof e->gained);
        ph_info("engine: no page follows the migrated threads any more: "
                "back to the competitive criterion");
    }
    e->tot.invocations++;
    return moved;
}

void ph_engine_invoke_free(ph_engine *e)
{
    if (e->work) {
        work_free(e->work);
        free(e->work);
        e->work = NULL;
    }
}
