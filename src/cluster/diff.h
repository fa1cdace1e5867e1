/*
 * diff.h -- what a rank changed in a page since it made the twin.
 *
 * Several ranks may write different bytes of one page in one interval
 * (false sharing, down to interleaved bytes of one 8-byte word); each
 * sends only the bytes it changed, so all of them survive at the home.
 * The runs are therefore byte-exact: the page and its twin are compared a
 * word (8 bytes) at a time, and inside a word that differs the run edges
 * are found byte by byte.  A byte written with the value it had is not
 * sent (no other rank may write it in a data-race-free program).
 *
 * Sending more than the changed bytes (the whole page, or the span from
 * the first to the last changed byte) is only safe when no other rank
 * wrote the page in the interval -- then the unchanged bytes equal the
 * home's.  The barrier knows that from the write notices
 * (ph_dsm_diff_send_whole decides between the whole page and the span); a
 * lock or selective release does not, so it sends the runs exactly.  The
 * runs of one page go in ONE MPI_Put with an hindexed datatype (the same
 * layout at both ends), never one put per run.
 */
#ifndef PH_CLUSTER_DIFF_H
#define PH_CLUSTER_DIFF_H

#include <stddef.h>
#include <stdint.h>

typedef struct ph_dsm_run {
    uint32_t off;   /* byte offset in the page */
    uint32_t len;   /* bytes */
} ph_dsm_run;

/* Compare page[0..page_bytes) with twin (page_bytes a multiple of 8, both
 * 8-byte aligned).  Writes at most max_runs runs in ascending order and
 * returns how many runs there are in all (which may exceed max_runs: then
 * only the first max_runs were written); *changed_bytes = bytes that
 * differ. */
size_t ph_dsm_diff(const unsigned char *page, const unsigned char *twin,
                size_t page_bytes, ph_dsm_run *runs, size_t max_runs,
                size_t *changed_bytes);

/* At a barrier: send the page whole (1) or as runs (0)?  Whole only when
 * this rank is the page's single writer of the interval and more than
 * whole_share of its bytes changed (or there are more runs than max_runs,
 * which the caller can then not describe). */
int ph_dsm_diff_send_whole(int single_writer, size_t changed_bytes,
                        size_t nruns, size_t max_runs, size_t page_bytes,
                        double whole_share);

/* Apply runs of src onto dst (what the home ends up with; tests). */
void ph_dsm_diff_apply(unsigned char *dst, const unsigned char *src,
                    const ph_dsm_run *runs, size_t nruns);

#endif
