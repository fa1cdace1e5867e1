/*
 * test_base.c -- the shared helpers of src/base/: splitmix64 (against the
 * reference outputs of the algorithm), the comparators and the (key,
 * index) pair sort (against qsort on random, sorted, reversed and
 * all-equal inputs, long enough to reach the heapsort fallback), the
 * order-preserving key of a double, the monotonic clock and the page
 * sizes.
 */
#include "check.h"

#include "base/clock.h"
#include "base/page.h"
#include "base/rng.h"
#include "base/sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_rng(void)
{
    /* The first outputs of splitmix64 seeded with 0 and with
     * 1234567 (the values every implementation of the algorithm gives). */
    uint64_t s = 0;
    CHECK(ph_splitmix64_next(&s) == 0xE220A8397B1DCDAFull);
    CHECK(ph_splitmix64_next(&s) == 0x6E789E6AA1B965F4ull);
    CHECK(ph_splitmix64_next(&s) == 0x06C45D188009454Full);
    s = 1234567;
    CHECK(ph_splitmix64_next(&s) == 0x599ED017FB08FC85ull);
    CHECK(ph_splitmix64_next(&s) == 0x2C73F08458540FA5ull);
    /* the hash is the stream's output for that state */
    CHECK(ph_splitmix64(0) == 0xE220A8397B1DCDAFull);
    CHECK(ph_splitmix64(PH_SPLITMIX64_GAMMA) == 0x6E789E6AA1B965F4ull);
    /* uniform in [0, 1) */
    CHECK(ph_rng_unit(0) == 0.0);
    CHECK(ph_rng_unit(UINT64_MAX) < 1.0 && ph_rng_unit(UINT64_MAX) > 0.9999999);
    double sum = 0;
    s = 42;
    for (int i = 0; i < 100000; i++)
        sum += ph_rng_unit(ph_splitmix64_next(&s));
    CHECK(fabs(sum / 100000 - 0.5) < 0.01);
}

static int pair_cmp(const void *a, const void *b)
{
    const size_t *x = a, *y = b; /* {key, idx}: key descending, idx ascending */
    if (x[0] != y[0])
        return x[0] > y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static void check_sort(size_t n, int kind, uint64_t seed)
{
    size_t *key = malloc(n * sizeof *key), *idx = malloc(n * sizeof *idx);
    size_t *ref = malloc(2 * n * sizeof *ref);
    for (size_t i = 0; i < n; i++) {
        size_t k = kind == 0   ? (size_t)(ph_splitmix64_next(&seed) % (n / 4 + 1))
                   : kind == 1 ? i
                   : kind == 2 ? n - i
                               : 7;
        key[i] = k;
        idx[i] = (i * 7919) % n; /* distinct indexes, not in order */
        ref[2 * i] = k;
        ref[2 * i + 1] = idx[i];
    }
    ph_sort_pairs_desc(key, idx, n);
    qsort(ref, n, 2 * sizeof *ref, pair_cmp);
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= key[i] == ref[2 * i] && idx[i] == ref[2 * i + 1];
    CHECK(ok);
    free(key);
    free(idx);
    free(ref);
}

static void test_sort(void)
{
    static const size_t sizes[] = {1, 2, 15, 16, 17, 100, 4099, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int kind = 0; kind < 4; kind++)
            check_sort(sizes[s], kind, 1000 + s);

    /* the key of a double keeps numeric order, -0.0 == +0.0 */
    static const double v[] = {-INFINITY, -1e300, -2.5, -1e-300, -0.0, 0.0,
                               1e-300, 1.0, 2.5, 1e300, INFINITY};
    for (size_t i = 1; i < sizeof v / sizeof v[0]; i++)
        CHECK(ph_sort_key_double(v[i - 1]) <= ph_sort_key_double(v[i]));
    CHECK(ph_sort_key_double(-0.0) == ph_sort_key_double(0.0));
    CHECK(ph_sort_key_double(-1e-300) < ph_sort_key_double(0.0));

    /* comparators, through qsort */
    double d[] = {3.5, -1, 2, 0, -7.25};
    qsort(d, 5, sizeof *d, ph_cmp_double);
    CHECK(d[0] == -7.25 && d[1] == -1 && d[2] == 0 && d[3] == 2 && d[4] == 3.5);
    int n[] = {5, -3, 9, 0, INT32_MIN, INT32_MAX};
    qsort(n, 6, sizeof *n, ph_cmp_int);
    CHECK(n[0] == INT32_MIN && n[1] == -3 && n[5] == INT32_MAX);
    uint64_t u[] = {UINT64_MAX, 0, 1ull << 63, 7};
    qsort(u, 4, sizeof *u, ph_cmp_u64);
    CHECK(u[0] == 0 && u[1] == 7 && u[2] == 1ull << 63 && u[3] == UINT64_MAX);
}

static void test_clock_pages(void)
{
    uint64_t a = ph_now_ns();
    uint64_t b = ph_now_ns();
    CHECK(a > 0 && b >= a); /* monotonic: never backwards */
    CHECK_EQ(PH_PAGE_4K, 4096);
    CHECK_EQ(PH_PAGE_2M, 2097152);
    CHECK_EQ(PH_PAGE_UNIT, 512);
}

int main(void)
{
    test_rng();
    test_sort();
    test_clock_pages();
    return check_summary("test_base");
}
