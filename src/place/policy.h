/*
 * policy.h -- placement policies as pure functions.
 *
 * Given a placement request and the machine's topology, ph_policy_plan()
 * says which node each page of a range belongs on, without touching
 * memory.  alloc.c and place.c then make it so through the OS table.
 * Keeping the decision pure lets unit tests check every policy page by
 * page, and the NUMA guest tests compare the kernel's answer with it.
 */
#ifndef PH_PLACE_POLICY_H
#define PH_PLACE_POLICY_H

#include "pagehome.h"
#include "topo/topo.h"

#include <stddef.h>
#include <stdint.h>

/* A validated request: nodes resolved to OS ids, defaults filled in. */
typedef struct ph_plan {
    ph_policy_t policy;
    size_t page_bytes;       /* 4096 or 2 MiB */
    int nnodes;
    int nodes[PH_MAX_NODES]; /* OS node ids to spread over, in order */
    int node;                /* SINGLE_NODE */
    size_t block_pages;
    uint64_t seed;
    size_t elems, elem_bytes, chunk;
    int nthreads;
    ph_static_split_t split;
    int *thread_node;        /* nthreads entries (owned copy) or NULL */
} ph_plan;

/* Validate pl against topo into *out (NULL pl = the tunable default).
 * -1/EINVAL with a message naming the bad field. */
int ph_plan_make(ph_plan *out, const ph_placement_t *pl,
                 const ph_topology *topo);
void ph_plan_release(ph_plan *p);

/* Node for page `page` of a range of `npages` pages (of p->page_bytes)
 * starting at virtual address base; -1 for FIRST_TOUCH (no choice). */
int ph_plan_node_of(const ph_plan *p, uintptr_t base, size_t page,
                    size_t npages);
/* Fill nodes[0..npages) with ph_plan_node_of for every page. */
void ph_plan_nodes(const ph_plan *p, uintptr_t base, size_t npages,
                   int *nodes);
/* 1 when the OS can hold the plan lazily with few bind() calls (first
 * touch, interleave, block, single node), 0 when it must be placed eagerly. */
int ph_plan_is_lazy(const ph_plan *p);

/* Text for reports: "cyclic:4@4K" */
void ph_plan_describe(const ph_plan *p, char *buf, size_t len);

#endif
