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
 * Pages the engine watches.  The sampler takes the pages it watches out
 * of the page table (userfaultfd) or protects them (PROT_NONE, which
 * before Linux 6.5 move_pages(2) reports as absent (-ENOENT) and does not
 * move): a program that asks where its pages are while the engine runs
 * would see them vanish.  ph_place, ph_query, ph_node_histogram and
 * ph_move therefore take a query hold (no arm watches a page until it
 * ends), open the watched pages of their range without sampling them
 * (ph_sampler_open_range: the caller is not an accessor) and ask the OS
 * under it -- as transparent mode's wrapped move_pages does
 * (src/preload/syscalls.c); ph_query and ph_move open and ask again for
 * a page that came back -ENOENT or -EFAULT while the mprotect mechanism
 * watched it (no arm can watch it again under the hold: once is enough).
 */
#include "pagehome.h"

#include "api/settings.h"
#include "api/transparent.h"
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

static void *alloc(size_t bytes, const ph_placement_t *pl, int bind_untouched)
{
    ph_machine *m = ph_machine_get_for("ph_alloc");
    if (!m)
        return NULL;
    ph_place_cfg cfg;
    ph_settings_place(&cfg);
    cfg.bind_untouched = bind_untouched;
    return ph_place_alloc(m, &cfg, bytes, pl);
}

PH_API void *ph_alloc(size_t bytes, const ph_placement_t *pl)
{
    return alloc(bytes, pl, 0);
}

void *ph_api_alloc_hot(size_t bytes, const ph_placement_t *pl)
{
    return alloc(bytes, pl, 1);
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

static int place(void *addr, size_t bytes, const ph_placement_t *pl, int *status,
                 int bind_untouched)
{
    ph_machine *m = ph_machine_get_for("ph_place");
    if (!m)
        return -1;
    ph_place_cfg cfg;
    ph_settings_place(&cfg);
    cfg.bind_untouched = bind_untouched;
    ph_sampler_query_begin();
    (void)ph_sampler_open_range(addr, bytes);
    int r = ph_place_range(m, &cfg, addr, bytes, pl, status);
    ph_sampler_query_end();
    return r;
}

PH_API int ph_place(void *addr, size_t bytes, const ph_placement_t *pl, int *status)
{
    return place(addr, bytes, pl, status, 0);
}

int ph_api_place_segment(void *addr, size_t bytes, const ph_placement_t *pl)
{
    return place(addr, bytes, pl, NULL, 1);
}

int ph_api_process_policy(int own, const int *bind_nodes, int nbind)
{
    ph_machine *m = ph_machine_get_for("process policy");
    if (!m)
        return -1;
    return ph_os_process_policy(m->os, own, bind_nodes, nbind);
}

/* A status that a page may have been given for being watched by the
 * mprotect mechanism (PROT_NONE) on a Linux before 6.5. */
static int absent(int st)
{
    return st == -ENOENT || st == -EFAULT;
}

PH_API int ph_query(const void *addr, size_t bytes, int *status)
{
    ph_machine *m = ph_machine_get_for("ph_query");
    if (!m)
        return -1;
    ph_sampler_query_begin();
    (void)ph_sampler_open_range(addr, bytes);
    int bad = ph_place_query(m, addr, bytes, status);
    uintptr_t first = (uintptr_t)addr & ~(uintptr_t)4095;
    size_t count = bad > 0 ? ((uintptr_t)addr + bytes - first + 4095) / 4096 : 0;
    for (size_t i = 0; i < count && bad >= 0; i++) {
        void *pg = (void *)(first + i * 4096);
        int one;
        if (!absent(status[i]) || ph_sampler_open_pages(1, &pg) == 0)
            continue;
        if (ph_place_query(m, pg, 4096, &one) < 0)
            bad = -1;
        else {
            status[i] = one;
            bad -= one >= 0;
        }
    }
    ph_sampler_query_end();
    return bad;
}

PH_API long ph_node_histogram(const void *addr, size_t bytes, size_t *pages_per_node,
                              int max)
{
    ph_machine *m = ph_machine_get_for("ph_node_histogram");
    if (!m)
        return -1;
    ph_sampler_query_begin();
    (void)ph_sampler_open_range(addr, bytes);
    long r = ph_place_histogram(m, addr, bytes, pages_per_node, max);
    ph_sampler_query_end();
    return r;
}

PH_API int ph_move(size_t count, void *const *pages, const int *nodes, int *status)
{
    ph_machine *m = ph_machine_get_for("ph_move");
    if (!m)
        return -1;
    ph_sampler_query_begin();
    if (pages)
        for (size_t k = 0; k < count; k++)
            (void)ph_sampler_open_range(pages[k], 1);
    int left = ph_place_move(m, count, pages, nodes, status);
    for (size_t i = 0; left > 0 && status && nodes && i < count; i++) {
        int one;
        if (!absent(status[i]) || ph_sampler_open_pages(1, &pages[i]) == 0)
            continue;
        int r = ph_place_move(m, 1, &pages[i], &nodes[i], &one);
        if (r < 0) {
            left = -1;
            break;
        }
        status[i] = one;
        left -= r == 0;
    }
    ph_sampler_query_end();
    return left;
}

PH_API int ph_affinity_range(const void *base, size_t elem_bytes, size_t elems, int node,
                             size_t *begin, size_t *end)
{
    ph_machine *m = ph_machine_get_for("ph_affinity_range");
    return m ? ph_place_affinity(m, base, elem_bytes, elems, node, begin, end) : -1;
}
