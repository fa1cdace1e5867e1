/*
 * migrate.c -- the home-migration decision and the page classes (see
 * migrate.h): pure functions, no MPI, no cluster state.
 */
#include "cluster/migrate.h"

#include <errno.h>
#include <stdlib.h>

int ph_dsm_migrate_allowed(const ph_dsm_migrate_cfg *cfg, uint32_t interval,
                           uint32_t moved_at)
{
    if (!cfg->on)
        return 0;
    if (moved_at == 0)
        return 1;
    uint32_t last = moved_at - 1;
    uint32_t k = cfg->min_intervals ? cfg->min_intervals : 1;
    return interval - last >= k;
}

int ph_dsm_moves_add(ph_dsm_moves *m, uint64_t page, int to, int carry,
                     int unsent)
{
    if (m->n > 0) {
        ph_dsm_move *l = &m->v[m->n - 1];
        if (l->to == to && l->carry == carry && l->unsent == unsent &&
            l->start + l->len == page) {
            l->len++;
            return 0;
        }
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        ph_dsm_move *p = realloc(m->v, cap * sizeof *p);
        if (!p)
            return -1;
        m->v = p;
        m->cap = cap;
    }
    m->v[m->n++] = (ph_dsm_move){page, 1, to, carry, unsent};
    return 0;
}

/* The first segment ending after `page` (segments sorted, disjoint). */
static size_t seg_from(const ph_dsm_seg *segs, size_t n, uint64_t page)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (segs[mid].start + segs[mid].len <= page)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

long ph_dsm_migrate_plan(const ph_dsm_seg *segs, size_t nsegs,
                         const uint64_t *cand, const int *counts,
                         const int *displs, int nranks,
                         const ph_dsm_migrate_cfg *cfg, uint32_t interval,
                         uint32_t *moved_at, size_t npages,
                         ph_dsm_move **out)
{
    ph_dsm_moves m = {0};
    *out = NULL;
    if (!cfg->on)
        return 0;
    for (int r = 0; r < nranks; r++) {
        for (int k = 0; k < counts[r]; k++) {
            const uint64_t *pr = cand + 2 * ((size_t)displs[r] + (size_t)k);
            uint64_t a = pr[0], e = pr[0] + pr[1];
            if (e > npages)
                e = npages;
            size_t s = seg_from(segs, nsegs, a);
            /* walk the segments overlapping [a, e) */
            for (uint64_t p = a; p < e && s < nsegs;) {
                const ph_dsm_seg *sg = &segs[s];
                if (sg->start >= e)
                    break;
                if (p < sg->start)
                    p = sg->start;           /* a page nobody noticed */
                uint64_t se = sg->start + sg->len < e ? sg->start + sg->len
                                                      : e;
                if (sg->nwriters == 1 && sg->writer == r) {
                    for (; p < se; p++) {
                        if (!ph_dsm_migrate_allowed(cfg, interval,
                                                    moved_at[p]))
                            continue;
                        int first = moved_at[p] == 0;
                        moved_at[p] = interval + 1;
                        if (ph_dsm_moves_add(&m, p, r, 0, first) < 0) {
                            free(m.v);
                            errno = ENOMEM;
                            return -1;
                        }
                    }
                }
                p = se;
                s++;
            }
        }
    }
    *out = m.v;
    return (long)m.n;
}

int32_t ph_dsm_writers_add(int32_t writers, int nwriters, int writer)
{
    if (nwriters <= 0)
        return writers;
    if (nwriters > 1 || writers == PH_DSM_WRITER_MANY)
        return PH_DSM_WRITER_MANY;
    if (writers == PH_DSM_WRITER_NONE || writers == writer)
        return writer;
    return PH_DSM_WRITER_MANY;
}

int ph_dsm_page_class(uint32_t accessors, int32_t writers,
                      uint32_t write_intervals, int declared_ro)
{
    if (accessors == 0)
        return PH_DSM_CLASS_UNTOUCHED;
    if (accessors == 1)
        return PH_DSM_CLASS_PRIVATE;
    if (declared_ro || writers == PH_DSM_WRITER_NONE ||
        (write_intervals <= 1 && writers >= 0))
        return PH_DSM_CLASS_READ_ONLY;
    if (writers == PH_DSM_WRITER_MANY)
        return PH_DSM_CLASS_SHARED;
    return PH_DSM_CLASS_SINGLE_WRITER;
}

const char *ph_dsm_class_name(int cls)
{
    switch (cls) {
    case PH_DSM_CLASS_PRIVATE: return "private";
    case PH_DSM_CLASS_READ_ONLY: return "read_only";
    case PH_DSM_CLASS_SINGLE_WRITER: return "single_writer";
    case PH_DSM_CLASS_SHARED: return "shared";
    default: return "untouched";
    }
}
