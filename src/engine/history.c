/*
 * history.c -- what the report keeps of every hot area, live or gone.
 *
 * A transparent-mode run registers areas the program frees again before
 * it exits (a Fortran ALLOCATABLE, a temporary grid); the report must
 * still say they were found, how big, what the engine did to them and
 * where their pages were.  So each registration gets a record, kept after
 * the area is unregistered:
 *   - name, base, pages, the iteration it appeared and went (-1: live);
 *   - its statistics (copied at unregistration; live areas are read when
 *     the report is written);
 *   - two *home strips*: the area cut into at most PH_STRIP_MAX buckets of
 *     consecutive pages, and for each bucket the node of its middle page
 *     (a node index, -1 unknown or not resident).  The start strip is
 *     taken at the first iteration end after registration (a heap array
 *     is untouched at registration), the end strip at unregistration or
 *     when the report is written.  One query of <= PH_STRIP_MAX pages each
 *     time.  Where the kernel cannot say (a page not yet touched, or one
 *     the sampler holds PROT_NONE on a kernel older than 6.5) the
 *     engine's own bookkeeping fills in when it knows the home.
 *   - the owner-local share at the end: of the pages ever sampled, those
 *     whose home (asked of the OS) is the node that sampled them most over
 *     the whole run (cumulative counts), and the pages the engine moved
 *     twice or more (thrashing shows there); and at the start: of the
 *     sampled pages whose home the engine asked before it moved any
 *     (ph_page.first_home), those whose first home was that node.
 * At most PH_HISTORY_MAX records; later areas are counted, not recorded.
 * All functions run with the engine lock held.
 */
#include "engine/engine_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ph_area_rec *rec_of(ph_engine *e, const ph_hot *h)
{
    return h->hist >= 0 ? &e->hist[h->hist] : NULL;
}

/* Fill strip[] (nb buckets) with the homes of the buckets' middle pages. */
static size_t take_strip(ph_engine *e, const ph_hot *h, int8_t *strip)
{
    size_t nb = h->npages < PH_STRIP_MAX ? h->npages : PH_STRIP_MAX;
    void *pages[PH_STRIP_MAX];
    int home[PH_STRIP_MAX];
    size_t idx[PH_STRIP_MAX];
    for (size_t b = 0; b < nb; b++) {
        size_t lo = b * h->npages / nb, hi = (b + 1) * h->npages / nb;
        idx[b] = lo + (hi - lo) / 2;
        pages[b] = (void *)(h->base + idx[b] * 4096);
    }
    if (ph_engine_query(e, nb, pages, home) != 0)
        for (size_t b = 0; b < nb; b++)
            home[b] = -1;
    for (size_t b = 0; b < nb; b++) {
        const ph_page *pg = &h->pages[idx[b]];
        if (home[b] < 0 && (pg->flags & PH_PG_HOME_KNOWN))
            home[b] = pg->home;
        strip[b] = (int8_t)(home[b] >= 0 && home[b] < e->nnodes ? home[b] : -1);
    }
    return nb;
}

/* Owner-local share and pages moved twice, into r.  A page the OS cannot
 * place right now -- a watched page parked away from its address by the
 * userfaultfd mechanism reads as not faulted -- counts at the home the
 * bookkeeping knows (as take_strip does). */
static void take_locality(ph_engine *e, ph_hot *h, ph_area_rec *r)
{
    enum { BATCH = 1024 };
    void *pages[BATCH];
    size_t at[BATCH];
    int dom[BATCH], home[BATCH];
    int n = e->nnodes;
    r->sampled_pages = r->sampled_local = r->moved_twice = 0;
    r->start_pages = r->start_local = 0;
    size_t k = 0;
    for (size_t i = 0; i <= h->npages; i++) {
        if (i < h->npages) {
            r->moved_twice += h->pages[i].migrations >= 2;
            uint32_t *cnt = ph_hot_counts(h, i, 0);
            if (!cnt)
                continue;
            /* cumulative counts plus this interval's */
            uint32_t acc[PH_MAX_NODES];
            const uint32_t *cum = ph_cnt_cum(cnt, n), *cur = ph_cnt_cur(cnt, n);
            for (int q = 0; q < n; q++)
                acc[q] = cum[q] + cur[q];
            int d = ph_crit_dominant(acc, n);
            if (d < 0)
                continue;
            if (h->pages[i].first_home >= 0) {
                r->start_pages++;
                r->start_local += h->pages[i].first_home == d;
            }
            pages[k] = (void *)(h->base + i * 4096);
            at[k] = i;
            dom[k++] = d;
        }
        if (k == BATCH || (i == h->npages && k)) {
            if (ph_engine_query(e, k, pages, home) == 0) {
                r->sampled_pages += k;
                for (size_t j = 0; j < k; j++) {
                    const ph_page *pg = &h->pages[at[j]];
                    if (home[j] < 0 && (pg->flags & PH_PG_HOME_KNOWN))
                        home[j] = pg->home;
                    r->sampled_local += home[j] == dom[j];
                }
            }
            k = 0;
        }
    }
}

void ph_history_add(ph_engine *e, ph_hot *h)
{
    if (e->nhist == e->cap_hist) {
        if (e->cap_hist >= PH_HISTORY_MAX) {
            e->hist_dropped++;
            return;
        }
        size_t cap = e->cap_hist ? 2 * e->cap_hist : 16;
        ph_area_rec *n = realloc(e->hist, cap * sizeof *n);
        if (!n) {
            e->hist_dropped++;
            return;
        }
        e->hist = n;
        e->cap_hist = cap;
    }
    h->hist = (long)e->nhist;
    ph_area_rec *r = &e->hist[e->nhist++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", h->name);
    r->id = h->id;
    r->base = h->base;
    r->npages = h->npages;
    r->registered_iter = (int64_t)e->iteration;
    r->removed_iter = -1;
}

void ph_history_start_strips(ph_engine *e)
{
    for (size_t a = 0; a < e->nhots; a++) {
        ph_area_rec *r = rec_of(e, e->hots[a]);
        if (r && !r->nstart)
            r->nstart = take_strip(e, e->hots[a], r->strip_start);
    }
}

void ph_history_retire(ph_engine *e, const ph_hot *h)
{
    ph_area_rec *r = rec_of(e, h);
    if (!r)
        return;
    r->st = h->st;
    r->removed_iter = (int64_t)e->iteration;
    r->nend = take_strip(e, h, r->strip_end);
    take_locality(e, (ph_hot *)h, r);
}

void ph_history_refresh(ph_engine *e)
{
    for (size_t a = 0; a < e->nhots; a++) {
        ph_area_rec *r = rec_of(e, e->hots[a]);
        if (!r)
            continue;
        r->st = e->hots[a]->st;
        r->nend = take_strip(e, e->hots[a], r->strip_end);
        take_locality(e, e->hots[a], r);
    }
}

void ph_history_free(ph_engine *e)
{
    free(e->hist);
    e->hist = NULL;
    e->nhist = e->cap_hist = 0;
}
