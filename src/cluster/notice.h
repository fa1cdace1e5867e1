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
 * one entry for PHC_NOTICE_ALL instead (the acquirer invalidates every
 * cached page), so a release never reserves more than it writes.  A
 * barrier publishes the head it saw: entries before it are covered by the
 * barrier's own notices and are skipped.
 *
 * BARRIERS.  Every rank contributes the pages it wrote in the interval
 * (MPI_Allgatherv of page lists: work proportional to the pages written,
 * not to the arena); phc_notice_merge turns the lists into one sorted
 * record per page with its writer count and, for single-writer pages, the
 * writer -- what the next issue's home migration and the whole-page diff
 * rule need.
 */
#ifndef PH_CLUSTER_NOTICE_H
#define PH_CLUSTER_NOTICE_H

#include <stddef.h>
#include <stdint.h>

#define PHC_NOTICE_MAX_RANK ((1 << 20) - 1)
#define PHC_NOTICE_MAX_PAGE (((uint64_t)1 << 36) - 2)
#define PHC_NOTICE_ALL (((uint64_t)1 << 36) - 1)   /* "every page" */

/* The entry for slot index `slot` (absolute, not modulo size). */
uint64_t phc_notice_encode(uint64_t slot, uint64_t size, int rank,
                           uint64_t page);
/* 1 and *rank, *page when `entry` was written for absolute slot `slot`;
 * 0 when the slot holds another lap (or nothing yet). */
int phc_notice_decode(uint64_t entry, uint64_t slot, uint64_t size,
                      int *rank, uint64_t *page);

/* What an acquirer must read: the slots [from, head).  Returns 1 when the
 * ring wrapped (head - from > size): invalidate everything, position =
 * head.  Otherwise 0 and up to two ring segments (ring index, count). */
typedef struct phc_notice_span {
    uint64_t ring_index[2];
    uint64_t count[2];
    int nseg;
} phc_notice_span;
int phc_notice_plan(uint64_t from, uint64_t head, uint64_t size,
                    phc_notice_span *span);

/* Go through entries[0..head-from) (read for slots from..head-1): call
 * fn(arg, page) for each entry written for its slot by a rank other than
 * `me`.  Returns the new position: the first slot not yet written (so it
 * is read again next time), or head. */
uint64_t phc_notice_scan(const uint64_t *entries, uint64_t from,
                         uint64_t head, uint64_t size, int me,
                         void (*fn)(void *arg, uint64_t page), void *arg);

/* One page written in an interval. */
typedef struct phc_written {
    uint64_t page;
    int nwriters;        /* ranks that wrote it */
    int writer;          /* the single writer, or -1 */
} phc_written;

/* Merge the per-rank lists (pages of rank r at pages[displs[r] ..
 * displs[r] + counts[r]), each without duplicates) into out[] (room for
 * the sum of counts), sorted by page, one record per page.  Returns the
 * number of records, or -1/ENOMEM. */
long phc_notice_merge(const uint64_t *pages, const int *counts,
                      const int *displs, int nranks, phc_written *out);

#endif
