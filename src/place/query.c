/*
 * query.c -- where pages are, and moving named pages: ph_query,
 * ph_node_histogram, ph_move (pagehome.h; ph_place_query,
 * ph_place_histogram, ph_place_move here).
 *
 * Queries go to the OS table in batches of QUERY_BATCH pages so that the
 * address array stays small whatever the range; moves go to the mover,
 * which owns batching, retries and huge pages.
 */
#include "place/alloc.h"

#include "base/error.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#define QUERY_BATCH 4096
#define PH_RANGE_MAX ((size_t)1 << 48)

/* The 4 KiB pages of [addr, addr + bytes): first page and count. */
static int span_4k(const char *who, const void *addr, size_t bytes,
                   uintptr_t *first, size_t *count)
{
    if (!addr)
        return ph_fail(EINVAL, "%s: addr is NULL", who);
    if (bytes > PH_RANGE_MAX || (uintptr_t)addr > UINTPTR_MAX - bytes)
        return ph_fail(EINVAL, "%s: range %p + %zu bytes is too large", who,
                       addr, bytes);
    uintptr_t a = (uintptr_t)addr & ~(uintptr_t)(PH_PAGE_4K - 1);
    uintptr_t e = ((uintptr_t)addr + bytes + PH_PAGE_4K - 1) &
                  ~(uintptr_t)(PH_PAGE_4K - 1);
    *first = a;
    *count = (e - a) / PH_PAGE_4K;
    return 0;
}

int ph_place_query_range(ph_machine *c, uintptr_t first, size_t count,
                         int *st)
{
    void *pages[QUERY_BATCH];
    for (size_t off = 0; off < count; off += QUERY_BATCH) {
        size_t n = count - off < QUERY_BATCH ? count - off : QUERY_BATCH;
        for (size_t i = 0; i < n; i++)
            pages[i] = (void *)(first + (off + i) * PH_PAGE_4K);
        if (ph_os_query(c->os, n, pages, st + off) != 0)
            return -1;
    }
    return 0;
}

int ph_place_query(ph_machine *c, const void *addr, size_t bytes,
                   int *status)
{
    uintptr_t first = 0;
    size_t count = 0;
    if (span_4k("ph_query", addr, bytes, &first, &count) != 0)
        return -1;
    if (bytes == 0)
        return 0;
    if (!status)
        return ph_fail(EINVAL, "ph_query: status is NULL (one slot per "
                       "4 KiB page is needed)");
    if (ph_place_query_range(c, first, count, status) != 0)
        return ph_refail("ph_query");
    size_t bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += status[i] < 0;
    return bad > INT_MAX ? INT_MAX : (int)bad;
}

long ph_place_histogram(ph_machine *c, const void *addr, size_t bytes,
                        size_t *pages_per_node, int max)
{
    if (max < 0 || (max > 0 && !pages_per_node))
        return ph_fail(EINVAL, "ph_node_histogram: no room for the counts "
                       "(max %d%s)", max,
                       pages_per_node ? "" : ", pages_per_node NULL");
    uintptr_t first = 0;
    size_t count = 0;
    if (span_4k("ph_node_histogram", addr, bytes, &first, &count) != 0)
        return -1;
    for (int i = 0; i < max; i++)
        pages_per_node[i] = 0;
    if (bytes == 0)
        return 0;
    int st[QUERY_BATCH];
    long total = 0;
    for (size_t off = 0; off < count; off += QUERY_BATCH) {
        size_t n = count - off < QUERY_BATCH ? count - off : QUERY_BATCH;
        if (ph_place_query_range(c, first + off * PH_PAGE_4K, n, st) != 0)
            return ph_refail("ph_node_histogram");
        for (size_t i = 0; i < n; i++) {
            if (st[i] < 0)
                continue;
            total++;
            int idx = ph_topo_node_index(c->topo, st[i]);
            if (idx >= 0 && idx < max)
                pages_per_node[idx]++;
        }
    }
    return total;
}

int ph_place_move(ph_machine *c, size_t count, void *const *pages,
                  const int *nodes, int *status)
{
    if (count == 0)
        return 0;
    if (!pages || !nodes)
        return ph_fail(EINVAL, "ph_move: %s is NULL", !pages ? "pages"
                                                             : "nodes");
    if (count > PH_RANGE_MAX / PH_PAGE_4K)
        return ph_fail(EINVAL, "ph_move: %zu pages is too many", count);
    for (size_t i = 0; i < count; i++) {
        if (ph_topo_node_index(c->topo, nodes[i]) < 0) {
            char set[256];
            ph_plan_nodes_text(c->topo, set, sizeof set);
            return ph_fail(EINVAL, "ph_move: nodes[%zu]: node %d is not a "
                           "node of this machine (nodes %s)", i, nodes[i],
                           set);
        }
    }
    void **aligned = malloc(count * sizeof *aligned);
    if (!aligned)
        return ph_fail(ENOMEM, "ph_move: out of memory for %zu pages",
                       count);
    for (size_t i = 0; i < count; i++)
        aligned[i] = (void *)((uintptr_t)pages[i] &
                              ~(uintptr_t)(PH_PAGE_4K - 1));
    long r = ph_mover_move(c->mover, count, aligned, nodes, status, NULL);
    free(aligned);
    if (r < 0) {
        ph_refail("ph_move");
        return -1;
    }
    return r > INT_MAX ? INT_MAX : (int)r;
}
