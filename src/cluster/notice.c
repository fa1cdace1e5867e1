/*
 * notice.c -- the write-notice log's entries and the barrier's merge of
 * write notices (see notice.h).  Pure.
 */
#include "cluster/notice.h"

#include "base/error.h"

#include <errno.h>
#include <stdlib.h>

static inline uint64_t lap_tag(uint64_t slot, uint64_t size)
{
    return (slot / size) % 255 + 1;
}

uint64_t ph_dsm_notice_encode(uint64_t slot, uint64_t size, int rank,
                           uint64_t page)
{
    return (lap_tag(slot, size) << 56) |
           (((uint64_t)rank & PH_DSM_NOTICE_MAX_RANK) << 36) |
           (page & PH_DSM_NOTICE_ALL);
}

int ph_dsm_notice_decode(uint64_t entry, uint64_t slot, uint64_t size,
                      int *rank, uint64_t *page)
{
    if ((entry >> 56) != lap_tag(slot, size))
        return 0;
    *rank = (int)((entry >> 36) & PH_DSM_NOTICE_MAX_RANK);
    *page = entry & PH_DSM_NOTICE_ALL;
    return 1;
}

int ph_dsm_notice_plan(uint64_t from, uint64_t head, uint64_t size,
                    ph_dsm_notice_span *span)
{
    span->nseg = 0;
    if (head <= from)
        return 0;
    uint64_t n = head - from;
    if (n > size)
        return 1;
    uint64_t i = from % size;
    uint64_t first = size - i < n ? size - i : n;
    span->ring_index[0] = i;
    span->count[0] = first;
    span->nseg = 1;
    if (first < n) {
        span->ring_index[1] = 0;
        span->count[1] = n - first;
        span->nseg = 2;
    }
    return 0;
}

uint64_t ph_dsm_notice_scan(const uint64_t *entries, uint64_t from,
                         uint64_t head, uint64_t size, int me,
                         void (*fn)(void *arg, uint64_t page), void *arg)
{
    uint64_t pos = head;
    for (uint64_t s = from; s < head; s++) {
        int rank;
        uint64_t page;
        if (!ph_dsm_notice_decode(entries[s - from], s, size, &rank, &page)) {
            if (pos == head)
                pos = s;       /* still in flight: read it again next time */
            continue;
        }
        if (rank != me)
            fn(arg, page);
    }
    return pos;
}

size_t ph_dsm_notice_ranges(const uint64_t *pages, size_t n, uint64_t *pairs)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && pages[j] == pages[j - 1] + 1)
            j++;
        pairs[2 * k] = pages[i];
        pairs[2 * k + 1] = (uint64_t)(j - i);
        k++;
        i = j;
    }
    return k;
}

typedef struct ev {
    uint64_t at;
    int delta;       /* +1 a range starts, -1 it ends */
    int rank;
} ev;

static int ev_cmp(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->delta - y->delta;          /* ends before starts */
}

long ph_dsm_notice_merge(const uint64_t *pairs, const int *counts,
                      const int *displs, int nranks, ph_dsm_seg *out)
{
    size_t total = 0;
    for (int r = 0; r < nranks; r++)
        total += (size_t)counts[r];
    if (total == 0)
        return 0;
    ev *e = malloc(2 * total * sizeof *e);
    if (!e)
        return ph_fail(ENOMEM, "write notices: out of memory for %zu "
                       "ranges", total);
    size_t k = 0;
    for (int r = 0; r < nranks; r++)
        for (int i = 0; i < counts[r]; i++) {
            const uint64_t *p = pairs + 2 * ((size_t)displs[r] + (size_t)i);
            if (p[1] == 0)
                continue;
            e[k++] = (ev){p[0], +1, r};
            e[k++] = (ev){p[0] + p[1], -1, r};
        }
    if (k > 1)
        qsort(e, k, sizeof *e, ev_cmp);
    long n = 0;
    int active = 0;
    int64_t ranksum = 0;     /* one writer: its rank (ranges of one rank
                              * never overlap) */
    for (size_t i = 0; i < k;) {
        uint64_t at = e[i].at;
        while (i < k && e[i].at == at) {
            active += e[i].delta;
            ranksum += e[i].delta * e[i].rank;
            i++;
        }
        if (active > 0 && i < k) {
            uint64_t next = e[i].at;
            if (n > 0 && out[n - 1].start + out[n - 1].len == at &&
                out[n - 1].nwriters == active &&
                out[n - 1].writer == (active == 1 ? (int)ranksum : -1)) {
                out[n - 1].len += next - at;
            } else {
                out[n].start = at;
                out[n].len = next - at;
                out[n].nwriters = active;
                out[n].writer = active == 1 ? (int)ranksum : -1;
                n++;
            }
        }
    }
    free(e);
    return n;
}

const ph_dsm_seg *ph_dsm_seg_find(const ph_dsm_seg *segs, size_t n, uint64_t page)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (segs[mid].start <= page)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const ph_dsm_seg *s = &segs[lo - 1];
    return page < s->start + s->len ? s : NULL;
}
