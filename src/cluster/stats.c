/*
 * stats.c -- a rank's cluster-mode statistics as JSON.
 *
 * The counters follow paper 002's Table 3 (faults by kind, messages,
 * bytes) plus what this implementation does (twins, diffs, whole pages,
 * notices, first-touch claims, time spent), and one record per barrier
 * interval with that interval's faults, fetches, writes and invalidations,
 * so that reports can plot them, with the pages whose home moved in it
 * (migrate.h); the page classes when the allocations went.  Written by the service thread (it owns the
 * counters): ph_cluster_stats_write(fd), and at ph_cluster_finalize to
 * cluster_stats_file.
 *
 * Bounded for `pagehome report` (tools/report/cluster_report.py):
 *   - at most PH_DSM_IVS_MAX interval records: when they are full,
 *     neighbours are summed in pairs and each record covers twice as many
 *     barriers from then on ("interval_barriers" in the "cluster" object;
 *     the last record may cover fewer, "interval_last_barriers"); nothing
 *     is dropped, the resolution halves;
 *   - the homes of the first PH_DSM_RECS_MAX allocations ("allocations"):
 *     per allocation two home strips of min(pages, PH_DSM_STRIP_MAX)
 *     buckets of consecutive pages, each bucket the rank that homes its
 *     pages (-2: several ranks do, -1: nobody claimed one), at the
 *     allocation (the placement formula; first-touch: the ranks that
 *     claimed the pages first) and when it went (free or finalize); the
 *     ranks agree on them there (MPI_Allreduce MAXLOC and SUM of the pages
 *     each rank homes per bucket: a rank knows exactly the pages it is
 *     home of), and each rank's pages homed then (exact); later
 *     allocations are only counted ("allocations_not_recorded").  The
 *     record of an allocation still live when the statistics are written
 *     (a mid-run ph_cluster_stats_write) has this rank's view: the
 *     formula's homes at the start, the homes it knows now at the end.
 */
#include "cluster/cluster.h"

#include "base/error.h"
#include "base/json_write.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void iv_add(ph_dsm_interval *to, const ph_dsm_interval *v)
{
    to->read_remote += v->read_remote;
    to->write_remote += v->write_remote;
    to->read_home += v->read_home;
    to->write_home += v->write_home;
    to->fetched += v->fetched;
    to->written += v->written;
    to->invalidated += v->invalidated;
    to->ns += v->ns;
    to->migrated += v->migrated;
    to->migrated_in += v->migrated_in;
    to->fetched_readonly += v->fetched_readonly;
}

void ph_dsm_stats_interval_end(ph_dsm *c)
{
    ph_dsm_stats *s = &c->st;
    if (s->ivs_per_rec == 0)
        s->ivs_per_rec = 1;
    iv_add(&s->acc, &s->cur);
    s->acc_n++;
    memset(&s->cur, 0, sizeof s->cur);
    if (s->acc_n < s->ivs_per_rec)
        return;
    if (s->nivs == PH_DSM_IVS_MAX) {
        /* full: pairs summed, twice the barriers per record from now on
         * (acc, holding the old number, waits for as many more) */
        for (size_t i = 0; i < s->nivs / 2; i++) {
            ph_dsm_interval m = s->ivs[2 * i];
            iv_add(&m, &s->ivs[2 * i + 1]);
            s->ivs[i] = m;
        }
        s->nivs /= 2;
        s->ivs_per_rec *= 2;
        return;
    }
    if (s->nivs == s->capivs) {
        size_t cap = s->capivs ? 2 * s->capivs : 64;
        ph_dsm_interval *p = realloc(s->ivs, cap * sizeof *p);
        if (!p) {
            memset(&s->acc, 0, sizeof s->acc);
            s->acc_n = 0;
            return;              /* statistics only: drop the record */
        }
        s->ivs = p;
        s->capivs = cap;
    }
    s->ivs[s->nivs++] = s->acc;
    memset(&s->acc, 0, sizeof s->acc);
    s->acc_n = 0;
}

void ph_dsm_stats_free(ph_dsm *c)
{
    free(c->st.ivs);
    c->st.ivs = NULL;
    c->st.nivs = c->st.capivs = 0;
    free(c->st.recs);
    c->st.recs = NULL;
    c->st.nrecs = 0;
}

/* ---- the homes of allocations --------------------------------------- */

static uint32_t strip_buckets(uint64_t npages)
{
    return npages < PH_DSM_STRIP_MAX ? (uint32_t)npages : PH_DSM_STRIP_MAX;
}

/* bucket b of nb holds pages [b * npages / nb, (b + 1) * npages / nb) */
static uint64_t bucket_first(uint64_t b, uint32_t nb, uint64_t npages)
{
    return b * npages / nb;
}

static uint32_t bucket_of(uint64_t off, uint32_t nb, uint64_t npages)
{
    return (uint32_t)(((off + 1) * nb - 1) / npages);
}

/* A strip value from what is known of a bucket's pages: `h` the home of
 * one page (a rank, or < 0 unknown), folded into *v (-1 nothing known
 * yet, -2 several ranks). */
static void strip_fold(int32_t *v, int h)
{
    if (h < 0 || *v == -2)
        return;
    *v = *v == -1 ? h : *v == h ? *v : -2;
}

/* This rank's view of an allocation's homes: per bucket the strip value
 * (formula = 1: the placement formula's, else the homes known now) and,
 * when own != NULL, the pages homed here; returns those pages in all. */
static uint64_t homes_view(ph_dsm *c, const ph_dsm_alloc *a, uint32_t nb, int formula,
                           int32_t *strip, uint32_t *own)
{
    uint64_t mine = 0;
    for (uint32_t b = 0; b < nb; b++) {
        uint64_t p = bucket_first(b, nb, a->npages), e = bucket_first(b + 1, nb, a->npages);
        strip[b] = -1;
        if (own)
            own[b] = 0;
        while (p < e) {
            int h;
            size_t n = 1;
            if (formula) {
                n = ph_dsm_home_run(&a->pl, p, a->npages, c->nranks, &h);
                if (n == 0 || n > e - p)
                    n = e - p;
            } else {
                h = ph_dsm_home_known(c, a->start + p);
            }
            strip_fold(&strip[b], h);
            if (h == c->rank) {
                mine += n;
                if (own)
                    own[b] += (uint32_t)n;
            }
            p += n;
        }
    }
    return mine;
}

void ph_dsm_stats_alloc(ph_dsm *c, ph_dsm_alloc *a)
{
    ph_dsm_stats *s = &c->st;
    a->rec = -1;
    if (s->nrecs >= PH_DSM_RECS_MAX) {
        s->recs_dropped++;
        return;
    }
    if (!s->recs) {
        s->recs = calloc(PH_DSM_RECS_MAX, sizeof *s->recs);
        if (!s->recs) {
            s->recs_dropped++;   /* statistics only */
            return;
        }
    }
    ph_dsm_alloc_rec *r = &s->recs[s->nrecs];
    memset(r, 0, sizeof *r);
    r->seq = a->seq;
    r->start = a->start;
    r->npages = a->npages;
    r->bytes = a->bytes;
    ph_dsm_placement_describe(&a->pl, r->placement, sizeof r->placement);
    r->nbuckets = strip_buckets(a->npages);
    /* the formula's homes (first-touch: none; the claims add them) */
    r->home_start = homes_view(c, a, r->nbuckets, 1, r->strip_start, r->own_start);
    a->rec = (long)s->nrecs++;
}

void ph_dsm_stats_claim(ph_dsm *c, size_t page)
{
    long i = ph_dsm_alloc_of(c, page);
    if (i < 0)
        return;
    const ph_dsm_alloc *a = c->ranges.r[i].data;
    if (a->rec < 0)
        return;
    ph_dsm_alloc_rec *r = &c->st.recs[a->rec];
    r->home_start++;
    r->own_start[bucket_of(page - a->start, r->nbuckets, a->npages)]++;
}

/* A strip every rank agrees on from the ranks' pages per bucket (own):
 * the rank homing all the bucket's homed pages, -2 several, -1 none.
 * Collective. */
static void strip_agree(ph_dsm *c, const uint32_t *own, uint32_t nb, int32_t *strip)
{
    struct { int count, rank; } mine[PH_DSM_STRIP_MAX], top[PH_DSM_STRIP_MAX];
    int32_t cnt[PH_DSM_STRIP_MAX], sum[PH_DSM_STRIP_MAX];
    memset(mine, 0, sizeof mine);   /* (the compiler cannot see nb's bound) */
    memset(cnt, 0, sizeof cnt);
    for (uint32_t b = 0; b < nb; b++) {
        mine[b].count = cnt[b] = (int32_t)own[b];
        mine[b].rank = c->rank;
    }
    MPI_Request q[2];
    int rc = MPI_Iallreduce(mine, top, (int)nb, MPI_2INT, MPI_MAXLOC, c->comm, &q[0]);
    ph_dsm_mpi_check(c, rc, "MPI_Iallreduce (home strips)", -1);
    ph_dsm_wait_collective(c, &q[0], "the home strips of an allocation");
    rc = MPI_Iallreduce(cnt, sum, (int)nb, MPI_INT32_T, MPI_SUM, c->comm, &q[1]);
    ph_dsm_mpi_check(c, rc, "MPI_Iallreduce (home strips)", -1);
    ph_dsm_wait_collective(c, &q[1], "the home strips of an allocation");
    for (uint32_t b = 0; b < nb; b++)
        strip[b] = sum[b] == 0 ? -1 : top[b].count == sum[b] ? top[b].rank : -2;
}

void ph_dsm_stats_alloc_end(ph_dsm *c, ph_dsm_alloc *a, int how)
{
    uint32_t nb = strip_buckets(a->npages);
    ph_dsm_alloc_rec *r = a->rec >= 0 ? &c->st.recs[a->rec] : NULL;
    /* every rank takes part, with a record or not: the calls match */
    uint32_t own[PH_DSM_STRIP_MAX] = {0}, own0[PH_DSM_STRIP_MAX] = {0};
    int32_t view[PH_DSM_STRIP_MAX], start[PH_DSM_STRIP_MAX], end[PH_DSM_STRIP_MAX];
    uint64_t home = homes_view(c, a, nb, 0, view, own);
    for (uint32_t b = 0; b < nb; b++)
        own0[b] = r ? r->own_start[b] : 0;
    strip_agree(c, own0, nb, start);
    strip_agree(c, own, nb, end);
    if (!r)
        return;
    memcpy(r->strip_start, start, nb * sizeof *start);
    memcpy(r->strip_end, end, nb * sizeof *end);
    r->home_end = home;
    r->ended = how;
}

static void allocations_json(ph_dsm *c, ph_jw *w)
{
    ph_jw_key(w, "allocations");
    ph_jw_array(w, 0);
    for (size_t i = 0; i < c->st.nrecs; i++) {
        ph_dsm_alloc_rec *r = &c->st.recs[i];
        int32_t live[PH_DSM_STRIP_MAX];
        const int32_t *end = r->strip_end;
        uint64_t home_end = r->home_end;
        if (!r->ended) {          /* still live: this rank's view */
            long k = ph_dsm_ranges_find_start(&c->ranges, r->start);
            const ph_dsm_alloc *a = k >= 0 ? c->ranges.r[k].data : NULL;
            if (!a || a->rec != (long)i)
                continue;
            home_end = homes_view(c, a, r->nbuckets, 0, live, NULL);
            end = live;
        }
        ph_jw_object(w, 0);
        ph_jw_key(w, "seq");
        ph_jw_uint(w, r->seq);
        ph_jw_key(w, "pages");
        ph_jw_uint(w, r->npages);
        ph_jw_key(w, "bytes");
        ph_jw_uint(w, r->bytes);
        ph_jw_key(w, "placement");
        ph_jw_string(w, r->placement);
        ph_jw_key(w, "ended");
        ph_jw_string(w, r->ended == 1 ? "freed" : r->ended == 2 ? "finalize" : "live");
        ph_jw_key(w, "home_pages_start");
        ph_jw_uint(w, r->home_start);
        ph_jw_key(w, "home_pages_end");
        ph_jw_uint(w, home_end);
        ph_jw_key(w, "strip_start");
        ph_jw_array(w, 1);
        for (uint32_t b = 0; b < r->nbuckets; b++)
            ph_jw_int(w, r->strip_start[b]);
        ph_jw_end(w);
        ph_jw_key(w, "strip_end");
        ph_jw_array(w, 1);
        for (uint32_t b = 0; b < r->nbuckets; b++)
            ph_jw_int(w, end[b]);
        ph_jw_end(w);
        ph_jw_end(w);
    }
    ph_jw_end(w);
}

static void interval_json(ph_jw *w, const ph_dsm_interval *v)
{
    ph_jw_array(w, 1);
    ph_jw_uint(w, v->read_remote);
    ph_jw_uint(w, v->write_remote);
    ph_jw_uint(w, v->read_home);
    ph_jw_uint(w, v->write_home);
    ph_jw_uint(w, v->fetched);
    ph_jw_uint(w, v->written);
    ph_jw_uint(w, v->invalidated);
    ph_jw_uint(w, v->ns);
    ph_jw_uint(w, v->migrated);
    ph_jw_uint(w, v->migrated_in);
    ph_jw_uint(w, v->fetched_readonly);
    ph_jw_end(w);
}

/* The counters of ph_dsm_stats by JSON object, each named as its field:
 * the JSON below and ph_dsm_stat (by name; the page classes too) read the
 * same lists. */
#define FAULT_COUNTERS(X) \
    X(fault_read_home) \
    X(fault_read_remote) \
    X(fault_write_home) \
    X(fault_write_remote) \
    X(fault_spurious) \
    X(gap_writes)
#define TRAFFIC_COUNTERS(X) \
    X(pages_fetched) \
    X(fetch_calls) \
    X(pristine_mapped) \
    X(pages_refreshed) \
    X(refresh_calls) \
    X(refresh_used) \
    X(twins) \
    X(twins_predicted) \
    X(predicted_unwritten) \
    X(pages_remapped) \
    X(diffs_sent) \
    X(diff_runs) \
    X(diff_bytes) \
    X(whole_pages_sent) \
    X(rma_calls) \
    X(flushes) \
    X(collectives) \
    X(bytes_sent)
#define SYNC_COUNTERS(X) \
    X(barriers) \
    X(lock_acquires) \
    X(lock_releases) \
    X(gang_syncs) \
    X(gang_barriers) \
    X(selective_acquires) \
    X(selective_releases) \
    X(invalidations) \
    X(invalidate_all) \
    X(notices_logged) \
    X(notices_read) \
    X(notice_log_wraps) \
    X(single_writer_pages) \
    X(multi_writer_pages) \
    X(ft_claims_won) \
    X(ft_claims_lost) \
    X(allocs) \
    X(frees) \
    X(home_untracked) \
    X(home_retracked) \
    X(home_prefilled) \
    X(readonly_hints) \
    X(readonly_pages) \
    X(readonly_fetched)
#define MIGRATION_COUNTERS(X) \
    X(migrations) \
    X(migrated_in) \
    X(migrated_out) \
    X(migrated_unsent)
#define COST_COUNTERS(X) \
    X(migrations_cost) \
    X(migrated_carried) \
    X(cost_weighed) \
    X(cost_frozen)
#define ALL_COUNTERS(X) \
    FAULT_COUNTERS(X) TRAFFIC_COUNTERS(X) SYNC_COUNTERS(X) \
    MIGRATION_COUNTERS(X) COST_COUNTERS(X)

#define COUNTER_JSON(name) { ph_jw_key(&w, #name); ph_jw_uint(&w, s->name); }

/* every one a 64-bit counter (ph_dsm_stat copies 8 bytes) */
#define COUNTER_CHECK(name)                                                 \
    _Static_assert(sizeof(((ph_dsm_stats *)0)->name) == sizeof(uint64_t), \
                   #name " is not a 64-bit counter");
ALL_COUNTERS(COUNTER_CHECK)
#undef COUNTER_CHECK

static const struct counter {
    const char *name;
    size_t offset;
} counters[] = {
#define COUNTER_ENTRY(name) {#name, offsetof(ph_dsm_stats, name)},
    ALL_COUNTERS(COUNTER_ENTRY)
#undef COUNTER_ENTRY
};

int ph_dsm_stat(const ph_dsm *c, const char *name, uint64_t *value)
{
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        if (strcmp(counters[i].name, name) == 0) {
            memcpy(value, (const char *)&c->st + counters[i].offset,
                   sizeof *value);
            return 0;
        }
    for (int k = 0; k < PH_DSM_NCLASSES; k++)
        if (strcmp(ph_dsm_class_name(k), name) == 0) {
            *value = c->st.pages_class[k];
            return 0;
        }
    errno = ENOENT;
    return -1;
}


int ph_dsm_stats_json(ph_dsm *c, int fd)
{
    const ph_dsm_stats *s = &c->st;
    ph_jw w;
    ph_jw_init(&w, 1);
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "cluster");
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "rank");
    ph_jw_int(&w, c->rank);
    ph_jw_key(&w, "nranks");
    ph_jw_int(&w, c->nranks);
    ph_jw_key(&w, "threads");
    ph_jw_int(&w, c->threads);
    ph_jw_key(&w, "host");
    ph_jw_string(&w, c->hosts ? c->hosts[c->rank] : "");
    ph_jw_key(&w, "transport");
    ph_jw_string(&w, c->transport);
    ph_jw_key(&w, "fault_mechanism");
    ph_jw_string(&w, c->fault_name);
    ph_jw_key(&w, "arena_bytes");
    ph_jw_uint(&w, c->arena_bytes);
    ph_jw_key(&w, "used_bytes");
    ph_jw_uint(&w, (uint64_t)c->ranges.used_pages * PH_DSM_PAGE);
    ph_jw_key(&w, "page_bytes");
    ph_jw_uint(&w, PH_DSM_PAGE);
    /* the bounds (see the top), here: the merge sums no member of "cluster" */
    ph_jw_key(&w, "interval_barriers");
    ph_jw_uint(&w, s->ivs_per_rec ? s->ivs_per_rec : 1);
    ph_jw_key(&w, "interval_last_barriers");
    ph_jw_uint(&w, s->acc_n ? s->acc_n : (s->ivs_per_rec ? s->ivs_per_rec : 1));
    ph_jw_key(&w, "allocations_not_recorded");
    ph_jw_uint(&w, s->recs_dropped);
    ph_jw_end(&w);

    ph_jw_key(&w, "faults");
    ph_jw_object(&w, 0);
    FAULT_COUNTERS(COUNTER_JSON)
    ph_jw_end(&w);

    ph_jw_key(&w, "traffic");
    ph_jw_object(&w, 0);
    TRAFFIC_COUNTERS(COUNTER_JSON)
    ph_jw_end(&w);

    ph_jw_key(&w, "sync");
    ph_jw_object(&w, 0);
    SYNC_COUNTERS(COUNTER_JSON)
    ph_jw_end(&w);

    /* home migration (migrate.h): pages whose home moved (the same count
     * on every rank), to and away from this rank */
    ph_jw_key(&w, "migration");
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "on");
    ph_jw_int(&w, c->mig.on);
    ph_jw_key(&w, "min_intervals");
    ph_jw_uint(&w, c->mig.min_intervals);
    MIGRATION_COUNTERS(COUNTER_JSON)
    /* by cost (migrate_cost.h): on, the agreed network cost model, moves
     * (of migrations), pages that came here with their data, page-
     * intervals weighed, pages frozen */
    ph_jw_key(&w, "cost_rule");
    ph_jw_int(&w, c->cost.on);
    ph_jw_key(&w, "melt_intervals");
    ph_jw_uint(&w, c->cost.melt_intervals);
    ph_jw_key(&w, "fetch_ns");
    ph_jw_double(&w, c->cost.net.fetch_ns);
    ph_jw_key(&w, "diff_ns");
    ph_jw_double(&w, c->cost.net.diff_ns);
    ph_jw_key(&w, "sync_ns");
    ph_jw_double(&w, c->cost.net.sync_ns);
    /* this rank's running means (0: no sample) */
    ph_jw_key(&w, "measured_fetch_ns");
    ph_jw_double(&w, c->cost_fault_ns);
    ph_jw_key(&w, "measured_flush_ns");
    ph_jw_double(&w, c->cost_diff_ns);
    ph_jw_key(&w, "measured_twin_ns");
    ph_jw_double(&w, c->cost_twin_ns);
    COST_COUNTERS(COUNTER_JSON)
    ph_jw_end(&w);

    /* page classes, counted when an allocation goes (free, finalize): the
     * same on every rank */
    ph_jw_key(&w, "page_classes");
    ph_jw_object(&w, 0);
    for (int k = 0; k < PH_DSM_NCLASSES; k++) {
        ph_jw_key(&w, ph_dsm_class_name(k));
        ph_jw_uint(&w, s->pages_class[k]);
    }
    ph_jw_end(&w);

    ph_jw_key(&w, "time_ns");
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "fault");
    ph_jw_uint(&w, s->fault_ns);
    ph_jw_key(&w, "fetch");
    ph_jw_uint(&w, s->fetch_ns);
    ph_jw_key(&w, "barrier");
    ph_jw_uint(&w, s->barrier_ns);
    ph_jw_key(&w, "lock");
    ph_jw_uint(&w, s->lock_ns);
    ph_jw_key(&w, "release");
    ph_jw_uint(&w, s->release_ns);
    ph_jw_end(&w);

    /* one record per barrier interval:
     * [read_remote, write_remote, read_home, write_home, fetched, written,
     *  invalidated, barrier_ns, migrated (pages, every rank), migrated_in
     *  (to this rank), fetched_readonly (pages in ranges declared
     *  read-only)] */
    ph_jw_key(&w, "interval_fields");
    ph_jw_array(&w, 1);
    const char *f[] = {"read_remote", "write_remote", "read_home",
                       "write_home", "fetched", "written", "invalidated",
                       "barrier_ns", "migrated", "migrated_in",
                       "fetched_readonly"};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        ph_jw_string(&w, f[i]);
    ph_jw_end(&w);
    ph_jw_key(&w, "intervals");
    ph_jw_array(&w, 0);
    for (size_t i = 0; i < s->nivs; i++)
        interval_json(&w, &s->ivs[i]);
    if (s->acc_n)                 /* the barriers not yet a whole record */
        interval_json(&w, &s->acc);
    ph_jw_end(&w);
    allocations_json(c, &w);
    ph_jw_end(&w);
    int rc = ph_jw_write_fd(&w, fd);
    ph_jw_free(&w);
    return rc;
}
