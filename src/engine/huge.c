/*
 * huge.c -- 2 MiB pages in the migration algorithm (invoke.c).
 *
 * A hot area may be backed by 2 MiB pages (THP: `pagesize 2M`, or a
 * THP=always kernel; hugetlbfs).  The kernel moves such a page as a whole
 * whichever 4 KiB page is named, so treating its subpages one by one would
 * move 2 MiB for every subpage a criterion picks.  Instead, before the
 * 4 KiB algorithm runs on an area's sampled pages, every 2 MiB-aligned
 * unit wholly inside the area that holds sampled pages is looked at:
 *
 *   state UNKNOWN/SMALL  ask the OS whether it is one huge page now
 *                        (UNKNOWN: first time; SMALL: every 8th scan of the
 *                        area, khugepaged may have collapsed it);
 *   HUGE   its subpages' counts are summed and ph_crit_huge decides:
 *          MOVE   one move entry for the whole page (ping-pong freezes
 *                 the unit like a page: the state lives in its first
 *                 subpage's ph_page),
 *          SPLIT  its subpages disagree (2 MiB false sharing): the OS
 *                 splits it (huge_split) and its subpages go on to the
 *                 4 KiB algorithm in this same invocation,
 *          KEEP   nothing;
 *          either way (except SPLIT) its subpages are taken out of the
 *          4 KiB algorithm;
 *   SPLIT  (split by us) 4 KiB pages; when its sampled subpages all prefer
 *          the node every one of its 512 pages is on, for
 *          huge_collapse_after invocations in a row, the OS collapses it
 *          back into a 2 MiB page (fewer TLB misses, nothing to lose).
 *
 * Watching a 4 KiB subpage with mprotect makes the kernel map the whole
 * huge page with 4 KiB entries, and it stays so after the watch is
 * lifted: the page is still one 2 MiB page (it moves whole) but the TLB
 * gain is gone until khugepaged, which scans slowly, maps it whole again.  So when the engine stops watching an area
 * for good -- it went cold, or the iterative mechanism stopped -- its
 * units that are one huge page are mapped whole again at once
 * (ph_engine_huge_remap: the OS's collapse, which keeps a huge page that
 * is still mapped whole as it is; huge_remapped), PH_REMAP_UNITS units per
 * serve of the manager, since a collapse may copy 2 MiB with the engine
 * lock held.  The userfaultfd
 * mechanism's UFFDIO_MOVE goes further and splits the huge page itself
 * into 4 KiB pages, which the engine then finds SMALL: such a unit is
 * collapsed too when khugepaged would collapse it by itself (the
 * mapping has THP on) and all its pages are on one node, so the collapse
 * changes no home.  A collapsed unit is looked at again when next
 * sampled.
 *
 * Counts are not copied: the decision sums the subpages' current counts
 * where they lie (ph_crit_huge_sum).  invoke.c calls ph_engine_huge_unit
 * for each unit as its scan reaches it, and ph_engine_huge_moves once
 * the area's scan is done (the moves go to the mover in one batch).
 * Statistics: huge_migrated, huge_split, huge_collapsed, huge_remapped.
 * Runs with the engine lock held.
 */
#include "engine/engine_int.h"

#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_PAGES PH_HOT_CHUNK_PAGES
#define STATE_RECHECK 8 /* area scans between looks at SMALL units */

static uintptr_t unit_addr(const ph_hot *h, size_t u)
{
    return h->base + (h->unit_first + u * UNIT_PAGES) * 4096;
}

static void look(ph_engine *e, ph_hot *h, size_t u)
{
    uint8_t huge[UNIT_PAGES];
    if (ph_os_huge_state(e->os, (void *)unit_addr(h, u), UNIT_PAGES, huge) != 0)
        return;
    int all = 1;
    for (size_t k = 0; k < UNIT_PAGES && all; k++)
        all = huge[k];
    h->unit_state[u] = all ? PH_UNIT_HUGE : PH_UNIT_SMALL;
}

/* Every page of unit u now lives on node index `home`. */
static void unit_home(ph_hot *h, size_t u, int home, int moved_from)
{
    size_t first = h->unit_first + u * UNIT_PAGES;
    for (size_t k = first; k < first + UNIT_PAGES; k++) {
        ph_page *pg = &h->pages[k];
        if (moved_from >= 0) {
            pg->prev_home = (int8_t)moved_from;
            if (pg->migrations < 255)
                pg->migrations++;
            pg->flags |= PH_PG_MOVED;
        }
        ph_hot_set_home(h, k, home);
    }
}

static uint64_t remote(const uint32_t *acc, int n, int home)
{
    uint64_t r = 0;
    for (int k = 0; k < n; k++)
        if (k != home)
            r += acc[k];
    return r;
}

/* A split unit whose sampled subpages [j0, j1) all prefer one node: 1 when
 * all 512 pages are on that node too. */
static int all_on(ph_engine *e, ph_hot *h, size_t u, int node)
{
    void *pages[UNIT_PAGES];
    int homes[UNIT_PAGES];
    for (size_t k = 0; k < UNIT_PAGES; k++)
        pages[k] = (void *)(unit_addr(h, u) + k * 4096);
    if (ph_engine_query(e, UNIT_PAGES, pages, homes) != 0)
        return 0;
    return ph_crit_one_node(homes, UNIT_PAGES) == node;
}

/* Room for one more queued move; -1 when there is none. */
static int moves_grow(ph_huge_moves *mv)
{
    if (mv->n < mv->cap)
        return 0;
    size_t cap = mv->cap ? 2 * mv->cap : 64;
#define GROW(f)                                                              \
    do {                                                                     \
        void *p_ = realloc(mv->f, cap * sizeof *mv->f);                      \
        if (!p_)                                                             \
            return -1;                                                       \
        mv->f = p_;                                                          \
    } while (0)
    GROW(addr);
    GROW(to);
    GROW(st);
    GROW(from);
    GROW(unit);
#undef GROW
    mv->cap = cap;
    return 0;
}

void ph_huge_moves_free(ph_huge_moves *mv)
{
    free(mv->addr), free(mv->to), free(mv->st), free(mv->from), free(mv->unit);
    memset(mv, 0, sizeof *mv);
}

/* The current counts of unit u's 512 subpages, summed where they lie (a
 * unit not aligned to the area's chunks spans two; a chunk without counts
 * adds nothing, nor does a subpage without a sample). */
static void unit_sum(const ph_engine *e, const ph_hot *h, size_t u,
                     ph_crit_huge_sum *s)
{
    const size_t pw = ph_hot_stride(h);
    size_t p = h->unit_first + u * UNIT_PAGES, end = p + UNIT_PAGES;
    ph_crit_huge_clear(s, e->nnodes);
    while (p < end) {
        size_t c = p / PH_HOT_CHUNK_PAGES;
        size_t stop = (c + 1) * PH_HOT_CHUNK_PAGES;
        if (stop > end)
            stop = end;
        const uint32_t *b = h->chunks[c];
        if (b)
            ph_crit_huge_add(s, b + (p % PH_HOT_CHUNK_PAGES) * pw, stop - p, pw);
        p = stop;
    }
}

int ph_engine_huge_passive(const ph_hot *h, size_t u)
{
    return u < h->nunits && h->unit_state[u] == PH_UNIT_SMALL &&
           h->st.invocations % STATE_RECHECK != 0;
}

int ph_engine_huge_unit(ph_engine *e, ph_hot *h, size_t u, size_t n,
                        const size_t *idx, const int *home,
                        ph_huge_moves *mv, ph_invocation *inv)
{
    if (u >= h->nunits || n == 0)
        return 0;
    const int nn = e->nnodes;
    uint16_t now = (uint16_t)e->iteration;
    int recheck = h->st.invocations % STATE_RECHECK == 0;
    if (!e->cfg.observe && moves_grow(mv) != 0)
        return 0; /* out of memory: the 4 KiB algorithm sees the unit */
    int take = 0; /* 1: the unit's entries leave the 4 KiB algorithm */
    uint8_t *stt = &h->unit_state[u];
    if (*stt == PH_UNIT_UNKNOWN || (*stt == PH_UNIT_SMALL && recheck))
        look(e, h, u);
    int uhome = -1;
    for (size_t j = 0; j < n && uhome < 0; j++)
        uhome = home[j];
    if (*stt == PH_UNIT_HUGE && uhome >= 0) {
        ph_crit_huge_sum sum;
        unit_sum(e, h, u, &sum);
        const uint32_t *agg = sum.agg;
        int target = -1;
        double ratio = 0;
        int d = ph_crit_huge_decide(&e->lat, &sum, uhome, h->factor,
                                    e->cfg.optimistic, e->cfg.huge_split_share,
                                    &target, &ratio);
        ph_page *head = &h->pages[h->unit_first + u * UNIT_PAGES];
        if (d == PH_HUGE_SPLIT && !e->cfg.observe &&
            ph_os_huge_split(e->os, (void *)unit_addr(h, u),
                             UNIT_PAGES * 4096, 1) == 0) {
            *stt = PH_UNIT_SPLIT;
            h->unit_streak[u] = 0;
            inv->huge_split++;
            ph_info("engine: \"%s\": 2 MiB page at %p is shared by "
                    "several nodes: split into 4 KiB pages", h->name,
                    (void *)unit_addr(h, u));
        } else {
            take = 1;
            inv->scanned += n;
            for (int k = 0; k < nn; k++)
                inv->accesses += agg[k];
            inv->remote_before += remote(agg, nn, uhome);
            if ((head->flags & PH_PG_FROZEN) &&
                ph_crit_melts(head->frozen_since, now, e->cfg.melt_iters)) {
                head->flags &= (uint8_t)~PH_PG_FROZEN;
                head->prev_home = -1; /* starts afresh (invoke.c) */
                inv->melted++;
            }
            if (d == PH_HUGE_MOVE &&
                (target = ph_engine_stand_in(e, target, uhome)) < 0)
                d = PH_HUGE_KEEP;
            if (d == PH_HUGE_MOVE && !(head->flags & PH_PG_FROZEN)) {
                inv->candidates++;
                if (ph_crit_pingpong(uhome, head->prev_home, target)) {
                    ph_hot_freeze(h, h->unit_first + u * UNIT_PAGES, now, 0);
                    inv->frozen++;
                    d = PH_HUGE_KEEP;
                }
            } else {
                d = PH_HUGE_KEEP;
            }
            if (d == PH_HUGE_MOVE && !e->cfg.observe) {
                mv->addr[mv->n] = (void *)unit_addr(h, u);
                mv->to[mv->n] = target;
                mv->unit[mv->n] = u;
                mv->from[mv->n] = uhome;
                mv->n++;
                /* remote_after is counted once the move is done */
                inv->remote_after += remote(agg, nn, target);
            } else {
                inv->remote_after += remote(agg, nn, uhome);
            }
        }
    } else if (*stt == PH_UNIT_SPLIT && e->cfg.huge_collapse_after &&
               !e->cfg.observe) {
        const size_t pw = ph_hot_stride(h);
        int pref = -2;
        for (size_t j = 0; j < n && pref != -1; j++) {
            const uint32_t *cur = h->chunks[idx[j] / PH_HOT_CHUNK_PAGES] +
                                  (idx[j] % PH_HOT_CHUNK_PAGES) * pw;
            int d = ph_crit_dominant(cur, nn);
            pref = pref == -2 || pref == d ? d : -1;
        }
        if (pref >= 0 && all_on(e, h, u, pref)) {
            if (++h->unit_streak[u] >= e->cfg.huge_collapse_after) {
                if (ph_os_huge_split(e->os, (void *)unit_addr(h, u),
                                     UNIT_PAGES * 4096, 0) == 0) {
                    look(e, h, u);
                    if (h->unit_state[u] == PH_UNIT_HUGE) {
                        inv->huge_collapsed++;
                        unit_home(h, u, pref, -1);
                    } else {
                        h->unit_state[u] = PH_UNIT_SPLIT;
                    }
                }
                h->unit_streak[u] = 0;
            }
        } else {
            h->unit_streak[u] = 0;
        }
    }
    return take;
}

void ph_engine_huge_moves(ph_engine *e, ph_hot *h, ph_huge_moves *mv,
                          ph_invocation *inv)
{
    size_t nmv = mv->n;
    mv->n = 0;
    if (!nmv)
        return;
    uint64_t moved = ph_engine_move(e, nmv, mv->addr, mv->to, mv->st, inv);
    for (size_t k = 0; k < nmv; k++) {
        if (mv->st[k] == mv->to[k])
            unit_home(h, mv->unit[k], mv->to[k], mv->from[k]);
        else if (mv->st[k] >= 0)
            unit_home(h, mv->unit[k], mv->st[k], -1);
    }
    inv->huge_migrated += moved;
    inv->migrated += moved;
    inv->bytes_moved += moved * (uint64_t)UNIT_PAGES * 4096;
}

/* A unit of 4 KiB pages that the kernel would collapse by itself, sooner
 * or later: all 512 resident on one node (a collapse then changes no
 * home), in a mapping with THP on (eligible: asked once per area). */
static int collapsible(ph_engine *e, ph_hot *h, size_t u, int *eligible)
{
    if (*eligible < 0)
        *eligible = ph_os_huge_eligible(e->os, (void *)unit_addr(h, 0),
                                        h->nunits * UNIT_PAGES * 4096) == 1;
    if (!*eligible)
        return 0;
    void *pages[UNIT_PAGES];
    int homes[UNIT_PAGES];
    for (size_t k = 0; k < UNIT_PAGES; k++)
        pages[k] = (void *)(unit_addr(h, u) + k * 4096);
    return ph_engine_query(e, UNIT_PAGES, pages, homes) == 0 &&
           ph_crit_one_node(homes, UNIT_PAGES) >= 0;
}

void ph_engine_huge_remap(ph_hot *h)
{
    h->remap_next = 0;
    h->remap_done = 0;
    h->remap_failed = 0;
    h->remap_pending = h->nunits > 0;
}

/* Unit u of h mapped whole again when it should be: 1 done, 0 not due,
 * -1 the OS refused (message kept in why for the first one). */
static int remap_unit(ph_engine *e, ph_hot *h, size_t u, int *eligible)
{
    /* a unit never looked at may have been watched all the same */
    if (h->unit_state[u] == PH_UNIT_UNKNOWN)
        look(e, h, u);
    if (h->unit_state[u] == PH_UNIT_SPLIT ||
        (h->unit_state[u] == PH_UNIT_SMALL && !collapsible(e, h, u, eligible)))
        return 0;
    if (ph_os_huge_split(e->os, (void *)unit_addr(h, u), UNIT_PAGES * 4096, 0) != 0)
        return -1;
    /* looked at again when next sampled: a watch may split it */
    h->unit_state[u] = PH_UNIT_UNKNOWN;
    return 1;
}

size_t ph_engine_huge_remap_some(ph_engine *e, size_t max_units)
{
    size_t done = 0, left = max_units;
    for (size_t a = 0; a < e->nhots && left; a++) {
        ph_hot *h = e->hots[a];
        if (!h->remap_pending || e->recording >= 0)
            continue;
        if (!h->cold && e->active) {
            /* watched again meanwhile: the next stop starts over */
            h->remap_pending = 0;
            continue;
        }
        int eligible = -1;
        for (; h->remap_next < h->nunits && left; h->remap_next++, left--) {
            int r = remap_unit(e, h, h->remap_next, &eligible);
            if (r > 0) {
                h->remap_done++;
                done++;
            } else if (r < 0 && h->remap_failed++ == 0) {
                snprintf(h->remap_why, sizeof h->remap_why, "%s", ph_error_message());
            }
        }
        if (h->remap_next < h->nunits)
            continue;
        h->remap_pending = 0;
        h->huge_remapped += h->remap_done;
        e->huge_remapped += h->remap_done;
        if (h->remap_done || h->remap_failed)
            ph_info("engine: \"%s\" is watched no more: %zu 2 MiB page(s) mapped "
                    "whole again%s%.0zu%s%s", h->name, h->remap_done,
                    h->remap_failed ? ", not " : "", h->remap_failed,
                    h->remap_failed ? ": " : "", h->remap_failed ? h->remap_why : "");
    }
    return done;
}
