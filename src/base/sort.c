/*
 * sort.c -- comparators and the (key, index) pair introsort (see sort.h).
 *
 * The introsort: Hoare partitions around a median of three, recursion on
 * the smaller side (depth O(log n)), heapsort when the depth budget of
 * 2 log2 n runs out (O(n log n) worst case), insertion sort for ranges
 * shorter than 16.  It needs no stability: pairs are distinct, so the
 * order is total.
 */
#include "base/sort.h"

#include <string.h>

int ph_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int ph_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int ph_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#ifdef PH_SORT_PAIRS

/* The bit pattern with the sign bit flipped for positives and all bits
 * flipped for negatives: unsigned order is then numeric order. */
size_t ph_sort_key_double(double r)
{
    uint64_t b;
    if (r == 0.0)
        r = 0.0; /* fold -0.0 onto +0.0 */
    memcpy(&b, &r, sizeof b);
    b = (b >> 63) ? ~b : b | ((uint64_t)1 << 63);
    return (size_t)b;
}

/* Pair a goes before pair b: higher key, or equal key and lower index. */
static int pair_before(const size_t *key, const size_t *idx, size_t a, size_t b)
{
    return key[a] > key[b] || (key[a] == key[b] && idx[a] < idx[b]);
}

static void pair_swap(size_t *key, size_t *idx, size_t a, size_t b)
{
    const size_t k = key[a], i = idx[a];
    key[a] = key[b];
    idx[a] = idx[b];
    key[b] = k;
    idx[b] = i;
}

/* Heap over pairs [base, base+size) with the last in order at the root:
 * sift the entry at i down. */
static void pair_sift(size_t *key, size_t *idx, size_t base, size_t size, size_t i)
{
    for (;;) {
        const size_t l = 2 * i + 1, r = l + 1;
        size_t w = i;
        if (l < size && pair_before(key, idx, base + w, base + l))
            w = l;
        if (r < size && pair_before(key, idx, base + w, base + r))
            w = r;
        if (w == i)
            return;
        pair_swap(key, idx, base + i, base + w);
        i = w;
    }
}

/* Heapsort of pairs [lo, hi] (inclusive), the introsort fallback. */
static void pair_heapsort(size_t *key, size_t *idx, size_t lo, size_t hi)
{
    const size_t size = hi - lo + 1;
    for (size_t i = size / 2; i-- > 0;)
        pair_sift(key, idx, lo, size, i);
    for (size_t s = size; s > 1; s--) {
        pair_swap(key, idx, lo, lo + s - 1);
        pair_sift(key, idx, lo, s - 1, 0);
    }
}

/* Introsort of pairs [lo, hi] (inclusive). */
static void pair_introsort(size_t *key, size_t *idx, size_t lo, size_t hi,
                           unsigned depth)
{
    while (hi - lo >= 16) {
        if (depth == 0) {
            pair_heapsort(key, idx, lo, hi);
            return;
        }
        depth--;
        const size_t mid = lo + (hi - lo) / 2;
        if (pair_before(key, idx, mid, lo))
            pair_swap(key, idx, mid, lo);
        if (pair_before(key, idx, hi, lo))
            pair_swap(key, idx, hi, lo);
        if (pair_before(key, idx, hi, mid))
            pair_swap(key, idx, hi, mid);
        const size_t pk = key[mid], pi = idx[mid];
        size_t i = lo - 1, j = hi + 1; /* lo - 1 may wrap; i++ undoes it */
        for (;;) {
            do
                i++;
            while (key[i] > pk || (key[i] == pk && idx[i] < pi));
            do
                j--;
            while (key[j] < pk || (key[j] == pk && idx[j] > pi));
            if (i >= j)
                break;
            pair_swap(key, idx, i, j);
        }
        /* [lo, j] and [j+1, hi], both non-empty */
        if (j - lo < hi - j) {
            pair_introsort(key, idx, lo, j, depth);
            lo = j + 1;
        } else {
            pair_introsort(key, idx, j + 1, hi, depth);
            hi = j;
        }
    }
    for (size_t i = lo + 1; i <= hi; i++) {
        const size_t k = key[i], v = idx[i];
        size_t j = i;
        while (j > lo && (key[j - 1] < k || (key[j - 1] == k && idx[j - 1] > v))) {
            key[j] = key[j - 1];
            idx[j] = idx[j - 1];
            j--;
        }
        key[j] = k;
        idx[j] = v;
    }
}

void ph_sort_pairs_desc(size_t *key, size_t *idx, size_t n)
{
    if (n < 2)
        return;
    unsigned depth = 0;
    for (size_t v = n; v > 1; v >>= 1)
        depth += 2;
    pair_introsort(key, idx, 0, n - 1, depth);
}

#endif
