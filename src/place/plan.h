/*
 * plan.h -- placement plans as pure functions: which node each page gets.
 *
 * Given a placement request and the machine's topology, the plan says which
 * node each page of a range belongs on, without touching memory.  alloc.c
 * and place.c then make it so through the OS table.  Keeping the decision
 * pure lets unit tests check every policy page by page, and the NUMA guest
 * tests compare the kernel's answer with it.
 *
 * THE RULES (page = index of a page of p->page_bytes from the range start,
 * n = p->nnodes):
 *   FIRST_TOUCH   -1 for every page: the OS decides at first touch.
 *   INTERLEAVE    nodes[page % n]: page by page, page 0 on nodes[0].
 *                 (Not the virtual page number: the kernel's MPOL_INTERLEAVE
 *                 index is vma->vm_pgoff-based, truncated to 32 bits before
 *                 the modulo on Linux <= 6.6 and not on later kernels, so
 *                 which node a given address gets cannot be predicted from
 *                 the address.  Within one mapping it advances one node per
 *                 page, though, so ph_alloc probes where the mapping's
 *                 first page lands and starts the block on the page the
 *                 kernel gives nodes[0]; see alloc.c.)
 *   CYCLIC        nodes[(page / block_pages) % n], relative to the range.
 *   BLOCK         nodes[page * n / npages]: n contiguous chunks of equal
 *                 size (+-1 page), in the order of nodes[].
 *   BLOCK_STATIC  the node whose threads own most bytes of the page under
 *                 schedule(static[, chunk]) (ties: the lower slot, i.e. the
 *                 node with the lower topology index).  Pages past the last
 *                 element follow the last element's thread.
 *   RANDOM        nodes[h % n], h = splitmix64(splitmix64(seed) + page):
 *                 reproducible and independent of the order of the calls.
 *   SINGLE_NODE   node.
 */
#ifndef PH_PLACE_PLAN_H
#define PH_PLACE_PLAN_H

#include "base/page.h"
#include "pagehome.h"
#include "topo/topo.h"

#include <stddef.h>
#include <stdint.h>

/* A validated request: nodes resolved to OS ids, defaults filled in. */
typedef struct ph_plan {
    ph_policy_t policy;
    size_t page_bytes;       /* 4096 or 2 MiB */
    /* OS node ids to spread over, in order.  SINGLE_NODE: {node}.
     * BLOCK_STATIC: the distinct nodes the threads run on, in ascending
     * topology index (the order ties are broken in). */
    int nnodes;
    int nodes[PH_MAX_NODES];
    int node;                /* SINGLE_NODE */
    size_t block_pages;      /* CYCLIC (>= 1) */
    uint64_t seed;           /* RANDOM (a request's 0 took the default) */
    /* BLOCK_STATIC */
    size_t elems, elem_bytes, chunk;
    int nthreads;
    ph_static_split_t split;
    int *thread_slot;        /* nthreads entries: index into nodes[] of
                              * thread t's node (owned), or NULL */
    size_t data_offset;      /* bytes from the range start to element 0
                              * (ph_place of an array that does not start
                              * on a page boundary) */
    int own_policy;          /* FIRST_TOUCH: bind the range LOCAL (os.h:
                              * the kernel's NUMA balancing leaves it to
                              * pagehome's engine), not DEFAULT */
} ph_plan;

/* What a request may leave out.  Plans read no tunable: the caller fills
 * this (src/api/ from the tunables placement, pagesize and seed, at each
 * call). */
#define PH_PLAN_TEXT_MAX 512
typedef struct ph_plan_defaults {
    char placement[PH_PLAN_TEXT_MAX]; /* the request a NULL request means
                                         (text, as ph_placement_parse) */
    size_t page_bytes;                /* for page_bytes 0 */
    uint64_t seed;                    /* for a random request's seed 0 */
    int own_policy;                   /* first touch as the range's own
                                         policy (ph_plan.own_policy) */
} ph_plan_defaults;

/* Validate pl against topo into *out (NULL pl = def->placement).
 * -1/EINVAL with a message naming the bad field (no "who:" prefix: callers
 * add theirs).  On success *out may own memory: ph_plan_release it. */
int ph_plan_make(ph_plan *out, const ph_placement_t *pl,
                 const ph_topology *topo, const ph_plan_defaults *def);
/* Same, for a range of range_bytes: a BLOCK_STATIC request with neither
 * elems nor elem_bytes set (as "block-static" parses) describes the range
 * as range_bytes one-byte elements. */
int ph_plan_make_range(ph_plan *out, const ph_placement_t *pl,
                       const ph_topology *topo, const ph_plan_defaults *def,
                       size_t range_bytes);
/* Deep copy (thread_slot).  0 or -1/ENOMEM. */
int ph_plan_copy(ph_plan *dst, const ph_plan *src);
void ph_plan_release(ph_plan *p);

/* Node for page `page` of a range of `npages` pages (of p->page_bytes)
 * starting at virtual address base; -1 for FIRST_TOUCH (no choice).  No
 * rule depends on base today; it is part of the signature so that one
 * can. */
int ph_plan_node_of(const ph_plan *p, uintptr_t base, size_t page,
                    size_t npages);
/* Fill nodes[0..npages) with ph_plan_node_of for every page. */
void ph_plan_nodes(const ph_plan *p, uintptr_t base, size_t npages,
                   int *nodes);
/* A run of pages with one node: pages [first, first + return) all go to
 * *node.  Returns >= 1 for first < npages (0 otherwise).  Runs are long
 * (whole chunks) for FIRST_TOUCH, SINGLE_NODE, BLOCK and CYCLIC; they are
 * not guaranteed to be maximal. */
size_t ph_plan_run(const ph_plan *p, uintptr_t base, size_t first,
                   size_t npages, int *node);
/* 1 when the OS can hold the plan lazily with few bind() calls: first
 * touch, block, single node, and interleave over nodes in ascending order
 * with 4 KiB pages (the kernel's mask is a set, walked in ascending order);
 * 0 when it must be placed eagerly.  Interleave is lazy only where the
 * caller chooses the start of the range (ph_alloc, see above): ph_place
 * places it eagerly. */
int ph_plan_is_lazy(const ph_plan *p);
/* Slot (index into p->nodes) of an OS node, or -1. */
int ph_plan_slot(const ph_plan *p, int node);

/* Text for reports: "cyclic:4@4K", "interleave@2M nodes=3,1" */
void ph_plan_describe(const ph_plan *p, char *buf, size_t len);

/* The text of the node set of a topology for messages: "0-3", "0,2,4-5". */
void ph_plan_nodes_text(const ph_topology *topo, char *buf, size_t len);

/* Requests (the public ph_placement_init, ph_placement_parse and
 * ph_policy_name are these): defaults, the text syntax, names. */
int ph_plan_request_init(ph_placement_t *pl, ph_policy_t policy);
int ph_plan_request_parse(ph_placement_t *pl, const char *text);
const char *ph_plan_policy_name(ph_policy_t policy);

#endif
