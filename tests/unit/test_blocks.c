/*
 * test_blocks.c -- the transparent mode's table of hot blocks
 * (src/preload/blocks.c): insert/lookup/remove, the key rules (4 KiB
 * alignment, reserved keys), overlap queries at the range boundaries,
 * partial unmaps (punch), many blocks with churn (tombstones must not
 * grow the table), storage that runs out (injected failure), and a seeded
 * multi-threaded stress checked against per-thread models.
 *
 * The slots come from calloc here (the preload library uses the real
 * mmap), so AddressSanitizer sees any access outside them.
 * PH_SEED=N changes the stress seed (printed).
 */
#include "check.h"

#include "preload/blocks.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define PG ((uintptr_t)4096)

static atomic_int maps, unmaps, map_budget = -1; /* -1: unlimited */

static void *test_map(size_t bytes)
{
    int b = atomic_load(&map_budget);
    if (b == 0)
        return NULL;
    if (b > 0)
        atomic_fetch_sub(&map_budget, 1);
    atomic_fetch_add(&maps, 1);
    return calloc(1, bytes);
}

static void test_unmap(void *mem, size_t bytes)
{
    (void)bytes;
    atomic_fetch_add(&unmaps, 1);
    free(mem);
}

/* A block whose fields all derive from its key, so a copy can be checked. */
static ph_block mk(uintptr_t user, size_t pages)
{
    ph_block b = {.user = user,
                  .base = (void *)(user - PG),
                  .size = pages * PG - 100,
                  .usable = pages * PG,
                  .left = pages * PG,
                  .area = (ph_hotarea_t *)(user ^ 0x5a5a0),
                  .kind = (int)((user >> 12) & 1)};
    return b;
}

static int same(const ph_block *a, const ph_block *b)
{
    return a->user == b->user && a->base == b->base && a->size == b->size &&
           a->usable == b->usable && a->left == b->left && a->area == b->area &&
           a->kind == b->kind;
}

static void test_basic(void)
{
    ph_blocks t;
    ph_blocks_init(&t, test_map, test_unmap);
    ph_block out;
    uintptr_t k = 0x7f0000100000u;
    CHECK_EQ(ph_blocks_get(&t, (void *)k, &out, 0), 0); /* empty table */
    CHECK_EQ(ph_blocks_find(&t, (void *)k, &out, 0), 0); /* no slots yet */
    CHECK_EQ(ph_blocks_overlaps(&t, 0, UINTPTR_MAX, &out, 1), 0);
    ph_block b = mk(k, 3);
    CHECK_EQ(ph_blocks_insert(&t, &b), 0);
    CHECK_EQ(ph_blocks_live(&t), 1);
    CHECK_EQ(ph_blocks_live_bytes(&t), 3 * PG);
    CHECK_EQ(t.cap, 256);
    CHECK_EQ(ph_blocks_get(&t, (void *)k, &out, 0), 1);
    CHECK(same(&out, &b));
    CHECK_EQ(ph_blocks_live(&t), 1); /* a look does not remove */
    CHECK_EQ(ph_blocks_get(&t, (void *)(k + PG), &out, 0), 0); /* inside: not a key */
    CHECK_EQ(ph_blocks_get(&t, (void *)(k - PG), &out, 0), 0);
    memset(&out, 0, sizeof out);
    CHECK_EQ(ph_blocks_get(&t, (void *)k, &out, 1), 1);
    CHECK(same(&out, &b));
    CHECK_EQ(ph_blocks_live(&t), 0);
    CHECK_EQ(ph_blocks_live_bytes(&t), 0);
    CHECK_EQ(ph_blocks_get(&t, (void *)k, &out, 1), 0);
    CHECK_EQ(ph_blocks_find(&t, (void *)k, &out, 0), 0); /* tombstone */
    /* Inserted again over its own tombstone. */
    CHECK_EQ(ph_blocks_insert(&t, &b), 0);
    CHECK_EQ(ph_blocks_get(&t, (void *)k, &out, 1), 1);
    ph_blocks_destroy(&t);
}

static void test_keys(void)
{
    ph_blocks t;
    ph_blocks_init(&t, test_map, test_unmap);
    ph_block b = mk(0x10000000u, 2), out;
    CHECK_EQ(ph_blocks_insert(&t, &b), 0);
    for (uintptr_t d = 1; d < PG; d = d * 3 + 1) {
        /* Unaligned pointers are never hot, even near a key. */
        CHECK_EQ(ph_blocks_get(&t, (void *)(b.user + d), &out, 0), 0);
        ph_block u = mk(0x20000000u + d, 1);
        errno = 0;
        CHECK_EQ(ph_blocks_insert(&t, &u), -1);
        CHECK_EQ(errno, EINVAL);
    }
    ph_block z = mk(0, 1), one = mk(1, 1);
    errno = 0;
    CHECK_EQ(ph_blocks_insert(&t, &z), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(ph_blocks_insert(&t, &one), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(ph_blocks_live(&t), 1);
    /* The highest aligned key works. */
    ph_block top = mk(UINTPTR_MAX & ~(PG - 1), 0);
    top.usable = 0;
    CHECK_EQ(ph_blocks_insert(&t, &top), 0);
    CHECK_EQ(ph_blocks_get(&t, (void *)top.user, &out, 1), 1);
    CHECK_EQ(ph_blocks_get(&t, (void *)b.user, &out, 1), 1);
    ph_blocks_destroy(&t);
}

static void test_overlaps(void)
{
    ph_blocks t;
    ph_blocks_init(&t, test_map, test_unmap);
    /* Three blocks: [A, A+2p) [B, B+1p) [C, C+4p), inserted out of order. */
    uintptr_t A = 0x40000000u, B = A + 5 * PG, C = A + 6 * PG;
    ph_block bc = mk(C, 4), ba = mk(A, 2), bb = mk(B, 1);
    CHECK_EQ(ph_blocks_insert(&t, &bc), 0);
    CHECK_EQ(ph_blocks_insert(&t, &ba), 0);
    CHECK_EQ(ph_blocks_insert(&t, &bb), 0);
    ph_block o[4];
    /* Everything, sorted by address. */
    CHECK_EQ(ph_blocks_overlaps(&t, 0, UINTPTR_MAX, o, 4), 3);
    CHECK(o[0].user == A && o[1].user == B && o[2].user == C);
    CHECK(same(&o[2], &bc));
    /* Half-open ranges: touching ends do not overlap. */
    CHECK_EQ(ph_blocks_overlaps(&t, A - PG, A, o, 4), 0);
    CHECK_EQ(ph_blocks_overlaps(&t, A + 2 * PG, B, o, 4), 0);
    CHECK_EQ(ph_blocks_overlaps(&t, A - 1, A + 1, o, 4), 1);
    CHECK_EQ(ph_blocks_overlaps(&t, A + 2 * PG - 1, B + 1, o, 4), 2);
    CHECK(o[0].user == A && o[1].user == B);
    CHECK_EQ(ph_blocks_overlaps(&t, B + PG - 1, C, o, 4), 1);
    CHECK(o[0].user == B);
    CHECK_EQ(ph_blocks_overlaps(&t, C + 4 * PG, UINTPTR_MAX, o, 4), 0);
    CHECK_EQ(ph_blocks_overlaps(&t, C + 4 * PG - 1, UINTPTR_MAX, o, 4), 1);
    /* A range inside one block. */
    CHECK_EQ(ph_blocks_overlaps(&t, C + PG, C + 2 * PG, o, 4), 1);
    CHECK(o[0].user == C);
    /* At most max: the first ones found, still sorted. */
    CHECK_EQ(ph_blocks_overlaps(&t, 0, UINTPTR_MAX, o, 2), 2);
    CHECK(o[0].user < o[1].user);
    CHECK_EQ(ph_blocks_overlaps(&t, 0, UINTPTR_MAX, o, 0), 0);
    /* Removed blocks are not reported. */
    ph_block out;
    CHECK_EQ(ph_blocks_get(&t, (void *)B, &out, 1), 1);
    CHECK_EQ(ph_blocks_overlaps(&t, A, UINTPTR_MAX, o, 4), 2);
    CHECK(o[0].user == A && o[1].user == C);
    ph_blocks_destroy(&t);
}

static void test_punch(void)
{
    ph_blocks t;
    ph_blocks_init(&t, test_map, test_unmap);
    uintptr_t k = 0x50000000u;
    ph_block b = mk(k, 4), out;
    CHECK_EQ(ph_blocks_insert(&t, &b), 0);
    ph_hotarea_t *area = (ph_hotarea_t *)1;
    int done = -1;
    CHECK_EQ(ph_blocks_punch(&t, k, PG, &area, &done), 1);
    CHECK(area == b.area); /* handed over once */
    CHECK_EQ(done, 0);
    CHECK_EQ(ph_blocks_get(&t, (void *)k, &out, 0), 1);
    CHECK(out.area == NULL);
    CHECK_EQ(out.left, 3 * PG);
    CHECK_EQ(out.usable, 4 * PG); /* the block keeps its extent */
    CHECK_EQ(ph_blocks_punch(&t, k, 2 * PG, &area, &done), 1);
    CHECK(area == NULL);
    CHECK_EQ(done, 0);
    /* More than is left: clamped, done. */
    CHECK_EQ(ph_blocks_punch(&t, k, 5 * PG, &area, &done), 1);
    CHECK_EQ(done, 1);
    CHECK_EQ(ph_blocks_get(&t, (void *)k, &out, 0), 1);
    CHECK_EQ(out.left, 0);
    /* Punching does not remove; the caller takes it. */
    CHECK_EQ(ph_blocks_live(&t), 1);
    CHECK_EQ(ph_blocks_get(&t, (void *)k, &out, 1), 1);
    CHECK_EQ(ph_blocks_punch(&t, k, PG, &area, &done), 0);
    CHECK(area == NULL && done == 0);
    CHECK_EQ(ph_blocks_punch(&t, k + 1, PG, &area, &done), 0);
    ph_blocks_destroy(&t);
}

static uint64_t rng_state;
static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Keys 2^59 bytes apart (2^47 pages) share their slot in every table of
 * up to 2^47 slots: one probe chain of 32, with holes made in it. */
static void test_collisions(void)
{
    ph_blocks t;
    ph_blocks_init(&t, test_map, test_unmap);
    const uintptr_t step = (uintptr_t)1 << 59;
    ph_block out;
    for (uintptr_t j = 0; j < 31; j++) {
        ph_block b = mk(0x1000u + j * step, 1);
        CHECK_EQ(ph_blocks_insert(&t, &b), 0);
    }
    /* Remove every third: the chain keeps its tombstones. */
    for (uintptr_t j = 0; j < 31; j += 3)
        CHECK_EQ(ph_blocks_get(&t, (void *)(0x1000u + j * step), &out, 1), 1);
    for (uintptr_t j = 0; j < 31; j++)
        CHECK_EQ(ph_blocks_get(&t, (void *)(0x1000u + j * step), &out, 0),
                 j % 3 != 0);
    /* A key of the same chain that was never there. */
    CHECK_EQ(ph_blocks_get(&t, (void *)(0x1000u + 31 * step), &out, 0), 0);
    /* Back in (into tombstones), all found with their own contents. */
    for (uintptr_t j = 0; j < 31; j += 3) {
        ph_block b = mk(0x1000u + j * step, 2);
        CHECK_EQ(ph_blocks_insert(&t, &b), 0);
    }
    for (uintptr_t j = 0; j < 31; j++) {
        CHECK_EQ(ph_blocks_get(&t, (void *)(0x1000u + j * step), &out, 1), 1);
        CHECK_EQ(out.usable, (j % 3 ? 1 : 2) * PG);
    }
    CHECK_EQ(ph_blocks_live(&t), 0);
    ph_blocks_destroy(&t);
}

static void test_many(void)
{
    ph_blocks t;
    ph_blocks_init(&t, test_map, test_unmap);
    enum { N = 50000 };
    uintptr_t *keys = calloc(N, sizeof *keys);
    CHECK(keys != NULL);
    if (!keys)
        return;
    /* Dense keys (adjacent pages), then spread ones. */
    for (size_t i = 0; i < N; i++)
        keys[i] = i < N / 2 ? 0x100000000u + i * PG
                            : ((uintptr_t)(rng(&rng_state) & 0x7fffffff000u) | 0x800000000000u);
    size_t ok = 0;
    uint64_t bytes = 0;
    for (size_t i = 0; i < N; i++) {
        ph_block b = mk(keys[i], 1 + i % 7);
        /* The spread keys could repeat (2^31 choices): skip repeats. */
        ph_block out;
        if (ph_blocks_get(&t, (void *)keys[i], &out, 0)) {
            keys[i] = 0;
            continue;
        }
        if (ph_blocks_insert(&t, &b) == 0) {
            ok++;
            bytes += b.usable;
        }
    }
    CHECK_EQ(ph_blocks_live(&t), ok);
    CHECK_EQ(ph_blocks_live_bytes(&t), bytes);
    CHECK(t.cap >= 2 * ok && (t.cap & (t.cap - 1)) == 0);
    size_t found = 0;
    for (size_t i = 0; i < N; i++) {
        ph_block out;
        if (keys[i] && ph_blocks_get(&t, (void *)keys[i], &out, 0) &&
            out.user == keys[i] && out.usable == (1 + i % 7) * PG)
            found++;
    }
    CHECK_EQ(found, ok);
    /* Churn at a constant population: remove and insert new keys many
     * times; tombstones must be cleared, not grow the table. */
    size_t cap0 = t.cap;
    uintptr_t next = 0x200000000u;
    for (size_t round = 0; round < 20 * N; round++) {
        size_t i = (size_t)(rng(&rng_state) % N);
        if (!keys[i])
            continue;
        ph_block out;
        CHECK_EQ(ph_blocks_get(&t, (void *)keys[i], &out, 1), 1);
        keys[i] = next;
        next += PG;
        ph_block b = mk(keys[i], 1 + i % 7);
        if (ph_blocks_insert(&t, &b) != 0) {
            CHECK(0);
            break;
        }
    }
    CHECK_EQ(ph_blocks_live(&t), ok);
    CHECK_EQ(t.cap, cap0);
    CHECK(t.used * 2 <= t.cap);
    found = 0;
    for (size_t i = 0; i < N; i++) {
        ph_block out;
        if (keys[i] && ph_blocks_get(&t, (void *)keys[i], &out, 0) &&
            out.user == keys[i] && out.usable == (1 + i % 7) * PG)
            found++;
    }
    CHECK_EQ(found, ok);
    /* Empty it: every key comes out once. */
    size_t taken = 0;
    for (size_t i = 0; i < N; i++) {
        ph_block out;
        if (keys[i] && ph_blocks_get(&t, (void *)keys[i], &out, 1))
            taken++;
    }
    CHECK_EQ(taken, ok);
    CHECK_EQ(ph_blocks_live(&t), 0);
    CHECK_EQ(ph_blocks_live_bytes(&t), 0);
    free(keys);
    ph_blocks_destroy(&t);
}

/* Storage runs out: the insert that needs to grow fails with ENOMEM and
 * the table stays as it was. */
static void test_no_storage(void)
{
    ph_blocks t;
    ph_blocks_init(&t, test_map, test_unmap);
    atomic_store(&map_budget, 0);
    ph_block b = mk(0x60000000u, 1), out;
    errno = 0;
    CHECK_EQ(ph_blocks_insert(&t, &b), -1);
    CHECK_EQ(errno, ENOMEM);
    CHECK_EQ(ph_blocks_live(&t), 0);
    CHECK_EQ(ph_blocks_get(&t, (void *)b.user, &out, 0), 0);
    atomic_store(&map_budget, 1); /* the first table only */
    size_t n = 0;
    for (;; n++) {
        ph_block c = mk(0x60000000u + n * PG, 1);
        if (ph_blocks_insert(&t, &c) != 0) {
            CHECK_EQ(errno, ENOMEM);
            break;
        }
    }
    CHECK_EQ(n, 128); /* half of 256 slots */
    CHECK_EQ(ph_blocks_live(&t), n);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(ph_blocks_get(&t, (void *)(0x60000000u + i * PG), &out, 0), 1);
    CHECK_EQ(ph_blocks_get(&t, (void *)(0x60000000u + n * PG), &out, 0), 0);
    /* Storage back: the next insert grows the table. */
    atomic_store(&map_budget, -1);
    ph_block c = mk(0x60000000u + n * PG, 1);
    CHECK_EQ(ph_blocks_insert(&t, &c), 0);
    CHECK_EQ(t.cap, 1024);
    for (size_t i = 0; i <= n; i++)
        CHECK_EQ(ph_blocks_get(&t, (void *)(0x60000000u + i * PG), &out, 1), 1);
    CHECK_EQ(ph_blocks_live(&t), 0);
    ph_blocks_destroy(&t);
    CHECK_EQ(atomic_load(&maps), atomic_load(&unmaps));
}

/* ---- seeded multi-threaded stress -------------------------------------- */

enum { THREADS = 4, KEYS_PER_THREAD = 512, OPS = 60000 };

typedef struct {
    ph_blocks *t;
    int id;
    uint64_t seed;
    size_t left[KEYS_PER_THREAD]; /* the model: 0 absent, else bytes left */
    int errors;
    atomic_int *stop;
    pthread_barrier_t *go; /* all threads start together */
} worker;

static uintptr_t key_of(int thread, int i)
{
    /* Threads' keys interleave in the address space, so the overlap
     * queries and the probe chains mix them. */
    return 0x300000000u + ((uintptr_t)i * THREADS + (uintptr_t)thread) * 8 * PG;
}

static void *work(void *arg)
{
    worker *w = arg;
    uint64_t s = w->seed;
    pthread_barrier_wait(w->go);
    for (int op = 0; op < OPS; op++) {
        int i = (int)(rng(&s) % KEYS_PER_THREAD);
        uintptr_t k = key_of(w->id, i);
        ph_block out;
        switch (rng(&s) % 4) {
        case 0: /* insert if absent */
            if (!w->left[i]) {
                ph_block b = mk(k, 1 + (size_t)(rng(&s) % 8));
                if (ph_blocks_insert(w->t, &b) != 0)
                    w->errors++;
                else
                    w->left[i] = b.usable;
            }
            break;
        case 1: /* look */
            if (ph_blocks_get(w->t, (void *)k, &out, 0) != (w->left[i] != 0) ||
                (w->left[i] && (out.user != k || out.left != w->left[i] ||
                                out.base != (void *)(k - PG))))
                w->errors++;
            break;
        case 2: /* take */
            if (ph_blocks_get(w->t, (void *)k, &out, 1) != (w->left[i] != 0))
                w->errors++;
            w->left[i] = 0;
            break;
        default: { /* punch a page */
            ph_hotarea_t *area;
            int done;
            int hit = ph_blocks_punch(w->t, k, PG, &area, &done);
            if (hit != (w->left[i] != 0))
                w->errors++;
            if (hit) {
                w->left[i] -= PG;
                if (done != (w->left[i] == 0))
                    w->errors++;
                if (done && ph_blocks_get(w->t, (void *)k, &out, 1) != 1)
                    w->errors++;
                if (done)
                    w->left[i] = 0;
            }
            break;
        }
        }
    }
    return NULL;
}

/* Reads everything while the workers change it: every block reported
 * must be internally consistent and inside the range asked. */
static void *scan(void *arg)
{
    worker *w = arg;
    uint64_t s = w->seed;
    ph_block o[16];
    pthread_barrier_wait(w->go);
    while (!atomic_load(w->stop)) {
        uintptr_t lo = key_of(0, (int)(rng(&s) % KEYS_PER_THREAD));
        uintptr_t hi = lo + (rng(&s) % 64 + 1) * PG;
        size_t n = ph_blocks_overlaps(w->t, lo, hi, o, 16);
        for (size_t j = 0; j < n; j++) {
            if (o[j].user >= hi || o[j].user + o[j].usable <= lo ||
                o[j].base != (void *)(o[j].user - PG) || o[j].left > o[j].usable ||
                (j > 0 && o[j - 1].user >= o[j].user))
                w->errors++;
        }
        if (ph_blocks_live(w->t) > (size_t)THREADS * KEYS_PER_THREAD)
            w->errors++;
    }
    return NULL;
}

static void test_stress(uint64_t seed)
{
    ph_blocks t;
    ph_blocks_init(&t, test_map, test_unmap);
    static worker ws[THREADS + 1];
    atomic_int stop = 0;
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, THREADS + 1);
    pthread_t th[THREADS + 1];
    for (int k = 0; k <= THREADS; k++) {
        memset(&ws[k], 0, sizeof ws[k]);
        ws[k].t = &t;
        ws[k].id = k;
        ws[k].seed = seed * 0x9E3779B97F4A7C15ull + (uint64_t)k + 1;
        ws[k].stop = &stop;
        ws[k].go = &go;
    }
    CHECK_EQ(pthread_create(&th[THREADS], NULL, scan, &ws[THREADS]), 0);
    for (int k = 0; k < THREADS; k++)
        CHECK_EQ(pthread_create(&th[k], NULL, work, &ws[k]), 0);
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    atomic_store(&stop, 1);
    pthread_join(th[THREADS], NULL);
    pthread_barrier_destroy(&go);
    size_t live = 0;
    uint64_t bytes = 0;
    int missing = 0;
    for (int k = 0; k <= THREADS; k++)
        CHECK_EQ(ws[k].errors, 0);
    for (int k = 0; k < THREADS; k++)
        for (int i = 0; i < KEYS_PER_THREAD; i++) {
            ph_block out;
            int got = ph_blocks_get(&t, (void *)key_of(k, i), &out, 0);
            if (got != (ws[k].left[i] != 0) || (got && out.left != ws[k].left[i]))
                missing++;
            if (got) {
                live++;
                bytes += out.usable;
            }
        }
    CHECK_EQ(missing, 0);
    CHECK_EQ(ph_blocks_live(&t), live);
    CHECK_EQ(ph_blocks_live_bytes(&t), bytes);
    ph_blocks_destroy(&t);
}

int main(void)
{
    uint64_t seed = 20240611;
    const char *e = getenv("PH_SEED");
    if (e && *e)
        seed = strtoull(e, NULL, 0);
    printf("test_blocks: seed %llu (PH_SEED)\n", (unsigned long long)seed);
    rng_state = seed | 1;
    test_basic();
    test_keys();
    test_overlaps();
    test_punch();
    test_collisions();
    test_many();
    test_no_storage();
    test_stress(seed);
    return check_summary("test_blocks");
}
