/*
 * alloc.h -- the placement allocator's internal interface.
 *
 * The entry points (place.h) are implemented in alloc.c, place.c,
 * query.c and affinity.c over a machine (machine/machine.h).
 * Every live allocation is recorded in a registry (registry.c) so that
 * ph_free can reject foreign pointers and double frees, and so that later
 * layers (the migration engine, reports) can enumerate placed areas.
 */
#ifndef PH_PLACE_ALLOC_H
#define PH_PLACE_ALLOC_H

#include "place/place.h"
#include "place/plan.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ph_area {
    void *base;           /* what ph_alloc returned */
    size_t bytes;         /* requested size */
    size_t npages;        /* pages of page_bytes from base (bytes rounded up) */
    void *map_base;       /* the mapping (may start before base) */
    size_t map_bytes;
    size_t page_bytes;    /* 4096 or 2 MiB */
    unsigned map_flags;   /* ph_map_flags used */
    ph_plan plan;         /* how it was placed (page 0 at base) */
    int mixed;            /* part of it was placed again by ph_place with
                           * another plan: `plan` is no longer exact */
} ph_area;

/* Registry of live allocations, sorted by base.  Thread-safe; lookups are
 * O(log n).  Ownership of plan.thread_slot:
 *   add     the registry takes it over on success (not on failure);
 *   remove  it passes to *out (ph_plan_release it);
 *   find    *out gets a deep copy (ph_plan_release it). */
int ph_registry_add(const ph_area *a);
/* Remove and return the area whose base is exactly ptr.  0, or -1/EINVAL
 * with a message naming ptr (and the block it lies in, if any). */
int ph_registry_remove(const void *ptr, ph_area *out);
/* Copy of the area containing addr, i.e. addr in [base, base + npages *
 * page_bytes).  0 or -1/ENOENT (-1/ENOMEM when the copy fails). */
int ph_registry_find(const void *addr, ph_area *out);
/* Number of live areas. */
size_t ph_registry_count(void);
/* ph_place applied `plan` to [start, start + len): an area that is exactly
 * that range (same base, page size and page count) takes the plan (a deep
 * copy); any other area overlapping it is marked mixed.  0 or -1/ENOMEM. */
int ph_registry_replan(const void *start, size_t len, const ph_plan *plan);

/* Bind [base, base + npages pages) for a lazy plan (alloc.c): one
 * interleave bind, one preferred bind per run, or DEFAULT for first touch.
 * 0 or -1 with the OS table's message. */
int ph_place_bind_lazy(ph_machine *c, const ph_plan *p, uintptr_t base,
                       size_t npages);
/* Bind [base, base + npages pages) for its first touch whatever the plan
 * (place.h, bind_untouched): interleave, cyclic and random as an
 * interleave over the plan's nodes in the kernel's own sequence, other
 * plans as ph_place_bind_lazy does.  0 or -1 with the OS table's message. */
int ph_place_bind_untouched(ph_machine *c, const ph_plan *p, uintptr_t base,
                            size_t npages);
/* Query `count` 4 KiB pages from `first` into st (query.c), in batches.
 * 0 or -1 with the OS table's message. */
int ph_place_query_range(ph_machine *c, uintptr_t first, size_t count,
                         int *st);

#endif
