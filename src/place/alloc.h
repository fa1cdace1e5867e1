/*
 * alloc.h -- the placement allocator's internal interface.
 *
 * ph_alloc / ph_free / ph_place / ph_affinity_range (pagehome.h) are
 * implemented in alloc.c, place.c and affinity.c over a machine context
 * (api/context.h).  Every live allocation is recorded in a registry
 * (registry.c) so that ph_free can reject foreign pointers and double
 * frees, and so that later layers (the migration engine, reports) can
 * enumerate placed areas.
 */
#ifndef PH_PLACE_ALLOC_H
#define PH_PLACE_ALLOC_H

#include "place/policy.h"

#include <stddef.h>

typedef struct ph_area {
    void *base;           /* what ph_alloc returned */
    size_t bytes;         /* requested size */
    void *map_base;       /* the mapping (may start before base) */
    size_t map_bytes;
    size_t page_bytes;    /* 4096 or 2 MiB */
    unsigned map_flags;   /* ph_map_flags used */
    ph_plan plan;         /* how it was placed */
} ph_area;

/* Registry: lookups by exact base.  Thread-safe. */
int ph_registry_add(const ph_area *a);
/* Remove and return the area whose base is exactly ptr. 0 or -1/EINVAL. */
int ph_registry_remove(const void *ptr, ph_area *out);
/* Copy of the area containing addr (not only its base). 0 or -1/ENOENT. */
int ph_registry_find(const void *addr, ph_area *out);

#endif
