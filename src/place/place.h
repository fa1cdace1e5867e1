/*
 * place.h -- the placement entry points, over a machine.
 *
 * What src/api/ calls for ph_alloc, ph_free, ph_place, ph_query,
 * ph_node_histogram, ph_move and ph_affinity_range (pagehome.h describes
 * them; the messages name those public functions).  Each takes the
 * machine (machine/machine.h) it works on and, where a request may leave
 * something out, the settings its caller read from the tunables: nothing
 * in place/ reads a tunable or finds the process machine by itself.
 */
#ifndef PH_PLACE_PLACE_H
#define PH_PLACE_PLACE_H

#include "machine/machine.h"
#include "place/plan.h"

#include <stddef.h>

typedef struct ph_place_cfg {
    ph_plan_defaults plan; /* placement, pagesize, seed */
    int huge_tlbfs;        /* 2 MiB blocks from the hugetlbfs pools
                              (tunable huge_source), else THP */
    int huge_fallback;     /* a short pool falls back to 4 KiB pages
                              (tunable huge_fallback) */
    int bind_untouched;    /* untouched pages are only bound for their
                              first touch, never faulted in now, whatever
                              the plan (transparent mode: static segments,
                              ph_place_range; hot heap blocks,
                              ph_place_alloc but on hugetlbfs; place.c) */
} ph_place_cfg;

/* ph_alloc / ph_free / ph_alloc_size / ph_alloc_page_bytes (alloc.c). */
void *ph_place_alloc(ph_machine *m, const ph_place_cfg *cfg, size_t bytes,
                     const ph_placement_t *pl);
int ph_place_free(ph_machine *m, void *ptr);
size_t ph_place_alloc_size(const void *ptr);
size_t ph_place_alloc_page_bytes(const void *ptr);
/* ph_place (place.c). */
int ph_place_range(ph_machine *m, const ph_place_cfg *cfg, void *addr,
                   size_t bytes, const ph_placement_t *pl, int *status);
/* ph_query / ph_node_histogram / ph_move (query.c). */
int ph_place_query(ph_machine *m, const void *addr, size_t bytes,
                   int *status);
long ph_place_histogram(ph_machine *m, const void *addr, size_t bytes,
                        size_t *pages_per_node, int max);
int ph_place_move(ph_machine *m, size_t count, void *const *pages,
                  const int *nodes, int *status);
/* ph_affinity_range (affinity.c). */
int ph_place_affinity(ph_machine *m, const void *base, size_t elem_bytes,
                      size_t elems, int node, size_t *begin, size_t *end);

#endif
