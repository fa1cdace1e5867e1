/*
 * alloc.c -- ph_alloc / ph_free: map memory and place it by a plan.
 *
 * HOW A BLOCK IS PLACED
 *   - The size is rounded up to whole pages of the plan's page size.
 *     4 KiB plans map with PH_MAP_NO_THP: on a THP=always kernel a 4 KiB
 *     page could otherwise be part of a 2 MiB page, and moving or binding
 *     one 4 KiB page would take its 511 neighbours along.  2 MiB plans map
 *     PH_MAP_HUGE_THP or PH_MAP_HUGE_TLBFS (cfg->huge_tlbfs, from the
 *     tunable huge_source).
 *   - Lazy plans (first touch, block, single node, interleave over nodes
 *     in ascending order with 4 KiB pages) are bound, not touched: one
 *     interleave bind for the block, or one preferred bind per chunk.
 *     Pages land where the plan says when the program first touches them,
 *     and nothing is committed before that.
 *   - Eager plans (cyclic, random, block-static, interleave in a custom
 *     order or with 2 MiB pages) cannot be expressed as a few bindings;
 *     each run of consecutive pages with one node is faulted in on its
 *     node with populate_on (one call per run: cyclic:K makes npages/K
 *     calls, random about 3/4 of a call per page).
 *   - hugetlbfs is always eager (except first touch), so that every 2 MiB
 *     page exists before the program runs: a short pool is reported here,
 *     never as a SIGBUS later.  The pool of each node is checked first
 *     ("hugetlbfs pool on node 1 has 0 free 2 MiB pages, need 4"); with
 *     cfg->huge_fallback the block falls back to 4 KiB pages instead.  The
 *     free counts come from the machine (ph_os_huge_pool: sysfs on Linux,
 *     the simulator's pool model), never from here.
 *   - Lazy interleave: the kernel picks the node of a page from an index
 *     that advances by one per page within a mapping, but where it starts
 *     depends on the mapping's history and the kernel version (plan.h).
 *     So the mapping is made n-1 pages larger and bound as a whole; one
 *     page is faulted in to see which node the kernel gives it, and the
 *     block starts at the page the kernel gives nodes[0]: page i of the
 *     block is on nodes[i % n], as the plan says.  (The probe page may lie
 *     before the block: 4 KiB resident for nothing, until ph_free.)
 */
#include "place/alloc.h"

#include "base/error.h"
#include "base/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PH_ALLOC_MAX ((size_t)1 << 48)

/* ------------------------------------------------------------------ */
/* hugetlbfs pools                                                     */
/* ------------------------------------------------------------------ */

/* 2 MiB pages per node index the plan puts in [base, +npages). */
static void tlb_need(const ph_topology *t, const ph_plan *p, uintptr_t base,
                     size_t npages, uint64_t *need)
{
    memset(need, 0, PH_MAX_NODES * sizeof *need);
    size_t i = 0;
    while (i < npages) {
        int node;
        size_t run = ph_plan_run(p, base, i, npages, &node);
        int idx = node >= 0 ? ph_topo_node_index(t, node) : -1;
        if (idx >= 0)
            need[idx] += run;
        i += run;
    }
}

/* Check that the machine's pools can serve the block: each node its
 * pages, or (first touch) the whole machine's free pages not reserved yet.
 * 0, or -1/ENOMEM naming the short node.  The pages themselves are
 * reserved by map() and taken when faulted (os.h). */
static int tlb_check(ph_os *os, const ph_topology *t, const ph_plan *p, size_t npages)
{
    ph_os_pool pool;
    if (p->policy == PH_POLICY_FIRST_TOUCH) {
        uint64_t avail = 0;
        if (ph_os_huge_pool(os, -1, PH_PAGE_2M, &pool) == 0)
            avail = pool.free_pages > pool.reserved_pages
                        ? pool.free_pages - pool.reserved_pages
                        : 0;
        if (avail < npages)
            return ph_fail(ENOMEM, "hugetlbfs pools of all nodes have %llu free "
                           "2 MiB pages, need %zu",
                           (unsigned long long)avail, npages);
        return 0;
    }
    uint64_t need[PH_MAX_NODES];
    tlb_need(t, p, 0, npages, need);
    for (int i = 0; i < t->nnodes; i++) {
        if (!need[i])
            continue;
        uint64_t fr = ph_os_huge_pool(os, t->nodes[i].id, PH_PAGE_2M, &pool) == 0
                          ? pool.free_pages
                          : 0;
        if (need[i] > fr)
            return ph_fail(ENOMEM, "hugetlbfs pool on node %d has %llu "
                           "free 2 MiB pages, need %llu",
                           t->nodes[i].id, (unsigned long long)fr,
                           (unsigned long long)need[i]);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Placing a fresh block                                               */
/* ------------------------------------------------------------------ */

int ph_place_bind_lazy(ph_machine *c, const ph_plan *p, uintptr_t base,
                       size_t npages)
{
    ph_os *os = c->os;
    size_t P = p->page_bytes;
    if (p->policy == PH_POLICY_FIRST_TOUCH)
        return ph_os_bind(os, (void *)base, npages * P,
                          p->own_policy ? PH_BIND_LOCAL : PH_BIND_DEFAULT, NULL, 0);
    if (p->policy == PH_POLICY_INTERLEAVE)
        return ph_os_bind(os, (void *)base, npages * P,
                             PH_BIND_INTERLEAVE, p->nodes, p->nnodes);
    size_t i = 0;
    while (i < npages) {
        int node;
        size_t run = ph_plan_run(p, base, i, npages, &node);
        if (ph_os_bind(os, (void *)(base + i * P), run * P,
                          PH_BIND_PREFERRED, &node, 1) != 0)
            return -1;
        i += run;
    }
    return 0;
}

int ph_place_bind_untouched(ph_machine *c, const ph_plan *p, uintptr_t base,
                            size_t npages)
{
    if (p->policy == PH_POLICY_INTERLEAVE || p->policy == PH_POLICY_CYCLIC ||
        p->policy == PH_POLICY_RANDOM)
        return ph_os_bind(c->os, (void *)base, npages * p->page_bytes, PH_BIND_INTERLEAVE,
                          p->nodes, p->nnodes);
    return ph_place_bind_lazy(c, p, base, npages);
}

/* Fault in [base, +npages) run by run on the plan's nodes. */
static int populate_plan(ph_machine *c, const ph_plan *p, uintptr_t base,
                         size_t npages)
{
    ph_os *os = c->os;
    size_t P = p->page_bytes;
    size_t i = 0;
    while (i < npages) {
        int node;
        size_t run = ph_plan_run(p, base, i, npages, &node);
        if (node >= 0 &&
            ph_os_populate_on(os, (void *)(base + i * P), run * P,
                                 node) != 0)
            return -1;
        i += run;
    }
    return 0;
}

/* Bind the whole mapping m (npages + n-1 pages) to interleave and start
 * the block where the kernel's sequence gives nodes[0] (see the top of the
 * file).  *base is set on success. */
static int lazy_interleave(ph_machine *c, const ph_plan *p, void *m,
                           size_t map_bytes, size_t npages, uintptr_t *base)
{
    ph_os *os = c->os;
    size_t P = p->page_bytes, n = (size_t)p->nnodes;
    if (ph_os_bind(os, m, map_bytes, PH_BIND_INTERLEAVE, p->nodes,
                      p->nnodes) != 0)
        return -1;
    void *pg = m;
    int st = -1;
    if (ph_os_populate_on(os, m, P, p->nodes[0]) != 0 ||
        ph_os_query(os, 1, &pg, &st) != 0)
        return -1;
    int j = ph_plan_slot(p, st);
    if (j >= 0) {
        *base = (uintptr_t)m + ((n - (size_t)j) % n) * P;
        return 0;
    }
    /* The probe went to a node outside the mask (its nodes full?): the
     * sequence is unknown, so place the block eagerly after the probe
     * page, with the range policy reset (it would win over populate). */
    ph_info("ph_alloc: interleave probe landed on node %d: placing the "
            "block page by page", st);
    *base = (uintptr_t)m + P;
    if (ph_os_bind(os, m, map_bytes, PH_BIND_DEFAULT, NULL, 0) != 0)
        return -1;
    return populate_plan(c, p, *base, npages);
}

static const char *page_text(size_t P)
{
    return P == PH_PAGE_2M ? "2 MiB" : "4 KiB";
}

/* Map and place one block.  NULL with a message (no "ph_alloc:" prefix)
 * on failure, everything undone.  bind_untouched: a plan the kernel
 * cannot hold per range is bound, not faulted in (place.h). */
static void *alloc_placed(ph_machine *c, ph_plan *plan, size_t bytes,
                          int hugetlbfs, int bind_untouched)
{
    ph_os *os = c->os;
    size_t P = plan->page_bytes;
    size_t npages = (bytes + P - 1) / P;
    size_t size = npages * P;
    unsigned flags = P == PH_PAGE_4K ? PH_MAP_NO_THP
                     : hugetlbfs     ? PH_MAP_HUGE_TLBFS
                                     : PH_MAP_HUGE_THP;
    size_t n = (size_t)plan->nnodes;
    int probe = plan->policy == PH_POLICY_INTERLEAVE && n > 1 &&
                !hugetlbfs && ph_plan_is_lazy(plan);
    size_t extra = probe ? (n - 1) * P : 0;
    size_t map_bytes = size + extra;

    /* The pools first (no plan depends on the address), so that a short
     * pool is reported per node even where mmap(MAP_HUGETLB) itself would
     * refuse. */
    if (hugetlbfs && tlb_check(os, c->topo, plan, npages) != 0)
        return NULL;

    void *m = ph_os_map(os, map_bytes, P, flags);
    if (!m) {
        int e = errno;
        char msg[200];
        snprintf(msg, sizeof msg, "%s", ph_error_message());
        return ph_fail_null(e ? e : ENOMEM, "cannot map %zu bytes (%zu "
                            "pages of %s): %s", size, npages, page_text(P),
                            msg);
    }
    uintptr_t base = (uintptr_t)m;

    int rc = 0;
    if (hugetlbfs) {
        rc = plan->policy == PH_POLICY_FIRST_TOUCH
                 ? 0
                 : populate_plan(c, plan, base, npages);
    } else if (probe) {
        rc = lazy_interleave(c, plan, m, map_bytes, npages, &base);
    } else if (ph_plan_is_lazy(plan)) {
        /* first touch needs no policy, unless the block is to be left to
         * the engine alone (own_policy: LOCAL, os.h) */
        rc = plan->policy == PH_POLICY_FIRST_TOUCH && !plan->own_policy
                 ? 0
                 : ph_place_bind_lazy(c, plan, base, npages);
    } else if (bind_untouched) {
        rc = ph_place_bind_untouched(c, plan, base, npages);
    } else {
        rc = populate_plan(c, plan, base, npages);
    }
    if (rc != 0)
        goto fail;

    ph_area a;
    memset(&a, 0, sizeof a);
    a.base = (void *)base;
    a.bytes = bytes;
    a.npages = npages;
    a.map_base = m;
    a.map_bytes = map_bytes;
    a.page_bytes = P;
    a.map_flags = flags;
    a.plan = *plan;
    if (ph_registry_add(&a) != 0)
        goto fail;
    plan->thread_slot = NULL; /* the registry owns it now */

    if (size > bytes || extra)
        ph_info("ph_alloc: %zu bytes as %zu pages of %s (%zu bytes unused "
                "at the end%s)",
                bytes, npages, page_text(P), size - bytes,
                extra ? ", plus the interleave probe pages" : "");
    return (void *)base;

fail:;
    int e = errno;
    char msg[256];
    snprintf(msg, sizeof msg, "%s", ph_error_message());
    if (ph_os_unmap(os, m, map_bytes) != 0)
        ph_warn("ph_alloc: could not unmap %p after a failure: %s", m,
                ph_error_message());
    return ph_fail_null(e, "%s", msg);
}

void *ph_place_alloc(ph_machine *c, const ph_place_cfg *cfg, size_t bytes,
                     const ph_placement_t *pl)
{
    if (bytes == 0)
        return ph_fail_null(EINVAL, "ph_alloc: size 0 (nothing to "
                            "allocate)");
    if (bytes > PH_ALLOC_MAX)
        return ph_fail_null(EINVAL, "ph_alloc: size %zu is larger than the "
                            "limit of 2^48 bytes (256 TiB)", bytes);

    ph_plan plan;
    if (ph_plan_make_range(&plan, pl, c->topo, &cfg->plan, bytes) != 0) {
        ph_refail("ph_alloc");
        return NULL;
    }
    if (plan.policy == PH_POLICY_BLOCK_STATIC &&
        plan.elems * plan.elem_bytes > bytes) {
        ph_plan_release(&plan);
        return ph_fail_null(EINVAL, "ph_alloc: block-static array of %zu "
                            "elements of %zu bytes does not fit in %zu "
                            "bytes", plan.elems, plan.elem_bytes, bytes);
    }

    int hugetlbfs = plan.page_bytes == PH_PAGE_2M && cfg->huge_tlbfs;
    void *p = alloc_placed(c, &plan, bytes, hugetlbfs, cfg->bind_untouched);
    if (!p && hugetlbfs && errno == ENOMEM && cfg->huge_fallback) {
        ph_info("ph_alloc: %s; huge_fallback: using 4 KiB pages",
                ph_error_message());
        plan.page_bytes = PH_PAGE_4K;
        p = alloc_placed(c, &plan, bytes, 0, cfg->bind_untouched);
    }
    if (!p)
        ph_refail("ph_alloc");
    ph_plan_release(&plan);
    return p;
}

int ph_place_free(ph_machine *c, void *ptr)
{
    if (!ptr)
        return 0; /* like free(NULL) */
    ph_area a;
    if (ph_registry_remove(ptr, &a) != 0)
        return ph_refail("ph_free");
    if (ph_os_unmap(c->os, a.map_base, a.map_bytes) != 0) {
        /* Keep the block: better a leak than memory in limbo. */
        int e = errno;
        char msg[256];
        snprintf(msg, sizeof msg, "%s", ph_error_message());
        if (ph_registry_add(&a) != 0)
            ph_plan_release(&a.plan);
        return ph_fail(e, "ph_free: %p: %s", ptr, msg);
    }
    ph_plan_release(&a.plan);
    return 0;
}

static int alloc_lookup(const char *who, const void *ptr, ph_area *out)
{
    if (ph_registry_find(ptr, out) != 0) {
        if (errno == ENOMEM)
            return ph_refail(who);
    } else if (out->base == ptr) {
        return 0;
    } else {
        ph_plan_release(&out->plan);
    }
    return ph_fail(EINVAL, "%s: %p was not returned by ph_alloc (or was "
                   "already freed)", who, ptr);
}

size_t ph_place_alloc_size(const void *ptr)
{
    ph_area a;
    memset(&a, 0, sizeof a);
    if (alloc_lookup("ph_alloc_size", ptr, &a) != 0)
        return 0;
    ph_plan_release(&a.plan);
    return a.bytes;
}

size_t ph_place_alloc_page_bytes(const void *ptr)
{
    ph_area a;
    memset(&a, 0, sizeof a);
    if (alloc_lookup("ph_alloc_page_bytes", ptr, &a) != 0)
        return 0;
    ph_plan_release(&a.plan);
    return a.page_bytes;
}
