/*
 * hot.h -- hot areas and their per-page bookkeeping.
 *
 * A hot area is a range of the program's memory the engine watches and
 * migrates (UPMlib's upmlib_memrefcnt): any 4 KiB aligned range -- heap,
 * static, ph_alloc'd -- with a name for reports.  The range registered is
 * the whole 4 KiB pages inside the caller's [addr, addr+bytes).
 *
 * Bookkeeping, per 4 KiB page:
 *   dense (always, 8 bytes a page)   ph_page: home, previous home,
 *                                    migration count, flags, frozen-since,
 *                                    freezes, first home
 *   counts (only for chunks of 512 pages that ever got a sample)
 *                                    per node: this interval, the evidence
 *                                    of the past intervals (their mean
 *                                    decayed by half an interval:
 *                                    ph_crit_evidence_roll; in a steady
 *                                    pattern the previous interval's
 *                                    counts), cumulative -- uint32 each,
 *                                    in three sections of the chunk,
 *                                    so 12 * nnodes bytes a page, and 8
 *                                    bytes a chunk (pages sampled in the
 *                                    interval; evidence left, bits
 *                                    saying whether every count is from
 *                                    its page's home, and the home all
 *                                    its pages are settled at)
 * A 64 GiB area (16 M pages) costs 128 MiB dense; counts grow only where
 * the sampler looked.  On a 4-node machine a fully sampled page costs
 * 8 + 48 = 56 bytes (1.4% of the page).
 *
 * Per area: the self-tuning factor and its metric, the cold streak and
 * flag, the rotation cursor, statistics.
 *
 * Concurrency: areas are created and destroyed by the engine under its
 * lock (engine.c); nothing here locks.
 */
#ifndef PH_ENGINE_HOT_H
#define PH_ENGINE_HOT_H

#include "pagehome.h"

#include "criteria/amortised.h"
#include "sample/source.h"

#include <stddef.h>
#include <stdint.h>

#define PH_HOT_CHUNK_PAGES 512u
#define PH_HOT_NAME_MAX 64
#define PH_HOT_MAX_NODES 64 /* = PH_MAX_NODES of topo.h */

enum ph_page_flags {
    PH_PG_FROZEN = 1u << 0,  /* ping-pong: stays until it melts */
    PH_PG_HOME_KNOWN = 1u << 1,
    PH_PG_MOVED = 1u << 2    /* moved at least once by the engine */
};

typedef struct ph_page {
    int8_t home;           /* node index, -1 unknown / not resident */
    int8_t prev_home;      /* node index before the last migration, -1 */
    uint8_t migrations;    /* saturating at 255 */
    uint8_t flags;         /* ph_page_flags */
    uint16_t frozen_since; /* engine iteration (mod 2^16) */
    uint8_t freezes;       /* ping-pong freezes so far (saturating) */
    int8_t first_home;     /* node index where the engine first found it
                              (before any move of its own), -1 unknown */
} ph_page;

/* Counters of one area (cumulative since registration). */
typedef ph_area_stats_t ph_hot_stats;

typedef struct ph_hot {
    uintptr_t base;         /* 4 KiB aligned */
    size_t npages;
    char name[PH_HOT_NAME_MAX];
    int id;                 /* registration order, stable */
    int nnodes;
    ph_page *pages;         /* npages */
    /* nchunks; NULL until a sample lands there.  A chunk's counts are
     * followed by two words (PH_HOT_FRESH, PH_HOT_EVIDENCE): its pages
     * with a sample in this interval (ph_hot_add_samples counts a page
     * when its first access of the interval arrives; the roll zeroes it),
     * and whether any page's evidence may be non-zero.  A chunk with
     * neither is skipped by the scan and the roll (rolling it changes
     * nothing). */
    uint32_t **chunks;
    size_t nchunks;
    /* per chunk, over every interval: consecutive pages sampled in the
     * same interval, those whose dominant nodes agreed, and how many of
     * them would have agreed by chance given the interval's mix of nodes
     * (the neighbourhood evidence of invoke.c; all halved together when
     * the pairs are full) */
    uint16_t *adj_pairs, *adj_agree, *adj_chance;
    /* accesses of the whole area by node: in this interval (zeroed when
     * the interval's counts are rolled: ph_hot_roll, or the engine after
     * its chunk by chunk rolls) and over the run; kept by
     * ph_hot_add_samples */
    uint64_t now_acc[PH_HOT_MAX_NODES], run_acc[PH_HOT_MAX_NODES];
    /* criteria state of the area */
    double factor;              /* selectiveness (self-tuning) */
    double prev_remote_ns;      /* metric of the last sweep, -1 none */
    /* the metric accumulates over a full sweep of the hot pages (one
     * invocation in full-snapshot mode, several under a budget), so that
     * it compares like with like */
    double sweep_ns[PH_HOT_MAX_NODES];
    uint64_t sweep_samples;
    uint64_t sweep_mark;        /* source's armed_pages at sweep start */
    unsigned cold_streak;       /* full sweeps without a candidate */
    uint64_t armed_mark;        /* source's armed_pages at the last
                                   candidate (or registration) */
    int cold;
    int watched;                /* its range is in the source (not while
                                   cold or idle: such an area costs no
                                   traps) */
    int idle;                   /* its memory is not in use: a freed block
                                   kept for reuse (ph_engine_area_idle) */
    int fresh;                  /* registered (or in use again) since the
                                   last iteration end: engine.c,
                                   adopt_fresh */
    uint64_t fresh_ns;          /* when */
    uint64_t fresh_swept;       /* the source's swept pages then */
    /* 2 MiB units: the 2 MiB-aligned 512-page ranges wholly inside the
     * area, from page index unit_first; state and collapse streak each */
    size_t unit_first, nunits;
    uint8_t *unit_state;        /* ph_unit_state */
    uint8_t *unit_streak;
    uint64_t huge_remapped;     /* units mapped whole again (huge.c) */
    /* a remap under way (huge.c: a few units per serve of the manager) */
    int remap_pending;
    size_t remap_next, remap_done, remap_failed;
    char remap_why[160];        /* the OS's first refusal */
    long hist;                  /* its record in the engine's history, -1 */
    ph_hot_stats st;
} ph_hot;

enum ph_unit_state {
    PH_UNIT_UNKNOWN = 0,   /* not looked at yet */
    PH_UNIT_SMALL = 1,     /* 4 KiB pages (looked again now and then) */
    PH_UNIT_HUGE = 2,      /* one 2 MiB page: managed as a whole */
    PH_UNIT_SPLIT = 3      /* split by the engine: 4 KiB pages */
};

/* New area of npages from base (4 KiB aligned) for nnodes nodes.
 * NULL/ENOMEM. */
ph_hot *ph_hot_new(uintptr_t base, size_t npages, const char *name,
                   int id, int nnodes);
void ph_hot_free(ph_hot *h);

static inline uintptr_t ph_hot_end(const ph_hot *h)
{
    return h->base + h->npages * 4096u;
}

/* Counts of page i: three arrays of nnodes (cur, prev, cum); NULL when
 * the page's chunk has none (create = 0) or cannot be made.  A chunk
 * keeps them in three sections -- every page's cur, then every page's
 * prev, then every page's cum -- so the ingest, which writes cur alone,
 * streams a third of the counts (16 bytes a page at 4 nodes, not 48).
 * The pointer returned is the page's cur; ph_cnt_prev and ph_cnt_cum
 * find the others from it, and pages follow each other every
 * ph_hot_stride words within a section. */
uint32_t *ph_hot_counts(ph_hot *h, size_t i, int create);
static inline uint32_t *ph_cnt_cur(uint32_t *c, int n) { (void)n; return c; }
static inline uint32_t *ph_cnt_prev(uint32_t *c, int n)
{
    return c + PH_HOT_CHUNK_PAGES * (size_t)n;
}
static inline uint32_t *ph_cnt_cum(uint32_t *c, int n)
{
    return c + 2u * PH_HOT_CHUNK_PAGES * (size_t)n;
}

/* The OR and the sum of the n counts at c.  Every hot page's counts go
 * through them at every interval (the ingest, the scan, the decision's
 * fast path), so the common node counts get n as a constant and the loop
 * unrolls to a few loads. */
#define PH_CNT_BY_NODES(n, expr)                                             \
    switch (n) {                                                             \
    case 2: { const int nn_ = 2; expr; } break;                              \
    case 4: { const int nn_ = 4; expr; } break;                              \
    case 8: { const int nn_ = 8; expr; } break;                              \
    default: { const int nn_ = (n); expr; } break;                           \
    }
static inline uint32_t ph_cnt_or(const uint32_t *c, int n)
{
    uint32_t a = 0;
    PH_CNT_BY_NODES(n, for (int k = 0; k < nn_; k++) a |= c[k])
    return a;
}
static inline uint64_t ph_cnt_sum(const uint32_t *c, int n)
{
    uint64_t a = 0;
    PH_CNT_BY_NODES(n, for (int k = 0; k < nn_; k++) a += c[k])
    return a;
}
/* Whether every count at c but c[k] is zero (0 <= k < n): all the
 * accesses (if any) came from node k. */
static inline int ph_cnt_only(const uint32_t *c, int n, int k)
{
    /* the sum of all (unrolled, no branch per node) against c[k]: the
     * others sum to zero exactly when every one of them is zero */
    return ph_cnt_sum(c, n) == c[k];
}

/* The end of an interval for one page (cur as ph_hot_counts gives it):
 * prev = the evidence rolled with cur (ph_crit_evidence_roll), cum +=
 * cur (saturating), cur = 0.  Returns the OR of the new evidence (0:
 * none left).  Inline: hot.c rolls whole chunks with it, invoke.c the
 * pages of its fast path while their counts are in registers. */
static inline uint32_t ph_hot_roll_page(uint32_t *cur, int n)
{
    uint32_t *prev = ph_cnt_prev(cur, n), *cum = ph_cnt_cum(cur, n);
    ph_crit_evidence_roll(prev, cur, n);
    uint32_t left = 0;
    for (int k = 0; k < n; k++) {
        cum[k] = cum[k] > UINT32_MAX - cur[k] ? UINT32_MAX : cum[k] + cur[k];
        cur[k] = 0;
        left |= prev[k];
    }
    return left;
}

/* Passes over a chunk's counts ask for the lines PH_HOT_AHEAD_BYTES
 * ahead of the page they are at (cur: its cur counts; end: the end of
 * the chunk's cur section), in the cur and prev sections, and with
 * cum != 0 in the cumulative one too.  Without it they wait for memory at
 * every line: the sections are streams a chunk apart, each cut at every
 * 4 KiB, which the hardware's prefetchers follow too late.  In
 * bench_engine's hot case the fast path's pass went from 16.0 to 9.8 ns a
 * page with it alone; 256 to 2048 bytes ahead made no difference.  The
 * addresses stay inside the chunk's allocation. */
#define PH_HOT_AHEAD_BYTES 512
static inline void ph_hot_prefetch(const uint32_t *cur, const uint32_t *end,
                                   int n, int cum)
{
    const uint32_t *ahead = cur + PH_HOT_AHEAD_BYTES / sizeof *cur;
    if (ahead >= end)
        return;
    __builtin_prefetch(ahead, 1, 3);
    __builtin_prefetch(ph_cnt_prev((uint32_t *)ahead, n), 1, 3);
    if (cum)
        __builtin_prefetch(ph_cnt_cum((uint32_t *)ahead, n), 1, 3);
}

/* uint32 words between two consecutive pages' counts of one section */
static inline size_t ph_hot_stride(const ph_hot *h)
{
    return (size_t)h->nnodes;
}

/* uint32 words of counts per page (the three sections) */
static inline size_t ph_hot_page_words(const ph_hot *h)
{
    return 3u * (size_t)h->nnodes;
}

/* The words after a chunk's counts (see chunks above).  The evidence
 * word holds bits: PH_EV_LEFT, any page's evidence may be non-zero; and
 * two that say where the chunk's pages may have been accessed from, so
 * that the engine's fast path (invoke.c) need not look at every page's
 * counts to know that all of them came from the pages' homes:
 * PH_EV_AWAY, some page's evidence may hold accesses from elsewhere than
 * its home (set by a roll, which looks at every page, and whenever a
 * page's home changes: ph_hot_set_home); PH_CUR_AWAY, some sample of
 * this interval came from elsewhere than its page's home, or its page's
 * home was not known (set by ph_hot_add_samples and ph_hot_set_home,
 * cleared by the roll).  A bit that is clear is a promise; a set bit only
 * sends the engine to look.
 *
 * Bits 8-15 of the same word (PH_EV_HOME) hold the chunk's settled home
 * plus one: k + 1 promises that every page of the chunk has the known
 * home k, is not frozen and has its first home recorded, so that the
 * ingest and the fast path need not read the pages' ph_page (8 bytes a
 * page of their traffic); 0 promises nothing.  Set by the fast path when
 * it has looked at every page of the chunk (invoke.c), kept by the rolls,
 * broken by any change of a page's home (ph_hot_set_home) and by a freeze
 * (ph_hot_freeze).  A chunk without counts has none: nothing reads it. */
enum { PH_HOT_FRESH = 0, PH_HOT_EVIDENCE = 1, PH_HOT_META_WORDS = 2 };
enum { PH_EV_LEFT = 1u, PH_EV_AWAY = 2u, PH_CUR_AWAY = 4u };
enum { PH_EV_HOME_SHIFT = 8, PH_EV_HOME = 0xffu << PH_EV_HOME_SHIFT };
static inline uint32_t *ph_hot_chunk_meta(const ph_hot *h, uint32_t *b)
{
    return b + PH_HOT_CHUNK_PAGES * ph_hot_page_words(h);
}

/* The settled home in an evidence word, -1 none. */
static inline int ph_ev_home(uint32_t ev)
{
    return (int)((ev & PH_EV_HOME) >> PH_EV_HOME_SHIFT) - 1;
}

/* The settled home of chunk c (see above), -1 none or no counts. */
static inline int ph_hot_chunk_home(const ph_hot *h, size_t c)
{
    uint32_t *b = h->chunks[c];
    return b ? ph_ev_home(ph_hot_chunk_meta(h, b)[PH_HOT_EVIDENCE]) : -1;
}

/* Chunk c (with counts) settled at home k (< 0: not settled). */
static inline void ph_hot_chunk_settle(ph_hot *h, size_t c, int k)
{
    uint32_t *b = h->chunks[c];
    if (!b)
        return;
    uint32_t *ev = &ph_hot_chunk_meta(h, b)[PH_HOT_EVIDENCE];
    *ev = (*ev & ~(uint32_t)PH_EV_HOME) |
          (k >= 0 ? (uint32_t)(k + 1) << PH_EV_HOME_SHIFT : 0u);
}

/* Page i's home is now node index `home`, or not known (home < 0: the
 * home it had is kept, not known any more).  Every change of a page's
 * home goes through here: when it changes, its chunk's counts are no
 * longer known to be from their pages' homes (PH_EV_AWAY, PH_CUR_AWAY). */
static inline void ph_hot_set_home(ph_hot *h, size_t i, int home)
{
    ph_page *pg = &h->pages[i];
    const int known = (pg->flags & PH_PG_HOME_KNOWN) != 0;
    if (home >= 0 ? known && pg->home == home : !known)
        return;
    if (home >= 0) {
        pg->home = (int8_t)home;
        pg->flags |= PH_PG_HOME_KNOWN;
    } else {
        pg->flags &= (uint8_t)~PH_PG_HOME_KNOWN;
    }
    uint32_t *b = h->chunks[i / PH_HOT_CHUNK_PAGES];
    if (b) {
        uint32_t *ev = &ph_hot_chunk_meta(h, b)[PH_HOT_EVIDENCE];
        *ev = (*ev & ~(uint32_t)PH_EV_HOME) | PH_EV_AWAY | PH_CUR_AWAY;
    }
}

/* Page i is frozen (a ping-pong) since engine iteration `now` (mod 2^16);
 * counts the freeze when `count`.  Every freeze goes through here: its
 * chunk's home is no longer settled. */
static inline void ph_hot_freeze(ph_hot *h, size_t i, uint16_t now, int count)
{
    ph_page *pg = &h->pages[i];
    pg->flags |= PH_PG_FROZEN;
    pg->frozen_since = now;
    if (count && pg->freezes < 255)
        pg->freezes++;
    ph_hot_chunk_settle(h, i / PH_HOT_CHUNK_PAGES, -1);
}

/* Whether page pg keeps the promise of a settled home k (PH_EV_HOME):
 * its home known and k, not frozen, its first home recorded. */
static inline int ph_hot_page_settled(const ph_page *pg, int k)
{
    return (pg->flags & (PH_PG_HOME_KNOWN | PH_PG_FROZEN)) ==
               PH_PG_HOME_KNOWN &&
           pg->home == k && (pg->first_home >= 0 || (pg->flags & PH_PG_MOVED));
}

/* The home every page of chunk c keeps the promise of (looked up page by
 * page), or -1: what ph_hot_chunk_home may say, for the tests. */
int ph_hot_chunk_settled(const ph_hot *h, size_t c);

/* The counts of chunk c, allocated (zeroed); NULL/ENOMEM. */
uint32_t *ph_hot_chunk_new(ph_hot *h, size_t c);

/* Add samples: s[0..n) from the first, for as long as they fall in h,
 * each counting count * weight accesses (saturating at UINT32_MAX) from
 * its node to its page.  The ingest: every sample of every interval goes
 * through this loop, mostly in page order from one node at a time, so it
 * asks for the counts a few samples ahead and keeps the area's sums by
 * node and a chunk's count of newly sampled pages in registers while the
 * samples' node and chunk stay the same.  Returns how many samples it
 * took (the first outside h stops it); *added = the accesses added
 * (samples with a node out of range, or whose chunk's counts cannot be
 * made, are taken but not added; a chunk is made also for a zero count). */
size_t ph_hot_add_samples(ph_hot *h, const ph_sample *s, size_t n,
                          uint64_t weight, uint64_t *added);

/* Add a sample: count accesses from node index `node` to page i (now,
 * the engine's iteration, is not kept any more): ph_hot_add_samples for
 * one sample of weight 1.  0, or -1 when node or i is out of range or the
 * chunk's counts cannot be made. */
int ph_hot_add(ph_hot *h, size_t i, int node, uint32_t count, uint16_t now);

/* End of an interval for every page with counts: prev = the evidence
 * rolled with cur (ph_crit_evidence_roll), cum += cur, cur = 0. */
void ph_hot_roll(ph_hot *h);
/* The same for the pages of chunk c alone (nothing when it has no counts,
 * or neither a sample this interval nor evidence). */
void ph_hot_roll_chunk(ph_hot *h, size_t c);

/* Forget the interval's counts so far (every page's cur and the chunks'
 * fresh counts, the area's now_acc, taken back from run_acc and from its
 * accesses statistic): they turned out to be serial code's
 * (ph_engine_runtime_started).  The evidence and cumulative counts of
 * intervals already rolled stay. */
void ph_hot_forget_interval(ph_hot *h);

/* Bytes of bookkeeping the area holds now. */
size_t ph_hot_bytes(const ph_hot *h);

#endif
