/*
 * affinity.c -- ph_affinity_range (ph_place_affinity): the elements of an
 * array that are local to a node, so that a loop can give each thread the
 * rows whose pages are on its own node (Omni's schedule(affinity), for
 * any array).
 *
 * Two ways to know where an element is:
 *   - From the plan, when the array lies inside a ph_alloc block placed
 *     by block or block-static (and not placed again since): exact, no
 *     system call.  An element belongs to the node of the page holding
 *     its first byte, so the ranges of all nodes partition the array
 *     (each element is in exactly one node's range): for block the
 *     range of a node is its whole chunk.  When the plan gives a node
 *     several separate pieces (block-static with threads bound out of
 *     node order), the longest piece is returned.
 *   - Otherwise from the pages' actual homes (one query per 4 KiB page):
 *     an element is local when every page it touches is on the node, so
 *     an element straddling a page boundary into another node's page, or
 *     into an untouched page, is not local.  The longest run of local
 *     elements is returned.
 * In both cases ties go to the first run.
 */
#include "place/alloc.h"

#include "base/error.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define AFF_BATCH 4096
#define PH_RANGE_MAX ((size_t)1 << 48)

typedef struct best_run {
    size_t b, e;         /* best so far */
    size_t cb, ce;       /* current run */
    int have;
} best_run;

static void run_add(best_run *r, size_t i0, size_t i1)
{
    if (i1 <= i0)
        return;
    if (r->ce == i0 && r->ce > r->cb) {
        r->ce = i1;
    } else {
        r->cb = i0;
        r->ce = i1;
    }
    if (!r->have || r->ce - r->cb > r->e - r->b) {
        r->b = r->cb;
        r->e = r->ce;
        r->have = 1;
    }
}

static size_t div_up(uint64_t a, uint64_t b)
{
    return (size_t)(a / b + (a % b != 0));
}

/* From the plan of the area holding [a, a + E*N). */
static void from_plan(const ph_area *ar, uintptr_t a, size_t E, size_t N,
                      int node, best_run *r)
{
    uintptr_t base = (uintptr_t)ar->base;
    size_t P = ar->page_bytes;
    uintptr_t e = a + (uintptr_t)E * N;
    size_t p0 = (a - base) / P, p1 = (e - 1 - base) / P + 1;
    size_t i = p0;
    while (i < p1) {
        int n;
        size_t run = ph_plan_run(&ar->plan, base, i, ar->npages, &n);
        size_t j = i + run < p1 ? i + run : p1;
        if (n == node) {
            uintptr_t r0 = base + i * P, r1 = base + j * P;
            if (r0 < a)
                r0 = a;
            if (r1 > e)
                r1 = e;
            size_t i0 = div_up(r0 - a, E), i1 = div_up(r1 - a, E);
            if (i1 > N)
                i1 = N;
            run_add(r, i0, i1);
        }
        i = j;
    }
}

/* Elements fully inside the local pages [A, B) of the array at a. */
static void close_run(best_run *r, uintptr_t a, uintptr_t e, size_t E,
                      uintptr_t A, uintptr_t B)
{
    if (A < a)
        A = a;
    if (B > e)
        B = e;
    size_t i0 = div_up(A - a, E), i1 = (B - a) / E;
    if (i1 > i0 && (!r->have || i1 - i0 > r->e - r->b)) {
        r->b = i0;
        r->e = i1;
        r->have = 1;
    }
}

/* From the actual homes of the 4 KiB pages under [a, a + E*N). */
static int from_homes(ph_machine *c, uintptr_t a, size_t E, size_t N,
                      int node, best_run *r)
{
    uintptr_t e = a + (uintptr_t)E * N;
    uintptr_t first = a & ~(uintptr_t)(PH_PAGE_4K - 1);
    size_t count = (e - first + PH_PAGE_4K - 1) / PH_PAGE_4K;
    int st[AFF_BATCH];
    int in_run = 0;
    uintptr_t run_start = 0;
    for (size_t off = 0; off < count; off += AFF_BATCH) {
        size_t n = count - off < AFF_BATCH ? count - off : AFF_BATCH;
        if (ph_place_query_range(c, first + off * PH_PAGE_4K, n, st) != 0)
            return -1;
        for (size_t k = 0; k < n; k++) {
            uintptr_t pg = first + (off + k) * PH_PAGE_4K;
            if (st[k] == node && !in_run) {
                in_run = 1;
                run_start = pg;
            } else if (st[k] != node && in_run) {
                in_run = 0;
                close_run(r, a, e, E, run_start, pg);
            }
        }
    }
    if (in_run)
        close_run(r, a, e, E, run_start, first + count * PH_PAGE_4K);
    return 0;
}

int ph_place_affinity(ph_machine *c, const void *base, size_t elem_bytes,
                      size_t elems, int node, size_t *begin, size_t *end)
{
    if (!base)
        return ph_fail(EINVAL, "ph_affinity_range: base is NULL");
    if (!begin || !end)
        return ph_fail(EINVAL, "ph_affinity_range: %s is NULL",
                       !begin ? "begin" : "end");
    if (elem_bytes == 0 || elems == 0)
        return ph_fail(EINVAL, "ph_affinity_range: %s is 0",
                       elem_bytes == 0 ? "elem_bytes" : "elems");
    if (elems > PH_RANGE_MAX / elem_bytes ||
        (uintptr_t)base > UINTPTR_MAX - PH_RANGE_MAX)
        return ph_fail(EINVAL, "ph_affinity_range: %zu elements of %zu "
                       "bytes is too large", elems, elem_bytes);
    if (node == -1) {
        node = ph_os_current_node(c->os);
        if (node < 0)
            return ph_fail(ENOENT, "ph_affinity_range: cannot tell the "
                           "calling thread's node");
    } else if (ph_topo_node_index(c->topo, node) < 0) {
        char set[256];
        ph_plan_nodes_text(c->topo, set, sizeof set);
        return ph_fail(EINVAL, "ph_affinity_range: node %d is not a node "
                       "of this machine (nodes %s)", node, set);
    }

    uintptr_t a = (uintptr_t)base;
    uintptr_t e = a + (uintptr_t)elem_bytes * elems;
    best_run r;
    memset(&r, 0, sizeof r);
    int done = 0;
    ph_area ar;
    if (ph_registry_find(base, &ar) == 0) {
        uintptr_t aend = (uintptr_t)ar.base + ar.npages * ar.page_bytes;
        if (!ar.mixed && e <= aend &&
            (ar.plan.policy == PH_POLICY_BLOCK ||
             ar.plan.policy == PH_POLICY_BLOCK_STATIC)) {
            from_plan(&ar, a, elem_bytes, elems, node, &r);
            done = 1;
        }
        ph_plan_release(&ar.plan);
    }
    if (!done && from_homes(c, a, elem_bytes, elems, node, &r) != 0)
        return ph_refail("ph_affinity_range");
    if (!r.have)
        return ph_fail(ENOENT, "ph_affinity_range: no element of the array "
                       "is on node %d", node);
    *begin = r.b;
    *end = r.e;
    return 0;
}
