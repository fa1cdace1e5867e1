/*
 * hot.h -- which of the program's allocations become hot blocks, and
 * serving and releasing them (hot.c).  Used by the malloc family
 * (malloc.c) and the mmap family (mmap.c).  Private to src/preload/.
 */
#ifndef PH_PRELOAD_HOT_H
#define PH_PRELOAD_HOT_H

#include "preload/blocks.h"

#include <stdatomic.h>
#include <stddef.h>

#define PH_HOT_PAGE_BYTES ((size_t)4096)

/* Raised while this thread is inside a call into pagehome made by the
 * interposition: anything that call allocates goes to the real functions. */
extern __thread int ph_heap_depth __attribute__((tls_model("initial-exec")));

/* Every live hot block. */
extern ph_blocks ph_heap_blocks;

/* The threshold in bytes, 0 until the configuration was read. */
extern atomic_size_t ph_hot_threshold;

/* Fast test: can a request of size bytes be hot at all?  (1 also while the
 * threshold is not known yet: then ph_hot_alloc decides.) */
static inline int ph_hot_large(size_t size)
{
    size_t t = atomic_load_explicit(&ph_hot_threshold, memory_order_relaxed);
    return !t || size >= t;
}

/* ph_hot_alloc flags: the memory must read as zeros (calloc; mmap blocks
 * always do), so it is never a reused block. */
enum { PH_HOT_ZEROED = 1 };

/* A hot block of size bytes aligned to align (a power of two, at least
 * 4 KiB) for a request made at ra (the program's call site), or NULL:
 * then the caller uses the real function.  kind: PH_BLOCK_HEAP/MMAP.
 * A heap block may be one freed earlier with the same size (reuse.c).
 * errno is preserved. */
void *ph_hot_alloc(size_t size, size_t align, int kind, unsigned flags, const void *ra);

/* realloc growing a hot block whose usable part was old_usable bytes: a
 * new heap block for size bytes with headroom for more growth (virtual:
 * untouched pages cost nothing), so that a buffer grown in small steps is
 * copied O(log n) times, not once a step.  Only under first-touch
 * placement (another plan depends on the block's size).  Or NULL. */
void *ph_hot_alloc_grow(size_t size, size_t old_usable, const void *ra);

/* Bytes of block b that may hold the program's data: its last size asked
 * for, rounded up to whole pages (what malloc_usable_size reports). */
static inline size_t ph_hot_data_bytes(const ph_block *b)
{
    size_t r = (b->size + PH_HOT_PAGE_BYTES - 1) & ~(PH_HOT_PAGE_BYTES - 1);
    return r < b->usable ? r : b->usable;
}

/* Stop watching and free a block already taken out of the table.  keep:
 * a heap block may be kept for reuse (free(); not realloc's old block,
 * whose size is not asked for again). */
void ph_hot_release(const ph_block *b, int keep);

/* Stop watching one area (a block partly unmapped). */
void ph_hot_unwatch(ph_hotarea_t *area);

/* A large request that was not served hot: counted. */
void ph_hot_note_large(size_t size);

/* fork() (fork.c): the gate taken for writing (no thread is inside a call
 * into pagehome), released in the parent, made afresh in the child. */
void ph_hot_fork_prepare(void);
void ph_hot_fork_parent(void);
void ph_hot_fork_child(void);

#endif
