/*
 * omp_alloc.c -- transparent mode's OpenMP 5 allocators: omp_alloc,
 * omp_aligned_alloc, omp_calloc, omp_aligned_calloc, omp_realloc and
 * omp_free, exported by libpagehome_preload.so.
 *
 * WHY.  A program that allocates its arrays with omp_alloc gets them from
 * the OpenMP runtime, which calls malloc itself; hot.c leaves the
 * runtime's own requests alone (its thread pools and task queues are not
 * the program's data, and it may make them holding its locks), so those
 * arrays were never hot areas: neither placed nor migrated.
 *
 * DESIGN.  A large request (ph_hot_large) on the default memory space's
 * predefined allocator -- omp_default_mem_alloc, or omp_null_allocator
 * while the default-allocator ICV is omp_default_mem_alloc -- is served
 * by a hot block, as malloc's are (4 KiB aligned or more, which meets any
 * alignment the allocator asks for); everything else goes to the
 * runtime's function of the same name (the next definition after this
 * library: libomp, GNU libgomp or pagehome's libgomp.so.1), looked up at
 * its first use.  omp_free and omp_realloc release a hot block whatever
 * allocator they are given; a block of the runtime's is grown by the
 * runtime (its size is not known here, so its data could not be copied).
 */
#include "preload/hot.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define PAGE PH_HOT_PAGE_BYTES

/* The routines, with an allocator handle as the ABI passes it (each
 * compiler's omp.h has its own type for it). */
void *omp_alloc(size_t size, uintptr_t a);
void *omp_aligned_alloc(size_t align, size_t size, uintptr_t a);
void *omp_calloc(size_t n, size_t size, uintptr_t a);
void *omp_aligned_calloc(size_t align, size_t n, size_t size, uintptr_t a);
void omp_free(void *p, uintptr_t a);
void *omp_realloc(void *p, size_t size, uintptr_t a, uintptr_t free_a);

/* OpenMP's predefined handles (omp.h of gcc and of LLVM alike). */
enum { OMP_NULL_ALLOCATOR = 0, OMP_DEFAULT_MEM_ALLOC = 1 };

/* The runtime's definition of NAME, looked up once. */
#define REAL(var, name)                                                          \
    static void *var##_p;                                                        \
    void *var = __atomic_load_n(&var##_p, __ATOMIC_ACQUIRE);                     \
    if (!var) {                                                                  \
        var = real_sym(name);                                                    \
        __atomic_store_n(&var##_p, var, __ATOMIC_RELEASE);                       \
    }

static void *real_sym(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        /* a program that calls it is linked with a runtime that has it */
        static const char msg[] = "pagehome: the OpenMP runtime lacks an allocator routine\n";
        (void)!write(2, msg, sizeof msg - 1);
        abort();
    }
    return f;
}

/* Whether a request on allocator a may be served by a hot block. */
static int ours(uintptr_t a)
{
    if (a == OMP_DEFAULT_MEM_ALLOC)
        return 1;
    if (a != OMP_NULL_ALLOCATOR)
        return 0;
    REAL(get_default, "omp_get_default_allocator")
    return ((uintptr_t(*)(void))get_default)() == OMP_DEFAULT_MEM_ALLOC;
}

/* A hot block for size bytes at alignment align on allocator a, or NULL
 * (not ours, not large, or hot.c declined). */
static void *hot(size_t size, size_t align, uintptr_t a, unsigned flags, const void *ra)
{
    if (!ph_hot_large(size) || (align & (align - 1)) || !ours(a))
        return NULL;
    void *p = ph_hot_alloc(size, align > PAGE ? align : PAGE, PH_BLOCK_HEAP, flags, ra);
    if (!p)
        ph_hot_note_large(size);
    return p;
}

EXPORT void *omp_alloc(size_t size, uintptr_t a)
{
    void *p = hot(size, PAGE, a, 0, __builtin_return_address(0));
    if (p)
        return p;
    REAL(f, "omp_alloc")
    return ((void *(*)(size_t, uintptr_t))f)(size, a);
}

EXPORT void *omp_aligned_alloc(size_t align, size_t size, uintptr_t a)
{
    void *p = hot(size, align, a, 0, __builtin_return_address(0));
    if (p)
        return p;
    REAL(f, "omp_aligned_alloc")
    return ((void *(*)(size_t, size_t, uintptr_t))f)(align, size, a);
}

/* hot() for n elements of size bytes, zeroed (fresh hot memory is). */
static void *hot_zeroed(size_t n, size_t size, size_t align, uintptr_t a, const void *ra)
{
    size_t bytes;
    return __builtin_mul_overflow(n, size, &bytes) ? NULL
                                                   : hot(bytes, align, a, PH_HOT_ZEROED, ra);
}

EXPORT void *omp_calloc(size_t n, size_t size, uintptr_t a)
{
    void *p = hot_zeroed(n, size, PAGE, a, __builtin_return_address(0));
    if (p)
        return p;
    REAL(f, "omp_calloc")
    return ((void *(*)(size_t, size_t, uintptr_t))f)(n, size, a);
}

EXPORT void *omp_aligned_calloc(size_t align, size_t n, size_t size, uintptr_t a)
{
    void *p = hot_zeroed(n, size, align, a, __builtin_return_address(0));
    if (p)
        return p;
    REAL(f, "omp_aligned_calloc")
    return ((void *(*)(size_t, size_t, size_t, uintptr_t))f)(align, n, size, a);
}

EXPORT void omp_free(void *p, uintptr_t a)
{
    ph_block b;
    if (p && ph_blocks_get(&ph_heap_blocks, p, &b, 1)) {
        ph_hot_release(&b, 1);
        return;
    }
    REAL(f, "omp_free")
    ((void (*)(void *, uintptr_t))f)(p, a);
}

EXPORT void *omp_realloc(void *p, size_t size, uintptr_t a, uintptr_t free_a)
{
    const void *ra = __builtin_return_address(0);
    ph_block b;
    if (!p || !ph_blocks_get(&ph_heap_blocks, p, &b, 0)) {
        /* NULL, or the runtime's block: the runtime grows it (a NULL
         * one may become hot) */
        void *n = p ? NULL : hot(size, PAGE, a, 0, ra);
        if (n)
            return n;
        REAL(f, "omp_realloc")
        return ((void *(*)(void *, size_t, uintptr_t, uintptr_t))f)(p, size, a, free_a);
    }
    if (size == 0) { /* frees p, returns NULL */
        if (ph_blocks_get(&ph_heap_blocks, p, &b, 1))
            ph_hot_release(&b, 1);
        return NULL;
    }
    void *n = hot(size, PAGE, a, 0, ra);
    if (!n) {
        REAL(f, "omp_alloc")
        n = ((void *(*)(size_t, uintptr_t))f)(size, a);
    }
    if (!n)
        return NULL; /* p untouched */
    size_t data = ph_hot_data_bytes(&b);
    memcpy(n, p, data < size ? data : size);
    if (ph_blocks_get(&ph_heap_blocks, p, &b, 1))
        ph_hot_release(&b, 0);
    return n;
}
