/*
 * range.h -- the arena's allocation table: which pages belong to which
 * collective allocation.  Pure and deterministic: every rank makes the
 * same calls in the same order (ph_cluster_alloc/free are collective and
 * checked), so every rank computes the same addresses without exchanging
 * them.  First fit over the gaps between allocations, in address order;
 * a freed range is a gap again (gaps coalesce by construction).
 */
#ifndef PH_CLUSTER_RANGE_H
#define PH_CLUSTER_RANGE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ph_dsm_range {
    size_t start, npages;    /* pages of the arena */
    void *data;              /* the caller's record */
} ph_dsm_range;

typedef struct ph_dsm_ranges {
    ph_dsm_range *r;            /* sorted by start, non-overlapping */
    size_t n, cap;
    size_t total_pages;      /* the arena */
    size_t used_pages;
} ph_dsm_ranges;

void ph_dsm_ranges_init(ph_dsm_ranges *t, size_t total_pages);
void ph_dsm_ranges_destroy(ph_dsm_ranges *t);
/* First fit of npages (>= 1): 0 and *start, or -1/ENOMEM (no gap large
 * enough: the message gives the largest gap) or -1/ENOMEM out of memory. */
int ph_dsm_ranges_add(ph_dsm_ranges *t, size_t npages, void *data, size_t *start);
/* The allocation starting exactly at page `start`: its index, or -1. */
long ph_dsm_ranges_find_start(const ph_dsm_ranges *t, size_t start);
/* The allocation containing page `page`: its index, or -1. */
long ph_dsm_ranges_find(const ph_dsm_ranges *t, size_t page);
/* Remove entry i. */
void ph_dsm_ranges_remove(ph_dsm_ranges *t, size_t i);
/* Largest gap in pages. */
size_t ph_dsm_ranges_largest_gap(const ph_dsm_ranges *t);

#endif
