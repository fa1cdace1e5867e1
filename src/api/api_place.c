/*
 * api_place.c -- the public entry points of placement: requests
 * (ph_placement_init, ph_placement_parse, ph_policy_name), ph_alloc,
 * ph_free, ph_place, ph_query, ph_node_histogram, ph_move,
 * ph_affinity_range.
 *
 * Each gets the process machine (a failure to make it is reported under
 * the function's name), reads the placement tunables it needs
 * (settings.c) and calls src/place/, which checks the arguments and does
 * the work.
 */
#include "pagehome.h"

#include "api/settings.h"
#include "machine/machine.h"
#include "place/place.h"
#include "place/plan.h"
#include "sample/source.h"

#include <stddef.h>

/* ---- requests ------------------------------------------------------------ */

PH_API int ph_placement_init(ph_placement_t *pl, ph_policy_t policy)
{
    return ph_plan_request_init(pl, policy);
}

PH_API int ph_placement_parse(ph_placement_t *pl, const char *text)
{
    return ph_plan_request_parse(pl, text);
}

PH_API const char *ph_policy_name(ph_policy_t policy)
{
    return ph_plan_policy_name(policy);
}

/* ---- allocation ---------------------------------------------------------- */

PH_API void *ph_alloc(size_t bytes, const ph_placement_t *pl)
{
    ph_machine *m = ph_machine_get_for("ph_alloc");
    if (!m)
        return NULL;
    ph_place_cfg cfg;
    ph_settings_place(&cfg);
    return ph_place_alloc(m, &cfg, bytes, pl);
}

PH_API int ph_free(void *ptr)
{
    if (!ptr)
        return 0; /* like free(NULL) */
    ph_machine *m = ph_machine_get_for("ph_free");
    return m ? ph_place_free(m, ptr) : -1;
}

PH_API size_t ph_alloc_size(const void *ptr)
{
    return ph_place_alloc_size(ptr);
}

PH_API size_t ph_alloc_page_bytes(const void *ptr)
{
    return ph_place_alloc_page_bytes(ptr);
}

/* ---- memory the program has ---------------------------------------------- */

PH_API int ph_place(void *addr, size_t bytes, const ph_placement_t *pl, int *status)
{
    ph_machine *m = ph_machine_get_for("ph_place");
    if (!m)
        return -1;
    ph_place_cfg cfg;
    ph_settings_place(&cfg);
    (void)ph_sampler_open_range(addr, bytes);
    return ph_place_range(m, &cfg, addr, bytes, pl, status);
}

PH_API int ph_query(const void *addr, size_t bytes, int *status)
{
    ph_machine *m = ph_machine_get_for("ph_query");
    if (!m)
        return -1;
    (void)ph_sampler_open_range(addr, bytes);
    return ph_place_query(m, addr, bytes, status);
}

PH_API long ph_node_histogram(const void *addr, size_t bytes, size_t *pages_per_node,
                              int max)
{
    ph_machine *m = ph_machine_get_for("ph_node_histogram");
    if (!m)
        return -1;
    (void)ph_sampler_open_range(addr, bytes);
    return ph_place_histogram(m, addr, bytes, pages_per_node, max);
}

PH_API int ph_move(size_t count, void *const *pages, const int *nodes, int *status)
{
    ph_machine *m = ph_machine_get_for("ph_move");
    if (!m)
        return -1;
    if (pages)
        for (size_t k = 0; k < count; k++)
            (void)ph_sampler_open_range(pages[k], 1);
    return ph_place_move(m, count, pages, nodes, status);
}

PH_API int ph_affinity_range(const void *base, size_t elem_bytes, size_t elems, int node,
                             size_t *begin, size_t *end)
{
    ph_machine *m = ph_machine_get_for("ph_affinity_range");
    return m ? ph_place_affinity(m, base, elem_bytes, elems, node, begin, end) : -1;
}
