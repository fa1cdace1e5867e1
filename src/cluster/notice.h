/*
 * notice.h -- write notices: the lock notice log and the barrier's merge.
 *
 * LOCKS.  A lock release must tell later acquirers (of any lock, by
 * transitivity) which pages the releaser wrote, so they drop stale copies.
 * The releases append to ONE global log at rank 0: a ring of `size` 64-bit
 * entries and a head counter.  A release reserves slots with
 * MPI_Fetch_and_op(SUM, count) on the head, writes its entries with
 * MPI_Accumulate(REPLACE) (element-wise atomic), flushes, and only then
 * releases the lock.  An acquire, once it holds the lock, reads the head
 * and the entries it has not seen (MPI_Get_accumulate(NO_OP)) and
 * invalidates those pages.  Everything released before the acquire in
 * happens-before order was appended before the head it reads, so
 * transitivity (A releases L1, B acquires L1 and releases L2, C acquires L2:
 * C sees A's writes) holds whatever the locks.
 *
 * An entry holds the lap of its slot (so a slot still holding an older lap
 * -- reserved by a release still in flight, hence not in our happens-before
 * -- is recognised), the writer rank (an acquirer skips its own) and the
 * page:  bits 63-56 lap tag (1..255; 0 = never written), 55-36 rank,
 * 35-0 page.  The reader advances its position only up to the first slot
 * not yet written, so such a slot is read again next time.  When more than
 * `size` entries were appended since the reader's position the ring has
 * wrapped and the reader invalidates every cached page instead
 * (conservative, correct).  A release of more than size/4 pages writes
 * one entry for PH_DSM_NOTICE_ALL instead (the acquirer invalidates every
 * cached page), so a release never reserves more than it writes.  A
 * barrier publishes the head it saw: entries before it are covered by the
 * barrier's own notices and are skipped.
 *
 * BARRIERS.  Every rank contributes the pages it wrote in the interval as
 * page ranges (MPI_Allgatherv of (start, length) pairs: a home band that
 * is written every interval is one pair, not thousands of pages);
 * ph_dsm_notice_merge turns the lists into sorted segments with their writer
 * count and, for single-writer pages, the writer -- what the whole-page
 * diff rule and the next issue's home migration need -- in time
 * proportional to the number of ranges.
 */
#ifndef PH_CLUSTER_NOTICE_H
#define PH_CLUSTER_NOTICE_H

#include <stddef.h>
#include <stdint.h>

#define PH_DSM_NOTICE_MAX_RANK ((1 << 20) - 1)
#define PH_DSM_NOTICE_MAX_PAGE (((uint64_t)1 << 36) - 2)
#define PH_DSM_NOTICE_ALL (((uint64_t)1 << 36) - 1)   /* "every page" */

/* The entry for slot index `slot` (absolute, not modulo size). */
uint64_t ph_dsm_notice_encode(uint64_t slot, uint64_t size, int rank,
                           uint64_t page);
/* 1 and *rank, *page when `entry` was written for absolute slot `slot`;
 * 0 when the slot holds another lap (or nothing yet). */
int ph_dsm_notice_decode(uint64_t entry, uint64_t slot, uint64_t size,
                      int *rank, uint64_t *page);

/* What an acquirer must read: the slots [from, head).  Returns 1 when the
 * ring wrapped (head - from > size): invalidate everything, position =
 * head.  Otherwise 0 and up to two ring segments (ring index, count). */
typedef struct ph_dsm_notice_span {
    uint64_t ring_index[2];
    uint64_t count[2];
    int nseg;
} ph_dsm_notice_span;
int ph_dsm_notice_plan(uint64_t from, uint64_t head, uint64_t size,
                    ph_dsm_notice_span *span);

/* Go through entries[0..head-from) (read for slots from..head-1): call
 * fn(arg, page) for each entry written for its slot by a rank other than
 * `me`.  Returns the new position: the first slot not yet written (so it
 * is read again next time), or head. */
uint64_t ph_dsm_notice_scan(const uint64_t *entries, uint64_t from,
                         uint64_t head, uint64_t size, int me,
                         void (*fn)(void *arg, uint64_t page), void *arg);

/* Write notices travel as page ranges: (start, length) pairs. */
/* The ranges of a sorted list of distinct pages into pairs[] (room for
 * 2 n); returns the number of ranges. */
size_t ph_dsm_notice_ranges(const uint64_t *pages, size_t n, uint64_t *pairs);

/* A run of pages with the same writers in an interval. */
typedef struct ph_dsm_seg {
    uint64_t start, len;
    int nwriters;        /* ranks that wrote these pages */
    int writer;          /* the single writer, or -1 */
} ph_dsm_seg;

/* Merge the per-rank range lists (rank r's ranges are pairs[2 displs[r]
 * .. 2 (displs[r] + counts[r])), disjoint within a rank) into sorted,
 * disjoint segments of constant writers: out[] needs room for twice the
 * total number of ranges.  A sweep over the range ends: O(R log R) for R
 * ranges, whatever the number of pages.  Returns the number of segments,
 * or -1/ENOMEM. */
long ph_dsm_notice_merge(const uint64_t *pairs, const int *counts,
                      const int *displs, int nranks, ph_dsm_seg *out);
/* The segment holding page, or NULL. */
const ph_dsm_seg *ph_dsm_seg_find(const ph_dsm_seg *segs, size_t n, uint64_t page);

#endif
