/*
 * workloads.c -- the synthetic workloads of workloads.h.
 */
#include "workloads.h"

#include <string.h>

int wl_owner(const workload *w, size_t p)
{
    return (int)(p * (size_t)w->nnodes / w->npages);
}

static int migrated_node(const workload *w, int node)
{
    if (w->kind == WL_MIGRATE && w->iteration >= w->migrate_at &&
        node == w->from)
        return w->to;
    return node;
}

int wl_target(const workload *w, size_t p)
{
    int o = wl_owner(w, p);
    switch (w->kind) {
    case WL_CG:
        return -1;
    case WL_BT:
        return w->phase ? (o + 1) % w->nnodes : o;
    case WL_MIGRATE:
        return migrated_node(w, o);
    case WL_PINGPONG:
        return p < w->pp_pages ? -1 : o;
    default:
        return o;
    }
}

int wl_model(void *model, size_t range, size_t page, uint32_t *acc,
             int nnodes)
{
    const workload *w = model;
    if (range != 0 || page >= w->npages || nnodes != w->nnodes)
        return -1;
    memset(acc, 0, (size_t)nnodes * sizeof *acc);
    int o = wl_owner(w, page);
    switch (w->kind) {
    case WL_OWNER:
        acc[o] = w->acc;
        break;
    case WL_LAPLACE: {
        acc[o] = w->acc;
        size_t first = ((size_t)o * w->npages + (size_t)nnodes - 1) /
                       (size_t)nnodes;
        size_t next = ((size_t)(o + 1) * w->npages + (size_t)nnodes - 1) /
                      (size_t)nnodes;
        if (page == first && o > 0)
            acc[o - 1] += w->acc / 4;
        if (page + 1 == next && o + 1 < nnodes)
            acc[o + 1] += w->acc / 4;
        break;
    }
    case WL_BT:
        acc[w->phase ? (o + 1) % nnodes : o] = w->acc;
        break;
    case WL_CG:
        for (int i = 0; i < nnodes; i++)
            acc[i] = w->acc / (uint32_t)nnodes *
                     (i < 8 && w->cg_weight[i] ? w->cg_weight[i] : 1);
        break;
    case WL_MIGRATE:
        acc[migrated_node(w, o)] = w->acc;
        break;
    case WL_PINGPONG:
        if (page < w->pp_pages) {
            acc[w->iteration % 2] = w->acc;
            acc[1 - w->iteration % 2] = w->acc / 8;
        } else {
            acc[o] = w->acc;
        }
        break;
    }
    return 0;
}
