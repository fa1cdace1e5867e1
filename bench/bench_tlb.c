/*
 * bench_tlb.c -- how much TLB-bound kernels gain from 2 MiB pages: the same
 * work on 4 KiB pages, on transparent huge pages and on hugetlbfs pages,
 * in one process.
 *
 * Kernels (single-threaded: one core's TLB is what is measured, and this
 * keeps the figures free of OpenMP scheduling noise on a shared machine):
 *   gather     CG-like: s += x[idx[k]] for k < ACCESSES, x an array of
 *              doubles of SIZE bytes (default 1 GiB), idx uniformly random
 *              (the x[colidx[k]] loads of a sparse matrix-vector product).
 *              idx itself is one buffer on 4 KiB pages shared by all three
 *              runs; its sequential stream costs one TLB entry per 1024
 *              accesses.  Reported in ns per access.
 *   transpose  FT-like: B = A^T for n x n double complex arrays A and B of
 *              SIZE/2 bytes each, in 32 x 32 tiles (NPB FT's local
 *              transpose block): every tile writes 32 rows of B, each on
 *              its own 4 KiB page.  One timed sample is 4 transposes
 *              (A->B, B->A, twice), so that it lasts long enough to time
 *              on a busy machine.  Reported in ns per element moved.
 * Page kinds, each buffer in its own mapping with a PROT_NONE guard page
 * after it (so the kernel cannot merge neighbouring mappings and smaps
 * can be read per buffer):
 *   4K         mmap + MADV_NOHUGEPAGE;
 *   THP        mmap aligned to 2 MiB + MADV_HUGEPAGE; how much of the
 *              buffer is really huge is read from /proc/self/smaps
 *              (AnonHugePages of its mapping) after it was filled;
 *   hugetlbfs  mmap MAP_HUGETLB | MAP_HUGE_2MB; skipped with a message
 *              when the 2 MiB pool is empty or too small (it is filled by
 *              `pagehome hugepages --node N --reserve COUNT`).
 * All buffers of a kernel are filled before anything is timed; each
 * repetition runs the kinds in a rotated order (so drift on a shared
 * machine does not favour one) and the median of the repetitions is
 * reported, with the ratios 4K/THP and 4K/hugetlbfs (> 1: huge pages are
 * faster).  Results are checked: the gather's sum must be bit-identical
 * across kinds and every element of every transpose is verified.
 *
 * Only time is measured: no TLB-miss counter is read (the development VM
 * has no hardware performance counters).
 *
 * Usage: bench_tlb [--accesses N] [--reps R] [SIZE]
 *   SIZE        the gather's array, and both transpose arrays together
 *               (default 1G; K, M, G suffixes)
 *   --accesses  random loads per gather sample (default 32M = 33554432)
 *   --reps      timed samples per page kind (default 7; the median counts)
 */
#include "bench_common.h"

#include "base/clock.h"
#include "base/rng.h"
#include "os/hugetlb.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif

#define PAGE_4K_BYTES ((size_t)4096)
#define PAGE_2M_BYTES ((size_t)2 << 20)
#define TILE 32
#define TRANSPOSE_PASSES 4   /* transposes per timed sample: A->B->A->B->A */
#define MAX_REPS 101

enum { KIND_4K, KIND_THP, KIND_HUGETLB, NKINDS };
static const char *const kind_name[NKINDS] = {"4K", "THP", "hugetlbfs"};

typedef struct cplx {
    double re, im;
} cplx;

/* One buffer of one page kind. */
typedef struct buf {
    char *addr;          /* NULL: not available (skipped) */
    size_t bytes;        /* usable bytes (rounded up to the page size) */
    char *map;           /* whole mapping, for munmap */
    size_t map_bytes;
} buf;

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

/* Free 2 MiB pages of the hugetlbfs pool not promised to anyone, or -1. */
static long pool_2m_available_pages(void)
{
    ph_hugetlb_counts c;
    if (ph_hugetlb_read(NULL, -1, 2048, &c, NULL, 0) != 0 || !c.present)
        return -1;
    return (long)c.free_pages - (long)c.reserved_pages;
}

/* Why hugetlbfs is skipped, for the "skipped" line. */
static char skip_reason[256];

/* Can the pool hold `bytes` in 2 MiB pages?  0, or -1 with skip_reason. */
static int hugetlb_check(size_t bytes)
{
    long avail = pool_2m_available_pages();
    long need = (long)(round_up(bytes, PAGE_2M_BYTES) / PAGE_2M_BYTES);
    if (avail < 0)
        snprintf(skip_reason, sizeof skip_reason, "this kernel has no 2M hugetlbfs pool");
    else if (avail == 0)
        snprintf(skip_reason, sizeof skip_reason,
                 "no 2M pages in the pool (pagehome hugepages --reserve)");
    else if (avail < need)
        snprintf(skip_reason, sizeof skip_reason,
                 "the 2M pool has %ld free pages, this needs %ld (pagehome hugepages "
                 "--reserve)", avail, need);
    else
        return 0;
    return -1;
}

/* A buffer of `bytes` of the given kind, in its own mapping, not yet
 * touched: 4K and THP buffers are followed by a PROT_NONE guard page so
 * that the kernel cannot merge them with a neighbour (hugetlbfs mappings
 * never merge: each has its own hidden file).  0, or -1 (skip_reason set
 * for hugetlbfs; perror for the others). */
static int buf_alloc(buf *b, int kind, size_t bytes)
{
    memset(b, 0, sizeof *b);
    if (kind == KIND_HUGETLB) {
        size_t len = round_up(bytes, PAGE_2M_BYTES);
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB, -1, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            if (hugetlb_check(len) == 0)
                snprintf(skip_reason, sizeof skip_reason, "mmap(MAP_HUGETLB): %s",
                         strerror(e));
            return -1;
        }
        b->map = b->addr = p;
        b->map_bytes = b->bytes = len;
        return 0;
    }
    size_t align = kind == KIND_THP ? PAGE_2M_BYTES : PAGE_4K_BYTES;
    size_t len = round_up(bytes, align);
    size_t map_bytes = len + align + PAGE_4K_BYTES;
    char *p = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) {
        perror("bench_tlb: mmap");
        return -1;
    }
    char *a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
    /* keep [a, a + len + guard); give the rest back */
    if (a > p)
        munmap(p, (size_t)(a - p));
    char *end = a + len + PAGE_4K_BYTES;
    if (p + map_bytes > end)
        munmap(end, (size_t)(p + map_bytes - end));
    if (mprotect(a + len, PAGE_4K_BYTES, PROT_NONE) != 0 ||
        madvise(a, len, kind == KIND_THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
        perror("bench_tlb: mprotect/madvise");
        munmap(a, len + PAGE_4K_BYTES);
        return -1;
    }
    b->map = a;
    b->map_bytes = len + PAGE_4K_BYTES;
    b->addr = a;
    b->bytes = len;
    return 0;
}

static void buf_free(buf *b)
{
    if (b->map)
        munmap(b->map, b->map_bytes);
    memset(b, 0, sizeof *b);
}

/* AnonHugePages of the mappings inside [addr, addr + bytes), in bytes, from
 * /proc/self/smaps; -1 if it cannot be read. */
static long long anon_huge_bytes(const void *addr, size_t bytes)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    uintptr_t lo = (uintptr_t)addr, hi = lo + bytes;
    char line[512];
    int inside = 0;
    long long total_kb = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long s, e;
        long long kb;
        if (sscanf(line, "%llx-%llx ", &s, &e) == 2 && strchr(line, ' ') &&
            line[strspn(line, "0123456789abcdef")] == '-')
            inside = s >= lo && e <= hi;
        else if (inside && sscanf(line, "AnonHugePages: %lld kB", &kb) == 1)
            total_kb += kb;
    }
    fclose(f);
    return total_kb * 1024;
}

/* ---- the kernels ---- */

static double gather(const double *x, const uint32_t *idx, size_t accesses)
{
    double s = 0;
    for (size_t k = 0; k < accesses; k++)
        s += x[idx[k]];
    return s;
}

static void transpose(const cplx *a, cplx *b, size_t n)
{
    for (size_t ii = 0; ii < n; ii += TILE) {
        size_t ie = ii + TILE < n ? ii + TILE : n;
        for (size_t jj = 0; jj < n; jj += TILE) {
            size_t je = jj + TILE < n ? jj + TILE : n;
            for (size_t i = ii; i < ie; i++)
                for (size_t j = jj; j < je; j++)
                    b[j * n + i] = a[i * n + j];
        }
    }
}

/* What one kernel measured, per kind. */
typedef struct result {
    int have[NKINDS];
    double per_op_ns[NKINDS];     /* median ns per access / element */
    double huge_share[NKINDS];    /* AnonHugePages / bytes, -1 unknown */
    char skipped[NKINDS][256];
} result;

static void note_huge(result *r, int kind, const buf *b)
{
    if (kind == KIND_HUGETLB) {
        r->huge_share[kind] = 1;
        return;
    }
    long long h = anon_huge_bytes(b->addr, b->bytes);
    r->huge_share[kind] = h < 0 ? -1 : (double)h / (double)b->bytes;
}

static int run_gather(size_t bytes, size_t accesses, int reps, result *r)
{
    size_t n = bytes / sizeof(double);
    if (n > UINT32_MAX) {
        fprintf(stderr, "bench_tlb: SIZE at most 32 GiB\n");
        return -1;
    }
    memset(r, 0, sizeof *r);
    buf ib;
    if (buf_alloc(&ib, KIND_4K, accesses * sizeof(uint32_t)) < 0)
        return -1;
    uint32_t *idx = (uint32_t *)ib.addr;
    uint64_t seed = 42;
    for (size_t k = 0; k < accesses; k++)
        idx[k] = (uint32_t)(ph_splitmix64_next(&seed) % n);
    buf b[NKINDS];
    memset(b, 0, sizeof b);
    for (int k = 0; k < NKINDS; k++) {
        if ((k == KIND_HUGETLB && hugetlb_check(bytes) < 0) ||
            buf_alloc(&b[k], k, bytes) < 0) {
            snprintf(r->skipped[k], sizeof r->skipped[k], "%s",
                     k == KIND_HUGETLB ? skip_reason : "allocation failed");
            continue;
        }
        double *x = (double *)b[k].addr;
        for (size_t i = 0; i < n; i++)
            x[i] = (double)(i % 1000);
        r->have[k] = 1;
        note_huge(r, k, &b[k]);
    }
    uint64_t t[NKINDS][MAX_REPS];
    double sum[NKINDS] = {0};
    for (int rep = 0; rep < reps; rep++)
        for (int j = 0; j < NKINDS; j++) {
            int k = (j + rep) % NKINDS;
            if (!r->have[k])
                continue;
            uint64_t t0 = ph_now_ns();
            sum[k] = gather((const double *)b[k].addr, idx, accesses);
            t[k][rep] = ph_now_ns() - t0;
        }
    int rc = 0;
    for (int k = 0; k < NKINDS; k++) {
        if (!r->have[k])
            continue;
        r->per_op_ns[k] = (double)bench_median_u64(t[k], reps) / (double)accesses;
        if (sum[k] != sum[KIND_4K] && r->have[KIND_4K]) {
            fprintf(stderr, "bench_tlb: gather on %s pages summed %.17g, on 4K pages %.17g\n",
                    kind_name[k], sum[k], sum[KIND_4K]);
            rc = -1;
        }
    }
    for (int k = 0; k < NKINDS; k++)
        buf_free(&b[k]);
    buf_free(&ib);
    return rc;
}

static int run_transpose(size_t n, int reps, result *r)
{
    memset(r, 0, sizeof *r);
    size_t bytes = n * n * sizeof(cplx);
    buf a[NKINDS], b[NKINDS];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    for (int k = 0; k < NKINDS; k++) {
        if ((k == KIND_HUGETLB && hugetlb_check(2 * round_up(bytes, PAGE_2M_BYTES)) < 0) ||
            buf_alloc(&a[k], k, bytes) < 0 || buf_alloc(&b[k], k, bytes) < 0) {
            snprintf(r->skipped[k], sizeof r->skipped[k], "%s",
                     k == KIND_HUGETLB ? skip_reason : "allocation failed");
            buf_free(&a[k]);
            continue;
        }
        cplx *pa = (cplx *)a[k].addr;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                pa[i * n + j] = (cplx){(double)i, (double)j};
        memset(b[k].addr, 0, bytes);
        r->have[k] = 1;
        result ra, rb;
        note_huge(&ra, k, &a[k]);
        note_huge(&rb, k, &b[k]);
        r->huge_share[k] = ra.huge_share[k] < 0 || rb.huge_share[k] < 0
                               ? -1 : (ra.huge_share[k] + rb.huge_share[k]) / 2;
    }
    uint64_t t[NKINDS][MAX_REPS];
    for (int rep = 0; rep < reps; rep++)
        for (int j = 0; j < NKINDS; j++) {
            int k = (j + rep) % NKINDS;
            if (!r->have[k])
                continue;
            uint64_t t0 = ph_now_ns();
            for (int p = 0; p < TRANSPOSE_PASSES / 2; p++) {
                transpose((const cplx *)a[k].addr, (cplx *)b[k].addr, n);
                transpose((const cplx *)b[k].addr, (cplx *)a[k].addr, n);
            }
            t[k][rep] = ph_now_ns() - t0;
        }
    int rc = 0;
    for (int k = 0; k < NKINDS; k++) {
        if (!r->have[k])
            continue;
        r->per_op_ns[k] = (double)bench_median_u64(t[k], reps) /
                          ((double)TRANSPOSE_PASSES * (double)n * (double)n);
        /* A went there and back (A = (A^T)^T), B = A^T */
        const cplx *pa = (const cplx *)a[k].addr, *pb = (const cplx *)b[k].addr;
        size_t bad = 0;
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                bad += pb[j * n + i].re != (double)i || pb[j * n + i].im != (double)j ||
                       pa[j * n + i].re != (double)j || pa[j * n + i].im != (double)i;
        if (bad) {
            fprintf(stderr, "bench_tlb: transpose on %s pages: %zu wrong elements\n",
                    kind_name[k], bad);
            rc = -1;
        }
        buf_free(&a[k]);
        buf_free(&b[k]);
    }
    return rc;
}

static void print_result(const char *what, const char *unit, const result *r)
{
    for (int k = 0; k < NKINDS; k++) {
        if (!r->have[k]) {
            printf("  %-10s skipped: %s\n", kind_name[k], r->skipped[k]);
            continue;
        }
        char share[64];
        if (k == KIND_HUGETLB)
            snprintf(share, sizeof share, "all 2M (hugetlbfs)");
        else if (r->huge_share[k] < 0)
            snprintf(share, sizeof share, "huge: unknown (no smaps)");
        else
            snprintf(share, sizeof share, "%.1f%% in huge pages (AnonHugePages)",
                     100 * r->huge_share[k]);
        printf("  %-10s %9.2f %s   %s\n", kind_name[k], r->per_op_ns[k], unit, share);
    }
    for (int k = KIND_THP; k < NKINDS; k++)
        if (r->have[KIND_4K] && r->have[k])
            printf("  %s ratio 4K/%s: %.2f\n", what, kind_name[k],
                   r->per_op_ns[KIND_4K] / r->per_op_ns[k]);
}

int main(int argc, char **argv)
{
    size_t bytes = (size_t)1 << 30, accesses = (size_t)32 << 20;
    int reps = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--accesses") == 0 && i + 1 < argc) {
            accesses = bench_parse_bytes(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            size_t v;
            reps = bench_parse_count(argv[++i], 1, MAX_REPS, &v) == 0 ? (int)v : 0;
        } else if (argv[i][0] != '-') {
            bytes = bench_parse_bytes(argv[i]);
            if (bytes < ((size_t)1 << 20)) {
                fprintf(stderr, "bench_tlb: SIZE must be at least 1M, not '%s'\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bench_tlb [--accesses N] [--reps R] [SIZE (default 1G)]\n");
            return 2;
        }
    }
    if (accesses == 0 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "bench_tlb: --accesses must be > 0 and --reps 1..%d\n", MAX_REPS);
        return 2;
    }
    size_t n = (size_t)sqrt((double)(bytes / 2) / (double)sizeof(cplx));
    char thp[32];
    ph_hugetlb_thp_mode(NULL, thp, sizeof thp);
    printf("bench_tlb: single-threaded, median of %d repetitions, time only (no TLB "
           "counters)\n", reps);
    printf("THP: %s; 2M pool: %ld free pages\n", thp[0] ? thp : "?", pool_2m_available_pages());
    if (bytes < ((size_t)1 << 30))
        printf("note: SIZE below 1 GiB: the data may fit in the reach of the TLB; this "
               "run checks that the benchmark works, not the TLB\n");

    result r;
    printf("gather: %zu random loads from %.1f MiB of doubles\n", accesses,
           (double)bytes / (1 << 20));
    fflush(stdout);
    if (run_gather(bytes, accesses, reps, &r) < 0)
        return 1;
    print_result("gather", "ns/access ", &r);
    printf("transpose: %zu x %zu complex doubles, 2 x %.1f MiB, %dx%d tiles, %d per sample\n",
           n, n, (double)(n * n * sizeof(cplx)) / (1 << 20), TILE, TILE, TRANSPOSE_PASSES);
    fflush(stdout);
    if (run_transpose(n, reps, &r) < 0)
        return 1;
    print_result("transpose", "ns/element", &r);
    return 0;
}
