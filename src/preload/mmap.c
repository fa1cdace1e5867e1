/*
 * mmap.c -- transparent mode's mmap family: mmap, mmap64, munmap and
 * mremap, exported by libpagehome_preload.so.
 *
 * DESIGN
 *   Only a private anonymous read-write mapping that the kernel may place
 *   anywhere -- mmap(NULL, len >= threshold, PROT_READ|PROT_WRITE,
 *   MAP_PRIVATE|MAP_ANONYMOUS [|MAP_NORESERVE], -1, 0) -- becomes a hot
 *   block (hot.c: the same rules as the malloc family); every other
 *   mapping goes to the real mmap (realsym.c), or to the system call while
 *   the real functions are being resolved.
 *
 * munmap
 *   munmap of exactly a hot block releases it.  A munmap that covers part
 *   of one stops watching it and punches the part: the pages are replaced
 *   by a PROT_NONE MAP_NORESERVE mapping, so that the memory is returned
 *   but the addresses stay reserved and ph_free can later unmap its whole
 *   mapping safely.  The block is released when punches have covered all
 *   of it (a program that unmaps the same pages twice keeps the
 *   reservation until exit).  The parts of a munmap range outside hot
 *   blocks go to the real munmap.  Calls made from inside pagehome, or
 *   while no hot block lives, go straight to the real munmap.
 *
 * mremap
 *   Of a whole hot block from its start: shrinking keeps it in place (the
 *   tail stays mapped, unused); growing with MREMAP_MAYMOVE moves it to a
 *   new block (copy); without MAYMOVE it fails with ENOMEM (as the kernel
 *   may).  Of a part of a hot block, or with MREMAP_FIXED /
 *   MREMAP_DONTUNMAP: the block stops being watched, the kernel does the
 *   remap exactly as without pagehome, and the addresses it vacates stay
 *   reserved (PROT_NONE) until the block is released, like a partial
 *   munmap; what moved is an ordinary mapping of the program's.  mremap
 *   of an ordinary mapping is passed through (it does not become hot when
 *   it grows).
 *
 * mprotect, pkey_mprotect
 *   The program's own protection wins (see note_protect below).
 *
 * madvise
 *   MADV_DONTNEED (and _LOCKED, and MADV_FREE) empties watched pages as
 *   it empties any (see discard below).
 *
 * LIMITS
 *   MAP_FIXED mappings placed over a hot block by the program are not
 *   detected.  A munmap range overlapping more than MAX_OVERLAP hot blocks
 *   handles the first MAX_OVERLAP of them.
 */
/* This file defines mmap and mmap64 as two symbols, as libc exports them.
 * A build with -D_FILE_OFFSET_BITS=64 (as distributions build) makes
 * glibc's headers redirect mmap to mmap64, and clang then refuses the two
 * definitions; off_t is 64 bits on a 64-bit ABI either way. */
#undef _FILE_OFFSET_BITS
#include "preload/hot.h"
#include "preload/preload.h"
#include "preload/realsym.h"

#include "sample/source.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define PAGE PH_HOT_PAGE_BYTES
#define MAX_OVERLAP 64

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd,
                      off_t off)
{
    if (ph_real_ok())
        return ph_real_mmap(addr, len, prot, flags, fd, off);
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int raw_munmap(void *addr, size_t len)
{
    if (ph_real_ok())
        return ph_real_munmap(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

static void *do_mmap(void *addr, size_t len, int prot, int flags, int fd,
                     off_t off, const void *ra)
{
    if (!addr && fd == -1 && off == 0 && prot == (PROT_READ | PROT_WRITE) &&
        (flags & ~MAP_NORESERVE) == (MAP_PRIVATE | MAP_ANONYMOUS) &&
        ph_hot_large(len) && ph_real_ok()) {
        void *p = ph_hot_alloc(len, PAGE, PH_BLOCK_MMAP, PH_HOT_ZEROED, ra);
        if (p)
            return p;
        ph_hot_note_large(len);
    }
    return raw_mmap(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off)
{
    return do_mmap(addr, len, prot, flags, fd, off,
                   __builtin_return_address(0));
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
                    off_t off)
{
    return do_mmap(addr, len, prot, flags, fd, off,
                   __builtin_return_address(0));
}

/* The program unmaps [lo, hi) of hot block b: punch it, stop watching the
 * block; release it when nothing of it is left. */
static int punch(const ph_block *b, uintptr_t lo, uintptr_t hi)
{
    if (lo == b->user && hi == b->user + b->usable) {
        ph_block t;
        if (ph_blocks_get(&ph_heap_blocks, (void *)b->user, &t, 1))
            ph_hot_release(&t, 0);
        return 0;
    }
    void *m = ph_real_mmap((void *)lo, hi - lo, PROT_NONE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
                               MAP_NORESERVE,
                           -1, 0);
    if (m == MAP_FAILED)
        return -1;
    ph_hotarea_t *area = NULL;
    int done = 0;
    ph_blocks_punch(&ph_heap_blocks, b->user, hi - lo, &area, &done);
    if (area)
        ph_hot_unwatch(area);
    if (done) {
        ph_block t;
        if (ph_blocks_get(&ph_heap_blocks, (void *)b->user, &t, 1)) {
            t.area = NULL;
            ph_hot_release(&t, 0);
        }
    }
    return 0;
}

EXPORT int munmap(void *addr, size_t len)
{
    const void *ra = __builtin_return_address(0);
    if (ph_heap_depth || ph_blocks_live(&ph_heap_blocks) == 0 ||
        ph_preload_is_internal(ra) || len == 0)
        return raw_munmap(addr, len);
    uintptr_t lo = (uintptr_t)addr;
    if (lo & (PAGE - 1)) {
        errno = EINVAL;
        return -1;
    }
    uintptr_t hi = (lo + len + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    if (hi < lo) {
        errno = EINVAL;
        return -1;
    }
    ph_block ov[MAX_OVERLAP];
    size_t n = ph_blocks_overlaps(&ph_heap_blocks, lo, hi, ov, MAX_OVERLAP);
    if (n == 0)
        return raw_munmap(addr, len);
    int rc = 0;
    uintptr_t at = lo;
    for (size_t i = 0; i < n; i++) {
        uintptr_t s = ov[i].user > lo ? ov[i].user : lo;
        uintptr_t e = ov[i].user + ov[i].usable < hi ? ov[i].user + ov[i].usable
                                                     : hi;
        if (s > at && raw_munmap((void *)at, s - at) != 0)
            rc = -1;
        if (punch(&ov[i], s, e) != 0)
            rc = -1;
        at = e;
    }
    if (at < hi && raw_munmap((void *)at, hi - at) != 0)
        rc = -1;
    return rc;
}

static void *real_mremap(void *old, size_t old_size, size_t new_size, int flags,
                         void *new_addr)
{
    if (!ph_real_ok())
        return (void *)syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
    return (flags & MREMAP_FIXED)
               ? ph_real_mremap(old, old_size, new_size, flags, new_addr)
               : ph_real_mremap(old, old_size, new_size, flags);
}

/* The kernel vacated [lo, hi) of hot block b (moved or shrunk away):
 * keep the addresses reserved (PROT_NONE, as punch() does) so that
 * ph_free can unmap the whole block later, and count them punched. */
static void vacated(const ph_block *b, uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo)
        return;
    void *m = ph_real_mmap((void *)lo, hi - lo, PROT_NONE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE |
                               MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return; /* something was mapped there meanwhile: not ours to keep */
    ph_hotarea_t *area = NULL;
    int done = 0;
    ph_blocks_punch(&ph_heap_blocks, b->user, hi - lo, &area, &done);
    if (area)
        ph_hot_unwatch(area);
    if (done) {
        ph_block t;
        if (ph_blocks_get(&ph_heap_blocks, (void *)b->user, &t, 1)) {
            t.area = NULL;
            ph_hot_release(&t, 0);
        }
    }
}

/* mremap of anything but a whole hot block from its start (a part of it,
 * MREMAP_FIXED, MREMAP_DONTUNMAP): the kernel does what it would do
 * without pagehome.  The block stops being watched first (its pages are
 * all open and in place); the addresses the kernel vacates stay
 * reserved until the block is freed; what moved elsewhere is an ordinary
 * mapping of the program's. */
static void *remap_part(const ph_block *b, void *old, size_t old_size, size_t new_size,
                        int flags, void *new_addr)
{
    ph_block cur;
    if (ph_blocks_find(&ph_heap_blocks, (void *)b->user, &cur, 0) && cur.area) {
        ph_hotarea_t *area = NULL;
        int done = 0;
        /* detach the area from the block (0 bytes punched) */
        ph_blocks_punch(&ph_heap_blocks, b->user, 0, &area, &done);
        if (area)
            ph_hot_unwatch(area);
    }
    void *r = real_mremap(old, old_size, new_size, flags, new_addr);
    if (r == MAP_FAILED)
        return r;
    uintptr_t lo = (uintptr_t)old, blo = b->user, bhi = b->user + b->usable;
    uintptr_t hi = lo + ((old_size + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
#ifdef MREMAP_DONTUNMAP
    int keeps = (flags & MREMAP_DONTUNMAP) != 0;
#else
    int keeps = 0;
#endif
    uintptr_t vlo, vhi;
    if ((uintptr_t)r != lo && !keeps) { /* moved: the whole old range is gone */
        vlo = lo;
        vhi = hi;
    } else if ((uintptr_t)r == lo && new_size < old_size) { /* shrunk in place */
        vlo = lo + ((new_size + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
        vhi = hi;
    } else {
        return r;
    }
    vacated(b, vlo > blo ? vlo : blo, vhi < bhi ? vhi : bhi);
    return r;
}

EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags,
                    ...)
{
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    const void *ra = __builtin_return_address(0);
    ph_block b;
    int hot = 0;
    if (!ph_heap_depth && ph_blocks_live(&ph_heap_blocks) &&
        !ph_preload_is_internal(ra)) {
        hot = ph_blocks_get(&ph_heap_blocks, old, &b, 0);
        if (!hot) {
            uintptr_t lo = (uintptr_t)old;
            ph_block ov[1];
            if (!(lo & (PAGE - 1)) &&
                ph_blocks_overlaps(&ph_heap_blocks, lo, lo + (old_size ? old_size : 1), ov, 1))
                return remap_part(&ov[0], old, old_size, new_size, flags, new_addr);
        }
    }
    if (!hot)
        return real_mremap(old, old_size, new_size, flags, new_addr);
    int special = (flags & MREMAP_FIXED) != 0;
#ifdef MREMAP_DONTUNMAP
    special |= (flags & MREMAP_DONTUNMAP) != 0;
#endif
    if (special || old_size < b.usable)
        return remap_part(&b, old, old_size, new_size, flags, new_addr);
    if (new_size == 0) {
        errno = EINVAL;
        return MAP_FAILED;
    }
    if (new_size <= b.usable)
        return old; /* shrink in place: the tail stays mapped, unused */
    if (!(flags & MREMAP_MAYMOVE)) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    void *n = ph_hot_alloc(new_size, PAGE, PH_BLOCK_MMAP, PH_HOT_ZEROED, ra);
    if (!n) {
        n = ph_real_mmap(NULL, new_size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (n == MAP_FAILED)
            return MAP_FAILED;
    }
    size_t keep = old_size < b.usable ? old_size : b.usable;
    memcpy(n, old, keep);
    if (ph_blocks_get(&ph_heap_blocks, old, &b, 1))
        ph_hot_release(&b, 0);
    return n;
}

/* ---- the program's own protections ---------------------------------------- */

/* mprotect / pkey_mprotect: inside hot areas the program's protection is
 * recorded first (the sampler never watches such pages, never widens
 * them, and their faults reach the program), watched runs there are
 * opened, then the kernel applies the program's protection.  pagehome's
 * own calls (the sampler's, from this library) go straight to the
 * kernel. */
static void note_protect(void *addr, size_t len, int prot, const void *ra)
{
    if (ph_preload_is_internal(ra) || !ph_preload_ready() || ph_heap_depth)
        return;
    int saved = errno;
    ph_sampler_note_protect(addr, len, prot);
    errno = saved;
}

EXPORT int mprotect(void *addr, size_t len, int prot)
{
    note_protect(addr, len, prot, __builtin_return_address(0));
    return (int)syscall(SYS_mprotect, addr, len, prot);
}

EXPORT int pkey_mprotect(void *addr, size_t len, int prot, int pkey)
{
    note_protect(addr, len, prot, __builtin_return_address(0));
    return (int)syscall(SYS_pkey_mprotect, addr, len, prot, pkey);
}

/* ---- the program's own discards ------------------------------------------- */

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24 /* Linux 5.18 */
#endif

/* madvise(MADV_DONTNEED) empties private anonymous pages: the next access
 * reads zeros.  A run the userfaultfd mechanism watches has its pages in
 * the sampler's stash, so the kernel would find nothing there to discard,
 * and the run, opened at its next access, would bring the old contents
 * back.  So the watched runs in the range are opened first (no sample),
 * under a query hold (no arm in between), and then the kernel discards
 * the pages in place.  MADV_FREE likewise, so that the memory can go.
 * Other advice, and pagehome's own calls, go straight to the kernel. */
EXPORT int madvise(void *addr, size_t len, int advice)
{
    int discard = advice == MADV_DONTNEED || advice == MADV_DONTNEED_LOCKED ||
                  advice == MADV_FREE;
    if (!discard || ph_preload_is_internal(__builtin_return_address(0)) ||
        !ph_preload_ready() || ph_heap_depth)
        return (int)syscall(SYS_madvise, addr, len, advice);
    int saved = errno;
    ph_sampler_query_begin();
    (void)ph_sampler_open_range(addr, len);
    errno = saved;
    int r = (int)syscall(SYS_madvise, addr, len, advice);
    saved = errno;
    ph_sampler_query_end();
    errno = saved;
    return r;
}
