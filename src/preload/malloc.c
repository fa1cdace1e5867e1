/*
 * malloc.c -- transparent mode's malloc family: malloc, calloc, realloc,
 * free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc and
 * malloc_usable_size, exported by libpagehome_preload.so.
 *
 * DESIGN
 *   Each function asks hot.c for a hot block when the request is large
 *   enough (ph_hot_large: two loads), and otherwise, or when hot.c says
 *   no, calls the real function (realsym.c).  While the real functions
 *   are being resolved, this thread's requests come from the boot arena.
 *   free, realloc and malloc_usable_size look the pointer up in the table
 *   of hot blocks (blocks.c), which answers "not hot" for an empty table
 *   or a pointer that is not 4 KiB aligned (glibc's almost never are)
 *   without a lock: the cost for ordinary frees is two loads.
 *   ph_alloc_size() is not used for that: on a foreign pointer it takes
 *   ph_alloc's registry lock and records an error message.
 *
 * ALIGNMENT
 *   posix_memalign/memalign/aligned_alloc with a power-of-two alignment
 *   may be hot (aligned inside an over-allocated block); alignments that
 *   are not a power of two go to the real allocator.
 *
 * realloc
 *   Hot block: a size that fits and is at least half of it (and
 *   still >= threshold) stays in place (the block's size is updated);
 *   otherwise a new block (hot if >= threshold, with headroom for more
 *   growth: ph_hot_alloc_grow), copy of the program's data (its last size
 *   rounded up to pages, ph_hot_data_bytes), and the old block released
 *   (not kept for reuse: its size is not asked for again).  A small block grown to >=
 *   threshold becomes hot (new block, copy of the real usable size, real
 *   free).  The copy touches the new pages from the calling thread.
 *   A boot-arena block is copied out into a new one.
 *
 * Async-signal-safety is not claimed (like malloc itself).  free/realloc
 * of hot blocks keeps working at any time (ph_free works after
 * ph_finalize; the unregistration then fails harmlessly).
 */
#include "preload/hot.h"
#include "preload/realsym.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define PAGE PH_HOT_PAGE_BYTES

static int pow2(size_t a)
{
    return a && !(a & (a - 1));
}

static void *do_malloc(size_t size, const void *ra)
{
    if (!ph_real_ok())
        return ph_boot_alloc(size, 16);
    if (ph_hot_large(size)) {
        void *p = ph_hot_alloc(size, PAGE, PH_BLOCK_HEAP, 0, ra);
        if (p)
            return p;
        ph_hot_note_large(size);
    }
    return ph_real_malloc(size);
}

static void *do_memalign(size_t align, size_t size, const void *ra)
{
    if (!ph_real_ok())
        return ph_boot_alloc(size, align);
    if (ph_hot_large(size) && pow2(align)) {
        void *p = ph_hot_alloc(size, align < PAGE ? PAGE : align,
                               PH_BLOCK_HEAP, 0, ra);
        if (p)
            return p;
        ph_hot_note_large(size);
    }
    return ph_real_memalign(align, size);
}

EXPORT void *malloc(size_t size)
{
    return do_malloc(size, __builtin_return_address(0));
}

EXPORT void *calloc(size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    if (!ph_real_ok()) {
        void *p = ph_boot_alloc(bytes, 16);
        if (p)
            memset(p, 0, bytes);
        return p;
    }
    if (ph_hot_large(bytes)) {
        /* fresh ph_alloc memory, zeroed: no memset, no touch */
        void *p = ph_hot_alloc(bytes, PAGE, PH_BLOCK_HEAP, PH_HOT_ZEROED,
                               __builtin_return_address(0));
        if (p)
            return p;
        ph_hot_note_large(bytes);
    }
    return ph_real_calloc(n, size);
}

EXPORT void free(void *p)
{
    if (!p || ph_is_boot(p))
        return;
    ph_block b;
    if (ph_blocks_get(&ph_heap_blocks, p, &b, 1)) {
        ph_hot_release(&b, 1);
        return;
    }
    if (!ph_real_ok())
        return; /* cannot happen: nothing real was handed out yet */
    ph_real_free(p);
}

EXPORT void *realloc(void *p, size_t size)
{
    const void *ra = __builtin_return_address(0);
    if (!p)
        return do_malloc(size, ra);
    if (ph_is_boot(p)) {
        void *n = do_malloc(size ? size : 1, ra);
        if (n) {
            size_t old = ph_boot_size(p);
            memcpy(n, p, old < size ? old : size);
        }
        return n;
    }
    ph_block b;
    if (ph_blocks_get(&ph_heap_blocks, p, &b, 0)) {
        if (size == 0) {
            if (ph_blocks_get(&ph_heap_blocks, p, &b, 1))
                ph_hot_release(&b, 1);
            return NULL;
        }
        size_t t = atomic_load(&ph_hot_threshold);
        if (size <= b.usable && size >= t && size >= b.usable / 2) {
            ph_blocks_resize(&ph_heap_blocks, p, size); /* in place */
            return p;
        }
        void *n = size >= t ? ph_hot_alloc_grow(size, b.usable, ra) : NULL;
        if (!n)
            n = ph_real_malloc(size);
        if (!n)
            return NULL; /* errno from the real malloc; p untouched */
        size_t data = ph_hot_data_bytes(&b);
        memcpy(n, p, data < size ? data : size);
        if (ph_blocks_get(&ph_heap_blocks, p, &b, 1))
            ph_hot_release(&b, 0);
        return n;
    }
    if (!ph_real_ok())
        return NULL;
    if (ph_hot_large(size) && ph_real_usable) {
        void *n = ph_hot_alloc(size, PAGE, PH_BLOCK_HEAP, 0, ra);
        if (n) {
            size_t old = ph_real_usable(p);
            memcpy(n, p, old < size ? old : size);
            ph_real_free(p);
            return n;
        }
        ph_hot_note_large(size);
    }
    return ph_real_realloc(p, size);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    if (!pow2(align) || align % sizeof(void *) != 0)
        return EINVAL;
    if (!ph_real_ok()) {
        void *p = ph_boot_alloc(size, align);
        if (!p)
            return ENOMEM;
        *out = p;
        return 0;
    }
    if (ph_hot_large(size)) {
        void *p = ph_hot_alloc(size, align < PAGE ? PAGE : align,
                               PH_BLOCK_HEAP, 0, __builtin_return_address(0));
        if (p) {
            *out = p;
            return 0;
        }
        ph_hot_note_large(size);
    }
    return ph_real_posix_memalign(out, align, size);
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    const void *ra = __builtin_return_address(0);
    if (ph_real_ok() && ph_real_aligned_alloc && !(ph_hot_large(size) && pow2(align)))
        return ph_real_aligned_alloc(align, size);
    return do_memalign(align, size, ra);
}

EXPORT void *memalign(size_t align, size_t size)
{
    return do_memalign(align, size, __builtin_return_address(0));
}

EXPORT void *valloc(size_t size)
{
    const void *ra = __builtin_return_address(0);
    if (ph_real_ok() && ph_real_valloc && !ph_hot_large(size))
        return ph_real_valloc(size);
    return do_memalign(PAGE, size, ra);
}

EXPORT void *pvalloc(size_t size)
{
    const void *ra = __builtin_return_address(0);
    size_t r = size ? (size + PAGE - 1) & ~(PAGE - 1) : PAGE;
    if (r < size) {
        errno = ENOMEM;
        return NULL;
    }
    if (ph_real_ok() && ph_real_pvalloc && !ph_hot_large(r))
        return ph_real_pvalloc(size);
    return do_memalign(PAGE, r, ra);
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (ph_is_boot(p))
        return ph_boot_size(p);
    ph_block b;
    if (ph_blocks_get(&ph_heap_blocks, p, &b, 0))
        return ph_hot_data_bytes(&b);
    if (!ph_real_ok() || !ph_real_usable)
        return 0;
    return ph_real_usable(p);
}
