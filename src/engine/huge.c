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
 * Counts are not copied: the decision reads the subpages' current counts
 * in place.  Statistics: huge_migrated, huge_split, huge_collapsed.
 * Runs with the engine lock held.
 */
#include "engine/engine_int.h"

#include "base/log.h"

#include <stdlib.h>
#include <string.h>

#define UNIT_PAGES PH_HOT_CHUNK_PAGES
#define STATE_RECHECK 8 /* area scans between looks at SMALL units */

/* Unit of page index i, or SIZE_MAX when i is in no whole unit. */
static size_t unit_of(const ph_hot *h, size_t i)
{
    if (i < h->unit_first)
        return SIZE_MAX;
    size_t u = (i - h->unit_first) / UNIT_PAGES;
    return u < h->nunits ? u : SIZE_MAX;
}

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
        pg->home = (int8_t)home;
        pg->flags |= PH_PG_HOME_KNOWN;
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

size_t ph_engine_huge_pass(ph_engine *e, ph_hot *h, size_t n, size_t *idx,
                           void **addr, int *home, ph_invocation *inv)
{
    if (h->nunits == 0 || n == 0)
        return n;
    const int nn = e->nnodes;
    uint16_t now = (uint16_t)e->iteration;
    int recheck = h->st.invocations % STATE_RECHECK == 0;
    uint32_t *sub = malloc((size_t)UNIT_PAGES * (size_t)nn * sizeof *sub);
    void **mv_addr = malloc(n * sizeof *mv_addr);
    int *mv_to = malloc(n * sizeof *mv_to), *mv_st = malloc(n * sizeof *mv_st);
    size_t *mv_unit = malloc(n * sizeof *mv_unit);
    int *mv_from = malloc(n * sizeof *mv_from);
    if (!sub || !mv_addr || !mv_to || !mv_st || !mv_unit || !mv_from) {
        free(sub), free(mv_addr), free(mv_to), free(mv_st), free(mv_unit), free(mv_from);
        return n; /* out of memory: the 4 KiB algorithm sees everything */
    }
    size_t nmv = 0, keep = 0;
    uint32_t agg[PH_MAX_NODES];
    for (size_t j0 = 0; j0 < n;) {
        size_t u = unit_of(h, idx[j0]), j1 = j0 + 1;
        while (j1 < n && u != SIZE_MAX && unit_of(h, idx[j1]) == u)
            j1++;
        int take = 0; /* 1: the unit's entries leave the 4 KiB algorithm */
        if (u != SIZE_MAX) {
            uint8_t *stt = &h->unit_state[u];
            if (*stt == PH_UNIT_UNKNOWN || (*stt == PH_UNIT_SMALL && recheck))
                look(e, h, u);
            int uhome = -1;
            for (size_t j = j0; j < j1 && uhome < 0; j++)
                uhome = home[j];
            if (*stt == PH_UNIT_HUGE && uhome >= 0) {
                size_t m = j1 - j0;
                for (size_t j = j0; j < j1; j++)
                    memcpy(sub + (j - j0) * (size_t)nn,
                           ph_cnt_cur(ph_hot_counts(h, idx[j], 0), nn),
                           (size_t)nn * sizeof *sub);
                int target = -1;
                double ratio = 0;
                int d = ph_crit_huge(&e->lat, sub, m, uhome, h->factor,
                                     e->cfg.optimistic, e->cfg.huge_split_share,
                                     agg, &target, &ratio);
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
                    inv->scanned += m;
                    for (int k = 0; k < nn; k++)
                        inv->accesses += agg[k];
                    inv->remote_before += remote(agg, nn, uhome);
                    if ((head->flags & PH_PG_FROZEN) &&
                        ph_crit_melts(head->frozen_since, now, e->cfg.melt_iters)) {
                        head->flags &= (uint8_t)~PH_PG_FROZEN;
                        head->prev_home = -1; /* starts afresh (invoke.c) */
                        inv->melted++;
                    }
                    if (d == PH_HUGE_MOVE && !(head->flags & PH_PG_FROZEN)) {
                        inv->candidates++;
                        if (ph_crit_pingpong(uhome, head->prev_home, target)) {
                            head->flags |= PH_PG_FROZEN;
                            head->frozen_since = now;
                            inv->frozen++;
                            d = PH_HUGE_KEEP;
                        }
                    } else {
                        d = PH_HUGE_KEEP;
                    }
                    if (d == PH_HUGE_MOVE && !e->cfg.observe) {
                        mv_addr[nmv] = (void *)unit_addr(h, u);
                        mv_to[nmv] = target;
                        mv_unit[nmv] = u;
                        mv_from[nmv] = uhome;
                        nmv++;
                        /* remote_after is counted once the move is done */
                        inv->remote_after += remote(agg, nn, target);
                    } else {
                        inv->remote_after += remote(agg, nn, uhome);
                    }
                }
            } else if (*stt == PH_UNIT_SPLIT && e->cfg.huge_collapse_after &&
                       !e->cfg.observe) {
                int pref = -2;
                for (size_t j = j0; j < j1 && pref != -1; j++) {
                    int d = ph_crit_dominant(ph_cnt_cur(ph_hot_counts(h, idx[j], 0), nn), nn);
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
        }
        for (size_t j = j0; j < j1 && !take; j++) {
            idx[keep] = idx[j];
            addr[keep] = addr[j];
            home[keep] = home[j];
            keep++;
        }
        j0 = j1;
    }
    if (nmv) {
        uint64_t moved = ph_engine_move(e, nmv, mv_addr, mv_to, mv_st, inv);
        for (size_t k = 0; k < nmv; k++) {
            if (mv_st[k] == mv_to[k])
                unit_home(h, mv_unit[k], mv_to[k], mv_from[k]);
            else if (mv_st[k] >= 0)
                unit_home(h, mv_unit[k], mv_st[k], -1);
        }
        inv->huge_migrated += moved;
        inv->migrated += moved;
        inv->bytes_moved += moved * (uint64_t)UNIT_PAGES * 4096;
    }
    free(sub), free(mv_addr), free(mv_to), free(mv_st), free(mv_unit), free(mv_from);
    return keep;
}
