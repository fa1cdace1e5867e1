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
 *
 * Pages the engine watches.  The sampler protects the pages it watches
 * (PROT_NONE), and before Linux 6.5 move_pages(2) reports such a page as
 * absent (-ENOENT) and does not move it: a program that asks where its
 * pages are while the engine runs would see them vanish.  ph_query,
 * ph_node_histogram and ph_move therefore open the watched pages of their
 * range without sampling them (ph_sampler_open_pages: the caller is not
 * an accessor) before they ask the OS, and ph_query and ph_move redo a
 * page that came back -ENOENT or -EFAULT while it was watched again (the
 * memory manager re-arms), a bounded number of times -- as transparent
 * mode's wrapped move_pages does (src/preload/syscalls.c).
 */
#include "pagehome.h"

#include "api/settings.h"
#include "machine/machine.h"
#include "place/place.h"
#include "place/plan.h"
#include "sample/source.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

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

/* Times a page that came back absent while watched is opened and asked
 * about again. */
#define WATCHED_RETRIES 3

/* A status that a watched page may have been given for being watched. */
static int absent(int st)
{
    return st == -ENOENT || st == -EFAULT;
}

PH_API int ph_query(const void *addr, size_t bytes, int *status)
{
    ph_machine *m = ph_machine_get_for("ph_query");
    if (!m)
        return -1;
    (void)ph_sampler_open_range(addr, bytes);
    int bad = ph_place_query(m, addr, bytes, status);
    if (bad <= 0)
        return bad;
    uintptr_t first = (uintptr_t)addr & ~(uintptr_t)4095;
    size_t count = ((uintptr_t)addr + bytes - first + 4095) / 4096;
    for (int t = 0; t < WATCHED_RETRIES; t++) {
        int again = 0;
        for (size_t i = 0; i < count; i++) {
            void *pg = (void *)(first + i * 4096);
            if (!absent(status[i]) || ph_sampler_open_pages(1, &pg) == 0)
                continue;
            int one;
            if (ph_place_query(m, pg, 4096, &one) < 0)
                return -1;
            status[i] = one;
            bad -= one >= 0;
            again = 1;
        }
        if (!again)
            break;
    }
    return bad;
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
    int left = ph_place_move(m, count, pages, nodes, status);
    if (left <= 0 || !status || !nodes)
        return left;
    for (int t = 0; t < WATCHED_RETRIES; t++) {
        int again = 0;
        for (size_t i = 0; i < count; i++) {
            if (!absent(status[i]) || ph_sampler_open_pages(1, &pages[i]) == 0)
                continue;
            int one;
            int r = ph_place_move(m, 1, &pages[i], &nodes[i], &one);
            if (r < 0)
                return -1;
            status[i] = one;
            left -= r == 0;
            again = 1;
        }
        if (!again)
            break;
    }
    return left;
}

PH_API int ph_affinity_range(const void *base, size_t elem_bytes, size_t elems, int node,
                             size_t *begin, size_t *end)
{
    ph_machine *m = ph_machine_get_for("ph_affinity_range");
    return m ? ph_place_affinity(m, base, elem_bytes, elems, node, begin, end) : -1;
}
