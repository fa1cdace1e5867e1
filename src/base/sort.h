/*
 * sort.h -- comparison and sorting shared by every layer.
 *
 * ph_cmp_int / ph_cmp_u64 / ph_cmp_double are qsort(3) comparators in
 * ascending order (doubles: NaN compares equal to everything, so callers
 * keep NaN out of what they sort).
 *
 * ph_sort_pairs_desc sorts n (key, index) pairs kept side by side in two
 * arrays into descending key order, ascending index among equal keys.
 * The key arrays are read sequentially (no comparator callback, no
 * indirection), which is what makes it fast on the millions of pages the
 * migration criteria rank.  ph_sort_key_double maps a double to a size_t
 * whose unsigned order is the double's numeric order, so a ranking of
 * doubles becomes a ranking of keys.  Both need a 64-bit size_t
 * (PH_SORT_PAIRS is defined when they exist).
 */
#ifndef PH_BASE_SORT_H
#define PH_BASE_SORT_H

#include <stddef.h>
#include <stdint.h>

int ph_cmp_int(const void *a, const void *b);
int ph_cmp_u64(const void *a, const void *b);
int ph_cmp_double(const void *a, const void *b);

#if SIZE_MAX >= UINT64_MAX
#define PH_SORT_PAIRS 1
/* Order-preserving key of a non-NaN double (-0.0 and +0.0 map to one key). */
size_t ph_sort_key_double(double r);
/* Sort the pairs (key[i], idx[i]), i < n: descending key, ascending idx
 * on equal keys.  Pairs must be distinct (distinct indexes make them so);
 * then the order is total and the result is unique.  Introsort: O(n log n)
 * worst case, no allocation, recursion depth O(log n). */
void ph_sort_pairs_desc(size_t *key, size_t *idx, size_t n);
#endif

#endif
