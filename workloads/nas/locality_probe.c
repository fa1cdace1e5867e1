/*
 * locality_probe.c -- the per-iteration owner-local measurement of the
 * workloads (locality_probe.h), on when WL_LOCALITY=1.
 *
 * Each declared array keeps, per page, its address, its owner thread
 * (fixed at declaration: the ownership does not change) and the node the
 * previous tick saw, with a count of the ticks that saw it somewhere new.
 * A tick is one move_pages(2) status query per array (nodes NULL: nothing
 * moves), so its cost is a page-table walk of the arrays; the programs
 * call it between iterations, outside their timed kernels' parallel
 * regions.  Errors (out of memory, a failing query) print one note and
 * turn the probe off: the program's own result never depends on it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "locality_probe.h"

#include <numaif.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROBE_MAX_ARRAYS 16
#define PROBE_MAX_THREADS 1024
#define PROBE_MAX_NODES 64
#define PROBE_PAGE ((uintptr_t)4096)

typedef struct {
    const char *name;
    size_t npages;
    void **pages;
    int *owner;     /* thread */
    int *node;      /* the previous tick's status (-1 before the first) */
    int *status;    /* move_pages' output */
    unsigned char *changes;
} probe_array;

static int probe_on = -1; /* -1: WL_LOCALITY not read yet */
static probe_array arrays[PROBE_MAX_ARRAYS];
static int narrays;
static int nthreads = 1;
static int thread_node[PROBE_MAX_THREADS];
static double t_begin;
static size_t moved_total;

static int enabled(void)
{
    if (probe_on < 0) {
        const char *e = getenv("WL_LOCALITY");
        probe_on = e && strcmp(e, "1") == 0;
    }
    return probe_on;
}

static void give_up(const char *why)
{
    fprintf(stderr, "locality: off (%s)\n", why);
    probe_on = 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* schedule(static) without a chunk: blocks of q+1 for the first r threads,
 * then q (libgomp and libomp alike). */
static int static_owner(long u, long lo, long hi, int nt)
{
    if (u < lo)
        return 0;
    if (u > hi)
        return nt - 1;
    long n = hi - lo + 1, k = u - lo;
    long q = n / nt, r = n % nt;
    return (int)(k < r * (q + 1) ? k / (q + 1) : r + (k - r * (q + 1)) / (q ? q : 1));
}

/* A new array of the pages overlapping [base, base + bytes), owners unset. */
static probe_array *add_array(const char *name, const void *base, size_t bytes)
{
    if (!enabled() || bytes == 0)
        return NULL;
    if (narrays == PROBE_MAX_ARRAYS) {
        give_up("too many arrays");
        return NULL;
    }
    uintptr_t b = (uintptr_t)base & ~(PROBE_PAGE - 1);
    uintptr_t e = ((uintptr_t)base + bytes + PROBE_PAGE - 1) & ~(PROBE_PAGE - 1);
    probe_array *a = &arrays[narrays];
    a->name = name;
    a->npages = (e - b) / PROBE_PAGE;
    a->pages = malloc(a->npages * sizeof *a->pages);
    a->owner = malloc(a->npages * sizeof *a->owner);
    a->node = malloc(a->npages * sizeof *a->node);
    a->status = malloc(a->npages * sizeof *a->status);
    a->changes = calloc(a->npages, 1);
    if (!a->pages || !a->owner || !a->node || !a->status || !a->changes) {
        give_up("out of memory");
        return NULL;
    }
    for (size_t p = 0; p < a->npages; p++) {
        a->pages[p] = (void *)(b + p * PROBE_PAGE);
        a->node[p] = -1;
    }
    narrays++;
    return a;
}

/* The first byte of page p that belongs to the array at base. */
static uintptr_t first_byte(const probe_array *a, size_t p, const void *base)
{
    uintptr_t s = (uintptr_t)a->pages[p];
    return s < (uintptr_t)base ? (uintptr_t)base : s;
}

static int team_size(void)
{
    int nt = omp_get_max_threads();
    return nt < 1 ? 1 : nt > PROBE_MAX_THREADS ? PROBE_MAX_THREADS : nt;
}

void wl_probe_rows(const char *name, const void *base, size_t unit_bytes, long nunits,
                   long lo, long hi)
{
    wl_probe_units(name, base, unit_bytes, unit_bytes, nunits, lo, hi);
}

void wl_probe_units(const char *name, const void *base, size_t stride_bytes,
                    size_t used_bytes, long nunits, long lo, long hi)
{
    if (stride_bytes == 0 || used_bytes == 0 || used_bytes > stride_bytes || nunits < 1)
        return;
    size_t span = stride_bytes * (size_t)(nunits - 1) + used_bytes;
    probe_array *a = add_array(name, base, span);
    if (!a)
        return;
    int nt = team_size();
    size_t kept = 0;
    for (size_t p = 0; p < a->npages; p++) {
        /* the first used byte at or after the page's first byte */
        size_t off = first_byte(a, p, base) - (uintptr_t)base;
        size_t u = off / stride_bytes;
        if (off - u * stride_bytes >= used_bytes) {
            u++;
            off = u * stride_bytes;
        }
        if (u >= (size_t)nunits || off >= (uintptr_t)a->pages[p] + PROBE_PAGE - (uintptr_t)base)
            continue; /* no used byte in this page: left out */
        a->pages[kept] = a->pages[p];
        a->owner[kept] = static_owner((long)u, lo, hi, nt);
        kept++;
    }
    a->npages = kept;
}

void wl_probe_csr(const char *name, const void *base, size_t elem_bytes, const long *rowptr,
                  long nrows)
{
    if (elem_bytes == 0 || nrows < 1 || rowptr[nrows] <= 0)
        return;
    probe_array *a = add_array(name, base, elem_bytes * (size_t)rowptr[nrows]);
    if (!a)
        return;
    int nt = team_size();
    long r = 0;
    for (size_t p = 0; p < a->npages; p++) { /* pages ascend: so do their rows */
        long e = (long)((first_byte(a, p, base) - (uintptr_t)base) / elem_bytes);
        while (r + 1 < nrows && rowptr[r + 1] <= e)
            r++;
        a->owner[p] = static_owner(r, 0, nrows - 1, nt);
    }
}

void wl_probe_begin(void)
{
    if (!enabled())
        return;
    int team = team_size();
#pragma omp parallel num_threads(team)
    {
        unsigned cpu = 0, node = 0;
        int t = omp_get_thread_num();
        if (getcpu(&cpu, &node) != 0)
            node = 0;
        thread_node[t] = (int)node;
#pragma omp single
        nthreads = omp_get_num_threads();
    }
    fprintf(stderr, "locality: %d threads on nodes", nthreads);
    for (int t = 0; t < nthreads; t++)
        fprintf(stderr, "%s%d", t ? "/" : " ", thread_node[t]);
    size_t pages = 0;
    for (int i = 0; i < narrays; i++)
        pages += arrays[i].npages;
    fprintf(stderr, ", %d arrays, %zu pages\n", narrays, pages);
    t_begin = now_s();
    wl_probe_tick(0);
}

void wl_probe_tick(long iter)
{
    if (!enabled())
        return;
    double t = now_s() - t_begin;
    size_t present = 0, local = 0, absent = 0, stale = 0, twice = 0;
    size_t on[PROBE_MAX_NODES] = {0};
    int top = 0;
    for (int i = 0; i < narrays; i++) {
        probe_array *a = &arrays[i];
        if (move_pages(0, (unsigned long)a->npages, a->pages, NULL, a->status, 0) != 0) {
            give_up("move_pages(2) status query failed");
            return;
        }
        for (size_t p = 0; p < a->npages; p++) {
            int s = a->status[p];
            if (s < 0 || s >= PROBE_MAX_NODES) {
                /* not mapped now: being migrated, or made inaccessible
                 * (a PROT_NONE watch); it is still where it was seen */
                if (a->node[p] < 0) {
                    absent++;
                    continue;
                }
                s = a->node[p];
                stale++;
            }
            present++;
            on[s]++;
            top = s > top ? s : top;
            int owner = a->owner[p] < nthreads ? a->owner[p] : nthreads - 1;
            local += s == thread_node[owner];
            if (a->node[p] >= 0 && a->node[p] != s) {
                moved_total++;
                if (a->changes[p] < 255)
                    a->changes[p]++;
            }
            a->node[p] = s;
            twice += a->changes[p] >= 2;
        }
    }
    fprintf(stderr,
            "locality: iter=%ld t_s=%.3f owner_local=%.4f pages=%zu absent=%zu stale=%zu on=",
            iter, t, present ? (double)local / (double)present : 0.0, present, absent, stale);
    for (int n = 0; n <= top; n++)
        fprintf(stderr, "%s%zu", n ? "/" : "", on[n]);
    fprintf(stderr, " moved=%zu moved_twice=%zu\n", moved_total, twice);
}
