/*
 * place.c -- ph_place (ph_place_range): apply a placement to memory the
 * program already has (static arrays, COMMON blocks, heap, or a ph_alloc
 * block).
 *
 * The range is widened to whole pages of the plan's page size (a 2 MiB
 * plan needs a 2 MiB aligned start: widening it downwards would drag in
 * up to 2 MiB of someone else's data).  Page 0 of the plan is the widened
 * start; for block-static the array starts data_offset bytes into it.
 *
 *   1. Untouched pages.  Lazy plans (block, single node) bind the range
 *      (one preferred bind per chunk) so untouched pages land right when
 *      touched; they report -ENOENT and count as placed.  Eager plans
 *      (and interleave, see below) first reset the range's policy (a binding left from earlier would
 *      win over populate_on), then fault untouched pages in on their node
 *      with one populate_on per run: binding them page by page would cut
 *      the mapping into one kernel VMA per run.
 *   2. Resident pages not on their target go to the mover (batching,
 *      retries, 2 MiB pages as units, full nodes).
 *   3. First touch resets the policy of the range and moves nothing (nor
 *      asks where the pages are, unless status[] wants to know).
 * A bound range with no status[] wanted has work only where pages are
 * resident: batches without one are skipped (next_touched_batch), so a
 * static segment sized for the largest input costs what its used part
 * does.
 *
 * With cfg->bind_untouched (transparent mode's static segments) no page
 * is faulted in: a segment sized for the largest input, of which a run
 * touches a part, would otherwise be populated whole (1 GiB of memory for
 * 8 MiB in use).  Untouched pages are bound instead -- lazy plans as
 * above; interleave, cyclic and random as an interleave over the plan's
 * nodes in the kernel's own sequence; block-static by its runs -- and
 * count as placed; resident pages move to the plan's nodes as always.
 *
 * Work goes in batches of BATCH 4 KiB pages (a multiple of 512, so a
 * 2 MiB plan page never straddles two batches).  status[] has one slot
 * per plan page: for 2 MiB plans the status of the 2 MiB page is its
 * target when every 4 KiB page in it is placed, else the first failure.
 */
#include "place/alloc.h"

#include "base/error.h"
#include "os/pagemap.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BATCH ((size_t)8192)
#define SUB_2M (PH_PAGE_2M / PH_PAGE_4K)
#define PH_RANGE_MAX ((size_t)1 << 48)

typedef struct place_buf {
    void **pages;    /* BATCH: the 4 KiB pages */
    int *target;     /* BATCH: node per 4 KiB page (-1 first touch) */
    int *st;         /* BATCH: status per 4 KiB page */
    void **mpages;   /* BATCH: pages for the mover */
    int *mtarget;
    int *mst;
    size_t *midx;    /* index into the batch */
} place_buf;

static void buf_free(place_buf *b)
{
    free(b->pages);
    free(b->target);
    free(b->st);
    free(b->mpages);
    free(b->mtarget);
    free(b->mst);
    free(b->midx);
}

static int buf_alloc(place_buf *b)
{
    memset(b, 0, sizeof *b);
    b->pages = malloc(BATCH * sizeof *b->pages);
    b->target = malloc(BATCH * sizeof *b->target);
    b->st = malloc(BATCH * sizeof *b->st);
    b->mpages = malloc(BATCH * sizeof *b->mpages);
    b->mtarget = malloc(BATCH * sizeof *b->mtarget);
    b->mst = malloc(BATCH * sizeof *b->mst);
    b->midx = malloc(BATCH * sizeof *b->midx);
    if (!b->pages || !b->target || !b->st || !b->mpages || !b->mtarget ||
        !b->mst || !b->midx) {
        buf_free(b);
        return ph_fail(ENOMEM, "out of memory for the page lists");
    }
    return 0;
}

static int placed(int st, int target, int lazy)
{
    if (target < 0)
        return 1;
    return st == target || (lazy && st == -ENOENT);
}

/* Fault in the untouched pages of the batch that an eager plan needs:
 * one populate_on per run of adjacent pages with one target, then query
 * them again for their status. */
static void populate_untouched(ph_machine *c, place_buf *b, size_t n)
{
    ph_os *os = c->os;
    size_t i = 0;
    while (i < n) {
        if (b->st[i] != -ENOENT || b->target[i] < 0) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < n && b->st[j] == -ENOENT && b->target[j] == b->target[i])
            j++;
        if (ph_os_populate_on(os, b->pages[i], (j - i) * PH_PAGE_4K,
                                 b->target[i]) != 0) {
            int e = errno ? errno : ENOMEM;
            for (size_t k = i; k < j; k++)
                b->st[k] = -e;
        } else if (ph_os_query(os, j - i, b->pages + i, b->st + i) != 0) {
            for (size_t k = i; k < j; k++)
                b->st[k] = b->target[k];
        }
        i = j;
    }
}

/* Move the resident pages of the batch that are not on their target. */
static void move_resident(ph_machine *c, place_buf *b, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (b->target[i] >= 0 && b->st[i] >= 0 && b->st[i] != b->target[i]) {
            b->mpages[m] = b->pages[i];
            b->mtarget[m] = b->target[i];
            b->midx[m] = i;
            m++;
        }
    }
    if (m == 0)
        return;
    for (size_t k = 0; k < m; k++)
        b->mst[k] = -EAGAIN;
    (void)ph_mover_move(c->mover, m, b->mpages, b->mtarget, b->mst, NULL);
    for (size_t k = 0; k < m; k++)
        b->st[b->midx[k]] = b->mst[k];
}

/* The first batch boundary at or after `off` (in 4 KiB pages from start,
 * a multiple of BATCH) whose batch holds a resident page, or total when
 * none does: where a bound range has work (its untouched pages are
 * placed by their first touch).  PAGEMAP_SCAN passes an untouched
 * stretch in one step; without it mincore answers a batch at a time. */
static size_t next_touched_batch(ph_pagemap *pm, uintptr_t start, size_t off, size_t total)
{
    uintptr_t end = start + total * PH_PAGE_4K, next;
    if (ph_pagemap_next_present(pm, start + off * PH_PAGE_4K, end, &next) == 0)
        return next >= end ? total : (next - start) / PH_PAGE_4K / BATCH * BATCH;
    unsigned char vec[BATCH];
    for (; off < total; off += BATCH) {
        size_t n = total - off < BATCH ? total - off : BATCH;
        int any = 1; /* mincore refused (a hole): look at the batch */
        if (mincore((void *)(start + off * PH_PAGE_4K), n * PH_PAGE_4K, vec) == 0) {
            any = 0;
            for (size_t i = 0; i < n && !any; i++)
                any = vec[i] & 1;
        }
        if (any)
            return off;
    }
    return total;
}

int ph_place_range(ph_machine *c, const ph_place_cfg *cfg, void *addr,
                   size_t bytes, const ph_placement_t *pl, int *status)
{
    if (!addr)
        return ph_fail(EINVAL, "ph_place: addr is NULL");
    if (bytes == 0)
        return ph_fail(EINVAL, "ph_place: size 0 (nothing to place)");
    if (bytes > PH_RANGE_MAX || (uintptr_t)addr > UINTPTR_MAX - bytes -
                                                      PH_PAGE_2M)
        return ph_fail(EINVAL, "ph_place: range %p + %zu bytes is too large",
                       addr, bytes);

    ph_plan plan;
    if (ph_plan_make_range(&plan, pl, c->topo, &cfg->plan, bytes) != 0)
        return ph_refail("ph_place");
    size_t P = plan.page_bytes;
    int rc = -1;
    place_buf b;
    memset(&b, 0, sizeof b);
    ph_pagemap pm = PH_PAGEMAP_INIT;

    if (P == PH_PAGE_2M && (uintptr_t)addr % PH_PAGE_2M != 0) {
        ph_fail(EINVAL, "ph_place: %p is not 2 MiB aligned: a 2 MiB "
                "placement needs a 2 MiB aligned range (align the array, "
                "or place it @4K)", addr);
        goto out;
    }
    uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(P - 1);
    uintptr_t end = ((uintptr_t)addr + bytes + P - 1) & ~(uintptr_t)(P - 1);
    size_t npages = (end - start) / P;
    if (plan.policy == PH_POLICY_BLOCK_STATIC) {
        plan.data_offset = (uintptr_t)addr - start;
        if (plan.elems * plan.elem_bytes > bytes) {
            ph_fail(EINVAL, "ph_place: block-static array of %zu elements "
                    "of %zu bytes does not fit in %zu bytes", plan.elems,
                    plan.elem_bytes, bytes);
            goto out;
        }
    }

    /* Interleave is eager here: the kernel's interleave sequence of an
     * existing range is unknown (plan.h), and may differ between the
     * mappings the range spans. */
    int lazy = ph_plan_is_lazy(&plan) && plan.policy != PH_POLICY_INTERLEAVE;
    int bound;
    if (lazy) {
        bound = ph_place_bind_lazy(c, &plan, start, npages);
    } else if (cfg->bind_untouched) {
        lazy = 1; /* untouched pages: bound, placed at their first touch */
        bound = ph_place_bind_untouched(c, &plan, start, npages);
    } else {
        bound = ph_os_bind(c->os, (void *)start, npages * P,
                                 PH_BIND_DEFAULT, NULL, 0);
    }
    if (bound != 0) {
        ph_refail("ph_place");
        goto out;
    }
    if (buf_alloc(&b) != 0) {
        ph_refail("ph_place");
        goto out;
    }

    size_t sub = P / PH_PAGE_4K;
    /* First touch with no status asked for: every page counts as placed
     * whatever the kernel says, and nothing moves -- the policy set above
     * is all there is to do.  Asking about every page would cost 0.1 us
     * a page: 0.4 s for a 16 GiB static segment, touched or not. */
    size_t total = plan.policy == PH_POLICY_FIRST_TOUCH && !status ? 0 : npages * sub;
    size_t not_placed = 0;
    /* Bound with no status asked for: only batches holding a touched page
     * have work (a static segment sized for the largest input touches a
     * part; asking about all of 16 GiB took 0.4 s). */
    int skip_untouched = lazy && !status;
    for (size_t off = 0; off < total; off += BATCH) {
        if (skip_untouched && (off = next_touched_batch(&pm, start, off, total)) >= total)
            break;
        size_t n = total - off < BATCH ? total - off : BATCH;
        /* Targets: one plan page at a time. */
        for (size_t i = 0; i < n; i += sub) {
            size_t page = (off + i) / sub;
            int t = ph_plan_node_of(&plan, start, page, npages);
            for (size_t k = 0; k < sub; k++) {
                b.pages[i + k] = (void *)(start + (off + i + k) * PH_PAGE_4K);
                b.target[i + k] = t;
            }
        }
        if (ph_os_query(c->os, n, b.pages, b.st) != 0) {
            if (off == 0) {
                ph_refail("ph_place");
                goto out;
            }
            for (size_t i = 0; i < n; i++)
                b.st[i] = -(errno ? errno : EIO);
        } else {
            if (!lazy)
                populate_untouched(c, &b, n);
            move_resident(c, &b, n);
        }
        /* Status per plan page. */
        for (size_t i = 0; i < n; i += sub) {
            int ok = 1, bad = 0, any = INT_MIN;
            for (size_t k = i; k < i + sub; k++) {
                if (!placed(b.st[k], b.target[k], lazy)) {
                    if (ok)
                        bad = b.st[k];
                    ok = 0;
                }
                if (b.st[k] >= 0 && any == INT_MIN)
                    any = b.st[k];
            }
            if (!ok)
                not_placed++;
            if (status)
                status[(off + i) / sub] =
                    !ok ? bad : any != INT_MIN ? any : b.st[i];
        }
    }
    (void)ph_registry_replan((void *)start, npages * P, &plan);
    rc = not_placed > INT_MAX ? INT_MAX : (int)not_placed;
out:
    ph_pagemap_done(&pm);
    buf_free(&b);
    ph_plan_release(&plan);
    return rc;
}
