/*
 * sorted.h -- the one binary search of pagehome's sorted range tables.
 *
 * The allocator's registry, the simulator's ranges and the engine's hot
 * areas each keep an array of pointers to non-overlapping ranges sorted
 * by start address.  The range containing an address is then the last one
 * whose start is <= it, if it reaches that far; PH_UPPER finds the index
 * after it.
 */
#ifndef PH_BASE_SORTED_H
#define PH_BASE_SORTED_H

#include <stddef.h>
#include <stdint.h>

/* Index of the first of the n pointers items[0..n) whose start (the
 * expression START applied to it as `it`) is > addr.  Items sorted by
 * start.  Usage: PH_UPPER(i, e->hots, e->nhots, it->base, addr). */
#define PH_UPPER(result, items, n, START, addr)                               \
    do {                                                                      \
        size_t ph_lo_ = 0, ph_hi_ = (n);                                      \
        while (ph_lo_ < ph_hi_) {                                             \
            size_t ph_mid_ = ph_lo_ + (ph_hi_ - ph_lo_) / 2;                  \
            const __typeof__(*(items)) it = (items)[ph_mid_];                 \
            if ((uintptr_t)(START) <= (uintptr_t)(addr))                      \
                ph_lo_ = ph_mid_ + 1;                                         \
            else                                                              \
                ph_hi_ = ph_mid_;                                             \
        }                                                                     \
        (result) = ph_lo_;                                                    \
    } while (0)

#endif
