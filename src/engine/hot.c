/*
 * hot.c -- hot areas and their per-page bookkeeping (see hot.h).
 *
 * Counts live in chunks of PH_HOT_CHUNK_PAGES pages allocated on the first
 * sample that lands in them, so that a huge area watched sparsely costs
 * little more than its dense 8 bytes a page.
 */
#include "engine/hot.h"

#include "base/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ph_hot *ph_hot_new(uintptr_t base, size_t npages, const char *name, int id,
                   int nnodes)
{
    ph_hot *h = calloc(1, sizeof *h);
    if (!h)
        return ph_fail_null(ENOMEM, "hot area: out of memory");
    h->base = base;
    h->npages = npages;
    h->id = id;
    h->nnodes = nnodes;
    snprintf(h->name, sizeof h->name, "%s", name && *name ? name : "area");
    h->nchunks = (npages + PH_HOT_CHUNK_PAGES - 1) / PH_HOT_CHUNK_PAGES;
    h->pages = malloc(npages * sizeof *h->pages);
    h->chunks = calloc(h->nchunks, sizeof *h->chunks);
    h->adj_pairs = calloc(h->nchunks ? h->nchunks : 1, sizeof *h->adj_pairs);
    h->adj_agree = calloc(h->nchunks ? h->nchunks : 1, sizeof *h->adj_agree);
    h->adj_chance = calloc(h->nchunks ? h->nchunks : 1, sizeof *h->adj_chance);
    uintptr_t first = (base + 0x1fffff) & ~(uintptr_t)0x1fffff;
    h->unit_first = (first - base) / 4096;
    h->nunits = h->unit_first < npages ? (npages - h->unit_first) / PH_HOT_CHUNK_PAGES : 0;
    h->unit_state = calloc(h->nunits ? h->nunits : 1, 1);
    h->unit_streak = calloc(h->nunits ? h->nunits : 1, 1);
    if (!h->pages || !h->chunks || !h->unit_state || !h->unit_streak ||
        !h->adj_pairs || !h->adj_agree || !h->adj_chance) {
        ph_hot_free(h);
        return ph_fail_null(ENOMEM, "hot area \"%s\": out of memory for the "
                            "bookkeeping of %zu pages", name ? name : "",
                            npages);
    }
    for (size_t i = 0; i < npages; i++)
        h->pages[i] = (ph_page){.home = -1, .prev_home = -1, .first_home = -1};
    h->factor = 1.0;
    h->prev_remote_ns = -1.0;
    h->hist = -1;
    return h;
}

void ph_hot_free(ph_hot *h)
{
    if (!h)
        return;
    if (h->chunks)
        for (size_t c = 0; c < h->nchunks; c++)
            free(h->chunks[c]);
    free(h->chunks);
    free(h->adj_pairs);
    free(h->adj_agree);
    free(h->adj_chance);
    free(h->pages);
    free(h->unit_state);
    free(h->unit_streak);
    free(h);
}

static size_t chunk_words(const ph_hot *h)
{
    return (size_t)PH_HOT_CHUNK_PAGES * 3u * (size_t)h->nnodes;
}

uint32_t *ph_hot_chunk_new(ph_hot *h, size_t c)
{
    if (!h->chunks[c])
        h->chunks[c] = calloc(chunk_words(h) + PH_HOT_META_WORDS,
                              sizeof(uint32_t));
    return h->chunks[c];
}

uint32_t *ph_hot_counts(ph_hot *h, size_t i, int create)
{
    if (i >= h->npages)
        return NULL;
    size_t c = i / PH_HOT_CHUNK_PAGES;
    if (!h->chunks[c] && (!create || !ph_hot_chunk_new(h, c)))
        return NULL;
    size_t off = (i % PH_HOT_CHUNK_PAGES) * ph_hot_stride(h);
    return h->chunks[c] + off;
}

int ph_hot_chunk_settled(const ph_hot *h, size_t c)
{
    size_t first = c * PH_HOT_CHUNK_PAGES, last = first + PH_HOT_CHUNK_PAGES;
    if (c >= h->nchunks)
        return -1;
    if (last > h->npages)
        last = h->npages;
    const int k = h->pages[first].home;
    if (k < 0)
        return -1;
    for (size_t i = first; i < last; i++)
        if (!ph_hot_page_settled(&h->pages[i], k))
            return -1;
    return k;
}

/* Samples ahead whose counts ph_hot_add_samples asks for: without it each
 * page's first load waited for memory, half of the ingest's time in
 * bench_engine's hot case (16 ahead did a third as much as 64). */
#define ADD_AHEAD 64

/* What add_samples kept in registers, into the chunk's words (b may be
 * NULL: no chunk yet) and the area's sums by node (node < 0: none). */
static inline void add_flush_chunk(const ph_hot *h, uint32_t *b,
                                   uint32_t fresh, uint32_t away)
{
    if (b) {
        ph_hot_chunk_meta(h, b)[PH_HOT_FRESH] += fresh;
        ph_hot_chunk_meta(h, b)[PH_HOT_EVIDENCE] |= away;
    }
}
static inline void add_flush_node(ph_hot *h, int node, uint64_t acc)
{
    if (node >= 0) {
        h->now_acc[node] += acc;
        h->run_acc[node] += acc;
    }
}

/* ph_hot_add_samples for nn nodes: inlined with nn a constant for the
 * common node counts, so that a page's counts are found with a shift and
 * its OR is a few loads. */
static inline __attribute__((always_inline)) size_t
add_samples(ph_hot *h, const ph_sample *s, size_t n, uint64_t weight,
            uint64_t *added, const int nn)
{
    const uintptr_t lo = h->base, span = h->npages * 4096u;
    const size_t stride = (size_t)nn;
    /* a chunk's evidence word, from its counts (ph_hot_chunk_meta) */
    const size_t meta_at = PH_HOT_CHUNK_PAGES * ph_hot_page_words(h) + PH_HOT_EVIDENCE;
    uint64_t total = 0;
    /* the accesses of consecutive samples from one node, and the pages
     * newly sampled in consecutive samples of one chunk: added to the
     * area's sums and to the chunk's word when the node or the chunk
     * changes, not at every sample (each would be a chain of loads
     * waiting for the store before) */
    int run_node = -1;
    uint64_t run_acc = 0;
    size_t chunk = SIZE_MAX;
    uint32_t *b = NULL, fresh = 0, away = 0;
    int settled = -1; /* the chunk's settled home: no ph_page to read */
    /* the chunk of the sample ADD_AHEAD ahead: its counts (looked up
     * again while it has none: this loop may make them), and whether its
     * pages' ph_page will be read */
    size_t ahead_chunk = SIZE_MAX;
    const uint32_t *ahead_b = NULL;
    int ahead_look = 0;
    size_t k;
    for (k = 0; k < n; k++) {
        uintptr_t off = s[k].page - lo;
        if (off >= span)
            break;
        if (k + ADD_AHEAD < n) {
            uintptr_t ahead = s[k + ADD_AHEAD].page - lo;
            if (ahead < span) {
                size_t a = ahead / 4096;
                if (a / PH_HOT_CHUNK_PAGES != ahead_chunk || !ahead_b) {
                    ahead_chunk = a / PH_HOT_CHUNK_PAGES;
                    ahead_b = h->chunks[ahead_chunk];
                    ahead_look = ahead_b && !(ahead_b[meta_at] & PH_EV_HOME);
                }
                if (ahead_b) {
                    __builtin_prefetch(ahead_b + (a % PH_HOT_CHUNK_PAGES) * stride,
                                       1, 3);
                    if (ahead_look)
                        __builtin_prefetch(&h->pages[a], 0, 3);
                }
            }
        }
        int node = s[k].node;
        if (node < 0 || node >= nn)
            continue;
        size_t i = off / 4096;
        if (i / PH_HOT_CHUNK_PAGES != chunk) {
            add_flush_chunk(h, b, fresh, away);
            fresh = away = 0;
            chunk = i / PH_HOT_CHUNK_PAGES;
            b = h->chunks[chunk];
            if (!b && !(b = ph_hot_chunk_new(h, chunk))) {
                chunk = SIZE_MAX; /* tried again at the next sample */
                continue;
            }
            settled = ph_ev_home(b[meta_at]);
        }
        uint64_t c64 = (uint64_t)s[k].count * weight;
        uint32_t cnt = c64 > UINT32_MAX ? UINT32_MAX : (uint32_t)c64;
        if (!cnt)
            continue;
        uint32_t *cur = b + (i % PH_HOT_CHUNK_PAGES) * stride;
        if (!cur[node] && !ph_cnt_or(cur, nn))
            fresh++; /* the page's first access of the interval */
        if (settled >= 0) {
            if (node != settled)
                away = PH_CUR_AWAY;
        } else {
            const ph_page *pg = &h->pages[i];
            if (!(pg->flags & PH_PG_HOME_KNOWN) || pg->home != node)
                away = PH_CUR_AWAY;
        }
        cur[node] = cur[node] > UINT32_MAX - cnt ? UINT32_MAX : cur[node] + cnt;
        if (node != run_node) {
            add_flush_node(h, run_node, run_acc);
            run_node = node;
            run_acc = 0;
        }
        run_acc += cnt;
        total += cnt;
    }
    add_flush_chunk(h, b, fresh, away);
    add_flush_node(h, run_node, run_acc);
    *added = total;
    return k;
}

size_t ph_hot_add_samples(ph_hot *h, const ph_sample *s, size_t n,
                          uint64_t weight, uint64_t *added)
{
    size_t k;
    PH_CNT_BY_NODES(h->nnodes, k = add_samples(h, s, n, weight, added, nn_))
    return k;
}

int ph_hot_add(ph_hot *h, size_t i, int node, uint32_t count, uint16_t now)
{
    (void)now;
    if (node < 0 || node >= h->nnodes || i >= h->npages)
        return -1;
    ph_sample s = {h->base + i * 4096u, node, count};
    uint64_t added;
    ph_hot_add_samples(h, &s, 1, 1, &added);
    return h->chunks[i / PH_HOT_CHUNK_PAGES] ? 0 : -1;
}

/* Roll the first np pages of chunk b (pg: their bookkeeping); returns
 * PH_EV_LEFT when any page's evidence is left, | PH_EV_AWAY when `look`
 * and some page's is not from its home alone.  Inlined with n a constant
 * for the common node counts (ph_hot_roll_chunk), so that the loops over
 * the nodes unroll: every page with counts is rolled at every interval. */
static inline __attribute__((always_inline)) uint32_t
roll_pages(uint32_t *b, int n, const ph_page *pg, size_t np, int look)
{
    uint32_t left = 0, away = 0;
    const uint32_t *end = b + PH_HOT_CHUNK_PAGES * (size_t)n;
    for (size_t p = 0; p < np; p++) {
        uint32_t *cur = b + p * (size_t)n;
        ph_hot_prefetch(cur, end, n, 1);
        uint32_t l = ph_hot_roll_page(cur, n);
        left |= l;
        if (look && l)
            away |= !(pg[p].flags & PH_PG_HOME_KNOWN) || pg[p].home < 0 ||
                    !ph_cnt_only(ph_cnt_prev(cur, n), n, pg[p].home);
    }
    return (left ? PH_EV_LEFT : 0) | (away ? PH_EV_AWAY : 0);
}

void ph_hot_roll_chunk(ph_hot *h, size_t c)
{
    uint32_t *b = h->chunks[c];
    if (!b)
        return;
    uint32_t *meta = ph_hot_chunk_meta(h, b);
    if (!meta[PH_HOT_FRESH] && !(meta[PH_HOT_EVIDENCE] & PH_EV_LEFT)) {
        /* all zero but the cumulative counts: nothing changes, and
         * nothing came from elsewhere than a home */
        meta[PH_HOT_EVIDENCE] &= PH_EV_HOME;
        return;
    }
    size_t first = c * PH_HOT_CHUNK_PAGES, np = h->npages - first;
    if (np > PH_HOT_CHUNK_PAGES)
        np = PH_HOT_CHUNK_PAGES;
    /* evidence and interval both from the homes roll into evidence from
     * the homes; otherwise every page is looked at (after a move, the
     * pages' evidence is usually from their new homes) */
    const int look = (meta[PH_HOT_EVIDENCE] & (PH_EV_AWAY | PH_CUR_AWAY)) != 0;
    uint32_t ev;
    PH_CNT_BY_NODES(h->nnodes,
                    ev = roll_pages(b, nn_, h->pages + first, np, look))
    meta[PH_HOT_FRESH] = 0;
    meta[PH_HOT_EVIDENCE] = (meta[PH_HOT_EVIDENCE] & PH_EV_HOME) | ev;
}

void ph_hot_roll(ph_hot *h)
{
    for (size_t c = 0; c < h->nchunks; c++)
        ph_hot_roll_chunk(h, c);
    memset(h->now_acc, 0, sizeof h->now_acc);
}

void ph_hot_forget_interval(ph_hot *h)
{
    for (size_t c = 0; c < h->nchunks; c++) {
        uint32_t *b = h->chunks[c];
        if (!b)
            continue;
        /* the cur section: every page's counts of this interval */
        memset(b, 0, PH_HOT_CHUNK_PAGES * ph_hot_stride(h) * sizeof *b);
        ph_hot_chunk_meta(h, b)[PH_HOT_FRESH] = 0;
        ph_hot_chunk_meta(h, b)[PH_HOT_EVIDENCE] &= ~(uint32_t)PH_CUR_AWAY;
    }
    uint64_t now = 0;
    for (int k = 0; k < h->nnodes; k++) {
        h->run_acc[k] -= h->now_acc[k] < h->run_acc[k] ? h->now_acc[k] : h->run_acc[k];
        now += h->now_acc[k];
    }
    h->st.accesses -= now < h->st.accesses ? now : h->st.accesses;
    memset(h->now_acc, 0, sizeof h->now_acc);
}

size_t ph_hot_bytes(const ph_hot *h)
{
    size_t b = sizeof *h + h->npages * sizeof *h->pages +
               h->nchunks * (sizeof *h->chunks + 3 * sizeof(uint16_t)) +
               2 * h->nunits;
    for (size_t c = 0; c < h->nchunks; c++)
        if (h->chunks[c])
            b += (chunk_words(h) + PH_HOT_META_WORDS) * sizeof(uint32_t);
    return b;
}
