/*
 * stats.c -- what the engine did: totals, the per-area counters and the
 * invocation log (one record per area per invocation, and one per phase
 * record / replay / undo), readable through the API and written as JSON.
 *
 * UPMlib's Table 1 comes out of it: hot pages (areas[].pages), migrated
 * over eligible (migrated / candidates), and the share of migrations in
 * the first two invocations (migrated_first2 / migrated).
 * The log keeps the first PH_LOG_MAX records; later ones are counted in
 * the totals only (log_dropped).
 */
#include "engine/engine_int.h"

#include "config/options.h"

#include "base/error.h"
#include "base/json_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PH_LOG_MAX 65536

void ph_engine_log_add(ph_engine *e, const ph_invocation *inv)
{
    ph_engine_totals *t = &e->tot;
    t->scanned += inv->scanned;
    t->candidates += inv->candidates;
    t->migrated += inv->migrated;
    t->failed += inv->failed;
    t->frozen += inv->frozen;
    t->melted += inv->melted;
    t->accesses += inv->accesses;
    t->remote_accesses_before += inv->remote_before;
    t->remote_accesses_after += inv->remote_after;
    t->bytes_moved += inv->bytes_moved;
    t->huge_migrated += inv->huge_migrated;
    t->huge_split += inv->huge_split;
    t->huge_collapsed += inv->huge_collapsed;
    t->engine_ns += inv->engine_ns;
    t->move_ns += inv->move_ns;
    t->sampler_ns += inv->sampler_ns;
    if (e->nlog == PH_LOG_MAX)
        return;
    if (e->nlog == e->cap_log) {
        size_t cap = e->cap_log ? 2 * e->cap_log : 64;
        ph_invocation *l = realloc(e->log, cap * sizeof *l);
        if (!l)
            return;
        e->log = l;
        e->cap_log = cap;
    }
    e->log[e->nlog++] = *inv;
}

static void fill_totals(ph_engine *e, ph_engine_totals *out)
{
    *out = e->tot;
    out->active = e->active;
    out->predictive = e->predictive;
    out->areas = e->nhots;
    out->hot_pages = 0;
    out->bookkeeping_bytes = 0;
    for (size_t a = 0; a < e->nhots; a++) {
        out->hot_pages += e->hots[a]->npages;
        out->bookkeeping_bytes += ph_hot_bytes(e->hots[a]);
    }
}

void ph_engine_get_totals(ph_engine *e, ph_engine_totals *out)
{
    pthread_mutex_lock(&e->lock);
    fill_totals(e, out);
    pthread_mutex_unlock(&e->lock);
}

int ph_engine_try_totals(ph_engine *e, ph_engine_totals *out)
{
    if (pthread_mutex_trylock(&e->lock) != 0)
        return -1;
    fill_totals(e, out);
    pthread_mutex_unlock(&e->lock);
    return 0;
}

int ph_engine_area_stats(ph_engine *e, const ph_hot *h, ph_hot_stats *out)
{
    pthread_mutex_lock(&e->lock);
    for (size_t a = 0; a < e->nhots; a++)
        if (e->hots[a] == h) {
            *out = h->st;
            pthread_mutex_unlock(&e->lock);
            return 0;
        }
    pthread_mutex_unlock(&e->lock);
    return ph_fail(ENOENT, "hot area %p is not registered", (const void *)h);
}

size_t ph_engine_log(ph_engine *e, size_t first, ph_invocation *out,
                     size_t max)
{
    pthread_mutex_lock(&e->lock);
    size_t n = e->nlog;
    for (size_t i = 0; i < max && first + i < n; i++)
        out[i] = e->log[first + i];
    pthread_mutex_unlock(&e->lock);
    return n;
}

static const char *kind_name(int k)
{
    static const char *names[] = {"iterative", "sampling", "record",
                                  "replay", "undo", "early"};
    return k >= 0 && k <= PH_INV_EARLY ? names[k] : "?";
}

static const char *mech_name(ph_mechanism m)
{
    static const char *names[] = {"iterative", "sampling", "replay",
                                  "hybrid", "off"};
    return m <= PH_MECH_OFF ? names[m] : "?";
}

#define KU(w, k, v) (ph_jw_key(w, k), ph_jw_uint(w, (uint64_t)(v)))
#define KD(w, k, v) (ph_jw_key(w, k), ph_jw_double(w, (double)(v)))
/* The counters an area's totals and one invocation both keep, by the
 * same field names: written by one list. */
#define KU_OUTCOME(w, s)                                                  \
    (KU(w, "scanned", (s)->scanned), KU(w, "candidates", (s)->candidates), \
     KU(w, "migrated", (s)->migrated),                                    \
     KU(w, "failed_busy", (s)->failed_busy),                              \
     KU(w, "failed_nomem", (s)->failed_nomem),                            \
     KU(w, "failed_access", (s)->failed_access),                          \
     KU(w, "failed_fault", (s)->failed_fault),                            \
     KU(w, "failed_other", (s)->failed_other),                            \
     KU(w, "frozen", (s)->frozen), KU(w, "melted", (s)->melted),          \
     KU(w, "accesses", (s)->accesses))
#define KU_MOVED(w, s)                                                    \
    (KU(w, "bytes_moved", (s)->bytes_moved),                              \
     KU(w, "huge_migrated", (s)->huge_migrated),                          \
     KU(w, "huge_split", (s)->huge_split),                                \
     KU(w, "huge_collapsed", (s)->huge_collapsed))

static void write_strip(ph_jw *w, const char *key, const int8_t *strip, size_t n)
{
    ph_jw_key(w, key);
    ph_jw_array(w, 1);
    for (size_t b = 0; b < n; b++)
        ph_jw_int(w, strip[b]);
    ph_jw_end(w);
}

/* One area's record; h is the live area (NULL once unregistered). */
static void write_area(ph_jw *w, const ph_area_rec *r, const ph_hot *h)
{
    const ph_hot_stats *s = &r->st;
    ph_jw_object(w, 0);
    ph_jw_key(w, "id");
    ph_jw_int(w, r->id);
    ph_jw_key(w, "name");
    ph_jw_string(w, r->name);
    KU(w, "base", r->base);
    KU(w, "pages", r->npages);
    KU(w, "bytes", r->npages * 4096);
    ph_jw_key(w, "live");
    ph_jw_bool(w, h != NULL);
    ph_jw_key(w, "registered_iteration");
    ph_jw_int(w, r->registered_iter);
    ph_jw_key(w, "removed_iteration");
    if (r->removed_iter < 0)
        ph_jw_null(w);
    else
        ph_jw_int(w, r->removed_iter);
    if (h) {
        KU(w, "bookkeeping_bytes", ph_hot_bytes(h));
        KD(w, "factor", h->factor);
        ph_jw_key(w, "cold");
        ph_jw_bool(w, h->cold);
        KU(w, "huge_remapped", h->huge_remapped);
    }
    KU(w, "invocations", s->invocations);
    KU_OUTCOME(w, s);
    KU(w, "migrated_first2", s->migrated_first2);
    KU(w, "remote_accesses", s->remote_accesses);
    KU_MOVED(w, s);
    KU(w, "sampled_pages", r->sampled_pages);
    KU(w, "sampled_pages_on_top_accessor", r->sampled_local);
    ph_jw_key(w, "owner_local_share");
    if (r->sampled_pages)
        ph_jw_double(w, (double)r->sampled_local / (double)r->sampled_pages);
    else
        ph_jw_null(w);
    KU(w, "pages_moved_twice", r->moved_twice);
    /* the owner-local share when the engine first looked, before it moved
     * anything (homes asked of the OS then; owners from the whole run) */
    KU(w, "start_pages", r->start_pages);
    KU(w, "start_pages_on_top_accessor", r->start_local);
    ph_jw_key(w, "owner_local_share_start");
    if (r->start_pages)
        ph_jw_double(w, (double)r->start_local / (double)r->start_pages);
    else
        ph_jw_null(w);
    /* home strips: node index of each bucket's middle page, -1 unknown */
    KD(w, "strip_pages_per_bucket",
       r->nend ? (double)r->npages / (double)r->nend
       : r->nstart ? (double)r->npages / (double)r->nstart : 0.0);
    write_strip(w, "strip_start", r->strip_start, r->nstart);
    write_strip(w, "strip_end", r->strip_end, r->nend);
    ph_jw_end(w);
}

static ph_engine_report_fn report_extra;

void ph_engine_set_report_extra(ph_engine_report_fn fn)
{
    report_extra = fn;
}

/* One invocation; criterion: the engine's (ph_criterion), named unless
 * the predictive criterion decided. */
static void write_inv(ph_jw *w, const ph_invocation *v, int criterion)
{
    ph_jw_object(w, 1);
    KU(w, "seq", v->seq);
    KU(w, "iteration", v->iteration);
    ph_jw_key(w, "kind");
    ph_jw_string(w, kind_name(v->kind));
    ph_jw_key(w, "criterion");
    ph_jw_string(w, v->predictive                            ? "predictive"
                    : criterion == PH_CRITERION_COMPETITIVE ? "competitive"
                                                            : "amortised");
    ph_jw_key(w, "area");
    ph_jw_int(w, v->area_id);
    ph_jw_key(w, "phase");
    ph_jw_int(w, v->phase);
    KU_OUTCOME(w, v);
    KU(w, "failed", v->failed);
    KU(w, "shared", v->shared);
    KU(w, "unsettled", v->unsettled);
    KU(w, "remote_before", v->remote_before);
    KU(w, "remote_after", v->remote_after);
    KU_MOVED(w, v);
    KD(w, "factor", v->factor);
    KD(w, "remote_ns", v->remote_ns);
    KU(w, "engine_ns", v->engine_ns);
    KU(w, "move_ns", v->move_ns);
    KU(w, "sampler_ns", v->sampler_ns);
    ph_jw_end(w);
}

void ph_stats_begin_engineless(ph_jw *w)
{
    ph_jw_object(w, 0);
    ph_jw_key(w, "pagehome_stats");
    ph_jw_int(w, PH_STATS_FORMAT);
    ph_jw_key(w, "engine");
    ph_jw_null(w);
}

int ph_engine_write_json(ph_engine *e, int fd)
{
    ph_jw w;
    ph_jw_init(&w, 1);
    pthread_mutex_lock(&e->lock);
    ph_engine_totals t;
    fill_totals(e, &t);
    ph_source_stats ss;
    memset(&ss, 0, sizeof ss);
    e->src->ops->stats(e->src, &ss);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "pagehome_stats");
    ph_jw_int(&w, PH_STATS_FORMAT);
    ph_jw_key(&w, "config");
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "mechanism");
    ph_jw_string(&w, mech_name(e->cfg.mech));
    ph_jw_key(&w, "source");
    ph_jw_string(&w, e->src->ops->name);
    ph_jw_key(&w, "nodes");
    ph_jw_int(&w, e->nnodes);
    ph_jw_key(&w, "optimistic");
    ph_jw_bool(&w, e->cfg.optimistic);
    ph_jw_key(&w, "observe");
    ph_jw_bool(&w, e->cfg.observe);
    KU(&w, "critical_pages", e->cfg.critical_pages);
    ph_jw_key(&w, "criterion");
    ph_jw_string(&w, e->cfg.criterion == PH_CRITERION_COMPETITIVE
                         ? "competitive" : "amortised");
    KU(&w, "iterations_expected", e->iters_total);
    KU(&w, "early_looks", e->looks);
    /* what the sampling budget charges a sample besides the handler's time
     * (measured by the probe at start, or the tunable) */
    ph_jw_key(&w, "sample_trap_ns");
    ph_jw_double(&w, e->cfg.sample_trap_ns);
    /* the handler's time a trap, measured at start (0: not measured) */
    ph_jw_key(&w, "sample_handler_ns");
    ph_jw_double(&w, e->cfg.sample_handler_ns);
    /* the first sweep's coarsest runs (1: every page trapped) */
    KU(&w, "sweep_run_pages", e->sweep_run_max > 1 ? e->sweep_run_max : 1);
    /* every tunable: its value as text and where it came from */
    ph_jw_key(&w, "tunables");
    ph_opt_write_json(&w);
    ph_jw_end(&w);
    ph_jw_key(&w, "totals");
    ph_jw_object(&w, 0);
    KU(&w, "invocations", t.invocations);
    KU(&w, "iterations", t.iterations);
    KU(&w, "manager_serves", e->serves);
    KU(&w, "scanned", t.scanned);
    KU(&w, "candidates", t.candidates);
    KU(&w, "migrated", t.migrated);
    KU(&w, "failed", t.failed);
    KU(&w, "frozen", t.frozen);
    KU(&w, "melted", t.melted);
    KU(&w, "accesses", t.accesses);
    KU(&w, "remote_accesses_before", t.remote_accesses_before);
    KU(&w, "remote_accesses_after", t.remote_accesses_after);
    KU(&w, "bytes_moved", t.bytes_moved);
    KU(&w, "predictive_switches", t.predictive_switches);
    KU(&w, "thread_migrations", t.thread_migrations);
    KU(&w, "replayed", t.replayed);
    KU(&w, "undone", t.undone);
    KU(&w, "huge_migrated", t.huge_migrated);
    KU(&w, "huge_split", t.huge_split);
    KU(&w, "huge_collapsed", t.huge_collapsed);
    KU(&w, "huge_remapped", e->huge_remapped);
    KU(&w, "engine_ns", t.engine_ns);
    KU(&w, "move_ns", t.move_ns);
    KU(&w, "sampler_ns", t.sampler_ns);
    KU(&w, "hot_pages", t.hot_pages);
    KU(&w, "bookkeeping_bytes", t.bookkeeping_bytes);
    ph_jw_key(&w, "active");
    ph_jw_bool(&w, t.active);
    ph_jw_end(&w);
    ph_jw_key(&w, "source_stats");
    ph_jw_object(&w, 0);
    KU(&w, "armed_pages", ss.armed_pages);
    KU(&w, "swept_pages", ss.swept_pages);
    KU(&w, "empty_intervals", e->empty_intervals);
    KU(&w, "paused_arms", e->paused_arms);
    KU(&w, "pause_ns", e->pause_ns);
    KU(&w, "samples", ss.samples);
    KU(&w, "credited", ss.credited);
    KU(&w, "dropped", ss.dropped);
    KU(&w, "serial", ss.serial);
    KU(&w, "foreign_faults", ss.foreign_faults);
    KU(&w, "orphan_opens", ss.orphan_opens);
    KU(&w, "intervals", ss.intervals);
    KU(&w, "max_runs", ss.max_runs);
    KU(&w, "handler_ns", ss.handler_ns);
    KU(&w, "arm_ns", ss.arm_ns);
    ph_jw_end(&w);
    ph_history_refresh(e);
    KU(&w, "areas_not_recorded", e->hist_dropped);
    ph_jw_key(&w, "areas");
    ph_jw_array(&w, 0);
    const ph_hot **live = calloc(e->nhist ? e->nhist : 1, sizeof *live);
    for (size_t a = 0; live && a < e->nhots; a++)
        if (e->hots[a]->hist >= 0)
            live[e->hots[a]->hist] = e->hots[a];
    for (size_t r = 0; r < e->nhist; r++)
        write_area(&w, &e->hist[r], live ? live[r] : NULL);
    free(live);
    ph_jw_end(&w);
    ph_jw_key(&w, "invocations");
    ph_jw_array(&w, 0);
    for (size_t i = 0; i < e->nlog; i++)
        write_inv(&w, &e->log[i], e->cfg.criterion);
    ph_jw_end(&w);
    if (report_extra)
        report_extra(&w);
    ph_jw_end(&w);
    pthread_mutex_unlock(&e->lock);
    int rc = ph_jw_write_fd(&w, fd);
    ph_jw_free(&w);
    return rc;
}
