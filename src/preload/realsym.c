/*
 * realsym.c -- the real functions under the transparent mode's
 * interposition, and the boot arena (see realsym.h).
 *
 * DESIGN
 *   libpagehome_preload.so defines malloc, free, mmap, ... (malloc.c,
 *   mmap.c); what it passes on goes to the next definition in the
 *   loader's search order, found with dlsym(RTLD_NEXT, name) -- libc's, or
 *   that of another interposer loaded after this library (a leak checker,
 *   a second LD_PRELOAD allocator), which therefore keeps working.
 *
 *   All thirteen symbols are resolved together, once, by the first
 *   request of the process (usually before main, from the loader's own
 *   start-up allocations or from a constructor).  dlsym itself may call
 *   malloc/calloc (its error buffer, the TLS of a new thread), which
 *   comes straight back here: the resolving thread is marked
 *   (thread-local), and its requests are served from a static 64 KiB bump
 *   arena.  Arena blocks are never reused: free of one is a no-op,
 *   realloc copies out of it (malloc.c), malloc_usable_size reads the size
 *   kept in the 16 bytes before each block.  Other threads wait for the
 *   resolution to end (sched_yield), which takes microseconds and happens
 *   once.
 *
 *   A missing malloc, calloc, realloc, free, posix_memalign, memalign,
 *   mmap, munmap or mremap cannot be worked around: the process is
 *   aborted with a message on stderr (write(2): stdio may allocate).
 *   aligned_alloc, valloc, pvalloc and malloc_usable_size may be absent
 *   (another C library); malloc.c falls back to memalign or answers 0.
 */
#include "preload/realsym.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TLS_IE __thread __attribute__((tls_model("initial-exec")))

void *(*ph_real_malloc)(size_t);
void *(*ph_real_calloc)(size_t, size_t);
void *(*ph_real_realloc)(void *, size_t);
void (*ph_real_free)(void *);
int (*ph_real_posix_memalign)(void **, size_t, size_t);
void *(*ph_real_aligned_alloc)(size_t, size_t);
void *(*ph_real_memalign)(size_t, size_t);
void *(*ph_real_valloc)(size_t);
void *(*ph_real_pvalloc)(size_t);
size_t (*ph_real_usable)(void *);
void *(*ph_real_mmap)(void *, size_t, int, int, int, off_t);
int (*ph_real_munmap)(void *, size_t);
void *(*ph_real_mremap)(void *, size_t, size_t, int, ...);

atomic_int ph_real_state;
static TLS_IE int resolving; /* this thread is inside dlsym */

static void die(const char *msg)
{
    ssize_t r = write(2, msg, strlen(msg));
    (void)r;
    abort();
}

static void *next_sym(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

int ph_real_resolve(void)
{
    if (atomic_load_explicit(&ph_real_state, memory_order_acquire) == 2)
        return 1;
    if (resolving)
        return 0;
    int expect = 0;
    if (atomic_compare_exchange_strong(&ph_real_state, &expect, 1)) {
        resolving = 1;
        *(void **)&ph_real_malloc = next_sym("malloc");
        *(void **)&ph_real_calloc = next_sym("calloc");
        *(void **)&ph_real_realloc = next_sym("realloc");
        *(void **)&ph_real_free = next_sym("free");
        *(void **)&ph_real_posix_memalign = next_sym("posix_memalign");
        *(void **)&ph_real_aligned_alloc = next_sym("aligned_alloc");
        *(void **)&ph_real_memalign = next_sym("memalign");
        *(void **)&ph_real_valloc = next_sym("valloc");
        *(void **)&ph_real_pvalloc = next_sym("pvalloc");
        *(void **)&ph_real_usable = next_sym("malloc_usable_size");
        *(void **)&ph_real_mmap = next_sym("mmap");
        *(void **)&ph_real_munmap = next_sym("munmap");
        *(void **)&ph_real_mremap = next_sym("mremap");
        resolving = 0;
        if (!ph_real_malloc || !ph_real_calloc || !ph_real_realloc ||
            !ph_real_free || !ph_real_posix_memalign || !ph_real_memalign ||
            !ph_real_mmap || !ph_real_munmap || !ph_real_mremap)
            die("pagehome: transparent mode: cannot find the real malloc "
                "or mmap (dlsym RTLD_NEXT)\n");
        atomic_store_explicit(&ph_real_state, 2, memory_order_release);
        return 1;
    }
    while (atomic_load_explicit(&ph_real_state, memory_order_acquire) != 2)
        sched_yield();
    return 1;
}

/* ---- the boot arena ------------------------------------------------- */

#define BOOT_BYTES ((size_t)64 << 10)
static _Alignas(64) unsigned char boot_arena[BOOT_BYTES];
static atomic_size_t boot_used;

int ph_is_boot(const void *p)
{
    return (const unsigned char *)p >= boot_arena &&
           (const unsigned char *)p < boot_arena + BOOT_BYTES;
}

/* A 16-byte header holding the size before each block. */
void *ph_boot_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    size_t cur = atomic_load(&boot_used);
    for (;;) {
        size_t start = (cur + 16 + align - 1) & ~(align - 1);
        if (size > BOOT_BYTES || start > BOOT_BYTES - size) {
            errno = ENOMEM;
            return NULL;
        }
        if (atomic_compare_exchange_weak(&boot_used, &cur, start + size)) {
            memcpy(boot_arena + start - 16, &size, sizeof size);
            return boot_arena + start;
        }
    }
}

size_t ph_boot_size(const void *p)
{
    size_t s;
    memcpy(&s, (const unsigned char *)p - 16, sizeof s);
    return s;
}

void *ph_real_next(_Atomic(void *) *cache, const char *name)
{
    void *f = atomic_load_explicit(cache, memory_order_acquire);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(cache, f, memory_order_release);
    }
    return f;
}
