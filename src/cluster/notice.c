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

uint64_t phc_notice_encode(uint64_t slot, uint64_t size, int rank,
                           uint64_t page)
{
    return (lap_tag(slot, size) << 56) |
           (((uint64_t)rank & PHC_NOTICE_MAX_RANK) << 36) |
           (page & PHC_NOTICE_ALL);
}

int phc_notice_decode(uint64_t entry, uint64_t slot, uint64_t size,
                      int *rank, uint64_t *page)
{
    if ((entry >> 56) != lap_tag(slot, size))
        return 0;
    *rank = (int)((entry >> 36) & PHC_NOTICE_MAX_RANK);
    *page = entry & PHC_NOTICE_ALL;
    return 1;
}

int phc_notice_plan(uint64_t from, uint64_t head, uint64_t size,
                    phc_notice_span *span)
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

uint64_t phc_notice_scan(const uint64_t *entries, uint64_t from,
                         uint64_t head, uint64_t size, int me,
                         void (*fn)(void *arg, uint64_t page), void *arg)
{
    uint64_t pos = head;
    for (uint64_t s = from; s < head; s++) {
        int rank;
        uint64_t page;
        if (!phc_notice_decode(entries[s - from], s, size, &rank, &page)) {
            if (pos == head)
                pos = s;       /* still in flight: read it again next time */
            continue;
        }
        if (rank != me)
            fn(arg, page);
    }
    return pos;
}

typedef struct pr {
    uint64_t page;
    int rank;
} pr;

static int pr_cmp(const void *a, const void *b)
{
    const pr *x = a, *y = b;
    if (x->page != y->page)
        return x->page < y->page ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

long phc_notice_merge(const uint64_t *pages, const int *counts,
                      const int *displs, int nranks, phc_written *out)
{
    size_t total = 0;
    for (int r = 0; r < nranks; r++)
        total += (size_t)counts[r];
    if (total == 0)
        return 0;
    pr *all = malloc(total * sizeof *all);
    if (!all)
        return ph_fail(ENOMEM, "write notices: out of memory for %zu "
                       "entries", total);
    size_t k = 0;
    for (int r = 0; r < nranks; r++)
        for (int i = 0; i < counts[r]; i++) {
            all[k].page = pages[(size_t)displs[r] + (size_t)i];
            all[k].rank = r;
            k++;
        }
    if (total > 1)
        qsort(all, total, sizeof *all, pr_cmp);
    long n = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i;
        int writers = 0, last = -1;
        while (j < total && all[j].page == all[i].page) {
            if (all[j].rank != last)
                writers++;
            last = all[j].rank;
            j++;
        }
        out[n].page = all[i].page;
        out[n].nwriters = writers;
        out[n].writer = writers == 1 ? all[i].rank : -1;
        n++;
        i = j;
    }
    free(all);
    return n;
}
