/*
 * realsym.h -- the real allocator and mapping functions under the
 * transparent mode's interposition, and the arena that serves requests
 * while they are being found (realsym.c).  Private to src/preload/.
 */
#ifndef PH_PRELOAD_REALSYM_H
#define PH_PRELOAD_REALSYM_H

#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

/* The next definitions after libpagehome_preload.so (dlsym RTLD_NEXT):
 * libc's, or another interposer's.  aligned_alloc, valloc, pvalloc and
 * malloc_usable_size may be NULL; the others are always found once
 * ph_real_ok() said 1 (the process is aborted with a message otherwise). */
extern void *(*ph_real_malloc)(size_t);
extern void *(*ph_real_calloc)(size_t, size_t);
extern void *(*ph_real_realloc)(void *, size_t);
extern void (*ph_real_free)(void *);
extern int (*ph_real_posix_memalign)(void **, size_t, size_t);
extern void *(*ph_real_aligned_alloc)(size_t, size_t);
extern void *(*ph_real_memalign)(size_t, size_t);
extern void *(*ph_real_valloc)(size_t);
extern void *(*ph_real_pvalloc)(size_t);
extern size_t (*ph_real_usable)(void *);
extern void *(*ph_real_mmap)(void *, size_t, int, int, int, off_t);
extern int (*ph_real_munmap)(void *, size_t);
extern void *(*ph_real_mremap)(void *, size_t, size_t, int, ...);

/* The next definition of name after this library (dlsym RTLD_NEXT),
 * looked up at the first call and kept in *cache; NULL when there is
 * none.  For the wrapped calls that are not allocators (fds.c, aio.c). */
void *ph_real_next(_Atomic(void *) *cache, const char *name);

/* 0 unresolved, 1 being resolved, 2 resolved. */
extern atomic_int ph_real_state;

/* Resolve the real functions if needed.  1 when they can be used; 0 when
 * this thread is the one resolving them (inside dlsym, which may
 * allocate): serve the request from the boot arena.  Other threads wait
 * until the resolution is over. */
int ph_real_resolve(void);

/* The common case inline: one acquire load. */
static inline int ph_real_ok(void)
{
    return atomic_load_explicit(&ph_real_state, memory_order_acquire) == 2 ||
           ph_real_resolve();
}

/* The boot arena: a static bump allocator (64 KiB) for what dlsym
 * allocates while the real functions are being found.  Its blocks are
 * never freed (free of one is a no-op); each keeps its size. */
void *ph_boot_alloc(size_t size, size_t align);
int ph_is_boot(const void *p);
size_t ph_boot_size(const void *p);

#endif
