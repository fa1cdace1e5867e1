/*
 * schedule.h -- work sharing over the global team: pure functions.
 *
 * STATIC.  The iterations [0, n) split as OpenMP's schedule(static[,chunk])
 * would split them over one team of T = nranks x team threads, thread
 * t = rank x team + omp_get_thread_num().  Without a chunk: libgomp's
 * balanced rule (q = n / T, r = n % T; the first r threads get q + 1
 * iterations, in thread order), one contiguous share per thread.  With a
 * chunk k: chunks of k iterations dealt round-robin, thread t getting
 * chunks t, t + T, t + 2T, ... (the same for libgomp and libomp): the
 * first chunk, then ph_dsm_static_next for the following ones.
 *
 * AFFINITY (Omni's schedule(affinity)).  The elements of an array whose
 * first byte lies in a page homed on this rank, as runs of element
 * indices; this rank's team splits their total count with the balanced
 * rule, so a thread's share is one contiguous piece of the concatenated
 * runs, which may cross runs: ph_dsm_affinity_share gives the piece that
 * starts at or after a position.
 */
#ifndef PH_CLUSTER_SCHEDULE_H
#define PH_CLUSTER_SCHEDULE_H

#include <stddef.h>

/* Thread t's (0 <= t < T) first share of [0, n): 0, with *begin == *end
 * when it gets nothing; -1/EINVAL for bad arguments. */
int ph_dsm_static_first(long n, long chunk, long T, long t, long *begin,
                     long *end);
/* The chunk after the one starting at *begin: 0, or -1/ENOENT when there
 * is none (always with chunk 0). */
int ph_dsm_static_next(long n, long chunk, long T, long t, long *begin,
                    long *end);

typedef struct ph_dsm_erun {
    size_t begin, end;     /* element indices [begin, end) */
} ph_dsm_erun;

/* The piece of thread tid's (of team) share of the runs' elements that
 * starts at element index >= from: 0 and [*begin, *end), or -1/ENOENT when
 * the share has nothing at or after `from`. */
int ph_dsm_affinity_share(const ph_dsm_erun *runs, size_t nruns, int team,
                       int tid, size_t from, size_t *begin, size_t *end);

#endif
