/*
 * reuse.h -- freed hot heap blocks kept mapped for the next request of the
 * same size (see reuse.c).  Every call is made with hot.c's gate held for
 * reading, so fork() (which takes the gate for writing) never finds the
 * cache's lock taken.
 */
#ifndef PH_PRELOAD_REUSE_H
#define PH_PRELOAD_REUSE_H

#include <stddef.h>

struct ph_hot;

/* How a block leaves the cache for good (its area unregistered, ph_free),
 * called outside the cache's lock. */
typedef void (*ph_reuse_release_fn)(void *base, struct ph_hot *area);

/* The machine's memory now: bytes available (MemAvailable) and in all.  0,
 * or -1 when it cannot be told (then no pressure is assumed). */
typedef int (*ph_reuse_memory_fn)(unsigned long long *avail_bytes,
                                  unsigned long long *total_bytes);

/* Memory pressure (pure): less than 1/16 of the memory available, or less
 * than 64 MiB. */
int ph_reuse_pressure(unsigned long long avail_bytes, unsigned long long total_bytes);

/* Limit in bytes (0: nothing is kept), the release function, and how the
 * memory is read (NULL: never) at most once every check_ns nanoseconds
 * (0: at every put); once, at the first hot request. */
void ph_reuse_configure(size_t limit_bytes, ph_reuse_release_fn release,
                        ph_reuse_memory_fn memory, unsigned long long check_ns);

/* Keep the ph_alloc block at base of `bytes` mapped bytes, still
 * registered as `area` (NULL: none).  1 when kept (the caller must not
 * free it), 0 when not (too large for the limit).  Older blocks are
 * released to make room. */
int ph_reuse_put(void *base, size_t bytes, struct ph_hot *area);

/* A kept block of exactly `bytes` mapped bytes (its contents are what
 * the program left there) and its area in *area, or NULL. */
void *ph_reuse_take(size_t bytes, struct ph_hot **area);

/* Counters: requests served from the cache, blocks released from it (for
 * room or under pressure), times memory pressure emptied it, and what it
 * holds now. */
void ph_reuse_stats(unsigned long long *hits, unsigned long long *evicted,
                    unsigned long long *pressured, size_t *held_blocks,
                    size_t *held_bytes);

#endif
