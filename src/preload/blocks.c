/*
 * blocks.c -- the table of hot blocks (see blocks.h).
 *
 * DESIGN
 *   An open-addressing hash table with linear probing, keyed by the
 *   pointer the program got.  Keys are 4 KiB aligned, so the hash drops
 *   the low 12 bits and multiplies by the 64-bit golden ratio (Fibonacci
 *   hashing); the capacity is a power of two.  Removal leaves a tombstone
 *   (key 1) so that probe chains stay intact; `used` counts live slots and
 *   tombstones.  Before an insert would fill more than half of the slots
 *   (live + tombstones), the table is rebuilt: at the same capacity when
 *   the live blocks still fit at 1/4 load (which only clears the
 *   tombstones), else at the next power of two that gives them 1/4 load.
 *   The first table has 256 slots.  So a lookup's probe chain stays short
 *   and a table that sees many frees and allocations does not fill with
 *   tombstones.
 *
 *   The slots come from the map function given at initialisation (the
 *   preload library: the real mmap, never the malloc it interposes), are
 *   zeroed by it, and go back through unmap when the table grows.
 *
 * CONCURRENCY
 *   One mutex guards slots/cap/used.  `live` and `live_bytes` are atomics
 *   written under the mutex and read without it: ph_blocks_get answers
 *   "not hot" for an empty table or an unaligned pointer from those two
 *   loads (the malloc family's free() of an ordinary pointer costs no
 *   lock).  A relaxed read of `live` may be stale only for a block that
 *   another thread is inserting or removing at that moment, which the
 *   caller cannot be asking about (a pointer is freed after it was handed
 *   out, by one thread).  The mutex is never held across a call outside
 *   this file except map/unmap during a rebuild.
 *
 * COST
 *   insert, get, punch: O(1) expected under the mutex; overlaps: O(cap)
 *   (munmap and mremap of ranges that may hold a hot block; rare).
 */
#include "preload/blocks.h"

#include <errno.h>
#include <string.h>

#define TOMB ((uintptr_t)1)

static size_t slot_of(uintptr_t key, size_t cap)
{
    uint64_t h = (uint64_t)(key >> 12) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

void ph_blocks_init(ph_blocks *t, ph_blocks_map_fn map, ph_blocks_unmap_fn unmap)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    atomic_init(&t->live, 0);
    atomic_init(&t->live_bytes, 0);
    t->map = map;
    t->unmap = unmap;
}

void ph_blocks_destroy(ph_blocks *t)
{
    if (t->slots)
        t->unmap(t->slots, t->cap * sizeof(ph_block));
    t->slots = NULL;
    t->cap = t->used = 0;
    atomic_store(&t->live, 0);
    atomic_store(&t->live_bytes, 0);
    pthread_mutex_destroy(&t->lock);
}

/* Rebuild at cap slots.  Lock held.  -1 when memory is short. */
static int rehash(ph_blocks *t, size_t cap)
{
    ph_block *n = t->map(cap * sizeof(ph_block));
    if (!n)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i].user <= TOMB)
            continue;
        size_t j = slot_of(t->slots[i].user, cap);
        while (n[j].user)
            j = (j + 1) & (cap - 1);
        n[j] = t->slots[i];
    }
    if (t->slots)
        t->unmap(t->slots, t->cap * sizeof(ph_block));
    t->slots = n;
    t->cap = cap;
    t->used = atomic_load(&t->live);
    return 0;
}

/* Index of key's entry, or SIZE_MAX.  Lock held. */
static size_t index_of(const ph_blocks *t, uintptr_t key)
{
    if (!t->cap)
        return SIZE_MAX;
    size_t j = slot_of(key, t->cap);
    while (t->slots[j].user) {
        if (t->slots[j].user == key)
            return j;
        j = (j + 1) & (t->cap - 1);
    }
    return SIZE_MAX;
}

int ph_blocks_insert(ph_blocks *t, const ph_block *b)
{
    if (b->user <= TOMB || (b->user & (PH_BLOCK_ALIGN_BYTES - 1))) {
        errno = EINVAL;
        return -1;
    }
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    size_t live = atomic_load(&t->live);
    if ((t->used + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while ((live + 1) * 4 > cap)
            cap *= 2;
        rc = rehash(t, cap);
    }
    if (rc == 0) {
        size_t j = slot_of(b->user, t->cap);
        while (t->slots[j].user > TOMB)
            j = (j + 1) & (t->cap - 1);
        if (!t->slots[j].user)
            t->used++;
        t->slots[j] = *b;
        atomic_fetch_add(&t->live, 1);
        atomic_fetch_add(&t->live_bytes, b->usable);
    }
    pthread_mutex_unlock(&t->lock);
    if (rc != 0)
        errno = ENOMEM;
    return rc;
}

int ph_blocks_find(ph_blocks *t, const void *p, ph_block *out, int take)
{
    pthread_mutex_lock(&t->lock);
    size_t j = index_of(t, (uintptr_t)p);
    if (j != SIZE_MAX) {
        *out = t->slots[j];
        if (take) {
            t->slots[j].user = TOMB;
            atomic_fetch_sub(&t->live, 1);
            atomic_fetch_sub(&t->live_bytes, out->usable);
        }
    }
    pthread_mutex_unlock(&t->lock);
    return j != SIZE_MAX;
}

int ph_blocks_resize(ph_blocks *t, const void *p, size_t size)
{
    pthread_mutex_lock(&t->lock);
    size_t j = index_of(t, (uintptr_t)p);
    if (j != SIZE_MAX)
        t->slots[j].size = size;
    pthread_mutex_unlock(&t->lock);
    return j != SIZE_MAX;
}

size_t ph_blocks_overlaps(ph_blocks *t, uintptr_t lo, uintptr_t hi,
                          ph_block *out, size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->cap && n < max; i++) {
        const ph_block *b = &t->slots[i];
        if (b->user <= TOMB || b->user >= hi || b->user + b->usable <= lo)
            continue;
        size_t k = n++;
        while (k > 0 && out[k - 1].user > b->user) {
            out[k] = out[k - 1];
            k--;
        }
        out[k] = *b;
    }
    pthread_mutex_unlock(&t->lock);
    return n;
}

int ph_blocks_punch(ph_blocks *t, uintptr_t user, size_t bytes,
                    ph_hotarea_t **area, int *done)
{
    *area = NULL;
    *done = 0;
    pthread_mutex_lock(&t->lock);
    size_t j = index_of(t, user);
    if (j != SIZE_MAX) {
        ph_block *b = &t->slots[j];
        *area = b->area;
        b->area = NULL;
        b->left -= bytes < b->left ? bytes : b->left;
        *done = b->left == 0;
    }
    pthread_mutex_unlock(&t->lock);
    return j != SIZE_MAX;
}

size_t ph_blocks_live(ph_blocks *t)
{
    return atomic_load_explicit(&t->live, memory_order_relaxed);
}

uint64_t ph_blocks_live_bytes(ph_blocks *t)
{
    return atomic_load_explicit(&t->live_bytes, memory_order_relaxed);
}

void ph_blocks_lock(ph_blocks *t)
{
    pthread_mutex_lock(&t->lock);
}

void ph_blocks_unlock(ph_blocks *t)
{
    pthread_mutex_unlock(&t->lock);
}

void ph_blocks_reset_lock(ph_blocks *t)
{
    pthread_mutex_init(&t->lock, NULL);
}
