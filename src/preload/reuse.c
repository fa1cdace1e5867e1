/*
 * reuse.c -- freed hot heap blocks kept for reuse.
 *
 * WHY
 *   A hot block is fresh ph_alloc memory, and free() gave it back with
 *   munmap: a program that allocates, fills and frees a large buffer in a
 *   loop paid for every one of its pages faulting in again each time
 *   (20000 rounds of a 2 MiB buffer: 0.75 s plain, 43 s under pagehome).
 *   malloc keeps freed memory for the next request; this cache does the
 *   same for hot blocks.
 *
 * WHAT IS KEPT
 *   Heap blocks only (calloc and mmap requests need zeroed memory and
 *   always get fresh blocks), by their mapped size (the ph_alloc size: a
 *   page multiple).  A request takes a block of exactly its size, so the
 *   block's placement plan -- made for that size by the same `placement`
 *   tunable -- is the one a fresh block would get; its pages keep the
 *   homes they have (as a reused malloc chunk keeps its pages).  A kept
 *   block stays registered as the hot area it was (registering a block
 *   costs a query of every page's home, more than the rest of a round of
 *   the churn), but idle (ph_api_area_idle: out of the engine's watch,
 *   none of its evidence -- it sees no access); reused, it is watched
 *   again from where it was, as a newly registered area.
 *
 * LIMIT
 *   At most `heap_reuse` bytes and PH_REUSE_SLOTS blocks; a block larger
 *   than the limit is never kept.  Putting a block over the limit
 *   releases the oldest ones (FIFO: area unregistered, ph_free), outside
 *   the lock.
 *
 * MEMORY PRESSURE
 *   Kept blocks are resident memory nobody uses.  A put reads the
 *   machine's available memory (/proc/meminfo's MemAvailable, through the
 *   function given; at most every check_ns, 100 ms in transparent mode)
 *   and, under pressure (ph_reuse_pressure: less than 1/16 of the memory,
 *   or 64 MiB, available), releases every kept block and keeps none until
 *   a later reading finds the pressure gone.  (madvise(MADV_FREE) would
 *   let the kernel take the pages itself, but costs about 100 us per
 *   2 MiB block here, four times a whole churn round.)
 *
 * COST
 *   put and take: O(PH_REUSE_SLOTS) under one mutex, against a ph_alloc +
 *   area registration and a fault per page saved.
 */
#include "preload/reuse.h"

#include "base/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define PH_REUSE_SLOTS 64

typedef struct kept {
    void *base;
    size_t bytes;
    struct ph_hot *area;
} kept;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kept slots[PH_REUSE_SLOTS]; /* oldest first */
static size_t nkept, kept_bytes, limit;
static ph_reuse_release_fn release_fn;
static ph_reuse_memory_fn memory_fn;
static unsigned long long check_every_ns, checked_ns;
static int pressed, checked_once;
static atomic_ullong hits, evicted, pressured;

int ph_reuse_pressure(unsigned long long avail_bytes, unsigned long long total_bytes)
{
    return avail_bytes < total_bytes / 16 || avail_bytes < (64ull << 20);
}

void ph_reuse_configure(size_t limit_bytes, ph_reuse_release_fn release,
                        ph_reuse_memory_fn memory, unsigned long long check_ns)
{
    pthread_mutex_lock(&lock);
    limit = limit_bytes;
    release_fn = release;
    memory_fn = memory;
    check_every_ns = check_ns;
    checked_once = 0;
    pressed = 0;
    pthread_mutex_unlock(&lock);
}

/* Under the lock: is memory short now?  Read at most every check_ns. */
static int under_pressure(void)
{
    if (!memory_fn)
        return 0;
    unsigned long long now = ph_now_ns();
    if (checked_once && now - checked_ns < check_every_ns)
        return pressed;
    checked_once = 1;
    checked_ns = now;
    unsigned long long avail, total;
    pressed = memory_fn(&avail, &total) == 0 && ph_reuse_pressure(avail, total);
    return pressed;
}

int ph_reuse_put(void *base, size_t bytes, struct ph_hot *area)
{
    kept out[PH_REUSE_SLOTS];
    size_t nout = 0;
    pthread_mutex_lock(&lock);
    if (!release_fn || bytes > limit) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    int press = under_pressure();
    size_t drop = 0;
    while (drop < nkept &&
           (press || nkept - drop == PH_REUSE_SLOTS || kept_bytes + bytes > limit)) {
        out[nout++] = slots[drop];
        kept_bytes -= slots[drop].bytes;
        drop++;
    }
    memmove(slots, slots + drop, (nkept - drop) * sizeof *slots);
    nkept -= drop;
    if (!press) {
        slots[nkept++] = (kept){base, bytes, area};
        kept_bytes += bytes;
    }
    ph_reuse_release_fn rel = release_fn;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < nout; i++)
        rel(out[i].base, out[i].area);
    atomic_fetch_add(&evicted, nout);
    if (press)
        atomic_fetch_add(&pressured, 1);
    return !press;
}

void *ph_reuse_take(size_t bytes, struct ph_hot **area)
{
    void *base = NULL;
    *area = NULL;
    pthread_mutex_lock(&lock);
    /* the newest first: its pages are the likeliest still in cache */
    for (size_t i = nkept; i-- > 0;) {
        if (slots[i].bytes != bytes)
            continue;
        base = slots[i].base;
        *area = slots[i].area;
        kept_bytes -= bytes;
        memmove(slots + i, slots + i + 1, (nkept - i - 1) * sizeof *slots);
        nkept--;
        break;
    }
    pthread_mutex_unlock(&lock);
    if (base)
        atomic_fetch_add(&hits, 1);
    return base;
}

void ph_reuse_stats(unsigned long long *h, unsigned long long *e, unsigned long long *p,
                    size_t *held_blocks, size_t *held_bytes)
{
    pthread_mutex_lock(&lock);
    if (held_blocks)
        *held_blocks = nkept;
    if (held_bytes)
        *held_bytes = kept_bytes;
    pthread_mutex_unlock(&lock);
    if (h)
        *h = atomic_load(&hits);
    if (e)
        *e = atomic_load(&evicted);
    if (p)
        *p = atomic_load(&pressured);
}
