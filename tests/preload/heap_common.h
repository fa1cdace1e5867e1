/*
 * heap_common.h -- shared by the heap_* tests of transparent mode.
 *
 * The programs run with and without LD_PRELOAD=libpagehome_preload.so and
 * must print the same lines either way (heap_compare.sh).  HEAP_EXPECT
 * says which run this is: "hot" (preloaded: large blocks must come from
 * ph_alloc, looked up through dlsym so the program never links pagehome)
 * or "plain" (no pagehome in the process).
 */
#ifndef HEAP_COMMON_H
#define HEAP_COMMON_H

#include "pagehome.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                           \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,         \
                    __LINE__, #c);                                         \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

typedef size_t (*size_fn)(const void *);
typedef int (*stats_fn)(ph_engine_stats_t *);

static size_fn heap_alloc_size; /* ph_alloc_size, NULL when plain */
static stats_fn heap_engine_stats;
static int heap_hot;            /* 1 when preloaded */
static int heap_engine;         /* 1 when the engine registers areas */

static __attribute__((unused)) void heap_setup(void)
{
    const char *e = getenv("HEAP_EXPECT");
    CHECK(e && (strcmp(e, "hot") == 0 || strcmp(e, "plain") == 0));
    *(void **)&heap_alloc_size = dlsym(RTLD_DEFAULT, "ph_alloc_size");
    *(void **)&heap_engine_stats = dlsym(RTLD_DEFAULT, "ph_engine_stats");
    heap_hot = strcmp(e, "hot") == 0;
    CHECK(heap_hot == (heap_alloc_size != NULL));
    CHECK(heap_hot == (heap_engine_stats != NULL));
    const char *eng = getenv("PAGEHOME_ENGINE");
    heap_engine = heap_hot && !(eng && strcmp(eng, "off") == 0);
}

/* Hot areas the engine watches (0 when plain or the engine is off). */
static __attribute__((unused)) size_t heap_areas(void)
{
    if (!heap_engine)
        return 0;
    ph_engine_stats_t st;
    CHECK(heap_engine_stats(&st) == 0);
    return st.areas;
}

/* p must be a placed block of at least n bytes (preloaded), or nothing
 * special (plain).  (p is not const: gcc takes a const pointer argument
 * for a read of the block, which is not initialised yet.) */
static __attribute__((unused)) void heap_is_hot(void *p, size_t n)
{
    if (heap_hot)
        CHECK(heap_alloc_size(p) >= n);
}

static __attribute__((unused)) void heap_not_hot(const void *p)
{
    (void)p;
    /* ph_alloc_size of a foreign pointer is 0 (and records an error
     * message, harmless here). */
    if (heap_hot)
        CHECK(heap_alloc_size(p) == 0);
}

static __attribute__((unused)) void heap_fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 512)
        p[i] = (unsigned char)(seed + i / 512);
    if (n)
        p[n - 1] = (unsigned char)(seed * 7);
}

static __attribute__((unused)) int heap_same(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 512)
        if (p[i] != (unsigned char)(seed + i / 512))
            return 0;
    return !n || p[n - 1] == (unsigned char)(seed * 7);
}

/* The first m bytes of a block filled by heap_fill(p, n >= m, seed). */
static __attribute__((unused)) int heap_prefix(const unsigned char *p, size_t m, unsigned seed)
{
    for (size_t i = 0; i < m; i += 512)
        if (p[i] != (unsigned char)(seed + i / 512))
            return 0;
    return 1;
}

#endif
