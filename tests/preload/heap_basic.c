/*
 * heap_basic.c -- the malloc family and mmap under transparent mode
 * (src/preload/heap.c).  Run preloaded (HEAP_EXPECT=hot) it checks that
 * large blocks come from ph_alloc and are watched while they live, and
 * that small ones do not; run plain (HEAP_EXPECT=plain) the same data
 * checks pass.  Either way it prints the same lines (heap_compare.sh).
 */
#include "heap_common.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#define MiB ((size_t)1 << 20)

static size_t areas0;

static void test_malloc_realloc(void)
{
    unsigned char *p = malloc(8 * MiB);
    CHECK(p);
    heap_is_hot(p, 8 * MiB);
    if (heap_engine)
        CHECK(heap_areas() == areas0 + 1);
    CHECK(malloc_usable_size(p) >= 8 * MiB);
    heap_fill(p, 8 * MiB, 1);
    CHECK(heap_same(p, 8 * MiB, 1));

    unsigned char *q = realloc(p, 16 * MiB); /* grows: a new hot block */
    CHECK(q);
    heap_is_hot(q, 16 * MiB);
    CHECK(heap_same(q, 8 * MiB, 1));
    heap_fill(q, 16 * MiB, 2);
    CHECK(heap_same(q, 16 * MiB, 2));
    if (heap_engine)
        CHECK(heap_areas() == areas0 + 1);

    p = realloc(q, 12 * MiB); /* shrinks: stays hot */
    CHECK(p);
    heap_is_hot(p, 12 * MiB);
    CHECK(heap_prefix(p, 12 * MiB, 2));

    q = realloc(p, 3000); /* small: the real allocator */
    CHECK(q);
    heap_not_hot(q);
    CHECK(heap_prefix(q, 3000, 2));
    if (heap_engine)
        CHECK(heap_areas() == areas0);

    p = realloc(q, 4 * MiB); /* small grown large: hot */
    CHECK(p);
    heap_is_hot(p, 4 * MiB);
    CHECK(heap_prefix(p, 3000, 2));
    free(p);
    if (heap_engine)
        CHECK(heap_areas() == areas0);

    p = malloc(100); /* below the threshold */
    CHECK(p);
    heap_not_hot(p);
    free(p);
    free(NULL);
    printf("malloc/realloc/free: ok\n");
}

static void test_calloc(void)
{
    size_t n = 3 * MiB / sizeof(long) + 17;
    long *a = calloc(n, sizeof *a);
    CHECK(a);
    heap_is_hot(a, n * sizeof *a);
    for (size_t i = 0; i < n; i += 97)
        CHECK(a[i] == 0);
    CHECK(a[n - 1] == 0);
    a[5] = 5;
    free(a);
    int *s = calloc(10, sizeof *s);
    CHECK(s);
    for (int i = 0; i < 10; i++)
        CHECK(s[i] == 0);
    free(s);
    volatile size_t huge = SIZE_MAX / 2; /* n * size overflows */
    /* volatile: clang may not elide it.  errno is not checked: clang
     * assumes the malloc family leaves errno alone and reads it early. */
    void *volatile none = calloc(huge, 4);
    CHECK(none == NULL);
    printf("calloc: ok\n");
}

static void test_aligned(void)
{
    void *p = NULL;
    CHECK(posix_memalign(&p, 64, 2 * MiB) == 0);
    heap_is_hot(p, 2 * MiB);
    CHECK((uintptr_t)p % 64 == 0);
    heap_fill(p, 2 * MiB, 3);
    CHECK(heap_same(p, 2 * MiB, 3));
    free(p);

    CHECK(posix_memalign(&p, 2 * MiB, 3 * MiB) == 0); /* over-allocated */
    CHECK((uintptr_t)p % (2 * MiB) == 0);
    if (heap_hot)
        CHECK(heap_alloc_size(p) == 0 || heap_alloc_size(p) >= 3 * MiB);
    heap_fill(p, 3 * MiB, 4);
    CHECK(heap_same(p, 3 * MiB, 4));
    CHECK(malloc_usable_size(p) >= 3 * MiB);
    if (heap_engine)
        CHECK(heap_areas() == areas0 + 1);
    free(p);
    if (heap_engine)
        CHECK(heap_areas() == areas0);

    CHECK(posix_memalign(&p, 3, 100) == EINVAL);
    CHECK(posix_memalign(&p, 32, 100) == 0);
    CHECK((uintptr_t)p % 32 == 0);
    free(p);

    unsigned char *a = aligned_alloc(4096, 4 * MiB);
    CHECK(a && (uintptr_t)a % 4096 == 0);
    heap_is_hot(a, 4 * MiB);
    heap_fill(a, 4 * MiB, 5);
    CHECK(heap_same(a, 4 * MiB, 5));
    free(a);

    a = memalign(MiB, 2 * MiB);
    CHECK(a && (uintptr_t)a % MiB == 0);
    heap_fill(a, 2 * MiB, 6);
    CHECK(heap_same(a, 2 * MiB, 6));
    free(a);

    a = valloc(2 * MiB);
    CHECK(a && (uintptr_t)a % 4096 == 0);
    heap_is_hot(a, 2 * MiB);
    heap_fill(a, 2 * MiB, 7);
    free(a);

    a = pvalloc(MiB + MiB / 2 + 5);
    CHECK(a && (uintptr_t)a % 4096 == 0);
    CHECK(malloc_usable_size(a) >= MiB + MiB / 2 + 4096);
    heap_fill(a, MiB + MiB / 2 + 4096, 8);
    free(a);

    a = aligned_alloc(16, 48);
    CHECK(a && (uintptr_t)a % 16 == 0);
    heap_not_hot(a);
    free(a);
    printf("posix_memalign/aligned_alloc/memalign/valloc/pvalloc: ok\n");
}

static void test_mmap(void)
{
    size_t n = 4 * MiB;
    unsigned char *m = mmap(NULL, n, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    heap_is_hot(m, n);
    CHECK(m[12345] == 0);
    heap_fill(m, n, 9);
    CHECK(heap_same(m, n, 9));
    if (heap_engine)
        CHECK(heap_areas() == areas0 + 1);
    CHECK(munmap(m, n) == 0);
    if (heap_engine)
        CHECK(heap_areas() == areas0);

    /* grow with mremap, keep the data */
    m = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    heap_fill(m, 2 * MiB, 10);
    unsigned char *r = mremap(m, 2 * MiB, 6 * MiB, MREMAP_MAYMOVE);
    CHECK(r != MAP_FAILED);
    heap_is_hot(r, 6 * MiB);
    CHECK(heap_same(r, 2 * MiB, 10));
    CHECK(r[6 * MiB - 1] == 0);
    r[6 * MiB - 1] = 1;

    /* unmap in two pieces: head, then the rest */
    CHECK(munmap(r, MiB) == 0);
    if (heap_engine)
        CHECK(heap_areas() == areas0); /* no longer watched */
    CHECK(r[MiB] == (unsigned char)(10 + MiB / 512));
    CHECK(munmap(r + MiB, 5 * MiB) == 0);

    /* a range covering a hot block and an ordinary mapping */
    unsigned char *s = mmap(NULL, 8 * MiB, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    heap_not_hot(s);
    CHECK(munmap(s, 8 * MiB) == 0);

    /* small and file-less PROT_NONE reservations are not hot */
    s = mmap(NULL, 64 * 1024, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    heap_not_hot(s);
    CHECK(munmap(s, 64 * 1024) == 0);
    printf("mmap/mremap/munmap: ok\n");
}

/* Small and large blocks from 4 threads at once. */
static void *worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    void *keep[64] = {0};
    for (int it = 0; it < 3000; it++) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 1 + (seed >> 8) % 4096;
        int k = (int)((seed >> 4) % 64);
        free(keep[k]);
        keep[k] = malloc(n);
        CHECK(keep[k]);
        memset(keep[k], (int)k, n);
        if (it % 150 == 0) {
            size_t big = MiB + (seed % 4) * MiB;
            unsigned char *b = (it / 150) % 2 ? malloc(big) : calloc(1, big);
            CHECK(b);
            heap_is_hot(b, big);
            heap_fill(b, big, seed);
            CHECK(heap_same(b, big, seed));
            b = realloc(b, big * 2);
            CHECK(b && heap_prefix(b, big, seed));
            free(b);
        }
    }
    for (int k = 0; k < 64; k++)
        free(keep[k]);
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)) == 0);
    for (int i = 0; i < 4; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    if (heap_engine)
        CHECK(heap_areas() == areas0);
    printf("4 threads, small and large blocks: ok\n");
}

int main(void)
{
    heap_setup();
    areas0 = heap_areas();
    test_malloc_realloc();
    test_calloc();
    test_aligned();
    test_mmap();
    test_threads();
    printf("heap_basic: ok\n");
    return 0;
}
