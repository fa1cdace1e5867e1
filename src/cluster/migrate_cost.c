/*
 * migrate_cost.c -- home migration by cost (see migrate_cost.h): pure
 * functions, no MPI, no cluster state.
 */
#include "cluster/migrate_cost.h"

#include "criteria/amortised.h"
#include "criteria/criteria.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void ph_dsm_evid_update(ph_dsm_evid *e, int t, double s_ns, uint32_t interval)
{
    double past = 0;
    int has_past = e->at != 0 && e->to >= 0;
    if (has_past) {
        uint32_t gap = interval + 1 - e->at;   /* >= 1 */
        past = e->gain_ns;
        if (gap > 1)
            past = ldexp(past, -(int)(gap - 1 < 64 ? gap - 1 : 64));
    }
    if (t < 0 || !(s_ns > 0)) {
        e->gain_ns = (float)(past / 2);        /* an interval of no saving */
    } else if (!has_past) {
        e->to = t;
        e->gain_ns = (float)s_ns;
    } else if (e->to == t) {
        e->gain_ns = (float)((past + s_ns) / 2);
    } else if (s_ns > past / 2) {
        e->to = t;                             /* one interval: half */
        e->gain_ns = (float)(s_ns / 2);
    } else {
        e->gain_ns = (float)(past / 2);
    }
    if (!(e->gain_ns >= 1)) {            /* under a nanosecond: none */
        e->gain_ns = 0;
        e->to = -1;
    }
    e->at = interval + 1;
}

/* One sorted list of (start, length) ranges, walked page by page. */
typedef struct cursor {
    const uint64_t *r;
    int n, i;
    uint64_t pos;              /* UINT64_MAX: done */
} cursor;

static void cur_init(cursor *c, const uint64_t *r, int n, size_t npages)
{
    c->r = r;
    c->n = n;
    c->i = 0;
    c->pos = UINT64_MAX;
    while (c->i < n && c->r[2 * c->i + 1] == 0)
        c->i++;
    if (c->i < n && c->r[2 * c->i] < npages)
        c->pos = c->r[2 * c->i];
}

static void cur_next(cursor *c, size_t npages)
{
    c->pos++;
    if (c->pos < c->r[2 * c->i] + c->r[2 * c->i + 1] && c->pos < npages)
        return;
    c->i++;
    while (c->i < c->n && c->r[2 * c->i + 1] == 0)
        c->i++;
    c->pos = c->i < c->n && c->r[2 * c->i] < npages ? c->r[2 * c->i]
                                                    : UINT64_MAX;
}

/* Ranks other than r wrote the page in the interval (nwrote writers, w1
 * one of them). */
static int others_wrote(int nwrote, int w1, int r)
{
    return nwrote > 1 || (nwrote == 1 && w1 != r);
}

long ph_dsm_migrate_cost_plan(const ph_dsm_cost_in *in,
                              const ph_dsm_migrate_cfg *mig,
                              const ph_dsm_cost_cfg *cfg, uint32_t interval,
                              uint32_t *moved_at, ph_dsm_evid *ev,
                              size_t npages, ph_dsm_move **out,
                              ph_dsm_cost_counts *counts)
{
    *out = NULL;
    const int nranks = in->nranks;
    const ph_dsm_rank_cost *rc = in->rc;
    if (!cfg->on || !mig->on || nranks < 2)
        return 0;
    for (int r = 0; r < nranks; r++)
        if (!(rc[r].fetch_ns > 0) || !(rc[r].diff_ns >= 0))
            return 0;                  /* no cost model: nothing to weigh */
    /* the lists walked: per rank its remote writes (valid copy or not) and
     * its fetches, and the pages several ranks wrote; pages only their
     * home wrote are not visited (most of what a program writes) */
    size_t nmulti = 0;
    for (size_t i = 0; i < in->nsegs; i++)
        nmulti += in->segs[i].nwriters > 1;
    size_t nl = 3 * (size_t)nranks + 1;
    cursor *cur = malloc(nl * sizeof *cur);
    uint64_t *multi = malloc((nmulti ? nmulti : 1) * 2 * sizeof *multi);
    uint8_t *wrote = calloc((size_t)nranks, 1);
    uint8_t *fetched = calloc((size_t)nranks, 1);
    int *seen = malloc((size_t)nranks * sizeof *seen);
    ph_dsm_moves m = {0};
    if (!cur || !multi || !wrote || !fetched || !seen)
        goto nomem;
    nmulti = 0;
    for (size_t i = 0; i < in->nsegs; i++)
        if (in->segs[i].nwriters > 1) {
            multi[2 * nmulti] = in->segs[i].start;
            multi[2 * nmulti + 1] = in->segs[i].len;
            nmulti++;
        }
    for (int r = 0; r < nranks; r++) {
        cur_init(&cur[3 * r], in->pairs + 2 * (size_t)in->cdispls[r],
                 in->ccounts[r], npages);
        cur_init(&cur[3 * r + 1], in->pairs + 2 * (size_t)in->xdispls[r],
                 in->xcounts[r], npages);
        cur_init(&cur[3 * r + 2], in->pairs + 2 * (size_t)in->fdispls[r],
                 in->fcounts[r], npages);
    }
    cur_init(&cur[nl - 1], multi, (int)nmulti, npages);
    /* R: as long again as the run so far (no count of iterations here) */
    const double remaining = ph_crit_remaining((double)interval + 1, 0, 0);
    for (;;) {
        uint64_t p = UINT64_MAX;
        for (size_t l = 0; l < nl; l++)
            if (cur[l].pos < p)
                p = cur[l].pos;
        if (p == UINT64_MAX)
            break;
        int ns = 0, nremote = 0;
        for (size_t l = 0; l + 1 < nl; l++) {
            if (cur[l].pos != p)
                continue;
            int r = (int)(l / 3);
            if (!wrote[r] && !fetched[r])
                seen[ns++] = r;
            if (l % 3 == 2) {
                fetched[r] = 1;
            } else if (!wrote[r]) {
                wrote[r] = 1;
                nremote++;
            }
            cur_next(&cur[l], npages);
        }
        if (cur[nl - 1].pos == p)
            cur_next(&cur[nl - 1], npages);
        ph_dsm_evid *e = &ev[p];
        int h = in->home(in->home_ctx, p);
        int valid_home = h >= 0 && h < nranks;
        /* the home wrote it now: it has more writers than remote ones */
        const ph_dsm_seg *sg = ph_dsm_seg_find(in->segs, in->nsegs, p);
        int nw = sg ? sg->nwriters : 0;
        if (valid_home && nw > nremote && !wrote[h]) {
            if (!fetched[h])
                seen[ns++] = h;
            wrote[h] = 1;
        }
        int nwrote = 0, w1 = -1;            /* writers now, one of them */
        for (int k = 0; k < ns; k++)
            if (wrote[seen[k]]) {
                nwrote++;
                w1 = seen[k];
            }
        /* written at the exchange before: a fetch now will recur */
        const ph_dsm_seg *ps = ph_dsm_seg_find(in->prev, in->nprev, p);
        int was_written = ps != NULL;
        /* ... by its home (Jacobi's two grids: every other interval); a
         * page several ranks wrote was weighed then, its stamp is exact */
        int home_wrote_before =
            valid_home && ps &&
            (ps->nwriters == 1 ? ps->writer == h
                               : in->prev_at != 0 &&
                                     e->home_wrote_at == in->prev_at);
        int home_writes = valid_home && (wrote[h] || home_wrote_before);
        int new_home = h;                   /* after this barrier */
        if (!valid_home) {
            /* a first-touch page nobody claimed: nothing to weigh */
        } else if (moved_at[p] == interval + 1) {
            /* JIAJIA's rule moved it at this barrier: a fresh start */
            memset(e, 0, sizeof *e);
            e->to = -1;
            new_home = w1;                  /* JIAJIA's: the one writer */
        } else if (home_writes) {
            /* a writer home stays: its readers fetch after every write
             * wherever the home is, and elsewhere its own writes would
             * cost write faults, twins, diffs and the barrier's wait for
             * them (measured: Laplace's boundary rows moved to their
             * readers ran up to 1.6x slower) */
            ph_dsm_evid_update(e, -1, 0, interval);
        } else {
            if (counts)
                counts->pages++;
            /* the old home's traffic with the page elsewhere (it did not
             * write it): a fetch whenever another rank wrote, if it reads
             * the page (a reader home) */
            double after = (e->flags & PH_DSM_EV_READER_HOME) &&
                                   others_wrote(nwrote, w1, h)
                               ? rc[h].fetch_ns
                               : 0;
            int best = -1;
            double bs = 0;
            for (int k = 0; k < ns; k++) {
                int r = seen[k];
                if (r == h)
                    continue;
                /* a fetch of a page nobody else writes (a cold miss of
                 * data read-only now) does not recur: no saving */
                int recurs = fetched[r] &&
                             (others_wrote(nwrote, w1, r) || was_written);
                double sv = (recurs ? rc[r].fetch_ns : 0) +
                            (wrote[r] ? rc[r].diff_ns : 0) - after;
                if (sv > bs || (sv == bs && sv > 0 && r < best)) {
                    bs = sv;
                    best = r;
                }
            }
            ph_dsm_evid_update(e, best, bs, interval);
            if (e->frozen_at) {
                /* frozen (ping-pong): moves again melt_intervals later */
                uint32_t melt = cfg->melt_intervals ? cfg->melt_intervals : 1;
                if (interval + 1 - e->frozen_at >= melt) {
                    e->frozen_at = 0;
                    e->prev = 0;        /* melted: it may go back */
                }
            }
            if (!e->frozen_at && e->to >= 0 && e->to != h &&
                (double)e->gain_ns * remaining > rc[e->to].fetch_ns &&
                ph_dsm_migrate_allowed(mig, interval, moved_at[p])) {
                int t = e->to;
                if (ph_crit_pingpong(h, e->prev - 1, t)) {
                    e->frozen_at = interval + 1;
                    if (counts)
                        counts->frozen++;
                } else {
                    if (ph_dsm_moves_add(&m, p, t, 1, 0) < 0)
                        goto nomem;
                    new_home = t;
                    moved_at[p] = interval + 1;
                    e->prev = h + 1;
                    if (wrote[t])
                        e->flags &= ~PH_DSM_EV_READER_HOME;
                    else
                        e->flags |= PH_DSM_EV_READER_HOME;
                    e->gain_ns = 0;
                    e->to = -1;
                    if (counts)
                        counts->moves++;
                }
            }
        }
        if (new_home != h)
            e->home_wrote_at = 0;
        if (new_home >= 0 && new_home < nranks && wrote[new_home])
            e->home_wrote_at = interval + 1;
        for (int k = 0; k < ns; k++)
            wrote[seen[k]] = fetched[seen[k]] = 0;
    }
    free(cur);
    free(multi);
    free(wrote);
    free(fetched);
    free(seen);
    *out = m.v;
    return (long)m.n;
nomem:
    free(cur);
    free(multi);
    free(wrote);
    free(fetched);
    free(seen);
    free(m.v);
    errno = ENOMEM;
    return -1;
}
