/*
 * home.c -- home rank of a page under a cluster placement (see home.h for
 * the rules).  Pure: no MPI, no memory touched; the tunables are read only
 * for defaults (the placement text and the seed).
 */
#include "cluster/home.h"

#include "base/error.h"
#include "base/rng.h"
#include "config/options.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ph_dsm_placement_release(ph_dsm_placement *p)
{
    if (!p)
        return;
    free(p->ranks);
    p->ranks = NULL;
    p->nranks_list = 0;
}

int ph_dsm_placement_make(ph_dsm_placement *out, const ph_placement_t *pl,
                       int nranks)
{
    if (!out)
        return ph_fail(EINVAL, "cluster placement: nothing to fill");
    memset(out, 0, sizeof *out);
    if (nranks < 1)
        return ph_fail(EINVAL, "cluster placement: %d ranks", nranks);
    ph_placement_t deflt;
    const char *what = "request";
    char textbuf[300] = "";
    if (!pl) {
        const char *text = ph_opt_str(PH_OPT_CLUSTER_PLACEMENT);
        if (ph_placement_parse(&deflt, text) < 0) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", ph_last_error());
            return ph_fail(EINVAL, "tunable cluster_placement "
                           "(PAGEHOME_CLUSTER_PLACEMENT): %s", msg);
        }
        snprintf(textbuf, sizeof textbuf, "\"%s\"", text);
        what = textbuf;
        pl = &deflt;
    }
    if (pl->page_bytes != 0 && pl->page_bytes != 4096)
        return ph_fail(EINVAL, "cluster placement %s: page size %zu: the "
                       "coherence unit of cluster mode is 4 KiB", what,
                       pl->page_bytes);
    ph_dsm_placement p = {0};
    p.policy = pl->policy;
    p.block_pages = 1;
    p.node = -1;
    switch (pl->policy) {
    case PH_POLICY_FIRST_TOUCH:
    case PH_POLICY_BLOCK:
        break;
    case PH_POLICY_INTERLEAVE:            /* round-robin = cyclic:1 */
        p.policy = PH_POLICY_CYCLIC;
        break;
    case PH_POLICY_CYCLIC:
        if (pl->block_pages < 1)
            return ph_fail(EINVAL, "cluster placement %s: cyclic needs "
                           "block_pages >= 1", what);
        p.block_pages = pl->block_pages;
        break;
    case PH_POLICY_RANDOM:
        p.seed = pl->seed ? pl->seed : (uint64_t)ph_opt_int(PH_OPT_SEED);
        break;
    case PH_POLICY_SINGLE_NODE: {
        int r = pl->node;
        if (r < 0)
            r = (pl->nodes && pl->nnodes > 0) ? pl->nodes[0] : 0;
        if (r >= nranks)
            return ph_fail(EINVAL, "cluster placement %s: rank %d does not "
                           "exist (the job has %d rank%s)", what, r, nranks,
                           nranks == 1 ? "" : "s");
        p.node = r;
        break;
    }
    case PH_POLICY_BLOCK_STATIC:
        return ph_fail(EINVAL, "cluster placement %s: block-static has no "
                       "cluster meaning (use block, cyclic:K, node:R, "
                       "round-robin, random or first-touch)", what);
    default:
        return ph_fail(EINVAL, "cluster placement %s: policy %d is not a "
                       "placement policy", what, (int)pl->policy);
    }
    if (pl->nodes && p.policy != PH_POLICY_SINGLE_NODE &&
        p.policy != PH_POLICY_FIRST_TOUCH) {
        if (pl->nnodes < 1 || pl->nnodes > nranks)
            return ph_fail(EINVAL, "cluster placement %s: %d ranks listed "
                           "(1-%d)", what, pl->nnodes, nranks);
        p.ranks = malloc((size_t)pl->nnodes * sizeof *p.ranks);
        if (!p.ranks)
            return ph_fail(ENOMEM, "cluster placement: out of memory");
        for (int i = 0; i < pl->nnodes; i++) {
            if (pl->nodes[i] < 0 || pl->nodes[i] >= nranks) {
                free(p.ranks);
                return ph_fail(EINVAL, "cluster placement %s: ranks[%d] = %d "
                               "does not exist (the job has %d rank%s)", what,
                               i, pl->nodes[i], nranks,
                               nranks == 1 ? "" : "s");
            }
            p.ranks[i] = pl->nodes[i];
        }
        p.nranks_list = pl->nnodes;
    }
    *out = p;
    return 0;
}

static inline int slot_rank(const ph_dsm_placement *p, size_t slot)
{
    return p->ranks ? p->ranks[slot] : (int)slot;
}

static inline size_t spread(const ph_dsm_placement *p, int nranks)
{
    return p->ranks ? (size_t)p->nranks_list : (size_t)nranks;
}

int ph_dsm_home_of(const ph_dsm_placement *p, size_t page, size_t npages,
                int nranks)
{
    size_t n = spread(p, nranks);
    switch (p->policy) {
    case PH_POLICY_FIRST_TOUCH:
        return PH_DSM_HOME_UNCLAIMED;
    case PH_POLICY_CYCLIC:
        return slot_rank(p, (page / p->block_pages) % n);
    case PH_POLICY_BLOCK:
        if (npages == 0 || page >= npages)
            return slot_rank(p, n - 1);
        return slot_rank(p, (size_t)((unsigned __int128)page * n / npages));
    case PH_POLICY_RANDOM: {
        uint64_t h = ph_splitmix64(ph_splitmix64(p->seed) + (uint64_t)page);
        return slot_rank(p, (size_t)(h % n));
    }
    case PH_POLICY_SINGLE_NODE:
        return p->node;
    default:
        return PH_DSM_HOME_UNCLAIMED;
    }
}

size_t ph_dsm_home_run(const ph_dsm_placement *p, size_t first, size_t npages,
                    int nranks, int *home)
{
    if (first >= npages)
        return 0;
    size_t left = npages - first;
    size_t n = spread(p, nranks);
    *home = ph_dsm_home_of(p, first, npages, nranks);
    switch (p->policy) {
    case PH_POLICY_FIRST_TOUCH:
    case PH_POLICY_SINGLE_NODE:
        return left;
    case PH_POLICY_CYCLIC: {
        if (n == 1)
            return left;
        size_t k = p->block_pages;
        size_t end = (first / k + 1) * k;
        return (end < npages ? end : npages) - first;
    }
    case PH_POLICY_BLOCK: {
        unsigned __int128 idx = (unsigned __int128)first * n / npages;
        size_t end = (size_t)(((idx + 1) * npages + n - 1) / n);
        if (end > npages)
            end = npages;
        return end - first;
    }
    default: {
        size_t run = 1;
        while (first + run < npages &&
               ph_dsm_home_of(p, first + run, npages, nranks) == *home)
            run++;
        return run;
    }
    }
}

uint64_t ph_dsm_placement_hash(const ph_dsm_placement *p)
{
    uint64_t h = ph_splitmix64((uint64_t)p->policy + 1);
    h = ph_splitmix64(h ^ (uint64_t)p->block_pages);
    h = ph_splitmix64(h ^ (uint64_t)(int64_t)p->node);
    h = ph_splitmix64(h ^ p->seed);
    h = ph_splitmix64(h ^ (uint64_t)p->nranks_list);
    for (int i = 0; i < p->nranks_list; i++)
        h = ph_splitmix64(h ^ (uint64_t)p->ranks[i]);
    return h;
}

void ph_dsm_placement_describe(const ph_dsm_placement *p, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    int w = 0;
    switch (p->policy) {
    case PH_POLICY_FIRST_TOUCH:
        w = snprintf(buf, len, "first-touch");
        break;
    case PH_POLICY_CYCLIC:
        w = p->block_pages == 1 ? snprintf(buf, len, "round-robin")
                                : snprintf(buf, len, "cyclic:%zu",
                                           p->block_pages);
        break;
    case PH_POLICY_BLOCK:
        w = snprintf(buf, len, "block");
        break;
    case PH_POLICY_RANDOM:
        w = snprintf(buf, len, "random:%" PRIu64, p->seed);
        break;
    case PH_POLICY_SINGLE_NODE:
        w = snprintf(buf, len, "node:%d", p->node);
        break;
    default:
        w = snprintf(buf, len, "policy %d", (int)p->policy);
        break;
    }
    for (int i = 0; i < p->nranks_list && w > 0 && (size_t)w < len; i++) {
        int k = snprintf(buf + w, len - (size_t)w, "%s%d",
                         i ? "," : " ranks=", p->ranks[i]);
        if (k < 0)
            break;
        w += k;
    }
}
