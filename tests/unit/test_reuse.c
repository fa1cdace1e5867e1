/*
 * test_reuse.c -- preload/reuse.c alone: the cache of freed hot heap
 * blocks (exact sizes, FIFO release for room, the block limit, memory
 * pressure emptying it, the pressure rule's edges).  Blocks are plain
 * addresses here; the release function records what leaves.
 */
#include "check.h"

#include "preload/reuse.h"

#include <stdint.h>
#include <string.h>

#define MiB (1ull << 20)

static void *released[256];
static size_t nreleased;

static void release(void *base, struct ph_hot *area)
{
    (void)area;
    if (nreleased < 256)
        released[nreleased++] = base;
}

static unsigned long long fake_avail = 16384 * MiB, fake_total = 16384 * MiB;
static int fake_fails;

static int fake_memory(unsigned long long *avail, unsigned long long *total)
{
    if (fake_fails)
        return -1;
    *avail = fake_avail;
    *total = fake_total;
    return 0;
}

static void *addr(uintptr_t k)
{
    return (void *)(k << 21);
}

static void drain_all(void)
{
    struct ph_hot *a;
    for (size_t sz = 1; sz <= 64; sz++)
        while (ph_reuse_take(sz * MiB, &a))
            ;
}

static void test_exact_sizes(void)
{
    ph_reuse_configure(64 * MiB, release, NULL, 0);
    nreleased = 0;
    struct ph_hot *area = (struct ph_hot *)addr(99), *got;
    CHECK_EQ(ph_reuse_put(addr(1), 2 * MiB, area), 1);
    CHECK_EQ(ph_reuse_put(addr(2), 4 * MiB, NULL), 1);
    CHECK(ph_reuse_take(3 * MiB, &got) == NULL); /* no size but its own */
    CHECK(ph_reuse_take(2 * MiB, &got) == addr(1));
    CHECK(got == area);
    CHECK(ph_reuse_take(2 * MiB, &got) == NULL);
    CHECK(ph_reuse_take(4 * MiB, &got) == addr(2));
    CHECK(got == NULL);
    /* the newest of a size first */
    CHECK_EQ(ph_reuse_put(addr(3), 2 * MiB, NULL), 1);
    CHECK_EQ(ph_reuse_put(addr(4), 2 * MiB, NULL), 1);
    CHECK(ph_reuse_take(2 * MiB, &got) == addr(4));
    CHECK(ph_reuse_take(2 * MiB, &got) == addr(3));
    CHECK_EQ(nreleased, 0);
}

static void test_limits(void)
{
    ph_reuse_configure(8 * MiB, release, NULL, 0);
    nreleased = 0;
    CHECK_EQ(ph_reuse_put(addr(1), 16 * MiB, NULL), 0); /* larger than the limit */
    for (uintptr_t k = 1; k <= 6; k++)
        CHECK_EQ(ph_reuse_put(addr(k), 2 * MiB, NULL), 1);
    /* 12 MiB put into 8: the two oldest went, in order */
    CHECK_EQ(nreleased, 2);
    CHECK(released[0] == addr(1) && released[1] == addr(2));
    size_t blocks, bytes;
    ph_reuse_stats(NULL, NULL, NULL, &blocks, &bytes);
    CHECK_EQ(blocks, 4);
    CHECK_EQ(bytes, 8 * MiB);
    drain_all();
    /* at most 64 blocks, whatever their bytes */
    ph_reuse_configure(1024 * MiB, release, NULL, 0);
    nreleased = 0;
    for (uintptr_t k = 1; k <= 70; k++)
        CHECK_EQ(ph_reuse_put(addr(k), 1 * MiB, NULL), 1);
    CHECK_EQ(nreleased, 6);
    CHECK(released[0] == addr(1) && released[5] == addr(6));
    drain_all();
    /* limit 0: nothing kept */
    ph_reuse_configure(0, release, NULL, 0);
    CHECK_EQ(ph_reuse_put(addr(1), 1 * MiB, NULL), 0);
}

static void test_pressure(void)
{
    ph_reuse_configure(64 * MiB, release, fake_memory, 0);
    nreleased = 0;
    fake_avail = fake_total / 2;
    for (uintptr_t k = 1; k <= 4; k++)
        CHECK_EQ(ph_reuse_put(addr(k), 2 * MiB, NULL), 1);
    /* memory runs short: the next put keeps nothing and empties the cache */
    fake_avail = fake_total / 32;
    CHECK_EQ(ph_reuse_put(addr(5), 2 * MiB, NULL), 0);
    CHECK_EQ(nreleased, 4);
    struct ph_hot *got;
    CHECK(ph_reuse_take(2 * MiB, &got) == NULL);
    unsigned long long p = 0;
    ph_reuse_stats(NULL, NULL, &p, NULL, NULL);
    CHECK(p >= 1);
    /* the pressure gone, blocks are kept again */
    fake_avail = fake_total / 4;
    CHECK_EQ(ph_reuse_put(addr(6), 2 * MiB, NULL), 1);
    CHECK(ph_reuse_take(2 * MiB, &got) == addr(6));
    /* memory that cannot be read: no pressure assumed */
    fake_fails = 1;
    CHECK_EQ(ph_reuse_put(addr(7), 2 * MiB, NULL), 1);
    fake_fails = 0;
    drain_all();
    /* read at most every check_ns: a pressure that appears in between is
     * seen at the next reading */
    ph_reuse_configure(64 * MiB, release, fake_memory, 3600ull * 1000000000ull);
    fake_avail = fake_total / 2;
    CHECK_EQ(ph_reuse_put(addr(8), 2 * MiB, NULL), 1);
    fake_avail = 0;
    CHECK_EQ(ph_reuse_put(addr(9), 2 * MiB, NULL), 1); /* not read again yet */
    drain_all();
}

static void test_rule(void)
{
    CHECK_EQ(ph_reuse_pressure(1024 * MiB, 16384 * MiB), 0);
    CHECK_EQ(ph_reuse_pressure(1023 * MiB, 16384 * MiB), 1); /* < 1/16 */
    CHECK_EQ(ph_reuse_pressure(63 * MiB, 256 * MiB), 1);      /* < 64 MiB */
    CHECK_EQ(ph_reuse_pressure(64 * MiB, 256 * MiB), 0);
    CHECK_EQ(ph_reuse_pressure(0, 0), 1);
}

int main(void)
{
    test_exact_sizes();
    test_limits();
    test_pressure();
    test_rule();
    return check_summary("test_reuse");
}
