/*
 * engine.c -- the engine's life: creation, hot areas, the sample stream,
 * the mechanisms' entry points and the memory-manager thread.
 *
 * The sample stream: at the start of an interval the engine arms the
 * source (arm), the program runs and touches watched pages, and at the
 * end of the interval the engine drains the samples into the areas'
 * counts (or, while a phase is recorded, into the phase buffer), then
 * runs the algorithm (invoke.c) and arms again.  An interval is one outer
 * iteration (iterative), one manager period (sampling) or one phase
 * (recording).  It ends with a lift and a second drain (ph_engine_close):
 * the program runs on while the engine decides, and what it trapped until
 * the lift is this interval's.  An iteration end the program signalled
 * while the manager was still arming ends no interval (run_iterative).
 *
 * The budget: the source watches budget_pages pages an interval (from
 * sample_pages), cut (at least halved, in proportion when far over) or
 * doubled after each interval to keep sampling near sample_budget of the
 * run (adapt_budget).  A sample is charged the handler's measured time
 * and cfg.sample_trap_ns for the rest of its round trip (measured by the
 * sampler at start, api/).  When the hot areas fit in
 * sample_first_pages (their touched pages, where the source can tell:
 * an array sized for the largest input and used in part counts its used
 * part), the first interval is a sweep of all of them, so
 * that a program whose hot set is larger than sample_pages has all of it
 * looked at, and a wrong initial placement corrected, after one interval
 * rather than after resident / sample_pages; its cost is paid once and
 * not adapted to.  Where its traps would cost more than sample_first_ns
 * (a trap a page, each at the trap's and the handler's cost measured at
 * start: sample_trap_ns + sample_handler_ns), it watches runs of several
 * pages, one trap standing for its run (ph_crit_sweep_run_pages, the
 * source's set_run_pages): the run's pages count for its first toucher,
 * and the page-exact intervals after the sweep set right a run that
 * straddled two owners.  Areas registered after it was armed are swept by a
 * second arm while the hot set still fits.  A first interval that
 * sampled under an eighth of what it watched (cut short by an early
 * boundary) is followed by a second sweep (engine_int.h).
 *
 * The memory manager: a thread that waits for posted iteration ends (and,
 * in sampling mode, for its period to pass) and runs the invocations under
 * the engine lock, so the program's thread returns from
 * ph_iteration_end() at once and migration overlaps its computation
 * (UPMlib sacrificed a processor to it; here it mostly sleeps in
 * move_pages).  Several posts not yet served collapse into one
 * invocation: the counts then cover several iterations, which the
 * criteria do not mind.
 */
#include "engine/engine_int.h"

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/sorted.h"
#include "base/thread.h"
#include "config/options.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void ph_engine_cfg_from_options(ph_engine_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->mech = (ph_mechanism)ph_opt_int(PH_OPT_ENGINE);
    c->sync = ph_opt_bool(PH_OPT_ENGINE_SYNC);
    c->full_snapshot = ph_opt_int(PH_OPT_SAMPLE_PAGES) == 0;
    c->sample_weight = (uint32_t)ph_opt_int(PH_OPT_SAMPLE_WEIGHT);
    c->sample_budget = ph_opt_double(PH_OPT_SAMPLE_BUDGET);
    c->sample_trap_ns = ph_opt_double(PH_OPT_SAMPLE_TRAP_NS);
    /* 0: measured at the edge (api/) where a real sampler is opened;
     * until then, and on a simulated machine, a SIGSEGV trap's cost */
    if (c->sample_trap_ns == 0)
        c->sample_trap_ns = PH_SAMPLE_TRAP_NS_UNMEASURED;
    c->sample_pages = (size_t)ph_opt_int(PH_OPT_SAMPLE_PAGES);
    c->sample_first_pages = (size_t)ph_opt_int(PH_OPT_SAMPLE_FIRST_PAGES);
    c->sample_first_ns = ph_opt_double(PH_OPT_SAMPLE_FIRST_MS) * 1e6;
    c->sample_first_run_pages = (size_t)ph_opt_int(PH_OPT_SAMPLE_FIRST_RUN_PAGES);
    c->optimistic = ph_opt_bool(PH_OPT_OPTIMISTIC);
    c->contention_ns = ph_opt_double(PH_OPT_CONTENTION_NS);
    c->melt_iters = (unsigned)ph_opt_int(PH_OPT_MELT_ITERS);
    c->tune_step = ph_opt_double(PH_OPT_TUNE_STEP);
    c->tune_max = ph_opt_double(PH_OPT_TUNE_MAX);
    c->cold_after = (unsigned)ph_opt_int(PH_OPT_COLD_AFTER);
    c->stable_after = (unsigned)ph_opt_int(PH_OPT_STABLE_AFTER);
    c->critical_pages = (size_t)ph_opt_int(PH_OPT_CRITICAL_PAGES);
    c->critical_threshold = ph_opt_double(PH_OPT_CRITICAL_THRESHOLD);
    c->hybrid_iters = (unsigned)ph_opt_int(PH_OPT_HYBRID_ITERS);
    c->observe = ph_opt_bool(PH_OPT_OBSERVE);
    c->huge_split_share = ph_opt_double(PH_OPT_HUGE_SPLIT_SHARE);
    c->huge_collapse_after = (unsigned)ph_opt_int(PH_OPT_HUGE_COLLAPSE_AFTER);
    c->sample_period_ms = (unsigned)ph_opt_int(PH_OPT_SAMPLE_PERIOD_MS);
    c->sample_max_moves = (size_t)ph_opt_int(PH_OPT_SAMPLE_MAX_MOVES);
    c->criterion = ph_opt_int(PH_OPT_CRITERION);
    c->iterations_expected = (unsigned long)ph_opt_int(PH_OPT_ITERATIONS);
    c->early_period_ms = (unsigned)ph_opt_int(PH_OPT_EARLY_PERIOD_MS);
}

/* ---- areas ---------------------------------------------------------- */

/* Index of the first area whose base is > addr (lock held). */
static size_t upper(const ph_engine *e, uintptr_t addr)
{
    size_t at;
    PH_UPPER(at, e->hots, e->nhots, it->base, addr);
    return at;
}

ph_hot *ph_engine_find_locked(const ph_engine *e, uintptr_t addr)
{
    size_t u = upper(e, addr);
    if (u == 0)
        return NULL;
    ph_hot *h = e->hots[u - 1];
    return addr < ph_hot_end(h) ? h : NULL;
}

ph_hot *ph_engine_find(ph_engine *e, const void *addr)
{
    pthread_mutex_lock(&e->lock);
    ph_hot *h = ph_engine_find_locked(e, (uintptr_t)addr);
    pthread_mutex_unlock(&e->lock);
    return h;
}

/* The hot set changed (lock held): every area counts its sweeps toward
 * cold afresh.  The count is the source's pages armed since a mark over
 * the pages watched now, so pages armed for areas that came and went (a
 * program's temporary arrays, set-up) would count as sweeps of those left
 * -- a thousand one-page areas registered and dropped made an array cold
 * at its first invocation, and cold it is never watched again. */
static void restart_cold_counts(ph_engine *e)
{
    uint64_t armed = ph_engine_armed_pages(e);
    for (size_t a = 0; a < e->nhots; a++)
        e->hots[a]->armed_mark = armed;
}

/* A new area, or one in use again (lock held).  It is not cold, and it
 * changes what the iterative mechanism has seen -- but only if it is
 * still in use at the next iteration end (adopt_fresh).  A temporary
 * allocated and freed inside each iteration, of a new size each time (so
 * never reused), made the engine start over at every registration: with
 * a 64 MiB array, 144-148 invocations in 200 iterations instead of 3, the
 * engine never stopping (bench/README.md, bench_alloc).  A running
 * engine arms it now, as before; a stopped one waits for the end. */
static void mark_fresh(ph_engine *e, ph_hot *h)
{
    h->fresh = 1;
    h->fresh_ns = ph_now_ns();
    h->fresh_swept = ph_engine_swept_pages(e);
    if (e->active && e->cfg.mech != PH_MECH_OFF && !e->armed)
        ph_engine_arm(e);
}

/* At an iteration end, before the iterative mechanism runs (lock held):
 * the areas registered before the end (the manager serves it later: one
 * registered since belongs to the next) and still in use are new to it.
 * A stopped engine looks again; a running one counts its quiet
 * invocations afresh, and every page watched must be looked at again
 * from the registration on (what the registration itself did before:
 * no invocation runs between the two, so the counts are the same). */
static void adopt_fresh(ph_engine *e)
{
    int any = 0;
    uint64_t mark = 0;
    for (size_t a = 0; a < e->nhots; a++) {
        ph_hot *h = e->hots[a];
        if (!h->fresh || h->fresh_ns > e->end_ns)
            continue;
        h->fresh = 0;
        if (h->idle)
            continue;
        if (!any || h->fresh_swept < mark)
            mark = h->fresh_swept;
        any = 1;
    }
    if (!any)
        return;
    e->active = 1;
    e->quiet = 0;
    e->quiet_samples = 0;
    if (e->stable_mark < mark)
        e->stable_mark = mark;
}

ph_hot *ph_engine_register(ph_engine *e, void *addr, size_t bytes,
                           const char *name)
{
    if (!addr || bytes == 0)
        return ph_fail_null(EINVAL, "hot area \"%s\": %s", name ? name : "",
                            !addr ? "NULL address" : "size is 0");
    /* Only the whole pages inside the range: protecting a partial page
     * at either end would trap accesses to someone else's data -- a
     * neighbouring variable, or the GOT next to a static array, which the
     * signal path itself needs. */
    uintptr_t a = (uintptr_t)addr;
    if (a + bytes < a)
        return ph_fail_null(EINVAL, "hot area \"%s\": range wraps around",
                            name ? name : "");
    uintptr_t base = (a + 4095) & ~(uintptr_t)4095;
    uintptr_t end = (a + bytes) & ~(uintptr_t)4095;
    if (end <= base)
        return ph_fail_null(EINVAL, "hot area \"%s\": [%p, +%zu) holds no "
                            "whole 4 KiB page", name ? name : "", addr,
                            bytes);
    pthread_mutex_lock(&e->lock);
    size_t u = upper(e, base);
    ph_hot *prev = u ? e->hots[u - 1] : NULL;
    ph_hot *next = u < e->nhots ? e->hots[u] : NULL;
    if ((prev && ph_hot_end(prev) > base) || (next && next->base < end)) {
        ph_hot *o = prev && ph_hot_end(prev) > base ? prev : next;
        pthread_mutex_unlock(&e->lock);
        return ph_fail_null(EEXIST, "hot area \"%s\" [%p, +%zu) overlaps "
                            "hot area \"%s\"", name ? name : "", addr,
                            bytes, o->name);
    }
    if (e->nhots == e->cap_hots) {
        size_t cap = e->cap_hots ? 2 * e->cap_hots : 16;
        ph_hot **n = realloc(e->hots, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&e->lock);
            return ph_fail_null(ENOMEM, "hot area: out of memory");
        }
        e->hots = n;
        e->cap_hots = cap;
    }
    ph_hot *h = ph_hot_new(base, (end - base) / 4096, name, e->next_id,
                           e->nnodes);
    if (!h) {
        pthread_mutex_unlock(&e->lock);
        return NULL;
    }
    if (e->src->ops->add_range(e->src, (void *)base, end - base) != 0) {
        int err = errno;
        char msg[200];
        snprintf(msg, sizeof msg, "%s", ph_error_message());
        pthread_mutex_unlock(&e->lock);
        ph_fail(err ? err : EINVAL, "hot area \"%s\": the %s source refused it: %s",
                h->name, e->src->ops->name, msg);
        ph_hot_free(h); /* after the message, which names it */
        return NULL;
    }
    e->next_id++;
    h->watched = 1;
    h->armed_mark = ph_engine_armed_pages(e);
    h->sweep_mark = h->armed_mark;
    memmove(&e->hots[u + 1], &e->hots[u], (e->nhots - u) * sizeof *e->hots);
    e->hots[u] = h;
    e->nhots++;
    restart_cold_counts(e);
    ph_history_add(e, h);
    mark_fresh(e, h);
    pthread_mutex_unlock(&e->lock);
    ph_info("hot area \"%s\": %zu pages at %p", h->name, h->npages,
            (void *)base);
    return h;
}

int ph_engine_unwatch(ph_engine *e, ph_hot *h)
{
    if (h->watched &&
        e->src->ops->remove_range(e->src, (void *)h->base, h->npages * 4096) != 0)
        return -1;
    h->watched = 0;
    return 0;
}

int ph_engine_rewatch(ph_engine *e, ph_hot *h)
{
    if (!h->watched &&
        e->src->ops->add_range(e->src, (void *)h->base, h->npages * 4096) != 0)
        return -1;
    h->watched = 1;
    return 0;
}

/* Where h is in the engine's list; nhots when it is not there (lock
 * held). */
static size_t area_index(const ph_engine *e, const ph_hot *h)
{
    size_t i = 0;
    while (i < e->nhots && e->hots[i] != h)
        i++;
    return i;
}

int ph_engine_unregister(ph_engine *e, ph_hot *h)
{
    pthread_mutex_lock(&e->lock);
    size_t i = area_index(e, h);
    if (!h || i == e->nhots) {
        pthread_mutex_unlock(&e->lock);
        return ph_fail(ENOENT, "hot area %p is not registered (already "
                       "unregistered, or not from ph_area_register)",
                       (void *)h);
    }
    /* Samples already taken in the area are dropped with it. */
    (void)ph_engine_unwatch(e, h);
    ph_history_retire(e, h);
    if (e->last_hot == h)
        e->last_hot = NULL;
    memmove(&e->hots[i], &e->hots[i + 1],
            (e->nhots - i - 1) * sizeof *e->hots);
    e->nhots--;
    restart_cold_counts(e);
    pthread_mutex_unlock(&e->lock);
    ph_hot_free(h);
    return 0;
}

int ph_engine_area_idle(ph_engine *e, ph_hot *h, int idle)
{
    pthread_mutex_lock(&e->lock);
    if (!h || area_index(e, h) == e->nhots) {
        pthread_mutex_unlock(&e->lock);
        return ph_fail(ENOENT, "hot area %p is not registered", (void *)h);
    }
    int rc = 0;
    if (idle && !h->idle) {
        /* samples taken in it meanwhile are dropped with the range */
        if (ph_engine_unwatch(e, h) != 0) {
            rc = -1; /* still watched, still in use */
        } else {
            h->idle = 1;
            h->fresh = 0;
        }
    } else if (!idle && h->idle) {
        /* in use again, as if registered now (the source's error, if it
         * refuses the range, leaves it idle) */
        if (ph_engine_rewatch(e, h) != 0) {
            rc = -1;
        } else {
            h->idle = 0;
            h->cold = 0;
            h->cold_streak = 0;
            restart_cold_counts(e);
            mark_fresh(e, h);
        }
    }
    pthread_mutex_unlock(&e->lock);
    return rc;
}

/* ---- the sample stream ---------------------------------------------- */

static int cmp_rec(const void *a, const void *b)
{
    const ph_rec_sample *x = a, *y = b;
    if (x->page != y->page)
        return x->page < y->page ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

static void ingest(void *arg, const ph_sample *s, size_t n)
{
    ph_engine *e = arg;
    uint64_t wt = e->cfg.sample_weight ? e->cfg.sample_weight : 1;
    e->interval_samples += n;
    if (e->recording >= 0) {
        for (size_t k = 0; k < n; k++) {
            uint64_t c64 = (uint64_t)s[k].count * wt;
            uint32_t cnt = c64 > UINT32_MAX ? UINT32_MAX : (uint32_t)c64;
            if (e->nrec == e->cap_rec) {
                size_t cap = e->cap_rec ? 2 * e->cap_rec : 4096;
                ph_rec_sample *r = realloc(e->rec, cap * sizeof *r);
                if (!r)
                    continue; /* a lost sample, like a full ring */
                e->rec = r;
                e->cap_rec = cap;
            }
            e->rec[e->nrec++] = (ph_rec_sample){s[k].page, s[k].node, cnt};
        }
        return;
    }
    /* Samples come in page order, so most fall in the area the last one
     * did: ph_hot_add_samples takes them for as long as they do. */
    ph_hot *h = e->last_hot;
    size_t k = 0;
    while (k < n) {
        if (!h || s[k].page - h->base >= ph_hot_end(h) - h->base) {
            h = ph_engine_find_locked(e, s[k].page);
            if (!h) {
                k++;
                continue;
            }
            e->last_hot = h;
        }
        uint64_t added;
        k += ph_hot_add_samples(h, s + k, n - k, wt, &added);
        h->st.accesses += added;
    }
}

uint64_t ph_engine_drain(ph_engine *e)
{
    uint64_t t0 = ph_now_ns();
    e->src->ops->drain(e->src, ingest, e);
    if (e->recording >= 0 && e->nrec > 1)
        qsort(e->rec, e->nrec, sizeof *e->rec, cmp_rec);
    return ph_now_ns() - t0;
}

/* Pages of every hot area (lock held). */
static size_t hot_pages(const ph_engine *e)
{
    size_t n = 0;
    for (size_t a = 0; a < e->nhots; a++)
        n += e->hots[a]->npages;
    return n;
}

/* The hot pages a first sweep has to watch to see the hot set whole
 * (lock held): every page of the hot areas, or, when they are more than
 * sample_first_pages and the source can tell, those of them ever touched
 * -- the untouched part has nothing to show and the source does not
 * watch it.  Counted only up to sample_first_pages + 1 (cost bounded). */
static size_t sweep_pages(ph_engine *e)
{
    size_t hot = hot_pages(e);
    if (hot <= e->cfg.sample_first_pages || !e->src->ops->touched_pages)
        return hot;
    size_t touched = e->src->ops->touched_pages(e->src, e->cfg.sample_first_pages);
    return touched < hot ? touched : hot;
}

/* The sampling cost of the interval now ending and its wall time, ns
 * (arming, handlers, cfg.sample_trap_ns a sample).  0 when unknown. */
static int interval_cost(ph_engine *e, double *cost, double *wall)
{
    if (!e->interval_ns)
        return 0;
    ph_source_stats ss;
    memset(&ss, 0, sizeof ss);
    e->src->ops->stats(e->src, &ss);
    *wall = (double)(ph_now_ns() - e->interval_ns);
    *cost = (double)(ss.arm_ns - e->last_ss.arm_ns) +
            (double)(ss.handler_ns - e->last_ss.handler_ns) +
            (double)((ss.samples - ss.credited) -
                     (e->last_ss.samples - e->last_ss.credited)) *
                e->cfg.sample_trap_ns;
    return *wall > 0;
}

/* Fills the bucket of sampling time (PH_BUDGET_BURST_NS) at
 * cfg.sample_budget of the wall time since it was last filled. */
static void fill_credit(ph_engine *e)
{
    uint64_t now = ph_now_ns();
    double cap = e->cfg.sample_budget * (double)PH_BUDGET_BURST_NS;
    e->credit_ns += e->cfg.sample_budget * (double)(now - e->credit_at_ns);
    if (e->credit_ns > cap)
        e->credit_ns = cap;
    e->credit_at_ns = now;
}

/* What one trap costs the program as far as the engine knows before it
 * has sampled: its round trip and the handler's time, as measured at
 * start. */
static double sample_cost_ns(const ph_engine *e)
{
    return e->cfg.sample_trap_ns + e->cfg.sample_handler_ns;
}

/* The first sweep's runs (lock held): run_pages contiguous pages, a
 * trap standing for its run, where the source can (set_run_pages); 1 =
 * page-exact, the source's own runs. */
static void sweep_runs(ph_engine *e, size_t run_pages)
{
    if (!e->src->ops->set_run_pages || run_pages == e->sweep_run_pages ||
        (run_pages <= 1 && e->sweep_run_pages <= 1))
        return;
    if (e->src->ops->set_run_pages(e->src, run_pages > 1 ? run_pages : 0) != 0)
        return;
    e->sweep_run_pages = run_pages;
    if (run_pages > e->sweep_run_max) {
        e->sweep_run_max = run_pages;
        ph_info("engine: the first sweep's %zu traps would cost about %.0f ms: "
                "it watches runs of %zu pages, a trap standing for its run",
                e->sweep_hot_pages, (double)e->sweep_hot_pages * sample_cost_ns(e) / 1e6,
                run_pages);
    }
}

/* Whether the engine's configuration and source allow a first sweep
 * (ph_engine_arm): a budget to widen, and more pages to widen it to. */
static int sweep_possible(const ph_engine_cfg *cfg, const ph_source *src)
{
    return !cfg->full_snapshot && cfg->sample_pages &&
           cfg->sample_first_pages > cfg->sample_pages && src->ops->set_budget;
}

/* The sampling budget's bucket full, as at the start. */
static void fill_bucket(ph_engine *e)
{
    e->credit_ns = e->cfg.sample_budget * (double)PH_BUDGET_BURST_NS;
    e->credit_at_ns = ph_now_ns();
}

/* The sampling budget: the share of the interval's wall time that went
 * into sampling (arming, handlers, the traps themselves) is kept near
 * cfg.sample_budget by cutting or doubling the pages watched per
 * interval, and by pausing between intervals when even
 * PH_BUDGET_FLOOR_PAGES cost too much and the bucket of sampling time
 * (PH_BUDGET_BURST_NS, fill_credit) is empty: the pause lasts until it
 * has filled back to zero.  The first sweep is not charged to the
 * bucket (it is paid once).  Called after an interval's drain (lock
 * held). */
static void adapt_budget(ph_engine *e)
{
    int adapt = !e->cfg.full_snapshot && e->cfg.sample_budget > 0 &&
                e->src->ops->set_budget;
    double cost = 0, wall = 0;
    if (adapt)
        fill_credit(e);
    if (e->first_sweep == PH_FIRST_ON) {
        /* the sweep is paid once: its intervals are not the rate to adapt
         * to.  One that saw little of what it watched goes on. */
        size_t hot = sweep_pages(e);
        /* pages the serial code trapped are not seen: the sweep is for
         * the regions (a program's serial set-up before its iterations
         * would use it up); PH_SWEEP_MAX_SERIAL bounds what serial code
         * between the regions costs it */
        double seen = (double)e->interval_samples;
        ph_source_stats ss;
        memset(&ss, 0, sizeof ss);
        e->src->ops->stats(e->src, &ss);
        int serial_only = e->interval_samples == 0 && ss.serial > e->last_ss.serial;
        /* as one whose areas grew after it was armed (a program's
         * arrays registered one after the other): the next takes them --
         * while they still fit in the sweep (a hot set grown beyond it is
         * sampled by the budget, as one too large from the start: a
         * part of it swept would cost a trap a page, unbudgeted, and see
         * no more than normal intervals do) */
        if (hot <= e->cfg.sample_first_pages &&
            (seen < PH_SWEEP_SEEN_SHARE * (double)e->interval_armed ||
             hot > e->sweep_hot_pages) &&
            (serial_only ? ++e->sweep_serial < PH_SWEEP_MAX_SERIAL
                         : ++e->sweep_invocations < PH_SWEEP_MAX_INVOCATIONS))
            return;
        e->first_sweep = PH_FIRST_OVER;
        /* the pages it watched took a trap a run: as many traps as runs */
        double runs = (double)e->interval_armed /
                      (double)(e->sweep_run_pages > 1 ? e->sweep_run_pages : 1);
        sweep_runs(e, 1);
        /* but what its samples cost says how many the next interval can
         * afford (a trap a page from now on): no more than would keep it
         * within the budget */
        if (adapt && e->interval_armed && interval_cost(e, &cost, &wall) &&
            cost / wall > e->cfg.sample_budget) {
            double want = runs * e->cfg.sample_budget / (cost / wall);
            size_t floor_pages = PH_BUDGET_FLOOR_PAGES;
            size_t pages = want < (double)floor_pages ? floor_pages : (size_t)want;
            if (pages < e->budget_pages) {
                e->budget_pages = pages;
                ph_info("engine: the first sweep's sampling took %.2f%% of its "
                        "interval: watching %zu pages per interval",
                        100 * cost / wall, pages);
            }
        }
        e->src->ops->set_budget(e->src, e->budget_pages);
        return;
    }
    if (!adapt || !interval_cost(e, &cost, &wall))
        return;
    size_t hot = hot_pages(e);
    size_t pages = e->budget_pages, floor_pages = PH_BUDGET_FLOOR_PAGES;
    size_t was = pages;
    double frac = cost / wall;
    if (frac > e->cfg.sample_budget && pages > floor_pages) {
        /* at least halved; cut in proportion when far over (a costly
         * mechanism found after the first intervals) */
        double want = (double)pages * e->cfg.sample_budget / frac;
        pages = want < (double)(pages / 2) ? (size_t)want : pages / 2;
        if (pages < floor_pages)
            pages = floor_pages;
    } else if (frac < e->cfg.sample_budget / 2 && pages < hot) {
        pages = pages * 2 < hot ? pages * 2 : hot;
    }
    /* Even the floor over budget and the bucket empty: pause until it
     * has filled to zero again. */
    e->credit_ns -= cost;
    double owe_max = e->cfg.sample_budget * (double)PH_BUDGET_MAX_PAUSE_NS;
    if (e->credit_ns < -owe_max)
        e->credit_ns = -owe_max; /* a debt beyond the longest pause is forgiven */
    uint64_t pause = 0;
    if (e->credit_ns < 0 && pages == floor_pages)
        pause = (uint64_t)(-e->credit_ns / e->cfg.sample_budget);
    if (pause && !e->pause_ns)
        ph_info("engine: sampling %zu pages took %.2f%% of the interval: "
                "pausing %.0f ms between intervals of %zu pages", was,
                100 * frac, (double)pause / 1e6, pages);
    e->pause_ns = pause;
    e->arm_after_ns = pause ? ph_now_ns() + pause : 0;
    if (pages != e->budget_pages) {
        e->budget_pages = pages;
        e->src->ops->set_budget(e->src, pages);
        ph_info("engine: sampling took %.2f%% of the interval: watching "
                "%zu pages per interval", 100 * frac, pages);
    }
}

void ph_engine_arm(ph_engine *e)
{
    if (e->nhots == 0)
        return;
    if (e->arm_after_ns && ph_now_ns() < e->arm_after_ns) {
        /* paused (adapt_budget): nothing watched, no evidence expected */
        e->paused_arms++;
        e->interval_armed = 0;
        e->interval_samples = 0;
        e->empty_ends = 0;
        return;
    }
    e->arm_after_ns = 0;
    if (e->first_sweep == PH_FIRST_PENDING) {
        /* a sweep that cannot see the hot set whole buys nothing a normal
         * interval does not, at up to sample_first_pages samples */
        if (sweep_pages(e) <= e->cfg.sample_first_pages) {
            e->first_sweep = PH_FIRST_ON;
            e->src->ops->set_budget(e->src, e->cfg.sample_first_pages);
        } else {
            e->first_sweep = PH_FIRST_OVER;
        }
    }
    if (e->first_sweep == PH_FIRST_ON) {
        /* what this arm of the sweep can see, and in what runs */
        e->sweep_hot_pages = sweep_pages(e);
        sweep_runs(e, ph_crit_sweep_run_pages(e->sweep_hot_pages, sample_cost_ns(e),
                                              e->cfg.sample_first_ns,
                                              e->cfg.sample_first_run_pages));
    }
    uint64_t before = ph_engine_armed_pages(e);
    e->last_arm_ns = ph_now_ns();
    if (e->src->ops->arm(e->src, e->cfg.full_snapshot) == 0) {
        e->armed = 1;
        e->interval_ns = ph_now_ns();
        memset(&e->last_ss, 0, sizeof e->last_ss);
        e->src->ops->stats(e->src, &e->last_ss);
        e->interval_armed = e->last_ss.armed_pages - before;
        e->interval_samples = 0;
        e->empty_ends = 0;
    }
}

void ph_engine_arm_aside(ph_engine *e)
{
    uint64_t before = ph_engine_armed_pages(e);
    uint64_t swept_before = ph_engine_swept_pages(e);
    ph_engine_disarm(e);
    ph_engine_arm(e);
    uint64_t armed = ph_engine_armed_pages(e) - before;
    e->look_swept += ph_engine_swept_pages(e) - swept_before;
    for (size_t a = 0; a < e->nhots; a++) {
        e->hots[a]->armed_mark += armed;
        e->hots[a]->sweep_mark += armed;
    }
}

static void drop_samples(void *arg, const ph_sample *smp, size_t n)
{
    (void)smp;
    *(size_t *)arg += n;
}

int ph_engine_runtime_started(ph_engine *e)
{
    if (!e)
        return ph_fail(EINVAL, "ph_engine_runtime_started: NULL engine");
    pthread_mutex_lock(&e->lock);
    if (e->armed && e->iteration == 0 && e->recording < 0 && e->nhots > 0) {
        size_t dropped = 0;
        e->src->ops->drain(e->src, drop_samples, &dropped);
        /* and what the hybrid mechanism's looks took in already */
        for (size_t a = 0; a < e->nhots; a++)
            ph_hot_forget_interval(e->hots[a]);
        ph_engine_arm_aside(e);
        ph_info("engine: the OpenMP runtime started: the %zu samples of serial code "
                "before it are dropped and the interval watches its pages again", dropped);
    }
    pthread_mutex_unlock(&e->lock);
    return 0;
}

/* Iteration ends (or wake-ups) an interval that trapped nothing goes on
 * over before the next pages are watched. */
#define PH_EMPTY_EXTEND 3

/* An interval that trapped nothing carries no evidence: no invocation
 * (nothing to decide, and a quiet invocation would count toward
 * stability).  It goes on -- the pages it watches may be touched by a
 * later part of the iteration, when the iteration found is one part of
 * the real one -- for up to PH_EMPTY_EXTEND ends; then, or at once when
 * it watched nothing (no page resident yet), the next pages are armed.
 * It cost all the same: its traps may all have been serial code's (the
 * program's serial part touching watched pages between its regions),
 * and the mprotect mechanism's region gate changes the protection of
 * every watched page at every region.  The budget is adapted to that
 * cost before the next arm, as after any interval, and the interval
 * counts toward the end of the first sweep -- else a program whose
 * regions never touch the watched pages would pay for watching all of
 * them, every region, for ever.  Returns 1 when the caller must not
 * invoke (lock held). */
static int empty_interval(ph_engine *e)
{
    if (e->interval_samples)
        return 0;
    if (e->interval_armed && ++e->empty_ends <= PH_EMPTY_EXTEND)
        return 1;
    if (!e->armed && e->arm_after_ns) {
        /* a pause, not an empty interval: arm when it is over */
        ph_engine_arm(e);
        return 1;
    }
    e->empty_intervals++;
    ph_engine_disarm(e);
    if (e->interval_armed)
        adapt_budget(e);
    ph_engine_arm(e);
    return 1;
}

void ph_engine_rearm_if_empty(ph_engine *e)
{
    /* an arm that found no resident page (an area registered before the
     * program touched it) is redone at region boundaries, at most every
     * 10 ms, so that the first iterations are watched too (a program with
     * few iterations may have one boundary in all).  Not with engine_sync,
     * whose intervals start at iteration boundaries, as the memory
     * manager's do not. */
    if (!e->armed || e->interval_armed || e->interval_samples || e->cfg.sync ||
        e->recording >= 0 || e->cfg.mech == PH_MECH_OFF ||
        ph_now_ns() - e->last_arm_ns < 10000000u)
        return;
    ph_engine_disarm(e);
    ph_engine_arm(e);
}

void ph_engine_disarm(ph_engine *e)
{
    if (e->armed)
        e->src->ops->disarm(e->src);
    e->armed = 0;
}

uint64_t ph_engine_close(ph_engine *e)
{
    ph_engine_disarm(e);
    return ph_engine_drain(e);
}

/* ---- mechanisms ----------------------------------------------------- */

static int iterative_now(const ph_engine *e)
{
    if (e->cfg.mech == PH_MECH_ITERATIVE)
        return 1;
    return e->cfg.mech == PH_MECH_HYBRID && !e->hybrid_phases;
}

static uint64_t watched_pages(const ph_engine *e)
{
    uint64_t watched = 0;
    for (size_t a = 0; a < e->nhots; a++)
        if (e->hots[a]->watched)
            watched += e->hots[a]->npages;
    return watched;
}

/* Pages the rotation passed in the arms of the iterative part (those
 * of the early looks, which can pass pages before their traps came,
 * left out) since it began (lock held). */
static uint64_t hybrid_swept(ph_engine *e)
{
    return ph_engine_swept_pages(e) - e->look_swept - e->hybrid_mark;
}

/* HYBRID: is the iterative part over (lock held)?  Not before
 * hybrid_iters iterations; then once every watched page was looked at
 * since it began and its last invocation moved nothing, or once it
 * stopped by itself: the phases are recorded against a placement it
 * has seen. */
static int hybrid_part_over(ph_engine *e)
{
    if (e->cfg.mech != PH_MECH_HYBRID || e->hybrid_phases ||
        e->iteration < e->cfg.hybrid_iters)
        return 0;
    return !e->active ||
           (e->quiet >= 1 && hybrid_swept(e) >= watched_pages(e));
}

/* Ends the hybrid mechanism's iterative part when it is over (lock
 * held). */
static void end_hybrid_part(ph_engine *e)
{
    if (!hybrid_part_over(e))
        return;
    e->hybrid_phases = 1;
    ph_info("engine: hybrid: the iterative part ends after %u iterations: "
            "phases from now on", e->iteration);
}

/* Whether the quiet invocations hold evidence enough (lock held), for
 * the rule below: samples for PH_STABLE_SEEN_SHARE of the watched pages,
 * or, where the source can tell, of those ever touched (a static array
 * sized for the largest input has its used part to see), counted only as
 * far as the samples could cover.  The touched ones must be as many as at
 * the previous quiet invocation's look: a program still touching its
 * data for the first time (zeroing a V-cycle's grids, smallest first,
 * with iteration ends found meanwhile) is still setting up, and the
 * streak restarts with this invocation (samples this invocation's).  A
 * look with nothing to compare (the streak's first, or one after a look
 * that counted past its limit) concludes nothing either, without a
 * restart: on this path a streak is two invocations at least, and ends
 * at two equal looks in a row. */
static int quiet_evidence(ph_engine *e, uint64_t watched, uint64_t samples)
{
    if ((double)e->quiet_samples >= PH_STABLE_SEEN_SHARE * (double)watched)
        return 1;
    if (!e->src->ops->touched_pages)
        return 0;
    size_t limit = (size_t)((double)e->quiet_samples / PH_STABLE_SEEN_SHARE);
    size_t touched = e->src->ops->touched_pages(e->src, limit);
    /* a new streak has no previous look; a count past the limit (or
     * none) is no count */
    size_t prev = e->quiet == 1 ? PH_TOUCHED_UNKNOWN : e->quiet_touched;
    e->quiet_touched = touched > limit ? PH_TOUCHED_UNKNOWN : touched;
    if (e->quiet_touched == PH_TOUCHED_UNKNOWN || prev == PH_TOUCHED_UNKNOWN)
        return 0;
    if (touched != prev) { /* changed: the streak restarts here */
        e->quiet = 1;
        e->quiet_samples = samples;
        return 0;
    }
    uint64_t need = touched < watched ? touched : watched;
    return (double)e->quiet_samples >= PH_STABLE_SEEN_SHARE * (double)need;
}

/* One iterative invocation (lock held). */
static void run_iterative(ph_engine *e)
{
    if (!e->active || e->nhots == 0 || e->recording >= 0)
        return;
    /* An end the program signalled before the arm was complete (the
     * manager was arming, the iteration finished meanwhile) ends no
     * interval: it would close one that watched a part of one iteration
     * at most -- a first sweep of thousands of pages, armed while the
     * program ran, would see a few hundred.  The interval goes on to the
     * next end. */
    if (e->armed && e->end_ns < e->interval_ns)
        return;
    uint64_t ns = ph_engine_drain(e);
    if (empty_interval(e))
        return;
    ns += ph_engine_close(e);
    uint64_t samples = e->interval_samples;
    adapt_budget(e);
    uint64_t cand0 = e->tot.candidates;
    uint64_t moved = ph_engine_invoke(e, PH_INV_ITERATIVE,
                                      e->cfg.critical_pages, ns);
    /* observing, the engine would have moved its candidates: it goes on
     * looking while there are any */
    if (e->cfg.observe)
        moved = e->tot.candidates - cand0;
    uint64_t swept = ph_engine_swept_pages(e);
    if (moved) {
        e->quiet = 0;
        e->quiet_samples = 0;
        e->stable_mark = swept;
    } else {
        e->quiet++;
        e->quiet_samples += samples;
    }
    uint64_t watched = watched_pages(e);
    /* Stable: stable_after invocations with samples and no migration,
     * every watched page looked at since the last migration, and samples
     * in the quiet invocations for at least PH_STABLE_SEEN_SHARE of the
     * watched pages -- a page watched whose trap went to something else
     * (the simulated machine's first touches) or was never touched was
     * not seen: six samples of 259 pages, all local, are no evidence.
     * The evidence is looked at on every quiet invocation (it may restart
     * the streak), before the streak's length is. */
    int evidence = !moved && e->cfg.stable_after && quiet_evidence(e, watched, samples);
    if (evidence && e->quiet >= e->cfg.stable_after && !e->predictive &&
        swept - e->stable_mark >= watched) {
        e->active = 0;
        ph_info("engine: placement stable after %u iterations (%u "
                "invocations without a migration, %llu samples in them, "
                "every watched page looked at since the last migration): "
                "the iterative mechanism stops until a thread migrates",
                e->iteration, e->quiet,
                (unsigned long long)e->quiet_samples);
        for (size_t a = 0; a < e->nhots; a++)
            if (!e->hots[a]->cold)
                ph_engine_huge_remap(e->hots[a]);
    }
    end_hybrid_part(e);
    if (e->active && iterative_now(e))
        ph_engine_arm(e);
}

/* Work for one wake of the manager or one sync call (lock held). */
static void serve(ph_engine *e, unsigned iterations)
{
    e->iteration += iterations;
    e->tot.iterations += iterations;
    ph_history_start_strips(e);
    adopt_fresh(e);
    if (iterative_now(e)) {
        run_iterative(e);
        /* stopped by itself earlier: its invocations return at once */
        if (!e->active)
            end_hybrid_part(e);
    }
    if (e->cfg.mech == PH_MECH_HYBRID && e->hybrid_phases && e->armed &&
        e->recording < 0) {
        /* Hybrid just switched to phases: sampling starts again at the
         * first phase to record. */
        ph_engine_drain(e);
        ph_engine_close(e);
    }
    ph_engine_huge_remap_some(e, PH_REMAP_UNITS);
}

int ph_engine_iteration_end(ph_engine *e)
{
    uint64_t now = ph_now_ns(); /* the lock may wait for an arm */
    pthread_mutex_lock(&e->lock);
    e->end_ns = now;
    if (e->has_mgr) {
        e->pending++;
        /* busy: it looks for posts before it waits; lingering: it wakes
         * by itself within PH_END_LINGER_MS */
        if (!e->busy && !e->lingering)
            pthread_cond_signal(&e->cv);
        pthread_mutex_unlock(&e->lock);
        return 0;
    }
    serve(e, 1);
    pthread_mutex_unlock(&e->lock);
    return 0;
}

static void tick_locked(ph_engine *e)
{
    if (e->nhots == 0 || e->recording >= 0)
        return;
    uint64_t ns = ph_engine_drain(e);
    if (empty_interval(e))
        return;
    ns += ph_engine_close(e);
    adapt_budget(e);
    ph_engine_invoke(e, PH_INV_SAMPLING, e->cfg.sample_max_moves, ns);
    ph_engine_huge_remap_some(e, PH_REMAP_UNITS);
    ph_engine_arm(e);
}

int ph_engine_tick(ph_engine *e)
{
    pthread_mutex_lock(&e->lock);
    tick_locked(e);
    pthread_mutex_unlock(&e->lock);
    return 0;
}

uint64_t ph_engine_manager_serves(ph_engine *e)
{
    pthread_mutex_lock(&e->lock);
    uint64_t n = e->serves;
    pthread_mutex_unlock(&e->lock);
    return n;
}

int ph_engine_wait(ph_engine *e)
{
    pthread_mutex_lock(&e->lock);
    while (e->has_mgr && (e->pending || e->busy))
        pthread_cond_wait(&e->done_cv, &e->lock);
    pthread_mutex_unlock(&e->lock);
    return 0;
}

static void deadline_after_ms(struct timespec *ts, unsigned ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void *manager_main(void *arg)
{
    ph_engine *e = arg;
    struct timespec next;
    unsigned period = 0; /* of the deadline `next`, 0 = none set */
    pthread_mutex_lock(&e->lock);
    while (!e->stop || e->pending) {
        /* read each time: ph_engine_set_mechanism may change it, and the
         * early looks end with the first iteration */
        int sampling = e->cfg.mech == PH_MECH_SAMPLING;
        int early = !sampling && ph_engine_early_on(e);
        if (e->pending) {
            unsigned n = e->pending;
            e->pending = 0;
            e->busy = 1;
            e->serves++;
            serve(e, n);
            e->busy = 0;
            pthread_cond_broadcast(&e->done_cv);
            /* ends closer together than the linger are served together
             * (their counts cover several iterations, which the criteria
             * do not mind), one wake-up for all of them */
            struct timespec until;
            deadline_after_ms(&until, PH_END_LINGER_MS);
            e->lingering = 1;
            while (!e->pending && !e->stop &&
                   pthread_cond_timedwait(&e->cv, &e->lock, &until) != ETIMEDOUT)
                ;
            e->lingering = 0;
            continue;
        }
        if (sampling || early) {
            unsigned want = sampling ? e->cfg.sample_period_ms
                                     : e->cfg.early_period_ms;
            if (period != want) {
                period = want;
                deadline_after_ms(&next, period);
            }
            int rc = pthread_cond_timedwait(&e->cv, &e->lock, &next);
            if (rc == ETIMEDOUT) {
                if (sampling)
                    tick_locked(e);
                else
                    ph_engine_look_locked(e);
                deadline_after_ms(&next, period);
            }
        } else {
            period = 0;
            pthread_cond_wait(&e->cv, &e->lock);
        }
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

/* ---- life ----------------------------------------------------------- */

static int build_latency(ph_engine *e)
{
    int n = e->nnodes;
    e->lat_ns = calloc((size_t)n * (size_t)n, sizeof(double));
    e->mig_ns = calloc((size_t)n * (size_t)n, sizeof(double));
    if (!e->lat_ns || !e->mig_ns)
        return -1;
    /* topology: latency_ns[from_cpu_node * n + memory_node], the model's
     * ru(i, h) with i the accessing node and h the home. */
    for (int i = 0; i < n; i++)
        for (int h = 0; h < n; h++) {
            e->lat_ns[i * n + h] = ph_topo_lat(e->topo, i, h);
            /* migrate_ns[h*n+i]: moving a page from home h to node i */
            e->mig_ns[h * n + i] =
                e->topo->migrate_ns_4k[h * n + i] +
                e->topo->migrate_ns_call / 512.0;
        }
    e->lat = (ph_latency_model){.nnodes = n,
                                .lat_ns = e->lat_ns,
                                .contention_ns = e->cfg.contention_ns,
                                .migrate_ns = e->mig_ns};
    return 0;
}

ph_engine *ph_engine_new(const ph_topology *topo, ph_os *os, ph_mover *mover,
                         ph_source *src, const ph_engine_cfg *cfg)
{
    if (!topo || !os || !mover || !src || !cfg) {
        if (src)
            src->ops->close(src);
        return ph_fail_null(EINVAL, "engine: missing topology, machine, "
                            "mover or source");
    }
    ph_engine *e = calloc(1, sizeof *e);
    if (!e) {
        src->ops->close(src);
        return ph_fail_null(ENOMEM, "engine: out of memory");
    }
    e->topo = topo;
    e->os = os;
    e->mover = mover;
    e->src = src;
    e->cfg = *cfg;
    e->nnodes = topo->nnodes;
    e->recording = -1;
    e->active = 1;
    e->budget_pages = cfg->sample_pages;
    fill_bucket(e);
    e->first_sweep = sweep_possible(cfg, src) ? PH_FIRST_PENDING : PH_FIRST_OVER;
    e->iters_total = cfg->iterations_expected;
    for (int t = 0; t < PH_MAX_THREADS; t++)
        e->thr[t] = (ph_thread_track){-1, -1, 0};
    pthread_mutex_init(&e->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&e->done_cv, NULL);
    if (build_latency(e) != 0) {
        ph_engine_free(e);
        return ph_fail_null(ENOMEM, "engine: out of memory");
    }
    ph_engine_plan_stand_ins(e);
    if (!cfg->sync && cfg->mech != PH_MECH_OFF) {
        int rc = ph_thread_start(&e->mgr, "ph-manager", manager_main, e);
        if (rc != 0) {
            ph_engine_free(e);
            return ph_fail_null(rc, "engine: cannot start the memory "
                                "manager thread");
        }
        e->has_mgr = 1;
    }
    return e;
}

void ph_engine_free(ph_engine *e)
{
    if (!e)
        return;
    if (e->has_mgr) {
        pthread_mutex_lock(&e->lock);
        e->stop = 1;
        pthread_cond_signal(&e->cv);
        pthread_mutex_unlock(&e->lock);
        pthread_join(e->mgr, NULL);
        e->has_mgr = 0;
    }
    pthread_mutex_lock(&e->lock);
    ph_engine_disarm(e);
    for (size_t i = 0; i < e->nhots; i++) {
        (void)ph_engine_unwatch(e, e->hots[i]);
        ph_hot_free(e->hots[i]);
    }
    e->nhots = 0;
    pthread_mutex_unlock(&e->lock);
    if (e->src)
        e->src->ops->close(e->src);
    ph_engine_phases_free(e);
    ph_history_free(e);
    ph_engine_invoke_free(e);
    free(e->rec);
    free(e->hots);
    free(e->log);
    free(e->lat_ns);
    free(e->mig_ns);
    pthread_cond_destroy(&e->cv);
    pthread_cond_destroy(&e->done_cv);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

void ph_engine_fork_prepare(ph_engine *e)
{
    pthread_mutex_lock(&e->lock);
}

void ph_engine_fork_parent(ph_engine *e)
{
    pthread_mutex_unlock(&e->lock);
}

void ph_engine_fork_child(ph_engine *e)
{
    /* The one thread of the child holds the lock (prepare): start it and
     * the condition variables afresh instead of unlocking, so that
     * neither the parent's manager's wait on cv nor glibc's owner checks
     * follow them into the child. */
    pthread_mutex_init(&e->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&e->done_cv, NULL);
    e->has_mgr = 0;
    e->pending = 0;
    e->busy = 0;
    e->stop = 0;
    e->cfg.sync = 1;
}

uint64_t ph_engine_armed_pages(ph_engine *e)
{
    ph_source_stats ss;
    memset(&ss, 0, sizeof ss);
    e->src->ops->stats(e->src, &ss);
    return ss.armed_pages;
}

uint64_t ph_engine_swept_pages(ph_engine *e)
{
    ph_source_stats ss;
    memset(&ss, 0, sizeof ss);
    e->src->ops->stats(e->src, &ss);
    return ss.swept_pages;
}

int ph_engine_set_mechanism(ph_engine *e, ph_mechanism mech)
{
    if ((int)mech < 0 || mech > PH_MECH_OFF)
        return ph_fail(EINVAL, "engine: no mechanism %d", (int)mech);
    pthread_mutex_lock(&e->lock);
    if (e->recording >= 0) {
        pthread_mutex_unlock(&e->lock);
        return ph_fail(EBUSY, "engine: a phase is being recorded");
    }
    if (mech != e->cfg.mech && mech != PH_MECH_OFF) {
        /* The sampling budget's state was run up under the other
         * mechanism: the sampling mechanism standing in for the iterative
         * one while serial code (the program's set-up after its first
         * region) trapped its pages can owe a pause of seconds and have
         * cut the pages to the floor, and the iterative one would then
         * watch nothing for the first iterations it finds.  The new
         * mechanism starts with a full bucket and sample_pages; its own
         * intervals adapt them again. */
        fill_bucket(e);
        e->pause_ns = 0;
        e->arm_after_ns = 0;
        /* Once in a run, the iterative mechanism that takes over from the
         * sampling one (an iteration found at last) starts with a sweep:
         * the first one went by while the program ran its set-up, and its
         * samples are not the iterations' */
        if (mech != PH_MECH_SAMPLING && e->cfg.mech == PH_MECH_SAMPLING &&
            e->first_sweep == PH_FIRST_OVER && !e->sweep_again &&
            sweep_possible(&e->cfg, e->src)) {
            e->sweep_again = 1;
            e->first_sweep = PH_FIRST_PENDING;
            e->sweep_invocations = 0;
            e->sweep_serial = 0;
        }
        if (e->first_sweep != PH_FIRST_ON && e->budget_pages != e->cfg.sample_pages) {
            e->budget_pages = e->cfg.sample_pages;
            if (e->src->ops->set_budget)
                e->src->ops->set_budget(e->src, e->budget_pages);
        }
    }
    if (mech == PH_MECH_HYBRID && e->cfg.mech != PH_MECH_HYBRID) {
        /* its iterative part begins now (phases recorded before, under
         * an earlier hybrid, replay again once it is over) */
        e->hybrid_phases = 0;
        e->hybrid_waited = 0;
        e->hybrid_mark = ph_engine_swept_pages(e) - e->look_swept;
    }
    e->cfg.mech = mech;
    e->active = 1;
    e->quiet = 0;
    e->quiet_samples = 0;
    e->stable_mark = ph_engine_swept_pages(e);
    if (mech == PH_MECH_OFF)
        ph_engine_disarm(e);
    else if (!e->armed)
        ph_engine_arm(e);
    int start = !e->cfg.sync && !e->has_mgr && mech != PH_MECH_OFF;
    pthread_cond_signal(&e->cv); /* the manager re-reads the mechanism */
    pthread_mutex_unlock(&e->lock);
    if (start) {
        int rc = ph_thread_start(&e->mgr, "ph-manager", manager_main, e);
        if (rc != 0)
            return ph_fail(rc, "engine: cannot start the memory manager");
        pthread_mutex_lock(&e->lock);
        e->has_mgr = 1;
        pthread_mutex_unlock(&e->lock);
    }
    ph_info("engine: mechanism switched to %s",
            (const char *[]){"iterative", "sampling", "replay", "hybrid",
                             "off"}[mech]);
    return 0;
}

ph_source *ph_engine_source(ph_engine *e)
{
    return e->src;
}
