/*
 * early.c -- moves inside the first iteration (hybrid mechanism).
 *
 * The iterative mechanism learns from a whole iteration: a program with
 * few iterations (NAS CG: 15) runs all of its first one on the initial
 * placement, which bounds its time at 1 + (S - 1) / I of the good
 * placement's for a slowdown S over I iterations.  The hybrid mechanism's
 * memory manager therefore looks at the samples every early_period_ms
 * until the first iteration ends (or, in transparent mode, until the
 * iteration is found), and moves the pages whose evidence is already
 * decisive:
 *   - decisive (ph_crit_decisive): one remote node made at least
 *     EARLY_MIN_SHARE of the page's accesses so far, with at least
 *     EARLY_MIN_SAMPLES samples (sample_weight accesses each);
 *   - worth it: the configured criterion agrees on that node.  The
 *     amortised one takes what was seen so far as one interval and the
 *     rest of the run as ph_crit_remaining(1, 0, total): every later
 *     iteration lasts at least as long as the part seen (total - 1 such
 *     parts when the program gave its iteration count, one more when it
 *     did not).
 * A look drains the source (the samples join the iteration's counts,
 * which are not rolled: the iteration's own invocation still sees them
 * all), moves, and arms the source again so that the next pages are
 * watched.  Pages moved here count among the first iterations'
 * migrations (migrated_first2) and are logged as kind "early".  Frozen
 * pages and cold areas are left alone; the self-tuning factor, cold and
 * stable streaks are the iteration's business, untouched here.
 */
#include "engine/engine_int.h"

#include "base/clock.h"
#include "base/log.h"
#include "criteria/amortised.h"

#include <errno.h>
#include <stdlib.h>

#define EARLY_MIN_SAMPLES 2u
#define EARLY_MIN_SHARE 0.9

int ph_engine_early_on(const ph_engine *e)
{
    return e->cfg.mech == PH_MECH_HYBRID && e->cfg.early_period_ms > 0 &&
           e->iteration == 0 && e->active && !e->cfg.observe;
}

/* One area: decisive pages moved.  Returns pages moved. */
static uint64_t look_area(ph_engine *e, ph_hot *h, double remaining,
                          uint64_t sampler_ns)
{
    const int n = e->nnodes;
    const uint32_t unit = e->cfg.sample_weight ? e->cfg.sample_weight : 1;
    uint64_t t0 = ph_now_ns();
    ph_invocation inv = {.seq = ++e->seq, .iteration = e->iteration,
                         .kind = PH_INV_EARLY, .area_id = h->id,
                         .phase = -1, .sampler_ns = sampler_ns,
                         .factor = h->factor};
    size_t cap = 0, m = 0, nq = 0;
    size_t *idx = NULL;
    void **addr = NULL, **qaddr = NULL;
    int *to = NULL, *home = NULL, *st = NULL;
    size_t *qat = NULL;
    uint64_t moved = 0;
    /* the decisive pages, in address order */
    for (size_t c = 0; c < h->nchunks; c++) {
        /* a chunk with no sample in this interval has no decisive page */
        if (!h->chunks[c] || !ph_hot_chunk_meta(h, h->chunks[c])[PH_HOT_FRESH])
            continue;
        size_t last = (c + 1) * PH_HOT_CHUNK_PAGES;
        if (last > h->npages)
            last = h->npages;
        for (size_t i = c * PH_HOT_CHUNK_PAGES; i < last; i++) {
            const uint32_t *cur = ph_cnt_cur(ph_hot_counts(h, i, 0), n);
            const ph_page *pg = &h->pages[i];
            int known = pg->flags & PH_PG_HOME_KNOWN ? pg->home : -1;
            int t = ph_crit_decisive(cur, n, known, unit, EARLY_MIN_SAMPLES,
                                     EARLY_MIN_SHARE);
            if (t < 0 || (pg->flags & PH_PG_FROZEN))
                continue;
            if (m == cap) {
                size_t nc = cap ? 2 * cap : 256;
                size_t *ni = realloc(idx, nc * sizeof *ni);
                int *nt = ni ? realloc(to, nc * sizeof *nt) : NULL;
                if (ni)
                    idx = ni;
                if (nt)
                    to = nt;
                if (!ni || !nt)
                    goto oom;
                cap = nc;
            }
            idx[m] = i;
            to[m] = t;
            m++;
        }
    }
    inv.scanned = m;
    if (m == 0)
        goto log;
    addr = malloc(m * sizeof *addr);
    home = malloc(m * sizeof *home);
    st = malloc(m * sizeof *st);
    qaddr = malloc(m * sizeof *qaddr);
    qat = malloc(m * sizeof *qat);
    if (!addr || !home || !st || !qaddr || !qat)
        goto oom;
    /* homes: the bookkeeping's where known, else the OS's */
    for (size_t j = 0; j < m; j++) {
        const ph_page *pg = &h->pages[idx[j]];
        addr[j] = (void *)(h->base + idx[j] * 4096);
        home[j] = pg->flags & PH_PG_HOME_KNOWN ? pg->home : -1;
        if (home[j] < 0) {
            qaddr[nq] = addr[j];
            qat[nq++] = j;
        }
    }
    if (nq && ph_engine_query(e, nq, qaddr, st) == 0)
        for (size_t q = 0; q < nq; q++) {
            ph_page *pg = &h->pages[idx[qat[q]]];
            home[qat[q]] = st[q];
            if (st[q] >= 0) {
                pg->home = (int8_t)st[q];
                pg->flags |= PH_PG_HOME_KNOWN;
                /* the home the report's start share counts (invoke.c
                 * sets it where the iteration finds the page first) */
                if (pg->first_home < 0 && !(pg->flags & PH_PG_MOVED))
                    pg->first_home = (int8_t)st[q];
            }
        }
    /* worth the move by the criterion, toward the decisive node */
    size_t k = 0;
    for (size_t j = 0; j < m; j++) {
        if (home[j] < 0 || home[j] == to[j])
            continue;
        const uint32_t *cnt = ph_hot_counts(h, idx[j], 0);
        double v = 0;
        int t;
        if (e->cfg.criterion == PH_CRITERION_COMPETITIVE) {
            t = ph_crit_competitive(&e->lat, cnt, home[j], h->factor,
                                    e->cfg.optimistic, &v);
        } else {
            ph_latency_model lm = e->lat;
            if (e->cfg.optimistic)
                lm.migrate_ns = NULL;
            /* the part of the iteration seen is the evidence: no past */
            t = ph_crit_amortised(&lm, cnt, NULL, home[j], h->factor,
                                  remaining, &v);
        }
        if (t != to[j])
            continue;
        idx[k] = idx[j];
        addr[k] = addr[j];
        home[k] = home[j];
        to[k] = to[j];
        k++;
    }
    inv.candidates = k;
    moved = ph_engine_move(e, k, addr, to, st, &inv);
    for (size_t j = 0; j < k; j++) {
        ph_page *pg = &h->pages[idx[j]];
        if (st[j] >= 0 && st[j] == to[j]) {
            pg->prev_home = (int8_t)home[j];
            pg->home = (int8_t)to[j];
            if (pg->migrations < 255)
                pg->migrations++;
            pg->flags |= PH_PG_MOVED;
        }
    }
    goto log;
oom:
    ph_warn("engine: out of memory in an early look at hot area \"%s\"",
            h->name);
log:
    inv.migrated = moved;
    inv.bytes_moved = moved * 4096;
    inv.engine_ns = ph_now_ns() - t0;
    h->st.scanned += inv.scanned;
    h->st.candidates += inv.candidates;
    h->st.migrated += moved;
    h->st.migrated_first2 += moved;
    h->st.bytes_moved += inv.bytes_moved;
    h->st.failed_busy += inv.failed_busy;
    h->st.failed_nomem += inv.failed_nomem;
    h->st.failed_access += inv.failed_access;
    h->st.failed_fault += inv.failed_fault;
    h->st.failed_other += inv.failed_other;
    if (inv.scanned || moved)
        ph_engine_log_add(e, &inv);
    free(idx);
    free(to);
    free(addr);
    free(home);
    free(st);
    free(qaddr);
    free(qat);
    return moved;
}

long ph_engine_look_locked(ph_engine *e)
{
    if (!ph_engine_early_on(e) || e->nhots == 0 || e->recording >= 0 ||
        !e->armed)
        return 0;
    uint64_t ns = ph_engine_drain(e);
    e->looks++;
    double remaining = ph_crit_remaining(1.0, 0.0, (double)e->iters_total);
    uint64_t moved = 0;
    for (size_t a = 0; a < e->nhots; a++) {
        ph_hot *h = e->hots[a];
        if (h->cold)
            continue;
        moved += look_area(e, h, remaining, a == 0 ? ns : 0);
    }
    if (moved)
        ph_info("engine: early look %llu moved %llu pages",
                (unsigned long long)e->looks, (unsigned long long)moved);
    /* the next pages are watched; the counts keep growing.  This arm is
     * not a sweep of the iteration's: cold areas and self-tuning count
     * sweeps by the pages armed, so the marks move past it */
    uint64_t before = ph_engine_armed_pages(e);
    uint64_t samples = e->interval_samples;
    uint64_t began_ns = e->interval_ns;
    ph_source_stats began_ss = e->last_ss;
    ph_engine_disarm(e);
    ph_engine_arm(e);
    /* the interval goes on: its samples so far are not an empty one's
     * (else the iteration's own invocation would be skipped as one), it
     * began when it began (an iteration end the program signals during
     * this arm ends it: run_iterative), and its sampling cost includes
     * the looks' */
    e->interval_samples += samples;
    e->interval_ns = began_ns;
    e->last_ss = began_ss;
    uint64_t armed = ph_engine_armed_pages(e) - before;
    for (size_t a = 0; a < e->nhots; a++) {
        e->hots[a]->armed_mark += armed;
        e->hots[a]->sweep_mark += armed;
    }
    return (long)moved;
}

long ph_engine_look(ph_engine *e)
{
    pthread_mutex_lock(&e->lock);
    long moved = ph_engine_look_locked(e);
    pthread_mutex_unlock(&e->lock);
    return moved;
}
