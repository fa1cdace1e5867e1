/*
 * blocks.h -- the table of hot blocks: which pointers the transparent
 * mode's allocator handed out from ph_alloc, and what it must know to take
 * them back (blocks.c).  A data structure only: it calls nothing in
 * pagehome and no allocator except the storage functions it is given, so
 * that tests/unit/test_blocks.c drives it on its own.
 *
 * Keys are the addresses the program got (block.user), all 4 KiB aligned
 * (insert refuses others with EINVAL); that lets the lookups answer "not
 * hot" for an unaligned pointer, or while the table is empty, from two
 * loads without the lock.  One mutex guards the table; no call into
 * pagehome or the allocator is made while it is held, except the storage
 * functions during a rehash.
 */
#ifndef PH_PRELOAD_BLOCKS_H
#define PH_PRELOAD_BLOCKS_H

#include "pagehome.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PH_BLOCK_ALIGN_BYTES ((uintptr_t)4096)

enum { PH_BLOCK_HEAP = 0, PH_BLOCK_MMAP = 1 };

typedef struct ph_block {
    uintptr_t user;       /* what the program got (the key) */
    void *base;           /* what ph_alloc returned */
    size_t size;          /* bytes asked for (by the last realloc in place) */
    size_t usable;        /* whole 4 KiB pages from user (realloc headroom
                           * included) */
    size_t mapped;        /* the ph_alloc block's size, from base */
    size_t left;          /* mmap blocks: bytes not yet punched */
    ph_hotarea_t *area;   /* NULL: not (or no longer) watched */
    int kind;             /* PH_BLOCK_HEAP or PH_BLOCK_MMAP */
} ph_block;

/* Storage for the slots: zeroed memory of `bytes` (NULL when short), and
 * its release.  The preload library passes the real mmap/munmap. */
typedef void *(*ph_blocks_map_fn)(size_t bytes);
typedef void (*ph_blocks_unmap_fn)(void *mem, size_t bytes);

typedef struct ph_blocks {
    pthread_mutex_t lock;
    ph_block *slots;          /* open addressing; user 0 empty, 1 tombstone */
    size_t cap;               /* slots (a power of two, or 0) */
    size_t used;              /* live + tombstones */
    atomic_size_t live;       /* live blocks */
    atomic_uint_least64_t live_bytes; /* their usable bytes */
    ph_blocks_map_fn map;
    ph_blocks_unmap_fn unmap;
} ph_blocks;

/* A static initializer (the preload library's table exists before any
 * constructor runs). */
#define PH_BLOCKS_INIT(map_fn, unmap_fn)                                     \
    { .lock = PTHREAD_MUTEX_INITIALIZER, .slots = NULL, .cap = 0, .used = 0, \
      .live = 0, .live_bytes = 0, .map = (map_fn), .unmap = (unmap_fn) }

/* Runtime initialisation (tests); ph_blocks_destroy releases the slots. */
void ph_blocks_init(ph_blocks *t, ph_blocks_map_fn map, ph_blocks_unmap_fn unmap);
void ph_blocks_destroy(ph_blocks *t);

/* Record b (b->user 4 KiB aligned and not already present).  0, or -1 with
 * errno: EINVAL (unaligned or reserved key), ENOMEM (no storage to grow). */
int ph_blocks_insert(ph_blocks *t, const ph_block *b);

/* Copy p's entry into *out (take = 1: and remove it).  1 when p is the
 * key of a block, 0 otherwise.  ph_blocks_get answers 0 for an unaligned
 * p or an empty table inline, from two loads; ph_blocks_find takes the
 * lock. */
int ph_blocks_find(ph_blocks *t, const void *p, ph_block *out, int take);

static inline int ph_blocks_get(ph_blocks *t, const void *p, ph_block *out,
                                int take)
{
    if (atomic_load_explicit(&t->live, memory_order_relaxed) == 0 ||
        ((uintptr_t)p & (PH_BLOCK_ALIGN_BYTES - 1)) != 0)
        return 0;
    return ph_blocks_find(t, p, out, take);
}

/* realloc in place: the block keyed p now holds `size` bytes of the
 * program's.  1 when p is a block, 0 otherwise. */
int ph_blocks_resize(ph_blocks *t, const void *p, size_t size);

/* Up to max blocks that overlap [lo, hi), sorted by address; the count. */
size_t ph_blocks_overlaps(ph_blocks *t, uintptr_t lo, uintptr_t hi,
                          ph_block *out, size_t max);

/* `bytes` of the block keyed `user` are gone (munmap of a part): stop
 * watching it (its area is moved to *area, NULL if it had none) and take
 * the bytes off `left`.  1 when the block exists (*done = 1 when nothing
 * of it is left), 0 when it does not. */
int ph_blocks_punch(ph_blocks *t, uintptr_t user, size_t bytes,
                    ph_hotarea_t **area, int *done);

/* Live blocks and their usable bytes (relaxed: counters). */
size_t ph_blocks_live(ph_blocks *t);
uint64_t ph_blocks_live_bytes(ph_blocks *t);

/* fork(): lock before, unlock after in the parent; the child (one thread,
 * another TID) starts the lock afresh. */
void ph_blocks_lock(ph_blocks *t);
void ph_blocks_unlock(ph_blocks *t);
void ph_blocks_reset_lock(ph_blocks *t);

#endif
