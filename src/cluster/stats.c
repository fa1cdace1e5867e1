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
 */
#include "cluster/cluster.h"

#include "base/error.h"
#include "base/json_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ph_dsm_stats_interval_end(ph_dsm *c)
{
    ph_dsm_stats *s = &c->st;
    if (s->nivs == s->capivs) {
        size_t cap = s->capivs ? 2 * s->capivs : 64;
        ph_dsm_interval *p = realloc(s->ivs, cap * sizeof *p);
        if (!p) {
            memset(&s->cur, 0, sizeof s->cur);
            return;              /* statistics only: drop the record */
        }
        s->ivs = p;
        s->capivs = cap;
    }
    s->ivs[s->nivs++] = s->cur;
    memset(&s->cur, 0, sizeof s->cur);
}

void ph_dsm_stats_free(ph_dsm *c)
{
    free(c->st.ivs);
    c->st.ivs = NULL;
    c->st.nivs = c->st.capivs = 0;
}

#define U(name) do { ph_jw_key(&w, #name); ph_jw_uint(&w, s->name); } while (0)

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
    ph_jw_end(&w);

    ph_jw_key(&w, "faults");
    ph_jw_object(&w, 0);
    U(fault_read_home);
    U(fault_read_remote);
    U(fault_write_home);
    U(fault_write_remote);
    U(fault_spurious);
    ph_jw_end(&w);

    ph_jw_key(&w, "traffic");
    ph_jw_object(&w, 0);
    U(pages_fetched);
    U(fetch_calls);
    U(twins);
    U(diffs_sent);
    U(diff_runs);
    U(diff_bytes);
    U(whole_pages_sent);
    U(rma_calls);
    U(flushes);
    U(collectives);
    U(bytes_sent);
    ph_jw_end(&w);

    ph_jw_key(&w, "sync");
    ph_jw_object(&w, 0);
    U(barriers);
    U(lock_acquires);
    U(lock_releases);
    U(selective_acquires);
    U(selective_releases);
    U(invalidations);
    U(invalidate_all);
    U(notices_logged);
    U(notices_read);
    U(notice_log_wraps);
    U(single_writer_pages);
    U(multi_writer_pages);
    U(ft_claims_won);
    U(ft_claims_lost);
    U(allocs);
    U(frees);
    U(home_untracked);
    U(home_retracked);
    U(home_prefilled);
    U(readonly_hints);
    U(readonly_pages);
    U(readonly_fetched);
    ph_jw_end(&w);

    /* home migration (migrate.h): pages whose home moved (the same count
     * on every rank), to and away from this rank */
    ph_jw_key(&w, "migration");
    ph_jw_object(&w, 0);
    ph_jw_key(&w, "on");
    ph_jw_int(&w, c->mig.on);
    ph_jw_key(&w, "min_intervals");
    ph_jw_uint(&w, c->mig.min_intervals);
    U(migrations);
    U(migrated_in);
    U(migrated_out);
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
    for (size_t i = 0; i < s->nivs; i++) {
        const ph_dsm_interval *v = &s->ivs[i];
        ph_jw_array(&w, 1);
        ph_jw_uint(&w, v->read_remote);
        ph_jw_uint(&w, v->write_remote);
        ph_jw_uint(&w, v->read_home);
        ph_jw_uint(&w, v->write_home);
        ph_jw_uint(&w, v->fetched);
        ph_jw_uint(&w, v->written);
        ph_jw_uint(&w, v->invalidated);
        ph_jw_uint(&w, v->ns);
        ph_jw_uint(&w, v->migrated);
        ph_jw_uint(&w, v->migrated_in);
        ph_jw_uint(&w, v->fetched_readonly);
        ph_jw_end(&w);
    }
    ph_jw_end(&w);
    ph_jw_end(&w);
    int rc = ph_jw_write_fd(&w, fd);
    ph_jw_free(&w);
    return rc;
}
