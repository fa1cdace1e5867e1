/*
 * home.h -- which rank is the home of each page of a shared allocation:
 * pure functions of the placement, the page and the number of ranks.
 *
 * The placement vocabulary is NUMA mode's (ph_placement_t, parsed by
 * ph_placement_parse), with "node" read as "rank":
 *   block          nranks contiguous chunks of equal size (+-1 page), in
 *                  rank order: page p of n goes to ranks[p * nr / n]
 *   cyclic:K       blocks of K pages round-robin: ranks[(p / K) % nr]
 *   round-robin    (= interleave) cyclic:1
 *   node:R         every page on rank R (the papers' worst case)
 *   random[:SEED]  ranks[splitmix64(splitmix64(seed) + p) % nr]
 *   first-touch    no formula: the first rank to touch a page claims it
 *                  (PH_DSM_HOME_UNCLAIMED until then, see the claim word)
 * These are NUMA mode's rules for the same texts (place/policy.h) with the
 * ranks in place of the nodes; tests/unit/test_cluster_pure.c checks that
 * the two agree page by page.  `nodes`/`nnodes` of the request, when set,
 * list the ranks to spread over (in order).  block-static and 2 MiB pages
 * have no cluster meaning and are refused.
 *
 * THE FIRST-TOUCH CLAIM WORD.  Every page has a 64-bit word at its
 * directory rank (page % nranks, slot page / nranks) in the control window.
 * Claiming is one MPI_Fetch_and_op(MPI_SUM, PH_DSM_CLAIM_TICKET): the rank
 * that reads zero tickets won and adds rank+1 to the low 32 bits with a
 * second MPI_Fetch_and_op; the others read the winner from the low bits
 * (polling for the moment between the winner's two operations).  Only
 * fetch-and-op is used: Open MPI 4.1's MPI_Compare_and_swap crashes on this
 * kind of machine.
 */
#ifndef PH_CLUSTER_HOME_H
#define PH_CLUSTER_HOME_H

#include "pagehome.h"

#include <stddef.h>
#include <stdint.h>

#define PH_DSM_HOME_UNCLAIMED (-2)   /* first-touch page nobody touched yet */

/* A validated cluster placement. */
typedef struct ph_dsm_placement {
    ph_policy_t policy;      /* FIRST_TOUCH, CYCLIC, BLOCK, RANDOM, SINGLE_NODE */
    size_t block_pages;      /* CYCLIC: K >= 1 (round-robin: 1) */
    int node;                /* SINGLE_NODE: the rank */
    uint64_t seed;           /* RANDOM */
    int nranks_list;         /* ranks to spread over: 0 = all, in order */
    int *ranks;              /* nranks_list entries (owned) or NULL */
} ph_dsm_placement;

/* Validate `pl` (NULL = the tunable cluster_placement) for a job of
 * nranks ranks into *out.  -1/EINVAL with a message naming the problem
 * ("cluster placement \"node:5\": rank 5 does not exist (4 ranks)"). */
int ph_dsm_placement_make(ph_dsm_placement *out, const ph_placement_t *pl,
                       int nranks);
void ph_dsm_placement_release(ph_dsm_placement *p);
/* A hash of the placement (same on every rank for the same request). */
uint64_t ph_dsm_placement_hash(const ph_dsm_placement *p);
/* "block", "cyclic:4", "node:0", "first-touch", "random:7" (+ " ranks=..") */
void ph_dsm_placement_describe(const ph_dsm_placement *p, char *buf, size_t len);

/* Home rank of page `page` of an allocation of `npages` pages;
 * PH_DSM_HOME_UNCLAIMED for first-touch. */
int ph_dsm_home_of(const ph_dsm_placement *p, size_t page, size_t npages,
                int nranks);
/* A run of pages with one home: pages [first, first + return) all have
 * *home.  >= 1 for first < npages.  Whole chunks for block, cyclic and
 * node; first-touch returns the rest of the allocation (UNCLAIMED). */
size_t ph_dsm_home_run(const ph_dsm_placement *p, size_t first, size_t npages,
                    int nranks, int *home);

/* First-touch directory. */
static inline int ph_dsm_dir_rank(size_t page, int nranks)
{
    return (int)(page % (size_t)nranks);
}
static inline size_t ph_dsm_dir_slot(size_t page, int nranks)
{
    return page / (size_t)nranks;
}
#define PH_DSM_CLAIM_TICKET ((int64_t)1 << 32)
/* Decode a claim word: tickets taken so far, and the home (-1 while the
 * winner has not published itself). */
static inline void ph_dsm_claim_decode(int64_t word, int64_t *tickets,
                                    int *home)
{
    *tickets = (int64_t)((uint64_t)word >> 32);
    uint32_t low = (uint32_t)((uint64_t)word & 0xffffffffu);
    *home = low ? (int)low - 1 : -1;
}

#endif
