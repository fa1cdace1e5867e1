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
 * A look's moves, over all its areas, go to the mover in one list ordered
 * by the saving still to come per target node (ph_crit_move_order): the
 * memory manager may take many iterations' time to make them (look_move).
 * A look drains the source (the samples join the iteration's counts,
 * which are not rolled: the iteration's own invocation still sees them
 * all), moves, and arms the source again so that the next pages are
 * watched -- except during the first sweep, whose arms stay.  Pages
 * moved here count among the first iterations' migrations
 * (migrated_first2) and are logged as kind "early".  Frozen
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

/* The moves a look makes, over all its areas. */
typedef struct early_moves {
    size_t n, cap;
    size_t *area;       /* its area: e->hots[area] */
    size_t *idx;        /* page in its area */
    int *home, *to;
    double *saving_ns;  /* per interval (the order of the moves) */
} early_moves;

static void moves_free(early_moves *mv)
{
    free(mv->area);
    free(mv->idx);
    free(mv->home);
    free(mv->to);
    free(mv->saving_ns);
}

static int moves_grow(early_moves *mv, size_t need)
{
    if (need <= mv->cap)
        return 0;
    size_t nc = mv->cap ? 2 * mv->cap : 256;
    while (nc < need)
        nc *= 2;
#define GROW(f)                                                    \
    do {                                                           \
        void *nf = realloc(mv->f, nc * sizeof *mv->f);             \
        if (!nf)                                                   \
            return -1;                                             \
        mv->f = nf;                                                \
    } while (0)
    GROW(area);
    GROW(idx);
    GROW(home);
    GROW(to);
    GROW(saving_ns);
#undef GROW
    mv->cap = nc;
    return 0;
}

/* One area: its decisive pages worth their move join mv.  inv gets the
 * area's scanned and candidates.  0, or -1 when out of memory. */
static int look_area(ph_engine *e, size_t area, double remaining,
                     ph_invocation *inv, early_moves *mv)
{
    ph_hot *h = e->hots[area];
    const int n = e->nnodes;
    const uint32_t unit = e->cfg.sample_weight ? e->cfg.sample_weight : 1;
    size_t cap = 0, m = 0, nq = 0;
    size_t *idx = NULL;
    void **qaddr = NULL;
    int *to = NULL, *home = NULL, *st = NULL;
    size_t *qat = NULL;
    int rc = -1;
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
            t = ph_engine_stand_in(e, t, known);
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
                    goto out;
                cap = nc;
            }
            idx[m] = i;
            to[m] = t;
            m++;
        }
    }
    inv->scanned = m;
    if (m == 0) {
        rc = 0;
        goto out;
    }
    home = malloc(m * sizeof *home);
    st = malloc(m * sizeof *st);
    qaddr = malloc(m * sizeof *qaddr);
    qat = malloc(m * sizeof *qat);
    if (!home || !st || !qaddr || !qat)
        goto out;
    /* homes: the bookkeeping's where known, else the OS's */
    for (size_t j = 0; j < m; j++) {
        const ph_page *pg = &h->pages[idx[j]];
        home[j] = pg->flags & PH_PG_HOME_KNOWN ? pg->home : -1;
        if (home[j] < 0) {
            qaddr[nq] = (void *)(h->base + idx[j] * 4096);
            qat[nq++] = j;
        }
    }
    if (nq && ph_engine_query(e, nq, qaddr, st) == 0)
        for (size_t q = 0; q < nq; q++) {
            ph_page *pg = &h->pages[idx[qat[q]]];
            home[qat[q]] = st[q];
            if (st[q] >= 0) {
                ph_hot_set_home(h, idx[qat[q]], st[q]);
                /* the home the report's start share counts (invoke.c
                 * sets it where the iteration finds the page first) */
                if (pg->first_home < 0 && !(pg->flags & PH_PG_MOVED))
                    pg->first_home = (int8_t)st[q];
            }
        }
    /* worth the move by the criterion, toward the decisive node */
    ph_latency_model lm = e->lat;
    if (e->cfg.optimistic)
        lm.migrate_ns = NULL;
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
            /* the part of the iteration seen is the evidence: no past */
            t = ph_crit_amortised(&lm, cnt, NULL, home[j], h->factor,
                                  remaining, &v);
        }
        if (ph_engine_stand_in(e, t, home[j]) != to[j])
            continue;
        if (moves_grow(mv, mv->n + 1) != 0)
            goto out;
        double rate[PH_MAX_NODES];
        ph_crit_rate(cnt, NULL, n, rate); /* cnt: this interval's */
        size_t k = mv->n++;
        mv->area[k] = area;
        mv->idx[k] = idx[j];
        mv->home[k] = home[j];
        mv->to[k] = to[j];
        mv->saving_ns[k] = ph_crit_saving_ns(&e->lat, rate, home[j], to[j],
                                             h->factor);
        inv->candidates++;
    }
    rc = 0;
out:
    free(idx);
    free(to);
    free(home);
    free(st);
    free(qaddr);
    free(qat);
    return rc;
}

/* The final status of one move, counted among inv's failures as the mover
 * counts them (bound: placed, not a failure; a node index other than the
 * target: outvoted in a 2 MiB page). */
static void count_failure(ph_invocation *inv, int status, int to)
{
    if (status == to || status == -ENOENT)
        return;
    ph_move_stats one = {0};
    if (status >= 0)
        one.outvoted = 1;
    else
        (*ph_move_stats_failure(&one, status))++;
    ph_engine_add_failures(inv, &one);
}

/* The look's moves, all areas in one list, issued in the order of
 * ph_crit_move_order: the memory manager makes them one after the other
 * while the program runs on, and a first iteration's decisive pages can
 * take it many iterations' time (CG on origin2000-16: 3880 pages at
 * 275 us, 1.07 s for 99 ms iterations), during which the pages still
 * waiting are used at their old home.  In address order the last area's
 * pages -- and in each area the last threads' -- would wait for all the
 * others, and a phase waits for its slowest thread.  Bookkeeping and the
 * per-area records follow.  Returns pages moved. */
static uint64_t look_move(ph_engine *e, early_moves *mv, ph_invocation *inv)
{
    size_t k = mv->n;
    uint64_t moved = 0;
    if (k == 0)
        return 0;
    size_t *order = malloc(k * sizeof *order);
    size_t *scratch = malloc(k * sizeof *scratch);
    void **addr = malloc(k * sizeof *addr);
    int *to = malloc(k * sizeof *to), *st = malloc(k * sizeof *st);
    if (!order || !scratch || !addr || !to || !st) {
        ph_warn("engine: out of memory in an early look's moves");
        goto out;
    }
    ph_crit_move_order(mv->saving_ns, mv->to, k, e->nnodes, order, scratch);
    for (size_t j = 0; j < k; j++) {
        size_t i = order[j];
        addr[j] = (void *)(e->hots[mv->area[i]]->base + mv->idx[i] * 4096);
        to[j] = mv->to[i];
    }
    ph_invocation all = {0};
    uint64_t t1 = ph_now_ns();
    ph_engine_move(e, k, addr, to, st, &all);
    uint64_t move_ns = ph_now_ns() - t1;
    for (size_t j = 0; j < k; j++) {
        size_t i = order[j];
        ph_hot *h = e->hots[mv->area[i]];
        ph_invocation *a = &inv[mv->area[i]];
        ph_page *pg = &h->pages[mv->idx[i]];
        count_failure(a, st[j], to[j]);
        /* the area's share of the move call's time, by its pages */
        a->move_ns += move_ns / k;
        if (st[j] >= 0 && st[j] == to[j]) {
            pg->prev_home = (int8_t)mv->home[i];
            ph_hot_set_home(h, mv->idx[i], to[j]);
            if (pg->migrations < 255)
                pg->migrations++;
            pg->flags |= PH_PG_MOVED;
            a->migrated++;
            moved++;
        }
    }
out:
    free(order);
    free(scratch);
    free(addr);
    free(to);
    free(st);
    return moved;
}

long ph_engine_look_locked(ph_engine *e)
{
    if (!ph_engine_early_on(e) || e->nhots == 0 || e->recording >= 0 ||
        !e->armed)
        return 0;
    uint64_t ns = ph_engine_drain(e);
    e->looks++;
    ph_engine_plan_stand_ins(e);
    double remaining = ph_crit_remaining(1.0, 0.0, (double)e->iters_total);
    uint64_t moved = 0, t0 = ph_now_ns();
    early_moves mv = {0};
    ph_invocation *inv = calloc(e->nhots, sizeof *inv);
    if (!inv) {
        ph_warn("engine: out of memory in an early look");
    } else {
        size_t looked = 0;
        for (size_t a = 0; a < e->nhots; a++) {
            ph_hot *h = e->hots[a];
            inv[a] = (ph_invocation){.iteration = e->iteration,
                                     .kind = PH_INV_EARLY, .area_id = h->id,
                                     .phase = -1,
                                     .sampler_ns = a == 0 ? ns : 0,
                                     .factor = h->factor};
            if (h->cold)
                continue;
            looked++;
            inv[a].seq = ++e->seq;
            if (look_area(e, a, remaining, &inv[a], &mv) != 0)
                ph_warn("engine: out of memory in an early look at hot "
                        "area \"%s\"", h->name);
        }
        moved = look_move(e, &mv, inv);
        uint64_t engine_ns = ph_now_ns() - t0;
        for (size_t a = 0; a < e->nhots; a++) {
            ph_hot *h = e->hots[a];
            ph_invocation *x = &inv[a];
            if (h->cold)
                continue;
            x->bytes_moved = x->migrated * 4096;
            x->engine_ns = engine_ns / looked; /* an even share */
            h->st.scanned += x->scanned;
            h->st.candidates += x->candidates;
            h->st.migrated += x->migrated;
            h->st.migrated_first2 += x->migrated;
            h->st.bytes_moved += x->bytes_moved;
            h->st.failed_busy += x->failed_busy;
            h->st.failed_nomem += x->failed_nomem;
            h->st.failed_access += x->failed_access;
            h->st.failed_fault += x->failed_fault;
            h->st.failed_other += x->failed_other;
            if (x->scanned || x->migrated)
                ph_engine_log_add(e, x);
        }
    }
    moves_free(&mv);
    free(inv);
    if (moved)
        ph_info("engine: early look %llu moved %llu pages",
                (unsigned long long)e->looks, (unsigned long long)moved);
    /* During the first sweep (every hot page watched at once, each to
     * trap once) the arms stay: arming again would watch the pages the
     * threads have already passed, whose second traps then spend the
     * sweep and its budget, while the pages not reached yet would have
     * to wait for the rotation.  With it, laplace's first sweep from
     * node:0 on the simulated machine saw 3464 of 4226 pages and the
     * run ended with 44-49% of them sampled, against 100% without the
     * looks.  The looks still drain and move what is decisive (few pages
     * are: one trap each). */
    if (e->first_sweep == PH_FIRST_ON)
        return (long)moved;
    /* the next pages are watched; the counts keep growing */
    uint64_t samples = e->interval_samples;
    uint64_t began_ns = e->interval_ns;
    ph_source_stats began_ss = e->last_ss;
    ph_engine_arm_aside(e);
    /* the interval goes on: its samples so far are not an empty one's
     * (else the iteration's own invocation would be skipped as one), it
     * began when it began (an iteration end the program signals during
     * this arm ends it: run_iterative), and its sampling cost includes
     * the looks' */
    e->interval_samples += samples;
    e->interval_ns = began_ns;
    e->last_ss = began_ss;
    return (long)moved;
}

long ph_engine_look(ph_engine *e)
{
    pthread_mutex_lock(&e->lock);
    long moved = ph_engine_look_locked(e);
    pthread_mutex_unlock(&e->lock);
    return moved;
}
