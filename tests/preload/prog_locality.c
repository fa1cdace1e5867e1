/*
 * prog_locality.c -- the self-measurement shared by the prog_* programs
 * (prog_static, prog_oneregion, prog_sigsegv and the Fortran prog_alloc,
 * prog_common).  Part of the *program*, not of pagehome: it knows nothing
 * of it, and measures with move_pages(2) status queries where the pages of
 * the grids are, like prog_trap.c does inline.
 *
 *   prog_note_thread(tid)   record the node this thread runs on (call it
 *                           from inside the parallel sweep; cheap: one
 *                           sched_getcpu() and a table look-up)
 *   prog_tally(base, unit_bytes, nunits, lo, hi, nthreads)
 *                           count the pages of a grid of nunits contiguous
 *                           units (C rows, Fortran columns) whose units
 *                           lo..hi are split by schedule(static) over
 *                           nthreads threads; units before lo belong to
 *                           thread 0, after hi to the last thread
 *   prog_report(name, nthreads)
 *                           print "NAME: T threads, P pages, N% on their
 *                           owner's node" and "NAME: pages per node: C0
 *                           C1 ... (of P)" (nodes 0 .. the highest seen)
 *                           and "NAME: peak resident memory: K KiB" (its
 *                           getrusage maximum so far) to stderr
 *   prog_parse_int(s, lo, hi, &out)
 *                           a numeric argument (prog_locality.h)
 *
 * The Fortran programs call these through ISO_C_BINDING (by value).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "prog_locality.h"

#include <numaif.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define PROG_MAX_CPUS 1024
#define PROG_MAX_THREADS 1024
#define PROG_PAGE ((uintptr_t)4096)

static int cpu_node[PROG_MAX_CPUS];
static int thread_node[PROG_MAX_THREADS];
static size_t pages_seen, pages_local;
#define PROG_MAX_NODES 64
static size_t pages_on[PROG_MAX_NODES];

/* cpu -> node from sysfs, once, before any thread asks (single-threaded). */
__attribute__((constructor)) static void prog_locality_init(void)
{
    char path[96];
    for (int c = 0; c < PROG_MAX_CPUS; c++) {
        cpu_node[c] = 0;
        for (int n = 0; n < 64; n++) {
            snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpu%d", n, c);
            if (access(path, F_OK) == 0) {
                cpu_node[c] = n;
                break;
            }
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", c);
        if (access(path, F_OK) != 0)
            break;
    }
}

void prog_note_thread(int tid)
{
    int cpu = sched_getcpu();
    if (tid >= 0 && tid < PROG_MAX_THREADS)
        thread_node[tid] = cpu >= 0 && cpu < PROG_MAX_CPUS ? cpu_node[cpu] : 0;
}

/* The thread that schedule(static) gives unit u of lo..hi (blocks of
 * q+1 for the first r threads, then q: libgomp and libomp alike). */
static int owner_of(int u, int lo, int hi, int nthreads)
{
    if (u < lo)
        return 0;
    if (u > hi)
        return nthreads - 1;
    int n = hi - lo + 1, k = u - lo;
    int q = n / nthreads, r = n % nthreads;
    return k < r * (q + 1) ? k / (q + 1) : r + (k - r * (q + 1)) / (q ? q : 1);
}

void prog_tally(const void *base, size_t unit_bytes, int nunits, int lo, int hi,
                int nthreads)
{
    if (nthreads < 1 || nthreads > PROG_MAX_THREADS || nunits < 1)
        return;
    uintptr_t b = (uintptr_t)base, end = b + unit_bytes * (size_t)nunits;
    uintptr_t first = (b + PROG_PAGE - 1) & ~(PROG_PAGE - 1);
    size_t npages = end > first ? (end - first) / PROG_PAGE : 0;
    void **pages = malloc((npages ? npages : 1) * sizeof *pages);
    int *st = malloc((npages ? npages : 1) * sizeof *st);
    if (!pages || !st) {
        free(pages);
        free(st);
        return;
    }
    for (size_t p = 0; p < npages; p++)
        pages[p] = (void *)(first + p * PROG_PAGE);
    if (npages && move_pages(0, npages, pages, NULL, st, 0) == 0) {
        for (size_t p = 0; p < npages; p++) {
            int u = (int)(((uintptr_t)pages[p] - b) / unit_bytes);
            int t = owner_of(u, lo, hi, nthreads);
            pages_local += st[p] == thread_node[t];
            if (st[p] >= 0 && st[p] < PROG_MAX_NODES)
                pages_on[st[p]]++;
        }
        pages_seen += npages;
    }
    free(pages);
    free(st);
}

void prog_report(const char *name, int nthreads)
{
    fprintf(stderr, "%s: %d threads, %zu pages, %.1f%% on their owner's node\n", name,
            nthreads, pages_seen,
            pages_seen ? 100.0 * (double)pages_local / (double)pages_seen : 0.0);
    int top = 0;
    for (int n = 0; n < PROG_MAX_NODES; n++)
        if (pages_on[n])
            top = n;
    fprintf(stderr, "%s: pages per node:", name);
    for (int n = 0; n <= top; n++)
        fprintf(stderr, " %zu", pages_on[n]);
    fprintf(stderr, " (of %zu)\n", pages_seen);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        fprintf(stderr, "%s: peak resident memory: %ld KiB\n", name, ru.ru_maxrss);
}

int prog_parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}
