/*
 * bench_alloc.c -- allocation patterns of ordinary programs, for timing
 * transparent mode's allocator against glibc's (bench_run.sh runs it plain
 * and under `pagehome run`):
 *
 *   bench_alloc churn N    N x (malloc 2 MiB, memset, free)
 *   bench_alloc grow MIB   one buffer grown by realloc in 64 KiB steps to
 *                          MIB MiB, each step written
 *   bench_alloc double N   N x a buffer grown by doubling from 1 MiB to
 *                          64 MiB, copied each time (what a C++ vector's
 *                          push_back does)
 *
 * Prints a checksum of what it wrote (the same in every run) and its own
 * time as time_s= on stdout, and its peak resident set on stderr (left out
 * of bench_run.sh's comparison of outputs).
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void need(void *p)
{
    if (!p) {
        perror("bench_alloc");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_alloc churn N | grow MIB | double N\n");
        return 2;
    }
    long n = atol(argv[2]);
    uint64_t sum = 0;
    double t0 = now_s();
    if (strcmp(argv[1], "churn") == 0) {
        size_t sz = (size_t)2 << 20;
        for (long i = 0; i < n; i++) {
            unsigned char *p = malloc(sz);
            need(p);
            memset(p, (int)(i & 0xff), sz);
            sum += p[(size_t)i % sz];
            free(p);
        }
    } else if (strcmp(argv[1], "grow") == 0) {
        unsigned char *p = NULL;
        size_t have = 0, want = (size_t)n << 20;
        while (have < want) {
            unsigned char *q = realloc(p, have + 65536);
            need(q);
            p = q;
            memset(p + have, (int)((have >> 16) & 0xff), 65536);
            have += 65536;
        }
        for (size_t i = 0; i < have; i += 4096)
            sum += p[i];
        free(p);
    } else if (strcmp(argv[1], "double") == 0) {
        for (long r = 0; r < n; r++) {
            size_t cap = (size_t)1 << 20;
            unsigned char *p = malloc(cap);
            need(p);
            memset(p, 1, cap);
            while (cap < ((size_t)64 << 20)) {
                unsigned char *q = malloc(cap * 2);
                need(q);
                memcpy(q, p, cap);
                memset(q + cap, (int)(r & 0xff), cap);
                free(p);
                p = q;
                cap *= 2;
            }
            for (size_t i = 0; i < cap; i += 4096)
                sum += p[i];
            free(p);
        }
    } else {
        fprintf(stderr, "bench_alloc: no pattern %s\n", argv[1]);
        return 2;
    }
    double t = now_s() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* a parallel region, so that transparent mode sees an OpenMP program */
    int threads = 0;
#pragma omp parallel
#pragma omp atomic
    threads++;
    printf("bench_alloc %s %ld: checksum %llu (%d threads)\n", argv[1], n,
           (unsigned long long)sum, threads > 0);
    printf("time_s=%.3f\n", t);
    fprintf(stderr, "bench_alloc: max rss %ld MiB\n", ru.ru_maxrss >> 10);
    return 0;
}
