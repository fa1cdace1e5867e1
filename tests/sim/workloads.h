/*
 * workloads.h -- synthetic OpenMP workloads for the simulated machine.
 *
 * Each workload is a model of how often the threads of each node touch
 * each page of one array per iteration (the synthetic source's
 * ph_synth_model_fn), shaped after the codes the UPMlib papers ran:
 *
 *   WL_OWNER      rows owned by threads: page p of P belongs to the thread
 *                 whose schedule(static) block holds it, on node
 *                 owner(p) = p * N / P; only the owner touches it.
 *   WL_LAPLACE    WL_OWNER plus halo exchange: the first and last page of
 *                 each node's strip are also read by the neighbouring
 *                 strip's node (a quarter as often).
 *   WL_BT         WL_OWNER in phase 0 (x/y solve); in phase 1 (z solve)
 *                 the owner of page p is (owner(p) + 1) % N: another node
 *                 for every page, as BT's z sweep along another dimension.
 *   WL_CG         a shared vector: every node reads every page equally
 *                 (times its cg_weight, when set: a node whose threads
 *                 ran more than the others in an interval).
 *   WL_MIGRATE    WL_OWNER, but from iteration `migrate_at` the threads
 *                 of node `from` run on node `to` (a thread migration):
 *                 their pages are touched from `to`.
 *   WL_PINGPONG   WL_OWNER, except pages [0, pp_pages) which two nodes
 *                 (0 and 1) take turns to dominate, iteration by
 *                 iteration (page-level false sharing).
 *
 * Counts are `acc` per page per iteration (the dominant node), so the
 * tests can reason about exact numbers.
 */
#ifndef PH_TESTS_WORKLOADS_H
#define PH_TESTS_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

typedef enum wl_kind {
    WL_OWNER, WL_LAPLACE, WL_BT, WL_CG, WL_MIGRATE, WL_PINGPONG
} wl_kind;

typedef struct workload {
    wl_kind kind;
    int nnodes;
    size_t npages;      /* pages of the array (range 0) */
    uint32_t acc;       /* accesses of the owner per page per iteration */
    int iteration;      /* set by the test before each iteration end */
    int phase;          /* WL_BT: 0 or 1 */
    int migrate_at, from, to;   /* WL_MIGRATE */
    size_t pp_pages;    /* WL_PINGPONG */
    uint32_t cg_weight[8]; /* WL_CG: node i's accesses times this (0: 1) */
} workload;

/* Owner node of page p under the block rule. */
int wl_owner(const workload *w, size_t p);
/* Owner in the current phase / iteration (the node the engine should
 * converge to); -1 when no single owner (WL_CG, ping-pong pages). */
int wl_target(const workload *w, size_t p);
/* The ph_synth_model_fn of every workload. */
int wl_model(void *model, size_t range, size_t page, uint32_t *acc,
             int nnodes);

#endif
